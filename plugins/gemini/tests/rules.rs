//! One test per rule of the Gemini reader, each over a fixture under
//! `fixtures/golden/gemini/<NN-name>/` (a small `.gemini`-like tree), read
//! through the `Reader` trait with a host context built explicitly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::{
    CommandOrigin, FileAction, HostContext, ParseOutput, ROption, RStr, Reader, ResumeAdvice,
    ResumeRequest, Role, Session,
};
use deja_plugin_gemini::GeminiReader;

// ---- helpers -------------------------------------------------------------

fn fixture(relative: &str) -> PathBuf {
    let path = common::fixtures().join(relative);
    path.canonicalize()
        .unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

fn parse(relative: &str) -> ParseOutput {
    common::parse_file(&fixture(relative), &common::empty_context())
}

fn session(relative: &str) -> Session {
    let output = parse(relative);
    assert!(output.warnings.is_empty(), "{:?}", output.warnings);
    assert_eq!(output.sessions.len(), 1, "{output:#?}");
    output.sessions[0].clone()
}

fn ms(rfc3339: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .unwrap()
        .timestamp_millis()
}

/// 09:MM:SS.000Z on the fixtures' day.
fn at(minute: u32, second: u32) -> i64 {
    ms(&format!("2026-07-17T09:{minute:02}:{second:02}Z"))
}

type Said = (Role, String, Option<String>, i64);

fn said(role: Role, text: &str, id: &str, timestamp_ms: i64) -> Said {
    (role, text.to_string(), Some(id.to_string()), timestamp_ms)
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

fn opt(value: &ROption<deja_plugin_api::RString>) -> Option<&str> {
    value.as_ref().into_option().map(|s| s.as_str())
}

use Role::{Assistant, User};

// ---- loading ---------------------------------------------------------------

#[test]
fn legacy_json_is_one_session() {
    let s = session("01-legacy-json/tmp/legacy-app/chats/session-2026-07-17T09-00-11111111.json");
    assert_eq!(
        s.id.as_str(),
        "11111111-aaaa-4bbb-8ccc-000000000001-20260717T090000"
    );
    assert_eq!(s.native_id.as_str(), "11111111-aaaa-4bbb-8ccc-000000000001");
    assert_eq!((s.started_at_ms, s.updated_at_ms), (at(0, 0), at(0, 5)));
    assert_eq!(s.precedence, 1);
    assert_eq!(opt(&s.title), None);
    assert_eq!(opt(&s.parent_id), None);
    assert_eq!(
        messages(&s),
        [
            said(User, "How do I parse RFC 3339 in Rust?", "m1", at(0, 1)),
            said(
                Assistant,
                "Use chrono's DateTime::parse_from_rfc3339.",
                "m2",
                at(0, 2)
            ),
        ]
    );
}

#[test]
fn jsonl_first_line_carries_the_session() {
    // The spec's example: a first line without projectHash still opens a session.
    let s = session("02-jsonl/tmp/jsonl-app/chats/session-2026-07-17T09-00-22222222.jsonl");
    assert_eq!(
        s.id.as_str(),
        "22222222-aaaa-4bbb-8ccc-000000000002-20260717T090000"
    );
    assert_eq!(s.native_id.as_str(), "22222222-aaaa-4bbb-8ccc-000000000002");
    assert_eq!(s.precedence, 2);
    assert_eq!((s.started_at_ms, s.updated_at_ms), (at(0, 0), at(0, 2)));
    assert_eq!(
        messages(&s),
        [
            said(
                User,
                "Is the configuration valid?",
                "message-0",
                ms("2026-07-17T09:00:00.500Z")
            ),
            said(
                Assistant,
                "The configuration is valid.",
                "message-1",
                at(0, 1)
            ),
        ]
    );
}

#[test]
fn reappended_message_replaces_the_earlier_copy_in_place() {
    let s = session("03-reappend/tmp/reappend-app/chats/session-2026-07-17T09-00-33333333.jsonl");
    assert_eq!(
        messages(&s),
        [
            said(User, "What does main.rs do?", "m1", at(0, 1)),
            said(
                Assistant,
                "Let me look. It prints nothing: main is empty.",
                "m2",
                at(0, 2)
            ),
            said(User, "Thanks.", "m3", at(0, 4)),
        ]
    );
    // The tool call, re-appended three times, is recorded once.
    assert_eq!(s.files.len(), 1);
    assert_eq!(s.updated_at_ms, at(0, 5));
}

#[test]
fn set_patches_summary_and_last_updated() {
    let s = session("04-set-metadata/tmp/set-app/chats/session-2026-07-17T09-00-44444444.jsonl");
    assert_eq!(opt(&s.title), Some("Fix the flaky date test"));
    assert_eq!(s.updated_at_ms, at(5, 30));
    assert_eq!(s.started_at_ms, at(0, 0));
    assert_eq!(s.messages.len(), 2);
}

#[test]
fn rewind_to_a_known_id_drops_it_and_everything_after() {
    let s = session("05-rewind/tmp/rewind-app/chats/session-2026-07-17T09-00-55555555.jsonl");
    assert_eq!(
        messages(&s),
        [
            said(User, "First question", "m1", at(0, 1)),
            said(Assistant, "First answer", "m2", at(0, 2)),
            said(User, "Second question, rephrased", "m5", at(0, 6)),
            said(Assistant, "A clear answer", "m6", at(0, 7)),
        ]
    );
}

#[test]
fn rewind_to_an_unknown_id_clears_all() {
    let s = session("05-rewind/tmp/rewind-app/chats/session-2026-07-17T09-01-55555556.jsonl");
    assert_eq!(texts(&s), ["Start over", "Starting over"]);
}

#[test]
fn half_written_last_line_is_skipped_silently() {
    let output =
        parse("06-half-written/tmp/live-app/chats/session-2026-07-17T09-00-66666666.jsonl");
    assert!(output.warnings.is_empty());
    assert_eq!(output.skipped_empty, 0);
    assert_eq!(
        messages(&output.sessions[0]),
        [
            said(User, "Run the tests", "m1", at(0, 1)),
            said(Assistant, "All 42 tests pass.", "m2", at(0, 2)),
        ]
    );
}

#[test]
fn set_messages_replacement_keeps_what_it_drops() {
    let s =
        session("07-set-messages/tmp/compress-app/chats/session-2026-07-17T09-00-77777777.jsonl");
    assert_eq!(
        messages(&s),
        [
            // Dropped by the compression, kept because they were said.
            said(User, "Explain the cache layer", "m1", at(0, 1)),
            said(
                Assistant,
                "It is an LRU in front of the database.",
                "m2",
                at(0, 2)
            ),
            // Kept by it: first position, the replacement's copy.
            said(User, "How big is it?", "m3", at(0, 3)),
            said(Assistant, "1024 entries by default.", "m4", at(0, 4)),
            // Introduced by it: appended in its order.
            said(
                User,
                "<state_snapshot>The user asked about the LRU cache.</state_snapshot>",
                "s1",
                at(0, 5)
            ),
            said(
                Assistant,
                "Got it. Thanks for the additional context!",
                "s2",
                at(0, 5)
            ),
            // Recorded after it.
            said(User, "Make it 4096", "m5", at(0, 6)),
            said(Assistant, "Done: the default is now 4096.", "m6", at(0, 7)),
        ]
    );
}

#[test]
fn types_map_to_roles_and_the_rest_is_ignored() {
    let s = session("08-types/tmp/types-app/chats/session-2026-07-17T09-00-88888888.jsonl");
    assert_eq!(
        messages(&s),
        [
            said(User, "hello", "u1", at(0, 2)),
            said(Assistant, "Hi! What shall we build?", "g1", at(0, 3)),
            said(Assistant, "Written as type model.", "d1", at(0, 8)),
        ]
    );
}

#[test]
fn content_strings_and_parts_give_text_only() {
    let s = session("09-content/tmp/content-app/chats/session-2026-07-17T09-00-99999999.jsonl");
    let referenced = "@notes.md\n--- Content from referenced files ---\nContent from @notes.md:\nbuy milk\n--- End of content ---";
    assert_eq!(
        messages(&s),
        [
            said(User, "A plain string (v0.1 style)", "c1", at(0, 1)),
            // The thought part is skipped, the text parts are joined.
            said(Assistant, "Part one. Part two.", "c2", at(0, 2)),
            // c3 (tool call only) and c4 (functionResponse only) hold no text.
            // content wins over displayContent...
            said(User, referenced, "c5", at(0, 5)),
            // ...which is used only when content has no text.
            said(User, "Only the display copy has text", "c6", at(0, 6)),
            said(Assistant, "A single part object.", "c7", at(0, 7)),
        ]
    );
}

#[test]
fn missing_timestamps_fall_back() {
    let context = common::empty_context();
    let dir = fixture("10-timestamps/tmp/time-app/chats");
    let parse_at = |name: &str, modified_ms: i64| {
        let path = dir.join(name);
        let bytes = std::fs::read(&path).unwrap();
        let output = common::parse_bytes(path.to_str().unwrap(), &bytes, modified_ms, &context);
        output.sessions[0].clone()
    };
    let modified = ms("2026-07-20T12:00:00Z");

    // A message without (or with an unparsable) timestamp takes the session start;
    // without lastUpdated the session ends at its last message.
    let s = parse_at("session-2026-07-17T09-00-aaaa0001.jsonl", modified);
    assert_eq!(
        messages(&s),
        [
            said(User, "No timestamp", "m1", at(0, 0)),
            said(Assistant, "Unparsable timestamp", "m2", at(0, 0)),
            said(User, "With an offset", "m3", at(0, 9)),
        ]
    );
    assert_eq!((s.started_at_ms, s.updated_at_ms), (at(0, 0), at(0, 9)));

    // No startTime: the first message's timestamp; the id takes the file name's minute.
    let s = parse_at("session-2026-07-17T09-00-aaaa0002.jsonl", modified);
    assert_eq!((s.started_at_ms, s.updated_at_ms), (at(0, 20), at(0, 25)));
    assert_eq!(
        s.id.as_str(),
        "aaaa0002-aaaa-4bbb-8ccc-00000000000a-20260717T090000"
    );

    // No time anywhere: the file's modification time; the id takes 8 hex of the name's sha256.
    let s = parse_at("session-undated-aaaa0003.jsonl", modified);
    assert_eq!((s.started_at_ms, s.updated_at_ms), (modified, modified));
    assert_eq!(messages(&s)[0].3, modified);
    assert_eq!(
        s.id.as_str(),
        "aaaa0003-aaaa-4bbb-8ccc-00000000000a-316e2f01"
    );
}

#[test]
fn tool_calls_become_command_and_file_records() {
    let s = session("11-tool-calls/tmp/tools-app/chats/session-2026-07-17T09-00-bbbb1111.jsonl");
    let files: Vec<(&str, FileAction, i64)> = s
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.action, f.timestamp_ms))
        .collect();
    assert_eq!(
        files,
        [
            ("/home/dev/tools-app/Cargo.toml", FileAction::Read, at(0, 3)),
            (
                "/home/dev/tools-app/docs/design.md",
                FileAction::Read,
                at(0, 4)
            ),
            (
                "/home/dev/tools-app/tests/date.rs",
                FileAction::Edit,
                at(0, 11)
            ),
            // No timestamp on the call: its message's.
            (
                "/home/dev/tools-app/src/lib.rs",
                FileAction::Edit,
                at(0, 10)
            ),
        ]
    );
    let commands: Vec<(&str, CommandOrigin, i64)> = s
        .commands
        .iter()
        .map(|c| (c.command.as_str(), c.origin, c.timestamp_ms))
        .collect();
    // The denied `rm` and the cancelled write did not happen.
    assert_eq!(commands, [("cargo test", CommandOrigin::Agent, at(0, 13))]);
    assert_eq!(texts(&s).len(), 3);
}

// ---- ids and duplicates --------------------------------------------------------

#[test]
fn json_and_jsonl_of_one_session_share_an_id_and_jsonl_wins() {
    let json = session("12-json-jsonl/tmp/dedup-app/chats/session-2026-07-17T09-00-cccc1234.json");
    let jsonl =
        session("12-json-jsonl/tmp/dedup-app/chats/session-2026-07-17T09-00-cccc1234.jsonl");
    assert_eq!(json.id, jsonl.id);
    assert_eq!(
        jsonl.id.as_str(),
        "cccc1234-aaaa-4bbb-8ccc-00000000000c-20260717T090000"
    );
    assert_eq!((json.precedence, jsonl.precedence), (1, 2));
    assert!(jsonl.updated_at_ms > json.updated_at_ms);
    assert_eq!(texts(&json).len(), 2);
    assert_eq!(
        texts(&jsonl),
        [
            "Start the migration",
            "Migration started.",
            "Is it finished?",
            "Yes, all tables moved."
        ]
    );
}

#[test]
fn a2a_server_sessions_get_distinct_stable_ids() {
    let first = "13-a2a-server/tmp/agent/chats/session-2026-07-17T09-00-a2a-serv.jsonl";
    let a = session(first);
    let b = session("13-a2a-server/tmp/agent/chats/session-2026-07-17T09-05-a2a-serv.jsonl");
    assert_eq!(
        (a.native_id.as_str(), b.native_id.as_str()),
        ("a2a-server", "a2a-server")
    );
    assert_eq!(a.id.as_str(), "a2a-server-20260717T090000");
    assert_eq!(b.id.as_str(), "a2a-server-20260717T090500");
    // The repeated metadata line moves Gemini's startTime, not deja's id or start.
    assert_eq!(a.started_at_ms, at(0, 0));
    assert_eq!(a.updated_at_ms, at(0, 32));
    // The context message repeated in every snapshot appears once, its latest copy.
    assert_eq!(
        messages(&a),
        [
            said(
                User,
                "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n</session_context>",
                "ctx1",
                at(0, 30)
            ),
            said(User, "Write a haiku about rust", "a1", at(0, 31)),
            said(Assistant, "Red bloom on iron", "a2", at(0, 32)),
        ]
    );
    // Appending another metadata line and snapshot keeps the id.
    let path = fixture(first);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(
        br#"{"sessionId":"a2a-server","projectHash":"h","startTime":"2026-07-17T09:03:00Z","lastUpdated":"2026-07-17T09:03:00Z","kind":"main"}
{"$set":{"messages":[{"id":"a3","timestamp":"2026-07-17T09:03:01Z","type":"user","content":[{"text":"more"}]}]}}
"#,
    );
    let grown = common::parse_bytes(path.to_str().unwrap(), &bytes, 0, &common::empty_context());
    assert_eq!(grown.sessions[0].id, a.id);
    assert_eq!(grown.sessions[0].messages.len(), 4);
}

#[test]
fn pre_030_sibling_subagents_get_distinct_ids() {
    let dir = "14-pre030-siblings/tmp/ec0875d6855897282e255188bac541cf6608a49aa8192184bfac075368af3369/chats";
    let main = session(&format!("{dir}/session-2026-07-17T09-00-dddd1111.json"));
    let sub = session(&format!("{dir}/session-2026-07-17T09-01-dddd1111.json"));
    assert_eq!(main.native_id, sub.native_id);
    assert_eq!(
        main.id.as_str(),
        "dddd1111-aaaa-4bbb-8ccc-00000000000d-20260717T090010"
    );
    assert_eq!(
        sub.id.as_str(),
        "dddd1111-aaaa-4bbb-8ccc-00000000000d-20260717T090105"
    );
}

#[test]
fn nested_subagent_records_its_parent() {
    let chats = "15-nested-subagent/tmp/sub-app/chats";
    let parent = session(&format!("{chats}/session-2026-07-17T09-00-eeee1111.jsonl"));
    let helper = session(&format!(
        "{chats}/eeee1111-2222-4333-8444-555566667777/helper7.jsonl"
    ));
    assert_eq!(
        parent.id.as_str(),
        "eeee1111-2222-4333-8444-555566667777-20260717T090000"
    );
    assert_eq!(opt(&helper.parent_id), Some(parent.id.as_str()));
    assert_eq!(helper.native_id.as_str(), "helper7");
    assert_eq!(helper.id.as_str(), "helper7-20260717T090200");
    assert_eq!(opt(&helper.project.dir), Some("/home/dev/sub-app"));
    // A memory-service folder names no session: recorded as is.
    let skill = session(&format!("{chats}/skill-extraction-0badf00d/skill1.jsonl"));
    assert_eq!(opt(&skill.parent_id), Some("skill-extraction-0badf00d"));
    assert_eq!(opt(&parent.parent_id), None);
}

// ---- project -------------------------------------------------------------------

fn project(relative: &str) -> (Option<String>, Option<String>, Option<String>) {
    let s = session(relative);
    let p = &s.project;
    (
        opt(&p.dir).map(String::from),
        opt(&p.name).map(String::from),
        opt(&p.id).map(String::from),
    )
}

fn some(
    dir: Option<&str>,
    name: Option<&str>,
    id: &str,
) -> (Option<String>, Option<String>, Option<String>) {
    (
        dir.map(String::from),
        name.map(String::from),
        Some(id.to_string()),
    )
}

#[test]
fn project_from_projects_json() {
    assert_eq!(
        project("16-projects-json/tmp/registry-app/chats/session-2026-07-17T09-00-f1600000.jsonl"),
        some(
            Some("/home/dev/registry-app"),
            Some("registry-app"),
            "registry-app"
        )
    );
}

#[test]
fn project_from_project_root_file() {
    assert_eq!(
        project("17-project-root/tmp/rooted-app/chats/session-2026-07-17T09-00-f1700000.jsonl"),
        some(
            Some("/srv/code/Rooted App"),
            Some("Rooted App"),
            "rooted-app"
        )
    );
}

#[test]
fn project_from_a_hash_match() {
    // A hash-named folder: sha256 of a root in projects.json.
    let hash = "1ecde324149502bcde83580d4699e94971661cbe38a590df5841c99c26aed3e9";
    assert_eq!(
        project(&format!(
            "18-project-hash/tmp/{hash}/chats/session-2026-07-17T09-00-f1800000.json"
        )),
        some(Some("/home/dev/hashed-app"), Some("hashed-app"), hash)
    );
    // The projectHash field: sha256 of another folder's .project_root.
    assert_eq!(
        project("18-project-hash/tmp/moved-app/chats/session-2026-07-17T09-00-f1800001.jsonl"),
        some(Some("/srv/elsewhere"), Some("elsewhere"), "moved-app")
    );
}

#[test]
fn unknown_project_is_known_by_its_id() {
    assert_eq!(
        project("19-project-unknown/tmp/lonely-app/chats/session-2026-07-17T09-00-f1900000.jsonl"),
        some(None, Some("lonely-app"), "lonely-app")
    );
    let hash = "a25a698472e8845f65a9cebff9ca27e328eaa86b350c1b72296c0246f854b5d5";
    assert_eq!(
        project(&format!(
            "19-project-unknown/tmp/{hash}/chats/session-2026-07-17T09-00-f1900001.json"
        )),
        some(None, None, hash)
    );
}

// ---- discovery -------------------------------------------------------------------

fn discovered(context: &HostContext) -> Vec<String> {
    let base = fixture("20-discovery");
    let discovery = <GeminiReader as Reader>::discover(context).unwrap();
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
fn discovery_reads_the_home_gemini_folder() {
    let base = fixture("20-discovery");
    let context = common::context(&base.join("home"), &[], "{}");
    assert_eq!(
        discovered(&context),
        [
            "home/.gemini/tmp/home-app/chats/f2000001-aaaa-4bbb-8ccc-000000000020/helper.jsonl",
            "home/.gemini/tmp/home-app/chats/session-2026-07-17T08-00-f2000000.json",
            "home/.gemini/tmp/home-app/chats/session-2026-07-17T09-00-f2000001.jsonl",
        ]
    );
    let discovery = <GeminiReader as Reader>::discover(&context).unwrap();
    let searched: Vec<(String, bool)> = discovery
        .searched
        .iter()
        .map(|s| (s.path.to_string(), s.exists))
        .collect();
    let tmp = base.join("home/.gemini/tmp").to_string_lossy().into_owned();
    assert_eq!(searched, [(tmp, true)]);
}

#[test]
fn discovery_follows_gemini_cli_home() {
    let base = fixture("20-discovery");
    let context = common::context(
        &base.join("home"),
        &[("GEMINI_CLI_HOME", &base.join("cli-home"))],
        "{}",
    );
    assert_eq!(
        discovered(&context),
        ["cli-home/.gemini/tmp/cli-app/chats/session-2026-07-17T09-00-f2000002.jsonl"]
    );
}

#[test]
fn deja_gemini_root_overrides_and_may_name_tmp_itself() {
    let base = fixture("20-discovery");
    let home = base.join("home");
    let cli_home = base.join("cli-home");
    let gemini_like = base.join("deja-root");
    let context = common::context(
        &home,
        &[
            ("GEMINI_CLI_HOME", &cli_home),
            ("DEJA_GEMINI_ROOT", &gemini_like),
        ],
        "{}",
    );
    assert_eq!(
        discovered(&context),
        ["deja-root/tmp/deja-app/chats/session-2026-07-17T09-00-f2000003.jsonl"]
    );
    let context = common::context(&home, &[("DEJA_GEMINI_ROOT", &base.join("bare-tmp"))], "{}");
    assert_eq!(
        discovered(&context),
        ["bare-tmp/bare-app/chats/session-2026-07-17T09-00-f2000004.json"]
    );
}

#[test]
fn config_roots_add_places_minus_excludes() {
    let base = fixture("20-discovery");
    let home = base.join("home");
    let config = r#"{"roots": ["~/../extra"], "exclude": ["scratch-*"]}"#;
    let context = common::context(
        &home,
        &[("DEJA_GEMINI_ROOT", &base.join("deja-root"))],
        config,
    );
    assert_eq!(
        discovered(&context),
        [
            "deja-root/tmp/deja-app/chats/session-2026-07-17T09-00-f2000003.jsonl",
            "home/../extra/tmp/extra-app/chats/session-2026-07-17T09-00-f2000005.jsonl",
        ]
    );
    let bad = common::context(&home, &[], r#"{"roots": "not a list"}"#);
    assert!(<GeminiReader as Reader>::discover(&bad).is_err());
}

#[test]
fn non_session_json_is_ignored_silently() {
    let root = fixture("21-non-session");
    let context = common::context(
        Path::new("/nonexistent-home"),
        &[("DEJA_GEMINI_ROOT", &root)],
        "{}",
    );
    let discovery = <GeminiReader as Reader>::discover(&context).unwrap();
    // Only the chats/session-* files are candidates...
    assert_eq!(discovery.transcripts.len(), 2);
    // ...and no file of the tree, whatever a host hands over, is a session or a warning.
    for file in walk(&root) {
        let output = common::parse_file(&file, &context);
        assert_eq!(output, ParseOutput::default(), "{}", file.display());
    }
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

// ---- resume --------------------------------------------------------------------------

fn resume(native_id: &str, project_dir: Option<&str>, source: Option<&Path>) -> ResumeAdvice {
    let context = common::empty_context();
    let source = source.map(|p| p.to_string_lossy().into_owned());
    let request = ResumeRequest {
        id: RStr::from("deja-id"),
        native_id: RStr::from(native_id),
        project_dir: project_dir.map(RStr::from).into(),
        source_path: source.as_deref().map(RStr::from).into(),
        context: &context,
    };
    <GeminiReader as Reader>::resume(&request).unwrap()
}

fn command(native_id: &str, cwd: Option<&str>, note: &str) -> ResumeAdvice {
    ResumeAdvice::Command {
        argv: ["gemini", "--resume", native_id]
            .map(Into::into)
            .to_vec()
            .into(),
        cwd: cwd.map(Into::into).into(),
        note: note.into(),
    }
}

#[test]
fn resume_runs_in_the_known_project_directory() {
    assert_eq!(
        resume("abc", Some("/work/app"), None),
        command("abc", Some("/work/app"), "")
    );
    // Re-resolved from the transcript when the host does not know it.
    let source =
        fixture("17-project-root/tmp/rooted-app/chats/session-2026-07-17T09-00-f1700000.jsonl");
    assert_eq!(
        resume("f1700000-aaaa-4bbb-8ccc-000000000017", None, Some(&source)),
        command(
            "f1700000-aaaa-4bbb-8ccc-000000000017",
            Some("/srv/code/Rooted App"),
            ""
        )
    );
}

#[test]
fn resume_without_a_known_directory_says_so() {
    let source =
        fixture("19-project-unknown/tmp/lonely-app/chats/session-2026-07-17T09-00-f1900000.jsonl");
    for source in [Some(source.as_path()), None] {
        let ResumeAdvice::Command { argv, cwd, note } = resume("lonely", None, source) else {
            panic!("expected a command");
        };
        assert_eq!(argv.len(), 3);
        assert_eq!(cwd, ROption::RNone);
        assert!(note.contains("unknown"), "{note}");
        assert!(note.contains("project's directory"), "{note}");
    }
}

#[test]
fn resume_refuses_subagents_and_a2a_server_sessions() {
    let chats = fixture("15-nested-subagent/tmp/sub-app/chats");
    let helper = chats.join("eeee1111-2222-4333-8444-555566667777/helper7.jsonl");
    let ResumeAdvice::Refused { message } =
        resume("helper7", Some("/home/dev/sub-app"), Some(&helper))
    else {
        panic!("a subagent cannot be resumed");
    };
    assert!(message.contains("subagent"), "{message}");
    assert!(
        message.contains("eeee1111-2222-4333-8444-555566667777"),
        "{message}"
    );

    let a2a = fixture("13-a2a-server/tmp/agent/chats/session-2026-07-17T09-00-a2a-serv.jsonl");
    let ResumeAdvice::Refused { message } = resume("a2a-server", Some("/srv/agent"), Some(&a2a))
    else {
        panic!("an a2a-server session cannot be resumed");
    };
    assert!(message.contains("a2a-server"), "{message}");
}

// ---- bytes -----------------------------------------------------------------------------

#[test]
fn byte_order_marks_utf16_and_crlf_are_read() {
    let s = session("22-odd-bytes/tmp/bytes-app/chats/session-2026-07-17T09-00-f2200000.jsonl");
    assert_eq!(texts(&s), ["Grüße aus Köln ✓", "Danke!"]);
    let s = session("22-odd-bytes/tmp/bytes-app/chats/session-2026-07-17T09-00-f2200001.json");
    assert_eq!(texts(&s), ["UTF-16 on disk", "Still readable"]);
}

#[test]
fn an_unreadable_legacy_session_file_is_a_warning() {
    let output = parse("23-lfs-pointer/tmp/lfs-app/chats/session-2026-07-17T09-00-f2300000.json");
    assert!(output.sessions.is_empty());
    assert_eq!(output.warnings.len(), 1);
    assert!(
        output.warnings[0].contains("not valid JSON"),
        "{:?}",
        output.warnings
    );
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
        <GeminiReader as Reader>::detect(path.to_str().unwrap(), bytes);
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
    let somewhere = fixture("02-jsonl/tmp/jsonl-app/chats/session-2026-07-17T09-00-22222222.jsonl");
    for len in [0, 1, 2, 3, 7, 64, 1000, 10_000] {
        for _ in 0..10 {
            let len = len + (noise.next() as usize) % 5;
            parse_any(&somewhere, &noise.bytes(len));
        }
    }
    let nasty: Vec<Vec<u8>> = vec![
        "[".repeat(100_000).into_bytes(),
        format!("{}{}", "{\"a\":".repeat(50_000), "1").into_bytes(),
        format!("{{\"sessionId\":\"s\",\"messages\":{}", "[".repeat(10_000)).into_bytes(),
        br#"{"sessionId":"s","startTime":1e999999,"messages":[{"id":"m","timestamp":-99999999999999999999999,"type":"user","content":[{"text":"big"}]}]}"#.to_vec(),
        br#"{"sessionId":"s","startTime":"+275760-09-13T00:00:00.001Z","messages":[{"id":"m","type":"user","content":"x"}]}"#.to_vec(),
        br#"{"sessionId":"\ud800","messages":[{"id":"\udfff","type":"user","content":"\u0000"}]}"#.to_vec(),
        b"\xEF\xBB\xBF\xFF\xFE\x00{\"sessionId\":\"s\"\x80\x81}".to_vec(),
        b"\xFF\xFE{\x00".to_vec(),
        b"{\"$rewindTo\":\"x\"}\n{\"$set\":{\"messages\":[1,null,{\"id\":{}}]}}\n{\"sessionId\":5}".to_vec(),
    ];
    for bytes in &nasty {
        parse_any(&somewhere, bytes);
    }
}

#[test]
fn detect_is_sure_of_session_files_only() {
    let file = fixture("02-jsonl/tmp/jsonl-app/chats/session-2026-07-17T09-00-22222222.jsonl");
    let head = std::fs::read(&file).unwrap();
    let detect = |path: &str, head: &[u8]| <GeminiReader as Reader>::detect(path, head);
    assert_eq!(detect(file.to_str().unwrap(), &head), 100);
    assert_eq!(detect("/x/chats/parent/helper.jsonl", &head), 60);
    assert_eq!(detect("C:\\g\\chats\\session-a.json", &head), 100);
    assert_eq!(detect("/x/session-a.md", &head), 0);
    assert_eq!(detect("/x/session-a.json", b"{\"history\":[]}"), 0);
}
