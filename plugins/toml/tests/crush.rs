//! The Crush reader, written only in TOML (`readers/crush.toml`), on a real
//! Crush database (`fixtures/golden/crush/real-exabgp/.crush/`, see its
//! SOURCES.md): everything in it is in its write-ahead log.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{HostContext, ParseRequest, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;
use rusqlite::Connection;

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("crush.toml", home, env)
}

/// The real database copied into `<dir>/exabgp/.crush/`, its log beside it.
fn real_copy(dir: &Path) -> PathBuf {
    let to = dir.join("exabgp/.crush");
    std::fs::create_dir_all(&to).unwrap();
    let from = testing::fixtures("crush").join("real-exabgp/.crush");
    for name in ["crush.db", "crush.db-wal"] {
        std::fs::copy(from.join(name), to.join(name)).unwrap();
    }
    to.join("crush.db")
}

/// Counts by SQLite's own JSON functions, not the reader: messages with a
/// text part that is not Crush's `/init` prompt, and bash calls.
fn independent_count(db: &Path) -> (usize, usize) {
    let conn = Connection::open(db).unwrap();
    let count =
        |sql: &str| -> usize { conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap() as usize };
    (
        count(
            "SELECT count(*) FROM messages m WHERE role IN ('user', 'assistant') AND EXISTS (
               SELECT 1 FROM json_each(m.parts) j
               WHERE json_extract(j.value, '$.type') = 'text'
                 AND trim(json_extract(j.value, '$.data.text')) != ''
                 AND json_extract(j.value, '$.data.text')
                     NOT LIKE '`Please analyze this codebase and create a%')",
        ),
        count(
            "SELECT count(*) FROM messages m, json_each(m.parts) j
             WHERE json_extract(j.value, '$.type') = 'tool_call'
               AND json_extract(j.value, '$.data.name') = 'bash'",
        ),
    )
}

#[test]
fn a_real_crush_database_reads_from_its_write_ahead_log() {
    let dir = tempfile::tempdir().unwrap();
    let db = real_copy(dir.path());
    let bytes = std::fs::read(&db).unwrap();
    assert_eq!(bytes.len(), 4096, "the main file holds no session");
    let c = context(Path::new("/nonexistent"), &[]);
    let out = TomlReader::parse(&ParseRequest {
        path: db.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &c,
    })
    .unwrap();
    assert_eq!(out.sessions.len(), 1, "{:?}", out.warnings);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "4f04805a-caf7-4a47-b98f-b50e16556fa2");
    // The project is the folder that holds `.crush/`.
    let project = dir.path().join("exabgp");
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.to_string()),
        ROption::RSome(project.to_string_lossy().into_owned())
    );
    assert_eq!(
        s.project.name.as_ref().map(|d| d.as_str()),
        ROption::RSome("exabgp")
    );
    let (messages, bash) = independent_count(&db);
    assert_eq!(s.messages.len(), messages);
    assert_eq!(s.commands.len(), bash);
    // The session began with Crush's `/init` prompt, which is not the
    // person's: the first message is the answer to it, the person's first
    // words come after.
    assert_eq!(s.messages[0].role, Role::Assistant);
    assert!(s.messages[1]
        .text
        .starts_with("the testing you added to the file is not correct"));
    assert!(s.started_at_ms > 1_750_000_000_000, "{}", s.started_at_ms);
}

#[test]
fn discovery_looks_inside_known_projects_and_code_folders() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    for rel in [
        "src/shop/.crush/crush.db",
        "code/team/api/.crush/crush.db",
        "elsewhere/app/.crush/crush.db",
    ] {
        let p = h.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"x").unwrap();
    }
    let found = |env: &[(&str, &str)]| -> Vec<String> { common::discovered(&context(h, env)) };
    let at = |rel: &str| h.join(rel).to_string_lossy().into_owned();
    assert_eq!(
        found(&[]),
        vec![
            at("code/team/api/.crush/crush.db"),
            at("src/shop/.crush/crush.db")
        ]
    );
    // A project folder another harness's session named.
    let known = at("elsewhere/app");
    assert_eq!(found(&[("DEJA_KNOWN_PROJECTS", &known)]).len(), 3);
    // Each is marked as found in a code folder (it may have come with a
    // clone), unless a place the user named holds it.
    let marked = |env: &[(&str, &str)]| -> Vec<String> {
        let mut v: Vec<String> = TomlReader::discover(&context(h, env))
            .unwrap()
            .searched
            .iter()
            .filter(|s| s.reason.as_str() == "found in a code folder")
            .map(|s| s.path.to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(marked(&[]), found(&[]));
    let named = at("src/shop/.crush");
    assert_eq!(
        marked(&[("DEJA_CRUSH_ROOT", &named)]),
        Vec::<String>::new(),
        "the root variable replaces the project folders"
    );
}
