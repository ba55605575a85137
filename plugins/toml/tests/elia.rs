//! The Elia reader, written only in TOML (`readers/elia.toml`):
//! `fixtures/golden/elia/real-1.10.0/elia.sqlite` is the database Elia
//! 1.10.0 wrote in runs against a scripted model: a chat started with a
//! question, reopened from the history for a second question, then renamed;
//! and a chat with another system prompt, then archived.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{HostContext, ParseOutput, ROption, Role};
use deja_plugin_toml::TomlReader;
use rusqlite::Connection;

const RENAMED: &str = "elia-1-20261206T200938";
const ARCHIVED: &str = "elia-2-20261206T201001";

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("elia.toml", home, env)
}

fn golden() -> PathBuf {
    testing::fixtures("elia").join("real-1.10.0/elia.sqlite")
}

fn parse(db: &Path) -> ParseOutput {
    testing::parse_file::<TomlReader>(db, &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn the_chats_elia_wrote_read_as_typed_and_answered() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("elia.sqlite");
    std::fs::copy(golden(), &db).unwrap();
    let before = common::snapshot(dir.path());
    let out = parse(&db);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let ids: Vec<&str> = out.sessions.iter().map(|s| s.id.as_str()).collect();
    // The archived chat too: archiving only hides it in Elia's list.
    assert_eq!(ids, [RENAMED, ARCHIVED]);
    let (renamed, archived) = (&out.sessions[0], &out.sessions[1]);
    // The system prompts are not messages.
    assert_eq!(common::messages(renamed), common::LEDGER_ANSWERS);
    assert_eq!(
        common::messages(archived),
        vec![
            (Role::User, "Which job exports the ledger?"),
            (
                Role::Assistant,
                "The nightly export reads the ledger without a tenant."
            ),
        ]
    );
    assert_eq!(
        renamed.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Ledger tenant leak")
    );
    // An unnamed chat's title is empty in the database: none.
    assert_eq!(archived.title, ROption::RNone);
    assert_eq!(renamed.project.dir, ROption::RNone);
    assert!(renamed.commands.is_empty() && renamed.files.is_empty());
    // UTC without an offset: 2026-12-06 20:09:38.516040 is the chat's
    // start, 20:09:57.335208 its last answer.
    assert_eq!(renamed.started_at_ms, 1_796_587_778_516);
    assert_eq!(renamed.updated_at_ms, 1_796_587_797_335);
    assert_eq!(renamed.messages[2].timestamp_ms, 1_796_587_790_458);
    // Read from a copy: nothing beside the database is created or changed.
    assert_eq!(common::snapshot(dir.path()), before);
}

#[test]
fn a_chat_of_a_reset_database_is_not_taken_for_the_older_one() {
    // `elia reset` makes a new database whose first chat is number 1 again.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("elia.sqlite");
    std::fs::copy(golden(), &db).unwrap();
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(
        "DELETE FROM message WHERE chat_id = 2; DELETE FROM chat WHERE id = 2;
         UPDATE chat SET started_at = '2026-12-07 08:00:00.000000', title = '';
         UPDATE message SET content = 'Who reads the ledger?' WHERE id = 2;",
    )
    .unwrap();
    drop(conn);
    let out = parse(&db);
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "elia-1-20261207T080000");
    assert_ne!(s.id.as_str(), RENAMED);
    assert_eq!(s.messages[0].text.as_str(), "Who reads the ledger?");
}

#[test]
fn discovery_follows_elias_data_folder() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".local/share/elia");
    std::fs::create_dir_all(dir.join("themes")).unwrap();
    std::fs::copy(golden(), dir.join("elia.sqlite")).unwrap();
    let found =
        |env: &[(&str, &str)]| -> usize { common::discovered(&context(home.path(), env)).len() };
    assert_eq!(found(&[]), 1);
    let xdg = home.path().join("xdg");
    std::fs::create_dir_all(xdg.join("elia")).unwrap();
    std::fs::copy(golden(), xdg.join("elia/elia.sqlite")).unwrap();
    let xdg_text = xdg.to_string_lossy().into_owned();
    assert_eq!(found(&[("XDG_DATA_HOME", &xdg_text)]), 2);
}

#[test]
fn resume_starts_elia_to_pick_the_chat_from_its_history() {
    let c = context(Path::new("/nonexistent"), &[]);
    let (argv, note) = common::resume(&c, RENAMED, None);
    assert_eq!(argv, vec!["elia"]);
    assert!(note.contains("pick the chat from its history"), "{note}");
}
