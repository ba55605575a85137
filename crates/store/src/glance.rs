//! What a digest entry or a failure note shows of a stored session, read
//! without loading the session: its last message, the files it changed and
//! the commands it ran (the first few, distinct, with how many more), and
//! the next message of a role after a position. Each is one small query, so
//! a session of thousands of messages costs no more than a short one.

use deja_model::Role;
use rusqlite::OptionalExtension;

use crate::{Result, Store};

/// A few distinct values, in the order they first appear, and how many
/// other distinct values there are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Few {
    /// The first distinct values.
    pub items: Vec<String>,
    /// Distinct values beyond them.
    pub more: usize,
}

/// A session at a glance (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Glance {
    /// The last message: who wrote it and its text.
    pub last: Option<(Role, String)>,
    /// Files it changed (edited or added).
    pub files: Few,
    /// Commands it ran.
    pub commands: Few,
}

impl Store {
    /// The glance of session row `session`, at most `items` files and
    /// commands, read in one snapshot.
    pub fn glance(&self, session: i64, items: usize) -> Result<Glance> {
        let conn = self.conn();
        // A savepoint outside a transaction is a deferred read transaction;
        // inside one it nests.
        conn.execute_batch("SAVEPOINT glance")
            .map_err(|e| self.wrap(e))?;
        let read = self.glance_in(session, items);
        let end = if read.is_ok() {
            "RELEASE glance"
        } else {
            "ROLLBACK TO glance; RELEASE glance"
        };
        conn.execute_batch(end).map_err(|e| self.wrap(e))?;
        read
    }

    fn glance_in(&self, session: i64, items: usize) -> Result<Glance> {
        let last = self
            .conn()
            .query_row(
                "SELECT role, text FROM messages WHERE session = ?1
                 ORDER BY position DESC LIMIT 1",
                [session],
                |r| {
                    let role: String = r.get(0)?;
                    Ok((Role::parse(&role).unwrap_or(Role::Assistant), r.get(1)?))
                },
            )
            .optional()
            .map_err(|e| self.wrap(e))?;
        let files = self.few(
            "SELECT path FROM files WHERE session = ?1 AND action IN ('edit', 'add')
             GROUP BY path ORDER BY min(position) LIMIT ?2",
            "SELECT count(DISTINCT path) FROM files
             WHERE session = ?1 AND action IN ('edit', 'add')",
            session,
            items,
        )?;
        let commands = self.few(
            "SELECT command FROM commands WHERE session = ?1
             GROUP BY command ORDER BY min(position) LIMIT ?2",
            "SELECT count(DISTINCT command) FROM commands WHERE session = ?1",
            session,
            items,
        )?;
        Ok(Glance {
            last,
            files,
            commands,
        })
    }

    /// The first `items` values `list` gives for `session`, and how many
    /// more `count` counts.
    fn few(&self, list: &str, count: &str, session: i64, items: usize) -> Result<Few> {
        let limit = i64::try_from(items).unwrap_or(i64::MAX);
        let mut stmt = self.conn().prepare_cached(list).map_err(|e| self.wrap(e))?;
        let items: Vec<String> = stmt
            .query_map(rusqlite::params![session, limit], |r| r.get(0))
            .map_err(|e| self.wrap(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))?;
        let total: i64 = self
            .conn()
            .query_row(count, [session], |r| r.get(0))
            .map_err(|e| self.wrap(e))?;
        let more = usize::try_from(total)
            .unwrap_or(0)
            .saturating_sub(items.len());
        Ok(Few { items, more })
    }

    /// The text of the first message by `role` after position `after` of
    /// session row `session`.
    pub fn next_message(&self, session: i64, after: i64, role: Role) -> Result<Option<String>> {
        self.conn()
            .query_row(
                "SELECT text FROM messages WHERE session = ?1 AND position > ?2 AND role = ?3
                 ORDER BY position LIMIT 1",
                rusqlite::params![session, after, role.as_str()],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.wrap(e))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::test_support::{file, session};
    use deja_model::{CommandRecord, FileRecord};

    #[test]
    fn a_glance_reads_what_loading_the_session_would_show() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("index.sqlite")).unwrap();
        let mut s = session("s1", &["fix it", "done", "thanks"]);
        s.messages[1].role = Role::Assistant;
        let f = |path: &str, action: &'static str| FileRecord {
            path: path.into(),
            action,
            timestamp_ms: 0,
            text: None,
        };
        s.files = vec![
            f("a.rs", "edit"),
            f("b.rs", "read"),
            f("a.rs", "edit"),
            f("c.rs", "add"),
        ];
        s.commands = ["make", "ls", "make", "git diff", "a", "b", "c"]
            .iter()
            .map(|c| CommandRecord {
                command: (*c).into(),
                origin: "agent",
                timestamp_ms: 0,
                outcome: Default::default(),
            })
            .collect();
        store.apply(&file("/t/a", "s"), &[s]).unwrap();
        let row = store.session_row("test", "s1").unwrap().unwrap();
        let g = store.glance(row.row, 5).unwrap();
        assert_eq!(g.last, Some((Role::User, "thanks".to_string())));
        assert_eq!(g.files.items, ["a.rs", "c.rs"]);
        assert_eq!(g.files.more, 0);
        assert_eq!(g.commands.items, ["make", "ls", "git diff", "a", "b"]);
        assert_eq!(g.commands.more, 1);
        assert_eq!(
            store.next_message(row.row, 0, Role::Assistant).unwrap(),
            Some("done".to_string())
        );
        assert_eq!(
            store.next_message(row.row, 1, Role::Assistant).unwrap(),
            None
        );
    }
}
