//! The ShellGPT reader, written only in TOML (`readers/shell-gpt.toml`):
//! `fixtures/golden/shell-gpt/real-1.5.1/ledger` is the chat ShellGPT 1.5.1
//! wrote (`sgpt --chat ledger`, two turns) in a run against a scripted
//! model, each turn calling its `execute_shell_command` function.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{HostContext, ParseOutput, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("shell-gpt.toml", home, env)
}

fn golden() -> PathBuf {
    testing::fixtures("shell-gpt").join("real-1.5.1/ledger")
}

fn parse(file: &Path) -> ParseOutput {
    testing::parse_file::<TomlReader>(file, &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn a_chat_shell_gpt_wrote_reads_as_typed_and_answered() {
    let out = parse(&golden());
    let s = common::only_session(&out);
    assert_eq!(s.id.as_str(), "ledger");
    assert_eq!(s.project.dir, ROption::RNone);
    // Not the role's system prompt, not the functions' results, and not
    // the `> @FunctionCall` lines sgpt writes into the answers.
    assert_eq!(
        common::messages(s),
        vec![
            (
                Role::User,
                "Why does the ledger show rows of other tenants?"
            ),
            (
                Role::Assistant,
                "Looking at the query first.\n\nThe ledger query lost its tenant predicate in the join."
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
}

#[test]
fn a_functions_output_shown_in_the_answer_is_not_the_models_text() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shown");
    std::fs::write(
        &file,
        r#"[{"role": "system", "content": "You are ShellGPT"},
            {"role": "user", "content": "List the migrations."},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "execute_shell_command", "arguments": "{\"shell_command\": \"ls migrations\"}"}}]},
            {"role": "tool", "content": "Exit code: 0, Output:\n0042_tenant.sql\n", "tool_call_id": "c1"},
            {"role": "assistant", "content": "> @FunctionCall `execute_shell_command(shell_command=\"ls migrations\")` \n\n```text\nExit code: 0, Output:\n0042_tenant.sql\n\n```\nOne migration: 0042."}]"#,
    )
    .unwrap();
    let out = parse(&file);
    let s = &out.sessions[0];
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "List the migrations."),
            (Role::Assistant, "One migration: 0042."),
        ]
    );
}

#[test]
fn discovery_follows_shell_gpts_own_places() {
    let home = tempfile::tempdir().unwrap();
    let tmp = home.path().join("tmp");
    std::fs::create_dir_all(tmp.join("chat_cache")).unwrap();
    std::fs::copy(golden(), tmp.join("chat_cache/ledger")).unwrap();
    // Its cache of single answers is not a chat.
    std::fs::create_dir_all(tmp.join("cache")).unwrap();
    std::fs::write(tmp.join("cache/c742acfc"), b"answer").unwrap();
    let tmp_text = tmp.to_string_lossy().into_owned();
    let found = |env: &[(&str, &str)]| -> Vec<String> {
        let mut names: Vec<String> = TomlReader::discover(&context(home.path(), env))
            .unwrap()
            .transcripts
            .iter()
            .map(|t| t.to_string())
            .filter(|p| p.starts_with(home.path().to_str().unwrap()))
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        found(&[("TMPDIR", &tmp_text)]),
        vec![tmp.join("chat_cache/ledger").to_string_lossy().into_owned()]
    );
    let other = home.path().join("chats");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(golden(), other.join("mine")).unwrap();
    let other_text = other.to_string_lossy().into_owned();
    assert_eq!(found(&[("CHAT_CACHE_PATH", &other_text)]).len(), 1);
}

#[test]
fn resume_reopens_the_chat_in_sgpts_repl() {
    let c = context(Path::new("/nonexistent"), &[]);
    let (argv, _) = common::resume(&c, "ledger", None);
    assert_eq!(argv, vec!["sgpt", "--repl", "ledger"]);
}
