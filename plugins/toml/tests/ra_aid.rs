//! The RA.Aid reader, written only in TOML (`readers/ra-aid.toml`):
//! `fixtures/golden/ra-aid/real-0.30.2/.ra-aid/pk.db` is the database RA.Aid
//! 0.30.2 wrote in three runs in one project against a scripted model: a
//! question answered after a shell command and a file read, a second
//! question answered after another command, and a task carried out through
//! its planning and implementation stages.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ParseOutput, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;
use rusqlite::Connection;

const FIRST: &str = "ra-aid-1-20261206T232600";
const SECOND: &str = "ra-aid-2-20261206T232618";
const THIRD: &str = "ra-aid-3-20261206T232634";

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("ra-aid.toml", home, env)
}

fn golden() -> PathBuf {
    testing::fixtures("ra-aid").join("real-0.30.2/.ra-aid/pk.db")
}

/// A copy of the golden database at `<project>/.ra-aid/pk.db`.
fn project_copy(project: &Path) -> PathBuf {
    let dir = project.join(".ra-aid");
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("pk.db");
    std::fs::copy(golden(), &db).unwrap();
    db
}

fn parse(db: &Path) -> ParseOutput {
    testing::parse_file::<TomlReader>(db, &context(Path::new("/nonexistent"), &[]))
}

/// Milliseconds since the epoch of a time RA.Aid wrote: the machine's local
/// time without an offset, as SQLite reads it in this process.
fn local_ms(conn: &Connection, time: &str) -> i64 {
    conn.query_row(
        "SELECT CAST(round((julianday(?1, 'utc') - 2440587.5) * 86400000) AS INTEGER)",
        [time],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn the_runs_ra_aid_wrote_read_as_asked_answered_and_run() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("ledger");
    let db = project_copy(&project);
    let before = common::snapshot(db.parent().unwrap());
    let out = parse(&db);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let ids: Vec<&str> = out.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, [FIRST, SECOND, THIRD]);
    let (first, second, third) = (&out.sessions[0], &out.sessions[1], &out.sessions[2]);
    assert_eq!(
        common::messages(first),
        vec![
            (
                Role::User,
                "Why does the ledger show rows of other tenants?"
            ),
            (
                Role::Assistant,
                "The ledger query lost its tenant predicate in the join."
            ),
        ]
    );
    let ran = |s: &deja_plugin_api::Session| -> Vec<String> {
        s.commands.iter().map(|c| c.command.to_string()).collect()
    };
    assert_eq!(ran(first), ["grep -rn \"tenant_id\" ."]);
    let ledger = project.join("ledger.sql").to_string_lossy().into_owned();
    assert_eq!(
        common::files(first),
        vec![(ledger.as_str(), FileAction::Read)]
    );
    assert_eq!(
        common::messages(second),
        vec![
            (Role::User, "Which migration added the tenant column?"),
            (
                Role::Assistant,
                "Migration 0042 added the tenant column to the ledger."
            ),
        ]
    );
    assert_eq!(ran(second), ["ls migrations"]);
    // The task's run: the implementation agent's `task_completed` and the
    // planner's `plan_implementation_completed` are the answers. RA.Aid
    // 0.30.2 fails to record its string replacement (a keyword its
    // trajectory does not take), so there is no file record.
    assert_eq!(
        common::messages(third),
        vec![
            (Role::User, "Add the tenant predicate to the ledger query."),
            (
                Role::Assistant,
                "ledger.sql joins accounts on the tenant too."
            ),
            (Role::Assistant, "The ledger query now keeps to one tenant."),
        ]
    );
    assert!(third.commands.is_empty() && third.files.is_empty());
    // The project is the folder holding `.ra-aid/`.
    for s in &out.sessions {
        assert_eq!(
            s.project.dir.as_ref().map(|d| d.as_str()),
            ROption::RSome(project.to_string_lossy().as_ref())
        );
        assert_eq!(s.title, ROption::RNone);
        assert_eq!(s.parent_id, ROption::RNone);
    }
    // Local times without an offset: the run's start, its task's record
    // (23:26:01.223702) and the last answer.
    let conn = Connection::open_in_memory().unwrap();
    assert_eq!(
        first.started_at_ms,
        local_ms(&conn, "2026-12-06 23:26:00.512")
    );
    assert_eq!(
        first.messages[0].timestamp_ms,
        local_ms(&conn, "2026-12-06 23:26:01.224")
    );
    assert_eq!(
        first.updated_at_ms,
        local_ms(&conn, "2026-12-06 23:26:02.796")
    );
    // Read from a copy: nothing beside the database is created or changed.
    assert_eq!(common::snapshot(db.parent().unwrap()), before);
}

#[test]
fn chat_mode_and_failed_commands_as_ra_aid_records_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = project_copy(&dir.path().join("ledger"));
    let conn = Connection::open(&db).unwrap();
    // As RA.Aid's chat mode writes them (`__main__.py`, `tools/human.py`):
    // the first request twice, once without a session (`ask_human`) and once
    // with it; a later answer to the agent's question without one. And a
    // shell command whose run raised: a second record with `is_error`.
    conn.execute_batch(
        "INSERT INTO session (id, created_at, updated_at, start_time, command_line, program_version, status)
           VALUES (4, '2026-12-06 23:30:00.000000', '2026-12-06 23:30:00.000000',
                   '2026-12-06 23:30:00.000000', 'ra-aid --chat', '0.30.2', 'pending');
         INSERT INTO trajectory (created_at, updated_at, tool_name, step_data, record_type, is_error, session_id)
           VALUES ('2026-12-06 23:30:01.000000', '2026-12-06 23:30:01.000000', '',
                   '{\"stage\": \"chat_mode\", \"display_title\": \"Chat Mode\"}', 'stage_transition', 0, 4);
         INSERT INTO human_input (created_at, updated_at, content, source, session_id)
           VALUES ('2026-12-06 23:30:05.000000', '2026-12-06 23:30:05.000000', 'Who reads the ledger?', 'chat', NULL),
                  ('2026-12-06 23:30:05.100000', '2026-12-06 23:30:05.100000', 'Who reads the ledger?', 'chat', 4),
                  ('2026-12-06 23:30:09.000000', '2026-12-06 23:30:09.000000', 'Only the export.', 'chat', NULL);
         INSERT INTO trajectory (created_at, updated_at, tool_name, tool_parameters, step_data, record_type, is_error, error_message, session_id)
           VALUES ('2026-12-06 23:30:06.000000', '2026-12-06 23:30:06.000000', 'run_shell_command',
                   '{\"command\": \"rg -l ledger jobs/\", \"timeout\": 30}',
                   '{\"command\": \"rg -l ledger jobs/\", \"display_title\": \"Shell Command\"}',
                   'tool_execution', 0, NULL, 4),
                  ('2026-12-06 23:30:06.500000', '2026-12-06 23:30:06.500000', 'run_shell_command',
                   '{\"command\": \"rg -l ledger jobs/\", \"timeout\": 30}',
                   '{\"command\": \"rg -l ledger jobs/\", \"error\": \"boom\", \"display_title\": \"Shell Error\"}',
                   'tool_execution', 1, 'boom', 4),
                  ('2026-12-06 23:30:10.000000', '2026-12-06 23:30:10.000000', 'task_completed',
                   '{\"message\": \"The nightly export reads the ledger.\"}',
                   '{\"completion_message\": \"The nightly export reads the ledger.\", \"display_title\": \"Task Completed\"}',
                   'task_completion', 0, NULL, 4);",
    )
    .unwrap();
    drop(conn);
    let out = parse(&db);
    assert_eq!(out.sessions.len(), 4);
    let chat = &out.sessions[3];
    assert_eq!(chat.id.as_str(), "ra-aid-4-20261206T233000");
    assert_eq!(
        common::messages(chat),
        vec![
            (Role::User, "Who reads the ledger?"),
            (Role::Assistant, "The nightly export reads the ledger."),
        ]
    );
    let ran: Vec<&str> = chat.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(ran, ["rg -l ledger jobs/"]);
}

#[test]
fn a_run_of_another_project_is_not_taken_for_this_ones() {
    // Every project's database numbers its runs from 1.
    let dir = tempfile::tempdir().unwrap();
    let db = project_copy(&dir.path().join("shop"));
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(
        "DELETE FROM trajectory WHERE session_id <> 1; DELETE FROM human_input WHERE session_id <> 1;
         DELETE FROM session WHERE id <> 1;
         UPDATE session SET start_time = '2026-12-07 08:00:00.000000';",
    )
    .unwrap();
    drop(conn);
    let out = parse(&db);
    assert_eq!(out.sessions.len(), 1);
    assert_eq!(out.sessions[0].id.as_str(), "ra-aid-1-20261207T080000");
    assert_ne!(out.sessions[0].id.as_str(), FIRST);
}

#[test]
fn discovery_looks_inside_known_projects_and_code_folders() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    for project in ["src/shop", "code/team/api", "elsewhere/app"] {
        project_copy(&h.join(project));
    }
    let found = |env: &[(&str, &str)]| -> Vec<String> { common::discovered(&context(h, env)) };
    let at = |rel: &str| h.join(rel).to_string_lossy().into_owned();
    assert_eq!(
        found(&[]),
        vec![
            at("code/team/api/.ra-aid/pk.db"),
            at("src/shop/.ra-aid/pk.db")
        ]
    );
    let known = at("elsewhere/app");
    assert_eq!(found(&[("DEJA_KNOWN_PROJECTS", &known)]).len(), 3);
    // A state folder of `--project-state-dir`, named by the root variable,
    // replaces the project folders.
    let named = at("elsewhere/app/.ra-aid");
    assert_eq!(
        found(&[("DEJA_RA_AID_ROOT", &named)]),
        vec![at("elsewhere/app/.ra-aid/pk.db")]
    );
}

#[test]
fn resume_is_refused() {
    use deja_plugin_api::{ResumeAdvice, ResumeRequest};
    let c = context(Path::new("/nonexistent"), &[]);
    let advice = TomlReader::resume(&ResumeRequest {
        id: FIRST.into(),
        native_id: FIRST.into(),
        project_dir: ROption::RNone,
        source_path: ROption::RNone,
        context: &c,
    })
    .unwrap();
    assert!(matches!(advice, ResumeAdvice::Refused { .. }));
}
