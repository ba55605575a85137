//! One test per rule of the Qwen Code reader, each over a fixture under
//! `fixtures/golden/qwen/<NN-name>/` (a small `.qwen`-like tree), read
//! through the `Reader` trait with a host context built explicitly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::{
    CommandOrigin, FileAction, HostContext, ParseOutput, ROption, RStr, RString, Reader,
    ResumeAdvice, ResumeRequest, Role, Session,
};
use deja_plugin_qwen::{paths, QwenReader};

// ---- helpers -------------------------------------------------------------

fn fixture(relative: &str) -> PathBuf {
    let path = common::fixtures().join(relative);
    path.canonicalize()
        .unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

/// The one chat file below `dir` (a fixture folder).
fn chat(dir: &str) -> PathBuf {
    let mut found = Vec::new();
    for file in walk(&fixture(dir)) {
        if file.extension().is_some_and(|e| e == "jsonl") {
            found.push(file);
        }
    }
    assert_eq!(found.len(), 1, "{dir}: {found:?}");
    found.remove(0)
}

fn parse(file: &Path) -> ParseOutput {
    common::parse_file(file, &common::empty_context())
}

fn session_at(file: &Path) -> Session {
    let output = parse(file);
    assert!(output.warnings.is_empty(), "{:?}", output.warnings);
    assert_eq!(output.skipped_empty, 0);
    assert_eq!(output.sessions.len(), 1, "{output:#?}");
    output.sessions[0].clone()
}

fn session(dir: &str) -> Session {
    session_at(&chat(dir))
}

fn ms(rfc3339: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .unwrap()
        .timestamp_millis()
}

/// 09:MM:SS.mmmZ on the fixtures' day.
fn at(minute: u32, second: u32) -> i64 {
    ms(&format!("2026-07-17T09:{minute:02}:{second:02}Z"))
}

type Said = (Role, String, Option<String>, i64);

fn said(role: Role, text: &str, uuid: &str, timestamp_ms: i64) -> Said {
    (role, text.to_string(), Some(uuid.to_string()), timestamp_ms)
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

fn texts(session: &Session) -> Vec<String> {
    session
        .messages
        .iter()
        .map(|m| m.text.to_string())
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
    let p = &session.project;
    (opt(&p.dir), opt(&p.name), opt(&p.id))
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The uuid of the fixtures' records: `<prefix>-0000-4000-8000-0000000000NN`.
fn uuid(prefix: &str, n: u32) -> String {
    format!("{prefix}-0000-4000-8000-{n:012}")
}

use Role::{Assistant, User};

// ---- sessions and messages ---------------------------------------------------

#[test]
fn a_chat_file_is_one_session_keyed_by_its_session_id() {
    let s = session("01-basic");
    let id = "11111111-aaaa-4bbb-8ccc-000000000001";
    assert_eq!((s.id.as_str(), s.native_id.as_str()), (id, id));
    assert_eq!((s.started_at_ms, s.updated_at_ms), (at(0, 1), at(0, 3)));
    assert_eq!(
        project(&s),
        (
            Some("/home/dev/basic-app"),
            Some("basic-app"),
            Some("-home-dev-basic-app")
        )
    );
    assert_eq!((opt(&s.title), opt(&s.parent_id)), (None, None));
    assert_eq!(s.precedence, 0);
    // Telemetry is no message; the thought part is not text.
    let u = |n| uuid("b1000001", n);
    assert_eq!(
        messages(&s),
        [
            said(User, "How do I parse RFC 3339 in Rust?", &u(1), at(0, 1)),
            said(
                Assistant,
                "Use chrono's DateTime::parse_from_rfc3339.",
                &u(3),
                at(0, 3)
            ),
        ]
    );
    assert!(s.files.is_empty() && s.commands.is_empty());
}

#[test]
fn tool_calls_become_file_and_command_records_and_results_are_not_messages() {
    let s = session("02-tool-calls");
    let u = |n| uuid("b2000002", n);
    assert_eq!(
        messages(&s),
        [
            said(User, "Fix the date test and run the suite", &u(1), at(0, 1)),
            said(Assistant, "Let me look first.", &u(2), at(0, 2)),
            // The tool results, a call-only answer and an older version's
            // functionResponse-only user record say nothing.
            said(Assistant, "All tests pass.", &u(14), at(0, 40)),
        ]
    );
    let dir = "/home/dev/tools-app";
    assert_eq!(
        files(&s),
        [
            (format!("{dir}/src/date.rs"), FileAction::Read, at(0, 2)),
            // `absolute_path` (older versions), relative: resolved against cwd.
            (format!("{dir}/docs/design.md"), FileAction::Read, at(0, 2)),
            (format!("{dir}/src/date.rs"), FileAction::Edit, at(0, 10)),
            // tests/date.rs: the write failed. README.md: read_many_files
            // without its glob; Cargo.toml: `replace`, the edit tool's old
            // name; neither has a result yet, which does not undo them.
            (format!("{dir}/README.md"), FileAction::Read, at(0, 30)),
            (format!("{dir}/Cargo.toml"), FileAction::Edit, at(0, 30)),
        ]
    );
    // `rm -rf target` was cancelled; list_directory is no file record.
    assert_eq!(
        commands(&s),
        [("cargo test".to_string(), CommandOrigin::Agent, at(0, 20))]
    );
}

#[test]
fn system_records_are_not_conversation() {
    let s = session_at(&fixture(
        "03-system-records/projects/-home-dev-sys-app/chats/33333333-aaaa-4bbb-8ccc-000000000003.jsonl",
    ));
    // Slash commands, telemetry, compression summaries and other system
    // records are not messages; a prompt a slash command submitted is what
    // the person typed.
    let u = |n| uuid("b3000003", n);
    assert_eq!(
        messages(&s),
        [
            said(User, "hi", &u(3), at(0, 5)),
            said(Assistant, "Hello! How can I help?", &u(5), at(0, 7)),
            said(User, "/skills review", &u(11), at(0, 10) + 60),
            said(
                Assistant,
                "Reviewing with the review skill.",
                &u(13),
                at(0, 12)
            ),
        ]
    );
    assert!(!texts(&s).iter().any(|t| t.contains("state_snapshot")));
    // The session starts with its first record, a slash command.
    assert_eq!(s.started_at_ms, at(0, 0));
}

#[test]
fn a_file_without_messages_is_skipped_and_counted() {
    let file = fixture(
        "03-system-records/projects/-home-dev-sys-app/chats/33333333-aaaa-4bbb-8ccc-000000000004.jsonl",
    );
    let output = parse(&file);
    assert!(output.sessions.is_empty());
    assert_eq!(output.skipped_empty, 1);
    assert!(output.warnings.is_empty());
}

#[test]
fn fragments_of_one_record_are_one_message() {
    let s = session("04-fragments");
    let u = |n| uuid("b4000004", n);
    assert_eq!(
        messages(&s),
        [
            said(User, "Explain the cache layer", &u(1), at(0, 1)),
            // Two records with one uuid: parts joined, the later time kept.
            said(
                Assistant,
                "It is an LRU cache. It holds 1024 entries.",
                &u(2),
                at(0, 4)
            ),
            said(User, "Thanks.", &u(3), at(0, 5)),
        ]
    );
}

#[test]
fn a_rewind_leaves_the_abandoned_turns_out() {
    let s = session("05-rewind");
    let u = |n| uuid("b5000005", n);
    assert_eq!(
        messages(&s),
        [
            said(User, "First question", &u(1), at(0, 1)),
            said(Assistant, "First answer", &u(2), at(0, 2)),
            said(User, "Second question, rephrased", &u(7), at(0, 6)),
            said(Assistant, "A clear answer", &u(8), at(0, 7)),
        ]
    );
    // The rewound answer's command is on the dead branch too.
    assert!(s.commands.is_empty());
    assert_eq!(s.updated_at_ms, at(0, 7));
}

#[test]
fn a_half_written_last_line_is_read_on_the_next_index() {
    let file = chat("06-half-written");
    let s = session_at(&file);
    let u = |n| uuid("b6000006", n);
    let before = [
        said(User, "Run the tests", &u(1), at(0, 1)),
        said(Assistant, "All 42 tests pass.", &u(2), at(0, 2)),
    ];
    assert_eq!(messages(&s), before);
    // The writer finishes the line: the rest is picked up, nothing else changes.
    let mut bytes = std::fs::read(&file).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let torn = text.rsplit('\n').next().unwrap().to_string();
    let full = format!(
        r#"{{"uuid":"{}","parentUuid":"{}","sessionId":"66666666-aaaa-4bbb-8ccc-000000000006","timestamp":"2026-07-17T09:00:03.000Z","type":"user","cwd":"/home/dev/live-app","version":"0.14.0","gitBranch":"main","message":{{"role":"user","parts":[{{"text":"Now run the benchmarks"}}]}}}}"#,
        u(3),
        u(2)
    );
    assert!(full.starts_with(&torn), "the fixture's torn line");
    bytes.extend_from_slice(&full.as_bytes()[torn.len()..]);
    bytes.push(b'\n');
    let grown = common::parse_bytes(file.to_str().unwrap(), &bytes, 0, &common::empty_context());
    let g = &grown.sessions[0];
    assert_eq!(g.id, s.id);
    assert_eq!(&messages(g)[..2], &before);
    assert_eq!(texts(g)[2], "Now run the benchmarks");
}

#[test]
fn a_corrupt_line_does_not_drop_what_came_before() {
    let s = session("07-corrupt-line");
    let u = |n| uuid("b7000007", n);
    assert_eq!(
        messages(&s),
        [
            said(User, "Before the damage", &u(1), at(0, 1)),
            said(Assistant, "An answer before the damage", &u(2), at(0, 2)),
            // Its parent is the lost line: the gap is bridged.
            said(Assistant, "An answer after a lost line", &u(4), at(0, 4)),
            said(User, "After the damage", &u(5), at(0, 5)),
        ]
    );
}

#[test]
fn the_last_custom_title_is_the_title() {
    let s = session("08-title");
    assert_eq!(opt(&s.title), Some("Date test fix"));
    // The title records sit off the chain (one mid-file, one last): the
    // conversation is whole.
    assert_eq!(
        texts(&s),
        [
            "The date test is flaky",
            "It depends on the time zone.",
            "Pin it to UTC",
            "Done: the test now uses UTC."
        ]
    );
}

#[test]
fn at_references_keep_what_was_typed_and_record_the_files_read() {
    let s = session("09-at-command");
    let u = |n| uuid("b9000009", n);
    assert_eq!(
        messages(&s),
        [
            said(
                User,
                "@notes.md @docs/ summarize these",
                &u(2),
                at(0, 1) + 100
            ),
            said(
                Assistant,
                "You need to buy milk; the docs hold an index.",
                &u(3),
                at(0, 2)
            ),
            said(User, "@missing.md what now?", &u(5), at(0, 3) + 100),
            said(Assistant, "That file does not exist.", &u(6), at(0, 4)),
        ]
    );
    // The failed reference read nothing.
    assert_eq!(
        files(&s),
        [
            (
                "/home/dev/notes-app/notes.md".to_string(),
                FileAction::Read,
                at(0, 1)
            ),
            (
                "/home/dev/notes-app/docs/".to_string(),
                FileAction::Read,
                at(0, 1)
            ),
        ]
    );
}

#[test]
fn hook_context_is_not_what_the_person_typed() {
    let s = session("10-hook-context");
    assert_eq!(
        texts(&s),
        [
            // displayText, paired with hookContext.
            "Add a test for the parser",
            "Added tests/parser.rs.",
            // No payload: the final hook-context part is dropped.
            "Now run it",
            "It passes."
        ]
    );
}

#[test]
fn records_the_harness_wrote_for_itself_or_a_subagent_are_not_the_person() {
    let s = session("11-not-the-person");
    let u = |n| uuid("bb00000b", n);
    assert_eq!(
        messages(&s),
        [
            said(User, "Start the build in the background", &u(1), at(0, 1)),
            said(Assistant, "Started.", &u(2), at(0, 2)),
            // Typed while the tool ran.
            said(User, "also update the docs", &u(4), at(0, 4)),
            // Notification, cron, goal runtime and the subagent's sidechain: left out.
            said(User, "what did the build say?", &u(10), at(0, 9)),
            said(
                Assistant,
                "The build succeeded and the docs are updated.",
                &u(11),
                at(0, 10)
            ),
        ]
    );
    assert_eq!(
        commands(&s),
        [("make all".to_string(), CommandOrigin::Agent, at(0, 2))]
    );
}

#[test]
fn a_subagents_tool_calls_come_from_its_telemetry() {
    let s = session("12-subagent-telemetry");
    assert_eq!(
        files(&s),
        [
            // The debugger subagent's read (its failed one is left out; glob
            // is no file record).
            (
                "/home/dev/review-app/README.md".to_string(),
                FileAction::Read,
                at(0, 4)
            ),
            // The main agent's own call, counted once (not again from its telemetry).
            (
                "/home/dev/review-app/src/main.ts".to_string(),
                FileAction::Read,
                at(0, 11)
            ),
        ]
    );
    assert_eq!(
        commands(&s),
        [(
            "git log --oneline -5".to_string(),
            CommandOrigin::Agent,
            at(0, 6)
        )]
    );
    assert_eq!(s.messages.len(), 4);
}

#[test]
fn a_sub_session_records_its_parent() {
    let s = session("13-parent-session");
    assert_eq!(
        opt(&s.parent_id),
        Some("eeeeeeee-aaaa-4bbb-8ccc-00000000000e")
    );
    assert_eq!(texts(&s).len(), 2);
}

#[test]
fn windows_sessions_keep_their_paths() {
    let s = session("14-windows/projects/c--users-me-vault");
    assert_eq!(
        project(&s),
        (
            Some("C:\\Users\\me\\Vault"),
            Some("Vault"),
            Some("c--users-me-vault")
        )
    );
    assert_eq!(
        files(&s),
        [
            (
                "C:\\Users\\me\\Vault\\notes\\today.md".to_string(),
                FileAction::Edit,
                at(0, 2)
            ),
            (
                "C:\\Users\\me\\Vault\\index.md".to_string(),
                FileAction::Read,
                at(0, 2)
            ),
        ]
    );
    // Before 0.13 the folder kept the path's case.
    let s = session("14-windows/projects/C--Users-me-Old-Project");
    assert_eq!(
        project(&s),
        (
            Some("C:\\Users\\me\\Old Project"),
            Some("Old Project"),
            Some("C--Users-me-Old-Project")
        )
    );
}

#[test]
fn without_cwd_the_folder_name_is_a_fallback() {
    // No directory encodes to this folder name: the project is known by it only.
    let s = session("15-no-cwd/projects");
    assert_eq!(
        project(&s),
        (None, None, Some("-nonexistent-qwen-fixture-dir"))
    );
    // Filed under the encoding of a directory that exists here, the session
    // gets that directory.
    let real = fixture("15-no-cwd/workspace/my app");
    let real = real.to_string_lossy().into_owned();
    let encoded = paths::encode(&real);
    let file = chat("15-no-cwd/projects");
    let bytes = std::fs::read(&file).unwrap();
    let path = format!("/q/projects/{encoded}/chats/x.jsonl");
    let output = common::parse_bytes(&path, &bytes, 0, &common::empty_context());
    let s = &output.sessions[0];
    assert_eq!(
        project(s),
        (Some(real.as_str()), Some("my app"), Some(encoded.as_str()))
    );
}

#[test]
fn a_resumed_session_continues_in_the_same_file() {
    let s = session("16-resumed");
    assert_eq!(s.native_id.as_str(), "16161616-aaaa-4bbb-8ccc-000000000016");
    assert_eq!(s.started_at_ms, at(0, 1));
    assert_eq!(s.updated_at_ms, ms("2026-07-18T10:00:05Z"));
    assert_eq!(
        texts(&s),
        [
            "Start the migration",
            "Migration started.",
            "Is it finished?",
            "Yes, all tables moved."
        ]
    );
}

#[test]
fn byte_order_marks_crlf_and_invalid_utf8_are_read() {
    let s = session("18-odd-bytes");
    assert_eq!(
        texts(&s),
        ["Grüße aus Köln ✓", "Danke!", "caf\u{FFFD} au lait"]
    );
}

#[test]
fn lines_that_are_not_records_of_the_session_are_skipped() {
    let s = session("19-not-records");
    // Blank lines, arrays, records without a uuid or sessionId, another
    // session's record and an unknown record type say nothing.
    assert_eq!(texts(&s), ["Only this is said", "And this answer."]);
    assert_eq!(project(&s).0, Some("/home/dev/odd-app"));
}

// ---- discovery -------------------------------------------------------------------

fn discovered(context: &HostContext) -> Vec<String> {
    let base = fixture("17-discovery");
    let discovery = <QwenReader as Reader>::discover(context).unwrap();
    assert!(discovery.warnings.is_empty(), "{:?}", discovery.warnings);
    let mut found: Vec<String> = discovery
        .transcripts
        .iter()
        .map(|t| {
            Path::new(t.as_str())
                .strip_prefix(&base)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    found.sort();
    found
}

#[test]
fn discovery_reads_the_chats_folders_of_home_qwen() {
    let base = fixture("17-discovery");
    let context = common::context(&base.join("home"), &[], "{}");
    // Not the nested file, the file beside chats/, notes.txt, logs.json or settings.
    assert_eq!(
        discovered(&context),
        ["home/.qwen/projects/-home-dev-home-app/chats/17000001-aaaa-4bbb-8ccc-000000000171.jsonl"]
    );
    let discovery = <QwenReader as Reader>::discover(&context).unwrap();
    let searched: Vec<(String, String, bool)> = discovery
        .searched
        .iter()
        .map(|s| (s.path.to_string(), s.reason.to_string(), s.exists))
        .collect();
    let projects = base
        .join("home/.qwen/projects")
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        searched,
        [(projects, "Qwen Code default (~/.qwen)".to_string(), true)]
    );
}

#[test]
fn discovery_follows_qwen_home_and_qwen_runtime_dir() {
    let base = fixture("17-discovery");
    let home = base.join("home");
    let qwen_home = base.join("qwen-home");
    let runtime = base.join("runtime");
    let context = common::context(&home, &[("QWEN_HOME", &qwen_home)], "{}");
    assert_eq!(
        discovered(&context),
        ["qwen-home/projects/-srv-qwen-home-app/chats/17000004-aaaa-4bbb-8ccc-000000000174.jsonl"]
    );
    // The runtime folder wins over QWEN_HOME, as in qwen-code.
    let context = common::context(
        &home,
        &[("QWEN_HOME", &qwen_home), ("QWEN_RUNTIME_DIR", &runtime)],
        "{}",
    );
    assert_eq!(
        discovered(&context),
        ["runtime/projects/-srv-runtime-app/chats/17000005-aaaa-4bbb-8ccc-000000000175.jsonl"]
    );
}

#[test]
fn deja_qwen_root_overrides_and_may_name_projects_itself() {
    let base = fixture("17-discovery");
    let list = std::env::join_paths([base.join("deja-root"), base.join("bare-projects")]).unwrap();
    let context = common::context(
        &base.join("home"),
        &[
            ("QWEN_RUNTIME_DIR", &base.join("runtime")),
            ("DEJA_QWEN_ROOT", Path::new(&list)),
        ],
        "{}",
    );
    assert_eq!(
        discovered(&context),
        [
            "bare-projects/-srv-bare-app/chats/17000007-aaaa-4bbb-8ccc-000000000177.jsonl",
            "deja-root/projects/-srv-deja-app/chats/17000006-aaaa-4bbb-8ccc-000000000176.jsonl",
        ]
    );
}

#[test]
fn config_roots_add_places_minus_excludes() {
    let base = fixture("17-discovery");
    let home = base.join("home");
    let config = r#"{"roots": ["~/../extra"], "exclude": ["scratch-*"]}"#;
    let context = common::context(&home, &[], config);
    assert_eq!(
        discovered(&context),
        [
            "home/../extra/projects/-srv-extra-app/chats/17000008-aaaa-4bbb-8ccc-000000000178.jsonl",
            "home/.qwen/projects/-home-dev-home-app/chats/17000001-aaaa-4bbb-8ccc-000000000171.jsonl",
        ]
    );
    let bad = common::context(&home, &[], r#"{"roots": "not a list"}"#);
    assert!(<QwenReader as Reader>::discover(&bad).is_err());
}

#[test]
fn no_other_file_of_the_tree_is_a_session_and_each_says_why() {
    let home = fixture("17-discovery/home/.qwen");
    let context = common::empty_context();
    for file in walk(&home) {
        let output = common::parse_file(&file, &context);
        if file.extension().is_some_and(|e| e == "jsonl") {
            // Sessions, but only the one in chats/ is discovered (above).
            assert!(output.warnings.is_empty());
            assert_eq!(output.sessions.len(), 1);
        } else {
            // Another file read as a chat gives nothing, and says why.
            assert!(output.sessions.is_empty(), "{}", file.display());
            assert_eq!(output.skipped_empty, 0);
            assert_eq!(output.warnings.len(), 1, "{}", file.display());
            assert!(output.warnings[0].contains("is a Qwen Code chat record"));
        }
    }
}

// ---- resume --------------------------------------------------------------------------

fn resume(
    native_id: &str,
    project_dir: Option<&str>,
    source: Option<&Path>,
    context: &HostContext,
) -> ResumeAdvice {
    let source = source.map(|p| p.to_string_lossy().into_owned());
    let request = ResumeRequest {
        id: RStr::from(native_id),
        native_id: RStr::from(native_id),
        project_dir: project_dir.map(RStr::from).into(),
        source_path: source.as_deref().map(RStr::from).into(),
        context,
    };
    <QwenReader as Reader>::resume(&request).unwrap()
}

fn command(native_id: &str, cwd: Option<&str>, note: &str) -> ResumeAdvice {
    ResumeAdvice::Command {
        argv: ["qwen", "--resume", native_id]
            .map(Into::into)
            .to_vec()
            .into(),
        cwd: cwd.map(Into::into).into(),
        note: note.into(),
    }
}

#[test]
fn resume_runs_qwen_resume_in_the_sessions_directory() {
    let base = fixture("17-discovery");
    let context = common::context(&base.join("home"), &[], "{}");
    let source = base.join(
        "home/.qwen/projects/-home-dev-home-app/chats/17000001-aaaa-4bbb-8ccc-000000000171.jsonl",
    );
    let id = "17000001-aaaa-4bbb-8ccc-000000000171";
    assert_eq!(
        resume(id, Some("/home/dev/home-app"), Some(&source), &context),
        command(id, Some("/home/dev/home-app"), "")
    );
    // Without the host's project directory, re-read from the transcript.
    assert_eq!(
        resume(id, None, Some(&source), &context),
        command(id, Some("/home/dev/home-app"), "")
    );
    assert_eq!(
        resume(id, Some("/x"), None, &context),
        command(id, Some("/x"), "")
    );
}

#[test]
fn resume_says_when_the_directory_is_unknown_or_the_file_is_elsewhere() {
    let source = chat("15-no-cwd/projects");
    let id = "15151515-aaaa-4bbb-8ccc-000000000015";
    let ResumeAdvice::Command { argv, cwd, note } =
        resume(id, None, Some(&source), &common::empty_context())
    else {
        panic!("a command");
    };
    assert_eq!(argv.len(), 3);
    assert_eq!(cwd, ROption::RNone);
    assert!(note.contains("unknown"), "{note}");
    assert!(note.contains("project's directory"), "{note}");
    // Read from a fixture, not from ~/.qwen/projects: qwen-code would not find it there.
    assert!(note.contains("not in Qwen Code's own folder"), "{note}");
    assert!(note.contains("/nonexistent-home/.qwen/projects"), "{note}");
}

// ---- detect and robustness ----------------------------------------------------------------

#[test]
fn detect_is_sure_of_qwen_chats_only() {
    let detect = |path: &str, head: &[u8]| <QwenReader as Reader>::detect(path, head);
    let file = chat("01-basic");
    let head = std::fs::read(&file).unwrap();
    assert_eq!(detect(file.to_str().unwrap(), &head), 100);
    assert_eq!(detect("/backup/11111111.jsonl", &head), 90);
    assert_eq!(detect("/x/11111111.json", &head), 0);
    // A system record first (slash-command-only file).
    let slash = std::fs::read(fixture(
        "03-system-records/projects/-home-dev-sys-app/chats/33333333-aaaa-4bbb-8ccc-000000000004.jsonl",
    ))
    .unwrap();
    assert_eq!(detect("/backup/s.jsonl", &slash), 90);
    // Claude Code, Gemini CLI and Codex JSONL.
    let claude = br#"{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/p","sessionId":"s","version":"2.1.23","gitBranch":"main","type":"user","message":{"role":"user","content":"hi"},"uuid":"u","timestamp":"2026-01-29T11:03:38.625Z"}"#;
    let gemini = br#"{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z","lastUpdated":"2026-01-01T00:00:00Z","kind":"main"}"#;
    let codex = br#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s","cwd":"/p"}}"#;
    for head in [&claude[..], &gemini[..], &codex[..]] {
        assert_eq!(detect("/home/u/.claude/projects/-p/s.jsonl", head), 0);
        assert_eq!(detect(file.to_str().unwrap(), head), 0);
    }
}

#[test]
fn a_multi_megabyte_session_parses_whole_and_quickly() {
    // 20 000 turns, about 14 MB: user prompts, answers with thoughts and a
    // shell call each, tool results and telemetry, as qwen-code writes them.
    let session = "12121212-aaaa-4bbb-8ccc-000000000012";
    let filler = "lorem ipsum dolor sit amet ".repeat(7);
    let mut text = String::new();
    let mut parent = String::from("null");
    for i in 0..5_000 {
        let records = [
            format!(
                r#"{{"uuid":"u{i}","parentUuid":{parent},"sessionId":"{session}","timestamp":"2026-07-17T09:00:00Z","type":"user","cwd":"/home/dev/big","version":"0.14.0","message":{{"role":"user","parts":[{{"text":"question {i} {filler}"}}]}}}}"#
            ),
            format!(
                r#"{{"uuid":"a{i}","parentUuid":"u{i}","sessionId":"{session}","timestamp":"2026-07-17T09:00:01Z","type":"assistant","cwd":"/home/dev/big","version":"0.14.0","message":{{"role":"model","parts":[{{"text":"thinking {filler}","thought":true}},{{"text":"answer {i} {filler}"}},{{"functionCall":{{"id":"c{i}","name":"run_shell_command","args":{{"command":"echo {i}"}}}}}}]}}}}"#
            ),
            format!(
                r#"{{"uuid":"t{i}","parentUuid":"a{i}","sessionId":"{session}","timestamp":"2026-07-17T09:00:02Z","type":"tool_result","cwd":"/home/dev/big","version":"0.14.0","message":{{"role":"user","parts":[{{"functionResponse":{{"id":"c{i}","name":"run_shell_command","response":{{"output":"{filler}{filler}"}}}}}}]}},"toolCallResult":{{"callId":"c{i}","status":"success"}}}}"#
            ),
            format!(
                r#"{{"uuid":"s{i}","parentUuid":"t{i}","sessionId":"{session}","timestamp":"2026-07-17T09:00:03Z","type":"system","cwd":"/home/dev/big","version":"0.14.0","subtype":"ui_telemetry","systemPayload":{{"uiEvent":{{"event.name":"qwen-code.api_response","response_text":"{filler}{filler}{filler}"}}}}}}"#
            ),
        ];
        for record in records {
            text.push_str(&record);
            text.push('\n');
        }
        parent = format!("\"s{i}\"");
    }
    assert!(text.len() > 10_000_000, "{}", text.len());
    let start = std::time::Instant::now();
    let output = common::parse_bytes(
        "/q/projects/-home-dev-big/chats/12121212-aaaa-4bbb-8ccc-000000000012.jsonl",
        text.as_bytes(),
        0,
        &common::empty_context(),
    );
    let elapsed = start.elapsed();
    let s = &output.sessions[0];
    assert_eq!(s.messages.len(), 10_000);
    assert_eq!(s.commands.len(), 5_000);
    assert_eq!(
        s.messages[9_999].text.as_str(),
        format!("answer 4999 {filler}")
    );
    // Generous for unoptimized builds on a busy machine; it takes well under a second.
    assert!(elapsed < std::time::Duration::from_secs(30), "{elapsed:?}");
    println!("{} bytes parsed in {elapsed:?}", text.len());
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
        <QwenReader as Reader>::detect(path.to_str().unwrap(), bytes);
    };
    for file in walk(&common::fixtures().canonicalize().unwrap()) {
        let bytes = std::fs::read(&file).unwrap();
        // Every truncation (a step for the larger files).
        let step = bytes.len() / 300 + 1;
        for end in (0..bytes.len()).step_by(step) {
            parse_any(&file, &bytes[..end]);
        }
        // Random corruption.
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
    let somewhere = chat("01-basic");
    for len in [0, 1, 2, 3, 7, 64, 1000, 10_000] {
        for _ in 0..10 {
            let len = len + (noise.next() as usize) % 5;
            parse_any(&somewhere, &noise.bytes(len));
        }
    }
    let nasty: Vec<Vec<u8>> = vec![
        "[".repeat(100_000).into_bytes(),
        format!("{}{}", "{\"a\":".repeat(50_000), "1").into_bytes(),
        br#"{"uuid":"a","parentUuid":"a","sessionId":"s","type":"user","message":{"parts":[{"text":"self"}]}}"#.to_vec(),
        br#"{"uuid":"a","parentUuid":"b","sessionId":"s","type":"user","message":{"parts":[{"text":"x"}]}}
{"uuid":"b","parentUuid":"a","sessionId":"s","type":"assistant","message":{"parts":[{"text":"y"}]}}"#.to_vec(),
        br#"{"uuid":"a","parentUuid":null,"sessionId":"s","timestamp":"+275760-09-13T00:00:00.001Z","type":"user","message":{"parts":[{"text":"far"}]}}"#.to_vec(),
        br#"{"uuid":"\ud800","parentUuid":null,"sessionId":"\udfff","type":"user","message":{"parts":[{"text":"\u0000"}]}}"#.to_vec(),
        br#"{"uuid":"a","parentUuid":null,"sessionId":"s","type":"user","message":{"parts":[{"text":"<qwen:user-prompt-submit-context>\n</qwen:user-prompt-submit-context>"},{"text":"<qwen:user-prompt-submit-context>\n</qwen:user-prompt-submit-context>"}]}}"#.to_vec(),
        br#"{"uuid":"a","parentUuid":null,"sessionId":"s","type":"user","message":{"parts":[{"text":"--- Content from referenced files ---"},{"text":"--- End of content ---"}]}}"#.to_vec(),
        b"\xEF\xBB\xBF\xFF\xFE\x00{\"uuid\":\"a\"\x80\x81}".to_vec(),
    ];
    for bytes in &nasty {
        parse_any(&somewhere, bytes);
    }
}
