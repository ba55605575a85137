//! One test per rule of the Codex reader, each over a fixture under
//! `fixtures/golden/codex/<NN-name>/` (a small `~/.codex`-like tree), read
//! through the `Reader` trait with a host context built explicitly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::{
    CommandOrigin, FileAction, ParseOutput, ROption, RStr, RString, Reader, ResumeAdvice,
    ResumeRequest, Role, Session,
};
use deja_plugin_codex::CodexReader;

use Role::{Assistant, User};

// ---- helpers -------------------------------------------------------------

fn fixture(relative: &str) -> PathBuf {
    let path = common::fixtures().join(relative);
    path.canonicalize()
        .unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

/// The rollout of fixture `dir` whose UUID ends in `n`.
fn rollout(dir: &str, n: u32) -> PathBuf {
    let suffix = format!("{n:012}.jsonl");
    common::walk(&fixture(dir))
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(&suffix))
        .unwrap_or_else(|| panic!("no rollout {n} in {dir}"))
}

fn parse(dir: &str, n: u32) -> ParseOutput {
    common::parse_file(&rollout(dir, n), &common::empty_context())
}

fn session(dir: &str, n: u32) -> Session {
    let output = parse(dir, n);
    assert!(output.warnings.is_empty(), "{:?}", output.warnings);
    assert_eq!(output.sessions.len(), 1, "{output:#?}");
    output.sessions[0].clone()
}

fn uid(n: u32) -> String {
    format!("019f0000-0000-7000-8000-{n:012}")
}

fn ms(rfc3339: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .unwrap()
        .timestamp_millis()
}

/// 09:MM:SS.mmm on the fixtures' day.
fn at(minute: u32, second: u32, milli: u32) -> i64 {
    ms(&format!(
        "2026-07-17T09:{minute:02}:{second:02}.{milli:03}Z"
    ))
}

fn messages(session: &Session) -> Vec<(Role, String, i64)> {
    session
        .messages
        .iter()
        .map(|m| (m.role, m.text.to_string(), m.timestamp_ms))
        .collect()
}

fn texts(session: &Session) -> Vec<String> {
    session
        .messages
        .iter()
        .map(|m| m.text.to_string())
        .collect()
}

fn said(role: Role, text: &str, timestamp_ms: i64) -> (Role, String, i64) {
    (role, text.to_string(), timestamp_ms)
}

fn files(session: &Session) -> Vec<(String, FileAction, i64)> {
    session
        .files
        .iter()
        .map(|f| (f.path.to_string(), f.action, f.timestamp_ms))
        .collect()
}

fn commands(session: &Session) -> Vec<(String, CommandOrigin, i64)> {
    session
        .commands
        .iter()
        .map(|c| (c.command.to_string(), c.origin, c.timestamp_ms))
        .collect()
}

fn opt(value: &ROption<RString>) -> Option<&str> {
    value.as_ref().into_option().map(|s| s.as_str())
}

// ---- the three generations ------------------------------------------------

#[test]
fn envelope_rollout_is_one_session() {
    let s = session("01-envelope", 1);
    assert_eq!(s.id.as_str(), uid(1));
    assert_eq!(s.native_id.as_str(), uid(1));
    assert_eq!(
        (s.started_at_ms, s.updated_at_ms),
        (at(0, 0, 0), at(0, 6, 1))
    );
    assert_eq!(opt(&s.project.dir), Some("/home/dev/envelope-app"));
    assert_eq!(opt(&s.project.name), Some("envelope-app"));
    assert_eq!(opt(&s.title), None);
    assert_eq!(opt(&s.parent_id), None);
    assert_eq!(s.precedence, 0);
    // The developer message, AGENTS.md, <environment_context>, reasoning and
    // <turn_aborted> are not messages; each turn's response item and event are one.
    assert_eq!(
        messages(&s),
        [
            said(User, "How do I parse RFC 3339 in Rust?", at(0, 1, 100)),
            said(
                Assistant,
                "Use chrono's `DateTime::parse_from_rfc3339`.",
                at(0, 3, 0)
            ),
            said(User, "Thanks!", at(0, 5, 0)),
        ]
    );
    assert!(s.messages.iter().all(|m| m.native_id.is_none()));
}

#[test]
fn legacy_rollout_takes_its_header_and_environment_cwd() {
    let path = rollout("02-legacy", 2);
    let bytes = std::fs::read(&path).unwrap();
    let modified = ms("2025-08-30T12:00:00Z");
    let output = common::parse_bytes(
        &path.to_string_lossy(),
        &bytes,
        modified,
        &common::empty_context(),
    );
    let s = &output.sessions[0];
    let start = ms("2025-08-30T11:49:52.079Z");
    assert_eq!(s.id.as_str(), uid(2));
    // No line but the header has a timestamp: start from it, end at the file's modification.
    assert_eq!((s.started_at_ms, s.updated_at_ms), (start, modified));
    assert_eq!(opt(&s.project.dir), Some("/Users/dev/legacy-app"));
    assert_eq!(
        messages(s),
        [
            said(User, "List the files", start),
            said(Assistant, "There is one file: a.rs.", start),
        ]
    );
    assert_eq!(commands(s), [("ls".into(), CommandOrigin::Agent, start)]);
    // A header and context only: nothing was said.
    let empty = parse("02-legacy", 3);
    assert!(empty.sessions.is_empty());
    assert_eq!(empty.skipped_empty, 1);
}

#[test]
fn newest_rollout_with_ordinals_and_completed_items() {
    let s = session("03-ordinal", 4);
    assert_eq!(s.native_id.as_str(), uid(4));
    assert_eq!(opt(&s.project.dir), Some("/projects"));
    assert_eq!(
        messages(&s),
        [
            said(User, "Hi", at(0, 1, 0)),
            said(Assistant, "Hello! How can I help?", at(0, 2, 900)),
        ]
    );
    assert_eq!(s.updated_at_ms, at(0, 50, 0));
}

// ---- what a message is --------------------------------------------------

#[test]
fn injected_context_is_not_a_message() {
    let s = session("04-injected-context", 5);
    // AGENTS.md, <environment_context>, <user_instructions> (and their 2025
    // `kind`ed events), <recommended_plugins>, <skill>, image tags,
    // <turn_aborted>, <user_action>, the compaction summary, developer and
    // system messages, and error events are dropped; HTML the person typed stays.
    assert_eq!(
        messages(&s),
        [
            said(User, "Summarize notes.md", at(0, 1, 0)),
            said(Assistant, "It lists three meetings.", at(0, 2, 0)),
            said(User, "<div>Is this HTML valid?</div>", at(0, 6, 0)),
        ]
    );
}

#[test]
fn ide_context_keeps_only_the_request() {
    let s = session("05-ide-context", 6);
    assert_eq!(
        texts(&s),
        [
            "What does x do?",
            "It sets x to one.",
            "Why is the banner red?",
            "The theme overrides it."
        ]
    );
    assert_eq!(opt(&s.project.dir), Some("c:\\Users\\dev\\Vault"));
    assert_eq!(opt(&s.project.name), Some("Vault"));
}

#[test]
fn response_items_and_events_are_counted_once() {
    let s = session("06-duplicates", 7);
    assert_eq!(
        messages(&s),
        [
            said(User, "A", at(0, 1, 0)),
            // The agent's event comes before its response item: the first gives the time.
            said(Assistant, "Option A it is.", at(0, 2, 0)),
            said(Assistant, "Built.", at(0, 3, 0)),
            // The same words in a later turn are another message; its three records are one.
            said(User, "A", at(0, 4, 0)),
            // An event without its response item (a fork's copied history) still counts.
            said(
                Assistant,
                "Copied from a fork: no response item.",
                at(0, 5, 0)
            ),
            // One answer in two content parts is one message, and its event its twin.
            said(Assistant, "Split in two parts.", at(0, 6, 0)),
            said(User, "Sent from the UI only", at(0, 7, 0)),
            said(User, "Sent from the UI only", at(0, 8, 0)),
        ]
    );
    assert_eq!(commands(&s).len(), 1);
}

#[test]
fn an_approval_review_says_each_prompt_once() {
    // Codex's approval reviewer gets its prompt as a dozen text parts; the
    // event joins them with nothing between, the response item keeps them apart.
    let s = session("21-approval-review", 47);
    let got = messages(&s);
    let roles: Vec<Role> = got.iter().map(|(role, _, _)| *role).collect();
    assert_eq!(roles, [User, Assistant, User, Assistant], "{got:#?}");
    let times: Vec<i64> = got.iter().map(|(_, _, at)| *at).collect();
    assert_eq!(
        times,
        [at(0, 1, 0), at(0, 1, 500), at(0, 2, 0), at(0, 2, 500)]
    );
    let (_, first, _) = &got[0];
    assert!(
        first.starts_with("The following is the Codex agent history whose request action"),
        "{first}"
    );
    assert!(first.contains("[1] user: Run the test suite"), "{first}");
    assert!(first.ends_with(">>> APPROVAL REQUEST END"), "{first}");
    let (_, second, _) = &got[2];
    assert!(
        second.starts_with("The following is the Codex agent history added since"),
        "{second}"
    );
    assert!(second.contains("[3] user: Now push it"), "{second}");
    assert_eq!(
        got[1].1,
        "{\"risk_level\":\"low\",\"outcome\":\"allow\",\"rationale\":\"The user asked for the tests.\"}"
    );
}

// ---- files being written ------------------------------------------------

#[test]
fn a_torn_last_line_waits_for_the_rest() {
    let s = session("07-torn", 8);
    // The half-written third message is not read; U+0085 inside a string does not cut a line.
    assert_eq!(
        texts(&s),
        ["Run the tests", "All 42 tests pass.\u{85}Done."]
    );
    // NUL padding a crash left at the end is ignored.
    assert_eq!(texts(&session("07-torn", 9)), ["Crashed while writing?"]);

    // Completing the torn line adds the message; every earlier one stays as it was.
    let path = rollout("07-torn", 8);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"e\"}]}}\n");
    let grown = common::parse_bytes(&path.to_string_lossy(), &bytes, 0, &common::empty_context());
    let g = &grown.sessions[0];
    assert_eq!(g.id, s.id);
    assert_eq!(&g.messages.as_slice()[..2], s.messages.as_slice());
    assert_eq!(g.messages[2].text.as_str(), "And the line");
}

#[test]
fn every_prefix_of_a_rollout_reads_as_a_prefix() {
    for (dir, n) in [
        ("01-envelope", 1),
        ("06-duplicates", 7),
        ("13-subagent-fork", 18),
    ] {
        let path = rollout(dir, n);
        let bytes = std::fs::read(&path).unwrap();
        let name = path.to_string_lossy().into_owned();
        let parse = |b: &[u8]| common::parse_bytes(&name, b, 0, &common::empty_context());
        let full = parse(&bytes);
        let full = &full.sessions[0];
        // Cuts before the first message read no session; at least a quarter
        // of all cuts must read one, or this checks little.
        let mut with_session = 0;
        for end in 0..bytes.len() {
            let part = parse(&bytes[..end]);
            let Some(s) = part.sessions.first() else {
                continue;
            };
            with_session += 1;
            assert_eq!(s.id, full.id, "{dir} cut at {end}");
            assert_eq!(
                s.messages.as_slice(),
                &full.messages.as_slice()[..s.messages.len()],
                "{dir} cut at {end}"
            );
            assert_eq!(
                s.commands.as_slice(),
                &full.commands.as_slice()[..s.commands.len()],
                "{dir} cut at {end}"
            );
        }
        println!(
            "{dir}: {with_session} of {} cuts read a session",
            bytes.len()
        );
        assert!(
            with_session * 4 >= bytes.len(),
            "{dir}: only {with_session} of {} cuts read a session",
            bytes.len()
        );
    }
}

// ---- tool calls ---------------------------------------------------------

#[test]
fn shell_calls_become_commands() {
    let s = session("08-shell-commands", 10);
    use CommandOrigin::{Agent, User as Person};
    assert_eq!(
        commands(&s),
        [
            ("cargo build".into(), Agent, at(0, 2, 0)),
            ("git status --short".into(), Agent, at(0, 3, 0)),
            ("npm test -- --watch=false".into(), Agent, at(0, 4, 0)),
            // write_stdin and update_plan are no commands; local_shell_call argv is quoted.
            ("rg -n 'TODO later' src".into(), Agent, at(0, 6, 0)),
            ("Get-ChildItem -Force".into(), Agent, at(0, 8, 0)),
            // exec_command_end repeats the first call: not counted. `!du` was the person's.
            ("du -sh target".into(), Person, at(0, 9, 0)),
        ]
    );
    assert!(s.files.is_empty());
    assert_eq!(texts(&s), ["Check the build", "The build is clean."]);
}

#[test]
fn apply_patch_becomes_edited_files() {
    let s = session("09-apply-patch", 11);
    let dir = "C:\\Users\\dev\\patch-app";
    let edit = |p: &str, t| (p.to_string(), FileAction::Edit, t);
    assert_eq!(
        files(&s),
        [
            edit(&format!("{dir}\\docs\\new.md"), at(0, 2, 0)),
            edit(&format!("{dir}\\src\\lib.rs"), at(0, 2, 0)),
            edit(&format!("{dir}\\src\\core.rs"), at(0, 2, 0)),
            edit(&format!("{dir}\\old.txt"), at(0, 2, 0)),
            edit(&format!("{dir}\\README.md"), at(0, 3, 0)),
            edit(&format!("{dir}\\notes\\todo.md"), at(0, 4, 0)),
            edit("/tmp/abs.txt", at(0, 5, 0)),
        ]
    );
    // A patch applied through the shell is a patch, not a command.
    assert!(s.commands.is_empty());
}

#[test]
fn simple_reads_become_read_files() {
    let s = session("10-reads", 12);
    let read = |p: &str, t| (p.to_string(), FileAction::Read, t);
    assert_eq!(
        files(&s),
        [
            read("/home/dev/read-app/config/app.toml", at(0, 2, 0)),
            read("/srv/shared/lib/util.py", at(0, 3, 0)),
            read("/home/dev/read-app/docs/README.md", at(0, 4, 0)),
            read("C:\\wiki\\Save data.md", at(0, 5, 0)),
            read("/tmp/screenshot.png", at(0, 6, 0)),
            read("/home/dev/read-app/src/main.rs", at(0, 7, 0)),
        ]
    );
    // `rg` searches and `cat a b` reads two files: commands, no read records.
    assert_eq!(s.commands.len(), 6);
}

#[test]
fn code_mode_programs_give_their_literal_commands() {
    let s = session("11-code-mode", 13);
    let names: Vec<String> = commands(&s).into_iter().map(|c| c.0).collect();
    assert_eq!(
        names,
        [
            "rg -n 'CreateTimer' Script",
            "Get-Content -LiteralPath 'Script\\Main.lua'"
        ]
    );
    assert_eq!(
        files(&s),
        [(
            "C:\\Users\\dev\\lua-app\\Script\\Main.lua".to_string(),
            FileAction::Read,
            at(0, 3, 0)
        )]
    );
}

// ---- titles, sub-agents, forks, resumes ----------------------------------

#[test]
fn titles_come_from_the_session_index_then_the_rollout() {
    // The last index entry for the id wins.
    assert_eq!(opt(&session("12-titles", 14).title), Some("The Hunter"));
    // No (complete) index entry: the rollout's thread_name_updated.
    assert_eq!(
        opt(&session("12-titles", 15).title),
        Some("Build physics pipeline")
    );
    // Archived rollouts read the same index, one folder up.
    assert_eq!(opt(&session("12-titles", 16).title), Some("Archived one"));
}

#[test]
fn a_forked_sub_agent_is_its_own_session_with_its_parent() {
    let child = session("13-subagent-fork", 18);
    let parent = session("13-subagent-fork", 17);
    assert_eq!(child.id.as_str(), uid(18));
    assert_eq!(opt(&child.parent_id), Some(parent.id.as_str()));
    assert_eq!(opt(&parent.parent_id), None);
    // The first session_meta is the sub-agent's own: its directory, its start.
    assert_eq!(opt(&child.project.dir), Some("C:\\Users\\dev\\game"));
    assert_eq!(child.started_at_ms, at(2, 0, 0));
    // The history a fork copies stays readable; the parent agent's task message is no message.
    assert_eq!(
        messages(&child),
        [
            said(User, "Why does the server leak timers?", at(2, 0, 5)),
            said(Assistant, "I will audit timers with a helper.", at(2, 0, 6)),
            said(Assistant, "Scanning CreateTimer calls.", at(2, 5, 0)),
        ]
    );
}

#[test]
fn review_mode_belongs_to_the_review_sub_agent() {
    let parent = session("14-review", 19);
    assert_eq!(
        texts(&parent),
        [
            "Open a PR",
            "PR #1 is open.",
            "One bug.\n\nFull review comments:\n- [P1] bug",
            "Fix it"
        ]
    );
    let review = session("14-review", 20);
    assert_eq!(
        texts(&review),
        [
            "Review the code changes against the base branch 'main'.",
            "{\"findings\": []}"
        ]
    );
    // A review sub-agent names no parent thread.
    assert_eq!(opt(&review.parent_id), None);
}

#[test]
fn a_resumed_rollout_keeps_its_first_identity() {
    let s = session("15-resumed", 21);
    assert_eq!(s.native_id.as_str(), uid(21));
    assert_eq!(opt(&s.parent_id), None);
    assert_eq!(s.started_at_ms, at(0, 0, 0));
    assert_eq!(texts(&s), ["Where were we?", "At step two."]);
}

#[test]
fn identity_falls_back_to_session_id_then_the_file_name() {
    assert_eq!(
        session("16-identity", 23).native_id.as_str(),
        "019f1111-0000-7000-8000-000000000001"
    );
    // session_id names the parent it was forked from: the file's own UUID instead.
    let forked = session("16-identity", 24);
    assert_eq!(forked.native_id.as_str(), uid(24));
    assert_eq!(opt(&forked.parent_id), Some(uid(90).as_str()));
    // A broken first line: the file name's UUID.
    let broken = session("16-identity", 25);
    assert_eq!(broken.native_id.as_str(), uid(25));
    assert_eq!(texts(&broken), ["first line broken"]);
    // Nothing names it: a hash of the file name.
    let path = fixture("16-identity/sessions/2026/07/17/notes.jsonl");
    let output = common::parse_file(&path, &common::empty_context());
    let s = &output.sessions[0];
    assert!(s.id.starts_with("codex-") && s.id.len() == 18, "{}", s.id);
    assert_eq!(s.id, s.native_id);
}

#[test]
fn compaction_copies_are_not_said_again() {
    let s = session("17-compaction", 26);
    assert_eq!(
        texts(&s),
        [
            "First question",
            "First answer",
            "Second question",
            "Second answer"
        ]
    );
}

#[test]
fn project_directory_and_times_fall_back() {
    let s = session("18-project-time", 27);
    // No session_meta cwd: the first turn_context's.
    assert_eq!(opt(&s.project.dir), Some("/srv/turn-dir"));
    assert_eq!(opt(&s.project.name), Some("turn-dir"));
    // Start at the first line timestamp, end at the greatest.
    assert_eq!(
        (s.started_at_ms, s.updated_at_ms),
        (at(0, 0, 5), at(0, 9, 0))
    );
    assert_eq!(
        messages(&s),
        [
            said(User, "From the turn", at(0, 1, 0)),
            // A line without a timestamp takes the one before it.
            said(Assistant, "No timestamp on this line", at(0, 1, 0)),
            said(Assistant, "Late", at(0, 9, 0)),
            said(Assistant, "Written out of order", at(0, 4, 0)),
        ]
    );
    // Neither: the <environment_context>'s <cwd>.
    let env = session("18-project-time", 28);
    assert_eq!(opt(&env.project.dir), Some("/srv/env-dir"));
}

#[test]
fn sessions_without_messages_are_counted_and_foreign_files_warned_about() {
    let empty = parse("19-empty", 29);
    assert_eq!((empty.sessions.len(), empty.skipped_empty), (0, 1));
    assert!(empty.warnings.is_empty());
    let lfs = parse("19-empty", 30);
    assert!(lfs.sessions.is_empty());
    assert_eq!(lfs.skipped_empty, 0);
    assert_eq!(lfs.warnings.len(), 1);
    assert!(
        lfs.warnings[0].contains("no Codex record"),
        "{:?}",
        lfs.warnings
    );
}

// ---- resume --------------------------------------------------------------------------

fn resume_with(
    native_id: &str,
    project_dir: Option<&str>,
    source: Option<&Path>,
    home: &Path,
    env: &[(&str, &Path)],
) -> ResumeAdvice {
    let context = common::context(home, env, "{}");
    let source = source.map(|p| p.to_string_lossy().into_owned());
    let request = ResumeRequest {
        id: RStr::from("deja-id"),
        native_id: RStr::from(native_id),
        project_dir: project_dir.map(RStr::from).into(),
        source_path: source.as_deref().map(RStr::from).into(),
        context: &context,
    };
    <CodexReader as Reader>::resume(&request).unwrap()
}

fn resume(native_id: &str, project_dir: Option<&str>, source: Option<&Path>) -> ResumeAdvice {
    resume_with(
        native_id,
        project_dir,
        source,
        Path::new("/nonexistent-home"),
        &[],
    )
}

fn command(advice: ResumeAdvice) -> (Vec<String>, Option<String>, String) {
    let ResumeAdvice::Command { argv, cwd, note } = advice else {
        panic!("expected a command, got {advice:?}");
    };
    (
        argv.iter().map(|a| a.to_string()).collect(),
        cwd.into_option().map(|c| c.into_string()),
        note.into_string(),
    )
}

#[test]
fn resume_runs_codex_resume_in_the_project_directory() {
    let id = uid(1);
    let (argv, cwd, note) = command(resume(&id, Some("/work/app"), None));
    assert_eq!(argv, ["codex", "resume", id.as_str()]);
    assert_eq!(cwd.as_deref(), Some("/work/app"));
    assert_eq!(note, "");
    // The directory re-read from the rollout; its Codex home is the one `codex` searches.
    let source = rollout("01-envelope", 1);
    let codex_home = fixture("01-envelope");
    let (_, cwd, note) = command(resume_with(
        &id,
        None,
        Some(&source),
        Path::new("/nonexistent-home"),
        &[("CODEX_HOME", &codex_home)],
    ));
    assert_eq!(cwd.as_deref(), Some("/home/dev/envelope-app"));
    assert_eq!(note, "");
}

#[test]
fn resume_says_what_stands_in_the_way() {
    // Another Codex home than the one `codex` searches.
    let source = rollout("01-envelope", 1);
    let (_, _, note) = command(resume(&uid(1), None, Some(&source)));
    assert!(note.contains("CODEX_HOME="), "{note}");
    // Archived: `codex resume` only searches sessions/.
    let archived = rollout("12-titles", 16);
    let home = fixture("12-titles");
    let (argv, _, note) = command(resume_with(
        &uid(16),
        None,
        Some(&archived),
        Path::new("/nonexistent-home"),
        &[("CODEX_HOME", &home)],
    ));
    assert_eq!(argv.len(), 3);
    assert!(note.contains("archived"), "{note}");
    assert!(!note.contains("CODEX_HOME="), "{note}");
    // Unknown directory.
    let (_, cwd, note) = command(resume(&uid(1), None, None));
    assert_eq!(cwd, None);
    assert!(note.contains("unknown"), "{note}");
    // A sub-agent names the conversation that started it.
    let child = rollout("13-subagent-fork", 18);
    let (_, _, note) = command(resume(&uid(18), None, Some(&child)));
    assert!(
        note.contains("sub-agent") && note.contains(&uid(17)),
        "{note}"
    );
    let review = rollout("14-review", 20);
    let (_, _, note) = command(resume(&uid(20), None, Some(&review)));
    assert!(note.contains("sub-agent"), "{note}");
}

#[test]
fn resume_refuses_a_rollout_without_a_uuid() {
    let ResumeAdvice::Refused { message } = resume("codex-0123456789ab", Some("/p"), None) else {
        panic!("no UUID, no resume");
    };
    assert!(message.contains("UUID"), "{message}");
}

// ---- detection and robustness ---------------------------------------------------

#[test]
fn detect_is_sure_of_rollouts_only() {
    let file = rollout("01-envelope", 1);
    let head = std::fs::read(&file).unwrap();
    let head = &head[..head.len().min(4096)];
    let detect = |path: &str, head: &[u8]| <CodexReader as Reader>::detect(path, head);
    assert_eq!(detect(file.to_str().unwrap(), head), 100);
    assert_eq!(detect("/tmp/copy.jsonl", head), 90);
    let legacy = std::fs::read(rollout("02-legacy", 2)).unwrap();
    assert_eq!(detect("/tmp/copy.jsonl", &legacy), 90);
    assert_eq!(detect(file.to_str().unwrap(), b""), 50);
    assert_eq!(detect("/x/rollout-a.md", head), 0);
    let index = std::fs::read(fixture("12-titles/session_index.jsonl")).unwrap();
    assert_eq!(detect("/h/.codex/session_index.jsonl", &index), 0);
    let claude = br#"{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/p","sessionId":"a0457e1c-7d65-4cd4-890f-7b8170dccaed","version":"2.0.0","type":"user","message":{"role":"user","content":"hi"},"uuid":"u","timestamp":"2026-01-01T00:00:00Z"}"#;
    assert_eq!(
        detect(
            "/h/.claude/projects/-p/a0457e1c-7d65-4cd4-890f-7b8170dccaed.jsonl",
            claude
        ),
        0
    );
}

#[test]
fn a_large_rollout_parses_whole() {
    // ~9 MB: 5,000 turns of a prompt, its event, the answer's event and item,
    // a command and a 1 KB output.
    let mut text = String::from(
        r#"{"timestamp":"2026-07-17T09:00:00.000Z","type":"session_meta","payload":{"id":"019f0000-0000-7000-8000-000000000001","cwd":"/p"}}"#,
    );
    text.push('\n');
    let output = "x".repeat(1024);
    for turn in 0..5000 {
        let t = "2026-07-17T09:30:00.000Z";
        for line in [
            format!(
                r#"{{"timestamp":"{t}","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"question {turn}"}}]}}}}"#
            ),
            format!(
                r#"{{"timestamp":"{t}","type":"event_msg","payload":{{"type":"user_message","message":"question {turn}"}}}}"#
            ),
            format!(
                r#"{{"timestamp":"{t}","type":"response_item","payload":{{"type":"function_call","name":"exec_command","arguments":"{{\"cmd\":\"cat f{turn}.txt\"}}"}}}}"#
            ),
            format!(
                r#"{{"timestamp":"{t}","type":"response_item","payload":{{"type":"function_call_output","call_id":"c","output":"{output}"}}}}"#
            ),
            format!(
                r#"{{"timestamp":"{t}","type":"event_msg","payload":{{"type":"agent_message","message":"answer {turn}"}}}}"#
            ),
            format!(
                r#"{{"timestamp":"{t}","type":"response_item","payload":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"answer {turn}"}}]}}}}"#
            ),
        ] {
            text.push_str(&line);
            text.push('\n');
        }
    }
    assert!(text.len() > 8_000_000);
    let path = rollout("01-envelope", 1);
    let output = common::parse_bytes(
        &path.to_string_lossy(),
        text.as_bytes(),
        0,
        &common::empty_context(),
    );
    let s = &output.sessions[0];
    assert_eq!(s.messages.len(), 10_000);
    assert_eq!(s.messages[9_999].text.as_str(), "answer 4999");
    assert_eq!((s.commands.len(), s.files.len()), (5000, 5000));
    assert_eq!(s.files[0].path.as_str(), "/p/f0.txt");
}

/// xorshift64*: deterministic pseudo-random bytes without a dependency.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

#[test]
fn garbage_never_panics() {
    let context = common::empty_context();
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    let parse_any = |path: &Path, bytes: &[u8]| {
        common::parse_bytes(path.to_str().unwrap(), bytes, 0, &context);
        <CodexReader as Reader>::detect(path.to_str().unwrap(), bytes);
    };
    for file in common::walk(&common::fixtures().canonicalize().unwrap()) {
        let bytes = std::fs::read(&file).unwrap();
        for _ in 0..20 {
            let mut mutated = bytes.clone();
            for _ in 0..=mutated.len() / 50 {
                if mutated.is_empty() {
                    break;
                }
                let at = (noise.next() as usize) % mutated.len();
                mutated[at] = noise.next() as u8;
            }
            parse_any(&file, &mutated);
        }
    }
    let somewhere = rollout("01-envelope", 1);
    for len in [0, 1, 2, 3, 7, 64, 1000, 10_000] {
        for _ in 0..10 {
            let len = len + (noise.next() as usize) % 5;
            parse_any(&somewhere, &noise.bytes(len));
        }
    }
    let nasty: Vec<Vec<u8>> = vec![
        "{".repeat(100_000).into_bytes(),
        format!("{}{}", "{\"a\":".repeat(50_000), "1").into_bytes(),
        format!("{{\"type\":\"response_item\",\"payload\":{}", "[".repeat(10_000)).into_bytes(),
        br#"{"timestamp":1e999999,"type":"session_meta","payload":{"id":5,"cwd":[],"source":{"subagent":{"thread_spawn":7}}}}"#.to_vec(),
        br#"{"timestamp":"+275760-09-13T00:00:00.001Z","type":"response_item","payload":{"type":"message","role":"user","content":"x"}}"#.to_vec(),
        br#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\"]}"}}"#.to_vec(),
        br#"{"type":"response_item","payload":{"type":"custom_tool_call","name":"exec","input":"tools.shell_command({command:\"\\u12"}}"#.to_vec(),
        br#"{"type":"response_item","payload":{"type":"custom_tool_call","name":"exec","input":"tools.shell_command({cmd:'\\x"}}"#.to_vec(),
        b"\xEF\xBB\xBF\xFF\xFE\x00{\"id\":\"x\"\x80\x81}".to_vec(),
        "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"# Context from my IDE setup:\\n## My request for Codex:\"}]}}\n".as_bytes().to_vec(),
    ];
    for bytes in &nasty {
        parse_any(&somewhere, bytes);
    }
}
