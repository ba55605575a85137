//! `[[source.kv]]` in a description: sessions kept in a SQLite key-value
//! table (a key column and a value column holding JSON), as editors based
//! on VS Code keep their state in `state.vscdb`. How they are read is
//! `crate::source::sqlite::kv`.
//!
//! A key pattern is the key's text with `{session}` (and, for records,
//! `{record}`) standing for a part of the key: `composerData:{session}`
//! is every key that starts with `composerData:`, the rest being the
//! session's part; `bubbleId:{session}:{record}` a record of that session.

use serde::de::{self, Deserializer};
use serde::Deserialize;

use crate::pointer::Pointer;

/// One `[[source.kv]]` entry: where some of a database's sessions are.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kv {
    /// The table (letters, digits and `_`).
    pub table: Ident,
    /// Its key column (default `key`).
    #[serde(default = "Ident::key")]
    pub key: Ident,
    /// Its value column, JSON text or a blob of it (default `value`).
    #[serde(default = "Ident::value")]
    pub value: Ident,
    /// The key of a session's value: with `{session}`, every key it
    /// matches; without, that one key.
    pub sessions: KeyPattern,
    /// The pointer to an array in the value each element of which is one
    /// session (a value that lists many sessions), instead of the value
    /// being one.
    pub each: Option<Pointer>,
    /// The key of a session's records (`{session}` is the session's part
    /// of its key, `{record}` the record's own part).
    pub records: Option<KeyPattern>,
    /// The order of the records: the array at `at` in the session's value,
    /// whose elements name the records' parts (at `item` inside each);
    /// only the records it names are read. Without it, or when the session
    /// has no such array, every record of the session, in key order.
    pub order: Option<Order>,
    /// The pointer to an array of records inside the session's value
    /// (records kept inline, read before those of `records`).
    pub records_at: Option<Pointer>,
    /// Other columns of the session's row (the key column too), each set
    /// into the session's value under its own name, replacing a field of
    /// that name: a table that keys sessions by their folder, or keeps
    /// their times beside the value.
    #[serde(default)]
    pub columns: Vec<Ident>,
}

/// `order = { at = "/headers", item = "/id" }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Order {
    /// The array in the session's value.
    pub at: Pointer,
    /// The record's part of its key inside each element (default: the
    /// element itself).
    #[serde(default = "whole")]
    pub item: Pointer,
}

fn whole() -> Pointer {
    Pointer::literal("")
}

/// A table or column name: letters, digits and `_`, not starting with a
/// digit, so that it can be written into a query as it is.
#[derive(Debug, Clone)]
pub struct Ident(pub String);

impl Ident {
    fn key() -> Ident {
        Ident("key".to_string())
    }

    fn value() -> Ident {
        Ident("value".to_string())
    }

    /// Quoted for a query.
    pub fn quoted(&self) -> String {
        format!("\"{}\"", self.0)
    }
}

impl<'de> Deserialize<'de> for Ident {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let ok = s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && s.chars().next().is_some_and(|c| !c.is_ascii_digit());
        if !ok {
            return Err(de::Error::custom(format!(
                "`{s}` is not a table or column name (letters, digits and `_`)"
            )));
        }
        Ok(Ident(s))
    }
}

/// A key pattern: literal text around `{session}` and `{record}`.
#[derive(Debug, Clone)]
pub struct KeyPattern {
    /// As written.
    pub text: String,
}

impl<'de> Deserialize<'de> for KeyPattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let rest = text.replace("{session}", "").replace("{record}", "");
        if rest.contains('{') || rest.contains('}') {
            return Err(de::Error::custom(format!(
                "`{text}`: a key pattern holds only `{{session}}` and `{{record}}`"
            )));
        }
        for part in ["{session}", "{record}"] {
            if text.matches(part).count() > 1 {
                return Err(de::Error::custom(format!(
                    "`{text}`: `{part}` stands for one part of the key"
                )));
            }
        }
        if text.is_empty() {
            return Err(de::Error::custom("a key pattern cannot be empty"));
        }
        Ok(KeyPattern { text })
    }
}

impl KeyPattern {
    /// Whether it holds `{part}`.
    pub fn has(&self, part: &str) -> bool {
        self.text.contains(&format!("{{{part}}}"))
    }

    /// The pattern with `{session}` replaced by `session`.
    pub fn with_session(&self, session: &str) -> String {
        self.text.replace("{session}", session)
    }

    /// The text before and after `{part}` in `text` (the pattern with the
    /// other part filled in), or `None` when it does not hold it.
    pub fn around<'a>(text: &'a str, part: &str) -> Option<(&'a str, &'a str)> {
        text.split_once(&format!("{{{part}}}"))
    }
}

/// The part of `key` that `{part}` stands for in `pattern` (a pattern with
/// only that placeholder left), when the key matches it: not empty.
pub fn part_of<'a>(pattern: &str, part: &str, key: &'a str) -> Option<&'a str> {
    let (before, after) = KeyPattern::around(pattern, part)?;
    let middle = key.strip_prefix(before)?.strip_suffix(after)?;
    (!middle.is_empty()).then_some(middle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_part_is_what_the_placeholder_stands_for() {
        assert_eq!(
            part_of("composerData:{session}", "session", "composerData:abc"),
            Some("abc")
        );
        assert_eq!(
            part_of("bubbleId:c1:{record}", "record", "bubbleId:c1:b2"),
            Some("b2")
        );
        assert_eq!(part_of("a:{session}:z", "session", "a:mid:z"), Some("mid"));
        assert_eq!(
            part_of("composerData:{session}", "session", "composerData:"),
            None
        );
        assert_eq!(
            part_of("composerData:{session}", "session", "other:abc"),
            None
        );
        assert_eq!(part_of("a:{session}:z", "session", "a:mid:y"), None);
    }
}
