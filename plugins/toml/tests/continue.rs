//! The Continue reader, written only in TOML (`readers/continue.toml`):
//! `fixtures/golden/continue/real-cn-1.5.47/` is what Continue's CLI 1.5.47
//! wrote in a run against a scripted model, `rules/` one file per rule.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{
    FileAction, HostContext, ParseOutput, ROption, RStr, Reader, ResumeAdvice, ResumeRequest, Role,
};
use deja_plugin_toml::TomlReader;

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("continue.toml", home, env)
}

fn golden(rel: &str) -> PathBuf {
    testing::fixtures("continue").join(rel)
}

fn parse(rel: &str) -> ParseOutput {
    let path = golden(rel);
    let bytes = std::fs::read(&path).unwrap();
    testing::parse_bytes::<TomlReader>(
        &path.to_string_lossy(),
        &bytes,
        1_764_000_000_000,
        &context(Path::new("/nonexistent-home"), &[]),
    )
}

#[test]
fn a_session_the_continue_cli_wrote_reads_as_typed_and_answered() {
    let out = parse("real-cn-1.5.47/0797f663-ddde-460e-994f-0e7b87ee5763.json");
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "0797f663-ddde-460e-994f-0e7b87ee5763");
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/cn/proj")
    );
    // "Untitled Session" is Continue's placeholder.
    assert_eq!(s.title, ROption::RNone);
    let messages = common::messages(s);
    assert_eq!(
        messages,
        vec![
            (Role::User, "Why did the tenant query leak rows?"),
            (Role::Assistant, "Checking."),
            (
                Role::Assistant,
                "The tenant predicate was missing from the join."
            ),
        ]
    );
    assert_eq!(s.commands.len(), 1);
    assert_eq!(s.commands[0].command.as_str(), "ls -la");
    // The file has no times; Continue's index beside it, sessions.json,
    // holds the session's creation ("dateCreated": "1796183765318").
    assert_eq!(s.started_at_ms, 1_796_183_765_318);
}

#[test]
fn without_the_index_a_session_is_as_old_as_its_file() {
    // rules/ has no sessions.json: the file's time is all there is.
    let out = parse("rules/9b1c0a52-parts-and-ide-tools.json");
    assert_eq!(out.sessions[0].started_at_ms, 1_764_000_000_000);
}

#[test]
fn the_index_gives_each_session_its_own_creation() {
    let dir = tempfile::tempdir().unwrap();
    let doc = std::fs::read(golden("rules/9b1c0a52-parts-and-ide-tools.json")).unwrap();
    let path = dir.path().join("9b1c0a52-parts-and-ide-tools.json");
    std::fs::write(&path, &doc).unwrap();
    let index = format!(
        r#"[{{"sessionId": "other", "dateCreated": "1700000000000"}},
            {{"sessionId": "{}", "title": "t", "dateCreated": "1733999000000", "workspaceDirectory": "", "messageCount": 3}}]"#,
        serde_json::from_slice::<serde_json::Value>(&doc).unwrap()["sessionId"]
            .as_str()
            .unwrap()
    );
    std::fs::write(dir.path().join("sessions.json"), index).unwrap();
    let out = testing::parse_bytes::<TomlReader>(
        &path.to_string_lossy(),
        &doc,
        1_764_000_000_000,
        &context(Path::new("/nonexistent-home"), &[]),
    );
    assert_eq!(out.sessions[0].started_at_ms, 1_733_999_000_000);
    // Messages without times of their own take the session's.
    assert!(out.sessions[0]
        .messages
        .iter()
        .all(|m| m.timestamp_ms == 1_733_999_000_000));
}

#[test]
fn content_parts_tool_states_and_file_uris() {
    let out = parse("rules/9b1c0a52-parts-and-ide-tools.json");
    let s = &out.sessions[0];
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/home/me/billing")
    );
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Tenant filter in the invoices export")
    );
    // The image part, the thinking and the tool result are not messages.
    let messages = common::messages(s);
    assert_eq!(
        messages,
        vec![
            (
                Role::User,
                "Why does the invoices export include other tenants?"
            ),
            (Role::Assistant, "I will read the export first."),
            (
                Role::Assistant,
                "The export queries invoices without the tenant filter; I added it."
            ),
        ]
    );
    let files = common::files(s);
    assert_eq!(
        files,
        vec![
            ("/home/me/billing/src/export.ts", FileAction::Read),
            ("/home/me/billing/src/export.ts", FileAction::Edit),
        ]
    );
    assert_eq!(s.commands[0].command.as_str(), "npm test");
}

#[test]
fn an_empty_session_is_skipped() {
    let out = parse("rules/4e2d-untitled-empty.json");
    assert!(out.sessions.is_empty());
    assert_eq!(out.skipped_empty, 1);
}

#[test]
fn discovery_reads_sessions_not_the_index() {
    let home = tempfile::tempdir().unwrap();
    let sessions = home.path().join(".continue/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    for name in ["a.json", "sessions.json", "b.json.bak"] {
        std::fs::write(sessions.join(name), b"{}").unwrap();
    }
    let found: Vec<String> = TomlReader::discover(&context(home.path(), &[]))
        .unwrap()
        .transcripts
        .iter()
        .map(|t| t.to_string())
        .collect();
    assert_eq!(
        found,
        vec![sessions.join("a.json").to_string_lossy().into_owned()]
    );
    // CONTINUE_GLOBAL_DIR is Continue's own folder variable.
    let other = home.path().join("elsewhere");
    std::fs::create_dir_all(other.join("sessions")).unwrap();
    std::fs::write(other.join("sessions/c.json"), b"{}").unwrap();
    let other_text = other.to_string_lossy().into_owned();
    let found = common::discovered(&context(
        home.path(),
        &[("CONTINUE_GLOBAL_DIR", &other_text)],
    ))
    .len();
    assert_eq!(found, 2);
}

#[test]
fn detection_wants_a_session_document() {
    let c = context(Path::new("/h"), &[]);
    let head = std::fs::read(golden(
        "real-cn-1.5.47/0797f663-ddde-460e-994f-0e7b87ee5763.json",
    ))
    .unwrap();
    assert!(TomlReader::detect_in(&c, "/x/0797f663.json", &head) > 0);
    assert_eq!(
        TomlReader::detect_in(&c, "/x/package.json", b"{\"name\": \"x\"}"),
        0
    );
}

#[test]
fn resume_forks_the_session_with_a_note() {
    let c = context(Path::new("/h"), &[]);
    let advice = TomlReader::resume(&ResumeRequest {
        id: "0797f663".into(),
        native_id: "0797f663".into(),
        project_dir: ROption::RSome(RStr::from("/tmp/cn/proj")),
        source_path: ROption::RNone,
        context: &c,
    })
    .unwrap();
    let ResumeAdvice::Command { argv, note, .. } = advice else {
        panic!("refused")
    };
    let argv: Vec<&str> = argv.iter().map(|a| a.as_str()).collect();
    assert_eq!(argv, vec!["cn", "--fork", "0797f663"]);
    assert!(note.as_str().contains("forked"), "{note}");
}
