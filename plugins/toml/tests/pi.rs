//! The pi reader, written only in TOML (`readers/pi.toml`):
//! `fixtures/golden/pi/real-0.73.1/` is a session pi 0.73.1 wrote in a run
//! against a scripted model, `rules/` one file per rule.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{CommandOrigin, FileAction, HostContext, ParseOutput, ROption, Role};
use deja_plugin_toml::TomlReader;

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("pi.toml", home, env)
}

fn only_file(dir: &Path) -> PathBuf {
    let files = testing::walk(dir);
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().unwrap()
}

fn parse(dir: &str) -> ParseOutput {
    let file = only_file(&testing::fixtures("pi").join(dir));
    testing::parse_file::<TomlReader>(&file, &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn a_session_pi_wrote_reads_as_typed_and_answered() {
    let out = parse("real-0.73.1");
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "01a234fa-1cf9-77b6-bcda-cd034cde8796");
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/pi/proj")
    );
    let messages = common::messages(s);
    assert_eq!(
        messages,
        vec![
            (Role::User, "Why did the tenant query leak rows?"),
            (Role::Assistant, "Let me look."),
            (
                Role::Assistant,
                "The tenant predicate was missing from the join."
            ),
        ]
    );
    assert_eq!(s.commands[0].command.as_str(), "ls -la");
    let files = common::files(s);
    assert_eq!(
        files,
        vec![
            ("/tmp/pi/proj/notes.md", FileAction::Edit),
            ("/tmp/pi/proj/notes.md", FileAction::Read)
        ]
    );
}

#[test]
fn forks_user_commands_thinking_and_tool_results() {
    let out = parse("rules");
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "0b7c3f1e-5a2d-4c8e-9f10-2233445566ff");
    assert_eq!(
        s.parent_id.as_ref().map(|p| p.as_str()),
        ROption::RSome("9a8b7c6d-1111-4222-8333-444455556666")
    );
    let messages = common::messages(s);
    assert_eq!(
        messages,
        vec![
            (Role::User, "Why does the orders report show other tenants?"),
            (Role::Assistant, "Let me read the report."),
            (
                Role::Assistant,
                "The report's join lost the tenant predicate; I added it back."
            ),
        ]
    );
    let commands: Vec<(&str, CommandOrigin)> = s
        .commands
        .iter()
        .map(|c| (c.command.as_str(), c.origin))
        .collect();
    assert_eq!(
        commands,
        vec![("psql -c 'select count(*) from orders'", CommandOrigin::User)]
    );
    let files = common::files(s);
    assert_eq!(
        files,
        vec![
            ("/home/me/shop/reports/orders.sql", FileAction::Read),
            ("/home/me/shop/reports/orders.sql", FileAction::Edit),
        ]
    );
    assert_eq!(s.started_at_ms, 1_795_514_400_000);
}

#[test]
fn discovery_follows_pis_own_places() {
    let home = tempfile::tempdir().unwrap();
    let sessions = home.path().join(".pi/agent/sessions");
    std::fs::create_dir_all(sessions.join("--a--")).unwrap();
    std::fs::write(sessions.join("--a--/x.jsonl"), b"{}").unwrap();
    std::fs::write(home.path().join(".pi/agent/models.json"), b"{}").unwrap();
    let found =
        |env: &[(&str, &str)]| -> usize { common::discovered(&context(home.path(), env)).len() };
    assert_eq!(found(&[]), 1);
    let other = home.path().join("elsewhere");
    std::fs::create_dir_all(other.join("--b--")).unwrap();
    std::fs::write(other.join("--b--/y.jsonl"), b"{}").unwrap();
    let other_text = other.to_string_lossy().into_owned();
    assert_eq!(found(&[("PI_CODING_AGENT_SESSION_DIR", &other_text)]), 2);
}
