//! The mini-swe-agent reader, written only in TOML
//! (`readers/mini-swe-agent.toml`):
//! `fixtures/golden/mini-swe-agent/real-2.4.6/last_mini_run.traj.json` is
//! the trajectory mini-swe-agent 2.4.6 wrote (`mini -y --exit-immediately
//! -t ...`) in a run against a scripted model: a shell command, then the
//! answer with the command that ends the run.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{HostContext, ParseOutput, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;
use serde_json::{json, Value};

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("mini-swe-agent.toml", home, env)
}

fn golden() -> PathBuf {
    testing::fixtures("mini-swe-agent").join("real-2.4.6/last_mini_run.traj.json")
}

fn parse(file: &Path) -> ParseOutput {
    testing::parse_file::<TomlReader>(file, &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn a_run_mini_wrote_reads_as_asked_and_answered() {
    let out = parse(&golden());
    let s = common::only_session(&out);
    assert_eq!(s.id.as_str(), "last_mini_run.traj");
    assert_eq!(s.project.dir, ROption::RNone);
    // The task without mini's instructions around it; not the system
    // prompt, the commands' output or the exit record.
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
        ]
    );
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(
        commands,
        vec![
            "grep -rn \"tenant_id\" .",
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
        ]
    );
    // The model's answers are dated by its responses: 2026-12-06 03:13:58
    // UTC.
    assert_eq!(s.messages[1].timestamp_ms, 1_796_526_838_000);
}

/// What the interactive agent adds while it runs: the person's new task,
/// comment and rejection are theirs; its own notes and format errors are
/// not; a command run in human mode is the person's.
#[test]
fn what_the_person_typed_while_mini_ran_is_theirs() {
    let mut doc: Value = serde_json::from_slice(&std::fs::read(golden()).unwrap()).unwrap();
    let messages = doc["messages"].as_array_mut().unwrap();
    let exit = messages.pop().unwrap();
    for m in [
        json!({"role": "user", "content": "Interrupted by user: Temporary interruption caught.",
               "extra": {"interrupt_type": "UserInterruption"}}),
        json!({"role": "user", "content": "Interrupted by user: check the archive table too",
               "extra": {"interrupt_type": "UserInterruption"}}),
        json!({"role": "user", "content": "No tool calls found in the response.",
               "extra": {"interrupt_type": "FormatError"}}),
        json!({"role": "user", "content": "Switched to human mode.",
               "extra": {"interrupt_type": "UserInterruption"}}),
        json!({"role": "user", "content": "User command: \n```bash\nls migrations\n```",
               "extra": {"actions": [{"command": "ls migrations"}]}}),
        json!({"role": "user", "content": "Commands not executed. The user rejected your commands with the following message: not on production",
               "extra": {"interrupt_type": "UserRejection"}}),
        json!({"role": "user", "content": "The user added a new task: add the predicate back",
               "extra": {"interrupt_type": "UserNewTask"}}),
        exit,
    ] {
        messages.push(m);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.traj.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let out = parse(&file);
    let s = &out.sessions[0];
    let users: Vec<&str> = common::messages(s)
        .into_iter()
        .filter(|m| m.0 == Role::User)
        .map(|m| m.1)
        .collect();
    assert_eq!(
        users,
        vec![
            "Why does the ledger show rows of other tenants?",
            "check the archive table too",
            "not on production",
            "add the predicate back",
        ]
    );
    let by_user: Vec<&str> = s
        .commands
        .iter()
        .filter(|c| c.origin == deja_plugin_api::CommandOrigin::User)
        .map(|c| c.command.as_str())
        .collect();
    assert_eq!(by_user, vec!["ls migrations"]);
}

#[test]
fn discovery_follows_minis_own_places() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".config/mini-swe-agent");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(golden(), dir.join("last_mini_run.traj.json")).unwrap();
    std::fs::write(dir.join(".env"), b"MSWEA_CONFIGURED=true\n").unwrap();
    let found =
        |env: &[(&str, &str)]| -> usize { common::discovered(&context(home.path(), env)).len() };
    assert_eq!(found(&[]), 1);
    let other = home.path().join("mswea");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(golden(), other.join("fix-ledger.traj.json")).unwrap();
    let other_text = other.to_string_lossy().into_owned();
    assert_eq!(found(&[("MSWEA_GLOBAL_CONFIG_DIR", &other_text)]), 2);
}

#[test]
fn resume_is_refused() {
    use deja_plugin_api::{ResumeAdvice, ResumeRequest};
    let c = context(Path::new("/nonexistent"), &[]);
    let advice = TomlReader::resume(&ResumeRequest {
        id: "last_mini_run.traj".into(),
        native_id: "last_mini_run.traj".into(),
        project_dir: ROption::RNone,
        source_path: ROption::RNone,
        context: &c,
    })
    .unwrap();
    assert!(matches!(advice, ResumeAdvice::Refused { .. }));
}
