//! The Hermes Agent reader, written only in TOML (`readers/hermes-agent.toml`):
//! `fixtures/golden/hermes-agent/real-0.19.0/state.db` is the database Hermes
//! Agent 0.19.0 wrote in two runs against a scripted model (`hermes chat -q`,
//! then the second question with `--resume`): terminal and write_file calls,
//! and the title Hermes had the model give the session. Its write-ahead log
//! is checkpointed into it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ParseOutputV1_2, ROption, Role};

const SESSION: &str = "20261206_235823_f5d539";

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("hermes-agent.toml", home, env)
}

fn golden() -> PathBuf {
    testing::fixtures("hermes-agent").join("real-0.19.0/state.db")
}

fn parse(file: &Path) -> ParseOutputV1_2 {
    common::parse_with_outcomes("hermes-agent.toml", file)
}

#[test]
fn a_session_hermes_wrote_reads_as_typed_answered_and_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    std::fs::copy(golden(), &db).unwrap();
    let before = common::snapshot(dir.path());
    let out = parse(&db);
    let s = common::only_session(&out.output);
    assert_eq!(s.id.as_str(), SESSION);
    assert_eq!(s.project.dir, ROption::RSome("/tmp/hg/work/ledger".into()));
    assert_eq!(s.title, ROption::RSome("Tenant rows in the ledger".into()));
    assert_eq!(s.parent_id, ROption::RNone);
    // Not the tools' results, which Hermes keeps as rows of their own.
    assert_eq!(common::messages(s), common::LEDGER_TALK);
    // 2026-12-06T23:58:27.298Z; the session was not ended, so it was last
    // active at its last message (23:58:33.015Z).
    assert_eq!(s.started_at_ms, 1_796_601_507_298);
    assert_eq!(s.updated_at_ms, 1_796_601_513_015);
    // grep found nothing (exit code 1), ls succeeded, as the terminal tool's
    // results say.
    assert_eq!(common::ran(&out, 0), common::ledger_ran());
    assert_eq!(
        common::files(s),
        vec![("/tmp/hg/work/ledger/NOTES.md", FileAction::Edit)]
    );
    assert!(
        common::snapshot(dir.path()) == before,
        "the database changed"
    );
}

/// Adds to a copy of the golden database a sub-agent's run, a session that
/// continues the golden one after a compression (with the summary Hermes
/// writes), and a rewound exchange.
#[test]
fn sub_agents_compressions_and_rewinds_read_as_hermes_means_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    std::fs::copy(golden(), &db).unwrap();
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "UPDATE sessions SET end_reason = 'compression', ended_at = 1796601600
               WHERE id = '20261206_235823_f5d539';
             INSERT INTO sessions (id, source, parent_session_id, started_at, cwd)
               VALUES ('cont', 'cli', '20261206_235823_f5d539', 1796601601, '/tmp/hg/work/ledger'),
                      ('sub', 'cli', 'cont', 1796601700, '/tmp/hg/work/ledger');
             INSERT INTO messages (session_id, role, content, timestamp, active, compacted)
               VALUES ('cont', 'user', '[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted.', 1796601601.5, 1, 0),
                      ('cont', 'user', 'Fix the join.', 1796601602, 1, 0),
                      ('cont', 'assistant', 'Fixed.', 1796601603, 1, 0),
                      ('cont', 'user', 'Undo that.', 1796601604, 0, 0),
                      ('cont', 'assistant', 'Undone.', 1796601605, 0, 0),
                      ('sub', 'user', 'Find the tenant filter.', 1796601701, 1, 0),
                      ('sub', 'assistant', 'In ledger.sql.', 1796601702, 1, 0);",
        )
        .unwrap();
    }
    let out = parse(&db);
    let by_id = |id: &str| {
        out.output
            .sessions
            .iter()
            .find(|s| s.id.as_str() == id)
            .unwrap()
    };
    let cont = by_id("cont");
    // A continuation after a compression is a session of its own.
    assert_eq!(cont.parent_id, ROption::RNone);
    // Neither the compression's summary nor what a /rewind took back is
    // read.
    assert_eq!(
        common::messages(cont),
        vec![(Role::User, "Fix the join."), (Role::Assistant, "Fixed.")]
    );
    let sub = by_id("sub");
    assert_eq!(sub.parent_id, ROption::RSome("cont".into()));
    assert_eq!(
        common::messages(sub),
        vec![
            (Role::User, "Find the tenant filter."),
            (Role::Assistant, "In ledger.sql."),
        ]
    );
}

#[test]
fn discovery_follows_hermes_own_places() {
    let home = tempfile::tempdir().unwrap();
    let hermes = home.path().join(".hermes");
    std::fs::create_dir_all(hermes.join("profiles/work")).unwrap();
    std::fs::copy(golden(), hermes.join("state.db")).unwrap();
    std::fs::copy(golden(), hermes.join("profiles/work/state.db")).unwrap();
    let found =
        |env: &[(&str, &str)]| -> Vec<String> { common::discovered(&context(home.path(), env)) };
    assert_eq!(
        found(&[]),
        vec![
            hermes
                .join("profiles/work/state.db")
                .to_string_lossy()
                .into_owned(),
            hermes.join("state.db").to_string_lossy().into_owned(),
        ]
    );
    let other = home.path().join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(golden(), other.join("state.db")).unwrap();
    let other_text = other.to_string_lossy().into_owned();
    assert_eq!(found(&[("HERMES_HOME", &other_text)]).len(), 3);
}

#[test]
fn resume_reopens_the_session_in_its_folder() {
    let c = context(Path::new("/nonexistent"), &[]);
    let (argv, _note) = common::resume(&c, SESSION, Some("/tmp/hg/work/ledger"));
    assert_eq!(argv, vec!["hermes", "--resume", SESSION]);
}
