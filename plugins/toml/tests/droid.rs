//! The Factory droid reader, written only in TOML (`readers/droid.toml`), over
//! `fixtures/golden/droid/<cwd>/<id>.jsonl`: a session in the shape droid
//! 0.225.2 writes (the end-to-end test runs the real droid).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

fn context(home: &Path) -> HostContext {
    common::context("droid.toml", home, &[])
}

#[test]
fn a_session_is_typed_text_and_answers_without_droids_own_context() {
    let file = testing::walk(&testing::fixtures("droid")).remove(0);
    let out = testing::parse_file::<TomlReader>(&file, &context(Path::new("/nonexistent")));
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "6a1f0c2e-77aa-4b1e-9c3d-0e5f6a7b8c9d");
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Tenant leak in the orders report")
    );
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/home/me/shop")
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
    assert_eq!(s.commands[0].command.as_str(), "rg -n tenant_id reports/");
    let files = common::files(s);
    assert_eq!(
        files,
        vec![
            ("/home/me/shop/reports/orders.sql", FileAction::Read),
            ("/home/me/shop/reports/orders.sql", FileAction::Edit),
        ]
    );
}

#[test]
fn discovery_reads_sessions_not_their_settings() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".factory/sessions/-w-app");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["s.jsonl", "s.settings.json", "s.settings.json.bak"] {
        std::fs::write(dir.join(name), b"{}").unwrap();
    }
    let found = TomlReader::discover(&context(home.path()))
        .unwrap()
        .transcripts;
    assert_eq!(found.len(), 1);
    assert!(found[0].ends_with("s.jsonl"));
}
