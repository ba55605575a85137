//! A SQLite source read without trusting the file: a private copy of the
//! database and its write-ahead log is opened (nothing is created or
//! changed beside the harness's file), read-only, defensive, with an
//! untrusted schema, a length limit, triggers off, and the description's
//! queries refused when they read a view or a virtual table; its rows are
//! streamed one session at a time under a time, row and byte budget.

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use deja_plugin_api::PluginError;
use rusqlite::config::DbConfig;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value};

use super::{strip_at, untag, Group};
use crate::description::Description;

mod kv;

/// How much reading one database may cost before it is given up.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Wall-clock time from opening the file to its last session.
    pub deadline: Duration,
    /// Rows read by the sessions and records queries together.
    pub max_rows: u64,
    /// Bytes of text and blobs read (after decompression), all rows together.
    pub max_bytes: u64,
}

/// The bounds every database is read under: far above what a harness
/// writes (a large OpenCode database is read in seconds and holds a few
/// hundred thousand rows), far below what stalls an index.
pub const BOUNDS: Bounds = Bounds {
    deadline: Duration::from_secs(30),
    max_rows: 5_000_000,
    max_bytes: 1 << 30,
};

/// The longest string or blob SQLite hands over (`SQLITE_LIMIT_LENGTH`).
const MAX_LENGTH: i32 = 64 << 20;

/// The most a zstd column may decompress to.
const MAX_DECOMPRESSED: usize = 64 << 20;

/// The largest write-ahead log copied beside the database's copy.
const MAX_WAL: u64 = 1 << 30;

/// The first bytes of a zstd frame.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Reads the database at `path` (or `bytes` when there is no file there)
/// with the description's queries, handing each session's group to `visit`
/// as soon as its rows are read; returns the warnings.
pub fn read(
    d: &Description,
    path: &str,
    bytes: &[u8],
    bounds: Bounds,
    visit: &mut dyn FnMut(Group),
) -> Result<Vec<String>, PluginError> {
    if !d.source.kv.is_empty() {
        return kv::read(d, path, bytes, bounds, visit);
    }
    let (Some(sessions_sql), Some(id)) = (&d.source.sessions, &d.session.id) else {
        return Err(PluginError::config(
            "a sqlite source needs `source.sessions` and `session.id`",
        ));
    };
    let started = Instant::now();
    let opened = open(path, bytes)?;
    let conn = &opened.conn;
    let mut queries = vec![("sessions", sessions_sql.as_str())];
    if let Some(sql) = &d.source.records {
        queries.push(("records", sql.as_str()));
    }
    refuse_views(conn, &queries)?;
    let watch = Watch::start(conn, bounds.deadline.saturating_sub(started.elapsed()));
    let mut budget = Budget {
        bounds,
        started,
        rows: 0,
        bytes: 0,
    };
    let fail = |what: &str, e: rusqlite::Error, budget: &Budget| {
        if watch.fired() {
            budget.late()
        } else {
            PluginError::invalid(format!(
                "the `source.{what}` query failed on this database: {e}"
            ))
        }
    };
    let columns = Columns {
        json: &d.source.json_columns,
        zstd: &d.source.zstd_columns,
    };
    let mut sessions = conn
        .prepare(sessions_sql)
        .map_err(|e| fail("sessions", e, &budget))?;
    let mut records_stmt = match &d.source.records {
        Some(sql) => Some(conn.prepare(sql).map_err(|e| fail("records", e, &budget))?),
        None => None,
    };
    let names = column_names(&sessions);
    let mut rows = sessions
        .query([])
        .map_err(|e| fail("sessions", e, &budget))?;
    let mut warnings = Vec::new();
    loop {
        let next = rows.next().map_err(|e| fail("sessions", e, &budget))?;
        let Some(next) = next else { break };
        let mut row = object(next, &names, &columns, &mut budget)
            .map_err(|e| fail("sessions", e, &budget))?;
        budget.check()?;
        let Some(session_id) = id.string(&row) else {
            warnings.push("a row of the sessions query has no session id; skipped".to_string());
            continue;
        };
        let mut records = match records_stmt.as_mut() {
            Some(stmt) => query(stmt, &session_id, &columns, &mut budget)
                .map_err(|e| fail("records", e, &budget))?,
            None => vec![row.clone()],
        };
        budget.check()?;
        if let Some(at) = &d.source.records_at {
            records = records
                .iter()
                .flat_map(|r| match at.get(r).as_deref() {
                    Some(Value::Array(items)) => items.clone(),
                    _ => Vec::new(),
                })
                .collect();
            // The records are out of the row now; keep its other fields.
            if d.source.records.is_none() {
                strip_at(&mut row, at);
            }
        }
        if d.source.untag {
            records = records.into_iter().map(untag).collect();
        }
        visit(Group {
            row: Some(row),
            records,
            id: None,
        });
    }
    Ok(warnings)
}

/// What has been read of one database, against its bounds.
struct Budget {
    bounds: Bounds,
    started: Instant,
    rows: u64,
    bytes: u64,
}

impl Budget {
    /// An error once a bound is passed.
    fn check(&self) -> Result<(), PluginError> {
        if self.started.elapsed() > self.bounds.deadline {
            return Err(self.late());
        }
        if self.rows > self.bounds.max_rows {
            return Err(PluginError::invalid(format!(
                "the database holds more than {} rows for its sessions; not read",
                self.bounds.max_rows
            )));
        }
        if self.bytes > self.bounds.max_bytes {
            return Err(PluginError::invalid(format!(
                "the database holds more than {} MiB of text for its sessions; not read",
                self.bounds.max_bytes >> 20
            )));
        }
        Ok(())
    }

    fn late(&self) -> PluginError {
        PluginError::invalid(format!(
            "reading the database took longer than {} s; stopped",
            self.bounds.deadline.as_secs_f32()
        ))
    }
}

/// Interrupts the connection's statement once the deadline passes, for a
/// single step that never yields a row (a sort or a join over a huge
/// table); the budget catches everything between rows.
struct Watch {
    fired: Arc<AtomicBool>,
    // Dropping it wakes the thread, which then ends.
    _stop: mpsc::Sender<()>,
}

impl Watch {
    fn start(conn: &Connection, after: Duration) -> Watch {
        let fired = Arc::new(AtomicBool::new(false));
        let (stop, stopped) = mpsc::channel::<()>();
        let handle = conn.get_interrupt_handle();
        let flag = Arc::clone(&fired);
        let spawned = std::thread::Builder::new()
            .name("deja-sqlite-deadline".into())
            .spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(after) {
                    flag.store(true, Ordering::SeqCst);
                    handle.interrupt();
                }
            });
        // Without the thread the budget's checks between rows still hold.
        drop(spawned);
        Watch { fired, _stop: stop }
    }

    fn fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }
}

/// An open database, and the private folder that holds its copy (removed
/// when this is dropped, after the connection).
struct Opened {
    conn: Connection,
    _copy: Option<tempfile::TempDir>,
}

/// The database at `path`, copied with its write-ahead log to a private
/// folder and opened there read-only, or `bytes` as a database when there
/// is no file at `path` (a copy handed over by a test or a tool).
fn open(path: &str, bytes: &[u8]) -> Result<Opened, PluginError> {
    let cannot =
        |e: rusqlite::Error| PluginError::invalid(format!("not a readable SQLite database: {e}"));
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let (conn, copy) = if Path::new(path).is_file() {
        let dir = copy(Path::new(path))?;
        let conn = Connection::open_with_flags(dir.path().join("db"), flags).map_err(cannot)?;
        (conn, Some(dir))
    } else {
        if bytes.is_empty() {
            return Err(PluginError::invalid(
                "not a SQLite database: the file is empty",
            ));
        }
        let mut conn = Connection::open_in_memory().map_err(cannot)?;
        conn.deserialize_read_exact(rusqlite::MAIN_DB, bytes, bytes.len(), true)
            .map_err(cannot)?;
        (conn, None)
    };
    harden(&conn).map_err(cannot)?;
    // Reading the schema is what fails on a file that is not a database.
    conn.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))
        .map_err(cannot)?;
    Ok(Opened { conn, _copy: copy })
}

/// Makes the connection safe for a file deja did not write: nothing in the
/// schema runs with trust, no trigger fires, no view is expanded, no value
/// is longer than [`MAX_LENGTH`], nothing is written.
fn harden(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_VIEW, false)?;
    // SAFETY: the handle is this open connection's, used on this thread
    // only, and `sqlite3_limit` neither keeps nor frees it.
    unsafe {
        rusqlite::ffi::sqlite3_limit(
            conn.handle(),
            rusqlite::ffi::SQLITE_LIMIT_LENGTH,
            MAX_LENGTH,
        );
    }
    conn.execute_batch("PRAGMA trusted_schema = OFF; PRAGMA query_only = ON")
}

/// A private folder holding a copy of the database at `path` (as `db`) and
/// of its write-ahead log (`db-wal`), taken again when the database changed
/// while it was copied (a harness's checkpoint moved the log into it).
fn copy(path: &Path) -> Result<tempfile::TempDir, PluginError> {
    let failed = |e: std::io::Error| {
        PluginError::invalid(format!("the database could not be copied to be read: {e}"))
    };
    let dir = tempfile::Builder::new()
        .prefix("deja-sqlite-")
        .tempdir()
        .map_err(failed)?;
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let wal = Path::new(&wal);
    for _ in 0..3 {
        let before = stamp(path);
        copy_file(path, &dir.path().join("db"), u64::MAX).map_err(failed)?;
        let log = dir.path().join("db-wal");
        match std::fs::symlink_metadata(wal) {
            Ok(m) if m.is_file() => copy_file(wal, &log, MAX_WAL).map_err(failed)?,
            _ => {
                if log.exists() {
                    std::fs::remove_file(&log).map_err(failed)?;
                }
            }
        }
        if stamp(path) == before {
            return Ok(dir);
        }
    }
    Err(PluginError::invalid(
        "the database kept changing while it was copied to be read; try again",
    ))
}

/// The size and modification time of the file at `path`.
fn stamp(path: &Path) -> Option<(u64, std::time::SystemTime)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

/// Copies the regular file `from` to `to`, at most `max` bytes.
fn copy_file(from: &Path, to: &Path, max: u64) -> std::io::Result<()> {
    let source = File::open(from)?;
    if !source.metadata()?.is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            from.display()
        )));
    }
    let mut target = File::create(to)?;
    let copied = std::io::copy(&mut source.take(max.saturating_add(1)), &mut target)?;
    if copied > max {
        return Err(std::io::Error::other(format!(
            "{} is larger than {} MiB",
            from.display(),
            max >> 20
        )));
    }
    target.flush()
}

/// Refuses the description's queries when one names a view or a virtual
/// table of this database: a view can run without end (a recursive common
/// table expression), a virtual table runs the module's code. A trigger
/// is allowed (real harness databases carry them): it runs only on a write,
/// and this connection cannot write and has triggers off.
fn refuse_views(conn: &Connection, queries: &[(&str, &str)]) -> Result<(), PluginError> {
    let cannot =
        |e: rusqlite::Error| PluginError::invalid(format!("not a readable SQLite database: {e}"));
    let mut stmt = conn
        .prepare(
            "SELECT type, name FROM sqlite_schema
             WHERE type = 'view' OR (type = 'table' AND sql LIKE 'create virtual%')",
        )
        .map_err(cannot)?;
    let mut rows = stmt.query([]).map_err(cannot)?;
    while let Some(row) = rows.next().map_err(cannot)? {
        let kind: String = row.get(0).map_err(cannot)?;
        let name: String = row.get(1).map_err(cannot)?;
        for (what, sql) in queries {
            if words(sql).any(|w| w.eq_ignore_ascii_case(&name)) {
                let kind = if kind == "view" {
                    "a view"
                } else {
                    "a virtual table"
                };
                return Err(PluginError::invalid(format!(
                    "the `source.{what}` query reads `{name}`, which is {kind} in this \
                     database, not a table; deja reads only tables"
                )));
            }
        }
    }
    Ok(())
}

/// The words of `sql`: runs of letters, digits and `_`.
fn words(sql: &str) -> impl Iterator<Item = &str> {
    sql.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// How columns are read.
struct Columns<'a> {
    json: &'a [String],
    zstd: &'a [String],
}

fn column_names(stmt: &rusqlite::Statement<'_>) -> Vec<String> {
    stmt.column_names().map(str::to_string).collect()
}

/// Runs `stmt` (with `?1` bound to `param` when the query has a parameter)
/// and turns each row into an object of its columns, stopping at the
/// budget's bounds.
fn query(
    stmt: &mut rusqlite::Statement<'_>,
    param: &str,
    columns: &Columns<'_>,
    budget: &mut Budget,
) -> rusqlite::Result<Vec<Value>> {
    let names = column_names(stmt);
    let mut rows = if stmt.parameter_count() > 0 {
        stmt.query([param])?
    } else {
        stmt.query([])?
    };
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(object(row, &names, columns, budget)?);
        if budget.check().is_err() {
            break;
        }
    }
    Ok(out)
}

/// One row as an object of its columns, counted against the budget.
fn object(
    row: &rusqlite::Row<'_>,
    names: &[String],
    columns: &Columns<'_>,
    budget: &mut Budget,
) -> rusqlite::Result<Value> {
    budget.rows += 1;
    let mut object = Map::new();
    for (i, name) in names.iter().enumerate() {
        let is = |list: &[String]| list.iter().any(|c| c == name);
        let bytes = match row.get_ref(i)? {
            ValueRef::Null => {
                object.insert(name.clone(), Value::Null);
                continue;
            }
            ValueRef::Integer(n) => {
                object.insert(name.clone(), Value::from(n));
                continue;
            }
            ValueRef::Real(f) => {
                object.insert(name.clone(), Value::from(f));
                continue;
            }
            ValueRef::Text(t) => t,
            // A blob is read only where the description says what it holds.
            ValueRef::Blob(b) if is(columns.zstd) || is(columns.json) => b,
            ValueRef::Blob(_) => {
                object.insert(name.clone(), Value::Null);
                continue;
            }
        };
        let decompressed;
        let bytes = if is(columns.zstd) && bytes.starts_with(&ZSTD_MAGIC) {
            decompressed = zstd::bulk::decompress(bytes, MAX_DECOMPRESSED).ok();
            match &decompressed {
                Some(d) => d.as_slice(),
                None => {
                    object.insert(name.clone(), Value::Null);
                    continue;
                }
            }
        } else {
            bytes
        };
        budget.bytes = budget
            .bytes
            .saturating_add(u64::try_from(bytes.len()).unwrap_or(u64::MAX));
        if budget.bytes > budget.bounds.max_bytes {
            // The caller's check reports it; nothing more is decoded.
            object.insert(name.clone(), Value::Null);
            continue;
        }
        let t = String::from_utf8_lossy(bytes);
        let value = if is(columns.json) {
            serde_json::from_str(&t).unwrap_or(Value::String(t.into_owned()))
        } else {
            Value::String(t.into_owned())
        };
        object.insert(name.clone(), value);
    }
    Ok(Value::Object(object))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

    use super::*;
    use crate::description;

    /// The built-in Crush description, its sessions query replaced by `sessions`.
    fn crush(sessions: Option<&str>) -> Description {
        let text = crate::BUILTIN
            .iter()
            .find(|(name, _)| *name == "crush.toml")
            .map(|(_, text)| text.to_string())
            .unwrap();
        let text = match sessions {
            Some(sql) => {
                let start = text.find("sessions = \"\"\"").unwrap();
                let end = start + text[start..].find("\"\"\"\n").unwrap();
                let end = end + 3 + text[end + 3..].find("\"\"\"").unwrap() + 3;
                format!(
                    "{}sessions = \"\"\"{sql}\"\"\"{}",
                    &text[..start],
                    &text[end..]
                )
            }
            None => text,
        };
        description::parse("crush.toml", &text).unwrap()
    }

    /// A Crush database at `<dir>/crush.db` with the schema the reader
    /// queries, `sessions` sessions of `messages` messages of `text` each.
    fn database(dir: &Path, sessions: usize, messages: usize, text: &str) -> String {
        let path = dir.join("crush.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT,
                                    created_at INTEGER, updated_at INTEGER);
             CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT, role TEXT,
                                    parts TEXT, created_at INTEGER);",
        )
        .unwrap();
        for s in 0..i64::try_from(sessions).unwrap() {
            conn.execute(
                "INSERT INTO sessions VALUES (?1, NULL, 't', ?2, ?2)",
                rusqlite::params![format!("s{s}"), s],
            )
            .unwrap();
            for m in 0..i64::try_from(messages).unwrap() {
                let parts = serde_json::json!([{"type": "text", "data": {"text": text}}]);
                conn.execute(
                    "INSERT INTO messages VALUES (?1, ?2, 'user', ?3, ?4)",
                    rusqlite::params![format!("s{s}-m{m}"), format!("s{s}"), parts.to_string(), m],
                )
                .unwrap();
            }
        }
        path.to_string_lossy().into_owned()
    }

    fn run(
        d: &Description,
        path: &str,
        bounds: Bounds,
    ) -> (Result<Vec<String>, PluginError>, usize) {
        let mut visited = 0;
        let result = read(d, path, &[], bounds, &mut |_| visited += 1);
        (result, visited)
    }

    const LOOSE: Bounds = Bounds {
        deadline: Duration::from_secs(60),
        max_rows: u64::MAX,
        max_bytes: u64::MAX,
    };

    #[test]
    fn a_database_within_its_bounds_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = database(dir.path(), 3, 2, "hello");
        let (result, visited) = run(&crush(None), &path, BOUNDS);
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(visited, 3);
    }

    #[test]
    fn a_recursive_view_in_place_of_a_table_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crush.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE messages (id TEXT, session_id TEXT, role TEXT, parts TEXT, created_at INTEGER);
             CREATE VIEW sessions AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c)
               SELECT 'id'||x AS id, NULL AS parent_session_id, 't' AS title, x AS created_at,
                      x AS updated_at FROM c;",
        )
        .unwrap();
        drop(conn);
        let started = Instant::now();
        let (result, visited) = run(&crush(None), &path.to_string_lossy(), BOUNDS);
        let error = result.unwrap_err().message.to_string();
        assert!(
            error.contains("`sessions`") && error.contains("a view"),
            "{error}"
        );
        assert_eq!(visited, 0);
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_virtual_table_in_place_of_a_table_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = database(dir.path(), 1, 1, "x");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE messages;
             CREATE VIRTUAL TABLE messages USING fts5(id, session_id, role, parts, created_at);",
        )
        .unwrap();
        drop(conn);
        let error = run(&crush(None), &path, BOUNDS)
            .0
            .unwrap_err()
            .message
            .to_string();
        assert!(
            error.contains("`messages`") && error.contains("virtual table"),
            "{error}"
        );
    }

    #[test]
    fn rows_without_end_are_stopped_at_the_deadline_and_streamed_until_then() {
        let dir = tempfile::tempdir().unwrap();
        let path = database(dir.path(), 1, 1, "x");
        let endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c)
            SELECT 'id'||x AS id, NULL AS parent_session_id, 't' AS title, x AS created_at,
                   x AS updated_at FROM c";
        let bounds = Bounds {
            deadline: Duration::from_millis(300),
            ..LOOSE
        };
        let started = Instant::now();
        let (result, visited) = run(&crush(Some(endless)), &path, bounds);
        let error = result.unwrap_err().message.to_string();
        assert!(error.contains("took longer than 0.3 s"), "{error}");
        assert!(started.elapsed() < Duration::from_secs(5));
        // Each session went on before the next row was read.
        assert!(visited > 0);
    }

    #[test]
    fn one_step_without_end_is_interrupted_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let path = database(dir.path(), 1, 1, "x");
        // No row until the count ends, which it never does.
        let endless = "SELECT count(*) AS id, NULL AS parent_session_id, 't' AS title,
            0 AS created_at, 0 AS updated_at
            FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c)";
        let bounds = Bounds {
            deadline: Duration::from_millis(300),
            ..LOOSE
        };
        let started = Instant::now();
        let error = run(&crush(Some(endless)), &path, bounds)
            .0
            .unwrap_err()
            .message
            .to_string();
        assert!(error.contains("took longer than 0.3 s"), "{error}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn rows_past_the_cap_stop_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = database(dir.path(), 20, 5, "x");
        let bounds = Bounds {
            max_rows: 50,
            ..LOOSE
        };
        let error = run(&crush(None), &path, bounds)
            .0
            .unwrap_err()
            .message
            .to_string();
        assert!(error.contains("more than 50 rows"), "{error}");
        assert!(run(&crush(None), &path, LOOSE).0.is_ok());
    }

    #[test]
    fn text_past_the_cap_stops_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = database(dir.path(), 4, 4, &"x".repeat(100_000));
        let bounds = Bounds {
            max_bytes: 1 << 20,
            ..LOOSE
        };
        let error = run(&crush(None), &path, bounds)
            .0
            .unwrap_err()
            .message
            .to_string();
        assert!(error.contains("more than 1 MiB"), "{error}");
    }

    #[test]
    fn a_value_longer_than_the_limit_is_an_error_not_a_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = database(dir.path(), 1, 1, "x");
        let conn = Connection::open(&path).unwrap();
        let long = usize::try_from(MAX_LENGTH).unwrap() + 1;
        conn.execute(
            "UPDATE messages SET parts = ?1",
            [String::from_utf8(vec![b'x'; long]).unwrap()],
        )
        .unwrap();
        drop(conn);
        let error = run(&crush(None), &path, LOOSE)
            .0
            .unwrap_err()
            .message
            .to_string();
        assert!(error.contains("too big"), "{error}");
    }

    #[test]
    fn the_schema_is_untrusted_and_triggers_and_views_are_off() {
        let dir = tempfile::tempdir().unwrap();
        let path = database(dir.path(), 1, 1, "x");
        let opened = open(&path, &[]).unwrap();
        let config = |c| opened.conn.db_config(c).unwrap();
        assert!(config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE));
        assert!(!config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA));
        assert!(!config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER));
        assert!(!config(DbConfig::SQLITE_DBCONFIG_ENABLE_VIEW));
        let trusted: i64 = opened
            .conn
            .query_row("PRAGMA trusted_schema", [], |r| r.get(0))
            .unwrap();
        assert_eq!(trusted, 0);
    }
}
