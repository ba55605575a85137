//! The VS Code Copilot Chat reader, written only in TOML
//! (`readers/copilot-chat.toml`), over two real chat sessions
//! (`fixtures/golden/copilot-chat`, Apache-2.0, see SOURCES.md): one in the
//! change-log format VS Code writes since 1.109, one in the JSON document
//! it wrote before.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

const LOG: &str = "5f3c9a/chatSessions/7de89a80-6d93-43e7-be0a-0a9afe980198.jsonl";
const DOCUMENT: &str = "8b21d4/chatSessions/331fed7f-cfd6-409c-8502-06a56322b636.json";

fn context(home: &Path) -> HostContext {
    common::context("copilot-chat.toml", home, &[])
}

fn fixture(relative: &str) -> PathBuf {
    testing::fixtures("copilot-chat")
        .join("User/workspaceStorage")
        .join(relative)
}

#[test]
fn a_change_log_is_replayed_into_its_requests_and_responses() {
    let out = testing::parse_file::<TomlReader>(&fixture(LOG), &context(Path::new("/h")));
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "7de89a80-6d93-43e7-be0a-0a9afe980198");
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Adding a joke to jokes.csv file")
    );
    // From the workspace's workspace.json, a file:// URI.
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/Users/svarlamov/projects/testing-git")
    );
    let jokes = "/Users/svarlamov/projects/testing-git/jokes.csv";
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Add a joke about 7sadfh32u23gdaWF to jokes.csv"),
            (Role::Assistant, "I added a joke about \"7sadfh32u23gdaWF\" to the /Users/svarlamov/projects/testing-git/jokes.csv file. Let me know if you need further assistance!"),
            // The second request is in the log's push, not its first line.
            (Role::User, "follow up message"),
            (Role::Assistant, "The joke about \"7sadfh32u23gdaWF\" has been successfully added to the /Users/svarlamov/projects/testing-git/jokes.csv file. Let me know if there's anything else you'd like to modify or add!"),
        ]
    );
    // A request at its timestamp, its answer when it completed.
    assert_eq!(s.messages[0].timestamp_ms, 1_770_580_257_491);
    assert_eq!(s.messages[1].timestamp_ms, 1_770_580_262_625);
    assert_eq!(
        common::files(s),
        vec![(jokes, FileAction::Edit), (jokes, FileAction::Read)]
    );
}

#[test]
fn a_session_written_before_the_log_reads_as_its_document() {
    let out = testing::parse_file::<TomlReader>(&fixture(DOCUMENT), &context(Path::new("/h")));
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "331fed7f-cfd6-409c-8502-06a56322b636");
    let messages = common::messages(s);
    let roles: Vec<Role> = messages.iter().map(|(r, _)| *r).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant].repeat(3),
        "{messages:#?}"
    );
    assert_eq!(messages[2].1, "Change Bonjour World to hello world");
    // Markdown parts join as one text, a linked file in its place, and the
    // empty fence an edit leaves is gone.
    assert_eq!(
        messages[3].1,
        "I'll change \"Bonjour World\" to \"hello world\" in your selected text. Done! I've changed \"Bonjour World\" to \"hello world\" in line 10 of your /Users/svarlamov/projects/testing-git/index.ts file."
    );
    assert!(messages[5]
        .1
        .contains("```typescript\nconsole.log('Bonjour');\n```"));
    assert_eq!(
        common::files(s),
        vec![(
            "/Users/svarlamov/projects/testing-git/index.ts",
            FileAction::Edit
        )]
    );
}

#[test]
fn a_terminal_call_is_a_command_record() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let call = serde_json::json!({"kind": "toolInvocationSerialized", "toolId": "run_in_terminal",
        "toolSpecificData": {"kind": "terminal", "commandLine": {"original": "npm test"}, "language": "sh"}});
    let legacy = serde_json::json!({"kind": "toolInvocationSerialized", "toolId": "run_in_terminal",
        "toolSpecificData": {"kind": "terminal", "command": "npm run lint", "language": "sh"}});
    let lines = [
        serde_json::json!({"kind": 0, "v": {"version": 3, "sessionId": "t", "initialLocation": "panel", "requests": [
            {"timestamp": 1, "message": {"text": "run the tests"}, "response": []}]}}),
        serde_json::json!({"kind": 2, "k": ["requests", 0, "response"], "v": [call, legacy, {"value": "Both pass."}]}),
    ];
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&file, text.join("\n")).unwrap();
    let out = testing::parse_file::<TomlReader>(&file, &context(Path::new("/h")));
    let s = &out.sessions[0];
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["npm test", "npm run lint"]);
    assert_eq!(common::messages(s)[1], (Role::Assistant, "Both pass."));
    assert_eq!(s.project.dir, ROption::RNone);
}

#[cfg(target_os = "linux")]
#[test]
fn discovery_reads_a_session_once_from_its_log_when_both_files_are_there() {
    let home = tempfile::tempdir().unwrap();
    let user = home.path().join(".config/Code/User");
    let chats = user.join("workspaceStorage/abc/chatSessions");
    std::fs::create_dir_all(&chats).unwrap();
    for name in ["s1.json", "s1.jsonl", "s2.json"] {
        std::fs::write(chats.join(name), b"{}").unwrap();
    }
    std::fs::write(user.join("workspaceStorage/abc/workspace.json"), b"{}").unwrap();
    let empty = user.join("globalStorage/emptyWindowChatSessions");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("s3.jsonl"), b"{}").unwrap();
    let mut found: Vec<String> = TomlReader::discover(&context(home.path()))
        .unwrap()
        .transcripts
        .iter()
        .map(|t| t.rsplit('/').next().unwrap().to_string())
        .collect();
    found.sort();
    assert_eq!(found, vec!["s1.jsonl", "s2.json", "s3.jsonl"]);
}

#[test]
fn detection_and_resume() {
    let c = context(Path::new("/h"));
    for relative in [LOG, DOCUMENT] {
        let bytes = std::fs::read(fixture(relative)).unwrap();
        let path = fixture(relative).to_string_lossy().into_owned();
        assert_eq!(
            TomlReader::detect_in(&c, &path, &bytes[..4096]),
            95,
            "{relative}"
        );
    }
    let (argv, note) = common::resume(&c, "s", Some("/w/app"));
    assert_eq!(argv, vec!["code", "/w/app"]);
    assert!(note.contains("Chat view"), "{note}");
}
