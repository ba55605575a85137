//! The Oh My Pi reader, written only in TOML (`readers/omp.toml`):
//! `fixtures/golden/omp/real-18.2.3/` is what Oh My Pi 18.2.3 wrote in two
//! turns against a scripted model (the second after `--resume`), `rules/` a
//! session with the messages it writes in the person's name, shaped as its
//! source writes them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{CommandOrigin, FileAction, HostContext, ParseOutput, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("omp.toml", home, env)
}

fn parse(rel: &str) -> ParseOutput {
    let file = testing::fixtures("omp").join(rel);
    testing::parse_file::<TomlReader>(&file, &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn a_session_omp_wrote_reads_as_typed_and_answered() {
    let out = parse(
        "real-18.2.3/-work-ledger/2026-12-06T03-15-06-808Z_01a24959-1db8-7000-bd85-c32ded0ba5a1.jsonl",
    );
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "01a24959-1db8-7000-bd85-c32ded0ba5a1");
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/ot/home/work/ledger")
    );
    assert_eq!(s.parent_id.as_ref().map(|p| p.as_str()), ROption::RNone);
    // Tool results and the session_exit entries are no one's words.
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
    // 2026-12-06T03:15:06.808Z, the header's timestamp.
    assert_eq!(s.started_at_ms, 1_796_526_906_808);
}

#[test]
fn text_omp_writes_itself_is_no_ones_message() {
    let out =
        parse("rules/-shop/2026-12-05T09-00-00-000Z_01a24959-0000-7000-8000-000000000001.jsonl");
    let s = &out.sessions[0];
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("orders report tenants")
    );
    // The loop guard's redirect, the developer nudge and the handoff prompt
    // are Oh My Pi's.
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Why does the orders report show other tenants?"),
            (Role::Assistant, "Let me read the report."),
            (
                Role::Assistant,
                "The join had no tenant predicate; it has one now."
            ),
        ]
    );
    let commands: Vec<(&str, CommandOrigin)> = s
        .commands
        .iter()
        .map(|c| (c.command.as_str(), c.origin))
        .collect();
    assert_eq!(commands, vec![("git diff --stat", CommandOrigin::User)]);
    assert_eq!(
        common::files(s),
        vec![
            ("/home/me/shop/report.sql", FileAction::Read),
            ("/home/me/shop/report.sql", FileAction::Edit),
            ("/home/me/shop/NOTES.md", FileAction::Edit),
        ]
    );
}

#[test]
fn a_sub_agent_is_a_child_of_the_session_that_ran_it() {
    let out = parse(
        "rules/-shop/2026-12-05T09-00-00-000Z_01a24959-0000-7000-8000-000000000001/CalmOtter.jsonl",
    );
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "01a24959-0000-7000-8000-000000000002");
    assert_eq!(
        s.parent_id.as_ref().map(|p| p.as_str()),
        ROption::RSome("01a24959-0000-7000-8000-000000000001")
    );
    // The assignment the parent wrote is no one's message; the sub-agent's
    // answer and command are its own.
    assert_eq!(
        common::messages(s),
        vec![(Role::Assistant, "billing.ts calls the orders report.")]
    );
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["grep -rn orders_report src"]);
}

#[test]
fn discovery_finds_sessions_and_their_sub_agents() {
    let home = tempfile::tempdir().unwrap();
    let folder = home.path().join(".omp/agent/sessions/-work-ledger");
    let artifacts = folder.join("2026_x");
    std::fs::create_dir_all(&artifacts).unwrap();
    std::fs::write(folder.join("2026_x.jsonl"), b"{}").unwrap();
    std::fs::write(artifacts.join("CalmOtter.jsonl"), b"{}").unwrap();
    std::fs::write(artifacts.join("CalmOtter.md"), b"done").unwrap();
    let found = TomlReader::discover(&context(home.path(), &[])).unwrap();
    let mut names: Vec<String> = found
        .transcripts
        .iter()
        .map(|t| t.as_str().to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            folder.join("2026_x.jsonl").to_string_lossy().into_owned(),
            artifacts
                .join("CalmOtter.jsonl")
                .to_string_lossy()
                .into_owned(),
        ]
    );
}

#[test]
fn resume_reopens_the_session_in_its_folder() {
    let (argv, _note) = common::resume(
        &context(Path::new("/nonexistent"), &[]),
        "01a24959-1db8-7000-bd85-c32ded0ba5a1",
        Some("/tmp/ot/home/work/ledger"),
    );
    assert_eq!(
        argv,
        vec!["omp", "--resume", "01a24959-1db8-7000-bd85-c32ded0ba5a1"]
    );
}
