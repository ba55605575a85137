//! The Amp reader, written only in TOML (`readers/amp.toml`), over two real
//! threads (`fixtures/golden/amp/threads`, Apache-2.0, see SOURCES.md).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

fn context(home: &Path) -> HostContext {
    common::context("amp.toml", home, &[])
}

fn thread(id: &str) -> std::path::PathBuf {
    testing::fixtures("amp").join(format!("threads/{id}.json"))
}

#[test]
fn a_real_thread_is_its_typed_request_and_answers_not_tool_results_or_thinking() {
    let out = testing::parse_file::<TomlReader>(
        &thread("T-019ca1f6-7f21-77b5-a308-65416ebbdf48"),
        &context(Path::new("/nonexistent")),
    );
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "T-019ca1f6-7f21-77b5-a308-65416ebbdf48");
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Read jokes CSV and append new row")
    );
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/Users/svarlamov/projects/testing-git-amp")
    );
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Read jokes.csv and append one new joke row"),
            (
                Role::Assistant,
                "Appended joke #14: *\"Why do programmers hate nature? \u{2014} It has too many bugs and no documentation.\"*"
            ),
        ]
    );
    // `created`, then the user's `meta.sentAt`, then the answer's usage time.
    assert_eq!(s.started_at_ms, 1_772_243_812_131);
    assert_eq!(s.messages[0].timestamp_ms, 1_772_243_812_139);
    assert_eq!(s.messages[1].timestamp_ms, 1_772_243_820_163);
    let jokes = "/Users/svarlamov/projects/testing-git-amp/jokes.csv";
    assert_eq!(
        common::files(s),
        vec![(jokes, FileAction::Read), (jokes, FileAction::Edit)]
    );
}

#[test]
fn an_answer_of_tool_calls_only_is_no_message_and_every_read_is_a_record() {
    let out = testing::parse_file::<TomlReader>(
        &thread("T-019ca1ce-3ae2-7686-a41e-ccc078837f8a"),
        &context(Path::new("/nonexistent")),
    );
    let s = &out.sessions[0];
    let roles: Vec<Role> = s.messages.iter().map(|m| m.role).collect();
    // Three assistant messages in the file; one holds only a tool call, and
    // the blank text part ("\n\n") before another's text is left out.
    assert_eq!(roles, vec![Role::User, Role::Assistant, Role::Assistant]);
    assert!(s.messages[2].text.starts_with("Here's the plan:"));
    assert_eq!(s.files.len(), 4);
    assert!(s.files.iter().all(|f| f.action == FileAction::Read));
}

#[cfg(target_os = "linux")]
#[test]
fn discovery_finds_threads_in_the_data_folder() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".local/share/amp/threads");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["T-1.json", "settings.json", "T-2.json.tmp"] {
        std::fs::write(dir.join(name), b"{}").unwrap();
    }
    let found = TomlReader::discover(&context(home.path()))
        .unwrap()
        .transcripts;
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].ends_with("T-1.json"));
}

#[test]
fn the_reader_is_sure_of_a_thread_and_resumes_it_with_amp() {
    let file = thread("T-019ca1f6-7f21-77b5-a308-65416ebbdf48");
    let head = std::fs::read(&file).unwrap();
    let c = context(Path::new("/nonexistent"));
    let score = TomlReader::detect_in(&c, &file.to_string_lossy(), &head[..4096]);
    assert_eq!(score, 95);
    let (argv, _) = common::resume(&c, "T-1", Some("/w/app"));
    assert_eq!(argv, vec!["amp", "threads", "continue", "T-1"]);
}
