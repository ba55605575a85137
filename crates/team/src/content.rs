//! What a published session is made of: its content hash (everything
//! pushed, so that an unchanged session is never sent twice) and the reading
//! of a session back from the team store's rows.

use sha2::{Digest, Sha256};

use deja_model::{CommandRecord, FileRecord, Message, Project, Role, Session};

/// The content hash of everything `deja team push` publishes of `s`.
pub fn hash(s: &Session) -> String {
    let mut h = Fields(Sha256::new());
    h.text(&s.harness);
    h.text(&s.id);
    h.text(&s.native_id);
    h.int(s.started_at_ms);
    h.int(s.updated_at_ms);
    h.opt(s.project.dir.as_deref());
    h.opt(s.project.name.as_deref());
    h.opt(s.project.id.as_deref());
    h.opt(s.title.as_deref());
    h.opt(s.parent_id.as_deref());
    h.int(i64::from(s.precedence));
    h.int(s.messages.len() as i64);
    for m in &s.messages {
        h.text(m.role.as_str());
        h.text(&m.text);
        h.int(m.timestamp_ms);
        h.opt(m.native_id.as_deref());
    }
    h.int(s.files.len() as i64);
    for f in &s.files {
        h.text(&f.path);
        h.text(f.action);
        h.int(f.timestamp_ms);
    }
    h.int(s.commands.len() as i64);
    for c in &s.commands {
        h.text(&c.command);
        h.text(c.origin);
        h.int(c.timestamp_ms);
    }
    let digest = h.0.finalize();
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Feeds fields into a hash unambiguously: each is tagged and length-prefixed.
struct Fields(Sha256);

impl Fields {
    fn text(&mut self, t: &str) {
        self.0.update(b"s");
        self.0.update((t.len() as u64).to_le_bytes());
        self.0.update(t.as_bytes());
    }

    fn opt(&mut self, t: Option<&str>) {
        match t {
            Some(t) => self.text(t),
            None => self.0.update(b"n"),
        }
    }

    fn int(&mut self, n: i64) {
        self.0.update(b"i");
        self.0.update(n.to_le_bytes());
    }
}

/// A session row of the team store, before its messages and records.
pub(crate) fn session_from_row(r: &postgres::Row) -> Session {
    Session {
        harness: r.get("harness"),
        id: r.get("session_id"),
        native_id: r.get("native_id"),
        started_at_ms: r.get("started_at"),
        updated_at_ms: r.get("updated_at"),
        project: Project {
            dir: r.get("project_dir"),
            name: r.get("project_name"),
            id: r.get("project_id"),
        },
        title: r.get("title"),
        parent_id: r.get("parent_id"),
        precedence: r.get("precedence"),
        messages: Vec::new(),
        files: Vec::new(),
        commands: Vec::new(),
    }
}

/// A message row.
pub(crate) fn message_from_row(r: &postgres::Row) -> Message {
    let role: String = r.get("role");
    Message {
        role: Role::parse(&role).unwrap_or(Role::Assistant),
        text: r.get("text"),
        timestamp_ms: r.get("at"),
        native_id: r.get("native_id"),
    }
}

/// A file record row.
pub(crate) fn file_from_row(r: &postgres::Row) -> FileRecord {
    let action: String = r.get("action");
    FileRecord {
        path: r.get("path"),
        action: deja_store::query::static_action(&action),
        timestamp_ms: r.get("at"),
    }
}

/// A command record row.
pub(crate) fn command_from_row(r: &postgres::Row) -> CommandRecord {
    let by: String = r.get("ran_by");
    CommandRecord {
        command: r.get("command"),
        origin: if by == "user" { "user" } else { "agent" },
        timestamp_ms: r.get("at"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn session() -> Session {
        Session {
            harness: "aider".into(),
            id: "a-1".into(),
            native_id: "1".into(),
            started_at_ms: 1,
            updated_at_ms: 2,
            project: Project::default(),
            title: None,
            parent_id: None,
            precedence: 0,
            messages: vec![Message {
                role: Role::User,
                text: "hello".into(),
                timestamp_ms: 1,
                native_id: None,
            }],
            files: Vec::new(),
            commands: Vec::new(),
        }
    }

    #[test]
    fn the_hash_changes_with_any_published_field_and_only_then() {
        let a = session();
        assert_eq!(hash(&a), hash(&session()));
        let mut b = session();
        b.messages[0].text = "hello!".into();
        assert_ne!(hash(&a), hash(&b));
        let mut c = session();
        c.title = Some(String::new());
        assert_ne!(hash(&a), hash(&c), "an empty title is not no title");
        let mut d = session();
        d.files.push(FileRecord {
            path: "x".into(),
            action: "edit",
            timestamp_ms: 0,
        });
        assert_ne!(hash(&a), hash(&d));
        // Field boundaries cannot be moved: "ab" + "c" differs from "a" + "bc".
        let mut e = session();
        e.harness = "aide".into();
        e.id = "ra-1".into();
        assert_ne!(hash(&a), hash(&e));
    }
}
