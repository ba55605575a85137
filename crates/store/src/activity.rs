//! A file's history across sessions: the file records whose path ends with a
//! given name, each with its session and the message that led to it (the
//! last message at or before the record's time), for `deja blame`.

use rusqlite::params;

use super::{Result, Store};
use crate::query::{session_row, static_action, SessionRow, SESSION_COLUMNS};
use deja_model::Role;

/// One file record with what it happened in.
#[derive(Debug, Clone)]
pub struct FileActivity {
    /// The session.
    pub session: SessionRow,
    /// The path as the transcript recorded it.
    pub path: String,
    /// `edit`, `add`, `read-only` or `read`.
    pub action: &'static str,
    /// When, ms.
    pub timestamp_ms: i64,
    /// The index (as `deja show ID#INDEX` counts) of the message at or
    /// before the record, with its role and text; `None` when the record
    /// comes before every message.
    pub message: Option<(usize, Role, String)>,
    /// What the edit wrote, when its reader kept it.
    pub text: Option<String>,
}

impl Store {
    /// File records whose path ends with `name` (a file name; the caller
    /// decides which of them mean its file) and whose action is one of
    /// `actions`, newest first.
    pub fn file_activity(&self, name: &str, actions: &[&str]) -> Result<Vec<FileActivity>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {SESSION_COLUMNS}, f.path, f.action, f.timestamp, f.position, f.text
                 FROM files f JOIN sessions s ON s.id = f.session
                 WHERE length(f.path) >= length(?1) AND substr(f.path, -length(?1)) = ?1
                 ORDER BY f.timestamp DESC, s.id DESC, f.position DESC"
            ))
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(params![name], |r| {
                let n = SESSION_COLUMN_COUNT;
                let action: String = r.get(n + 1)?;
                Ok((
                    session_row(r)?,
                    r.get::<_, String>(n)?,
                    static_action(&action),
                    r.get::<_, i64>(n + 2)?,
                    r.get::<_, Option<String>>(n + 4)?,
                ))
            })
            .map_err(|e| self.wrap(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.wrap(e))?;
        let mut message = conn
            .prepare(
                "SELECT (SELECT count(*) FROM messages o WHERE o.session = m.session
                         AND o.position < m.position), m.role, m.text
                 FROM messages m WHERE m.session = ?1 AND m.timestamp <= ?2
                 ORDER BY m.timestamp DESC, m.position DESC LIMIT 1",
            )
            .map_err(|e| self.wrap(e))?;
        let mut out = Vec::new();
        for (session, path, action, timestamp_ms, text) in rows {
            if !actions.contains(&action) {
                continue;
            }
            let found = message
                .query_map(params![session.row, timestamp_ms], |r| {
                    let index: i64 = r.get(0)?;
                    let role: String = r.get(1)?;
                    Ok((
                        usize::try_from(index).unwrap_or(0),
                        Role::parse(&role).unwrap_or(Role::Assistant),
                        r.get::<_, String>(2)?,
                    ))
                })
                .map_err(|e| self.wrap(e))?
                .next()
                .transpose()
                .map_err(|e| self.wrap(e))?;
            out.push(FileActivity {
                session,
                path,
                action,
                timestamp_ms,
                message: found,
                text,
            });
        }
        Ok(out)
    }
}

/// How many columns [`SESSION_COLUMNS`] selects.
const SESSION_COLUMN_COUNT: usize = 18;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::test_support::{file, session};
    use deja_model::FileRecord;

    #[test]
    fn an_edit_keeps_its_text_until_its_session_is_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("index.sqlite")).unwrap();
        let mut s = session("wrote", &["make it so"]);
        s.files = vec![
            FileRecord {
                path: "/p/src/lib.rs".into(),
                action: "edit",
                timestamp_ms: 5,
                text: Some("pub fn wombatquince() -> u32 {\n    42\n}\n".into()),
            },
            FileRecord {
                path: "/p/src/lib.rs".into(),
                action: "read",
                timestamp_ms: 6,
                text: None,
            },
        ];
        store.apply(&file("/t/a", "s"), &[s]).unwrap();
        let found = store.file_activity("lib.rs", &["edit", "read"]).unwrap();
        let texts: Vec<Option<&str>> = found.iter().map(|f| f.text.as_deref()).collect();
        assert_eq!(
            texts,
            [None, Some("pub fn wombatquince() -> u32 {\n    42\n}\n")]
        );
        let holds = || {
            std::fs::read_dir(dir.path()).unwrap().any(|entry| {
                std::fs::read(entry.unwrap().path())
                    .unwrap()
                    .windows(12)
                    .any(|w| w == b"wombatquince")
            })
        };
        assert!(holds());
        let row = store.session_row("test", "wrote").unwrap().unwrap();
        store.forget(&[row]).unwrap();
        // Scrubbed: no copy is left in any file of the store.
        assert!(!holds());
        let left: i64 = store
            .conn()
            .query_row(
                "SELECT count(*) FROM files WHERE text IS NOT NULL",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(left, 0);
        assert!(store.file_activity("lib.rs", &["edit"]).unwrap().is_empty());
    }
}
