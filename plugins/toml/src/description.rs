//! A reader description: the TOML a user writes, read into checked values.
//!
//! Every value is checked as it is read (a JSON pointer starts with `/`, a
//! pattern compiles, a role is `user` or `assistant`, no key is unknown), so
//! that an error names the file, the line and the key: see [`parse`].

use std::fmt;

use serde::de::{self, Deserializer};
use serde::Deserialize;

use crate::pointer::{Condition, Pointer};

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
}

/// `[source]`: what a file holds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// `jsonl`, `json`, `json-log` or `sqlite`.
    pub kind: Kind,
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
    /// When it started (default: its first message).
    pub started: Option<Pointer>,
    /// When it was last active (default: its last message).
    pub updated: Option<Pointer>,
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
            InFile {
                file: String,
                at: String,
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
                "expected a JSON pointer (\"/a/b\"), { at = \"/a/b\", pattern = \"...(group)...\" }, { file = \"../f.json\", at = \"/a\" }, { folder_of_file = N }, { path = \"...(group)...\", slug = true }, or a list of these (the first with a value)",
            )
        })?;
        let grouped = |pattern: &str| {
            let regex = regex::Regex::new(pattern).map_err(|e| {
                de::Error::custom(format!("invalid regular expression `{pattern}`: {e}"))
            })?;
            if regex.captures_len() < 2 {
                return Err(de::Error::custom(format!(
                    "the pattern `{pattern}` needs a group `( )` around the value"
                )));
            }
            Ok(Pattern(regex))
        };
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
            Raw::InFile { file, .. }
                if file.is_empty() || std::path::Path::new(&file).is_absolute() =>
            {
                Err(de::Error::custom(format!(
                    "`file` is a path relative to the transcript's folder, not `{file}`"
                )))
            }
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
            Field::FolderOfFile(_) | Field::InPath { .. } | Field::InFile { .. } => None,
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

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        regex::Regex::new(&s)
            .map(Pattern)
            .map_err(|e| de::Error::custom(format!("invalid regular expression `{s}`: {e}")))
    }
}

/// The message rules: each record yields one message for every rule it
/// matches, in the rules' order.
#[derive(Debug)]
pub struct MessageRules(pub Vec<MessageFields>);

impl std::ops::Deref for MessageRules {
    type Target = [MessageFields];
    fn deref(&self) -> &[MessageFields] {
        &self.0
    }
}

impl<'de> Deserialize<'de> for MessageRules {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Rules;
        impl<'de> de::Visitor<'de> for Rules {
            type Value = MessageRules;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a `[message]` table or `[[message]]` tables")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<MessageRules, A::Error> {
                MessageFields::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|m| MessageRules(vec![m]))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<MessageRules, A::Error> {
                let mut rules = Vec::new();
                while let Some(rule) = seq.next_element::<MessageFields>()? {
                    rules.push(rule);
                }
                if rules.is_empty() {
                    return Err(de::Error::custom("at least one message rule is needed"));
                }
                Ok(MessageRules(rules))
            }
        }
        d.deserialize_any(Rules)
    }
}

/// `[message]`: which records are messages.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageFields {
    /// Records are messages only when they match one of these (default: all).
    #[serde(default)]
    pub when: Vec<Condition>,
    /// Records that are never messages (tool output, injected context,
    /// reasoning), even when they match `when`.
    #[serde(default)]
    pub skip: Vec<Condition>,
    /// Who wrote it: a pointer to the harness's value (see `roles`), or
    /// `user` or `assistant` for every record the rule matches.
    pub role: RoleField,
    /// The harness's values for each role (default: `user` and `assistant`).
    #[serde(default)]
    pub roles: Roles,
    /// Its text: a string, or an array of content parts (see `parts`).
    pub text: Pointer,
    /// How an array of content parts is read.
    #[serde(default)]
    pub parts: Parts,
    /// Text the harness adds to a message itself (injected context, editor
    /// state), as regular expressions: every match is removed.
    #[serde(default)]
    pub strip: Vec<Pattern>,
    /// When it was written.
    pub time: Option<Pointer>,
    /// The harness's message id; consecutive records with the same id are
    /// one message (their texts joined).
    pub id: Option<Pointer>,
}

/// Where a message's role comes from.
#[derive(Debug, Clone)]
pub enum RoleField {
    /// The harness's value at a pointer, mapped by `roles`.
    At(Pointer),
    /// The same role for every record the rule matches.
    Is(FixedRole),
}

/// A role named in the description itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixedRole {
    /// The person at the keyboard.
    User,
    /// The model.
    Assistant,
}

impl<'de> Deserialize<'de> for RoleField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        match s.as_str() {
            "user" => Ok(RoleField::Is(FixedRole::User)),
            "assistant" => Ok(RoleField::Is(FixedRole::Assistant)),
            _ => Pointer::parse(&s)
                .map(RoleField::At)
                .map_err(|e| de::Error::custom(format!("{e}, or is `user` or `assistant`"))),
        }
    }
}

/// Role values.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Roles {
    /// Values that mean the person at the keyboard.
    #[serde(default = "default_user")]
    pub user: OneOrMany,
    /// Values that mean the model.
    #[serde(default = "default_assistant")]
    pub assistant: OneOrMany,
}

impl Default for Roles {
    fn default() -> Self {
        Roles {
            user: default_user(),
            assistant: default_assistant(),
        }
    }
}

fn default_user() -> OneOrMany {
    OneOrMany(vec!["user".into()])
}

fn default_assistant() -> OneOrMany {
    OneOrMany(vec!["assistant".into()])
}

/// A string or a list of strings.
#[derive(Debug, Clone, Default)]
pub struct OneOrMany(pub Vec<String>);

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            One(String),
            Many(Vec<String>),
        }
        match Raw::deserialize(d) {
            Ok(Raw::One(s)) => Ok(OneOrMany(vec![s])),
            Ok(Raw::Many(v)) => Ok(OneOrMany(v)),
            Err(_) => Err(de::Error::custom("expected a string or a list of strings")),
        }
    }
}

/// How content parts are read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parts {
    /// The part's type, inside the part.
    #[serde(default = "default_part_type")]
    pub r#type: Pointer,
    /// Types whose text is kept (default `text`); a part without a type is
    /// kept when it is a string, or when `untyped` is set.
    #[serde(default = "default_keep")]
    pub keep: OneOrMany,
    /// Whether object parts without a type are kept too (as VS Code writes
    /// markdown: `{"value": "..."}`).
    #[serde(default)]
    pub untyped: bool,
    /// The part's text, inside the part: a pointer, or a list of pointers
    /// of which the first one present is read (parts of different types
    /// keep their text in different places).
    #[serde(default = "default_part_text")]
    pub text: Pointers,
    /// Parts whose text matches one of these regular expressions are not
    /// the message's (a tool's result the harness sends as a text part).
    #[serde(default)]
    pub drop: Vec<Pattern>,
    /// How kept parts are joined (default: a blank line).
    pub join: Option<String>,
}

impl Default for Parts {
    fn default() -> Self {
        Parts {
            r#type: default_part_type(),
            keep: default_keep(),
            untyped: false,
            text: default_part_text(),
            drop: Vec::new(),
            join: None,
        }
    }
}

fn default_part_type() -> Pointer {
    Pointer::literal("/type")
}

fn default_part_text() -> Pointers {
    Pointers(vec![Pointer::literal("/text")])
}

/// One pointer or a list of them, tried in order.
#[derive(Debug, Clone)]
pub struct Pointers(pub Vec<Pointer>);

impl Pointers {
    /// The string at the first pointer that has one.
    pub fn string(&self, record: &serde_json::Value) -> Option<String> {
        self.0.iter().find_map(|p| p.string(record))
    }
}

impl<'de> Deserialize<'de> for Pointers {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let OneOrMany(texts) = OneOrMany::deserialize(d)?;
        if texts.is_empty() {
            return Err(de::Error::custom("at least one JSON pointer is needed"));
        }
        texts
            .iter()
            .map(|t| Pointer::parse(t).map_err(de::Error::custom))
            .collect::<Result<Vec<_>, _>>()
            .map(Pointers)
    }
}

fn default_keep() -> OneOrMany {
    OneOrMany(vec!["text".into()])
}

/// `[[tools]]`: a tool call that becomes a command or file record.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    /// An array in the record whose every element is a tool call (the rest
    /// of the keys then point into the element); default: the record itself.
    pub each: Option<Pointer>,
    /// The records (or elements) it applies to.
    pub when: Condition,
    /// The command line it ran.
    pub command: Option<Pointer>,
    /// An array of command lines it ran.
    pub commands: Option<Pointer>,
    /// The one file it touched.
    pub file: Option<Pointer>,
    /// An array of files it touched.
    pub files: Option<Pointer>,
    /// In each element of the `commands` or `files` array, where the value
    /// is (default: the element is the string).
    pub item: Option<Pointer>,
    /// A regular expression with one group: the values are its matches in
    /// the strings found (file names inside a patch's text).
    pub pattern: Option<Pattern>,
    /// What happened to the file: `edit` (default), `read`, `add`, `read-only`.
    #[serde(default)]
    pub action: Action,
    /// Who ran the command: `agent` (a tool call, the default) or `user`
    /// (a command the person ran through the harness).
    #[serde(default)]
    pub origin: Origin,
    /// When (default: the message time).
    pub time: Option<Pointer>,
}

/// A file action.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Edited or written.
    #[default]
    Edit,
    /// Read by the agent.
    Read,
    /// Added to the context as editable.
    Add,
    /// Added to the context read-only.
    ReadOnly,
}

/// Who ran a command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// The agent, as a tool call.
    #[default]
    Agent,
    /// The person, through the harness.
    User,
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
        Kind::Jsonl | Kind::Json | Kind::JsonLog => {
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
            if !d.source.json_columns.is_empty() || !d.source.zstd_columns.is_empty() {
                return needs("source.json_columns", "only a sqlite source has columns");
            }
        }
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
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
[reader]
harness = "tiny"

[files]
roots = ["~/.tiny"]
glob = ["**/*.jsonl"]

[source]
kind = "jsonl"

[message]
role = "/role"
text = "/text"
"#;

    #[test]
    fn a_minimal_description_reads() {
        let d = parse("tiny.toml", MINIMAL).unwrap();
        assert_eq!(d.reader.harness.0, "tiny");
        assert_eq!(d.source.kind, Kind::Jsonl);
        assert_eq!(d.message[0].roles.user.0, vec!["user"]);
    }

    #[test]
    fn a_bad_pointer_names_the_file_line_and_key() {
        let text = MINIMAL.replace("role = \"/role\"", "role = \"role\"");
        let e = parse("tiny.toml", &text).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("message.role"), "{e}");
        assert_eq!(e.line, Some(13), "{e}");
        assert!(
            e.to_string()
                .starts_with("reader description `tiny.toml`, line 13, key `message.role`: "),
            "{e}"
        );
        assert!(e.message.contains("starts with `/`"), "{e}");
    }

    #[test]
    fn an_unknown_key_is_named() {
        let text = MINIMAL.replace("kind = \"jsonl\"", "kind = \"jsonl\"\nknd = 1");
        let e = parse("tiny.toml", &text).unwrap_err();
        assert!(e.message.contains("unknown field `knd`"), "{e}");
        assert_eq!(e.line, Some(11), "{e}");
    }

    #[test]
    fn a_toml_syntax_error_has_its_line() {
        let text = MINIMAL.replace("[source]", "[source");
        let e = parse("tiny.toml", &text).unwrap_err();
        assert_eq!(e.line, Some(9), "{e}");
    }

    #[test]
    fn keys_that_go_together_are_checked() {
        let text = MINIMAL.replace("kind = \"jsonl\"", "kind = \"sqlite\"");
        let e = parse("tiny.toml", &text).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("source.sessions"), "{e}");
        assert_eq!(e.line, Some(9), "{e}");
    }

    #[test]
    fn a_bad_pattern_and_a_bad_harness_are_refused() {
        let text = MINIMAL.replace("harness = \"tiny\"", "harness = \"ti ny\"");
        assert!(parse("t", &text)
            .unwrap_err()
            .message
            .contains("invalid harness name"));
        let text = MINIMAL.replace("[source]", "[session]\ntitle_ignore = [\"(\"]\n\n[source]");
        let e = parse("t", &text).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("session.title_ignore[0]"), "{e}");
    }
}
