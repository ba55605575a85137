//! What a session must be to be written back: not a subagent's, an id that
//! is a plain file name, an absolute directory without `..`, `.` or control
//! characters, and at least one message. Values from the store (or from a teammate) never
//! choose where a file lands.

use deja_model::{Message, Session};

use crate::Error;

/// The longest id accepted (UUIDs are 36 characters).
const MAX_ID: usize = 128;

/// A session fit for writing back.
#[derive(Debug, Clone, Copy)]
pub struct Checked<'a> {
    /// The harness's own id of the session.
    pub id: &'a str,
    /// The directory it ran in (absolute, clean).
    pub cwd: &'a str,
    /// Its messages, in order.
    pub messages: &'a [Message],
    /// Its start (ms since epoch, UTC).
    pub started_ms: i64,
    /// Its last activity (ms since epoch, UTC).
    pub updated_ms: i64,
}

impl Checked<'_> {
    /// When message `i` was written: its own time, else the session's start.
    pub fn time_of(&self, i: usize) -> i64 {
        self.messages
            .get(i)
            .map(|m| m.timestamp_ms)
            .filter(|&t| t > 0)
            .unwrap_or(self.started_ms)
    }
}

/// `value` escaped for an error message.
fn shown(value: &str) -> String {
    value.escape_debug().to_string()
}

/// Checks `session`.
pub fn check(session: &Session) -> Result<Checked<'_>, Error> {
    if let Some(parent) = &session.parent_id {
        return Err(Error::Subagent {
            parent: parent.clone(),
        });
    }
    let id = session.native_id.as_str();
    let unsafe_id = |why| Error::Unsafe {
        what: "id",
        value: shown(id),
        why,
    };
    if id.is_empty() || id.len() > MAX_ID {
        return Err(unsafe_id("it must be 1 to 128 characters"));
    }
    if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        || id.starts_with('.')
    {
        return Err(unsafe_id(
            "only letters, digits, `-`, `_` and `.` (not first) can name a file",
        ));
    }
    let cwd = session
        .project
        .dir
        .as_deref()
        .filter(|d| !d.is_empty())
        .ok_or_else(|| Error::NoDirectory {
            harness: session.harness.clone(),
        })?;
    directory(cwd)?;
    if session.messages.is_empty() {
        return Err(Error::NoMessages);
    }
    Ok(Checked {
        id,
        cwd,
        messages: &session.messages,
        started_ms: session.started_at_ms,
        updated_ms: session.updated_at_ms.max(session.started_at_ms),
    })
}

/// Checks a project directory: absolute, no `.` or `..` part, no control
/// character.
pub fn directory(cwd: &str) -> Result<(), Error> {
    let bad = |why| Error::Unsafe {
        what: "directory",
        value: shown(cwd),
        why,
    };
    if !cwd.starts_with('/') {
        return Err(bad("it is not an absolute path"));
    }
    if cwd.chars().any(char::is_control) {
        return Err(bad("it holds a control character"));
    }
    if cwd.split('/').any(|part| part == ".." || part == ".") {
        return Err(bad("it holds a `.` or `..` part"));
    }
    Ok(())
}

/// Checks a file name a writer chose: one plain component.
pub fn file_name(name: &str) -> Result<(), Error> {
    if name.is_empty()
        || name == "."
        || name == ".."
        || name.contains(['/', '\\'])
        || name.chars().any(char::is_control)
    {
        return Err(Error::Unsafe {
            what: "file name",
            value: shown(name),
            why: "it is not one plain file name",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use deja_model::{Project, Role};

    fn session(id: &str, dir: Option<&str>) -> Session {
        Session {
            harness: "claude".into(),
            id: id.into(),
            native_id: id.into(),
            started_at_ms: 1_000,
            updated_at_ms: 2_000,
            date_approximate: false,
            project: Project {
                dir: dir.map(str::to_string),
                ..Project::default()
            },
            title: None,
            parent_id: None,
            precedence: 0,
            messages: vec![Message {
                role: Role::User,
                text: "hi".into(),
                timestamp_ms: 0,
                native_id: None,
            }],
            files: vec![],
            commands: vec![],
        }
    }

    #[test]
    fn a_plain_session_passes() {
        let s = session("0a1b-2c3d", Some("/home/ann/app"));
        let c = check(&s).unwrap();
        assert_eq!((c.id, c.cwd), ("0a1b-2c3d", "/home/ann/app"));
        assert_eq!(c.time_of(0), 1_000);
    }

    #[test]
    fn hostile_ids_are_refused() {
        for id in [
            "../x",
            "a/b",
            ".hidden",
            "",
            "a\nb",
            "a\u{1b}[31m",
            "x\\y",
            "a b",
        ] {
            let s = session(id, Some("/home/ann"));
            assert!(
                matches!(check(&s), Err(Error::Unsafe { what: "id", .. })),
                "{id:?} passed"
            );
        }
        let long = "a".repeat(129);
        assert!(check(&session(&long, Some("/h"))).is_err());
    }

    #[test]
    fn hostile_directories_are_refused() {
        for dir in [
            "relative/dir",
            "/a/../../etc",
            "/a/./b",
            "/a\nb",
            "/a\u{7}",
            "../up",
        ] {
            let s = session("id1", Some(dir));
            assert!(
                matches!(
                    check(&s),
                    Err(Error::Unsafe {
                        what: "directory",
                        ..
                    })
                ),
                "{dir:?} passed"
            );
        }
        assert!(matches!(
            check(&session("id1", None)),
            Err(Error::NoDirectory { .. })
        ));
    }

    #[test]
    fn a_subagents_session_is_refused_naming_its_parent() {
        let mut s = session("agent-1", Some("/home/ann"));
        s.parent_id = Some("p-1".into());
        assert!(matches!(check(&s), Err(Error::Subagent { parent }) if parent == "p-1"));
    }

    #[test]
    fn file_names_are_one_component() {
        assert!(file_name("session-1.jsonl").is_ok());
        for bad in ["", ".", "..", "a/b", "a\\b", "a\rb"] {
            assert!(file_name(bad).is_err(), "{bad:?}");
        }
    }
}
