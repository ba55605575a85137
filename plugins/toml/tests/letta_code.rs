//! The Letta Code reader, written only in TOML (`readers/letta-code.toml`):
//! `fixtures/golden/letta-code/real-0.32.18/` is what Letta Code 0.32.18
//! wrote on its local backend in two turns against a scripted model, the
//! second one running a sub-agent; `rules/` one entry per rule, shaped as
//! its source writes them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ParseOutput, ROption, Role};
use deja_plugin_toml::TomlReader;

/// The sub-agent's conversation: its agent's default one, named by its
/// folder (the base64url of `default:<agent id>`).
const SUB: &str = "ZGVmYXVsdDphZ2VudC1sb2NhbC03MDE1NjZhNi03ODBlLTQ2YTEtOGE4MS1iOGJiNWI5NDVlYjU";

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("letta-code.toml", home, env)
}

fn parse(rel: &str) -> ParseOutput {
    let file = testing::fixtures("letta-code").join(rel);
    testing::parse_file::<TomlReader>(&file, &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn a_conversation_letta_code_wrote_reads_as_typed_and_answered() {
    let out = parse("real-0.32.18/conversations/Y29udmVyc2F0aW9uOmxvY2FsLWNvbnYtMQ/messages.jsonl");
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "local-conv-1");
    assert_eq!(s.parent_id.as_ref().map(|p| p.as_str()), ROption::RNone);
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/lt/proj")
    );
    // Without the system reminders Letta Code sends with each turn, the
    // tool results, the sub-agent's work.
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Why did the tenant query leak rows?"),
            (Role::Assistant, "Let me look at the folder first."),
            (
                Role::Assistant,
                "The tenant predicate was missing from the join; notes.md says so now."
            ),
            (Role::User, "Which migration created the ledger table?"),
            (
                Role::Assistant,
                "The sub-agent found it: migration 0007 created the ledger table."
            ),
        ]
    );
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["ls -la", "sleep 8"]);
    assert_eq!(
        common::files(s),
        vec![
            ("/tmp/lt/proj/notes.md", FileAction::Edit),
            ("/tmp/lt/proj/notes.md", FileAction::Edit),
            ("/tmp/lt/proj/notes.md", FileAction::Read),
        ]
    );
    // 2026-12-06T02:39:45.887Z, the header's timestamp.
    assert_eq!(s.started_at_ms, 1_796_524_785_887);
}

#[test]
fn a_sub_agents_conversation_is_a_child_of_the_one_that_ran_it() {
    let out = parse(&format!("real-0.32.18/conversations/{SUB}/messages.jsonl"));
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), SUB);
    assert_eq!(
        s.parent_id.as_ref().map(|p| p.as_str()),
        ROption::RSome("local-conv-1")
    );
    assert_eq!(
        common::messages(s),
        vec![
            (
                Role::User,
                "Find the migration that created the ledger table."
            ),
            (
                Role::Assistant,
                "The ledger table comes from migration 0007."
            ),
        ]
    );
}

#[test]
fn reminders_inline_and_task_notifications_are_no_ones_words() {
    let out = parse("rules/conversations/Y29udmVyc2F0aW9uOmxvY2FsLWNvbnYtNw/messages.jsonl");
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "local-conv-7");
    // The summary in conversation.json beside the messages.
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Tenant leak in the orders report")
    );
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Why does the orders report show other tenants?"),
            (Role::Assistant, "Let me read the report."),
            (
                Role::Assistant,
                "The report's join lost the tenant predicate; I added it back."
            ),
        ]
    );
    assert_eq!(
        common::files(s),
        vec![
            ("/home/me/shop/reports/orders.sql", FileAction::Read),
            ("/home/me/shop/reports/orders.sql", FileAction::Edit),
        ]
    );
}

#[test]
fn discovery_follows_the_local_backends_folder() {
    let home = tempfile::tempdir().unwrap();
    let put = |root: &Path, name: &str| {
        let dir = root.join("conversations").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("messages.jsonl"), b"{}").unwrap();
        std::fs::write(dir.join("conversation.json"), b"{}").unwrap();
    };
    put(&home.path().join(".letta/lc-local-backend"), "a");
    let found =
        |env: &[(&str, &str)]| -> usize { common::discovered(&context(home.path(), env)).len() };
    assert_eq!(found(&[]), 1);
    let other = home.path().join("elsewhere");
    put(&other, "b");
    let other_text = other.to_string_lossy().into_owned();
    assert_eq!(found(&[("LETTA_LOCAL_BACKEND_DIR", &other_text)]), 2);
}

#[test]
fn resume_opens_the_conversation_on_the_local_backend() {
    let (argv, _note) = common::resume(
        &context(Path::new("/nonexistent"), &[]),
        "local-conv-1",
        Some("/tmp/lt/proj"),
    );
    assert_eq!(
        argv,
        vec![
            "letta",
            "--backend",
            "local",
            "--conversation",
            "local-conv-1"
        ]
    );
}
