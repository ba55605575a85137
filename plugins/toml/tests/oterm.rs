//! The oterm reader, written only in TOML (`readers/oterm.toml`):
//! `fixtures/golden/oterm/real-0.26.1/store.db` is the database oterm
//! 0.26.1 wrote in runs against a scripted Ollama server: a chat of two
//! exchanges, the second typed after oterm was started again, under the
//! name oterm gave it; and a chat with a system prompt, renamed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{HostContext, ParseOutput, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("oterm.toml", home, env)
}

fn golden() -> PathBuf {
    testing::fixtures("oterm").join("real-0.26.1/store.db")
}

fn parse(db: &Path) -> ParseOutput {
    testing::parse_file::<TomlReader>(db, &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn the_chats_oterm_wrote_read_as_typed_and_answered() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.db");
    std::fs::copy(golden(), &db).unwrap();
    let before = common::snapshot(dir.path());
    let out = parse(&db);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let ids: Vec<&str> = out.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["oterm-1", "oterm-2"]);
    let (first, renamed) = (&out.sessions[0], &out.sessions[1]);
    assert_eq!(common::messages(first), common::LEDGER_ANSWERS);
    // The system prompt is a setting of the chat, not a message.
    assert_eq!(
        common::messages(renamed),
        vec![
            (Role::User, "Which job exports the ledger?"),
            (
                Role::Assistant,
                "The nightly export reads the ledger without a tenant."
            ),
        ]
    );
    // `chat #1 - llama3.2:latest` is the name oterm gave the chat: none.
    assert_eq!(first.title, ROption::RNone);
    assert_eq!(
        renamed.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Ledger exports")
    );
    assert_eq!(first.project.dir, ROption::RNone);
    assert!(first.commands.is_empty() && first.files.is_empty());
    // oterm keeps no time: the chats and their messages are dated by the
    // database's modification time, which deja marks approximate.
    assert_eq!(first.started_at_ms, renamed.started_at_ms);
    assert!(first
        .messages
        .iter()
        .all(|m| m.timestamp_ms == first.started_at_ms));
    // Read from a copy: nothing beside the database is created or changed.
    assert_eq!(common::snapshot(dir.path()), before);
}

#[test]
fn discovery_follows_oterms_data_folder() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".local/share/oterm");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(golden(), dir.join("store.db")).unwrap();
    std::fs::write(dir.join("config.json"), "{\"splash-screen\": false}").unwrap();
    let found =
        |env: &[(&str, &str)]| -> usize { common::discovered(&context(home.path(), env)).len() };
    assert_eq!(found(&[]), 1);
    let xdg = home.path().join("xdg");
    std::fs::create_dir_all(xdg.join("oterm")).unwrap();
    std::fs::copy(golden(), xdg.join("oterm/store.db")).unwrap();
    let xdg_text = xdg.to_string_lossy().into_owned();
    assert_eq!(found(&[("XDG_DATA_HOME", &xdg_text)]), 2);
    // OTERM_DATA_DIR names the folder itself.
    let own = home.path().join("chats");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::copy(golden(), own.join("store.db")).unwrap();
    let own_text = own.to_string_lossy().into_owned();
    assert_eq!(found(&[("OTERM_DATA_DIR", &own_text)]), 2);
}

#[test]
fn detection_wants_oterms_schema() {
    let c = context(Path::new("/nonexistent"), &[]);
    let bytes = std::fs::read(golden()).unwrap();
    let head = &bytes[..4096];
    assert!(TomlReader::detect_in(&c, "/x/oterm/store.db", head) > 0);
    // Another program's store.db.
    let mut other = b"SQLite format 3\0".to_vec();
    other.extend_from_slice(b"CREATE TABLE items(id INTEGER, body TEXT)");
    other.resize(4096, 0);
    assert_eq!(TomlReader::detect_in(&c, "/x/store.db", &other), 0);
}

#[test]
fn resume_starts_oterm_to_pick_the_chat() {
    let c = context(Path::new("/nonexistent"), &[]);
    let (argv, note) = common::resume(&c, "oterm-2", None);
    assert_eq!(argv, vec!["oterm"]);
    assert!(note.contains("pick the chat"), "{note}");
}
