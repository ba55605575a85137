//! The OpenCode reader, written only in TOML (`readers/opencode.toml`), one
//! test per rule: each fixture under `fixtures/golden/opencode/` is SQL run
//! on the tables OpenCode 1.18.33 creates (`schema.sql`), and
//! `real-1.18.33/opencode.db` is a database OpenCode 1.18.33 wrote itself.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{
    CommandOrigin, FileAction, HostContext, ParseOutput, ParseRequest, ROption, RStr, Reader,
    ResumeAdvice, ResumeRequest, Role,
};
use deja_plugin_toml::{TomlReader, BUILTIN};
use rusqlite::Connection;

/// A context with the OpenCode description, `home` and exactly `env`.
fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("opencode.toml", home, env)
}

fn golden() -> PathBuf {
    testing::fixtures("opencode")
}

/// A database built from the schema and fixture `name`, in `dir`.
fn build(dir: &Path, name: &str) -> PathBuf {
    let db = dir.join("opencode.db");
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(&std::fs::read_to_string(golden().join("schema.sql")).unwrap())
        .unwrap();
    conn.execute_batch(&std::fs::read_to_string(golden().join(name)).unwrap())
        .unwrap();
    db
}

fn parse_path(path: &Path) -> ParseOutput {
    let bytes = std::fs::read(path).unwrap();
    let c = context(Path::new("/nonexistent-home"), &[]);
    TomlReader::parse(&ParseRequest {
        path: path.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &c,
    })
    .unwrap()
}

fn fixture(name: &str) -> ParseOutput {
    let dir = tempfile::tempdir().unwrap();
    parse_path(&build(dir.path(), name))
}

fn texts(out: &ParseOutput, i: usize) -> Vec<(Role, String)> {
    out.sessions[i]
        .messages
        .iter()
        .map(|m| (m.role, m.text.to_string()))
        .collect()
}

#[test]
fn a_session_is_its_typed_text_and_answers_with_commands_and_files() {
    let out = fixture("01-basic.sql");
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "ses_basic");
    assert_eq!(s.native_id.as_str(), "ses_basic");
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Tenant predicate in the orders query")
    );
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/work/shop")
    );
    assert_eq!(
        s.project.name.as_ref().map(|d| d.as_str()),
        ROption::RSome("shop")
    );
    assert_eq!(
        s.project.id.as_ref().map(|d| d.as_str()),
        ROption::RSome("p1")
    );
    assert_eq!(
        (s.started_at_ms, s.updated_at_ms),
        (1764000000000, 1764000090000)
    );
    // Reasoning, tool calls and their output, steps and patches are not messages;
    // the two text parts of one assistant message are one message.
    assert_eq!(
        texts(&out, 0),
        vec![
            (
                Role::User,
                "Why does the orders query return rows of other tenants?".into()
            ),
            (
                Role::Assistant,
                "Let me look at the query.\n\nThe join lost the tenant predicate; I added it back."
                    .into()
            ),
        ]
    );
    assert_eq!(
        s.messages[0].native_id.as_ref().map(|m| m.as_str()),
        ROption::RSome("msg_01")
    );
    assert_eq!(s.messages[1].timestamp_ms, 1764000002000);
    let commands: Vec<(&str, CommandOrigin)> = s
        .commands
        .iter()
        .map(|c| (c.command.as_str(), c.origin))
        .collect();
    assert_eq!(
        commands,
        vec![("grep -rn tenant_id src/orders.sql", CommandOrigin::Agent)]
    );
    // A relative path is resolved against the session's folder.
    let files = common::files(s);
    assert_eq!(
        files,
        vec![
            ("/work/shop/src/orders.sql", FileAction::Read),
            ("/work/shop/src/orders.sql", FileAction::Edit),
        ]
    );
}

#[test]
fn text_opencode_adds_itself_is_not_what_was_typed() {
    let out = fixture("02-injected.sql");
    assert_eq!(
        texts(&out, 0),
        vec![
            (Role::User, "Summarise @todo.md please".into()),
            (
                Role::Assistant,
                "Two items: milk, and the tenant bug.".into()
            ),
        ]
    );
    // "New session - <time>" is OpenCode's placeholder, not a title.
    assert_eq!(out.sessions[0].title, ROption::RNone);
}

#[test]
fn a_child_session_names_its_parent_and_a_session_without_text_is_skipped() {
    let out = fixture("03-subtask.sql");
    let ids: Vec<&str> = out.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, vec!["ses_parent", "ses_child"]);
    assert_eq!(out.skipped_empty, 1);
    assert_eq!(out.sessions[0].parent_id, ROption::RNone);
    assert_eq!(
        out.sessions[1].parent_id.as_ref().map(|p| p.as_str()),
        ROption::RSome("ses_parent")
    );
    assert_eq!(
        texts(&out, 1)[1].1,
        "There are 12 handlers under src/routes."
    );
}

/// The messages an independent count finds in an OpenCode database: those
/// with at least one text part OpenCode did not add itself (SQLite's own
/// JSON functions, not the reader).
fn independent_count(db: &Path) -> (usize, usize) {
    let conn = Connection::open(db).unwrap();
    let messages: i64 = conn
        .query_row(
            "SELECT count(DISTINCT p.message_id) FROM part p
             WHERE json_extract(p.data, '$.type') = 'text'
               AND coalesce(json_extract(p.data, '$.synthetic'), 0) = 0
               AND coalesce(json_extract(p.data, '$.ignored'), 0) = 0
               AND trim(json_extract(p.data, '$.text')) != ''",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let commands: i64 = conn
        .query_row(
            "SELECT count(*) FROM part WHERE json_extract(data, '$.type') = 'tool'
             AND json_extract(data, '$.tool') = 'bash'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    (messages as usize, commands as usize)
}

#[test]
fn a_database_opencode_wrote_reads_as_its_one_session() {
    let db = golden().join("real-1.18.33/opencode.db");
    // Read from a copy: a read-only open must not need to write beside the fixture.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("opencode.db");
    std::fs::copy(&db, &copy).unwrap();
    let out = parse_path(&copy);
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "ses_dcb2bd476ffeqDKQ7m9bUzyqS6");
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/oc/proj")
    );
    let (messages, commands) = independent_count(&copy);
    assert_eq!(s.messages.len(), messages);
    assert_eq!(s.commands.len(), commands);
    assert_eq!(
        texts(&out, 0),
        vec![
            // `opencode run` keeps the quotes of its message argument.
            (
                Role::User,
                "\"Why did the tenant query leak rows? Please fix it.\"".into()
            ),
            (Role::Assistant, "Let me look.".into()),
            (
                Role::Assistant,
                "The tenant predicate was missing from the join; I wrote notes.md with the fix."
                    .into()
            ),
        ]
    );
    assert_eq!(s.commands[0].command.as_str(), "ls -la");
    let files = common::files(s);
    assert_eq!(
        files,
        vec![
            ("/tmp/oc/proj/notes.md", FileAction::Edit),
            ("/tmp/oc/proj/notes.md", FileAction::Read),
        ]
    );
}

#[test]
fn what_a_running_opencode_has_only_in_its_write_ahead_log_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    let writer = Connection::open(&db).unwrap();
    writer
        .execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")
        .unwrap();
    writer
        .execute_batch(&std::fs::read_to_string(golden().join("schema.sql")).unwrap())
        .unwrap();
    writer
        .execute_batch(&std::fs::read_to_string(golden().join("01-basic.sql")).unwrap())
        .unwrap();
    // The writer is still open: the main file holds no session yet.
    assert!(dir.path().join("opencode.db-wal").metadata().unwrap().len() > 0);
    let out = parse_path(&db);
    assert_eq!(out.sessions.len(), 1, "{:?}", out.warnings);
    assert_eq!(out.sessions[0].messages.len(), 2);
    drop(writer);
}

#[test]
fn bytes_without_a_file_are_read_as_a_database_and_garbage_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = build(dir.path(), "01-basic.sql");
    let bytes = std::fs::read(&db).unwrap();
    let c = context(Path::new("/nonexistent-home"), &[]);
    let out = testing::parse_bytes::<TomlReader>("/nowhere/opencode.db", &bytes, 0, &c);
    assert_eq!(out.sessions.len(), 1);
    for garbage in [&b""[..], b"not a database", b"SQLite format 3\0truncated"] {
        let e = TomlReader::parse(&ParseRequest {
            path: "/nowhere/opencode.db".into(),
            bytes: garbage.into(),
            modified_ms: 0,
            context: &c,
        })
        .unwrap_err();
        assert!(e.message.contains("SQLite database"), "{}", e.message);
    }
}

#[test]
fn resume_runs_opencode_with_the_session_in_its_folder() {
    let c = context(Path::new("/home/me"), &[]);
    let advice = TomlReader::resume(&ResumeRequest {
        id: "ses_basic".into(),
        native_id: "ses_basic".into(),
        project_dir: ROption::RSome(RStr::from("/work/shop")),
        source_path: ROption::RNone,
        context: &c,
    })
    .unwrap();
    match advice {
        ResumeAdvice::Command { argv, cwd, .. } => {
            let argv: Vec<&str> = argv.iter().map(|a| a.as_str()).collect();
            assert_eq!(argv, vec!["opencode", "--session", "ses_basic"]);
            assert_eq!(
                cwd.as_ref().map(|c| c.as_str()),
                ROption::RSome("/work/shop")
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn discovery_follows_opencodes_own_places() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let default = h.join(".local/share/opencode");
    std::fs::create_dir_all(&default).unwrap();
    for name in [
        "opencode.db",
        "opencode.db-wal",
        "opencode.db-shm",
        "opencode-beta.db",
        "other.db",
    ] {
        std::fs::write(default.join(name), b"x").unwrap();
    }
    std::fs::create_dir_all(default.join("storage")).unwrap();
    std::fs::write(default.join("storage/opencode.db"), b"x").unwrap();
    let found = |env: &[(&str, &str)]| -> Vec<String> {
        let d = TomlReader::discover(&context(h, env)).unwrap();
        d.transcripts.iter().map(|t| t.to_string()).collect()
    };
    let at = |p: &Path| p.to_string_lossy().into_owned();
    assert_eq!(
        found(&[]),
        vec![
            at(&default.join("opencode-beta.db")),
            at(&default.join("opencode.db"))
        ]
    );
    // XDG_DATA_HOME is searched too, and OPENCODE_DB names one more file.
    let xdg = h.join("xdg");
    std::fs::create_dir_all(xdg.join("opencode")).unwrap();
    std::fs::write(xdg.join("opencode/opencode.db"), b"x").unwrap();
    std::fs::write(h.join("mine.db"), b"x").unwrap();
    let xdg_text = at(&xdg);
    let mine = at(&h.join("mine.db"));
    let all = found(&[("XDG_DATA_HOME", &xdg_text), ("OPENCODE_DB", &mine)]);
    assert_eq!(all[0], mine);
    assert!(
        all.contains(&at(&xdg.join("opencode/opencode.db"))),
        "{all:?}"
    );
    // DEJA_OPENCODE_ROOT replaces the roots.
    let only = found(&[("DEJA_OPENCODE_ROOT", &xdg_text)]);
    assert!(only.is_empty(), "{only:?}");
}

#[test]
fn detection_wants_the_name_and_a_sqlite_file() {
    let c = context(Path::new("/home/me"), &[]);
    let sqlite = b"SQLite format 3\0rest";
    assert!(TomlReader::detect_in(&c, "/x/opencode.db", sqlite) > 0);
    assert!(TomlReader::detect_in(&c, "/x/opencode-beta.db", sqlite) > 0);
    assert_eq!(
        TomlReader::detect_in(&c, "/x/opencode.db", b"{\"type\":1}"),
        0
    );
    assert_eq!(TomlReader::detect_in(&c, "/x/state.vscdb", sqlite), 0);
    // Without a description it claims nothing.
    assert_eq!(TomlReader::detect("/x/opencode.db", sqlite), 0);
}

#[test]
fn the_builtin_description_describes_opencode() {
    let info = TomlReader::info_in(&context(Path::new("/h"), &[])).unwrap();
    assert_eq!(info.harness.as_str(), "opencode");
    assert!(
        info.version.as_str().starts_with("1.1.0+toml."),
        "{}",
        info.version
    );
    let d = TomlReader::descriptions();
    assert_eq!(d.extension.as_str(), "toml");
    assert_eq!(d.builtin.len(), BUILTIN.len());
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any bytes handed over as a database: an error or sessions, never a panic.
        #[test]
        fn any_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let c = context(Path::new("/nonexistent-home"), &[]);
            let mut with_magic = b"SQLite format 3\0".to_vec();
            with_magic.extend_from_slice(&bytes);
            for b in [&bytes, &with_magic] {
                let _ = TomlReader::parse(&ParseRequest {
                    path: "/nowhere/opencode.db".into(),
                    bytes: b.as_slice().into(),
                    modified_ms: 0,
                    context: &c,
                });
            }
        }
    }
}
