//! The Nanocoder reader, written only in TOML (`readers/nanocoder.toml`):
//! `fixtures/golden/nanocoder/real-1.30.0/` is what Nanocoder 1.30.0 wrote in
//! two turns against a scripted model (the first with `nanocoder run`, the
//! second after `--resume`), `rules/` a session with each kind of text
//! Nanocoder writes in the person's name, shaped as its source writes them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{CommandOrigin, FileAction, HostContext, ParseOutput, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("nanocoder.toml", home, env)
}

fn parse(rel: &str) -> ParseOutput {
    let file = testing::fixtures("nanocoder").join(rel);
    testing::parse_file::<TomlReader>(&file, &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn a_session_nanocoder_wrote_reads_as_typed_and_answered() {
    let out = parse("real-1.30.0/25ef3819-e76f-4a66-8354-ad3cfa2678f7.json");
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "25ef3819-e76f-4a66-8354-ad3cfa2678f7");
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/nt/home/work/ledger")
    );
    assert_eq!(s.parent_id.as_ref().map(|p| p.as_str()), ROption::RNone);
    // Tool results (role `tool`) and the empty answer before the second
    // command are no one's words.
    assert_eq!(
        common::messages(s),
        vec![
            (
                Role::User,
                "Why does the ledger show rows of other tenants?"
            ),
            (Role::Assistant, "Looking at the query first."),
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
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["grep -rn \"tenant_id\" .", "ls migrations"]);
    // Its title is the last question asked; createdAt is when it started.
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Which migration added the tenant column?")
    );
    // 2026-12-06T02:55:52.082Z
    assert_eq!(s.started_at_ms, 1_796_525_752_082);
}

#[test]
fn text_nanocoder_writes_itself_is_no_ones_message() {
    let out = parse("rules/0b7c3f1e-5a2d-4c8e-9f10-2233445566ff.json");
    let s = &out.sessions[0];
    // The compaction summary, the feedback on a malformed tool call, the
    // diagnostics after edits, the nudges and the output of a `!` command
    // are Nanocoder's; a sub-agent's answer is the result of its tool call.
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Why does the orders report show other tenants?"),
            (Role::Assistant, "<tool_call>broken"),
            (
                Role::Assistant,
                "The join had no tenant predicate; it has one now."
            ),
            (Role::User, "Thanks, and the invoices?"),
            (Role::Assistant, "The invoices query was already right."),
        ]
    );
    let commands: Vec<(&str, CommandOrigin)> = s
        .commands
        .iter()
        .map(|c| (c.command.as_str(), c.origin))
        .collect();
    assert_eq!(commands, vec![("git diff --stat", CommandOrigin::User)]);
    // A relative path is resolved against the session's folder.
    assert_eq!(
        common::files(s),
        vec![
            ("/home/me/shop/report.sql", FileAction::Read),
            ("/home/me/shop/report.sql", FileAction::Edit),
            ("/home/me/shop/NOTES.md", FileAction::Edit),
        ]
    );
    assert_eq!(s.parent_id.as_ref().map(|p| p.as_str()), ROption::RNone);
}

#[test]
fn discovery_finds_sessions_not_the_index() {
    let home = tempfile::tempdir().unwrap();
    let names = |env: &[(&str, &str)]| -> Vec<String> {
        let found = TomlReader::discover(&context(home.path(), env)).unwrap();
        found
            .transcripts
            .iter()
            .map(|t| t.as_str().to_string())
            .collect()
    };
    let sessions = home.path().join(".local/share/nanocoder/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    for name in ["a.json", "sessions.json"] {
        std::fs::write(sessions.join(name), b"{}").unwrap();
    }
    assert_eq!(
        names(&[]),
        vec![sessions.join("a.json").to_string_lossy().into_owned()]
    );
    // NANOCODER_DATA_DIR moves the data folder.
    let data = home.path().join("data");
    std::fs::create_dir_all(data.join("sessions")).unwrap();
    std::fs::write(data.join("sessions/b.json"), b"{}").unwrap();
    let found = names(&[("NANOCODER_DATA_DIR", data.to_str().unwrap())]);
    assert!(
        found.contains(&data.join("sessions/b.json").to_string_lossy().into_owned()),
        "{found:?}"
    );
}

#[test]
fn resume_reopens_the_session_in_its_folder() {
    let (argv, _note) = common::resume(
        &context(Path::new("/nonexistent"), &[]),
        "25ef3819-e76f-4a66-8354-ad3cfa2678f7",
        Some("/tmp/nt/home/work/ledger"),
    );
    assert_eq!(
        argv,
        vec![
            "nanocoder",
            "--resume",
            "25ef3819-e76f-4a66-8354-ad3cfa2678f7"
        ]
    );
}
