//! The Kimi CLI reader, written only in TOML (`readers/kimi.toml`):
//! `fixtures/golden/kimi/real-1.51.0/` is what Kimi CLI 1.51.0 wrote in
//! `~/.kimi` in a run against a scripted model: a session of two turns (the
//! second resumed with `-r`) with shell, write and read tool calls, and the
//! sub-agent its `Agent` tool ran.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ParseOutput, ROption, Role};
use deja_plugin_toml::TomlReader;

const SESSION: &str = "c5374df3-865e-4df0-9551-b45d4d215df9";
const AGENT: &str = "a2867cec3";

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("kimi.toml", home, env)
}

fn sessions() -> PathBuf {
    testing::fixtures("kimi").join("real-1.51.0/sessions/3c02d06ed5fb42fe08aea5da88444829")
}

fn parse(file: &Path) -> ParseOutput {
    testing::parse_file::<TomlReader>(file, &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn a_session_kimi_wrote_reads_as_typed_and_answered() {
    let out = parse(&sessions().join(SESSION).join("wire.jsonl"));
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), SESSION);
    assert_eq!(s.parent_id, ROption::RNone);
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/kt/proj")
    );
    // Kimi CLI titles a session with the first 50 characters of the first
    // input of a finished turn; the sub-agent's turn, run inside the
    // session's first, finished first.
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("List the migrations folder and name the tenant…")
    );
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
                "I will ask a subagent about the migrations."
            ),
            (
                Role::Assistant,
                "The ledger query lost its tenant predicate in the join."
            ),
            (Role::User, "Write that down in notes.md"),
            (Role::Assistant, "I will note it."),
            (Role::Assistant, "Noted in notes.md."),
        ]
    );
    // The sub-agent's work, which the wire repeats as SubagentEvent
    // records, is its own session's.
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["grep -rn \"tenant_id\" ."]);
    assert_eq!(
        common::files(s),
        vec![
            ("/tmp/kt/proj/notes.md", FileAction::Edit),
            ("/tmp/kt/proj/notes.md", FileAction::Read),
        ]
    );
    assert_eq!(s.started_at_ms, 1_796_524_446_037);
    assert_eq!(s.messages[4].timestamp_ms, 1_796_524_450_186);
}

#[test]
fn a_sub_agent_is_a_child_of_the_session_that_ran_it() {
    let out = parse(
        &sessions()
            .join(SESSION)
            .join("subagents")
            .join(AGENT)
            .join("wire.jsonl"),
    );
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), AGENT);
    assert_eq!(
        s.parent_id.as_ref().map(|p| p.as_str()),
        ROption::RSome(SESSION)
    );
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/kt/proj")
    );
    let messages = common::messages(s);
    assert_eq!(
        messages[0],
        (
            Role::User,
            "List the migrations folder and name the tenant migration."
        )
    );
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert!(messages[1]
        .1
        .starts_with("0042_tenant.sql is the tenant migration"));
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["ls migrations"]);
}

#[test]
fn kimis_request_for_a_longer_summary_is_not_a_message() {
    let line = |t: f64, kind: &str, payload: serde_json::Value| {
        serde_json::json!({"timestamp": t, "message": {"type": kind, "payload": payload}})
            .to_string()
    };
    let text = [
        r#"{"type": "metadata", "protocol_version": "1.10"}"#.to_string(),
        line(1.0e9, "TurnBegin", serde_json::json!({"user_input": "Name the migration."})),
        line(1.0e9 + 1.0, "ContentPart", serde_json::json!({"type": "think", "think": "hm"})),
        line(1.0e9 + 2.0, "ContentPart", serde_json::json!({"type": "text", "text": "0042."})),
        line(
            1.0e9 + 3.0,
            "TurnBegin",
            serde_json::json!({"user_input": "Your previous response was too brief. Please provide a more comprehensive summary that includes:\n\n1. Specific details"}),
        ),
        line(
            1.0e9 + 4.0,
            "TurnBegin",
            serde_json::json!({"user_input": [{"type": "text", "text": "And the index?"}, {"type": "image_url", "image_url": {"url": "data:"}}]}),
        ),
    ]
    .join("\n");
    let out = testing::parse_bytes::<TomlReader>(
        "/h/.kimi/sessions/abc/s1/wire.jsonl",
        text.as_bytes(),
        0,
        &context(Path::new("/nonexistent"), &[]),
    );
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "s1");
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Name the migration."),
            (Role::Assistant, "0042."),
            (Role::User, "And the index?"),
        ]
    );
}

#[test]
fn discovery_follows_kimis_own_places() {
    let home = tempfile::tempdir().unwrap();
    let session = home.path().join(".kimi/sessions/abc/s1");
    std::fs::create_dir_all(session.join("subagents/a1")).unwrap();
    for f in ["wire.jsonl", "context.jsonl", "subagents/a1/wire.jsonl"] {
        std::fs::write(session.join(f), b"{}").unwrap();
    }
    let found =
        |env: &[(&str, &str)]| -> usize { common::discovered(&context(home.path(), env)).len() };
    assert_eq!(found(&[]), 2);
    let other = home.path().join("elsewhere");
    std::fs::create_dir_all(other.join("sessions/def/s2")).unwrap();
    std::fs::write(other.join("sessions/def/s2/wire.jsonl"), b"{}").unwrap();
    let other_text = other.to_string_lossy().into_owned();
    assert_eq!(found(&[("KIMI_SHARE_DIR", &other_text)]), 3);
}

#[test]
fn resume_opens_the_session_in_its_folder() {
    let c = context(Path::new("/nonexistent"), &[]);
    let (argv, _) = common::resume(&c, SESSION, Some("/tmp/kt/proj"));
    assert_eq!(argv, vec!["kimi", "--session", SESSION]);
}
