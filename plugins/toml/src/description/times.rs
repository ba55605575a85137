//! `[session] started` and `updated` in a description: where a session's
//! time is. In its records (a pointer), or, for harnesses whose records
//! hold none, in the transcript's path (a pattern's group) or in an index
//! file beside the transcript that lists sessions with their times
//! (Continue's `sessions.json`). How they are read is [`crate::dated`].

use serde::de::{self, Deserializer};
use serde::Deserialize;

use super::Pattern;
use crate::pointer::Pointer;

/// Where a time is.
#[derive(Debug, Clone)]
pub enum TimeField {
    /// The value at a pointer in the session's row or records.
    At(Pointer),
    /// The first group of `pattern` in the string at `at`, for a time
    /// written inside text: `{ at = "/message/content/0/text", pattern =
    /// "<timestamp>([^<]+)</timestamp>" }`.
    Capture {
        /// Where the string is.
        at: Pointer,
        /// A regular expression with one group around the time.
        pattern: Pattern,
    },
    /// The first group of `pattern` in the transcript's path (written with
    /// `/` on every OS): `{ path = "/(\\d{4}-\\d\\d-\\d\\dT[^/]+)\\.json$" }`;
    /// with a `format` (chrono's strftime, `%B_%d_%Y_%H-%M-%S`), the group
    /// is read by it, as UTC.
    InPath(Pattern, Option<String>),
    /// The time of this session's entry in a JSON file that lists sessions:
    /// `{ file = "sessions.json", key = "/sessionId", at = "/dateCreated" }`.
    InIndex(Index),
    /// The first of these that has a time.
    FirstOf(Vec<TimeField>),
}

/// A JSON file beside the transcript that lists sessions.
#[derive(Debug, Clone)]
pub struct Index {
    /// The file, relative to the transcript's folder.
    pub file: String,
    /// Where the list of entries is in it (default: the document).
    pub list: Option<Pointer>,
    /// The session id in an entry: the entry whose value here is the
    /// session's id is the session's.
    pub key: Pointer,
    /// The time in that entry.
    pub at: Pointer,
}

impl<'de> Deserialize<'de> for TimeField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            At(String),
            Capture {
                at: String,
                pattern: String,
            },
            InPath {
                path: String,
                format: Option<String>,
            },
            InIndex {
                file: String,
                list: Option<String>,
                key: String,
                at: String,
            },
            Many(Vec<TimeField>),
        }
        let raw = Raw::deserialize(d).map_err(|_| {
            de::Error::custom(
                "expected a JSON pointer (\"/created\"), { at = \"/text\", pattern = \"...(group)...\" }, { path = \"...(group)...\" } (with `format` = how the group writes the time), { file = \"sessions.json\", key = \"/sessionId\", at = \"/dateCreated\" } (with `list` = the pointer to the entries when they are not the document), or a list of these (the first with a time)",
            )
        })?;
        let pointer = |p: &str| Pointer::parse(p).map_err(de::Error::custom);
        let grouped =
            |pattern: &str| Pattern::grouped(pattern, "the time").map_err(de::Error::custom);
        match raw {
            Raw::At(p) => pointer(&p).map(TimeField::At),
            Raw::Capture { at, pattern } => Ok(TimeField::Capture {
                at: pointer(&at)?,
                pattern: grouped(&pattern)?,
            }),
            Raw::InPath {
                format: Some(format),
                ..
            } if chrono::format::StrftimeItems::new(&format)
                .any(|i| matches!(i, chrono::format::Item::Error)) =>
            {
                Err(de::Error::custom(format!(
                    "`{format}` is not a time format (chrono's strftime: `%Y-%m-%d %H:%M`)"
                )))
            }
            Raw::InPath { path, format } => Ok(TimeField::InPath(grouped(&path)?, format)),
            Raw::InIndex { file, .. }
                if file.is_empty() || std::path::Path::new(&file).is_absolute() =>
            {
                Err(de::Error::custom(format!(
                    "`file` is a path relative to the transcript's folder, not `{file}`"
                )))
            }
            Raw::InIndex {
                file,
                list,
                key,
                at,
            } => Ok(TimeField::InIndex(Index {
                file,
                list: list.as_deref().map(pointer).transpose()?,
                key: pointer(&key)?,
                at: pointer(&at)?,
            })),
            Raw::Many(fields) if fields.is_empty() => {
                Err(de::Error::custom("a list of times needs at least one"))
            }
            Raw::Many(fields) => Ok(TimeField::FirstOf(fields)),
        }
    }
}

impl TimeField {
    /// The time it names in one record (a message's), when it is one that
    /// records hold: a pointer's, a pattern's in a string, or the first of a
    /// list that has one.
    pub fn in_record(&self, record: &serde_json::Value) -> Option<i64> {
        match self {
            TimeField::At(p) => crate::time::ms(p.get(record)?.as_ref()),
            TimeField::Capture { at, pattern } => {
                let text = at.string(record)?;
                let found = pattern
                    .0
                    .captures(&text)?
                    .get(1)?
                    .as_str()
                    .trim()
                    .to_string();
                crate::time::ms(&serde_json::Value::String(found))
            }
            TimeField::InPath(..) | TimeField::InIndex(_) => None,
            TimeField::FirstOf(fields) => fields.iter().find_map(|f| f.in_record(record)),
        }
    }

    /// Whether it names a session's time, not one a record holds (a path's
    /// or an index file's).
    pub fn of_session_only(&self) -> bool {
        match self {
            TimeField::InPath(..) | TimeField::InIndex(_) => true,
            TimeField::At(_) | TimeField::Capture { .. } => false,
            TimeField::FirstOf(fields) => fields.iter().any(TimeField::of_session_only),
        }
    }
}
