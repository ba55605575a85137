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

pub mod embedding;
pub mod export;
pub mod ingest;
pub mod query;
pub mod schema;
pub mod search;
pub mod vectors;

pub use deja_model::sha256_hex;
pub use query::{Counts, SessionFilter, SessionRow, SourceRow};
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
    /// There is no index yet.
    #[error("no index at `{0}` yet")]
    Missing(PathBuf),
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

/// Creates `dir` (and parents) private to the user: 0700 on Unix.
pub fn create_private_dir(dir: &Path) -> Result<()> {
    let io = |source| StoreError::Io {
        path: dir.to_path_buf(),
        source,
    };
    if !dir.exists() {
        std::fs::create_dir_all(dir).map_err(io)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
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
    /// folder) and migrating it as needed.
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

    /// Opens an existing database for reading only; `Missing` if there is none.
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
            // An older database: migrate it through a writable connection first.
            drop(store);
            Store::open(path)?;
            return Store::open_read(path);
        }
        Ok(store)
    }

    fn configure(&self) -> Result<()> {
        self.conn
            .busy_timeout(Duration::from_secs(30))
            .map_err(|e| self.err(e))?;
        self.conn
            .execute_batch(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = NORMAL;
                 PRAGMA foreign_keys = ON;
                 PRAGMA temp_store = MEMORY;",
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

    /// Runs `f` in a transaction, committing when it succeeds.
    pub(crate) fn in_transaction<T>(
        &mut self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let path = self.path.clone();
        let wrap = |source| sqlite_error(&path, source);
        let tx = self.conn.transaction().map_err(wrap)?;
        let value = f(&tx).map_err(wrap)?;
        tx.commit().map_err(wrap)?;
        Ok(value)
    }

    /// Wraps a rusqlite error with this store's path.
    pub(crate) fn wrap(&self, e: rusqlite::Error) -> StoreError {
        self.err(e)
    }
}
