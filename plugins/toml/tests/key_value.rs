//! Sessions kept in SQLite key-value tables (`[[source.kv]]`), read by a
//! description of its own: keys matched by their patterns, records in key
//! order or in the order the session's value lists them, records inline in
//! the value, many sessions in one value, a missing table, a view in place
//! of the table, and the checks that name a mistake's key.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::{testing, EnvVar, HostContext, ParseOutput, ParseRequest, Reader, Role};
use deja_plugin_toml::TomlReader;
use rusqlite::Connection;
use serde_json::{json, Value};

/// A notebook that keeps each chat under `chat/<id>` and each message under
/// `msg/<chat id>/<n>` in a table `store(k, v)`, and, under one key
/// `archive`, older chats with their messages inline.
const NOTEBOOK: &str = r#"
[reader]
harness = "notebook"

[files]
roots = ["~/.notebook"]
glob = ["*.db"]

[source]
kind = "sqlite"

[[source.kv]]
table = "store"
key = "k"
value = "v"
sessions = "chat/{session}"
records = "msg/{session}/{record}"
ORDER

[[source.kv]]
table = "store"
key = "k"
value = "v"
sessions = "archive"
each = "/chats"
records_at = "/messages"

[[source.kv]]
table = "absent"
sessions = "chat/{session}"
records = "msg/{session}/{record}"

[session]
id = "/uuid"
title = "/title"
started = "/at"

[message]
role = "/from"
roles = { user = ["me"], assistant = ["bot"] }
text = "/said"
time = "/at"
"#;

fn context(text: &str) -> HostContext {
    let mut c = testing::context(Path::new("/nonexistent"), &[], "{}");
    c.env.push(EnvVar {
        key: deja_plugin_api::DESCRIPTION_VAR.into(),
        value: text.into(),
    });
    c
}

fn description(order: &str) -> String {
    NOTEBOOK.replace("ORDER", order)
}

/// A database at `<dir>/n.db` holding `pairs` in `store(k, v)`.
fn database(dir: &Path, pairs: &[(&str, Value)]) -> std::path::PathBuf {
    let path = dir.join("n.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE store (k TEXT UNIQUE ON CONFLICT REPLACE, v BLOB)")
        .unwrap();
    for (k, v) in pairs {
        conn.execute(
            "INSERT INTO store VALUES (?1, ?2)",
            rusqlite::params![k, v.to_string()],
        )
        .unwrap();
    }
    path
}

fn parse(text: &str, path: &Path) -> Result<ParseOutput, deja_plugin_api::PluginError> {
    let bytes = std::fs::read(path).unwrap();
    TomlReader::parse(&ParseRequest {
        path: path.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &context(text),
    })
}

fn said(from: &str, text: &str, at: i64) -> Value {
    json!({"from": from, "said": text, "at": at})
}

fn pairs() -> Vec<(&'static str, Value)> {
    vec![
        (
            "chat/c1",
            json!({"title": "Otters", "at": 1_700_000_000_000_i64, "order": ["2", "1", "9"]}),
        ),
        (
            "msg/c1/1",
            said("bot", "they hold hands", 1_700_000_002_000),
        ),
        (
            "msg/c1/2",
            said("me", "why do otters float", 1_700_000_001_000),
        ),
        // Another chat's message, and keys of other kinds.
        ("msg/c10/1", said("me", "a message of chat c10", 1)),
        ("chat-settings", json!({"theme": "dark"})),
        ("chat/c10", json!({"title": "Ten"})),
        (
            "archive",
            json!({"chats": [
                {"uuid": "old-1", "title": "Old", "at": 1_600_000_000_000_i64,
                 "messages": [said("me", "an archived question", 1_600_000_000_000),
                              said("bot", "an archived answer", 1_600_000_001_000)]},
                {"uuid": "old-2", "messages": []}
            ]}),
        ),
    ]
}

fn by_id<'a>(out: &'a ParseOutput, id: &str) -> &'a deja_plugin_api::Session {
    out.sessions
        .iter()
        .find(|s| s.id.as_str() == id)
        .unwrap_or_else(|| panic!("no session {id}"))
}

#[test]
fn records_are_the_keys_of_their_session_in_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &pairs());
    let out = parse(&description(""), &db).unwrap();
    // The session's id is its key's part when its value names none.
    let ids: Vec<&str> = out.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, vec!["c1", "c10", "old-1"], "{:?}", out.warnings);
    let c1 = by_id(&out, "c1");
    assert_eq!(
        c1.title.as_ref().map(|t| t.as_str()).into_option(),
        Some("Otters")
    );
    assert_eq!(c1.started_at_ms, 1_700_000_000_000);
    assert_eq!(
        common::messages(c1),
        vec![
            (Role::Assistant, "they hold hands"),
            (Role::User, "why do otters float"),
        ]
    );
    // `msg/c10/1` is chat c10's, not c1's: a key's part ends where the
    // pattern's text after it begins.
    assert_eq!(
        common::messages(by_id(&out, "c10")),
        vec![(Role::User, "a message of chat c10")]
    );
    // Many sessions in one value, their records inline; one without any.
    let old = by_id(&out, "old-1");
    assert_eq!(old.messages.len(), 2);
    assert_eq!(old.messages[1].text.as_str(), "an archived answer");
    assert_eq!(out.skipped_empty, 1);
}

#[test]
fn records_follow_the_order_the_sessions_value_lists_and_only_those() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &pairs());
    let out = parse(&description(r#"order = { at = "/order" }"#), &db).unwrap();
    assert_eq!(
        common::messages(by_id(&out, "c1")),
        vec![
            (Role::User, "why do otters float"),
            (Role::Assistant, "they hold hands"),
        ]
    );
    // A session whose value lists nothing is read in key order.
    assert_eq!(by_id(&out, "c10").messages.len(), 1);
}

#[test]
fn a_value_that_is_not_json_or_is_null_names_no_session() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), &pairs());
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(
        "INSERT INTO store VALUES ('chat/broken', 'not json {');
         INSERT INTO store VALUES ('chat/gone', NULL);
         INSERT INTO store VALUES ('msg/broken/1', 'not json either');",
    )
    .unwrap();
    drop(conn);
    let out = parse(&description(""), &db).unwrap();
    let ids: Vec<&str> = out.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, vec!["c1", "c10", "old-1"]);
}

#[test]
fn a_view_in_place_of_the_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE VIEW store AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c)
           SELECT 'chat/'||x AS k, '{}' AS v FROM c",
    )
    .unwrap();
    drop(conn);
    let error = parse(&description(""), &path)
        .unwrap_err()
        .message
        .to_string();
    assert!(
        error.contains("`store`") && error.contains("a view"),
        "{error}"
    );
}

#[test]
fn a_database_without_the_tables_has_no_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE other (k TEXT, v TEXT)")
        .unwrap();
    let out = parse(&description(""), &path).unwrap();
    assert!(out.sessions.is_empty());
}

#[test]
fn mistakes_name_their_key() {
    let cases = [
        (
            NOTEBOOK.replace(
                "records = \"msg/{session}/{record}\"\nORDER",
                "records = \"msg/{session}\"",
            ),
            "source.kv[0].records",
        ),
        (
            description("").replace("table = \"store\"\nkey", "table = \"store; DROP\"\nkey"),
            "source.kv[0].table",
        ),
        (
            description("").replace("chat/{session}\"\nrecords", "chat/{sesion}\"\nrecords"),
            "source.kv[0].sessions",
        ),
        (
            description("").replace("id = \"/uuid\"\n", ""),
            "source.kv[1].sessions",
        ),
        (
            description("").replace(
                "kind = \"sqlite\"",
                "kind = \"sqlite\"\nsessions = \"SELECT 1\"",
            ),
            "source.sessions",
        ),
        (
            description(r#"order = { at = "/order" }"#).replace(
                "records_at = \"/messages\"",
                "records_at = \"/messages\"\norder = { at = \"/order\" }",
            ),
            "source.kv[1].order",
        ),
    ];
    for (text, key) in cases {
        let error = match deja_plugin_toml::description::parse("notebook.toml", &text) {
            Ok(_) => panic!("{key}: the mistake was not found"),
            Err(e) => e.to_string(),
        };
        assert!(error.contains(&format!("key `{key}`")), "{key}: {error}");
    }
    assert!(deja_plugin_toml::description::parse("notebook.toml", &description("")).is_ok());
}
