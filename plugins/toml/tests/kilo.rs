//! The Kilo CLI reader, written only in TOML (`readers/kilo.toml`): Kilo is a
//! fork of OpenCode and keeps OpenCode's schema under its own names;
//! `fixtures/golden/kilo/real-7.7.7/kilo.db` is a database Kilo CLI 7.7.7
//! wrote in a run against a scripted model.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("kilo.toml", home, env)
}

#[test]
fn a_database_kilo_wrote_reads_as_its_one_session() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kilo.db");
    std::fs::copy(testing::fixtures("kilo").join("real-7.7.7/kilo.db"), &db).unwrap();
    let out = testing::parse_file::<TomlReader>(&db, &context(Path::new("/nonexistent"), &[]));
    assert_eq!(out.sessions.len(), 1, "{:?}", out.warnings);
    let s = &out.sessions[0];
    assert!(s.id.as_str().starts_with("ses_"), "{}", s.id);
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/kilo/proj")
    );
    let messages = common::messages(s);
    assert_eq!(
        messages,
        vec![
            (
                Role::User,
                "\"Why did the tenant query leak rows? Please fix it.\""
            ),
            (Role::Assistant, "Let me look."),
            (
                Role::Assistant,
                "The tenant predicate was missing from the join; I wrote notes.md with the fix."
            ),
        ]
    );
    assert_eq!(s.commands[0].command.as_str(), "ls -la");
    let files = common::files(s);
    assert_eq!(
        files,
        vec![
            ("/tmp/kilo/proj/notes.md", FileAction::Edit),
            ("/tmp/kilo/proj/notes.md", FileAction::Read),
        ]
    );
}

#[test]
fn discovery_follows_kilos_own_places() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join(".local/share/kilo");
    std::fs::create_dir_all(&data).unwrap();
    for name in ["kilo.db", "kilo.db-wal", "opencode.db"] {
        std::fs::write(data.join(name), b"x").unwrap();
    }
    let found: Vec<String> = TomlReader::discover(&context(home.path(), &[]))
        .unwrap()
        .transcripts
        .iter()
        .map(|t| t.to_string())
        .collect();
    assert_eq!(
        found,
        vec![data.join("kilo.db").to_string_lossy().into_owned()]
    );
    let c = context(home.path(), &[]);
    assert!(TomlReader::detect_in(&c, "/x/kilo.db", b"SQLite format 3\0") > 0);
    assert_eq!(
        TomlReader::detect_in(&c, "/x/opencode.db", b"SQLite format 3\0"),
        0
    );
}
