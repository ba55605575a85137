//! The GitHub Copilot CLI reader, written only in TOML (`readers/copilot.toml`),
//! over `fixtures/golden/copilot/<id>/events.jsonl`: the events of one session
//! as Copilot CLI 1.0.102 writes them (the end-to-end test runs the real CLI).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{
    FileAction, HostContext, ROption, RStr, Reader, ResumeAdvice, ResumeRequest, Role,
};
use deja_plugin_toml::TomlReader;

const ID: &str = "7c1e2f90-1b2c-4d5e-8f90-a1b2c3d4e5f6";

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("copilot.toml", home, env)
}

#[test]
fn a_session_is_what_was_typed_and_answered_across_a_resume() {
    let path = testing::fixtures("copilot").join(ID).join("events.jsonl");
    let out = testing::parse_file::<TomlReader>(&path, &context(Path::new("/nonexistent"), &[]));
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), ID);
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/home/me/shop")
    );
    let messages = common::messages(s);
    // The reminder, attachments and repeated request are gone; the system
    // message, reasoning, empty content and the torn last line are not messages.
    assert_eq!(
        messages,
        vec![
            (Role::User, "Why does the orders report show other tenants?"),
            (Role::Assistant, "Let me read the report query."),
            (
                Role::Assistant,
                "The report's join lost the tenant predicate; I added it back."
            ),
            (Role::User, "And the invoices report?"),
            (
                Role::Assistant,
                "The invoices report has the same join; fixed too."
            ),
        ]
    );
    assert_eq!(
        s.messages[0].native_id.as_ref().map(|m| m.as_str()),
        ROption::RSome("u1")
    );
    assert_eq!(s.started_at_ms, 1_795_165_200_000);
    assert_eq!(s.updated_at_ms, 1_795_255_204_000);
    assert_eq!(s.commands[0].command.as_str(), "rg -n tenant_id reports/");
    let files = common::files(s);
    assert_eq!(
        files,
        vec![
            ("/home/me/shop/reports/orders.sql", FileAction::Read),
            ("/home/me/shop/reports/orders.sql", FileAction::Edit),
        ]
    );
    assert!(
        out.warnings.iter().any(|w| w.contains("1 line")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn discovery_reads_each_sessions_events_and_nothing_else() {
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join(".copilot/session-state");
    for rel in [
        "a/events.jsonl",
        "a/workspace.yaml",
        "a/checkpoints/index.md",
        "b/events.jsonl",
        "events.jsonl",
    ] {
        let p = state.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"{}").unwrap();
    }
    let found = |env: &[(&str, &str)]| -> Vec<String> {
        TomlReader::discover(&context(home.path(), env))
            .unwrap()
            .transcripts
            .iter()
            .map(|t| t.to_string())
            .collect()
    };
    let at = |rel: &str| state.join(rel).to_string_lossy().into_owned();
    assert_eq!(found(&[]), vec![at("a/events.jsonl"), at("b/events.jsonl")]);
    // COPILOT_HOME moves Copilot's folder.
    let other = home.path().join("cop");
    std::fs::create_dir_all(other.join("session-state/c")).unwrap();
    std::fs::write(other.join("session-state/c/events.jsonl"), b"{}").unwrap();
    let other_text = other.to_string_lossy().into_owned();
    assert_eq!(found(&[("COPILOT_HOME", &other_text)]).len(), 3);
}

#[test]
fn resume_and_detection() {
    let c = context(Path::new("/h"), &[]);
    let head = std::fs::read(testing::fixtures("copilot").join(ID).join("events.jsonl")).unwrap();
    assert!(TomlReader::detect_in(&c, "/x/events.jsonl", &head[..4096.min(head.len())]) > 0);
    assert_eq!(
        TomlReader::detect_in(&c, "/x/events.jsonl", b"{\"type\":\"other\"}"),
        0
    );
    let advice = TomlReader::resume(&ResumeRequest {
        id: ID.into(),
        native_id: ID.into(),
        project_dir: ROption::RSome(RStr::from("/home/me/shop")),
        source_path: ROption::RNone,
        context: &c,
    })
    .unwrap();
    let ResumeAdvice::Command { argv, .. } = advice else {
        panic!("refused")
    };
    let argv: Vec<&str> = argv.iter().map(|a| a.as_str()).collect();
    assert_eq!(argv, vec!["copilot", &format!("--resume={ID}")]);
}
