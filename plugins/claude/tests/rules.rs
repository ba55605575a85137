//! One test per rule of the Claude Code reader, each over a fixture under
//! `fixtures/golden/claude/<NN-name>/` (a small `~/.claude`-like tree), read
//! through the `Reader` trait with a host context built explicitly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::{
    CommandOrigin, FileAction, ParseOutput, ROption, RStr, RString, Reader, ResumeAdvice,
    ResumeRequest, Role, Session,
};
use deja_plugin_claude::ClaudeReader;

use Role::{Assistant, User};

// ---- helpers -------------------------------------------------------------

fn fixture(relative: &str) -> PathBuf {
    let path = common::fixtures().join(relative);
    path.canonicalize()
        .unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

fn parse(relative: &str) -> ParseOutput {
    common::parse_file(&fixture(relative), &common::empty_context())
}

fn sessions(relative: &str) -> Vec<Session> {
    let output = parse(relative);
    assert!(output.warnings.is_empty(), "{:?}", output.warnings);
    assert_eq!(output.skipped_empty, 0, "{output:#?}");
    output.sessions.to_vec()
}

fn session(relative: &str) -> Session {
    let mut all = sessions(relative);
    assert_eq!(all.len(), 1, "{all:#?}");
    all.remove(0)
}

/// The fixture session with id number `n` in `dir` (`<dir>/<n as a session id>.jsonl`).
fn path_of(dir: &str, n: u32) -> String {
    format!("{dir}/{}.jsonl", sid(n))
}

/// The session id the fixture generator gives session number `n`.
fn sid(n: u32) -> String {
    format!("{n:08}-aaaa-4bbb-8ccc-{n:012}")
}

/// 09:MM:SS.mmm on the fixtures' day, UTC, in ms.
fn at_ms(minute: i64, second: i64, ms: i64) -> i64 {
    // 2026-07-17T09:00:00Z
    1_784_278_800_000 + minute * 60_000 + second * 1000 + ms
}

fn at(minute: i64, second: i64) -> i64 {
    at_ms(minute, second, 0)
}

type Said = (Role, String, Option<String>, i64);

fn said(role: Role, text: &str, id: Option<&str>, timestamp_ms: i64) -> Said {
    (role, text.to_string(), id.map(String::from), timestamp_ms)
}

fn messages(session: &Session) -> Vec<Said> {
    session
        .messages
        .iter()
        .map(|m| {
            (
                m.role,
                m.text.to_string(),
                m.native_id.clone().into_option().map(|s| s.to_string()),
                m.timestamp_ms,
            )
        })
        .collect()
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

fn project(session: &Session) -> (Option<&str>, Option<&str>, Option<&str>) {
    (
        opt(&session.project.dir),
        opt(&session.project.name),
        opt(&session.project.id),
    )
}

// ---- sessions and messages ---------------------------------------------------

#[test]
fn a_session_file_is_one_session() {
    let s = session(&path_of("01-session/projects/-home-dev-app", 1));
    assert_eq!(s.id.as_str(), sid(1));
    assert_eq!(s.native_id.as_str(), sid(1));
    // First and last record times (the turn_duration record ends it).
    assert_eq!((s.started_at_ms, s.updated_at_ms), (at(0, 1), at(0, 5)));
    assert_eq!(
        project(&s),
        (Some("/home/dev/app"), Some("app"), Some("-home-dev-app"))
    );
    assert_eq!((opt(&s.title), opt(&s.parent_id)), (None, None));
    assert_eq!(s.precedence, 0);
    assert_eq!(
        messages(&s),
        [
            said(
                User,
                "How do I parse RFC 3339 in Rust?",
                Some("u1"),
                at(0, 1)
            ),
            said(
                Assistant,
                "Use chrono: `DateTime::parse_from_rfc3339`.",
                Some("msg_01A"),
                at(0, 2)
            ),
            said(User, "And the offset?", Some("u2"), at(0, 3)),
            said(
                Assistant,
                "It is kept in the `FixedOffset`.",
                Some("msg_01B"),
                at(0, 4)
            ),
        ]
    );
    assert!(s.files.is_empty() && s.commands.is_empty());
}

#[test]
fn one_api_reply_written_as_several_records_is_one_message() {
    let s = session(&path_of("02-split-reply/projects/-home-dev-app", 2));
    assert_eq!(
        messages(&s),
        [
            said(User, "Which tests are slow?", Some("u1"), at(0, 1)),
            // Thinking is not said; text after the tool results joins the same
            // reply; the text one record repeats is not added twice.
            said(
                Assistant,
                "Let me time them.\n\n`b` takes 9 s: it sleeps.",
                Some("msg_02A"),
                at(0, 4)
            ),
            said(
                Assistant,
                "Shall I remove the sleep?",
                Some("msg_02B"),
                at(0, 10)
            ),
        ]
    );
    assert_eq!(
        files(&s),
        [(
            "/home/dev/app/tests/b.rs".into(),
            FileAction::Read,
            at(0, 7)
        )]
    );
    assert_eq!(
        commands(&s),
        [
            (
                "cargo test -- --report-time".into(),
                CommandOrigin::Agent,
                at(0, 5)
            ),
            ("true".into(), CommandOrigin::Agent, at(0, 11)),
        ]
    );
}

#[test]
fn user_records_keep_only_what_the_person_typed() {
    let s = session(&path_of("03-user-records/projects/-home-dev-app", 3));
    assert_eq!(
        messages(&s),
        [
            // The IDE context block is dropped, the typed block kept.
            said(User, "Rename `foo` to `bar`.", Some("u1"), at(0, 1)),
            // Rejecting a tool call with a reason: the reason is the person's.
            said(User, "only in src/api.rs", Some("r1"), at(0, 3)),
            // Tool results, the interruption marker, the local-command caveats,
            // `/model` with its output, `Unknown skill: dream` (the output of a
            // local command) and the injected skill text are not said; the
            // system reminder is cut from the typed message.
            said(User, "Now run the tests.", Some("u3"), at(0, 9)),
            said(Assistant, "All tests pass.", Some("msg_03C"), at(0, 10)),
        ]
    );
    // The rejected edit did not happen; the accepted one did.
    assert_eq!(
        files(&s),
        [(
            "/home/dev/app/src/api.rs".into(),
            FileAction::Edit,
            at(0, 4)
        )]
    );
}

#[test]
fn bash_mode_input_is_a_user_command_and_its_output_is_not_said() {
    let s = session(&path_of("04-bash-mode/projects/-home-dev-app", 4));
    assert_eq!(
        messages(&s),
        [
            said(
                User,
                "How do I list the flake outputs?",
                Some("u1"),
                at(0, 1)
            ),
            said(
                Assistant,
                "Run `nix flake show`.",
                Some("msg_04A"),
                at(0, 2)
            ),
            said(User, "It shows nothing else.", Some("u2"), at(0, 5)),
        ]
    );
    assert_eq!(
        commands(&s),
        [("nix flake show".into(), CommandOrigin::User, at(0, 3))]
    );
}

#[test]
fn made_up_replies_are_not_the_assistant_speaking() {
    let dir = "05-synthetic/projects/-home-dev-app";
    let s = session(&path_of(dir, 5));
    assert_eq!(
        messages(&s),
        [
            said(User, "ensure node is installed", Some("u1"), at(0, 1)),
            said(User, "retry", Some("u2"), at(0, 3)),
        ]
    );
    assert_eq!((s.started_at_ms, s.updated_at_ms), (at(0, 1), at(0, 5)));
    // A session whose only reply is an API error is still the person's session.
    let s = session(&path_of(dir, 6));
    assert_eq!(
        messages(&s),
        [said(User, "Good afternoon!", Some("u1"), at(1, 1))]
    );
}

#[test]
fn tool_calls_become_files_and_commands_when_they_happened() {
    let s = session(&path_of("06-tools/projects/-home-dev-app", 7));
    assert_eq!(
        files(&s),
        [
            // Relative paths are resolved against the record's working directory.
            (
                "/home/dev/app/docs/guide.md".into(),
                FileAction::Read,
                at(0, 2)
            ),
            (
                "/home/dev/app/docs/guide.md".into(),
                FileAction::Edit,
                at(0, 4)
            ),
            (
                "/home/dev/app/docs/new.md".into(),
                FileAction::Edit,
                at(0, 4)
            ),
            ("/home/dev/app/README.md".into(), FileAction::Edit, at(0, 4)),
            ("/home/dev/app/nb.ipynb".into(), FileAction::Edit, at(0, 4)),
            // The edit whose string was not found and the read of a file too
            // large to read did not happen.
        ]
    );
    assert_eq!(
        commands(&s),
        [
            // It ran and failed: it ran. The rejected, denied and cancelled ones did not.
            ("mdl docs".into(), CommandOrigin::Agent, at(0, 8)),
            ("cd docs && mdl .".into(), CommandOrigin::Agent, at(0, 10)),
        ]
    );
    assert_eq!(
        messages(&s),
        [
            said(User, "Tidy the docs.", Some("u1"), at(0, 1)),
            said(
                Assistant,
                "Docs tidied; one long line remains.",
                Some("msg_06E"),
                at(0, 11)
            ),
        ]
    );
}

#[test]
fn titles_come_from_custom_titles_then_names_then_ai_titles_then_own_summaries() {
    let dir = "07-titles/projects/-home-dev-app";
    // The last ai-title; the summary whose leaf is this file's loses to it.
    let s = session(&path_of(dir, 8));
    assert_eq!(opt(&s.title), Some("Add Teams and btop keybindings"));
    // The last custom title, over agent-name and ai-title.
    let s = session(&path_of(dir, 9));
    assert_eq!(opt(&s.title), Some("add-teams-keybinding"));
    // No title record: the latest summary of one of its own records.
    let s = session(&path_of(dir, 10));
    assert_eq!(opt(&s.title), Some("Devbox rebuild fixes Go version"));
    assert_eq!(s.messages.len(), 2);
}

#[test]
fn files_without_conversation_are_no_session() {
    let dir = "08-no-session/projects/-home-dev-app";
    // A summary of another session, snapshots, a teleport marker, mode lines
    // with a local command, and an empty file: nothing, silently.
    for n in [11, 12, 13, 14, 16] {
        assert_eq!(parse(&path_of(dir, n)), ParseOutput::default(), "{n}");
    }
    // Conversation records that say nothing (`/exit`): a session left out, counted.
    let output = parse(&path_of(dir, 15));
    assert!(output.sessions.is_empty() && output.warnings.is_empty());
    assert_eq!(output.skipped_empty, 1);
}

#[test]
fn a_half_written_last_line_is_read_when_complete() {
    let path = fixture(&path_of("09-torn-line/projects/-home-dev-app", 17));
    let torn = std::fs::read(&path).unwrap();
    let context = common::empty_context();
    let before = common::parse_bytes(path.to_str().unwrap(), &torn, 0, &context);
    assert!(before.warnings.is_empty());
    let first = before.sessions[0].clone();
    assert_eq!(
        messages(&first),
        [
            said(User, "Run the tests", Some("u1"), at(0, 1)),
            said(Assistant, "All 42 tests pass.", Some("msg_09A"), at(0, 2)),
        ]
    );
    // Claude Code finishes the line: the next parse reads it.
    let text = String::from_utf8(torn).unwrap();
    let line_start = text.rfind('\n').unwrap() + 1;
    let full = r#"{"parentUuid":"a1","isSidechain":false,"userType":"external","cwd":"/home/dev/app","sessionId":"00000017-aaaa-4bbb-8ccc-000000000017","version":"2.1.97","gitBranch":"main","type":"user","message":{"role":"user","content":"Now the benchmarks"},"uuid":"u2","timestamp":"2026-07-17T09:00:03.000Z"}"#;
    assert!(
        full.starts_with(&text[line_start..]),
        "the fixture is a prefix"
    );
    let grown = format!("{}{full}\n", &text[..line_start]);
    let after = common::parse_bytes(path.to_str().unwrap(), grown.as_bytes(), 0, &context);
    let s = &after.sessions[0];
    assert_eq!(s.id, first.id);
    assert_eq!(&s.messages.as_slice()[..2], first.messages.as_slice());
    assert_eq!(
        messages(s)[2],
        said(User, "Now the benchmarks", Some("u2"), at(0, 3))
    );
}

#[test]
fn a_compaction_summary_is_not_said_and_what_came_before_stays() {
    let s = session(&path_of("10-compaction/projects/-home-dev-app", 18));
    assert_eq!(
        messages(&s),
        [
            said(
                User,
                "Add a loading state to the budget table.",
                Some("u1"),
                at(0, 1)
            ),
            said(
                Assistant,
                "Added a spinner overlay.",
                Some("msg_10A"),
                at(0, 2)
            ),
            said(
                Assistant,
                "Continuing with the transactions list.",
                Some("msg_10B"),
                at(5, 1)
            ),
            // The same words again after the compaction are said again.
            said(
                User,
                "Add a loading state to the budget table.",
                Some("u2"),
                at(5, 2)
            ),
            said(Assistant, "It already has one.", Some("msg_10C"), at(5, 3)),
        ]
    );
}

#[test]
fn records_written_again_on_resume_are_said_once() {
    let s = session(&path_of("11-written-twice/projects/-home-dev-app", 19));
    // The 2.0-style copy (new uuids, one timestamp, the first turn split in
    // two) and the verbatim copies (same uuids) add nothing; the second "yes",
    // after a new reply, is new.
    assert_eq!(
        messages(&s),
        [
            said(User, "Help me optimise the sync.", Some("u1"), at(0, 1)),
            said(Assistant, "Split it in two.", Some("msg_11A"), at(0, 2)),
            said(Assistant, "The query is fine.", Some("msg_11B"), at(0, 5)),
            said(User, "yes", Some("u2"), at(0, 6)),
            said(Assistant, "Here is the plan.", Some("msg_11C"), at(0, 7)),
            said(User, "yes", Some("u3"), at(31, 0)),
            said(Assistant, "Done.", Some("msg_11D"), at(31, 1)),
        ]
    );
    assert_eq!(
        files(&s),
        [("/home/dev/app/sync.sql".into(), FileAction::Read, at(0, 3))]
    );
    // The summary's leaf is one of the session's own records.
    assert_eq!(opt(&s.title), Some("Sync optimisation"));
    assert_eq!((s.started_at_ms, s.updated_at_ms), (at(0, 1), at(31, 1)));
}

#[test]
fn prompts_typed_while_claude_is_busy_are_said_once() {
    let s = session(&path_of("12-queued/projects/-home-dev-app", 20));
    assert_eq!(
        messages(&s),
        [
            // Dequeued: said by its own user record, not by the queue.
            said(User, "Find the idle config", Some("u1"), at(0, 1)),
            said(Assistant, "Searching.", Some("msg_12A"), at(0, 2)),
            // Removed from the queue, handed to the model mid-turn: said when
            // typed; its `queued_command` attachment does not say it again.
            said(User, "stop", None, at(0, 3)),
            // Taken back with popAll: not said. An attachment alone: said.
            said(User, "check the lock screen too", Some("at2"), at(0, 9)),
            said(
                Assistant,
                "Stopped. The lock screen uses the same timeout.",
                Some("msg_12B"),
                at(0, 10)
            ),
        ]
    );
    assert_eq!(s.started_at_ms, at_ms(0, 0, 900));
}

// ---- subagents ---------------------------------------------------------------------

#[test]
fn subagents_are_sessions_of_their_own_with_their_parent() {
    let dir = "13-subagents/projects/-home-dev-app";
    let parent = session(&path_of(dir, 21));
    assert_eq!(
        messages(&parent),
        [
            said(User, "Where is Teams installed?", Some("u1"), at(0, 1)),
            said(
                Assistant,
                "Teams runs as a PWA.",
                Some("msg_13B"),
                at(0, 10)
            ),
        ]
    );
    let agent = session(&format!(
        "{dir}/{}/subagents/agent-a71969c1296961234.jsonl",
        sid(21)
    ));
    assert_eq!(
        agent.id.as_str(),
        format!("{}-agent-a71969c1296961234", sid(21))
    );
    assert_eq!(agent.native_id.as_str(), "a71969c1296961234");
    assert_eq!(opt(&agent.parent_id), Some(sid(21).as_str()));
    // The task description of its `.meta.json`.
    assert_eq!(opt(&agent.title), Some("Find Teams launch command"));
    assert_eq!(project(&agent).0, Some("/home/dev/app"));
    assert_eq!(
        messages(&agent),
        [
            said(User, "Find how Teams is installed.", Some("s1"), at(0, 3)),
            said(
                Assistant,
                "Checking the usual places.",
                Some("msg_13C"),
                at(0, 4)
            ),
            said(Assistant, "Teams is a PWA.", Some("msg_13D"), at(0, 6)),
        ]
    );
    assert_eq!(
        commands(&agent),
        [("which teams".into(), CommandOrigin::Agent, at(0, 4))]
    );
    assert_eq!(
        (agent.started_at_ms, agent.updated_at_ms),
        (at(0, 3), at(0, 6))
    );
}

#[test]
fn a_side_question_leaves_out_the_conversation_it_copied_from_its_parent() {
    let dir = "13-subagents/projects/-home-dev-app";
    let aside = session(&format!(
        "{dir}/{}/subagents/agent-aside_question-7a81e4850e48fc1e.jsonl",
        sid(21)
    ));
    assert_eq!(
        aside.id.as_str(),
        format!("{}-agent-aside_question-7a81e4850e48fc1e", sid(21))
    );
    assert_eq!(
        messages(&aside),
        [
            said(User, "is a PWA slower?", Some("q1"), at(0, 7)),
            said(
                Assistant,
                "Slightly: it runs in a browser engine.",
                Some("msg_13E"),
                at(0, 8)
            ),
        ]
    );
    assert_eq!(aside.started_at_ms, at(0, 7));
    assert_eq!(opt(&aside.title), None);
}

#[test]
fn older_subagent_files_name_their_parent_in_their_records_and_warmups_are_skipped() {
    let dir = "14-older-subagents/projects/-home-dev-app";
    let agent = session(&format!("{dir}/agent-a0edd2b.jsonl"));
    assert_eq!(agent.id.as_str(), format!("{}-agent-a0edd2b", sid(22)));
    assert_eq!(agent.native_id.as_str(), "a0edd2b");
    assert_eq!(opt(&agent.parent_id), Some(sid(22).as_str()));
    assert_eq!(
        messages(&agent),
        [
            said(User, "List the migrations.", Some("o1"), at(0, 3)),
            said(Assistant, "There are three.", Some("msg_14B"), at(0, 4)),
        ]
    );
    // Claude Code's cache warm-up: no session, counted as left out.
    let warmup = parse(&format!("{dir}/agent-a05b3d3.jsonl"));
    assert!(warmup.sessions.is_empty() && warmup.warnings.is_empty());
    assert_eq!(warmup.skipped_empty, 1);
}

#[test]
fn sidechains_written_inline_are_sessions_of_their_own() {
    let all = sessions(&path_of("15-inline-sidechain/projects/-home-dev-app", 23));
    assert_eq!(all.len(), 2);
    let (parent, agent) = (&all[0], &all[1]);
    assert_eq!(parent.id.as_str(), sid(23));
    assert_eq!(
        messages(parent),
        [
            said(User, "Survey the repo.", Some("u1"), at(0, 1)),
            said(
                Assistant,
                "Two crates: core and cli.",
                Some("msg_15C"),
                at(0, 6)
            ),
        ]
    );
    assert!(parent.commands.is_empty());
    assert_eq!(agent.id.as_str(), format!("{}-agent-x1", sid(23)));
    assert_eq!(agent.native_id.as_str(), "x1");
    assert_eq!(opt(&agent.parent_id), Some(sid(23).as_str()));
    assert_eq!(
        messages(agent),
        [
            said(User, "List the crates.", Some("x1"), at(0, 3)),
            said(Assistant, "core and cli.", Some("msg_15B"), at(0, 4)),
        ]
    );
    assert_eq!(
        commands(agent),
        [("ls crates".into(), CommandOrigin::Agent, at(0, 4))]
    );
}

// ---- projects and ids ------------------------------------------------------------------

#[test]
fn the_project_directory_is_the_records_cwd() {
    // The session `cd`s into ~/.dots: it stays filed under ~, its folder.
    let s = session(&path_of("16-project/projects/-Users-dev", 24));
    assert_eq!(
        project(&s),
        (Some("/Users/dev"), Some("dev"), Some("-Users-dev"))
    );
    assert_eq!(
        files(&s),
        [("/Users/dev/.dots/.zshrc".into(), FileAction::Read, at(0, 2))]
    );
    // A lower-case drive folder (VS Code) matches `c:\` records, whatever the case.
    let s = session(&path_of("16-project/projects/c--Users-ann-Vault", 25));
    assert_eq!(
        project(&s),
        (
            Some("c:\\Users\\ann\\Vault"),
            Some("Vault"),
            Some("c--Users-ann-Vault")
        )
    );
    assert_eq!(
        files(&s),
        [(
            "c:\\Users\\ann\\Vault\\notes\\DOCKET.md".into(),
            FileAction::Read,
            at(1, 3)
        )]
    );
    // A worktree.
    let s = session(&path_of(
        "16-project/projects/C--Users-ann-Vault--claude-worktrees-friendly-cartwright",
        26,
    ));
    assert_eq!(
        project(&s).0,
        Some("C:\\Users\\ann\\Vault\\.claude\\worktrees\\friendly-cartwright")
    );
    // No record has a cwd: the folder name, decoded as a guess.
    let s = session(&path_of("16-project/projects/-home-dev-my-app", 27));
    assert_eq!(
        project(&s),
        (
            Some("/home/dev/my/app"),
            Some("app"),
            Some("-home-dev-my-app")
        )
    );
}

#[test]
fn the_native_id_is_the_file_name_else_the_records_session_id() {
    let dir = "18-native-id/projects/-home-dev-app";
    // A renamed copy is still its session: the id its records carry.
    let s = session(&format!("{dir}/backup-copy.jsonl"));
    assert_eq!(
        (s.id.as_str(), s.native_id.as_str()),
        (sid(30).as_str(), sid(30).as_str())
    );
    // A session resumed by an older Claude Code starts with the records of
    // the one it continues (their own sessionId): it is the file's session.
    let s = session(&path_of(dir, 32));
    assert_eq!(s.native_id.as_str(), sid(32));
    assert_eq!(s.messages.len(), 4);
    assert_eq!((s.started_at_ms, s.updated_at_ms), (at(1, 1), at(2, 2)));
}

#[test]
fn byte_order_marks_crlf_garbage_lines_and_invalid_utf8_are_read() {
    let dir = "17-odd-bytes/projects/-home-dev-app";
    let s = session(&path_of(dir, 28));
    assert_eq!(
        messages(&s),
        [
            said(User, "Grüße aus Köln ✓ \u{FFFD}", Some("u1"), at(0, 1)),
            said(Assistant, "Danke!", Some("msg_17A"), at(0, 2)),
        ]
    );
    let s = session(&path_of(dir, 29));
    assert_eq!(
        messages(&s)[1],
        said(User, "\u{FFFD}\u{FFFD} broken", Some("u9"), at(1, 2))
    );
    assert_eq!(s.messages.len(), 3);
}

#[test]
fn a_file_with_no_json_record_is_worth_a_warning() {
    let context = common::empty_context();
    let output = common::parse_bytes(
        "/h/.claude/projects/-p/x.jsonl",
        b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\n",
        0,
        &context,
    );
    assert!(output.sessions.is_empty());
    assert_eq!(output.warnings.len(), 1);
    assert!(
        output.warnings[0].contains("no JSON record"),
        "{:?}",
        output.warnings
    );
    // A single torn line while the file is created is not.
    let output = common::parse_bytes(
        "/h/.claude/projects/-p/x.jsonl",
        b"{\"type\":\"us",
        0,
        &context,
    );
    assert_eq!(output, ParseOutput::default());
}

// ---- resume ------------------------------------------------------------------------------

fn resume(
    id: &str,
    native_id: &str,
    project_dir: Option<&str>,
    source: Option<&Path>,
    home: &Path,
) -> ResumeAdvice {
    let context = common::context(home, &[], "{}");
    let source = source.map(|p| p.to_string_lossy().into_owned());
    let request = ResumeRequest {
        id: RStr::from(id),
        native_id: RStr::from(native_id),
        project_dir: project_dir.map(RStr::from).into(),
        source_path: source.as_deref().map(RStr::from).into(),
        context: &context,
    };
    <ClaudeReader as Reader>::resume(&request).unwrap()
}

fn command(native_id: &str, cwd: Option<&str>, note: &str) -> ResumeAdvice {
    ResumeAdvice::Command {
        argv: ["claude", "--resume", native_id]
            .map(Into::into)
            .to_vec()
            .into(),
        cwd: cwd.map(Into::into).into(),
        note: note.into(),
    }
}

#[test]
fn resume_runs_claude_resume_in_the_sessions_directory() {
    let home = Path::new("/nonexistent-home");
    let id = sid(1);
    assert_eq!(
        resume(&id, &id, Some("/home/dev/app"), None, home),
        command(&id, Some("/home/dev/app"), "")
    );
    // The directory re-read from the transcript, which sits in `~/.claude/projects`.
    let root = fixture("01-session");
    let source = root.join(format!("projects/-home-dev-app/{id}.jsonl"));
    let ResumeAdvice::Command { argv, cwd, note } = resume(&id, &id, None, Some(&source), home)
    else {
        panic!("expected a command");
    };
    assert_eq!(argv.len(), 3);
    assert_eq!(cwd, ROption::RSome("/home/dev/app".into()));
    // Not below `~/.claude/projects`: Claude Code needs that configuration folder.
    assert!(note.contains("CLAUDE_CONFIG_DIR"), "{note}");
    assert!(
        note.contains(&root.to_string_lossy().into_owned()),
        "{note}"
    );
}

#[test]
fn resume_from_the_default_place_needs_no_note() {
    let home = fixture("19-discovery/home");
    let id = sid(40);
    let source = home.join(format!(".claude/projects/-home-dev-app/{id}.jsonl"));
    assert_eq!(
        resume(&id, &id, None, Some(&source), &home),
        command(&id, Some("/home/dev/app"), "")
    );
}

#[test]
fn resume_without_a_known_directory_says_so() {
    let ResumeAdvice::Command { cwd, note, .. } =
        resume("s1", "s1", None, None, Path::new("/nonexistent-home"))
    else {
        panic!("expected a command");
    };
    assert_eq!(cwd, ROption::RNone);
    assert!(note.contains("unknown"), "{note}");
    assert!(note.contains("claude --resume s1"), "{note}");
}

#[test]
fn resume_refuses_subagents_and_names_the_parent() {
    let home = Path::new("/nonexistent-home");
    let dir = fixture("13-subagents/projects/-home-dev-app");
    let file = dir.join(format!(
        "{}/subagents/agent-a71969c1296961234.jsonl",
        sid(21)
    ));
    let id = format!("{}-agent-a71969c1296961234", sid(21));
    for source in [Some(file.as_path()), None] {
        let ResumeAdvice::Refused { message } = resume(
            &id,
            "a71969c1296961234",
            Some("/home/dev/app"),
            source,
            home,
        ) else {
            panic!("a subagent cannot be resumed");
        };
        assert!(message.contains("subagent"), "{message}");
        assert!(message.contains(&sid(21)), "{message}");
    }
    let ResumeAdvice::Refused { message } = resume("agent-a05b3d3", "a05b3d3", None, None, home)
    else {
        panic!("a subagent cannot be resumed");
    };
    assert!(message.contains("session that started it"), "{message}");
}

// ---- robustness and detection ----------------------------------------------------------------

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
        <ClaudeReader as Reader>::detect(path.to_str().unwrap(), bytes);
    };
    for file in common::walk(&common::fixtures().canonicalize().unwrap()) {
        let bytes = std::fs::read(&file).unwrap();
        let step = bytes.len() / 200 + 1;
        for end in (0..bytes.len()).step_by(step) {
            parse_any(&file, &bytes[..end]);
        }
        for _ in 0..10 {
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
    let somewhere = Path::new("/h/.claude/projects/-p/11111111-2222-4333-8444-555555555555.jsonl");
    for len in [0, 1, 2, 7, 64, 1000, 10_000] {
        for _ in 0..10 {
            let len = len + (noise.next() as usize) % 5;
            parse_any(somewhere, &noise.bytes(len));
        }
    }
    let nasty: Vec<Vec<u8>> = vec![
        "[".repeat(100_000).into_bytes(),
        format!("{}{}", "{\"a\":".repeat(50_000), "1").into_bytes(),
        br#"{"type":"user","message":{"content":[{"type":"text","text":"<system-reminder>"}]},"timestamp":"+275760-09-13T00:00:00.001Z"}"#.to_vec(),
        br#"{"type":"assistant","uuid":"\ud800","message":{"id":{},"model":5,"content":[{"type":"tool_use","name":"Bash","input":{"command":["x"]}},{"type":"text"}]}}"#.to_vec(),
        br#"{"type":"queue-operation","operation":"remove"}"#.to_vec(),
        br#"{"type":"attachment","attachment":{"type":"queued_command","prompt":[{"text":5}]}}"#.to_vec(),
        b"\xEF\xBB\xBF\xFF\xFE\x00{\"type\":\"user\"\x80\x81}".to_vec(),
        format!("{{\"type\":\"user\",\"message\":{{\"content\":\"{}\"}}}}", "<bash-input>".repeat(10_000)).into_bytes(),
    ];
    for bytes in &nasty {
        parse_any(somewhere, bytes);
        parse_any(
            Path::new("/h/.claude/projects/-p/s/subagents/agent-x.jsonl"),
            bytes,
        );
    }
}

#[test]
fn detect_claims_claude_transcripts_only() {
    let detect = |path: &str, head: &[u8]| <ClaudeReader as Reader>::detect(path, head);
    let file = fixture(&path_of("01-session/projects/-home-dev-app", 1));
    let head = std::fs::read(&file).unwrap();
    assert_eq!(detect(file.to_str().unwrap(), &head), 100);
    // Any name, wherever it is, when the records are Claude Code's.
    assert_eq!(detect("/tmp/copy.jsonl", &head), 100);
    // Placed like a transcript, with only shared fields.
    let plain = br#"{"parentUuid":null,"sessionId":"s","type":"user","message":{"content":"hi"}}"#;
    assert_eq!(detect("/h/.claude/projects/-p/s.jsonl", plain), 80);
    assert_eq!(detect("/h/x/s/subagents/agent-a1.jsonl", plain), 80);
    assert_eq!(detect("/tmp/s.jsonl", plain), 0);
    // Qwen Code's chats look alike but live in `chats/`; Gemini's carry no marker.
    assert_eq!(detect("/h/.qwen/projects/-p/chats/s.jsonl", &head), 0);
    let gemini =
        br#"{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z","kind":"main"}"#;
    assert_eq!(detect("/h/.gemini/tmp/p/chats/session-x.jsonl", gemini), 0);
    assert_eq!(detect("/h/.claude/projects/-p/s.json", &head), 0);
    assert_eq!(detect("/h/.claude/projects/-p/s.jsonl", b""), 0);
}

#[test]
fn info_names_the_harness() {
    let info = <ClaudeReader as Reader>::info();
    assert_eq!(
        (info.name.as_str(), info.harness.as_str()),
        ("claude", "claude")
    );
    assert!(info.config_keys.is_empty());
}
