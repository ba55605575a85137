//! The OpenHands CLI reader, written only in TOML (`readers/openhands.toml`):
//! `fixtures/golden/openhands/real-1.16.0/` is what OpenHands CLI 1.16.0
//! wrote in `~/.openhands` in a run against a scripted model: a
//! conversation of two turns (the second resumed with `--resume`), a
//! terminal command in the first, and in the second the sub-agent its
//! `task` tool ran, which ran a command of its own.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{HostContext, ParseOutput, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;
use serde_json::Value;

const CONVERSATION: &str = "858bfeda0ce1435886c1e2021af6486f";
const SUBAGENT: &str = "ff8fc94fc96244da80c09070eb5ee583";

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("openhands.toml", home, env)
}

fn conversation() -> PathBuf {
    testing::fixtures("openhands")
        .join("real-1.16.0/conversations")
        .join(CONVERSATION)
}

fn parse(file: &Path) -> ParseOutput {
    testing::parse_file::<TomlReader>(file, &context(Path::new("/nonexistent"), &[]))
}

/// The independent count: the event files read with nothing but JSON.
fn count(folder: &Path) -> (usize, usize) {
    let mut users = 0;
    let mut terminal = 0;
    for file in testing::walk(&folder.join("events")) {
        let Ok(event) = serde_json::from_slice::<Value>(&std::fs::read(&file).unwrap()) else {
            continue;
        };
        if event["kind"] == "MessageEvent" && event["source"] == "user" {
            users += 1;
        }
        if event["kind"] == "ActionEvent" && event["tool_name"] == "terminal" {
            terminal += 1;
        }
    }
    (users, terminal)
}

#[test]
fn a_conversation_openhands_wrote_reads_as_typed_and_answered() {
    let out = parse(&conversation().join("base_state.json"));
    let s = common::only_session(&out);
    assert_eq!(s.id.as_str(), CONVERSATION);
    assert_eq!(s.parent_id, ROption::RNone);
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/try/oh3/proj")
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
                "The ledger query lost its tenant predicate in the join."
            ),
            (Role::User, "Which migration added the tenant column?"),
            (
                Role::Assistant,
                "Migration 0042 added the tenant column to the ledger."
            ),
        ]
    );
    let (users, terminal) = count(&conversation());
    assert_eq!(
        s.messages.iter().filter(|m| m.role == Role::User).count(),
        users
    );
    // The sub-agent's command is its own conversation's.
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["grep -rn \"tenant_id\" ."]);
    assert_eq!(commands.len(), terminal);
    // Timestamps without an offset, read as UTC (the run's time zone).
    assert_eq!(s.messages[0].timestamp_ms, 1_796_535_742_530);
}

#[test]
fn the_exit_code_comes_from_the_terminal_s_observation() {
    let file = conversation().join("base_state.json");
    let bytes = std::fs::read(&file).unwrap();
    let c = context(Path::new("/nonexistent"), &[]);
    let request = deja_plugin_api::ParseRequest {
        path: file.to_str().unwrap().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &c,
    };
    let out = TomlReader::parse_with_outcomes(&request).unwrap();
    let codes: Vec<Option<i32>> = out.outcomes[0]
        .commands
        .iter()
        .map(|o| o.exit_code.into_option())
        .collect();
    // grep found nothing.
    assert_eq!(codes, vec![Some(1)]);
}

#[test]
fn a_sub_agent_is_a_child_of_the_conversation_that_ran_it() {
    let folder = conversation().join("subagents").join(SUBAGENT);
    let out = parse(&folder.join("base_state.json"));
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), SUBAGENT);
    assert_eq!(
        s.parent_id.as_ref().map(|p| p.as_str()),
        ROption::RSome(CONVERSATION)
    );
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "List the migrations of the ledger."),
            (
                Role::Assistant,
                "The migrations folder holds 0042_tenant.sql."
            ),
        ]
    );
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["ls migrations"]);
    assert_eq!(count(&folder).1, 1);
}

#[test]
fn discovery_follows_openhands_own_places() {
    let home = tempfile::tempdir().unwrap();
    let conv = home.path().join(".openhands/conversations/c1");
    std::fs::create_dir_all(conv.join("subagents/s1/events")).unwrap();
    std::fs::create_dir_all(conv.join("events")).unwrap();
    for f in ["base_state.json", "subagents/s1/base_state.json"] {
        std::fs::write(conv.join(f), b"{}").unwrap();
    }
    std::fs::write(conv.join("events/event-00000-x.json"), b"{}").unwrap();
    let found =
        |env: &[(&str, &str)]| -> usize { common::discovered(&context(home.path(), env)).len() };
    assert_eq!(found(&[]), 2);
    let other = home.path().join("elsewhere");
    std::fs::create_dir_all(other.join("conversations/c2")).unwrap();
    std::fs::write(other.join("conversations/c2/base_state.json"), b"{}").unwrap();
    let other_text = other.to_string_lossy().into_owned();
    assert_eq!(found(&[("OPENHANDS_PERSISTENCE_DIR", &other_text)]), 3);
    let conversations = other.join("conversations").to_string_lossy().into_owned();
    assert_eq!(found(&[("OPENHANDS_CONVERSATIONS_DIR", &conversations)]), 3);
}

#[test]
fn resume_opens_the_conversation_in_its_folder() {
    let c = context(Path::new("/nonexistent"), &[]);
    let (argv, _) = common::resume(&c, CONVERSATION, Some("/tmp/try/oh3/proj"));
    assert_eq!(argv, vec!["openhands", "--resume", CONVERSATION]);
}
