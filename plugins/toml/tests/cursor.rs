//! The Cursor reader, written only in TOML (`readers/cursor.toml`), over a
//! real agent transcript (`fixtures/golden/cursor`, Apache-2.0, see
//! SOURCES.md) and transcripts built in its shape.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

const SLUG: &str = "Users-aidancunniffe-Desktop-testing-gitflows-git-ai";

fn context(home: &Path) -> HostContext {
    common::context("cursor.toml", home, &[])
}

#[test]
fn a_real_transcript_is_the_query_and_the_answers_without_redacted_thinking() {
    let file = testing::fixtures("cursor").join(format!(
        "projects/{SLUG}/agent-transcripts/cursor-session-simple.jsonl"
    ));
    let out = testing::parse_file::<TomlReader>(&file, &context(Path::new("/nonexistent")));
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "cursor-session-simple");
    // The folder the slug names is not on this machine: the slug is the
    // project's id, and no folder is guessed.
    assert_eq!(
        s.project.id.as_ref().map(|d| d.as_str()),
        ROption::RSome(SLUG)
    );
    assert_eq!(s.project.dir, ROption::RNone);
    let messages = common::messages(s);
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert_eq!(
        messages[0],
        (
            Role::User,
            "Generate a file with all the HBO shows from the 90's in it"
        )
    );
    assert!(messages[1..].iter().all(|(r, _)| *r == Role::Assistant));
    assert!(messages
        .iter()
        .all(|(_, t)| !t.contains("[REDACTED]") && !t.contains("user_query")));
    assert!(messages[1]
        .1
        .starts_with("Creating a file listing 1990s HBO shows."));
    let files = common::files(s);
    assert_eq!(files.len(), 4, "{files:?}");
    assert_eq!(
        files[0],
        (
            "/Users/aidancunniffe/Desktop/testing-gitflows-git-ai/pbs-shows-1990s.txt",
            FileAction::Read
        )
    );
    assert_eq!(
        files[3],
        (
            "/Users/aidancunniffe/Desktop/testing-gitflows-git-ai/hbo-shows-1990s.txt",
            FileAction::Edit
        )
    );
}

#[cfg(unix)]
#[test]
fn the_project_is_the_folder_the_slug_names_on_this_machine() {
    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().canonicalize().unwrap();
    let project = home_path.join("code/my.app");
    std::fs::create_dir_all(&project).unwrap();
    let slug = project
        .to_string_lossy()
        .trim_start_matches('/')
        .replace(['/', '.'], "-");
    let dir = home_path.join(format!(".cursor/projects/{slug}/agent-transcripts/c1"));
    std::fs::create_dir_all(&dir).unwrap();
    let line = |role: &str, content: &str| {
        serde_json::json!({"role": role, "message": {"content": serde_json::from_str::<serde_json::Value>(content).unwrap()}}).to_string()
    };
    let text = [
        line("user", r#"[{"type":"text","text":"<user_query>\nwhy is the build red\n</user_query>"}]"#),
        line("assistant", r#"[{"type":"text","text":"Running the tests."},{"type":"tool_use","name":"Shell","input":{"command":"cargo test"}}]"#),
        line("assistant", r#"[{"type":"tool_use","name":"StrReplace","input":{"path":"src/lib.rs","old_string":"a","new_string":"b"}}]"#),
    ]
    .join("\n");
    std::fs::write(dir.join("c1.jsonl"), text).unwrap();
    std::fs::write(home_path.join(".cursor/projects/notes.jsonl"), "{}").unwrap();
    let c = context(&home_path);
    let found = TomlReader::discover(&c).unwrap().transcripts;
    assert_eq!(found.len(), 1, "{found:?}");
    let out = testing::parse_file::<TomlReader>(Path::new(found[0].as_str()), &c);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "c1");
    let dir = project.to_string_lossy();
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome(&*dir)
    );
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "why is the build red"),
            (Role::Assistant, "Running the tests.")
        ]
    );
    assert_eq!(s.commands[0].command.as_str(), "cargo test");
    let edited = format!("{dir}/src/lib.rs");
    assert_eq!(common::files(s), vec![(edited.as_str(), FileAction::Edit)]);
}

#[test]
fn detection_prefers_cursor_lines_and_resume_names_the_cli() {
    let c = context(Path::new("/h"));
    let line = br#"{"role":"user","message":{"content":[{"type":"text","text":"hi"}]}}"#;
    assert_eq!(TomlReader::detect_in(&c, "/x/a.jsonl", line), 95);
    let claude = br#"{"type":"user","message":{"role":"user","content":"hi"}}"#;
    assert_eq!(TomlReader::detect_in(&c, "/x/a.jsonl", claude), 0);
    let (argv, note) = common::resume(&c, "c1", Some("/w/app"));
    assert_eq!(argv, vec!["cursor-agent", "--resume", "c1"]);
    assert!(note.contains("agent panel"), "{note}");
}
