//! Cursor's editor keeps its conversations in the SQLite key-value stores
//! of its user folder: a HOME holding a global database of a later build
//! (its conversation only in the write-ahead log, as a running Cursor
//! leaves it; written from the key-value shape in
//! `fixtures/golden/cursor-editor/from-docs`) and a real workspace database
//! of 2024 with its `workspace.json`. `deja index`, `sessions`, `show` and
//! `recall` read exactly what was typed, answered and run, and nothing in
//! Cursor's folder is added or changed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{repo, Sandbox};
use crate::harness_runs::{commands, first_hit, messages, shown_texts, tree};

const LEDGER: &str = "6f1c2a7e-3b9d-4e0a-9c41-2d8e5b7a1f03";
const WORKSPACE: &str = "f87f6e0b2cf1ae8645cc0c5ffaa99529";

fn golden() -> PathBuf {
    repo().join("fixtures/golden/cursor-editor")
}

/// Writes the tables of `from-docs/<name>.json` into a new database at
/// `path`, in WAL mode with every row in its log; returns the writer,
/// which keeps the log from being checkpointed while it is open.
fn state_db(name: &str, path: &Path) -> rusqlite::Connection {
    let text = std::fs::read_to_string(golden().join(format!("from-docs/{name}.json"))).unwrap();
    let tables: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")
        .unwrap();
    for table in tables.keys() {
        conn.execute_batch(&format!(
            "CREATE TABLE {table} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)"
        ))
        .unwrap();
    }
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    for (table, pairs) in &tables {
        for (key, value) in pairs.as_object().unwrap() {
            let value = (!value.is_null()).then(|| value.to_string());
            conn.execute(
                &format!("INSERT INTO {table} VALUES (?1, ?2)"),
                rusqlite::params![key, value],
            )
            .unwrap();
        }
    }
    conn
}

#[cfg(target_os = "linux")]
#[test]
fn cursors_editor_conversations_are_read_where_cursor_keeps_them() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let user = sb.home.join(".config/Cursor/User");

    // The global database, copied with its log while the writer holds it
    // open, as Cursor leaves it while it runs.
    let writer = sb.home.join("writer/state.vscdb");
    let conn = state_db("globalStorage", &writer);
    let global = user.join("globalStorage");
    std::fs::create_dir_all(&global).unwrap();
    for name in ["state.vscdb", "state.vscdb-wal"] {
        std::fs::copy(writer.with_file_name(name), global.join(name)).unwrap();
    }
    drop(conn);
    assert!(
        std::fs::metadata(global.join("state.vscdb-wal"))
            .unwrap()
            .len()
            > 0
    );

    // A real workspace database of 2024, and the folder it was opened on.
    let workspace = user.join("workspaceStorage").join(WORKSPACE);
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::copy(
        golden().join(format!(
            "real-2024-11/Cursor/User/workspaceStorage/{WORKSPACE}/state.vscdb"
        )),
        workspace.join("state.vscdb"),
    )
    .unwrap();
    std::fs::write(
        workspace.join("workspace.json"),
        br#"{"folder": "file:///home/me/code/mobilechat"}"#,
    )
    .unwrap();
    let before = tree(&user);

    let report = sb.index();
    // Two conversations of the global database, 26 composers and 5 chat
    // tabs of the workspace's.
    assert_eq!(report["sessions"]["added"], 33, "{report:#}");
    assert!(tree(&user) == before, "deja changed Cursor's folder");

    let listed = sb
        .ok(&["sessions", "--harness", "cursor-editor", "--json"])
        .json();
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 33, "{listed:#}");
    let ledger = sessions.iter().find(|s| s["id"] == LEDGER).unwrap();
    assert_eq!(ledger["title"], "Fix the rounding in the ledger totals");
    assert_eq!(ledger["started_at"], "2026-01-01T10:00:00Z", "{ledger:#}");

    let shown = sb.ok(&["show", LEDGER, "--json"]).json();
    assert_eq!(
        messages(&shown),
        [
            ("user", "The ledger totals are off by a cent when a row has three decimals; find the rounding bug and fix it."),
            ("assistant", "I'll look at how the totals are summed first."),
            ("assistant", "The totals rounded every row before summing; they now round the sum once, and the three-decimal test passes."),
            ("user", "Run the whole ledger suite to be sure."),
            ("assistant", "All forty ledger tests pass."),
        ],
        "{shown:#}"
    );
    assert_eq!(
        commands(&shown),
        [
            ("cargo test -p ledger totals", Some("failed"), Some(101)),
            ("cargo test -p ledger", Some("succeeded"), Some(0)),
        ],
        "{shown:#}"
    );
    assert_eq!(shown["project"]["dir"], "/home/me/code/ledger", "{shown:#}");
    let files: Vec<&str> = shown["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["/home/me/code/ledger/src/totals.rs"], "{shown:#}");

    // The real database's chat tab, with the workspace's folder.
    let tab = "f73a2965-5b2c-403b-a625-d347ab7107a1";
    let shown = sb.ok(&["show", tab, "--json"]).json();
    assert_eq!(shown["title"], "Running a Local Python Server via CLI");
    assert_eq!(shown["project"]["dir"], "/home/me/code/mobilechat");
    let (texts, _) = shown_texts(&shown);
    assert_eq!(texts.len(), 2, "{shown:#}");
    assert_eq!(
        texts[0],
        "how to run a local server with python in a simple cli command"
    );
    assert!(texts[1].contains("python -m http.server 8000"), "{shown:#}");

    let first = |query: &str| first_hit(&sb, query);
    assert_eq!(first("rounding bug three decimals ledger totals"), LEDGER);
    assert_eq!(
        first("ion footer is not a known element"),
        "cf2ead9f-6bf9-41d0-829e-a7fcae7ddb5a"
    );
    // The message Cursor dropped from the conversation is not indexed.
    let hits = sb.ok(&["recall", "penguin import", "--json"]).json();
    assert!(
        hits["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["session_id"] != LEDGER),
        "{hits:#}"
    );
}
