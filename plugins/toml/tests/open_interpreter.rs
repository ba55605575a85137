//! The Open Interpreter reader, written only in TOML
//! (`readers/open-interpreter.toml`): `fixtures/golden/open-interpreter/`
//! holds a conversation Open Interpreter 0.4.3 wrote in a run against a
//! scripted model, with a shell and a Python code block.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{
    HostContext, ParseOutput, ROption, Reader, ResumeAdvice, ResumeRequest, Role,
};
use deja_plugin_toml::TomlReader;

const NAME: &str = "Why_does_the_ledger_show__December_06_2026_02-54-20";

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("open-interpreter.toml", home, env)
}

fn parse() -> ParseOutput {
    let file = testing::fixtures("open-interpreter")
        .join("real-0.4.3")
        .join(format!("{NAME}.json"));
    testing::parse_file::<TomlReader>(&file, &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn a_conversation_open_interpreter_wrote_reads_as_typed_and_answered() {
    let out = parse();
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), NAME);
    assert_eq!(s.project.dir, ROption::RNone);
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
    // Shell code is a command; Python code is not.
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["grep -rn \"tenant_id\" . || ls migrations"]);
    // The file's name dates the conversation: 2026-12-06 02:54:20.
    assert_eq!(s.started_at_ms, 1_796_525_660_000);
}

#[test]
fn discovery_follows_open_interpreters_own_places() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".config/open-interpreter/conversations");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("Hi__December_06_2026_02-54-20.json"), b"[]").unwrap();
    std::fs::write(
        home.path().join(".config/open-interpreter/profiles.json"),
        b"{}",
    )
    .unwrap();
    let found =
        |env: &[(&str, &str)]| -> usize { common::discovered(&context(home.path(), env)).len() };
    assert_eq!(found(&[]), 1);
    let other = home.path().join("xdg");
    std::fs::create_dir_all(other.join("open-interpreter/conversations")).unwrap();
    std::fs::write(other.join("open-interpreter/conversations/a.json"), b"[]").unwrap();
    let other_text = other.to_string_lossy().into_owned();
    assert_eq!(found(&[("XDG_CONFIG_HOME", &other_text)]), 2);
}

#[test]
fn resume_is_refused() {
    let c = context(Path::new("/nonexistent"), &[]);
    let advice = TomlReader::resume(&ResumeRequest {
        id: NAME.into(),
        native_id: NAME.into(),
        project_dir: ROption::RNone,
        source_path: ROption::RNone,
        context: &c,
    })
    .unwrap();
    assert!(matches!(advice, ResumeAdvice::Refused { .. }));
}
