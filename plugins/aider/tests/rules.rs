//! One test per parsing rule of the aider reader, each over a small history
//! in `fixtures/golden/aider/`, parsed through the `Reader` trait.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{Local, NaiveDateTime, TimeZone};
use deja_plugin_aider::AiderReader;
use deja_plugin_api::{
    CommandOrigin, ErrorKind, FileAction, HostContext, ParseOutput, ParseRequest, PluginError,
    ROption, Reader, ResumeAdvice, ResumeRequest, Role, Session,
};
use sha2::{Digest, Sha256};

/// The path every fixture is parsed as (ids and file records depend on it).
const PATH: &str = "/work/demo/.aider.chat.history.md";
const UTC_CONFIG: &str = r#"{"timezone":"UTC"}"#;
const MODIFIED_MS: i64 = 1_700_000_000_000;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../fixtures/golden/aider/{name}.aider.chat.history.md",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn context(config_json: &str) -> HostContext {
    HostContext {
        home: "/nonexistent-home".into(),
        env: Vec::new().into(),
        config_json: config_json.into(),
    }
}

fn try_parse(bytes: &[u8], config_json: &str) -> Result<ParseOutput, PluginError> {
    let context = context(config_json);
    let request = ParseRequest {
        path: PATH.into(),
        bytes: bytes.into(),
        modified_ms: MODIFIED_MS,
        context: &context,
    };
    AiderReader::parse(&request)
}

fn parse_bytes(bytes: &[u8]) -> ParseOutput {
    try_parse(bytes, UTC_CONFIG).unwrap()
}

fn parse(name: &str) -> ParseOutput {
    parse_bytes(&fixture(name))
}

fn only_session(output: &ParseOutput) -> &Session {
    assert_eq!(output.sessions.len(), 1, "{output:#?}");
    &output.sessions[0]
}

fn u(text: &str) -> (Role, String) {
    (Role::User, text.to_string())
}

fn a(text: &str) -> (Role, String) {
    (Role::Assistant, text.to_string())
}

fn messages(session: &Session) -> Vec<(Role, String)> {
    session
        .messages
        .iter()
        .map(|m| (m.role, m.text.to_string()))
        .collect()
}

fn files(session: &Session) -> Vec<(String, FileAction)> {
    session
        .files
        .iter()
        .map(|f| (f.path.to_string(), f.action))
        .collect()
}

fn commands(session: &Session) -> Vec<(String, CommandOrigin)> {
    session
        .commands
        .iter()
        .map(|c| (c.command.to_string(), c.origin))
        .collect()
}

fn ids(output: &ParseOutput) -> Vec<String> {
    output.sessions.iter().map(|s| s.id.to_string()).collect()
}

fn hex(text: &str, len: usize) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    hex[..len].to_string()
}

/// The id of a session started at local time `stamp` (`YYYYMMDDTHHMMSS`).
fn id(stamp: &str) -> String {
    format!("aider-{}-{stamp}", hex(PATH, 12))
}

/// Milliseconds since the epoch of `YYYY-MM-DD HH:MM:SS` read as UTC.
fn utc(text: &str) -> i64 {
    naive(text).and_utc().timestamp_millis()
}

fn naive(text: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S").unwrap()
}

#[test]
fn one_file_holds_many_sessions() {
    let out = parse("01-multiple-sessions");
    assert_eq!(out.skipped_empty, 0);
    assert_eq!(
        ids(&out),
        vec![id("20260717T090000"), id("20260717T143005")]
    );
    let (first, second) = (&out.sessions[0], &out.sessions[1]);
    assert_eq!(
        messages(first),
        vec![
            u("Show me the failing query"),
            a("The query misses the tenant predicate.")
        ]
    );
    assert_eq!(
        messages(second),
        vec![
            u("Add the tenant predicate to the query"),
            a("I'll add `tenant_id = $1` to the `WHERE` clause."),
            u("Thanks"),
            a("You're welcome."),
        ]
    );
    for (session, start) in [
        (first, "2026-07-17 09:00:00"),
        (second, "2026-07-17 14:30:05"),
    ] {
        assert_eq!(session.native_id, session.id);
        assert_eq!(session.started_at_ms, utc(start));
        assert_eq!(session.updated_at_ms, session.started_at_ms);
        assert!(session
            .messages
            .iter()
            .all(|m| m.timestamp_ms == utc(start)));
        assert_eq!(session.project.dir, ROption::RSome("/work/demo".into()));
        assert_eq!(session.project.name, ROption::RSome("demo".into()));
        assert_eq!(session.title, ROption::RNone);
        assert_eq!(session.precedence, 0);
    }
}

#[test]
fn a_header_starts_a_session_even_inside_an_unclosed_fence() {
    let out = parse("02-unclosed-fence-header");
    assert_eq!(
        ids(&out),
        vec![id("20260718T100000"), id("20260718T100500")]
    );
    assert_eq!(
        messages(&out.sessions[0]),
        vec![
            u("Write a shell script that prints the date"),
            a("Here is the script:\n\ndate.sh\n```bash\n#!/bin/sh\necho \"Today is"),
        ]
    );
    assert_eq!(
        messages(&out.sessions[1]),
        vec![
            u("Try again, the last reply was cut off"),
            a("date.sh\n```bash\n#!/bin/sh\necho \"Today is $(date)\"\n```"),
        ]
    );
}

#[test]
fn a_line_aider_wrote_ends_an_interrupted_reply() {
    let out = parse("03-unclosed-fence-marked-line");
    assert_eq!(
        messages(only_session(&out)),
        vec![
            u("Write the config loader"),
            a("config.py\n```python\nimport os\n\ndef load():\n    return os.environ.get(\"CONFIG_PATH\","),
            u("Continue where you stopped"),
            a("```python\ndef load():\n    return os.environ.get(\"CONFIG_PATH\", \"config.toml\")\n```"),
        ]
    );
}

#[test]
fn longer_fences_hold_shorter_fences_and_markers() {
    let out = parse("04-long-fences");
    assert_eq!(
        messages(only_session(&out)),
        vec![
            u("Write a README section about the history format"),
            a("Here is the section:\n\n````markdown\n## History format\n\n```text\n#### a user line\n\
               > a tool line\n```\n\n#### Headings inside the fence stay content\n> So do quotes\n\
               ````\n\nThat's all."),
            u("Thanks"),
            a("Glad to help."),
        ]
    );
}

#[test]
fn tool_output_and_its_unprefixed_lines_are_not_messages() {
    let out = parse("05-tool-output-continuation");
    let session = only_session(&out);
    assert_eq!(
        messages(session),
        vec![
            u("Set the env vars and run the check"),
            a("Run these:\n\n```bash\ncd app\n./check.sh --all\n```"),
            u("Why did it print nothing?"),
            a("The script only prints on failure."),
        ]
    );
    assert_eq!(
        commands(session),
        vec![
            ("git log -1".to_string(), CommandOrigin::User),
            ("cd app".to_string(), CommandOrigin::Agent),
            ("./check.sh --all".to_string(), CommandOrigin::Agent),
        ]
    );
}

#[test]
fn nothing_before_the_first_user_line_is_a_message() {
    let out = parse("06-banner-before-first-input");
    assert_eq!(
        messages(only_session(&out)),
        vec![u("Rename the `fetch` helper to `load`"), a("Renamed.")]
    );
}

#[test]
fn blank_markers_and_space_only_lines_are_empty_lines() {
    let out = parse("07-blank-input-lines");
    assert_eq!(
        messages(only_session(&out)),
        vec![
            u("First paragraph of my request\n\nSecond paragraph, after an empty line"),
            a("Understood."),
        ]
    );
}

#[test]
fn aider_commands_are_dropped() {
    let out = parse("08-aider-commands-dropped");
    let session = only_session(&out);
    assert_eq!(
        messages(session),
        vec![
            u("Explain the query builder"),
            a("It assembles SQL from parts.")
        ]
    );
    assert!(session.commands.is_empty());
    assert_eq!(
        files(session),
        vec![
            ("/work/demo/src/db.py".to_string(), FileAction::Add),
            ("/work/demo/src/query.py".to_string(), FileAction::Add),
        ]
    );
}

#[test]
fn run_bang_test_and_git_become_user_commands() {
    let out = parse("09-shell-commands");
    let session = only_session(&out);
    assert_eq!(
        messages(session),
        vec![u("Fix the failing test"), a("Fixed.")]
    );
    let expected: Vec<(String, CommandOrigin)> = [
        "cargo test",
        "ls -la",
        "pytest -x",
        "git status --short",
        "make lint",
    ]
    .iter()
    .map(|c| (c.to_string(), CommandOrigin::User))
    .collect();
    assert_eq!(commands(session), expected);
    assert!(
        session.files.is_empty(),
        "`Added 42 lines of output` is no file"
    );
}

#[test]
fn ask_code_context_architect_help_questions_appear_once() {
    let out = parse("10-question-commands");
    assert_eq!(
        messages(only_session(&out)),
        vec![
            u("Why is the query slow?"),
            a("It scans the whole table."),
            u("Add an index on tenant_id"),
            a("Added."),
            u("Where is the cache invalidated?"),
            a("In `cache.py`."),
            u("Split the module in two"),
            a("Plan: move the helpers out."),
            // No re-logged copy follows this one: the question is kept.
            u("What does the retry do?"),
            // `/help` re-logs a prompt built around the question, not the question.
            u("How do I add files?"),
            a("Use `/add <file>`."),
        ]
    );
}

#[test]
fn confirmation_answers_are_not_user_messages() {
    let out = parse("11-confirmation-answers");
    let session = only_session(&out);
    assert_eq!(
        messages(session),
        vec![
            u("Update the handler in api.py"),
            // Tool output ends an assistant block.
            a("I need to see these files first."),
            a("Updated the handler."),
        ]
    );
    assert_eq!(
        files(session),
        vec![("/work/demo/api.py".to_string(), FileAction::Edit)]
    );
}

#[test]
fn tool_output_records_files() {
    let out = parse("12-file-records");
    let session = only_session(&out);
    assert_eq!(
        messages(session),
        vec![u("Use the helper from util.py"), a("Done.")]
    );
    assert_eq!(
        files(session),
        vec![
            ("/work/demo/src/app.py".to_string(), FileAction::Add),
            (
                "/work/demo/CONVENTIONS.md".to_string(),
                FileAction::ReadOnly
            ),
            ("/work/demo/lib/util.py".to_string(), FileAction::Add),
            ("/work/demo/docs/guide.md".to_string(), FileAction::ReadOnly),
            ("/work/demo/src/app.py".to_string(), FileAction::Edit),
            ("/work/demo/lib/util.py".to_string(), FileAction::Edit),
        ]
    );
    assert!(session
        .files
        .iter()
        .all(|f| f.timestamp_ms == session.started_at_ms));
    assert_eq!(
        commands(session),
        vec![("make".to_string(), CommandOrigin::User)]
    );
}

#[test]
fn running_lines_are_agent_commands() {
    let out = parse("13-agent-commands");
    let session = only_session(&out);
    assert_eq!(
        commands(session),
        vec![
            ("npm install".to_string(), CommandOrigin::Agent),
            ("npm test".to_string(), CommandOrigin::Agent),
        ]
    );
    assert!(session
        .commands
        .iter()
        .all(|c| c.timestamp_ms == session.started_at_ms));
}

/// The encoded forms of a UTF-8 history, by name.
fn encodings(text: &str) -> Vec<(&'static str, Vec<u8>)> {
    let utf16 = |bom: [u8; 2], to: fn(u16) -> [u8; 2]| {
        let mut bytes = bom.to_vec();
        bytes.extend(text.encode_utf16().flat_map(to));
        bytes
    };
    let with_nuls: Vec<u8> = text
        .bytes()
        .flat_map(|b| if b.is_ascii() { vec![b, 0] } else { vec![b] })
        .collect();
    let mut bom_then_utf8 = vec![0xFF, 0xFE, 0x0D, 0x00, 0x0A, 0x00];
    bom_then_utf8.extend(text.replace('\n', "\r\n").bytes());
    let mixed: String = text
        .split('\n')
        .enumerate()
        .map(|(i, line)| format!("{line}{}", ["\r\n", "\n", "\r"][i % 3]))
        .collect();
    vec![
        (
            "utf-8 with BOM",
            [&[0xEF, 0xBB, 0xBF][..], text.as_bytes()].concat(),
        ),
        ("utf-16 le", utf16([0xFF, 0xFE], u16::to_le_bytes)),
        ("utf-16 be", utf16([0xFE, 0xFF], u16::to_be_bytes)),
        ("crlf", text.replace('\n', "\r\n").into_bytes()),
        ("cr only", text.replace('\n', "\r").into_bytes()),
        ("mixed line ends", mixed.into_bytes()),
        ("nul bytes", with_nuls),
        ("utf-16 mark before utf-8", bom_then_utf8),
    ]
}

#[test]
fn every_encoding_reads_the_same() {
    let base = fixture("14-encodings");
    let expected = parse_bytes(&base);
    let session = only_session(&expected);
    assert_eq!(
        messages(session),
        vec![
            u("Grüße aus Köln — 日本語も大丈夫"),
            a("Hallo! こんにちは。")
        ]
    );
    let text = String::from_utf8(base).unwrap();
    for (name, bytes) in encodings(&text) {
        assert_eq!(parse_bytes(&bytes), expected, "{name}");
    }
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let mut bytes = fixture("14-encodings");
    let at = String::from_utf8_lossy(&bytes).find("Hallo!").unwrap() + 3;
    bytes.insert(at, 0xFF);
    let out = parse_bytes(&bytes);
    assert_eq!(
        messages(only_session(&out)),
        vec![
            u("Grüße aus Köln — 日本語も大丈夫"),
            a("Hal\u{FFFD}lo! こんにちは。")
        ]
    );
}

fn starts(output: &ParseOutput) -> Vec<i64> {
    output.sessions.iter().map(|s| s.started_at_ms).collect()
}

#[test]
fn header_times_are_local_and_converted_to_utc() {
    let bytes = fixture("15-timezones");
    let stamps = [
        "20260717T090000",
        "20260117T090000",
        "20261025T023000",
        "20260329T023000",
    ];
    let expected_ids: Vec<String> = stamps.iter().map(|s| id(s)).collect();
    let cases = [
        (
            r#"{"timezone":"Europe/Berlin"}"#,
            // summer (CEST), winter (CET), fall-back (earlier, CEST), spring-forward (shifted).
            [
                "2026-07-17 07:00:00",
                "2026-01-17 08:00:00",
                "2026-10-25 00:30:00",
                "2026-03-29 01:30:00",
            ],
        ),
        (
            r#"{"timezone":"+02:00"}"#,
            [
                "2026-07-17 07:00:00",
                "2026-01-17 07:00:00",
                "2026-10-25 00:30:00",
                "2026-03-29 00:30:00",
            ],
        ),
        (
            r#"{"timezone":"UTC"}"#,
            [
                "2026-07-17 09:00:00",
                "2026-01-17 09:00:00",
                "2026-10-25 02:30:00",
                "2026-03-29 02:30:00",
            ],
        ),
    ];
    for (config, expected) in cases {
        let out = try_parse(&bytes, config).unwrap();
        assert_eq!(ids(&out), expected_ids, "ids do not depend on the zone");
        let expected: Vec<i64> = expected.iter().map(|t| utc(t)).collect();
        assert_eq!(starts(&out), expected, "{config}");
        for session in &out.sessions {
            assert!(session
                .messages
                .iter()
                .all(|m| m.timestamp_ms == session.started_at_ms));
        }
    }
}

#[test]
fn without_a_setting_the_machine_zone_is_used() {
    let out = try_parse(&fixture("15-timezones"), "{}").unwrap();
    let locals = ["2026-07-17 09:00:00", "2026-01-17 09:00:00"];
    assert_eq!(out.sessions.len(), 4, "{:?}", ids(&out));
    for (session, local) in out.sessions.iter().zip(locals) {
        // 09:00 is one moment in every zone (no zone moves its clocks then).
        let time = Local
            .from_local_datetime(&naive(local))
            .single()
            .unwrap_or_else(|| panic!("{local} is not one local time here"));
        assert_eq!(session.started_at_ms, time.timestamp_millis(), "{local}");
    }
}

#[test]
fn an_invalid_zone_is_a_config_error_naming_the_key() {
    let err = try_parse(
        &fixture("15-timezones"),
        r#"{"timezone":"Mars/Olympus_Mons"}"#,
    )
    .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Config);
    assert!(err.message.contains("`timezone`"), "{}", err.message);
}

#[test]
fn launches_in_the_same_second_are_numbered() {
    let out = parse("16-same-second");
    assert_eq!(
        ids(&out),
        vec![
            id("20260720T081500"),
            id("20260720T081500-2"),
            id("20260720T081500-3"),
            id("20260720T081501"),
        ]
    );
}

#[test]
fn an_unparseable_header_gets_an_ordinal_and_a_file_marker() {
    let bytes = fixture("17-unparseable-header");
    let out = parse_bytes(&bytes);
    let marker = hex("# aider chat started at 2026-07-20 09:00:00", 8);
    let hash = hex(PATH, 12);
    assert_eq!(
        ids(&out),
        vec![
            id("20260720T090000"),
            format!("aider-{hash}-n2-{marker}"),
            format!("aider-{hash}-n3-{marker}"),
        ]
    );
    let first = utc("2026-07-20 09:00:00");
    assert_eq!(
        starts(&out),
        vec![first, first, first],
        "the previous session's start"
    );

    // A new file at the same path starts with another first line: other ids.
    let text = String::from_utf8(bytes).unwrap();
    let reborn = text.replace("2026-07-20 09:00:00", "2026-08-01 10:00:00");
    let reborn_ids = ids(&parse_bytes(reborn.as_bytes()));
    assert_ne!(reborn_ids[1], ids(&out)[1]);

    // Without a previous session, the file's modification time.
    let alone = "\n# aider chat started at ??\n\n#### hi  \n\nHello.\n";
    assert_eq!(starts(&parse_bytes(alone.as_bytes())), vec![MODIFIED_MS]);
}

#[test]
fn sessions_without_messages_are_skipped_and_counted() {
    let out = parse("18-empty-sessions");
    assert_eq!(out.skipped_empty, 3);
    assert_eq!(ids(&out), vec![id("20260720T100300")]);
    assert_eq!(
        messages(&out.sessions[0]),
        vec![u("Now it works"), a("Good.")]
    );
}

#[test]
fn model_headings_stay_assistant_text() {
    let out = parse("19-model-headings");
    assert_eq!(
        messages(only_session(&out)),
        vec![
            u("Summarize the design"),
            a(
                "#### 1. Design Choices\n\nThe store is append-only.\n\n#### 2. Modified Files\n\n\
               #### client/src/App.css\nNo changes needed."
            ),
            u("And the risks?"),
            a("#### Risks\n\nNone known."),
        ]
    );
}

#[test]
fn a_file_without_trailing_spaces_follows_the_plain_rules() {
    let out = parse("20-stripped-whitespace");
    let session = only_session(&out);
    assert_eq!(
        messages(session),
        vec![
            u("Make the button blue"),
            a("Here is the change."),
            u("Thanks"),
            a("You're welcome."),
        ]
    );
    assert_eq!(
        files(session),
        vec![
            ("/work/demo/app.js".to_string(), FileAction::Add),
            ("/work/demo/app.js".to_string(), FileAction::Edit),
        ]
    );
}

#[test]
fn legacy_sessions_are_read() {
    let out = parse("21-legacy-format");
    let session = only_session(&out);
    assert_eq!(session.id, id("20230512T152326"));
    assert_eq!(
        messages(session),
        vec![
            u("make a flask app with a /hello endpoint"),
            a(
                "Ok, here are the changes:\n\n```python\napp.py\n<<<<<<< ORIGINAL\n=======\n\
               from flask import Flask\n>>>>>>> UPDATED\n```"
            ),
            u("now remove it"),
            a("Removed."),
        ]
    );
    assert_eq!(
        files(session),
        vec![
            ("/work/demo/app.py".to_string(), FileAction::Add),
            ("/work/demo/app.py".to_string(), FileAction::Edit),
            ("/work/demo/app.py".to_string(), FileAction::Edit),
        ]
    );
}

#[test]
fn the_architect_hand_off_is_not_a_user_message() {
    let out = parse("22-architect-hand-off");
    let session = only_session(&out);
    assert_eq!(
        messages(session),
        vec![
            u("Make the parser faster"),
            a("Plan:\n\n1. Cache the compiled regex.\n2. Avoid the second pass."),
            a("parser.py\n```python\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n```"),
        ]
    );
}

#[test]
fn a_user_line_broken_by_stray_line_ends_stays_one_message() {
    let out = parse("23-broken-user-line");
    assert_eq!(
        messages(only_session(&out)),
        vec![
            u("Hello"),
            a("Hi."),
            u("Please review: 1) purpose\n2) tech stack\n3) risks"),
            a("1) A web app."),
        ]
    );
}

#[test]
fn ids_are_stable_as_the_file_grows() {
    for name in [
        "01-multiple-sessions",
        "16-same-second",
        "17-unparseable-header",
        "10-question-commands",
    ] {
        let bytes = fixture(name);
        let full = parse_bytes(&bytes);
        let full_ids = ids(&full);
        let first_line_end = bytes.iter().skip(1).position(|&b| b == b'\n').unwrap() + 2;
        let cuts = bytes
            .iter()
            .enumerate()
            .filter(|&(i, &b)| b == b'\n' && i >= first_line_end);
        for (cut, _) in cuts {
            let prefix = parse_bytes(&bytes[..=cut]);
            let mut rest = full_ids.iter();
            for session in &prefix.sessions {
                assert!(
                    rest.any(|id| *id == session.id.as_str()),
                    "{name}: prefix of {cut} bytes has {} which the whole file lacks",
                    session.id
                );
                let whole = full.sessions.iter().find(|s| s.id == session.id).unwrap();
                assert_eq!(whole.started_at_ms, session.started_at_ms);
            }
        }
    }
}

const FIXTURES: [&str; 23] = [
    "01-multiple-sessions",
    "02-unclosed-fence-header",
    "03-unclosed-fence-marked-line",
    "04-long-fences",
    "05-tool-output-continuation",
    "06-banner-before-first-input",
    "07-blank-input-lines",
    "08-aider-commands-dropped",
    "09-shell-commands",
    "10-question-commands",
    "11-confirmation-answers",
    "12-file-records",
    "13-agent-commands",
    "14-encodings",
    "15-timezones",
    "16-same-second",
    "17-unparseable-header",
    "18-empty-sessions",
    "19-model-headings",
    "20-stripped-whitespace",
    "21-legacy-format",
    "22-architect-hand-off",
    "23-broken-user-line",
];

/// A small deterministic pseudo-random generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn garbage_never_panics() {
    const PIECES: [&[u8]; 14] = [
        b"#### ",
        b"> ",
        b"```",
        b"````",
        b"  ",
        b"\n",
        b"\r\n",
        b"\r",
        b"\0",
        b"\xFF\xFE",
        b"\xFE\xFF",
        b"\xEF\xBB\xBF",
        b"# aider chat started at 2026-01-01 00:00:00",
        b"/ask ",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..3000 {
        let mut bytes = Vec::new();
        for _ in 0..rng.below(64) {
            if rng.below(2) == 0 {
                bytes.extend_from_slice(PIECES[rng.below(PIECES.len())]);
            } else {
                bytes.push(rng.next() as u8);
            }
        }
        let _ = try_parse(&bytes, UTC_CONFIG).unwrap();
        let _ = AiderReader::detect("/x/notes.md", &bytes);
    }
    for name in FIXTURES {
        let bytes = fixture(name);
        for cut in (0..bytes.len()).step_by(3) {
            let _ = try_parse(&bytes[..cut], UTC_CONFIG).unwrap();
            let mut flipped = bytes.clone();
            flipped[cut] ^= 1 << rng.below(8);
            let _ = try_parse(&flipped, UTC_CONFIG).unwrap();
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        for (_, encoded) in encodings(&text) {
            for cut in (0..encoded.len()).step_by(17) {
                let _ = try_parse(&encoded[..cut], UTC_CONFIG).unwrap();
            }
        }
    }
}

#[test]
fn detect_knows_the_name_and_the_header() {
    assert_eq!(AiderReader::detect("/p/.aider.chat.history.md", b""), 100);
    let head = b"\n# aider chat started at 2026-07-17 09:00:00\n\n> Aider v0.86.1  \n";
    assert_eq!(AiderReader::detect("/p/copy-of-history.md", head), 90);
    assert!(AiderReader::detect("/p/notes.md", b"# Notes\n\nNothing here.") == 0);
    assert_eq!(
        AiderReader::detect("/p/x.aider.chat.history.md.bak", b"hello"),
        0
    );
}

#[test]
fn resume_refuses_and_names_the_flag() {
    let context = context("{}");
    let request = ResumeRequest {
        id: "aider-x-20260717T090000".into(),
        native_id: "aider-x-20260717T090000".into(),
        project_dir: ROption::RSome("/work/demo".into()),
        source_path: ROption::RSome(PATH.into()),
        context: &context,
    };
    let ResumeAdvice::Refused { message } = AiderReader::resume(&request).unwrap() else {
        panic!("aider cannot reopen one session");
    };
    for part in [
        "aider --restore-chat-history",
        "whole history file",
        "every session",
        "/work/demo",
        PATH,
    ] {
        assert!(message.contains(part), "`{part}` missing from: {message}");
    }
    let unknown = ResumeRequest {
        project_dir: ROption::RNone,
        source_path: ROption::RNone,
        ..request
    };
    let ResumeAdvice::Refused { message } = AiderReader::resume(&unknown).unwrap() else {
        panic!("aider cannot reopen one session");
    };
    assert!(
        message.contains("aider --restore-chat-history"),
        "{message}"
    );
}
