//! The Goose reader, written only in TOML (`readers/goose.toml`): a real
//! Goose database from a public dotfiles repository (MIT; see
//! `fixtures/golden/goose/SOURCES.md`), and `01-session.sql` run on its
//! tables for the rules.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ParseOutput, ROption, Role};
use deja_plugin_toml::TomlReader;
use rusqlite::Connection;

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("goose.toml", home, env)
}

fn parse(db: &Path) -> ParseOutput {
    testing::parse_file::<TomlReader>(db, &context(Path::new("/nonexistent"), &[]))
}

fn golden() -> PathBuf {
    testing::fixtures("goose")
}

#[test]
fn a_real_goose_database_with_an_empty_session_reads_as_nothing_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    std::fs::copy(golden().join("real-dotfiles/sessions.db"), &db).unwrap();
    let out = parse(&db);
    assert!(out.sessions.is_empty(), "{:?}", out.sessions);
    assert_eq!(out.skipped_empty, 1);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

#[test]
fn a_session_is_what_the_user_saw_with_shell_and_editor_records() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let conn = Connection::open(&db).unwrap();
    for file in ["schema.sql", "01-session.sql"] {
        conn.execute_batch(&std::fs::read_to_string(golden().join(file)).unwrap())
            .unwrap();
    }
    drop(conn);
    let out = parse(&db);
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "20261124_3");
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Tenant leak in the orders report")
    );
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/home/me/shop")
    );
    assert_eq!(s.started_at_ms, 1_795_514_400_000);
    let messages = common::messages(s);
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
    assert_eq!(s.commands[0].command.as_str(), "rg -n tenant_id reports/");
    let files = common::files(s);
    assert_eq!(
        files,
        vec![
            ("/home/me/shop/reports/orders.sql", FileAction::Edit),
            ("/home/me/shop/reports/README.md", FileAction::Edit),
        ]
    );
}

#[test]
fn discovery_follows_gooses_own_places() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let default = h.join(".local/share/goose/sessions");
    std::fs::create_dir_all(&default).unwrap();
    std::fs::write(default.join("sessions.db"), b"x").unwrap();
    std::fs::write(default.join("20250101_1.jsonl"), b"{}").unwrap();
    let found = |env: &[(&str, &str)]| -> usize { common::discovered(&context(h, env)).len() };
    assert_eq!(found(&[]), 1);
    let root = h.join("goose-root");
    std::fs::create_dir_all(root.join("data/sessions")).unwrap();
    std::fs::write(root.join("data/sessions/sessions.db"), b"x").unwrap();
    let root_text = root.to_string_lossy().into_owned();
    assert_eq!(found(&[("GOOSE_PATH_ROOT", &root_text)]), 2);
}
