//! The Crush reader's rules for text Crush writes itself and for sub-agents,
//! on databases built from Crush's own source (charmbracelet/crush at
//! 37f36e93: the tables of `internal/db/migrations/`, parts as
//! `internal/message/content.go` writes them, the `/init` prompts of
//! `internal/agent/templates/initialize.md.tpl` and its predecessors, task
//! sessions as `internal/session/session.go` creates them, `!` commands as
//! `internal/shell/persist_message.go` keeps them). No licensed real
//! database has a sub-agent or a summary; the real one
//! (`fixtures/golden/crush/real-exabgp`) has an `/init` prompt.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::{
    CommandOrigin, CommandStatus, HostContext, ParseOutput, ParseRequest, ROption, Reader, Role,
};
use deja_plugin_toml::TomlReader;
use rusqlite::{params, Connection};

fn context() -> HostContext {
    common::context("crush.toml", Path::new("/nonexistent"), &[])
}

/// Crush's tables as its migrations leave them; `summary_column` says
/// whether `messages.is_summary_message` is there (added 2025-08-10).
fn create(db: &Path, summary_column: bool) -> Connection {
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let conn = Connection::open(db).unwrap();
    conn.execute_batch(
        "CREATE TABLE sessions (
            id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
            message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
            updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT);
         CREATE TABLE messages (
            id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
            parts TEXT NOT NULL DEFAULT '[]', model TEXT, created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT);",
    )
    .unwrap();
    if summary_column {
        conn.execute_batch(
            "ALTER TABLE messages ADD COLUMN is_summary_message INTEGER DEFAULT 0 NOT NULL;",
        )
        .unwrap();
    }
    conn
}

fn session(conn: &Connection, id: &str, parent: Option<&str>, title: &str, at: i64) {
    conn.execute(
        "INSERT INTO sessions (id, parent_session_id, title, updated_at, created_at)
         VALUES (?1, ?2, ?3, ?4, ?4)",
        params![id, parent, title, at],
    )
    .unwrap();
}

/// A message whose parts are one text part (or a tool call when `text`
/// starts with `tool:`) and a finish part, as Crush writes them.
fn message(conn: &Connection, id: &str, session: &str, role: &str, text: &str, at: i64) {
    let part = match text.strip_prefix("tool:") {
        Some(name) => serde_json::json!({"type": "tool_call", "data": {
            "id": format!("call_{id}"), "name": name, "input": "{\"command\":\"ls\"}",
            "type": "function", "finished": true}}),
        None => serde_json::json!({"type": "text", "data": {"text": text}}),
    };
    let parts =
        serde_json::json!([part, {"type": "finish", "data": {"reason": "stop", "time": at}}]);
    conn.execute(
        "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
        params![id, session, role, parts.to_string(), at],
    )
    .unwrap();
}

fn parse(db: &Path) -> ParseOutput {
    let bytes = std::fs::read(db).unwrap();
    let c = context();
    TomlReader::parse(&ParseRequest {
        path: db.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &c,
    })
    .unwrap()
}

/// The `/init` prompt of Crush since October 2025, rendered for `CRUSH.md`
/// (the template's first two paragraphs).
const INIT_NOW: &str = "Analyze this codebase and create/update **CRUSH.md** to help future agents work effectively in this repository.\n\n**First**: Check if directory is empty or contains only config files. If so, stop and say \"Directory appears empty or only contains config. Add source code first, then run this command to generate CRUSH.md.\"";
/// The prompt from July to October 2025 (`internal/llm/prompt/init.md`),
/// with the stray backtick some builds sent (the real exabgp database).
const INIT_2025: &str = "`Please analyze this codebase and create a **CRUSH.md** file containing:\n\n- Build/lint/test commands - especially for running a single test\n- Code style guidelines including imports, formatting, types, naming conventions, error handling, etc.";

fn db_path(dir: &Path) -> PathBuf {
    dir.join("app/.crush/crush.db")
}

#[test]
fn init_prompts_summaries_and_title_sessions_are_not_the_persons_words() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_path(dir.path());
    let conn = create(&db, true);
    session(&conn, "S", None, "Set up the project", 1_760_000_000_000);
    message(&conn, "m1", "S", "user", INIT_NOW, 1_760_000_000_001);
    message(
        &conn,
        "m2",
        "S",
        "assistant",
        "tool:bash",
        1_760_000_000_002,
    );
    message(
        &conn,
        "m3",
        "S",
        "assistant",
        "Wrote CRUSH.md.",
        1_760_000_000_003,
    );
    message(
        &conn,
        "m4",
        "S",
        "user",
        "Analyze this codebase for dead code, please",
        1_760_000_000_004,
    );
    message(
        &conn,
        "m5",
        "S",
        "assistant",
        "Two functions are unused.",
        1_760_000_000_005,
    );
    // A compaction: the summary is an assistant message marked as such.
    message(
        &conn,
        "m6",
        "S",
        "assistant",
        "Summary: the user set up CRUSH.md and asked about dead code.",
        1_760_000_000_006,
    );
    conn.execute(
        "UPDATE messages SET is_summary_message = 1 WHERE id = 'm6'",
        [],
    )
    .unwrap();
    conn.execute(
        "UPDATE sessions SET summary_message_id = 'm6' WHERE id = 'S'",
        [],
    )
    .unwrap();
    message(
        &conn,
        "m7",
        "S",
        "user",
        "And now remove them",
        1_760_000_000_007,
    );
    // Older builds' title side session, with the request for a title.
    session(
        &conn,
        "title-S",
        Some("S"),
        "Generate a title",
        1_760_000_000_001,
    );
    message(
        &conn,
        "t1",
        "title-S",
        "user",
        "Generate a title for: set up",
        1_760_000_000_001,
    );
    drop(conn);

    let out = parse(&db);
    // Hand count: m1 (the /init prompt), m2 (a tool call only) and m6 (the
    // summary) are not messages; the title session is no session.
    assert_eq!(out.sessions.len(), 1, "{out:?}");
    let s = &out.sessions[0];
    assert_eq!(
        common::messages(s),
        vec![
            (Role::Assistant, "Wrote CRUSH.md."),
            (Role::User, "Analyze this codebase for dead code, please"),
            (Role::Assistant, "Two functions are unused."),
            (Role::User, "And now remove them"),
        ]
    );
    assert_eq!(s.commands.len(), 1, "the /init turn's tool calls are kept");
}

/// The summary as Crush wrote it from July to October 2025
/// (`internal/llm/agent/agent.go`, `Summarize`): the model's summary, then
/// the shell's folder under a heading of Crush's.
const SUMMARY_2025: &str = "We set up CRUSH.md and fixed the tests.\n\n**Current working directory of the persistent shell**\n\n/home/me/app";

#[test]
fn a_summary_is_found_by_its_text_in_databases_before_the_summary_column() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_path(dir.path());
    let conn = create(&db, false);
    session(&conn, "S", None, "Old", 1_754_000_000_000);
    message(&conn, "m1", "S", "user", INIT_2025, 1_754_000_000_001);
    message(
        &conn,
        "m2",
        "S",
        "assistant",
        "Created CRUSH.md",
        1_754_000_000_002,
    );
    message(
        &conn,
        "m3",
        "S",
        "assistant",
        SUMMARY_2025,
        1_754_000_000_003,
    );
    conn.execute(
        "UPDATE sessions SET summary_message_id = 'm3' WHERE id = 'S'",
        [],
    )
    .unwrap();
    message(&conn, "m4", "S", "user", "thanks", 1_754_000_000_004);
    drop(conn);
    let out = parse(&db);
    assert_eq!(
        common::messages(&out.sessions[0]),
        vec![
            (Role::Assistant, "Created CRUSH.md"),
            (Role::User, "thanks")
        ]
    );
}

#[test]
fn a_sub_agents_session_is_the_child_of_the_session_that_ran_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_path(dir.path());
    let conn = create(&db, true);
    session(&conn, "S", None, "Find the bug", 1_760_000_000_000);
    message(
        &conn,
        "m1",
        "S",
        "user",
        "where is the retry loop?",
        1_760_000_000_001,
    );
    message(
        &conn,
        "m2",
        "S",
        "assistant",
        "tool:agent",
        1_760_000_000_002,
    );
    // `CreateAgentToolSessionID`: "<message id>$$<tool call id>".
    let child = "m2$$call_m2";
    session(
        &conn,
        child,
        Some("S"),
        "New Agent Session",
        1_760_000_000_003,
    );
    message(
        &conn,
        "c1",
        child,
        "user",
        "Find the retry loop in the client package",
        1_760_000_000_004,
    );
    message(
        &conn,
        "c2",
        child,
        "assistant",
        "It is in client/retry.go.",
        1_760_000_000_005,
    );
    message(
        &conn,
        "m3",
        "S",
        "assistant",
        "It is in client/retry.go.",
        1_760_000_000_006,
    );
    drop(conn);

    let out = parse(&db);
    assert_eq!(out.sessions.len(), 2);
    let by_id = |id: &str| out.sessions.iter().find(|s| s.id.as_str() == id).unwrap();
    let (parent, sub) = (by_id("S"), by_id(child));
    assert_eq!(parent.parent_id, ROption::RNone);
    assert_eq!(sub.parent_id, ROption::RSome("S".into()));
    assert_eq!(sub.native_id.as_str(), child);
    assert_eq!(common::messages(sub).len(), 2);
    assert_eq!(sub.project.dir, parent.project.dir);
}

/// A `!` command (Crush's bang mode, since June 2026): a `user` message
/// whose one part is the command, its output and its exit code
/// (`message.ShellCommand`, `internal/shell/persist_message.go`).
fn bang(conn: &Connection, id: &str, session: &str, command: &str, exit_code: i32, at: i64) {
    let parts = serde_json::json!([{"type": "shell_command", "data": {
        "command": command, "output": "boom\n", "exit_code": exit_code}}]);
    conn.execute(
        "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)
         VALUES (?1, ?2, 'user', ?3, ?4, ?4)",
        params![id, session, parts.to_string(), at],
    )
    .unwrap();
}

#[test]
fn a_bang_command_is_a_command_the_person_ran_with_its_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_path(dir.path());
    let conn = create(&db, true);
    session(&conn, "S", None, "Fix the build", 1_780_000_000_000);
    bang(&conn, "b1", "S", "make test", 2, 1_780_000_000_001);
    message(
        &conn,
        "m1",
        "S",
        "user",
        "why does make test fail?",
        1_780_000_000_002,
    );
    message(
        &conn,
        "m2",
        "S",
        "assistant",
        "tool:bash",
        1_780_000_000_003,
    );
    message(
        &conn,
        "m3",
        "S",
        "assistant",
        "The linker misses libz.",
        1_780_000_000_004,
    );
    bang(&conn, "b2", "S", "git status --short", 0, 1_780_000_000_005);
    drop(conn);

    let bytes = std::fs::read(&db).unwrap();
    let c = context();
    let out = TomlReader::parse_with_outcomes(&ParseRequest {
        path: db.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &c,
    })
    .unwrap();
    let s = &out.output.sessions[0];
    // The `!` messages hold no words of the person's: no message.
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "why does make test fail?"),
            (Role::Assistant, "The linker misses libz."),
        ]
    );
    let commands: Vec<(&str, CommandOrigin)> = s
        .commands
        .iter()
        .map(|c| (c.command.as_str(), c.origin))
        .collect();
    assert_eq!(
        commands,
        vec![
            ("make test", CommandOrigin::User),
            ("ls", CommandOrigin::Agent),
            ("git status --short", CommandOrigin::User),
        ]
    );
    assert_eq!(s.commands[0].timestamp_ms, 1_780_000_000_001);
    let ends: Vec<(CommandStatus, Option<i32>)> = out.outcomes[0]
        .commands
        .iter()
        .map(|o| (o.status, o.exit_code.into_option()))
        .collect();
    assert_eq!(
        ends,
        vec![
            (CommandStatus::Failed, Some(2)),
            (CommandStatus::Unknown, None),
            (CommandStatus::Succeeded, Some(0)),
        ]
    );
}
