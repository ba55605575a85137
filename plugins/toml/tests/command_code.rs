//! The Command Code reader, written only in TOML (`readers/command-code.toml`):
//! `fixtures/golden/command-code/real-1.64.0/` is what Command Code 1.64.0
//! wrote in two turns against a scripted model (the second one resumed, with
//! the nudge it sends after an empty answer), `rules/` one entry per rule,
//! shaped as its source writes them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ParseOutput, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

fn context(home: &Path) -> HostContext {
    common::context("command-code.toml", home, &[])
}

fn parse(rel: &str) -> ParseOutput {
    let file = testing::fixtures("command-code").join(rel);
    testing::parse_file::<TomlReader>(&file, &context(Path::new("/nonexistent")))
}

#[test]
fn a_session_command_code_wrote_reads_as_typed_and_answered() {
    let out = parse("real-1.64.0/tmp-cc-proj/9eb4e13d-b6a5-496c-8c01-f436b199ca5b.jsonl");
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "9eb4e13d-b6a5-496c-8c01-f436b199ca5b");
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/cc/proj")
    );
    assert_eq!(s.parent_id.as_ref().map(|p| p.as_str()), ROption::RNone);
    // Tool results, the sub-agent's answer and the "Please continue" nudge
    // after the empty answer are no one's words.
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Why did the tenant query leak rows?"),
            (Role::Assistant, "Let me look at the folder first."),
            (
                Role::Assistant,
                "The tenant predicate was missing from the join; notes.md says so now."
            ),
            (Role::User, "Should I change the report too?"),
            (
                Role::Assistant,
                "Yes: add the predicate to the join in the report query."
            ),
        ]
    );
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["ls -la"]);
    assert_eq!(
        common::files(s),
        vec![
            ("/tmp/cc/proj/notes.md", FileAction::Edit),
            ("/tmp/cc/proj/notes.md", FileAction::Edit),
            ("/tmp/cc/proj/notes.md", FileAction::Read),
        ]
    );
    // 2026-12-06T02:25:57.320Z, the header's timestamp.
    assert_eq!(s.started_at_ms, 1_796_523_957_320);
}

#[test]
fn text_command_code_writes_itself_is_no_ones_message() {
    let out = parse("rules/home-me-shop/0b7c3f1e-5a2d-4c8e-9f10-2233445566ff.jsonl");
    let s = &out.sessions[0];
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("tenant leak")
    );
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Why does the orders report show other tenants?"),
            (Role::Assistant, "Let me read the report."),
            (Role::Assistant, "I am about to run the tests."),
            (Role::Assistant, "Done."),
            (
                Role::Assistant,
                "The report's join lost the tenant predicate; I added it back in reports/orders.sql."
            ),
            // Typed while it worked (a steering message): the person's.
            (Role::User, "And the invoices report?"),
        ]
    );
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["psql -c 'select count(*) from orders'"]);
    // A relative path is resolved against the session's folder.
    assert_eq!(
        common::files(s),
        vec![
            ("/home/me/shop/reports/orders.sql", FileAction::Read),
            ("/home/me/shop/reports/orders.sql", FileAction::Edit),
        ]
    );
}

#[test]
fn discovery_finds_sessions_not_their_checkpoints() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join(".commandcode/projects/home-me-shop");
    std::fs::create_dir_all(&project).unwrap();
    for name in ["a.jsonl", "a.checkpoints.jsonl", "a.meta.json"] {
        std::fs::write(project.join(name), b"{}").unwrap();
    }
    std::fs::write(home.path().join(".commandcode/providers.json"), b"{}").unwrap();
    let found = TomlReader::discover(&context(home.path())).unwrap();
    let names: Vec<String> = found
        .transcripts
        .iter()
        .map(|t| {
            Path::new(t.as_str())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(names, vec!["a.jsonl"]);
}

#[test]
fn resume_reopens_the_session_in_its_folder() {
    let (argv, _note) = common::resume(
        &context(Path::new("/nonexistent")),
        "9eb4e13d-b6a5-496c-8c01-f436b199ca5b",
        Some("/tmp/cc/proj"),
    );
    assert_eq!(
        argv,
        vec!["cmd", "--resume", "9eb4e13d-b6a5-496c-8c01-f436b199ca5b"]
    );
}
