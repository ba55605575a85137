//! The Cline CLI reader, written only in TOML (`readers/cline.toml`), over
//! `fixtures/golden/cline/<id>/<id>.messages.json`: a session in the shape
//! Cline CLI 3.0.65 writes (the end-to-end test runs the real CLI), and a
//! real session with its manifest (`real-sdk/`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

const ID: &str = "1796000000000_ab12c";

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("cline.toml", home, env)
}

#[test]
fn a_session_is_its_typed_text_answers_commands_and_patched_files() {
    let path = testing::fixtures("cline")
        .join(ID)
        .join(format!("{ID}.messages.json"));
    let out = testing::parse_file::<TomlReader>(&path, &context(Path::new("/nonexistent"), &[]));
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), ID);
    // The folder comes out of the system prompt.
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/home/me/shop")
    );
    let messages = common::messages(s);
    // Tool results sent as user messages are not what the user typed.
    assert_eq!(
        messages,
        vec![
            (Role::User, "Why does the orders report show other tenants?"),
            (Role::Assistant, "Let me look at the report."),
            (
                Role::Assistant,
                "The report's join lost the tenant predicate; I added it back."
            ),
        ]
    );
    assert_eq!(
        (s.started_at_ms, s.updated_at_ms),
        (1_795_999_999_000, 1_796_000_009_000)
    );
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(
        commands,
        vec!["rg -n tenant_id reports/", "git log -1 --oneline"]
    );
    let files = common::files(s);
    assert_eq!(
        files,
        vec![
            ("/home/me/shop/reports/orders.sql", FileAction::Read),
            ("/home/me/shop/reports/invoices.sql", FileAction::Read),
            ("/home/me/shop/reports/orders.sql", FileAction::Edit),
            ("/home/me/shop/reports/README.md", FileAction::Edit),
        ]
    );
}

#[test]
fn discovery_reads_messages_files_only() {
    let home = tempfile::tempdir().unwrap();
    let sessions = home.path().join(".cline/data/sessions");
    for rel in ["s1/s1.messages.json", "s1/s1.json", "s1/s1.compaction.json"] {
        let p = sessions.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"{}").unwrap();
    }
    let found: Vec<String> = TomlReader::discover(&context(home.path(), &[]))
        .unwrap()
        .transcripts
        .iter()
        .map(|t| t.to_string())
        .collect();
    assert_eq!(
        found,
        vec![sessions
            .join("s1/s1.messages.json")
            .to_string_lossy()
            .into_owned()]
    );
}

#[test]
fn a_real_session_takes_its_folder_title_and_fork_from_the_manifest_beside_it() {
    // Cline's own test fixture (Apache-2.0, fixtures/golden/cline/real-sdk/SOURCES.md).
    let path = testing::fixtures("cline")
        .join("real-sdk/1784094124598_rruoq/1784094124598_rruoq.messages.json");
    let out = testing::parse_file::<TomlReader>(&path, &context(Path::new("/nonexistent"), &[]));
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "1784094124598_rruoq");
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/Users/example/dev/cline")
    );
    assert!(s
        .title
        .as_ref()
        .map(|t| t.as_str())
        .into_option()
        .unwrap()
        .starts_with(
            "can you update @apps/examples/desktop-app/webview/components/agent-sidebar.tsx"
        ));
    assert_eq!(
        s.parent_id.as_ref().map(|p| p.as_str()),
        ROption::RSome("1784094053271_p8pzo")
    );
    // The independent count (SOURCES.md): 5 typed, 14 answers; tool results
    // and the contents of the @-mentioned file are not messages.
    let messages = common::messages(s);
    let users: Vec<&str> = messages
        .iter()
        .filter(|(r, _)| *r == Role::User)
        .map(|(_, t)| *t)
        .collect();
    assert_eq!(users.len(), 5, "{users:#?}");
    assert_eq!(users[1], "can you make the filter icon smaller?");
    assert_eq!(users[4], "hello");
    assert_eq!(messages.len(), 19);
    assert!(messages.iter().all(|(_, t)| !t.contains("\"use client\"")));
    assert_eq!(s.commands.len(), 1);
    assert!(s.commands[0].command.starts_with("grep -rn"));
    let files = common::files(s);
    let edits = files.iter().filter(|(_, a)| *a == FileAction::Edit).count();
    let reads = files.iter().filter(|(_, a)| *a == FileAction::Read).count();
    assert_eq!((edits, reads), (4, 6), "{files:#?}");
}
