//! deja's store: one SQLite database (WAL, FTS5) in deja's data folder,
//! created private to the user and versioned with migrations, and the usearch
//! vector index kept beside it. This is the only crate that writes SQL or
//! touches `vectors.usearch`; its API speaks deja's own types.
//!
//! - [`schema`]: the migrations.
//! - [`ingest`]: writing parsed sessions, with diffing and tombstones.
//! - [`query`]: listing, finding and loading sessions, forgetting, counts.
//! - [`search`]: the full-text, unit and hit lookups that ranking is built on.
//! - [`embedding`]: the embedding cache and the units of each message.
//! - [`vectors`]: the vector index file, kept in sync with SQLite.
//! - [`export`]: bulk reads for tools and the benchmark.
//! - [`activity`]: a file's records across sessions (`deja blame`).
//! - [`edits`]: the file records of the sessions a filter keeps (`deja recap`).

pub mod activity;
pub mod counts;
pub mod edits;
pub mod embedding;
pub mod export;
pub mod failed;
pub mod forget;
pub mod glance;
pub mod ingest;
pub mod pulled_vectors;
pub mod query;
mod sample;
pub mod schema;
pub mod search;
pub mod segment;
pub mod vectors;

pub use deja_model::sha256_hex;
pub use ingest::pulled;
pub use query::{Counts, Origin, SessionFilter, SessionRow, SessionStart, SourceRow};
pub use search::{Level, Scope};

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension};

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("index database `{path}`: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// The error.
        source: rusqlite::Error,
    },
    /// A file-system operation failed.
    #[error("`{path}`: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The database was written by a newer deja.
    #[error("index database `{path}` has schema version {found}, newer than this deja's {supported}; upgrade deja")]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// Its version.
        found: i64,
        /// Ours.
        supported: i64,
    },
    /// The database was written by an older deja; only a writer upgrades it.
    #[error("index database `{path}` has schema version {found}, older than this deja's {supported}\nhint: run `deja index` once to upgrade it (reading commands never change the store)")]
    TooOld {
        /// The database file.
        path: PathBuf,
        /// Its version.
        found: i64,
        /// Ours.
        supported: i64,
    },
    /// There is no index yet.
    #[error("no index at `{0}` yet")]
    Missing(PathBuf),
}

/// How long a writer waits for a lock another connection holds.
const WRITER_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// How many times [`Store::scrub`] tries to truncate the write-ahead log.
pub const SCRUB_TRIES: u32 = 3;
/// How long each try waits for readers to finish.
pub const SCRUB_PATIENCE: Duration = Duration::from_secs(1);
/// The pause between two tries.
pub const SCRUB_PAUSE: Duration = Duration::from_millis(500);

/// Meta key: a scrub is owed (see [`Store::scrub`]).
const SCRUB_PENDING: &str = "scrub_pending";

/// Records, in the transaction or connection `conn`, that deleted text must
/// be scrubbed from the store's files and the vector index file rebuilt.
pub(crate) fn mark_erasure(conn: &Connection) -> rusqlite::Result<()> {
    for key in [SCRUB_PENDING, vectors::REBUILD] {
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (?1, '1')
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [key],
        )?;
    }
    Ok(())
}

/// Result alias for the store.
pub type Result<T> = std::result::Result<T, StoreError>;

/// An open index.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Wraps a SQLite error with the database's path: the one place that does.
fn sqlite_error(path: &Path, source: rusqlite::Error) -> StoreError {
    StoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    }
}

/// Creates `dir` (and parents) private to the user, 0700 on Unix; a folder
/// that already exists with access for its group or others is made 0700 too
/// (it may have been made by another tool, such as `scripts/fetch-model`).
pub fn create_private_dir(dir: &Path) -> Result<()> {
    let io = |source| StoreError::Io {
        path: dir.to_path_buf(),
        source,
    };
    if !dir.exists() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir).map_err(io)?.permissions().mode();
        if mode & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
        }
    }
    Ok(())
}

/// Makes an existing file readable and writable by the user only (0600).
pub fn make_private(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if path.exists() {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(
                |source| StoreError::Io {
                    path: path.to_path_buf(),
                    source,
                },
            )?;
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

impl Store {
    fn err(&self, source: rusqlite::Error) -> StoreError {
        sqlite_error(&self.path, source)
    }

    /// Opens the database at `path` for writing, creating it (0600, in a 0700
    /// folder) and migrating it as needed. What this connection deletes is
    /// overwritten (`secure_delete`), so freed pages keep no text.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent() {
            create_private_dir(dir)?;
        }
        let conn = Connection::open(path).map_err(|e| sqlite_error(path, e))?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.configure()?;
        for suffix in ["", "-wal", "-shm"] {
            make_private(&PathBuf::from(format!("{}{suffix}", path.display())))?;
        }
        store.migrate()?;
        Ok(store)
    }

    /// Opens an existing database for reading only; `Missing` if there is
    /// none, `TooOld` for a store an older deja wrote (reading never
    /// migrates), `TooNew` for one a newer deja wrote.
    pub fn open_read(path: &Path) -> Result<Store> {
        if !path.exists() {
            return Err(StoreError::Missing(path.to_path_buf()));
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| sqlite_error(path, e))?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store
            .conn
            .busy_timeout(Duration::from_secs(10))
            .map_err(|e| store.err(e))?;
        let version = store.version()?;
        if version > schema::current_version() {
            return Err(StoreError::TooNew {
                path: path.to_path_buf(),
                found: version,
                supported: schema::current_version(),
            });
        }
        if version < schema::current_version() {
            return Err(StoreError::TooOld {
                path: path.to_path_buf(),
                found: version,
                supported: schema::current_version(),
            });
        }
        Ok(store)
    }

    fn configure(&self) -> Result<()> {
        self.conn
            .busy_timeout(WRITER_BUSY_TIMEOUT)
            .map_err(|e| self.err(e))?;
        segment::register(&self.conn).map_err(|e| self.err(e))?;
        self.conn
            .execute_batch(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = NORMAL;
                 PRAGMA foreign_keys = ON;
                 PRAGMA temp_store = MEMORY;
                 PRAGMA secure_delete = ON;",
            )
            .map_err(|e| self.err(e))
    }

    fn version(&self) -> Result<i64> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    fn migrate(&self) -> Result<()> {
        let version = self.version()?;
        let latest = schema::current_version();
        if version > latest {
            return Err(StoreError::TooNew {
                path: self.path.clone(),
                found: version,
                supported: latest,
            });
        }
        for (i, sql) in schema::MIGRATIONS.iter().enumerate().skip(version as usize) {
            let next = i as i64 + 1;
            self.conn
                .execute_batch(&format!(
                    "BEGIN IMMEDIATE;\n{sql}\nPRAGMA user_version = {next};\nCOMMIT;"
                ))
                .map_err(|e| {
                    let _ = self.conn.execute_batch("ROLLBACK");
                    self.err(e)
                })?;
        }
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The raw connection, for the modules of this crate.
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Reads a `meta` value.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Writes a `meta` value.
    pub fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [key, value],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Makes text that was deleted unrecoverable from the files of the store:
    /// merges each full-text index into one segment (a deleted entry lives on
    /// in older segments, and FTS5 records deletions as entries of its own,
    /// until a merge drops both), then checkpoints the write-ahead log and
    /// truncates it (it holds earlier images of the pages). Freed pages are
    /// already zeroed (`secure_delete`). Costs a rewrite of the full-text
    /// indexes: for forgetting and for settings changes, not every run.
    ///
    /// A reader in the middle of a read transaction keeps the log from being
    /// truncated: the checkpoint is tried [`SCRUB_TRIES`] times, waiting up to
    /// [`SCRUB_PATIENCE`] each time and [`SCRUB_PAUSE`] between tries. When it
    /// still cannot finish, the scrub is recorded as pending
    /// ([`Store::scrub_pending`]) and the next writer finishes it
    /// ([`Store::finish_scrub`]). Returns whether the log was truncated.
    pub fn scrub(&self) -> Result<bool> {
        self.conn
            .execute_batch(
                "INSERT INTO messages_fts (messages_fts) VALUES ('optimize');
                 INSERT INTO sessions_fts (sessions_fts) VALUES ('optimize');",
            )
            .map_err(|e| self.err(e))?;
        // Cleared before the checkpoint, so that the truncated log does not
        // hold the clearing either; set again when the log stays.
        self.conn
            .execute("DELETE FROM meta WHERE key = ?1", [SCRUB_PENDING])
            .map_err(|e| self.err(e))?;
        let done = self.checkpoint_patiently()?;
        if !done {
            self.set_meta(SCRUB_PENDING, "1")?;
        }
        Ok(done)
    }

    /// Whether a scrub is owed: text was deleted (forgotten, retracted, or
    /// re-read under new settings) and the write-ahead log that may still
    /// hold it has not been truncated since.
    pub fn scrub_pending(&self) -> Result<bool> {
        Ok(self.meta(SCRUB_PENDING)?.is_some())
    }

    /// Records that text stored before is being removed: the files of the
    /// store must be scrubbed and the vector index file rebuilt (a removed
    /// vector stays in a freed slot of the file otherwise). Both flags stay
    /// until the scrub and the rebuild are done, so a run that is killed in
    /// between leaves them to the next writer.
    pub fn require_erasure(&self) -> Result<()> {
        mark_erasure(&self.conn).map_err(|e| self.err(e))
    }

    /// Finishes a scrub an earlier run could not (see [`Store::scrub`]):
    /// `None` when none was pending, else whether the log was truncated now.
    pub fn finish_scrub(&self) -> Result<Option<bool>> {
        if self.scrub_pending()? {
            self.scrub().map(Some)
        } else {
            Ok(None)
        }
    }

    /// Checkpoints the write-ahead log into the database and truncates it;
    /// false when a reader kept it from finishing.
    pub fn checkpoint(&self) -> Result<bool> {
        let busy: i64 = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        Ok(busy == 0)
    }

    /// [`Store::checkpoint`], tried again while a reader keeps it from
    /// finishing (see [`Store::scrub`]).
    fn checkpoint_patiently(&self) -> Result<bool> {
        for attempt in 0..SCRUB_TRIES {
            if attempt > 0 {
                std::thread::sleep(SCRUB_PAUSE);
            }
            self.conn
                .busy_timeout(SCRUB_PATIENCE)
                .map_err(|e| self.err(e))?;
            let done = self.checkpoint();
            self.conn
                .busy_timeout(WRITER_BUSY_TIMEOUT)
                .map_err(|e| self.err(e))?;
            if done? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Runs `f` in a transaction, committing when it succeeds.
    pub(crate) fn in_transaction<T>(
        &mut self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let path = self.path.clone();
        let wrap = |source| sqlite_error(&path, source);
        // Immediate: the write lock is taken at once, so two writers never
        // deadlock upgrading read locks.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(wrap)?;
        let value = f(&tx).map_err(wrap)?;
        tx.commit().map_err(wrap)?;
        Ok(value)
    }

    /// Wraps a rusqlite error with this store's path.
    pub(crate) fn wrap(&self, e: rusqlite::Error) -> StoreError {
        self.err(e)
    }
}

#[cfg(test)]
mod test_support;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{file, session};

    /// Gives every message of the store one unit, its vector cached under
    /// `model`, keyed by the text itself.
    fn embed_all(store: &mut Store, model: &str) {
        let pending = store.pending_page(0, 100).unwrap();
        let units: Vec<crate::embedding::Unit> = pending
            .iter()
            .map(|m| crate::embedding::Unit {
                message: m.id,
                ordinal: 0,
                text_hash: m.text.clone(),
            })
            .collect();
        let vector = [1.0f32, 0.0];
        let vectors: Vec<(&str, &[f32])> = units
            .iter()
            .map(|u| (u.text_hash.as_str(), &vector[..]))
            .collect();
        store.add_units(model, &vectors, &units).unwrap();
    }

    fn cached(store: &Store) -> Vec<String> {
        let mut stmt = store
            .conn()
            .prepare("SELECT text_hash || '/' || model FROM embeddings ORDER BY 1")
            .unwrap();
        let rows = stmt.query_map([], |r| r.get(0)).unwrap();
        rows.map(|r| r.unwrap()).collect()
    }

    #[test]
    fn an_older_database_is_migrated_and_its_sources_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        {
            let conn = Connection::open(&path).unwrap();
            for sql in &schema::MIGRATIONS[..2] {
                conn.execute_batch(sql).unwrap();
            }
            conn.execute_batch(
                "PRAGMA user_version = 2;
                 INSERT INTO sources (harness, path, size, mtime_ns, hash, indexed_at, reader)
                 VALUES ('test', '/t', 1, 1, 'h', 0, 'test 1');",
            )
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.version().unwrap(), schema::current_version());
        let source = store.source("test", "/t").unwrap().unwrap();
        // Settings unknown: differs from any fingerprint, so it is read again.
        assert_eq!(source.settings, "");
    }

    /// The schema a store has: every table, index and trigger definition.
    fn schema_of(path: &Path) -> Vec<String> {
        let conn = Connection::open(path).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master
                 WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name",
            )
            .unwrap();
        let rows = stmt.query_map([], |r| r.get(0)).unwrap();
        rows.map(|r| r.unwrap()).collect()
    }

    /// A database left at `version` by an older deja.
    fn database_at(path: &Path, version: usize) {
        let conn = Connection::open(path).unwrap();
        segment::register(&conn).unwrap();
        for sql in &schema::MIGRATIONS[..version] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch(&format!("PRAGMA user_version = {version};"))
            .unwrap();
    }

    #[test]
    fn every_earlier_version_migrates_to_the_schema_of_a_new_store() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("fresh.sqlite");
        drop(Store::open(&fresh).unwrap());
        let want = schema_of(&fresh);
        assert!(want.len() > 5, "{want:?}");
        for version in 0..schema::MIGRATIONS.len() {
            let path = dir.path().join(format!("v{version}.sqlite"));
            database_at(&path, version);
            let store = Store::open(&path).unwrap();
            assert_eq!(store.version().unwrap(), schema::current_version());
            drop(store);
            assert_eq!(schema_of(&path), want, "from version {version}");
        }
    }

    #[test]
    fn a_store_of_schema_7_is_segmented_again_without_embedding_anything() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        database_at(&path, 7);
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(
                "INSERT INTO sessions (id, harness, session_id, native_id, started_at,
                     updated_at, precedence, message_count)
                 VALUES (1, 'test', 's', 's', 0, 0, 0, 2);
                 INSERT INTO messages (id, session, position, role, text, timestamp, hash)
                 VALUES (1, 1, 0, 'user', '修复了内存泄露的问题', 0, 'h1'),
                        (2, 1, 1, 'assistant', 'the tenant predicate', 0, 'h2');
                 INSERT INTO sessions_fts (rowid, text)
                 VALUES (1, '修复了内存泄露的问题' || char(10) || 'the tenant predicate');
                 INSERT INTO chunks (id, message, ordinal, text_hash) VALUES (7, 1, 0, 'u1');
                 INSERT INTO embeddings (text_hash, model, vector) VALUES ('u1', 'm', x'00');",
            )
            .unwrap();
            // Before: the run of Han characters is one word, never found inside.
            let n: i64 = conn
                .query_row(
                    "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '\"泄露\"'",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(n, 0);
        }
        let store = Store::open(&path).unwrap();
        let count = |sql: &str| -> i64 { store.conn().query_row(sql, [], |r| r.get(0)).unwrap() };
        assert_eq!(
            count("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '\"泄露\"'"),
            1
        );
        assert_eq!(
            count("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'tenant'"),
            1
        );
        assert_eq!(
            count(
                "SELECT count(*) FROM sessions_fts WHERE sessions_fts MATCH '\"内存 存泄 泄露\"'"
            ),
            1
        );
        // The units and their vectors are untouched: nothing to embed again.
        assert_eq!(count("SELECT count(*) FROM chunks WHERE id = 7"), 1);
        assert_eq!(count("SELECT count(*) FROM embeddings"), 1);
        assert_eq!(count("SELECT count(*) FROM vector_trash"), 0);
        // Deleting a message takes it out of the index.
        store
            .conn()
            .execute("DELETE FROM messages WHERE id = 1", [])
            .unwrap();
        assert_eq!(
            count("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '\"泄露\"'"),
            0
        );
    }

    #[test]
    fn a_store_of_schema_8_marks_the_sessions_dated_by_their_file_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        database_at(&path, 8);
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(
                "INSERT INTO sources (id, harness, path, size, mtime_ns, hash, indexed_at, reader)
                 VALUES (1, 'test', '/t', 1, 1700000000123456789, 'h', 0, 'test 1');
                 INSERT INTO sessions (id, harness, session_id, native_id, source_id, started_at,
                     updated_at, precedence, message_count)
                 VALUES (1, 'test', 'filetime', 'filetime', 1, 1700000000123, 0, 0, 1),
                        (2, 'test', 'recorded', 'recorded', 1, 1600000000000, 0, 0, 1),
                        (3, 'test', 'gone', 'gone', NULL, 1700000000123, 0, 0, 1);",
            )
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        let approximate = |id: &str| -> bool {
            store
                .conn()
                .query_row(
                    "SELECT date_approximate FROM sessions WHERE session_id = ?1",
                    [id],
                    |r| r.get(0),
                )
                .unwrap()
        };
        assert!(approximate("filetime"));
        assert!(!approximate("recorded"));
        assert!(!approximate("gone"));
        // Listed after every session with a recorded date, however new.
        let listed: Vec<String> = store
            .sessions(&SessionFilter::default(), None)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(listed, ["gone", "recorded", "filetime"]);
    }

    #[test]
    fn reading_never_migrates_and_says_that_index_upgrades() {
        let dir = tempfile::tempdir().unwrap();
        for version in 1..schema::MIGRATIONS.len() {
            let path = dir.path().join(format!("v{version}.sqlite"));
            database_at(&path, version);
            let before = schema_of(&path);
            let err = Store::open_read(&path).err().unwrap();
            assert!(matches!(err, StoreError::TooOld { found, .. } if found == version as i64));
            assert!(err.to_string().contains("deja index"), "{err}");
            assert_eq!(schema_of(&path), before, "version {version} was changed");
        }
    }

    #[test]
    fn a_newer_store_is_refused_by_readers_and_writers_alike() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        drop(Store::open(&path).unwrap());
        let newer = schema::current_version() + 1;
        Connection::open(&path)
            .unwrap()
            .execute_batch(&format!("PRAGMA user_version = {newer};"))
            .unwrap();
        for err in [
            Store::open(&path).err().unwrap(),
            Store::open_read(&path).err().unwrap(),
        ] {
            assert!(matches!(err, StoreError::TooNew { found, .. } if found == newer));
            assert!(err.to_string().contains("upgrade deja"), "{err}");
        }
        let conn = Connection::open(&path).unwrap();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, newer);
    }

    #[test]
    fn a_failure_is_recorded_and_cleared_by_the_next_success() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("index.sqlite")).unwrap();
        store
            .record_failure(&file("/t", "s1"), "too large")
            .unwrap();
        let failed = store.failed_sources().unwrap();
        assert_eq!(failed.len(), 1);
        assert_eq!(
            store
                .source("test", "/t")
                .unwrap()
                .unwrap()
                .error
                .as_deref(),
            Some("too large")
        );
        store
            .apply(&file("/t", "s2"), &[session("a", &["hello"])])
            .unwrap();
        assert!(store.failed_sources().unwrap().is_empty());
        let known = store.source("test", "/t").unwrap().unwrap();
        assert_eq!((known.error, known.settings.as_str()), (None, "s2"));
    }

    #[test]
    fn vectors_of_dropped_texts_go_and_the_others_stay() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("index.sqlite")).unwrap();
        store
            .apply(
                &file("/a", ""),
                &[session("a", &["alpha", "shared", "gamma"])],
            )
            .unwrap();
        store
            .apply(&file("/b", ""), &[session("b", &["shared", "delta"])])
            .unwrap();
        embed_all(&mut store, "m1");
        // A vector kept for another model is not dropped by a change.
        store
            .add_units("m0", &[("alpha", &[0.0f32, 1.0][..])], &[])
            .unwrap();

        // The third message of `a` changes: its units and its neighbour's
        // are dropped; the old text's vector goes, the neighbour's is kept
        // for the re-embedding ("shared" is also used by `b`).
        store
            .apply(
                &file("/a", ""),
                &[session("a", &["alpha", "shared", "gamma2"])],
            )
            .unwrap();
        assert_eq!(store.prune_embeddings().unwrap(), 1);
        assert_eq!(
            cached(&store),
            ["alpha/m0", "alpha/m1", "delta/m1", "shared/m1"]
        );
        embed_all(&mut store, "m1");
        assert_eq!(store.prune_embeddings().unwrap(), 0);

        // Forgetting `a` drops every vector no remaining unit uses, whatever
        // its model.
        let rows = vec![store.session_row("test", "a").unwrap().unwrap()];
        assert_eq!(store.forget(&rows).unwrap(), 1);
        assert_eq!(cached(&store), ["delta/m1", "shared/m1"]);
    }

    /// A store in a fresh folder with session `a` (a rare word, also in a long
    /// message) and session `b` (ordinary text).
    fn forgettable() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("index.sqlite")).unwrap();
        let long = "zebraquokka ".repeat(2000);
        store
            .apply(
                &file("/a", ""),
                &[session("a", &["zebraquokka here", &long])],
            )
            .unwrap();
        store
            .apply(&file("/b", ""), &[session("b", &["an ordinary answer"])])
            .unwrap();
        (dir, store)
    }

    #[test]
    fn forgotten_text_is_left_in_no_file() {
        let (dir, mut store) = forgettable();
        let rows = vec![store.session_row("test", "a").unwrap().unwrap()];
        store.forget(&rows).unwrap();
        assert!(!some_file_holds(dir.path(), b"raquokka"));
        assert_eq!(store.sessions(&Default::default(), None).unwrap().len(), 1);
    }

    /// Whether some file of `dir` holds `needle`.
    fn some_file_holds(dir: &Path, needle: &[u8]) -> bool {
        std::fs::read_dir(dir).unwrap().any(|entry| {
            std::fs::read(entry.unwrap().path())
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle)
        })
    }

    #[test]
    fn a_scrub_a_reader_holds_up_stays_pending_until_a_later_writer_finishes_it() {
        let (dir, mut store) = forgettable();
        let path = dir.path().join("index.sqlite");
        assert!(!store.scrub_pending().unwrap());

        // A reader in the middle of a read transaction.
        let reader = Connection::open(&path).unwrap();
        reader
            .execute_batch("BEGIN; SELECT count(*) FROM messages;")
            .unwrap();
        let started = std::time::Instant::now();
        let rows = vec![store.session_row("test", "a").unwrap().unwrap()];
        assert_eq!(store.forget(&rows).unwrap(), 1);
        // It tried more than once before giving up.
        assert!(started.elapsed() >= SCRUB_PAUSE * (SCRUB_TRIES - 1));
        assert!(store.scrub_pending().unwrap());
        assert_eq!(store.finish_scrub().unwrap(), Some(false));
        assert!(store.scrub_pending().unwrap());

        // Once the reader is done, the next writer finishes it.
        reader.execute_batch("COMMIT").unwrap();
        drop(reader);
        drop(store);
        let store = Store::open(&path).unwrap();
        assert!(store.scrub_pending().unwrap());
        assert_eq!(store.finish_scrub().unwrap(), Some(true));
        assert!(!store.scrub_pending().unwrap());
        assert_eq!(store.finish_scrub().unwrap(), None);
        assert!(!some_file_holds(dir.path(), b"raquokka"));
        let wal = std::fs::metadata(dir.path().join("index.sqlite-wal")).unwrap();
        assert_eq!(wal.len(), 0);
    }

    #[test]
    fn removing_sessions_waits_for_another_writer_instead_of_failing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        let mut store = Store::open(&path).unwrap();
        for name in ["a", "b"] {
            let source = dir.path().join(name);
            std::fs::write(&source, b"x").unwrap();
            let source = source.to_str().unwrap().to_string();
            store
                .apply(&file(&source, ""), &[session(name, &["some text"])])
                .unwrap();
        }
        std::fs::remove_file(dir.path().join("a")).unwrap();
        let held = |store: &mut Store, what: &dyn Fn(&mut Store) -> usize| {
            // Another writer holds the write lock for a moment, then commits.
            let (tx, rx) = std::sync::mpsc::channel();
            let other = std::thread::spawn({
                let path = path.clone();
                move || {
                    let conn = Connection::open(&path).unwrap();
                    conn.execute_batch(
                        "BEGIN IMMEDIATE;
                         INSERT INTO meta (key, value) VALUES ('other', '1')
                         ON CONFLICT (key) DO UPDATE SET value = value || '1';",
                    )
                    .unwrap();
                    tx.send(()).unwrap();
                    std::thread::sleep(Duration::from_millis(300));
                    conn.execute_batch("COMMIT").unwrap();
                }
            });
            rx.recv().unwrap();
            let n = what(store);
            other.join().unwrap();
            n
        };
        // A deferred transaction reads first, then cannot take the write
        // lock from a stale snapshot; an immediate one waits for it.
        assert_eq!(held(&mut store, &|s| s.orphan_missing("test").unwrap()), 1);
        let rows = vec![store.session_row("test", "b").unwrap().unwrap()];
        assert_eq!(held(&mut store, &|s| s.forget(&rows).unwrap()), 1);
    }

    #[test]
    fn an_existing_open_folder_is_made_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("deja");
        std::fs::create_dir(&data).unwrap();
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
        create_private_dir(&data).unwrap();
        let mode = std::fs::metadata(&data).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}
