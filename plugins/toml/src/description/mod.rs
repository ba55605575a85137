//! A reader description: the TOML a user writes, read into checked values.
//!
//! Every value is checked as it is read (a JSON pointer starts with `/`, a
//! pattern compiles, a role is `user` or `assistant`, no key is unknown), so
//! that an error names the file, the line and the key: see [`parse`].

use std::fmt;

use serde::de::{self, Deserializer};
use serde::Deserialize;

use crate::pointer::Pointer;

pub mod kv;
pub mod linked;
mod message;
pub mod outcome;
pub mod times;

pub use message::{
    Action, FixedRole, MessageFields, MessageRules, OneOrMany, Origin, Parts, Pointers, RoleField,
    Roles, Tool,
};
pub use times::{Index, TimeField};

/// A whole description.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Description {
    /// Who the reader is.
    pub reader: ReaderInfo,
    /// Where its files are.
    #[serde(default)]
    pub files: Files,
    /// How a file is recognised.
    #[serde(default)]
    pub detect: Detect,
    /// What a file holds and how its records group into sessions.
    pub source: Source,
    /// The session's fields.
    #[serde(default)]
    pub session: SessionFields,
    /// Which records are messages, and their fields: one `[message]`
    /// table, or several `[[message]]` rules when one record holds more
    /// than one message (a request and its answer).
    pub message: MessageRules,
    /// Tool calls that become command and file records.
    #[serde(default)]
    pub tools: Vec<Tool>,
    /// Records that give the outcome of a call made in another record.
    #[serde(default)]
    pub results: Vec<outcome::ResultRule>,
    /// How a session is reopened.
    pub resume: Option<Resume>,
}

/// `[reader]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReaderInfo {
    /// The harness it reads (letters, digits, `-`, `_`).
    pub harness: Harness,
    /// The reader's name (default: the harness).
    pub name: Option<String>,
    /// The description's own version (default `0`).
    pub version: Option<String>,
    /// One line for `deja plugins`.
    pub description: Option<String>,
}

/// A harness name.
#[derive(Debug, Clone)]
pub struct Harness(pub String);

impl<'de> Deserialize<'de> for Harness {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.is_empty()
            || !s
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(de::Error::custom(format!(
                "invalid harness name `{s}` (use letters, digits, `-` and `_`)"
            )));
        }
        Ok(Harness(s))
    }
}

/// `[files]`: where the harness keeps its transcripts.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Files {
    /// Folders to search, in order; `~` is the home folder and `$VAR` a
    /// variable (a root whose variable is unset is left out).
    #[serde(default)]
    pub roots: Vec<Root>,
    /// A variable holding a path list that replaces `roots` (default
    /// `DEJA_<HARNESS>_ROOT`).
    pub root_var: Option<String>,
    /// Variables that each name one transcript file (relative paths are
    /// below the first root).
    #[serde(default)]
    pub file_vars: Vec<String>,
    /// Which files below a root are transcripts, relative to it (`*`, `**`).
    #[serde(default)]
    pub glob: Vec<Glob>,
    /// Files or folders below a root never read (same syntax).
    #[serde(default)]
    pub exclude: Vec<Glob>,
    /// How many folder levels below a root are walked (default 6).
    pub depth: Option<usize>,
    /// Extensions in order of preference: of the transcripts in one folder
    /// that differ only in one of these extensions, only the first is read
    /// (`["jsonl", "json"]`: a session a harness rewrote in a newer format).
    #[serde(default)]
    pub prefer: Vec<String>,
    /// The folder a harness keeps inside each project (`.crush`): it is a
    /// root in every project folder deja knows from other sessions, and in
    /// the usual code folders under home (two levels deep).
    pub in_projects: Option<String>,
}

/// One root folder, for every OS or one.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Root {
    /// The same on every OS.
    Path(String),
    /// Only on one OS.
    Os {
        /// The folder.
        path: String,
        /// `linux`, `macos` or `windows`.
        os: Os,
    },
}

/// An operating system a root applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Os {
    /// Linux and other Unix systems but macOS.
    Linux,
    /// macOS.
    Macos,
    /// Windows.
    Windows,
}

impl Os {
    /// The OS this reader runs on.
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::Macos
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// A checked glob pattern.
#[derive(Debug, Clone)]
pub struct Glob {
    /// As written.
    pub text: String,
    /// Compiled.
    pub matcher: globset::GlobMatcher,
}

impl<'de> Deserialize<'de> for Glob {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let glob = globset::GlobBuilder::new(&text)
            .literal_separator(true)
            .build()
            .map_err(|e| de::Error::custom(format!("invalid glob `{text}`: {}", e.kind())))?;
        Ok(Glob {
            matcher: glob.compile_matcher(),
            text,
        })
    }
}

/// `[detect]`: how sure the reader is that a file is its own.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Detect {
    /// File names that are this harness's (default: the last component of
    /// each `files.glob`).
    #[serde(default)]
    pub names: Vec<Glob>,
    /// Strings the file's first 4 KiB must all hold.
    #[serde(default)]
    pub contains: Vec<String>,
    /// Regular expressions of which the file's path (written with `/`)
    /// must match one for its name to count: for harnesses whose files
    /// share a name and differ in where they are.
    #[serde(default)]
    pub paths: Vec<Pattern>,
}

/// `[source]`: what a file holds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// `jsonl`, `json`, `json-log`, `yaml`, `text` or `sqlite`.
    pub kind: Kind,
    /// text: the line that begins a record; its named groups `(?P<name>...)`
    /// are the record's fields, and the lines after it, up to the next such
    /// line, its `text`.
    pub marker: Option<Pattern>,
    /// text: patterns of the lines before the first record whose named
    /// groups are the session's own fields (the first line that matches
    /// each pattern gives its groups).
    #[serde(default)]
    pub header: Vec<Pattern>,
    /// jsonl and json: how records form sessions: `file` (one session per
    /// file, the default) or a pointer to the field whose value names the
    /// session.
    pub sessions_by: Option<Grouping>,
    /// json: the pointer to the array of records (default: the document);
    /// sqlite without a `records` query: the array of records inside each
    /// session's row.
    pub records_at: Option<Pointer>,
    /// sqlite: the query listing sessions, one row each.
    pub sessions: Option<String>,
    /// sqlite: the query listing one session's records in order; `?1` is
    /// the value of `session.id` in the session's row.
    pub records: Option<String>,
    /// sqlite: columns holding JSON text, read as JSON values.
    #[serde(default)]
    pub json_columns: Vec<String>,
    /// sqlite: sessions kept in key-value tables (`[[source.kv]]`), read
    /// by their keys instead of by `sessions` and `records` queries.
    #[serde(default)]
    pub kv: Vec<kv::Kv>,
    /// sqlite: columns that may hold zstd-compressed data (text or blob),
    /// decompressed before anything else reads them.
    #[serde(default)]
    pub zstd_columns: Vec<String>,
    /// Records written as externally tagged values (`{"User": {...}}`,
    /// `{"Text": "..."}`), as Rust's serde writes enums: a record, and each
    /// element of an array in it, that is an object of exactly one key
    /// becomes that object with `type` set to the key (`{"type": "User",
    /// ...}`), or `{"type": key, "value": ...}` when the value is not an
    /// object.
    #[serde(default)]
    pub untag: bool,
    /// Transcripts that are a session's own fields, whose messages are
    /// files of their own (see [`crate::linked`]); the other files are read
    /// as `kind` says.
    pub linked: Option<linked::Linked>,
}

/// A source's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// One JSON value a line.
    Jsonl,
    /// One JSON document a file.
    Json,
    /// A SQLite database, read read-only.
    Sqlite,
    /// A JSON document written as a log of changes, one JSON value a line
    /// (VS Code's chat sessions): a first line `{"kind": 0, "v": document}`,
    /// then `{"kind": 1, "k": path, "v": value}` (set), `{"kind": 2, "k":
    /// path, "v": [items], "i": n}` (cut the array at `k` to `n` items, then
    /// append) and `{"kind": 3, "k": path}` (delete); the document the log
    /// ends with is read as a `json` source is. A file that is one JSON
    /// document (the format before the log) is read as that document.
    #[serde(rename = "json-log")]
    JsonLog,
    /// One YAML document a file (a list of records, or a mapping holding
    /// them), read as a `json` source reads its document.
    Yaml,
    /// Plain text, Markdown among it: records begin at each line that
    /// `marker` matches (see [`crate::source`]).
    Text,
}

/// How records group into sessions.
#[derive(Debug, Clone)]
pub enum Grouping {
    /// One session per file.
    File,
    /// By the value at a pointer.
    Field(Pointer),
}

impl<'de> Deserialize<'de> for Grouping {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == "file" {
            return Ok(Grouping::File);
        }
        Pointer::parse(&s)
            .map(Grouping::Field)
            .map_err(|e| de::Error::custom(format!("{e}, or is `file`")))
    }
}

/// `[session]`: where the session's fields are (in the sqlite session row,
/// else in the first record that has them).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionFields {
    /// The harness's session id.
    pub id: Option<Field>,
    /// Where the id comes from when no record has one: `stem` (the file
    /// name without extension, the default) or `folder` (the file's folder).
    pub id_fallback: Option<IdFallback>,
    /// The parent session's id.
    pub parent: Option<Field>,
    /// The working directory or project folder.
    pub project: Option<Field>,
    /// The harness's project id.
    pub project_id: Option<Field>,
    /// The title (the last one found wins).
    pub title: Option<Field>,
    /// Titles that are placeholders, not titles (regular expressions).
    #[serde(default)]
    pub title_ignore: Vec<Pattern>,
    /// When it started (default: its first message; without one, the
    /// transcript's modification time, which deja marks approximate).
    pub started: Option<TimeField>,
    /// When it was last active (default: its last message).
    pub updated: Option<TimeField>,
}

/// A string field: a pointer, or a pointer and a pattern whose first group
/// is the value (`{ at = "/system_prompt", pattern = "Working Directory: (.+)" }`).
#[derive(Debug, Clone)]
pub enum Field {
    /// The string at a pointer.
    At(Pointer),
    /// The first group of the first match of `pattern` in the string at `at`.
    Capture {
        /// Where the string is.
        at: Pointer,
        /// A regular expression with one group.
        pattern: Pattern,
    },
    /// The folder `n` levels above the transcript file (1: its own folder),
    /// for harnesses that keep their files inside the project
    /// (`<project>/.crush/crush.db`: 2).
    FolderOfFile(usize),
    /// The first group of `pattern` in the transcript's path (written with
    /// `/` on every OS); with `slug`, the group is a folder's path written
    /// with `-` for `/` and `.` (`Users-me-my-app`), and the value is the
    /// folder on this machine it names (none when there is no such folder).
    InPath {
        /// A regular expression with one group.
        pattern: Pattern,
        /// Whether the group is a slug to find again on this machine.
        slug: bool,
    },
    /// The string at `at` in a JSON file beside the transcript (`file` is
    /// relative to the transcript's folder: `../workspace.json`; `{name}`
    /// in it is the transcript's name up to its first `.`).
    InFile {
        /// The file, relative to the transcript's folder.
        file: String,
        /// Where the string is in it.
        at: Pointer,
    },
    /// The first group of `pattern` in the first MiB of a file beside the
    /// transcript, read as text: for a value written inside a file too
    /// large to read whole (`{ file = "api_conversation_history.json",
    /// pattern = "Directory \\((.+?)\\) Files" }`).
    InFileText {
        /// The file, relative to the transcript's folder.
        file: String,
        /// A regular expression with one group.
        pattern: Pattern,
    },
    /// The string at `at` in this session's entry of a JSON file beside the
    /// transcript that lists sessions (the entry whose value at `key` is the
    /// session's id): `{ file = "../../state/taskHistory.json", key = "/id",
    /// at = "/cwdOnTaskInitialization" }`.
    InIndex(Index),
    /// The first of these fields that has a value.
    FirstOf(Vec<Field>),
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            At(String),
            Capture {
                at: String,
                pattern: String,
            },
            // Before `InFile`, which has no `key` and would take it.
            InIndex {
                file: String,
                list: Option<String>,
                key: String,
                at: String,
            },
            InFile {
                file: String,
                at: String,
            },
            InFileText {
                file: String,
                pattern: String,
            },
            Folder {
                folder_of_file: usize,
            },
            InPath {
                path: String,
                #[serde(default)]
                slug: bool,
            },
            Many(Vec<Field>),
        }
        let raw = Raw::deserialize(d).map_err(|_| {
            de::Error::custom(
                "expected a JSON pointer (\"/a/b\"), { at = \"/a/b\", pattern = \"...(group)...\" }, { file = \"../f.json\", at = \"/a\" }, { file = \"f.json\", pattern = \"...(group)...\" }, { file = \"../sessions.json\", key = \"/id\", at = \"/folder\" } (with `list` = the pointer to the entries when they are not the document), { folder_of_file = N }, { path = \"...(group)...\", slug = true }, or a list of these (the first with a value)",
            )
        })?;
        let grouped =
            |pattern: &str| Pattern::grouped(pattern, "the value").map_err(de::Error::custom);
        match raw {
            Raw::Folder { folder_of_file } if folder_of_file == 0 || folder_of_file > 16 => Err(
                de::Error::custom("`folder_of_file` counts folders above the file: 1 to 16"),
            ),
            Raw::Folder { folder_of_file } => Ok(Field::FolderOfFile(folder_of_file)),
            Raw::At(p) => Pointer::parse(&p).map(Field::At).map_err(de::Error::custom),
            Raw::Capture { at, pattern } => Ok(Field::Capture {
                at: Pointer::parse(&at).map_err(de::Error::custom)?,
                pattern: grouped(&pattern)?,
            }),
            Raw::InFile { file, .. } | Raw::InIndex { file, .. } | Raw::InFileText { file, .. }
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
            } => {
                let pointer = |p: &str| Pointer::parse(p).map_err(de::Error::custom);
                Ok(Field::InIndex(Index {
                    file,
                    list: list.as_deref().map(pointer).transpose()?,
                    key: pointer(&key)?,
                    at: pointer(&at)?,
                }))
            }
            Raw::InFileText { file, pattern } => Ok(Field::InFileText {
                file,
                pattern: grouped(&pattern)?,
            }),
            Raw::InFile { file, at } => Ok(Field::InFile {
                file,
                at: Pointer::parse(&at).map_err(de::Error::custom)?,
            }),
            Raw::Many(fields) if fields.is_empty() => {
                Err(de::Error::custom("a list of fields needs at least one"))
            }
            Raw::Many(fields) => Ok(Field::FirstOf(fields)),
            Raw::InPath { path, slug } => Ok(Field::InPath {
                pattern: grouped(&path)?,
                slug,
            }),
        }
    }
}

impl Field {
    /// Its value in `record` (none for the fields taken from the
    /// transcript's place, which are not in records: see [`crate::place`]).
    pub fn string(&self, record: &serde_json::Value) -> Option<String> {
        match self {
            Field::FolderOfFile(_)
            | Field::InPath { .. }
            | Field::InFile { .. }
            | Field::InFileText { .. }
            | Field::InIndex(_) => None,
            Field::FirstOf(fields) => fields.iter().find_map(|f| f.string(record)),
            Field::At(p) => p.string(record),
            Field::Capture { at, pattern } => {
                let text = at.string(record)?;
                let value = pattern
                    .0
                    .captures(&text)?
                    .get(1)?
                    .as_str()
                    .trim()
                    .to_string();
                (!value.is_empty()).then_some(value)
            }
        }
    }
}

/// Where a session id comes from when no record holds one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdFallback {
    /// The file name without its extension.
    Stem,
    /// The name of the file's folder.
    Folder,
}

/// A checked regular expression.
#[derive(Debug, Clone)]
pub struct Pattern(pub regex::Regex);

impl Pattern {
    /// `pattern` compiled, with a group `( )` around what it captures
    /// (`what`: "the value", "the time"), or why not.
    pub fn grouped(pattern: &str, what: &str) -> Result<Pattern, String> {
        let regex = regex::Regex::new(pattern)
            .map_err(|e| format!("invalid regular expression `{pattern}`: {e}"))?;
        if regex.captures_len() < 2 {
            return Err(format!(
                "the pattern `{pattern}` needs a group `( )` around {what}"
            ));
        }
        Ok(Pattern(regex))
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        regex::Regex::new(&s)
            .map(Pattern)
            .map_err(|e| de::Error::custom(format!("invalid regular expression `{s}`: {e}")))
    }
}

/// `[resume]`: the command that reopens a session, as a template:
/// `{native_id}`, `{id}`, `{project}` and `{source}` are replaced.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resume {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// The folder to run it in (default `{project}`).
    pub cwd: Option<String>,
    /// A note for the user.
    pub note: Option<String>,
}

/// A description that could not be read: the file, the line, the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The description's file.
    pub origin: String,
    /// The line (1-based), when known.
    pub line: Option<usize>,
    /// The key, dotted (`message.role`), when known.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "reader description `{}`", self.origin)?;
        if let Some(line) = self.line {
            write!(f, ", line {line}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ", key `{key}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Reads the description `text` from `origin`, checking it whole.
pub fn parse(origin: &str, text: &str) -> Result<Description, Error> {
    let error = |line: Option<usize>, key: Option<String>, message: String| Error {
        origin: origin.to_string(),
        line,
        key,
        message,
    };
    let line_of = |span: Option<std::ops::Range<usize>>| {
        span.map(|s| {
            text.get(..s.start.min(text.len()))
                .map_or(1, |before| before.matches('\n').count() + 1)
        })
    };
    let deserializer = toml::de::Deserializer::parse(text)
        .map_err(|e| error(line_of(e.span()), None, first_line(e.message())))?;
    let description: Description = serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let key = e.path().to_string();
        let key = (!key.is_empty() && key != ".").then_some(key);
        let inner = e.inner();
        error(line_of(inner.span()), key, first_line(inner.message()))
    })?;
    check(&description).map_err(|(key, message)| {
        let line = key_line(text, &key);
        error(line, Some(key), message)
    })?;
    Ok(description)
}

/// What the schema alone cannot say: keys that go together.
fn check(d: &Description) -> Result<(), (String, String)> {
    let needs = |key: &str, what: &str| Err((key.to_string(), what.to_string()));
    match d.source.kind {
        Kind::Sqlite if !d.source.kv.is_empty() => {
            for key in ["sessions", "records", "records_at"] {
                let set = match key {
                    "sessions" => d.source.sessions.is_some(),
                    "records" => d.source.records.is_some(),
                    _ => d.source.records_at.is_some(),
                };
                if set {
                    return needs(
                        &format!("source.{key}"),
                        "a source read by `[[source.kv]]` finds its sessions and records by key; say it in each entry",
                    );
                }
            }
            for (i, kv) in d.source.kv.iter().enumerate() {
                if kv.records.is_none() && kv.records_at.is_none() {
                    return needs(
                        &format!("source.kv[{i}].records"),
                        "say where a session's records are: the key pattern of `records`, or `records_at` inside its value",
                    );
                }
                if let Some(records) = &kv.records {
                    if !records.has("record") || !records.has("session") {
                        return needs(
                            &format!("source.kv[{i}].records"),
                            "a records key pattern holds `{session}` and `{record}`",
                        );
                    }
                }
                if kv.order.is_some() && kv.records.is_none() {
                    return needs(
                        &format!("source.kv[{i}].order"),
                        "`order` names records by key: add the `records` key pattern",
                    );
                }
                if !kv.sessions.has("session") && d.session.id.is_none() {
                    return needs(
                        &format!("source.kv[{i}].sessions"),
                        "sessions under one key (no `{session}` in it) need `session.id`",
                    );
                }
                if kv.sessions.has("record") {
                    return needs(
                        &format!("source.kv[{i}].sessions"),
                        "a session's key pattern holds `{session}` only",
                    );
                }
            }
        }
        Kind::Sqlite => {
            if d.source.sessions.is_none() {
                return needs(
                    "source.sessions",
                    "a sqlite source needs the query that lists sessions",
                );
            }
            if d.source.records.is_none() && d.source.records_at.is_none() {
                return needs(
                    "source.records",
                    "a sqlite source needs the query that lists a session's records, or `records_at` inside the session's row",
                );
            }
            if d.session.id.is_none() {
                return needs(
                    "session.id",
                    "a sqlite source needs the session id's column",
                );
            }
            if d.source.sessions_by.is_some() {
                return needs(
                    "source.sessions_by",
                    "a sqlite source groups by its `sessions` query",
                );
            }
        }
        Kind::Jsonl | Kind::Json | Kind::JsonLog | Kind::Yaml | Kind::Text => {
            for key in ["sessions", "records"] {
                let set = if key == "sessions" {
                    d.source.sessions.is_some()
                } else {
                    d.source.records.is_some()
                };
                if set {
                    return needs(&format!("source.{key}"), "only a sqlite source has queries");
                }
            }
            if !d.source.kv.is_empty() {
                return needs("source.kv", "only a sqlite source has key-value tables");
            }
            if !d.source.json_columns.is_empty() || !d.source.zstd_columns.is_empty() {
                return needs("source.json_columns", "only a sqlite source has columns");
            }
        }
    }
    if d.source.kind == Kind::Text {
        let Some(marker) = &d.source.marker else {
            return needs(
                "source.marker",
                "a text source needs the pattern of the line that begins a record",
            );
        };
        if marker.0.capture_names().flatten().next().is_none() {
            return needs(
                "source.marker",
                "the marker needs a named group `(?P<role>...)` for the record's fields",
            );
        }
        if d.source.records_at.is_some() {
            return needs(
                "source.records_at",
                "a text source's records are the parts its marker lines begin",
            );
        }
    } else if d.source.marker.is_some() || !d.source.header.is_empty() {
        let key = if d.source.marker.is_some() {
            "source.marker"
        } else {
            "source.header"
        };
        return needs(key, "only a text source has `marker` and `header` lines");
    }
    if d.source.records_at.is_some() && d.source.kind == Kind::Jsonl {
        return needs(
            "source.records_at",
            "a jsonl source's records are its lines; `records_at` is for json and sqlite",
        );
    }
    if d.files.glob.is_empty() {
        return needs("files.glob", "say which files below a root are transcripts");
    }
    for (i, tool) in d.tools.iter().enumerate() {
        if tool.command.is_none()
            && tool.commands.is_none()
            && tool.file.is_none()
            && tool.files.is_none()
        {
            return needs(
                &format!("tools[{i}]"),
                "a tool rule needs `command`, `commands`, `file` or `files`",
            );
        }
        if let Some(p) = &tool.pattern {
            if p.0.captures_len() < 2 {
                return needs(
                    &format!("tools[{i}].pattern"),
                    "the pattern needs a group `( )` around the value",
                );
            }
        }
        if tool.in_match.is_some() && tool.pattern.is_none() {
            return needs(
                &format!("tools[{i}].in_match"),
                "`in_match` points into what a `pattern` matched: add the pattern",
            );
        }
    }
    for (i, m) in d.message.iter().enumerate() {
        if m.time.as_ref().is_some_and(TimeField::of_session_only) {
            return needs(
                &format!("message[{i}].time"),
                "a message's time is in its record (a pointer, or `at` with a `pattern`); `path` and `file` name a session's time",
            );
        }
    }
    if let Some(resume) = &d.resume {
        if resume.argv.is_empty() {
            return needs("resume.argv", "the resume command needs a program");
        }
    }
    Ok(())
}

/// The line where the last part of `key` is set, when it can be found.
fn key_line(text: &str, key: &str) -> Option<usize> {
    let (table, leaf) = match key.rsplit_once('.') {
        Some((table, leaf)) => (table, leaf),
        None => ("", key),
    };
    let leaf = leaf.split('[').next().unwrap_or(leaf);
    let mut in_table = table.is_empty();
    let mut table_line = None;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with('[') {
            let name = t.trim_matches(|c| c == '[' || c == ']').trim();
            in_table = name == table.split('[').next().unwrap_or(table);
            if in_table {
                table_line = Some(n + 1);
            }
            if name == leaf && table.is_empty() {
                return Some(n + 1);
            }
            continue;
        }
        if in_table {
            if let Some((k, _)) = t.split_once('=') {
                if k.trim() == leaf {
                    return Some(n + 1);
                }
            }
        }
    }
    table_line
}

/// The first line of a multi-line parser message.
fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or(message).trim().to_string()
}

#[cfg(test)]
mod tests;
