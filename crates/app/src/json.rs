//! The JSON shapes deja prints with `--json` and answers through its MCP
//! server, one `Serialize` struct per shape, so that the compiler holds the
//! rule: fields may be added, never renamed. Timestamps are RFC 3339.
//!
//! This module holds the shapes several outputs share (a session with its
//! messages, files and commands; a project); each submodule holds the
//! outputs of one command. Fields are declared in alphabetical order: that
//! is the order deja has always printed them in, and the serializer follows
//! the declaration.

use std::borrow::Cow;

use serde::Serialize;

use crate::output::rfc3339;
use deja_model::message_id;

pub mod blame;
pub mod context;
pub mod doctor;
pub mod forget;
pub mod index;
pub mod mcp;
pub mod parse;
pub mod plugins;
pub mod recall;
pub mod recap;
pub mod resume;
pub mod sessions;
pub mod setup;
pub mod team;

/// Where a session ran; each part null when the harness did not say.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Project<'a> {
    /// The project's directory.
    pub dir: Option<&'a str>,
    /// The harness's id of the project.
    pub id: Option<&'a str>,
    /// The project's name.
    pub name: Option<&'a str>,
}

impl<'a> From<&'a deja_model::Project> for Project<'a> {
    fn from(p: &'a deja_model::Project) -> Self {
        Project {
            dir: p.dir.as_deref(),
            id: p.id.as_deref(),
            name: p.name.as_deref(),
        }
    }
}

/// A session with every message, file and command record (`deja parse`,
/// `deja show`).
#[derive(Debug, Clone, Serialize)]
pub struct Session<'a> {
    /// The commands it ran, in order.
    pub commands: Vec<CommandRecord<'a>>,
    /// Whether `started_at` is only the transcript's modification time (no
    /// record of the harness dates the session).
    pub date_approximate: bool,
    /// The files it touched, in order.
    pub files: Vec<FileRecord<'a>>,
    /// The harness that wrote it.
    pub harness: &'a str,
    /// deja's id of the session.
    pub id: &'a str,
    /// How many messages the session has (all of them, even when
    /// `messages` holds only a window).
    pub message_count: usize,
    /// The messages shown.
    pub messages: Vec<Message<'a>>,
    /// The harness's id of the session.
    pub native_id: &'a str,
    /// Who published it in the team store (`user@machine`), for a session
    /// pulled from there (`deja show` only; absent for this machine's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<&'a str>,
    /// The parent session's deja id, for subagents.
    pub parent_id: Option<&'a str>,
    /// Where it ran.
    pub project: Project<'a>,
    /// The transcript it was read from.
    pub source: Option<Cow<'a, str>>,
    /// Whether that transcript is still there (`deja show` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_present: Option<bool>,
    /// When it started.
    pub started_at: String,
    /// Its title, when the harness keeps one.
    pub title: Option<&'a str>,
    /// Its last activity.
    pub updated_at: String,
    /// The messages shown around one (`deja show` of a message only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
}

impl<'a> Session<'a> {
    /// `s` in full, read from `source`.
    pub fn new(s: &'a deja_model::Session, source: Option<Cow<'a, str>>) -> Self {
        Session {
            commands: s
                .commands
                .iter()
                .map(|c| CommandRecord {
                    command: &c.command,
                    exit_code: c.outcome.exit_code,
                    origin: c.origin,
                    outcome: match c.outcome.status {
                        deja_model::OutcomeStatus::Unknown => None,
                        known => Some(known.as_str()),
                    },
                    timestamp: rfc3339(c.timestamp_ms),
                })
                .collect(),
            date_approximate: s.date_approximate,
            files: s
                .files
                .iter()
                .map(|f| FileRecord {
                    action: f.action,
                    path: &f.path,
                    timestamp: rfc3339(f.timestamp_ms),
                })
                .collect(),
            harness: &s.harness,
            id: &s.id,
            message_count: s.messages.len(),
            messages: s
                .messages
                .iter()
                .enumerate()
                .map(|(i, m)| Message {
                    id: match &m.native_id {
                        Some(id) => Cow::Borrowed(id),
                        None => Cow::Owned(message_id(&s.id, i)),
                    },
                    index: i,
                    native_id: m.native_id.as_deref(),
                    role: m.role.as_str(),
                    text: &m.text,
                    timestamp: rfc3339(m.timestamp_ms),
                })
                .collect(),
            native_id: &s.native_id,
            origin: None,
            parent_id: s.parent_id.as_deref(),
            project: Project::from(&s.project),
            source,
            source_present: None,
            started_at: rfc3339(s.started_at_ms),
            title: s.title.as_deref(),
            updated_at: rfc3339(s.updated_at_ms),
            window: None,
        }
    }
}

/// One message of a session.
#[derive(Debug, Clone, Serialize)]
pub struct Message<'a> {
    /// Its id: the harness's, else deja's `<session>#<index>`.
    pub id: Cow<'a, str>,
    /// Its position in the session, from 0.
    pub index: usize,
    /// The harness's id of the message.
    pub native_id: Option<&'a str>,
    /// `user` or `assistant`.
    pub role: &'a str,
    /// The text.
    pub text: &'a str,
    /// When it was written.
    pub timestamp: String,
}

/// A file a session touched.
#[derive(Debug, Clone, Serialize)]
pub struct FileRecord<'a> {
    /// `edit`, `add`, `read-only` or `read`.
    pub action: &'a str,
    /// The path.
    pub path: &'a str,
    /// When.
    pub timestamp: String,
}

/// A command a session ran.
#[derive(Debug, Clone, Serialize)]
pub struct CommandRecord<'a> {
    /// The command line.
    pub command: &'a str,
    /// Its exit code, when the transcript gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// `user` or `agent`.
    pub origin: &'a str,
    /// `failed` or `succeeded`, when the transcript says how it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<&'static str>,
    /// When.
    pub timestamp: String,
}

/// Which messages `deja show` printed around one.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Window {
    /// The message shown around.
    pub around: usize,
    /// The first message shown.
    pub from: usize,
    /// One past the last message shown.
    pub to: usize,
    /// Messages in the session.
    pub total: usize,
}

/// Test helpers: the keys of a serialized object, in the order written.
#[cfg(test)]
pub(crate) mod testing {
    use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
    use serde::Serialize;

    struct Keys(Vec<String>);

    impl<'de> Deserialize<'de> for Keys {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Keys;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                    let mut keys = Vec::new();
                    while let Some((k, IgnoredAny)) = map.next_entry::<String, IgnoredAny>()? {
                        keys.push(k);
                    }
                    Ok(Keys(keys))
                }
            }
            d.deserialize_map(V)
        }
    }

    /// A session row to serialize.
    pub fn session_row() -> deja_store::SessionRow {
        deja_store::SessionRow {
            row: 1,
            harness: "aider".into(),
            id: "s1".into(),
            native_id: "n1".into(),
            started_at: 0,
            updated_at: 0,
            project: deja_model::Project::default(),
            title: None,
            parent_id: None,
            message_count: 2,
            first_user: Some("hi".into()),
            source_path: None,
            has_source: false,
            origin: None,
            in_code_folder: false,
            date_approximate: false,
        }
    }

    /// A recall hit to serialize.
    pub fn hit() -> deja_recall::Hit {
        deja_recall::Hit {
            rank: 1,
            score: 0.5,
            message_row: 1,
            session_row: 1,
            session_id: "s1".into(),
            harness: "aider".into(),
            project: deja_model::Project::default(),
            started_at: 0,
            message_id: "s1#0".into(),
            message_index: 0,
            role: "user".into(),
            timestamp: 0,
            text: "hi".into(),
            source_path: None,
            native_session_id: "n1".into(),
            origin: None,
            duplicates: Vec::new(),
            more_in_session: 0,
            weak: false,
        }
    }

    /// The keys `value` serializes to, in order (it must be an object).
    pub fn keys(value: &impl Serialize) -> Vec<String> {
        let text = serde_json::to_string(value).unwrap_or_default();
        serde_json::from_str::<Keys>(&text)
            .map(|k| k.0)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::keys;
    use super::*;
    use deja_model::{CommandRecord as C, FileRecord as F, Message as M, Role};

    fn sample() -> deja_model::Session {
        deja_model::Session {
            harness: "aider".into(),
            id: "s1".into(),
            native_id: "n1".into(),
            started_at_ms: 0,
            updated_at_ms: 1_500,
            date_approximate: false,
            project: deja_model::Project {
                dir: Some("/p".into()),
                name: Some("p".into()),
                id: None,
            },
            title: None,
            parent_id: None,
            precedence: 0,
            messages: vec![M {
                role: Role::User,
                text: "hi".into(),
                timestamp_ms: 0,
                native_id: None,
            }],
            files: vec![F {
                path: "a.rs".into(),
                action: "edit",
                timestamp_ms: 0,
                text: None,
            }],
            commands: vec![C {
                command: "ls".into(),
                origin: "user",
                timestamp_ms: 0,
                outcome: Default::default(),
            }],
        }
    }

    #[test]
    fn field_names() {
        let s = sample();
        let mut out = Session::new(&s, Some("/t".into()));
        assert_eq!(
            keys(&out),
            [
                "commands",
                "date_approximate",
                "files",
                "harness",
                "id",
                "message_count",
                "messages",
                "native_id",
                "parent_id",
                "project",
                "source",
                "started_at",
                "title",
                "updated_at"
            ]
        );
        assert_eq!(
            keys(&out.messages[0]),
            ["id", "index", "native_id", "role", "text", "timestamp"]
        );
        assert_eq!(keys(&out.files[0]), ["action", "path", "timestamp"]);
        assert_eq!(keys(&out.commands[0]), ["command", "origin", "timestamp"]);
        assert_eq!(keys(&out.project), ["dir", "id", "name"]);
        out.source_present = Some(true);
        out.window = Some(Window {
            around: 0,
            from: 0,
            to: 1,
            total: 1,
        });
        let shown = keys(&out);
        assert_eq!(shown[11], "source_present");
        assert_eq!(shown[15], "window");
        assert_eq!(keys(&out.window), ["around", "from", "to", "total"]);
    }

    #[test]
    fn values_keep_their_form() {
        let s = sample();
        let v = serde_json::to_value(Session::new(&s, None)).unwrap_or_default();
        assert_eq!(v["messages"][0]["id"], "s1#0");
        assert_eq!(v["updated_at"], "1970-01-01T00:00:01.500Z");
        assert!(v["source"].is_null() && v["title"].is_null());
    }
}
