//! Forgetting: removing sessions with everything derived from them, the
//! tombstones that keep them from coming back (ids, start, project folder
//! and transcript path; never text), listing and finding tombstones, and
//! lifting one.

use rusqlite::{params, OptionalExtension, Row};

use crate::query::SessionRow;
use crate::{Result, Store};

impl Store {
    /// Removes sessions and everything derived from them (messages, FTS rows,
    /// embedding units, records, and every cached vector that no remaining
    /// unit uses) and records tombstones (ids, start, project folder and
    /// transcript path; no text) so that indexing never brings them back
    /// ([`Store::tombstones`] lists them, [`Store::unforget`] lifts one);
    /// then scrubs the files of the store so that no copy of their text is
    /// left in free space, old full-text segments or the write-ahead log
    /// ([`Store::scrub`]; when a reader kept the log, [`Store::scrub_pending`]
    /// says so and the next writer finishes it). The vector index file is
    /// marked for a rebuild, which [`crate::vectors::sync_after_change`]
    /// does. Returns how many were removed.
    pub fn forget(&mut self, rows: &[SessionRow]) -> Result<usize> {
        let now = chrono::Utc::now().timestamp_millis();
        let n = self.in_transaction(|tx| {
            let mut n = 0;
            for r in rows {
                tx.execute(
                    "INSERT OR REPLACE INTO tombstones
                        (harness, session_id, forgotten_at, native_id, started_at, project_dir,
                         source_path)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![
                        r.harness,
                        r.id,
                        now,
                        r.native_id,
                        r.started_at,
                        r.project.dir,
                        r.source_path
                    ],
                )?;
                n += tx.execute("DELETE FROM sessions WHERE id = ?1", [r.row])?;
            }
            // In the same transaction: a run killed before the scrub and
            // the vector rebuild leaves them to the next writer.
            super::mark_erasure(tx)?;
            Ok(n)
        })?;
        self.prune_all_embeddings()?;
        self.scrub()?;
        Ok(n)
    }
}

/// A forgotten session, as its tombstone remembers it: ids, start, project
/// folder and transcript path, never text. Tombstones written before deja
/// recorded more than the ids have `None` for the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tombstone {
    /// Harness.
    pub harness: String,
    /// deja id.
    pub id: String,
    /// Harness id.
    pub native_id: Option<String>,
    /// When the session started, ms.
    pub started_at: Option<i64>,
    /// Its project folder.
    pub project_dir: Option<String>,
    /// The transcript it was last read from.
    pub source_path: Option<String>,
    /// When it was forgotten, ms.
    pub forgotten_at: i64,
}

/// The tombstones an id names, like [`Found`] for sessions.
#[derive(Debug, Clone, Default)]
pub struct FoundTombstones {
    /// The tombstones, oldest session first, at most the limit asked for.
    pub rows: Vec<Tombstone>,
    /// How many match in all.
    pub total: usize,
}

/// What lifting a tombstone did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unforgotten {
    /// The tombstone that was removed.
    pub tombstone: Tombstone,
    /// How many stored transcripts were marked to be read again by the next
    /// index: the session's transcript, or, for a tombstone that does not
    /// name one, every transcript of its harness.
    pub marked: usize,
}

const TOMBSTONE_COLUMNS: &str =
    "harness, session_id, native_id, started_at, project_dir, source_path, forgotten_at";

fn tombstone_row(r: &Row<'_>) -> rusqlite::Result<Tombstone> {
    Ok(Tombstone {
        harness: r.get(0)?,
        id: r.get(1)?,
        native_id: r.get(2)?,
        started_at: r.get(3)?,
        project_dir: r.get(4)?,
        source_path: r.get(5)?,
        forgotten_at: r.get(6)?,
    })
}

impl Store {
    /// Every tombstone, most recently forgotten first.
    pub fn tombstones(&self) -> Result<Vec<Tombstone>> {
        let mut stmt = self
            .conn()
            .prepare(&format!(
                "SELECT {TOMBSTONE_COLUMNS} FROM tombstones
                 ORDER BY forgotten_at DESC, harness, session_id"
            ))
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([], tombstone_row)
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }

    /// The tombstones `id` names, as [`Store::find_sessions`] matches
    /// sessions: deja's id, else the harness's id, else a prefix of either.
    pub fn find_tombstones(&self, id: &str, limit: usize) -> Result<FoundTombstones> {
        for cond in [
            "session_id = ?1",
            "native_id = ?1",
            "substr(session_id, 1, length(?1)) = ?1 OR substr(native_id, 1, length(?1)) = ?1",
        ] {
            let total: i64 = self
                .conn()
                .query_row(
                    &format!("SELECT count(*) FROM tombstones WHERE {cond}"),
                    [id],
                    |r| r.get(0),
                )
                .map_err(|e| self.wrap(e))?;
            if total == 0 {
                continue;
            }
            let sql = format!(
                "SELECT {TOMBSTONE_COLUMNS} FROM tombstones WHERE {cond}
                 ORDER BY started_at, session_id LIMIT {}",
                i64::try_from(limit).unwrap_or(i64::MAX)
            );
            let mut stmt = self.conn().prepare(&sql).map_err(|e| self.wrap(e))?;
            let rows = stmt
                .query_map([id], tombstone_row)
                .map_err(|e| self.wrap(e))?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(|e| self.wrap(e))?;
            return Ok(FoundTombstones {
                rows,
                total: usize::try_from(total).unwrap_or(0),
            });
        }
        Ok(FoundTombstones::default())
    }

    /// Lifts the tombstone of session `harness`/`id`, so that indexing may
    /// bring the session back, and marks the transcript it was read from to be
    /// read again by the next index (its content has not changed, so it would
    /// otherwise be skipped); a tombstone that names no transcript marks every
    /// transcript of its harness. `None` if there is no such tombstone.
    pub fn unforget(&mut self, harness: &str, id: &str) -> Result<Option<Unforgotten>> {
        self.in_transaction(|tx| {
            let Some(tombstone) = tx
                .query_row(
                    &format!(
                        "SELECT {TOMBSTONE_COLUMNS} FROM tombstones
                         WHERE harness = ?1 AND session_id = ?2"
                    ),
                    [harness, id],
                    tombstone_row,
                )
                .optional()?
            else {
                return Ok(None);
            };
            tx.execute(
                "DELETE FROM tombstones WHERE harness = ?1 AND session_id = ?2",
                [harness, id],
            )?;
            // A size no file has: the next index reads it and compares hashes.
            const REREAD: &str = "UPDATE sources SET size = -1, mtime_ns = -1, hash = ''";
            let marked = match &tombstone.source_path {
                Some(path) => tx.execute(
                    &format!("{REREAD} WHERE harness = ?1 AND path = ?2"),
                    [harness, path.as_str()],
                )?,
                None => tx.execute(&format!("{REREAD} WHERE harness = ?1"), [harness])?,
            };
            Ok(Some(Unforgotten { tombstone, marked }))
        })
    }
}

#[cfg(test)]
mod tombstone_tests {
    use super::*;
    use crate::ingest::FileState;
    use deja_model::{Message, Project, Role, Session};

    fn session(id: &str, native: &str, started: i64, text: &str) -> Session {
        Session {
            harness: "test".into(),
            id: id.into(),
            native_id: native.into(),
            started_at_ms: started,
            updated_at_ms: started,
            date_approximate: false,
            project: Project {
                dir: Some("/work/billing".into()),
                name: Some("billing".into()),
                id: None,
            },
            title: Some(format!("title of {id}")),
            parent_id: None,
            precedence: 0,
            messages: vec![Message {
                role: Role::User,
                text: text.into(),
                timestamp_ms: started,
                native_id: None,
            }],
            files: vec![],
            commands: vec![],
        }
    }

    fn file(path: &str) -> FileState<'_> {
        FileState {
            harness: "test",
            path,
            size: 10,
            mtime_ns: 20,
            hash: "h",
            reader: "test 1",
            settings: "s",
        }
    }

    /// A store holding sessions `a` and `b` read from `/t/one`, and `c` from `/t/two`.
    fn store(dir: &std::path::Path) -> Store {
        let mut store = Store::open(&dir.join("index.sqlite")).unwrap();
        store
            .apply(
                &file("/t/one"),
                &[
                    session("a-1", "native-a", 1_000, "first words"),
                    session("b-2", "native-b", 2_000, "second words"),
                ],
            )
            .unwrap();
        store
            .apply(
                &file("/t/two"),
                &[session("c-3", "native-c", 3_000, "third")],
            )
            .unwrap();
        store
    }

    fn forget(store: &mut Store, id: &str) {
        let row = store.session_row("test", id).unwrap().unwrap();
        assert_eq!(store.forget(&[row]).unwrap(), 1);
    }

    #[test]
    fn a_tombstone_remembers_ids_start_project_and_transcript_but_no_text() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store(dir.path());
        assert!(store.tombstones().unwrap().is_empty());
        forget(&mut store, "b-2");
        let list = store.tombstones().unwrap();
        assert_eq!(list.len(), 1);
        let t = &list[0];
        assert_eq!(
            (t.harness.as_str(), t.id.as_str(), t.native_id.as_deref()),
            ("test", "b-2", Some("native-b"))
        );
        assert_eq!(t.started_at, Some(2_000));
        assert_eq!(t.project_dir.as_deref(), Some("/work/billing"));
        assert_eq!(t.source_path.as_deref(), Some("/t/one"));
        assert!(t.forgotten_at > 0);
        let dump: String = store
            .conn()
            .query_row(
                "SELECT group_concat(coalesce(native_id,'') || coalesce(project_dir,'') ||
                    coalesce(source_path,'')) FROM tombstones",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(
            !dump.contains("title") && !dump.contains("second"),
            "{dump}"
        );
    }

    #[test]
    fn tombstones_are_found_by_either_id_or_a_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store(dir.path());
        forget(&mut store, "a-1");
        forget(&mut store, "b-2");
        let ids = |f: FoundTombstones| {
            (
                f.total,
                f.rows.into_iter().map(|t| t.id).collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            ids(store.find_tombstones("a-1", 10).unwrap()),
            (1, vec!["a-1".into()])
        );
        assert_eq!(
            ids(store.find_tombstones("native-b", 10).unwrap()),
            (1, vec!["b-2".into()])
        );
        assert_eq!(
            ids(store.find_tombstones("native", 10).unwrap()),
            (2, vec!["a-1".into(), "b-2".into()])
        );
        assert_eq!(ids(store.find_tombstones("native", 1).unwrap()).0, 2);
        assert_eq!(ids(store.find_tombstones("c-3", 10).unwrap()).0, 0);
    }

    #[test]
    fn unforgetting_lifts_the_tombstone_and_marks_only_its_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store(dir.path());
        forget(&mut store, "a-1");
        assert!(store.unforget("test", "nothing").unwrap().is_none());
        let done = store.unforget("test", "a-1").unwrap().unwrap();
        assert_eq!(done.tombstone.id, "a-1");
        assert_eq!(done.marked, 1);
        assert!(store.tombstones().unwrap().is_empty());
        let one = store.source("test", "/t/one").unwrap().unwrap();
        assert_eq!((one.size, one.hash.as_str()), (-1, ""));
        let two = store.source("test", "/t/two").unwrap().unwrap();
        assert_eq!((two.size, two.hash.as_str()), (10, "h"));
        // Indexing the same transcript again brings the session back.
        let applied = store
            .apply(
                &file("/t/one"),
                &[
                    session("a-1", "native-a", 1_000, "first words"),
                    session("b-2", "native-b", 2_000, "second words"),
                ],
            )
            .unwrap();
        assert_eq!(applied.sessions_added, 1);
        assert!(store.session_row("test", "a-1").unwrap().is_some());
        // A second undo finds nothing.
        assert!(store.unforget("test", "a-1").unwrap().is_none());
    }

    #[test]
    fn an_old_tombstone_without_a_transcript_marks_its_whole_harness() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store(dir.path());
        store
            .conn()
            .execute(
                "INSERT INTO tombstones (harness, session_id, forgotten_at) VALUES ('test', 'old', 5)",
                [],
            )
            .unwrap();
        let t = &store.tombstones().unwrap()[0];
        assert_eq!((t.native_id.as_ref(), t.source_path.as_ref()), (None, None));
        let done = store.unforget("test", "old").unwrap().unwrap();
        assert_eq!(done.marked, 2);
        for path in ["/t/one", "/t/two"] {
            assert_eq!(store.source("test", path).unwrap().unwrap().size, -1);
        }
    }
}
