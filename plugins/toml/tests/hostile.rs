//! Files written to hang, exhaust or crash a reader written in TOML, and a
//! harness's folder that must stay as it was: a Crush database whose
//! `sessions` is a recursive view, a VS Code change log with a key path of
//! 100,000 keys, a workspace file that is a FIFO or `/dev/zero`, and a
//! database whose sessions are only in its write-ahead log, in a folder
//! deja may not write to. Each file gives sessions or a clear error,
//! promptly, and nothing beside it changes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use deja_plugin_api::{ParseRequest, ROption, Reader};
use deja_plugin_toml::TomlReader;
use rusqlite::Connection;
use serde_json::json;

fn parse(
    harness: &str,
    path: &Path,
) -> Result<deja_plugin_api::ParseOutput, deja_plugin_api::PluginError> {
    let c = common::context(&format!("{harness}.toml"), Path::new("/nonexistent"), &[]);
    let bytes = std::fs::read(path).unwrap();
    TomlReader::parse(&ParseRequest {
        path: path.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &c,
    })
}

/// A VS Code chat session's change log: its document, then `entries`.
fn chat_log(entries: &[serde_json::Value]) -> String {
    let first = json!({"kind": 0, "v": {"version": 3, "sessionId": "s", "initialLocation": "panel",
        "requests": [{"message": {"text": "why does the cache miss?"}, "timestamp": 1,
                      "response": [{"value": "The key holds the time."}]}]}});
    std::iter::once(&first)
        .chain(entries)
        .map(|e| format!("{e}\n"))
        .collect()
}

#[test]
fn a_change_log_entry_with_a_path_of_100k_keys_is_skipped_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let chats = dir.path().join("ws/chatSessions");
    std::fs::create_dir_all(&chats).unwrap();
    let deep: Vec<&str> = vec!["x"; 100_000];
    let log = chat_log(&[json!({"kind": 1, "k": deep, "v": 1})]);
    assert!(log.len() > 300_000);
    let file = chats.join("s.jsonl");
    std::fs::write(&file, log).unwrap();
    let out = parse("copilot-chat", &file).unwrap();
    assert_eq!(out.sessions.len(), 1);
    assert_eq!(out.sessions[0].messages.len(), 2);
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains("1 line(s) of the change log could not be applied")),
        "{:?}",
        out.warnings
    );
}

#[cfg(unix)]
#[test]
fn a_workspace_file_that_is_a_fifo_or_dev_zero_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    for (workspace, special) in [("fifo", None), ("zero", Some("/dev/zero"))] {
        let chats = dir.path().join(workspace).join("chatSessions");
        std::fs::create_dir_all(&chats).unwrap();
        let beside = dir.path().join(workspace).join("workspace.json");
        match special {
            Some(target) => std::os::unix::fs::symlink(target, &beside).unwrap(),
            None => {
                let made = std::process::Command::new("mkfifo")
                    .arg(&beside)
                    .status()
                    .unwrap();
                assert!(made.success());
            }
        }
        let file = chats.join("s.jsonl");
        std::fs::write(&file, chat_log(&[])).unwrap();
        let started = Instant::now();
        let out = parse("copilot-chat", &file).unwrap();
        assert!(started.elapsed() < Duration::from_secs(5), "{workspace}");
        assert_eq!(out.sessions.len(), 1, "{workspace}");
        assert_eq!(
            out.sessions[0].project.dir.as_ref().map(|d| d.to_string()),
            ROption::RNone,
            "{workspace}"
        );
    }
}

#[test]
fn a_crush_database_whose_sessions_are_a_recursive_view_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crush.db");
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE messages (id TEXT, session_id TEXT, role TEXT, parts TEXT, created_at INTEGER);
         CREATE VIEW sessions AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c)
           SELECT 'id'||x AS id, NULL AS parent_session_id, 't' AS title, x AS created_at,
                  x AS updated_at FROM c;",
    )
    .unwrap();
    drop(conn);
    assert!(std::fs::metadata(&db).unwrap().len() <= 8192);
    let started = Instant::now();
    let error = parse("crush", &db).unwrap_err().message.to_string();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        error.contains("`sessions`") && error.contains("a view"),
        "{error}"
    );
}

/// Every entry of `dir` with its mode and bytes (a folder's bytes empty).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u32, Vec<u8>)> {
    use std::os::unix::fs::PermissionsExt;
    let mut all = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let bytes = if meta.is_file() {
            std::fs::read(&path).unwrap()
        } else {
            Vec::new()
        };
        all.insert(path, (meta.permissions().mode(), bytes));
    }
    all
}

/// A Crush database in `<dir>/.crush/` whose one session and its messages
/// are only in its write-ahead log (copied while the writer held it open,
/// as a running Crush leaves it), with no shared-memory file beside it.
fn crush_in_its_log(dir: &Path) -> PathBuf {
    let writer_dir = dir.join("writer");
    std::fs::create_dir_all(&writer_dir).unwrap();
    let live = writer_dir.join("crush.db");
    let conn = Connection::open(&live).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
         CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT,
                                created_at INTEGER, updated_at INTEGER);
         CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT, role TEXT, parts TEXT,
                                created_at INTEGER);
         PRAGMA wal_checkpoint(TRUNCATE);
         INSERT INTO sessions VALUES ('only-in-the-log', NULL, 'Log', 1, 2);",
    )
    .unwrap();
    for (i, role) in ["user", "assistant"].iter().enumerate() {
        let parts = json!([{"type": "text", "data": {"text": format!("wombat {role}")}}]);
        conn.execute(
            "INSERT INTO messages VALUES (?1, 'only-in-the-log', ?2, ?3, ?4)",
            rusqlite::params![
                format!("m{i}"),
                role,
                parts.to_string(),
                i64::try_from(i).unwrap()
            ],
        )
        .unwrap();
    }
    let folder = dir.join("project/.crush");
    std::fs::create_dir_all(&folder).unwrap();
    for name in ["crush.db", "crush.db-wal"] {
        std::fs::copy(writer_dir.join(name), folder.join(name)).unwrap();
    }
    drop(conn);
    let wal = std::fs::metadata(folder.join("crush.db-wal"))
        .unwrap()
        .len();
    assert!(wal > 0, "the session is in the log");
    folder.join("crush.db")
}

fn sessions_in_the_log_are_read_and_nothing_beside_changes(folder_mode: Option<u32>) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let db = crush_in_its_log(dir.path());
    let folder = db.parent().unwrap().to_path_buf();
    if let Some(mode) = folder_mode {
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let before = snapshot(&folder);
    let out = parse("crush", &db);
    let after = snapshot(&folder);
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = out.unwrap();
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "a file was added to or removed from the harness's folder"
    );
    for (path, was) in &before {
        assert!(after[path] == *was, "{} changed", path.display());
    }
    assert_eq!(out.sessions.len(), 1, "{:?}", out.warnings);
    assert_eq!(out.sessions[0].id.as_str(), "only-in-the-log");
    assert_eq!(
        common::messages(&out.sessions[0])
            .iter()
            .map(|m| m.1)
            .collect::<Vec<_>>(),
        vec!["wombat user", "wombat assistant"]
    );
}

#[cfg(unix)]
#[test]
fn reading_a_database_writes_nothing_beside_it() {
    sessions_in_the_log_are_read_and_nothing_beside_changes(None);
}

#[cfg(unix)]
#[test]
fn a_database_in_a_folder_deja_may_not_write_to_is_read_from_its_log() {
    let probe = tempfile::tempdir().unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(probe.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
        let writable = std::fs::write(probe.path().join("x"), b"").is_ok();
        std::fs::set_permissions(probe.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        if writable {
            // Root writes into a folder with mode 555: the check is made by `nobody`.
            deja_plugin_api::testing::rerun_unprivileged(
                "a_database_in_a_folder_deja_may_not_write_to_is_read_from_its_log",
            );
            return;
        }
    }
    sessions_in_the_log_are_read_and_nothing_beside_changes(Some(0o555));
}

/// What may stand where the Crush reader expects a table.
const IN_PLACE_OF_A_TABLE: [&str; 4] = [
    "CREATE TABLE {t} (id TEXT, parent_session_id TEXT, title TEXT, created_at INTEGER,
                       updated_at INTEGER, session_id TEXT, role TEXT, parts TEXT)",
    "CREATE VIEW {t} AS SELECT 'a' AS id, NULL AS parent_session_id, 't' AS title,
       1 AS created_at, 1 AS updated_at, 'a' AS session_id, 'user' AS role, '[]' AS parts",
    "CREATE VIEW {t} AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c)
       SELECT 'id'||x AS id, NULL AS parent_session_id, 't' AS title, x AS created_at,
              x AS updated_at, 'id'||x AS session_id, 'user' AS role, '[]' AS parts FROM c",
    "CREATE VIRTUAL TABLE {t} USING fts5(id, parent_session_id, title, created_at, updated_at,
                                         session_id, role, parts)",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Whatever stands in place of the two tables the Crush reader reads
    /// (a table, a view, a view without end, a virtual table), reading ends
    /// at once, and a view or a virtual table is named in the error.
    #[test]
    fn whatever_stands_in_place_of_a_table_reading_ends_at_once(
        sessions in 0..IN_PLACE_OF_A_TABLE.len(),
        messages in 0..IN_PLACE_OF_A_TABLE.len(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("crush.db");
        let conn = Connection::open(&db).unwrap();
        for (table, kind) in [("sessions", sessions), ("messages", messages)] {
            conn.execute_batch(&IN_PLACE_OF_A_TABLE[kind].replace("{t}", table)).unwrap();
        }
        drop(conn);
        let started = Instant::now();
        let result = parse("crush", &db);
        proptest::prop_assert!(started.elapsed() < Duration::from_secs(5));
        match (sessions, messages) {
            (0, 0) => proptest::prop_assert!(result.is_ok()),
            _ => {
                let error = result.unwrap_err().message.to_string();
                proptest::prop_assert!(
                    error.contains("a view") || error.contains("a virtual table"),
                    "{}", error
                );
            }
        }
    }

    /// A change-log entry's key path of any length, up to 300 KB of keys,
    /// of any kind: the session is read, and a path too long is reported.
    #[test]
    fn a_key_path_of_any_length_never_crashes(keys in 0usize..60_000, kind in 1u8..=3) {
        let path: Vec<&str> = vec!["x"; keys];
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        std::fs::write(&file, chat_log(&[json!({"kind": kind, "k": path, "v": [1]})])).unwrap();
        let out = parse("copilot-chat", &file).unwrap();
        proptest::prop_assert_eq!(out.sessions.len(), 1);
        proptest::prop_assert_eq!(out.sessions[0].messages.len(), 2);
        if keys > 64 {
            proptest::prop_assert!(!out.warnings.is_empty());
        }
    }
}
