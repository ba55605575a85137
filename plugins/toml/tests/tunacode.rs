//! The TunaCode reader, written only in TOML (`readers/tunacode.toml`):
//! `fixtures/golden/tunacode/real-0.2.3/sessions/` holds the session
//! TunaCode 0.2.3 wrote in a run against a scripted model (two questions
//! typed in its terminal interface, bash and write_file calls), as it keeps
//! it in `~/.local/share/tunacode/sessions/<project>_<id>.json`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{CommandOutcome, FileAction, HostContext, ParseOutputV1_2, ROption, Role};

const SESSION: &str = "3341277e-f470-4ed2-bfbc-8b91e308d8b7";
const FILE: &str = "b1e37b0a2773a2f2_3341277e-f470-4ed2-bfbc-8b91e308d8b7.json";

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("tunacode.toml", home, env)
}

fn golden() -> PathBuf {
    testing::fixtures("tunacode")
        .join("real-0.2.3/sessions")
        .join(FILE)
}

fn parse(file: &Path) -> ParseOutputV1_2 {
    common::parse_with_outcomes("tunacode.toml", file)
}

#[test]
fn a_session_tunacode_wrote_reads_as_typed_answered_and_run() {
    let out = parse(&golden());
    let s = common::only_session(&out.output);
    assert_eq!(s.id.as_str(), SESSION);
    assert_eq!(s.project.dir, ROption::RSome("/tmp/tg/work/ledger".into()));
    assert_eq!(s.title, ROption::RNone);
    // Not the tools' results, which TunaCode keeps as messages of their own.
    assert_eq!(common::messages(s), common::LEDGER_TALK);
    // The session's own times, not the clock readings of the person's
    // messages: 2026-12-06T23:31:50.555623Z to 23:31:53.647778Z.
    assert_eq!(s.started_at_ms, 1_796_599_910_555);
    assert_eq!(s.updated_at_ms, 1_796_599_913_647);
    // The person's messages take the time of the record before them.
    let times: Vec<i64> = s.messages.iter().map(|m| m.timestamp_ms).collect();
    assert_eq!(
        times,
        vec![
            1_796_599_910_555,
            1_796_599_911_745,
            1_796_599_911_774,
            1_796_599_911_774,
            1_796_599_912_992,
            1_796_599_913_015,
        ]
    );
    // grep's exit code 1 is kept only in the result's text: the outcome of
    // both commands is unknown.
    assert_eq!(
        common::ran(&out, 0),
        vec![
            ("grep -rn \"tenant_id\" .", CommandOutcome::default()),
            ("ls migrations", CommandOutcome::default()),
        ]
    );
    assert_eq!(
        common::files(s),
        vec![("/tmp/tg/work/ledger/NOTES.md", FileAction::Edit)]
    );
}

#[test]
fn a_compaction_summary_and_a_failed_tool_read_as_tunacode_means_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("0123456789abcdef_s1.json");
    std::fs::write(
        &file,
        r#"{"version": 1, "session_id": "s1", "working_directory": "/tmp/w",
            "created_at": "2026-12-06T23:31:50+00:00", "last_modified": "2026-12-06T23:32:50+00:00",
            "messages": [
              {"role": "user", "content": [{"type": "text", "text": "[Compaction summary]\n\nThe user asked about tenants."}], "timestamp": null, "compaction_summary": true},
              {"role": "user", "content": [{"type": "text", "text": "Run the tests."}], "timestamp": 5},
              {"role": "assistant", "content": [{"type": "tool_call", "id": "c1", "name": "bash", "arguments": {"command": "cargo test"}}], "timestamp": 1796599911745},
              {"role": "tool_result", "tool_call_id": "c1", "tool_name": "bash", "content": [{"type": "text", "text": "timed out"}], "is_error": true, "timestamp": 6},
              {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "The tests timed out."}], "timestamp": 1796599912745}
            ]}"#,
    )
    .unwrap();
    let out = parse(&file);
    let s = &out.output.sessions[0];
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Run the tests."),
            (Role::Assistant, "The tests timed out."),
        ]
    );
    assert_eq!(s.commands[0].command.as_str(), "cargo test");
    assert_eq!(out.outcome(0, 0), CommandOutcome::from_failed(true));
}

#[test]
fn discovery_follows_tunacodes_own_places() {
    let home = tempfile::tempdir().unwrap();
    let sessions = home.path().join(".local/share/tunacode/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::copy(golden(), sessions.join(FILE)).unwrap();
    let found =
        |env: &[(&str, &str)]| -> Vec<String> { common::discovered(&context(home.path(), env)) };
    assert_eq!(
        found(&[]),
        vec![sessions.join(FILE).to_string_lossy().into_owned()]
    );
    let data = home.path().join("data");
    std::fs::create_dir_all(data.join("tunacode/sessions")).unwrap();
    std::fs::copy(golden(), data.join("tunacode/sessions").join(FILE)).unwrap();
    let data_text = data.to_string_lossy().into_owned();
    assert_eq!(found(&[("XDG_DATA_HOME", &data_text)]).len(), 2);
}

#[test]
fn resume_starts_tunacode_in_the_sessions_folder() {
    let c = context(Path::new("/nonexistent"), &[]);
    let (argv, note) = common::resume(&c, SESSION, Some("/tmp/tg/work/ledger"));
    assert_eq!(argv, vec!["tunacode"]);
    assert!(note.contains("/resume load"), "{note}");
}
