//! The host's own view of sessions, converted once from the plugin ABI types at
//! the boundary (see [`crate::plugin_host`]), so nothing past it touches FFI types.

use deja_plugin_api as api;
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

/// A file a session touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    /// The path.
    pub path: String,
    /// `edit`, `add`, `read-only` or `read`.
    pub action: &'static str,
    /// When (ms since epoch, UTC).
    pub timestamp_ms: i64,
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
        (self.precedence, self.updated_at_ms, self.messages.len())
            > (other.precedence, other.updated_at_ms, other.messages.len())
    }

    /// Converts a plugin's session.
    pub fn from_api(harness: &str, s: api::Session) -> Session {
        Session {
            harness: harness.to_string(),
            id: s.id.into_string(),
            native_id: s.native_id.into_string(),
            started_at_ms: s.started_at_ms,
            updated_at_ms: s.updated_at_ms.max(s.started_at_ms),
            project: Project {
                dir: opt(s.project.dir),
                name: opt(s.project.name),
                id: opt(s.project.id),
            },
            title: opt(s.title),
            parent_id: opt(s.parent_id),
            precedence: s.precedence,
            messages: s
                .messages
                .into_iter()
                .map(|m| Message {
                    role: match m.role {
                        api::Role::User => Role::User,
                        api::Role::Assistant => Role::Assistant,
                    },
                    text: m.text.into_string(),
                    timestamp_ms: m.timestamp_ms,
                    native_id: opt(m.native_id),
                })
                .collect(),
            files: s
                .files
                .into_iter()
                .map(|f| FileRecord {
                    path: f.path.into_string(),
                    action: f.action.as_str(),
                    timestamp_ms: f.timestamp_ms,
                })
                .collect(),
            commands: s
                .commands
                .into_iter()
                .map(|c| CommandRecord {
                    command: c.command.into_string(),
                    origin: c.origin.as_str(),
                    timestamp_ms: c.timestamp_ms,
                })
                .collect(),
        }
    }

    /// The first line of the first user message, for listings.
    pub fn first_user_line(&self) -> Option<&str> {
        self.messages
            .iter()
            .find(|m| m.role == Role::User)
            .and_then(|m| m.text.lines().find(|l| !l.trim().is_empty()))
    }
}

fn opt(v: api::ROption<api::RString>) -> Option<String> {
    v.into_option()
        .map(|s| s.into_string())
        .filter(|s| !s.is_empty())
}

/// deja's id for the message at `index` of session `session_id`, used when the
/// harness has none.
pub fn message_id(session_id: &str, index: usize) -> String {
    format!("{session_id}#{index}")
}
