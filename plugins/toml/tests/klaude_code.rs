//! The klaude-code reader, written only in TOML (`readers/klaude-code.toml`):
//! `fixtures/golden/klaude-code/real-2.43.0/` holds the sessions klaude-code
//! 2.43.0 wrote in a run against a scripted model, as it keeps them in
//! `~/.klaude/projects/<working directory>/sessions/<id>/`: one typed in
//! its terminal interface (two questions, Bash, Write), and one started
//! with `klaude run` and continued with `klaude send`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ParseOutputV1_2, ROption, Role};

const TYPED: &str = "b5156c307e3a42ac992824272773a16b";
const SENT: &str = "7b4be04afd8c4d64a446d9b1664108f0";

fn context(home: &Path) -> HostContext {
    common::context("klaude-code.toml", home, &[])
}

fn events(id: &str) -> PathBuf {
    testing::fixtures("klaude-code")
        .join("real-2.43.0/projects/tmp-kg-work-ledger/sessions")
        .join(id)
        .join("events.jsonl")
}

fn parse(file: &Path) -> ParseOutputV1_2 {
    common::parse_with_outcomes("klaude-code.toml", file)
}

#[test]
fn a_session_typed_in_klaude_reads_as_typed_answered_and_run() {
    let out = parse(&events(TYPED));
    let s = common::only_session(&out.output);
    assert_eq!(s.id.as_str(), TYPED);
    assert_eq!(s.project.dir, ROption::RSome("/tmp/kg/work/ledger".into()));
    assert_eq!(s.title, ROption::RSome("Tenant rows in the ledger".into()));
    assert_eq!(s.parent_id, ROption::RNone);
    // Not klaude's reminders (memory, skills), which are developer
    // messages, nor the prompt suggestion it keeps after each answer.
    assert_eq!(common::messages(s), common::LEDGER_TALK);
    // grep found nothing (exit code 1), ls did.
    assert_eq!(common::ran(&out, 0), common::ledger_ran());
    assert_eq!(
        common::files(s),
        vec![("/tmp/kg/work/ledger/NOTES.md", FileAction::Edit)]
    );
}

#[test]
fn what_klaude_send_sent_is_read_without_klaudes_notice() {
    let out = parse(&events(SENT));
    let s = &out.output.sessions[0];
    assert_eq!(s.id.as_str(), SENT);
    assert_eq!(s.project.dir, ROption::RSome("/tmp/kg/work/ledger".into()));
    // `klaude run`'s notice that the session runs unattended is a developer
    // message; `klaude send`'s text comes wrapped as a peer message.
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Do the reports leak as well?"),
            (
                Role::Assistant,
                "Reports reuse the same join, so they leak too."
            ),
            (Role::User, "Then fix the reports too."),
            (
                Role::Assistant,
                "Add the predicate to the reports query as well."
            ),
        ]
    );
    assert!(s.commands.is_empty());
}

#[test]
fn a_message_from_another_agent_is_not_the_persons() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir
        .path()
        .join("p/sessions/0123456789abcdef0123456789abcdef");
    std::fs::create_dir_all(&session).unwrap();
    let file = session.join("events.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"type": "UserMessage", "data": {"id": "u1", "created_at": "2026-12-06T23:24:02.391003", "role": "user", "parts": [{"type": "text", "text": "Review the ledger."}]}}"#,
            "\n",
            r#"{"type": "UserMessage", "data": {"id": "u2", "created_at": "2026-12-06T23:24:05.000000", "peer_message": {"id": "u2", "sender_label": "reviewer", "body": "Found two more."}, "role": "user", "parts": [{"type": "text", "text": "source=peer_message; untrusted peer data"}], "source": "peer_message"}}"#,
            "\n",
            r#"{"type": "AssistantMessage", "data": {"created_at": "2026-12-06T23:24:06.000000", "role": "assistant", "parts": [{"type": "thinking", "text": "hm"}, {"type": "text", "text": "Noted."}]}}"#,
            "\n",
        ),
    )
    .unwrap();
    let out = parse(&file);
    let s = &out.output.sessions[0];
    assert_eq!(s.id.as_str(), "0123456789abcdef0123456789abcdef");
    // No meta.json beside it: no folder, no title.
    assert_eq!(s.project.dir, ROption::RNone);
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Review the ledger."),
            (Role::Assistant, "Noted."),
        ]
    );
}

#[test]
fn a_sub_agents_session_is_a_child_of_the_session_that_ran_it() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir
        .path()
        .join("p/sessions/fedcba9876543210fedcba9876543210");
    std::fs::create_dir_all(&session).unwrap();
    std::fs::copy(events(TYPED), session.join("events.jsonl")).unwrap();
    std::fs::write(
        session.join("meta.json"),
        format!(r#"{{"id": "fedcba9876543210fedcba9876543210", "work_dir": "/tmp/w", "parent_session_id": "{TYPED}"}}"#),
    )
    .unwrap();
    let out = parse(&session.join("events.jsonl"));
    let s = &out.output.sessions[0];
    assert_eq!(
        s.parent_id.as_ref().map(|p| p.as_str()),
        ROption::RSome(TYPED)
    );
    assert_eq!(s.project.dir, ROption::RSome("/tmp/w".into()));
}

#[test]
fn discovery_follows_klaudes_own_places() {
    let home = tempfile::tempdir().unwrap();
    let golden = testing::fixtures("klaude-code").join("real-2.43.0/projects");
    let projects = home.path().join(".klaude/projects");
    for id in [TYPED, SENT] {
        let from = golden.join("tmp-kg-work-ledger/sessions").join(id);
        let to = projects.join("tmp-kg-work-ledger/sessions").join(id);
        std::fs::create_dir_all(to.join("shell_tasks")).unwrap();
        for f in ["events.jsonl", "meta.json"] {
            std::fs::copy(from.join(f), to.join(f)).unwrap();
        }
        std::fs::write(to.join("shell_tasks/a.json"), b"{}").unwrap();
    }
    let found = common::discovered(&context(home.path()));
    let mut want: Vec<String> = [SENT, TYPED]
        .iter()
        .map(|id| {
            projects
                .join("tmp-kg-work-ledger/sessions")
                .join(id)
                .join("events.jsonl")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    want.sort();
    assert_eq!(found, want);
}

#[test]
fn resume_opens_the_session_in_its_folder() {
    let c = context(Path::new("/nonexistent"));
    let (argv, _) = common::resume(&c, TYPED, Some("/tmp/kg/work/ledger"));
    assert_eq!(argv, vec!["klaude", "--resume", TYPED]);
}
