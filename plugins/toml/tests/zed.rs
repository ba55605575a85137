//! The Zed reader, written only in TOML (`readers/zed.toml`): a
//! `threads.db` built here in the shape Zed writes (its `threads` table, each
//! thread's JSON zstd-compressed in `data`, or plain JSON in older rows),
//! read back through the description.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{HostContext, ROption, Role};
use deja_plugin_toml::TomlReader;
use rusqlite::{params, Connection};
use serde_json::json;

fn context(home: &Path) -> HostContext {
    common::context("zed.toml", home, &[])
}

/// Zed's `threads` table, as a real `threads.db` has it.
const SCHEMA: &str = "CREATE TABLE threads (
    id TEXT PRIMARY KEY,
    summary TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data_type TEXT NOT NULL,
    data BLOB NOT NULL,
    parent_id TEXT, folder_paths TEXT, folder_paths_order TEXT, created_at TEXT)";

fn thread(worktree: &str) -> serde_json::Value {
    json!({
        "title": "Tenant leak in the orders report",
        "version": "0.3.0",
        "updated_at": "2026-11-24T10:00:09Z",
        "initial_project_snapshot": {"worktree_snapshots": [{"worktree_path": worktree, "git_state": {"diff": "diff --git ..."}}], "timestamp": "2026-11-24T10:00:00Z"},
        "messages": [
            {"User": {"id": "u1", "content": [{"Text": "Why does the orders report show other tenants?"}, {"Mention": {"uri": {"File": {"abs_path": "/home/me/shop/reports/orders.sql"}}, "content": "SELECT * FROM orders"}}]}},
            {"Agent": {"content": [
                {"Thinking": {"text": "The join drops the predicate.", "signature": "x"}},
                {"Text": "Let me run the report's tests."},
                {"ToolUse": {"id": "terminal-1", "name": "terminal", "raw_input": "{}", "input": {"command": "npm test -- reports", "cd": "shop"}, "is_input_complete": true}}
            ], "tool_results": {"terminal-1": {"tool_use_id": "terminal-1", "tool_name": "terminal", "is_error": false, "content": {"Text": "1 failing"}}}}},
            {"Agent": {"content": [{"Text": "The report's join lost the tenant predicate; I added it back."}], "tool_results": {}}},
            "Resume"
        ],
    })
}

#[test]
fn compressed_and_plain_threads_read_as_their_messages() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("threads.db");
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    let compressed =
        zstd::bulk::compress(thread("/home/me/shop").to_string().as_bytes(), 3).unwrap();
    conn.execute(
        "INSERT INTO threads VALUES ('t-zstd', 'Tenant leak in the orders report', '2026-11-24T10:00:09Z', 'zstd', ?1, NULL, NULL, NULL, '2026-11-24T10:00:00Z')",
        params![compressed],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO threads VALUES ('t-json', 'Older thread', '2026-11-20T08:00:00Z', 'json', ?1, 't-zstd', NULL, NULL, NULL)",
        params![thread("/home/me/blog").to_string().into_bytes()],
    )
    .unwrap();
    drop(conn);
    let out = testing::parse_file::<TomlReader>(&db, &context(Path::new("/nonexistent")));
    assert_eq!(out.sessions.len(), 2, "{:?}", out.warnings);
    let s = out
        .sessions
        .iter()
        .find(|s| s.id.as_str() == "t-zstd")
        .unwrap();
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Tenant leak in the orders report")
    );
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/home/me/shop")
    );
    assert_eq!(s.started_at_ms, 1_795_514_400_000);
    let messages = common::messages(s);
    // Not the mention's file contents, the thinking or the tool's output.
    assert_eq!(
        messages,
        vec![
            (Role::User, "Why does the orders report show other tenants?"),
            (Role::Assistant, "Let me run the report's tests."),
            (
                Role::Assistant,
                "The report's join lost the tenant predicate; I added it back."
            ),
        ]
    );
    assert_eq!(s.commands[0].command.as_str(), "npm test -- reports");
    let older = out
        .sessions
        .iter()
        .find(|s| s.id.as_str() == "t-json")
        .unwrap();
    assert_eq!(
        older.parent_id.as_ref().map(|p| p.as_str()),
        ROption::RSome("t-zstd")
    );
    assert_eq!(
        older.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/home/me/blog")
    );
    assert_eq!(older.messages.len(), 3);
}

#[test]
fn a_blob_that_does_not_decompress_is_no_thread_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("threads.db");
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    let mut broken = vec![0x28, 0xB5, 0x2F, 0xFD];
    broken.extend_from_slice(b"not really zstd");
    conn.execute(
        "INSERT INTO threads VALUES ('t-bad', 'Broken', '2026-11-24T10:00:09Z', 'zstd', ?1, NULL, NULL, NULL, NULL)",
        params![broken],
    )
    .unwrap();
    drop(conn);
    let out = testing::parse_file::<TomlReader>(&db, &context(Path::new("/nonexistent")));
    assert!(out.sessions.is_empty());
    assert_eq!(out.skipped_empty, 1);
}
