//! The Cursor editor reader, written only in TOML
//! (`readers/cursor-editor.toml`), over a real workspace database of
//! November 2024 (`fixtures/golden/cursor-editor/real-2024-11`, MIT, see
//! SOURCES.md) and databases built from the key-value shape Cursor's
//! later builds write (`fixtures/golden/cursor-editor/from-docs`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{
    CommandStatus, FileAction, HostContext, ParseOutputV1_3, ROption, Reader, Role,
};
use deja_plugin_toml::TomlReader;
use rusqlite::Connection;
use serde_json::Value;

const WORKSPACE: &str = "f87f6e0b2cf1ae8645cc0c5ffaa99529";
const LEDGER: &str = "6f1c2a7e-3b9d-4e0a-9c41-2d8e5b7a1f03";

fn context(home: &Path) -> HostContext {
    common::context("cursor-editor.toml", home, &[])
}

fn real() -> PathBuf {
    testing::fixtures("cursor-editor").join(format!(
        "real-2024-11/Cursor/User/workspaceStorage/{WORKSPACE}/state.vscdb"
    ))
}

fn parse(path: &Path) -> ParseOutputV1_3 {
    common::parse_with_edits("cursor-editor.toml", path, 0)
}

/// A `state.vscdb` at `path` holding the tables and values of the JSON
/// file `from-docs/<name>.json` (`{"table": {"key": value}}`; a value is
/// written as its JSON text, one as a blob, as Cursor's `value BLOB`
/// columns may hold either), in WAL mode when `wal`.
fn state_db(name: &str, path: &Path) -> Connection {
    let text = std::fs::read_to_string(
        testing::fixtures("cursor-editor").join(format!("from-docs/{name}.json")),
    )
    .unwrap();
    let tables: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let conn = Connection::open(path).unwrap();
    for (table, pairs) in tables {
        conn.execute_batch(&format!(
            "CREATE TABLE {table} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)"
        ))
        .unwrap();
        for (i, (key, value)) in pairs.as_object().unwrap().iter().enumerate() {
            let sql = format!("INSERT INTO {table} VALUES (?1, ?2)");
            match value {
                Value::Null => conn.execute(&sql, rusqlite::params![key, None::<String>]),
                v if i == 1 => {
                    conn.execute(&sql, rusqlite::params![key, v.to_string().into_bytes()])
                }
                v => conn.execute(&sql, rusqlite::params![key, v.to_string()]),
            }
            .unwrap();
        }
    }
    conn
}

#[test]
fn a_real_workspace_database_is_its_composers_and_chat_tabs() {
    let out = parse(&real());
    let o = &out.output;
    assert!(o.warnings.is_empty(), "{:?}", o.warnings);
    // 26 composers with their messages inline and 5 chat tabs.
    assert_eq!(o.sessions.len(), 31);
    assert_eq!(o.skipped_empty, 0);
    let count = |role: Role| {
        o.sessions
            .iter()
            .flat_map(|s| s.messages.iter())
            .filter(|m| m.role == role)
            .count()
    };
    assert_eq!((count(Role::User), count(Role::Assistant)), (63, 63));
    let by_id = |id: &str| o.sessions.iter().find(|s| s.id.as_str() == id).unwrap();

    let composer = by_id("cf2ead9f-6bf9-41d0-829e-a7fcae7ddb5a");
    assert_eq!(
        composer.title.as_ref().map(|t| t.as_str()).into_option(),
        Some("create a dedicated page for the copilot icon from the")
    );
    assert_eq!(composer.started_at_ms, 1_731_797_537_671);
    assert_eq!(composer.updated_at_ms, 1_731_797_581_874);
    let messages = common::messages(composer);
    assert_eq!(messages.len(), 4);
    assert_eq!(
        messages[2],
        (Role::User, "ion footer is not a known element")
    );
    assert!(messages[1]
        .1
        .starts_with("I'll help you create a Copilot page for the AI chat functionality."));

    let tab = by_id("2aa483d1-573c-4039-ae4e-7415e28d2605");
    assert_eq!(
        tab.title.as_ref().map(|t| t.as_str()).into_option(),
        Some("Ionic App Sidebar Customization Guide")
    );
    // A tab keeps only the time of its last request.
    assert_eq!(tab.started_at_ms, 1_731_818_231_743);
    let messages = common::messages(tab);
    assert_eq!(messages.len(), 32);
    assert!(messages[0]
        .1
        .starts_with("We are building an ionic app for android\nadd the following elements"));
    assert_eq!(messages[1].0, Role::Assistant);
    // No workspace.json beside it in the repository it comes from.
    assert_eq!(tab.project.dir, ROption::RNone);
}

#[test]
fn the_project_is_the_folder_in_workspace_json_beside_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.vscdb");
    std::fs::copy(real(), &db).unwrap();
    std::fs::write(
        dir.path().join("workspace.json"),
        br#"{"folder": "file:///c%3A/Users/ydebray/Documents/mobilechat"}"#,
    )
    .unwrap();
    let out = parse(&db);
    assert!(out
        .output
        .sessions
        .iter()
        .all(|s| s.project.dir.as_ref().map(|d| d.as_str())
            == ROption::RSome("c:/Users/ydebray/Documents/mobilechat")));
}

#[test]
fn a_global_database_is_its_composers_messages_in_header_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("globalStorage/state.vscdb");
    drop(state_db("globalStorage", &db));
    let out = parse(&db);
    let o = &out.output;
    assert!(o.warnings.is_empty(), "{:?}", o.warnings);
    // Two conversations; one opened and closed without a message.
    assert_eq!(o.sessions.len(), 2);
    assert_eq!(o.skipped_empty, 1);
    let (i, s) = o
        .sessions
        .iter()
        .enumerate()
        .find(|(_, s)| s.id.as_str() == LEDGER)
        .unwrap();
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()).into_option(),
        Some("Fix the rounding in the ledger totals")
    );
    assert_eq!(s.started_at_ms, 1_767_261_600_000);
    assert_eq!(s.updated_at_ms, 1_767_261_900_000);
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/home/me/code/ledger")
    );
    // What was typed and answered, in the headers' order: not the thinking,
    // not the tool steps' empty texts, not the dropped message.
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "The ledger totals are off by a cent when a row has three decimals; find the rounding bug and fix it."),
            (Role::Assistant, "I'll look at how the totals are summed first."),
            (Role::Assistant, "The totals rounded every row before summing; they now round the sum once, and the three-decimal test passes."),
            (Role::User, "Run the whole ledger suite to be sure."),
            (Role::Assistant, "All forty ledger tests pass."),
        ]
    );
    assert_eq!(s.messages[0].timestamp_ms, 1_767_261_605_000);
    let commands: Vec<(&str, CommandStatus, Option<i32>)> = s
        .commands
        .iter()
        .zip(out.outcomes[i].commands.iter())
        .map(|(c, o)| (c.command.as_str(), o.status, o.exit_code.into_option()))
        .collect();
    assert_eq!(
        commands,
        vec![
            (
                "cargo test -p ledger totals",
                CommandStatus::Failed,
                Some(101)
            ),
            ("cargo test -p ledger", CommandStatus::Succeeded, Some(0)),
        ]
    );
    assert_eq!(
        common::files(s),
        vec![("/home/me/code/ledger/src/totals.rs", FileAction::Edit)]
    );
    assert_eq!(
        out.edit_text(i, 0),
        Some("rows.iter().map(|r| r.amount).sum::<Decimal>().round_dp(2)")
    );

    let older = o.sessions.iter().find(|s| s.id.as_str() != LEDGER).unwrap();
    assert_eq!(
        common::messages(older),
        vec![
            (
                Role::User,
                "What does the nightly import job do with duplicate rows?"
            ),
            (
                Role::Assistant,
                "It keeps the newest row for each account and logs the others."
            ),
        ]
    );
    assert_eq!(older.started_at_ms, 1_764_583_200_000);
}

#[test]
fn a_workspace_database_of_a_later_build_lists_names_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.vscdb");
    drop(state_db("workspaceStorage", &db));
    std::fs::write(
        dir.path().join("workspace.json"),
        br#"{"folder": "file:///home/me/code/ledger"}"#,
    )
    .unwrap();
    let out = parse(&db);
    let o = &out.output;
    // The composers it names are read from the global database.
    assert_eq!(o.skipped_empty, 2);
    assert_eq!(o.sessions.len(), 1);
    let tab = &o.sessions[0];
    assert_eq!(tab.id.as_str(), "tab-1");
    assert_eq!(
        tab.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/home/me/code/ledger")
    );
    assert_eq!(
        common::messages(tab),
        vec![
            (Role::User, "Why does the release build take four minutes?"),
            (
                Role::Assistant,
                "Link-time optimisation is on for every crate; turn it on for the binary only."
            ),
        ]
    );
}

#[cfg(target_os = "linux")]
#[test]
fn discovery_finds_cursors_databases_and_not_vs_codes() {
    let home = tempfile::tempdir().unwrap();
    let found = common::discovered_in(
        &context(home.path()),
        home.path(),
        &[
            ".config/Cursor/User/globalStorage",
            ".config/Cursor/User/workspaceStorage/abc",
            ".config/Code/User/globalStorage",
            ".config/Code/User/workspaceStorage/abc",
        ],
        "state.vscdb",
    );
    let base = home.path().join(".config/Cursor/User");
    assert_eq!(
        found,
        vec![
            base.join("globalStorage/state.vscdb")
                .to_string_lossy()
                .into_owned(),
            base.join("workspaceStorage/abc/state.vscdb")
                .to_string_lossy()
                .into_owned(),
        ]
    );
}

#[test]
fn detection_knows_cursors_databases_by_their_place() {
    let c = context(Path::new("/h"));
    let bytes = std::fs::read(real()).unwrap();
    let head = &bytes[..4096];
    let path = real().to_string_lossy().into_owned();
    assert!(TomlReader::detect_in(&c, &path, head) > 0);
    for other in [
        "/h/.config/Code/User/globalStorage/state.vscdb",
        "/h/.config/Cursor/User/globalStorage/other.vscdb",
    ] {
        assert_eq!(TomlReader::detect_in(&c, other, head), 0, "{other}");
    }
    assert_eq!(
        TomlReader::detect_in(
            &c,
            "/h/.config/Cursor/User/globalStorage/state.vscdb",
            b"not a database"
        ),
        0
    );
}

/// A global database whose conversation is only in its write-ahead log
/// (copied while Cursor held it open), in a folder that is `mode`: read,
/// and nothing in the folder is added, removed or changed.
#[cfg(unix)]
fn a_conversation_in_the_log_is_read_and_nothing_beside_changes(mode: Option<u32>) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let writer = dir.path().join("writer/state.vscdb");
    let conn = state_db("globalStorage", &writer);
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")
        .unwrap();
    conn.execute_batch(
        r#"INSERT INTO cursorDiskKV VALUES ('composerData:in-the-log',
             '{"composerId":"in-the-log","name":"Log","createdAt":1767300000000,
               "fullConversationHeadersOnly":[{"bubbleId":"q","type":1},{"bubbleId":"a","type":2}]}');
           INSERT INTO cursorDiskKV VALUES ('bubbleId:in-the-log:q', '{"type":1,"bubbleId":"q","text":"where is the wombat ledger"}');
           INSERT INTO cursorDiskKV VALUES ('bubbleId:in-the-log:a', '{"type":2,"bubbleId":"a","text":"in the wombat folder"}');"#,
    )
    .unwrap();
    let folder = dir.path().join("Cursor/User/globalStorage");
    std::fs::create_dir_all(&folder).unwrap();
    for name in ["state.vscdb", "state.vscdb-wal"] {
        std::fs::copy(dir.path().join("writer").join(name), folder.join(name)).unwrap();
    }
    drop(conn);
    assert!(
        std::fs::metadata(folder.join("state.vscdb-wal"))
            .unwrap()
            .len()
            > 0
    );
    if let Some(mode) = mode {
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let before = common::snapshot(&folder);
    let out = parse(&folder.join("state.vscdb"));
    let after = common::snapshot(&folder);
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(before, after, "the folder changed");
    let s = out
        .output
        .sessions
        .iter()
        .find(|s| s.id.as_str() == "in-the-log")
        .unwrap();
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "where is the wombat ledger"),
            (Role::Assistant, "in the wombat folder"),
        ]
    );
}

#[cfg(unix)]
#[test]
fn reading_the_database_writes_nothing_beside_it() {
    a_conversation_in_the_log_is_read_and_nothing_beside_changes(None);
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
            testing::rerun_unprivileged(
                "a_database_in_a_folder_deja_may_not_write_to_is_read_from_its_log",
            );
            return;
        }
    }
    a_conversation_in_the_log_is_read_and_nothing_beside_changes(Some(0o555));
}

#[test]
fn resume_opens_the_folder_in_cursor() {
    let (argv, note) = common::resume(
        &context(Path::new("/h")),
        LEDGER,
        Some("/home/me/code/ledger"),
    );
    assert_eq!(argv, vec!["cursor", "/home/me/code/ledger"]);
    assert!(note.contains("agent panel"), "{note}");
}
