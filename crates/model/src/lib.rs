//! deja's own view of sessions: the types every layer speaks (the plugin host
//! converts the readers' ABI values into them once, at its boundary), and the
//! few helpers they share: content hashes, one-line previews, start-up traces,
//! and the rule for which copy of a session wins.

pub mod text;
pub mod trace;

pub use text::{one_line, sha256_hex};

use serde::Serialize;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person.
    User,
    /// The model.
    Assistant,
}

impl Role {
    /// The lower-case name used in output and the store.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }

    /// Parses the stored name.
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            _ => None,
        }
    }
}

/// One message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// The text.
    pub text: String,
    /// When (ms since epoch, UTC).
    pub timestamp_ms: i64,
    /// The harness's own id.
    pub native_id: Option<String>,
}

/// The line between the parts of one edit's text when it changed several
/// places of a file: a line holding only U+001E (the plugin ABI's
/// `EDIT_PARTS_SEPARATOR`).
pub const EDIT_PARTS_SEPARATOR: &str = "\n\u{1e}\n";

/// A file a session touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    /// The path.
    pub path: String,
    /// `edit`, `add`, `read-only` or `read`.
    pub action: &'static str,
    /// When (ms since epoch, UTC).
    pub timestamp_ms: i64,
    /// What an edit wrote (the new text of the part it changed, or the
    /// whole file it wrote), when the transcript keeps it and its reader
    /// hands it over (plugin ABI 1.3); at most 64 KiB.
    pub text: Option<String>,
}

/// A command a session ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRecord {
    /// The command line.
    pub command: String,
    /// `user` or `agent`.
    pub origin: &'static str,
    /// When (ms since epoch, UTC).
    pub timestamp_ms: i64,
    /// How it ended, as far as the transcript says.
    pub outcome: Outcome,
}

/// How a command ended: failed, succeeded or unknown (the transcript does
/// not say), and its exit code where the transcript gives one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// `failed`, `succeeded` or `unknown`.
    pub status: OutcomeStatus,
    /// The exit code, when recorded.
    pub exit_code: Option<i64>,
}

/// Whether a command failed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutcomeStatus {
    /// The transcript does not say.
    #[default]
    Unknown,
    /// It ended well.
    Succeeded,
    /// It failed: a non-zero exit code, or its result marked an error.
    Failed,
}

impl OutcomeStatus {
    /// The name used in output and the store.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeStatus::Unknown => "unknown",
            OutcomeStatus::Succeeded => "succeeded",
            OutcomeStatus::Failed => "failed",
        }
    }

    /// The status a stored name stands for (anything else: unknown).
    pub fn from_name(name: &str) -> Self {
        match name {
            "succeeded" => OutcomeStatus::Succeeded,
            "failed" => OutcomeStatus::Failed,
            _ => OutcomeStatus::Unknown,
        }
    }
}

/// Where a session ran.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Project {
    /// Directory.
    pub dir: Option<String>,
    /// Name.
    pub name: Option<String>,
    /// The harness's project id.
    pub id: Option<String>,
}

/// One session as the host handles it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The harness that wrote it.
    pub harness: String,
    /// deja's id (unique within the harness).
    pub id: String,
    /// The harness's id.
    pub native_id: String,
    /// Start (ms since epoch, UTC).
    pub started_at_ms: i64,
    /// Last activity (ms since epoch, UTC).
    pub updated_at_ms: i64,
    /// Whether the start is only the transcript's modification time (no
    /// record of the harness dates the session): such a date is shown as
    /// approximate and sorts below every recorded one.
    pub date_approximate: bool,
    /// Project.
    pub project: Project,
    /// Title, when known.
    pub title: Option<String>,
    /// Parent session's deja id, for subagents.
    pub parent_id: Option<String>,
    /// Which copy wins when a session is found twice.
    pub precedence: i32,
    /// Messages in order.
    pub messages: Vec<Message>,
    /// Files touched.
    pub files: Vec<FileRecord>,
    /// Commands run.
    pub commands: Vec<CommandRecord>,
}

impl Session {
    /// Whether `self` should replace `other`, a copy of the same session from another file.
    pub fn wins_over(&self, other: &Session) -> bool {
        self.copy_rank() > other.copy_rank()
    }

    /// What decides between two copies of this session: see [`CopyRank`].
    pub fn copy_rank(&self) -> CopyRank {
        CopyRank {
            precedence: self.precedence,
            updated_at_ms: self.updated_at_ms,
            messages: self.messages.len() as i64,
        }
    }

    /// `self` with every date later than `now_ms` set to `now_ms`: neither a
    /// transcript nor a teammate can place a session in the future, above
    /// every real one.
    pub fn clamped_to(mut self, now_ms: i64) -> Session {
        self.started_at_ms = self.started_at_ms.min(now_ms);
        self.updated_at_ms = self.updated_at_ms.min(now_ms);
        for m in &mut self.messages {
            m.timestamp_ms = m.timestamp_ms.min(now_ms);
        }
        for f in &mut self.files {
            f.timestamp_ms = f.timestamp_ms.min(now_ms);
        }
        for c in &mut self.commands {
            c.timestamp_ms = c.timestamp_ms.min(now_ms);
        }
        self
    }

    /// The first line of the first user message, for listings.
    pub fn first_user_line(&self) -> Option<&str> {
        self.messages
            .iter()
            .find(|m| m.role == Role::User)
            .and_then(|m| m.text.lines().find(|l| !l.trim().is_empty()))
    }
}

/// The one rule for which copy of a session wins when a reader finds it in
/// two files: higher precedence, then the later update, then more messages
/// (compared in that order, as the derived `Ord` does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CopyRank {
    /// The reader's precedence of the file format.
    pub precedence: i32,
    /// Last activity (ms).
    pub updated_at_ms: i64,
    /// Number of messages.
    pub messages: i64,
}

/// deja's id for the message at `index` of session `session_id`, used when the
/// harness has none.
pub fn message_id(session_id: &str, index: usize) -> String {
    format!("{session_id}#{index}")
}

/// The embedding model a store's vectors were made with: the store keeps it,
/// so that a later run can tell whether the installed model is the same
/// without hashing the model file or probing its dimensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelStamp {
    /// A cheap identity of the model files and windowing when `id` was computed.
    pub fingerprint: String,
    /// The model id (name, content hash, windowing): vectors of different ids never mix.
    pub id: String,
    /// Vector dimensions.
    pub dims: usize,
}
