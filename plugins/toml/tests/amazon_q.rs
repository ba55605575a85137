//! The Amazon Q Developer CLI and Kiro CLI reader, written only in TOML
//! (`readers/amazon-q.toml`), over databases built from
//! `fixtures/golden/amazon-q/from-source`: conversations as the programs'
//! own serde structs write them (from source, no real file; see
//! SOURCES.md), in the tables their migrations create.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{
    CommandStatus, FileAction, HostContext, ParseOutputV1_3, ParseRequest, ROption, Reader, Role,
    Session,
};
use deja_plugin_toml::TomlReader;
use rusqlite::Connection;
use serde_json::Value;

const LEDGER: &str = "9b1f6c3e-2d4a-4f8b-a6e1-7c5d3b2a1f00";
const NOTES: &str = "3c2e8a71-5b6d-4e9f-8a10-2f4b6c8d0e12";
const STACKS: &str = "d41c7e2a-8f3b-4a6c-9e5d-1b2a3c4d5e6f";
const REGION: &str = "e52d8f3b-9a4c-4b7d-8f6e-2c3b4d5e6f70";

fn context(home: &Path) -> HostContext {
    common::context("amazon-q.toml", home, &[])
}

/// `data.sqlite3` in `folder` below `dir`, holding the tables of
/// `from-source/<name>.json` as Amazon Q's migrations create them
/// (`conversations`: key and value; `conversations_v2`, Kiro CLI's: key,
/// conversation id, value and its times).
fn database(name: &str, dir: &Path, folder: &str) -> PathBuf {
    let text = std::fs::read_to_string(
        testing::fixtures("amazon-q").join(format!("from-source/{name}.json")),
    )
    .unwrap();
    let tables: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    let path = dir.join(folder).join("data.sqlite3");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT);")
        .unwrap();
    for (key, value) in tables["conversations"].as_object().unwrap() {
        conn.execute(
            "INSERT INTO conversations VALUES (?1, ?2)",
            rusqlite::params![key, value.to_string()],
        )
        .unwrap();
    }
    if let Some(rows) = tables.get("conversations_v2") {
        conn.execute_batch(
            "CREATE TABLE conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL, \
             value TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, \
             PRIMARY KEY (key, conversation_id));",
        )
        .unwrap();
        for row in rows.as_array().unwrap() {
            conn.execute(
                "INSERT INTO conversations_v2 VALUES (?1, ?2, ?3, ?4, ?5)",
                rusqlite::params![
                    row["key"].as_str().unwrap(),
                    row["conversation_id"].as_str().unwrap(),
                    row["value"].to_string(),
                    row["created_at"].as_i64().unwrap(),
                    row["updated_at"].as_i64().unwrap(),
                ],
            )
            .unwrap();
        }
    }
    path
}

fn parse(path: &Path) -> ParseOutputV1_3 {
    common::parse_with_edits("amazon-q.toml", path, 1_000)
}

fn index_of(out: &ParseOutputV1_3, id: &str) -> usize {
    out.output
        .sessions
        .iter()
        .position(|s| s.id.as_str() == id)
        .unwrap_or_else(|| panic!("no session {id}"))
}

fn project(s: &Session) -> Option<&str> {
    s.project.dir.as_ref().map(|d| d.as_str()).into_option()
}

/// Each command with its outcome and exit code.
fn commands(out: &ParseOutputV1_3, i: usize) -> Vec<(&str, CommandStatus, Option<i32>)> {
    let s = &out.output.sessions[i];
    s.commands
        .iter()
        .zip(out.outcomes[i].commands.iter())
        .map(|(c, o)| (c.command.as_str(), o.status, o.exit_code.into_option()))
        .collect()
}

#[test]
fn amazon_qs_conversations_are_their_prompts_answers_and_tool_calls() {
    let dir = tempfile::tempdir().unwrap();
    let out = parse(&database("amazon-q", dir.path(), "amazon-q"));
    let o = &out.output;
    assert!(o.warnings.is_empty(), "{:?}", o.warnings);
    assert_eq!(o.sessions.len(), 2);

    let i = index_of(&out, LEDGER);
    let ledger = &o.sessions[i];
    assert_eq!(project(ledger), Some("/home/me/code/ledger"));
    assert_eq!(ledger.title, ROption::RNone);
    // The first prompt's time (10:00 at +02:00), the last answer's end.
    assert_eq!(ledger.started_at_ms, 1_757_836_800_000);
    assert_eq!(ledger.updated_at_ms, 1_757_836_983_000);
    // What the person typed, without the context Q sends with it (the
    // AGENTS.md hook text, the working directory, the time), and the
    // model's text; turns that only return tool results are no message.
    assert_eq!(
        common::messages(ledger),
        vec![
            (Role::User, "Why does the ledger total drift by a cent?"),
            (Role::Assistant, "Let me look at how the totals are summed."),
            (
                Role::Assistant,
                "The total sums floating-point amounts; I'll sum integer cents instead."
            ),
            (Role::Assistant, "The tests pass. I'll note the change."),
            (
                Role::Assistant,
                "Fixed: totals are now summed in integer cents, so they no longer drift, and the tests pass."
            ),
            (Role::User, "Also run the benchmarks"),
            (Role::Assistant, "Running the benchmarks."),
            (Role::User, "Skip the benchmarks, they take too long"),
            (Role::Assistant, "Understood, I left the benchmarks alone."),
        ]
    );
    assert!(ledger
        .messages
        .iter()
        .all(|m| !m.text.contains("CONTEXT ENTRY") && !m.text.contains("AGENTS.md")));
    assert_eq!(
        ledger.messages[1].native_id.as_ref().map(|s| s.as_str()),
        ROption::RSome("msg-1")
    );
    assert_eq!(ledger.messages[1].timestamp_ms, 1_757_836_804_000);
    assert_eq!(
        common::files(ledger),
        vec![
            ("/home/me/code/ledger/src/total.rs", FileAction::Read),
            ("/home/me/code/ledger/src/total.rs", FileAction::Edit),
            ("/home/me/code/ledger/NOTES.md", FileAction::Edit),
        ]
    );
    let texts: Vec<Option<&str>> = out.edits[i]
        .texts
        .iter()
        .map(|t| t.as_ref().map(|t| t.as_str()).into_option())
        .collect();
    assert_eq!(
        texts,
        vec![
            None,
            Some("    items.iter().map(|i| i.cents).sum::<i64>()"),
            Some("Totals are summed in integer cents.\n"),
        ]
    );
    // The test run's exit status from its result; the benchmarks the
    // person cancelled.
    assert_eq!(
        commands(&out, i),
        vec![
            ("cargo test --quiet", CommandStatus::Succeeded, Some(0)),
            ("cargo bench", CommandStatus::Failed, None),
        ]
    );
}

#[test]
fn a_conversation_of_before_1_13_is_its_pairs_of_user_and_assistant() {
    let dir = tempfile::tempdir().unwrap();
    let out = parse(&database("amazon-q", dir.path(), "amazon-q"));
    let i = index_of(&out, NOTES);
    let notes = &out.output.sessions[i];
    assert_eq!(project(notes), Some("/home/me/code/notes"));
    assert_eq!(
        common::messages(notes),
        vec![
            (Role::User, "Which files mention TODO?"),
            (Role::Assistant, "Searching the folder."),
            (Role::Assistant, "Nothing matched; let me check the README."),
            (
                Role::Assistant,
                "No file mentions TODO; the README holds only a title."
            ),
            // `q chat --resume` asked for this in the person's name.
            (
                Role::Assistant,
                "We looked for TODO notes in this folder and found none."
            ),
        ]
    );
    assert!(notes
        .messages
        .iter()
        .all(|m| !m.text.contains("summarize our conversation")));
    // Nothing in it is dated: the database's time is its date.
    assert_eq!(notes.started_at_ms, 1_000);
    assert_eq!(
        common::files(notes),
        vec![("/home/me/code/notes/README.md", FileAction::Read)]
    );
    assert_eq!(
        commands(&out, i),
        vec![("grep -rl TODO .", CommandStatus::Failed, Some(1))]
    );
}

#[test]
fn kiro_clis_conversations_are_many_per_folder_with_their_times() {
    let dir = tempfile::tempdir().unwrap();
    let out = parse(&database("kiro-cli", dir.path(), "kiro-cli"));
    let o = &out.output;
    assert!(o.warnings.is_empty(), "{:?}", o.warnings);
    assert_eq!(o.sessions.len(), 2);
    let i = index_of(&out, STACKS);
    let stacks = &o.sessions[i];
    assert_eq!(project(stacks), Some("/home/me/code/infra"));
    // created_at and updated_at of the row.
    assert_eq!(stacks.started_at_ms, 1_767_258_000_000);
    assert_eq!(stacks.updated_at_ms, 1_767_258_012_000);
    assert_eq!(
        common::messages(stacks),
        vec![
            (Role::User, "List the stacks in this folder"),
            (Role::Assistant, "There are two stacks: db and network."),
        ]
    );
    assert_eq!(
        commands(&out, i),
        vec![("ls stacks", CommandStatus::Succeeded, Some(0))]
    );
    let region = &o.sessions[index_of(&out, REGION)];
    assert_eq!(project(region), Some("/home/me/code/infra"));
    assert_eq!(region.started_at_ms, 1_767_362_400_000);
    assert_eq!(
        common::messages(region),
        vec![
            (Role::User, "Which region does the db stack deploy to?"),
            (
                Role::Assistant,
                "eu-west-1, as stacks/db/config.json sets it."
            ),
        ]
    );
}

#[test]
fn a_database_without_conversations_has_no_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("amazon-q/data.sqlite3");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let conn = Connection::open(&path).unwrap();
    // The tables of Amazon Q before 1.10, which kept no conversation.
    conn.execute_batch(
        "CREATE TABLE state (key TEXT PRIMARY KEY, value BLOB);
         CREATE TABLE auth_kv (key TEXT PRIMARY KEY, value TEXT);",
    )
    .unwrap();
    drop(conn);
    let out = parse(&path);
    assert!(out.output.sessions.is_empty());
    assert!(out.output.warnings.is_empty(), "{:?}", out.output.warnings);
}

#[test]
fn reading_the_database_writes_nothing_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = database("kiro-cli", dir.path(), "kiro-cli");
    let folder = path.parent().unwrap();
    let before = common::snapshot(folder);
    let out = parse(&path);
    assert_eq!(out.output.sessions.len(), 2);
    assert_eq!(common::snapshot(folder), before);
}

#[cfg(target_os = "linux")]
#[test]
fn discovery_finds_both_programs_databases() {
    let home = tempfile::tempdir().unwrap();
    let found = common::discovered_in(
        &context(home.path()),
        home.path(),
        &[
            ".local/share/amazon-q",
            ".local/share/kiro-cli",
            ".local/share/other",
        ],
        "data.sqlite3",
    );
    let base = home.path().join(".local/share");
    assert_eq!(
        found,
        vec![
            base.join("amazon-q/data.sqlite3")
                .to_string_lossy()
                .into_owned(),
            base.join("kiro-cli/data.sqlite3")
                .to_string_lossy()
                .into_owned(),
        ]
    );
}

#[test]
fn detection_knows_the_databases_by_their_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = database("amazon-q", dir.path(), "amazon-q");
    let bytes = std::fs::read(&path).unwrap();
    let head = &bytes[..4096.min(bytes.len())];
    let c = context(Path::new("/h"));
    for ours in [
        "/h/.local/share/amazon-q/data.sqlite3",
        "/h/Library/Application Support/kiro-cli/data.sqlite3",
        "C:\\Users\\me\\AppData\\Local\\amazon-q\\data.sqlite3",
    ] {
        assert!(TomlReader::detect_in(&c, ours, head) > 0, "{ours}");
    }
    for other in [
        "/h/.local/share/other/data.sqlite3",
        "/h/.local/share/amazon-q/other.sqlite3",
    ] {
        assert_eq!(TomlReader::detect_in(&c, other, head), 0, "{other}");
    }
}

#[test]
fn resume_reopens_the_folders_conversation() {
    let (argv, note) = common::resume(
        &context(Path::new("/h")),
        LEDGER,
        Some("/home/me/code/ledger"),
    );
    assert_eq!(argv, ["q", "chat", "--resume"]);
    assert!(note.contains("kiro-cli chat --resume"), "{note}");
}

/// `columns` of a `[[source.kv]]` entry: the row's other columns set into
/// the session's value under their names, replacing a field of that name;
/// a null is left out.
#[test]
fn key_value_columns_join_the_sessions_value() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kv.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE kv (k TEXT, v TEXT, made INTEGER, folder TEXT);
         INSERT INTO kv VALUES ('s:one', '{\"id\": \"one\", \"folder\": \"/value/says\", \"turns\": [{\"who\": \"user\", \"said\": \"hello\"}]}', 1700000000000, '/column/says');
         INSERT INTO kv VALUES ('s:two', '{\"id\": \"two\", \"folder\": \"/value/says\", \"turns\": [{\"who\": \"user\", \"said\": \"hi\"}]}', 1700000001000, NULL);",
    )
    .unwrap();
    drop(conn);
    let description = r#"
[reader]
harness = "kvcols"
[files]
roots = ["/nonexistent"]
glob = ["kv.db"]
[source]
kind = "sqlite"
[[source.kv]]
table = "kv"
key = "k"
value = "v"
sessions = "s:{session}"
records_at = "/turns"
columns = ["made", "folder", "k"]
[session]
id = "/id"
project = "/folder"
started = "/made"
[message]
role = "/who"
text = "/said"
"#;
    let mut c = testing::context(Path::new("/h"), &[], "{}");
    for (key, value) in [
        (deja_plugin_api::DESCRIPTION_VAR, description),
        (deja_plugin_api::DESCRIPTION_PATH_VAR, "kvcols.toml"),
    ] {
        c.env.push(deja_plugin_api::EnvVar {
            key: key.into(),
            value: value.into(),
        });
    }
    let bytes = std::fs::read(&path).unwrap();
    let out = TomlReader::parse(&ParseRequest {
        path: path.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &c,
    })
    .unwrap();
    assert_eq!(out.sessions.len(), 2);
    let one = out
        .sessions
        .iter()
        .find(|s| s.id.as_str() == "one")
        .unwrap();
    assert_eq!(project(one), Some("/column/says"));
    assert_eq!(one.started_at_ms, 1_700_000_000_000);
    let two = out
        .sessions
        .iter()
        .find(|s| s.id.as_str() == "two")
        .unwrap();
    // A null column leaves the value's own field.
    assert_eq!(project(two), Some("/value/says"));
    assert_eq!(two.started_at_ms, 1_700_000_001_000);
}
