//! The LLM reader, written only in TOML (`readers/llm.toml`):
//! `fixtures/golden/llm/real-0.36/logs.db` is the database LLM 0.36 wrote
//! in a run against a scripted model: a system prompt, a turn with a call
//! of its `llm_version` tool, and a second turn going on with the same
//! conversation (`-c`); `real-0.31-then-0.36/logs.db` holds a
//! conversation of two turns LLM 0.31 logged (its `conversations` and
//! `responses`), then one LLM 0.36 logged after the upgrade (a thread).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{HostContext, ParseOutput, ROption, Role};
use deja_plugin_toml::TomlReader;
use rusqlite::Connection;

const THREAD: &str = "01m94n3m94jsvwvyqwq2f1a7jp";

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("llm.toml", home, env)
}

fn golden() -> PathBuf {
    testing::fixtures("llm").join("real-0.36/logs.db")
}

fn parse(db: &Path) -> ParseOutput {
    testing::parse_file::<TomlReader>(db, &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn a_conversation_llm_wrote_reads_as_typed_and_answered() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("logs.db");
    std::fs::copy(golden(), &db).unwrap();
    let before = common::snapshot(dir.path());
    let out = parse(&db);
    let s = common::only_session(&out);
    assert_eq!(s.id.as_str(), THREAD);
    assert_eq!(s.project.dir, ROption::RNone);
    // The system prompt and the tool's result are not messages.
    assert_eq!(
        common::messages(s),
        vec![
            (
                Role::User,
                "Why does the ledger show rows of other tenants?"
            ),
            (Role::Assistant, "Looking at the version first."),
            (
                Role::Assistant,
                "The ledger query lost its tenant predicate in the join."
            ),
            (Role::User, "Which migration added the tenant column?"),
            (
                Role::Assistant,
                "Migration 0042 added the tenant column to the ledger."
            ),
        ]
    );
    assert!(s.commands.is_empty());
    // Dated by the thread and its turns: 2026-12-06 03:07:08 UTC on.
    assert_eq!(s.started_at_ms / 1000, 1_796_526_428);
    assert!(s.messages[3].timestamp_ms > s.messages[0].timestamp_ms);
    // Read from a copy: nothing beside the database is created or changed.
    assert_eq!(common::snapshot(dir.path()), before);
}

#[test]
fn conversations_logged_before_threads_are_read_beside_the_threads() {
    let db = testing::fixtures("llm").join("real-0.31-then-0.36/logs.db");
    let out = parse(&db);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let read: Vec<(&str, Vec<(Role, &str)>)> = out
        .sessions
        .iter()
        .map(|s| (s.id.as_str(), common::messages(s)))
        .collect();
    assert_eq!(
        read,
        vec![
            (
                "01m94nbxpj4dkbrp7ryaxdhn5w",
                common::LEDGER_ANSWERS.to_vec()
            ),
            (
                "01m94nc03zrmh55c2czqgt2psy",
                vec![
                    (Role::User, "Which job exports the ledger?"),
                    (
                        Role::Assistant,
                        "The nightly export reads the ledger without a tenant."
                    ),
                ]
            ),
        ]
    );
    // The older conversation is dated by its first response.
    assert_eq!(out.sessions[0].started_at_ms / 1000, 1_796_526_700);
}

#[test]
fn a_fork_holds_the_messages_up_to_where_it_left_its_thread() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("logs.db");
    std::fs::copy(golden(), &db).unwrap();
    // A second thread whose tip is the first answer, as `llm` writes a
    // fork: it shares the messages before it.
    let conn = Connection::open(&db).unwrap();
    conn.execute(
        "INSERT INTO threads (id, name, tip_message_hash, forked_from, datetime_utc)
         SELECT 'fork', 'fork', u.tip_message_hash, u.thread_id, '2026-12-06 04:00:00+00:00'
         FROM turns u ORDER BY u.datetime_utc LIMIT 1 OFFSET 1",
        [],
    )
    .unwrap();
    drop(conn);
    let out = parse(&db);
    assert_eq!(out.sessions.len(), 2);
    let fork = out
        .sessions
        .iter()
        .find(|s| s.id.as_str() == "fork")
        .unwrap();
    let texts: Vec<&str> = common::messages(fork).iter().map(|m| m.1).collect();
    assert_eq!(
        texts,
        vec![
            "Why does the ledger show rows of other tenants?",
            "Looking at the version first.",
            "The ledger query lost its tenant predicate in the join.",
        ]
    );
}

#[test]
fn discovery_follows_llms_own_places() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".config/io.datasette.llm");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(golden(), dir.join("logs.db")).unwrap();
    std::fs::write(dir.join("extra-openai-models.yaml"), b"[]").unwrap();
    let found =
        |env: &[(&str, &str)]| -> usize { common::discovered(&context(home.path(), env)).len() };
    assert_eq!(found(&[]), 1);
    let other = home.path().join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(golden(), other.join("logs.db")).unwrap();
    let other_text = other.to_string_lossy().into_owned();
    assert_eq!(found(&[("LLM_USER_PATH", &other_text)]), 2);
    let xdg = home.path().join("xdg");
    std::fs::create_dir_all(xdg.join("io.datasette.llm")).unwrap();
    std::fs::copy(golden(), xdg.join("io.datasette.llm/logs.db")).unwrap();
    let xdg_text = xdg.to_string_lossy().into_owned();
    assert_eq!(found(&[("XDG_CONFIG_HOME", &xdg_text)]), 2);
}

#[test]
fn resume_goes_on_with_the_conversation_in_llm_chat() {
    let c = context(Path::new("/nonexistent"), &[]);
    let (argv, _) = common::resume(&c, THREAD, None);
    assert_eq!(argv, vec!["llm", "chat", "--cid", THREAD]);
}
