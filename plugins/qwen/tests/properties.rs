//! Properties of the Qwen Code reader over generated input: any bytes parse
//! without panicking, parsing is deterministic, and appending records the way
//! qwen-code does (each a child of the previous one, or a side record such as
//! a re-anchored title) keeps the session's id and every earlier message
//! unchanged. Only a rewind, which re-roots the chain on purpose, removes
//! messages; it is not appended here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use deja_plugin_api::{HostContext, ParseOutput, ParseRequest, Reader};
use deja_plugin_qwen::QwenReader;
use proptest::prelude::*;
use serde_json::json;

const PATH: &str =
    "/home/dev/.qwen/projects/-home-dev-app/chats/0f18b3b3-7342-4d89-826c-b78fc1922f6c.jsonl";
const SESSION: &str = "0f18b3b3-7342-4d89-826c-b78fc1922f6c";

fn parse(bytes: &[u8]) -> ParseOutput {
    let context = HostContext {
        home: "/home/dev".into(),
        env: Vec::new().into(),
        config_json: "{}".into(),
    };
    let request = ParseRequest {
        path: PATH.into(),
        bytes: bytes.into(),
        modified_ms: 1_767_225_600_000,
        context: &context,
    };
    QwenReader::parse(&request).expect("parse never fails on content")
}

/// What a generated line is; uuids and parents are filled in when written.
#[derive(Debug, Clone)]
enum Line {
    User(String),
    Assistant(String, bool),
    ToolResult,
    Telemetry,
    Title(String),
    Garbage,
    Blank,
}

fn line() -> impl Strategy<Value = Line> {
    let text = "[a-zA-Z0-9 .,!?]{1,40}";
    prop_oneof![
        text.prop_map(Line::User),
        (text, any::<bool>()).prop_map(|(t, call)| Line::Assistant(t, call)),
        Just(Line::ToolResult),
        Just(Line::Telemetry),
        text.prop_map(Line::Title),
        Just(Line::Garbage),
        Just(Line::Blank),
    ]
}

/// Writes `lines` as qwen-code would, continuing the chain after `tail`
/// (the uuid of the last record on it) with uuids numbered from `next`.
fn write(lines: &[Line], tail: &mut Option<String>, next: &mut u32) -> String {
    let mut out = String::new();
    for line in lines {
        let uuid = format!("r{next}");
        *next += 1;
        let base = |kind: &str| {
            json!({"uuid": uuid, "parentUuid": tail, "sessionId": SESSION,
                   "timestamp": "2026-07-17T09:00:00Z", "type": kind,
                   "cwd": "/home/dev/app", "version": "0.14.0"})
        };
        let (value, on_chain) = match line {
            Line::User(t) => {
                let mut v = base("user");
                v["message"] = json!({"role": "user", "parts": [{"text": t}]});
                (v, true)
            }
            Line::Assistant(t, call) => {
                let mut v = base("assistant");
                let mut parts = vec![json!({"text": "hmm", "thought": true}), json!({"text": t})];
                if *call {
                    parts.push(json!({"functionCall": {"id": format!("c{next}"), "name": "run_shell_command", "args": {"command": "ls"}}}));
                }
                v["message"] = json!({"role": "model", "parts": parts});
                (v, true)
            }
            Line::ToolResult => {
                let mut v = base("tool_result");
                v["message"] = json!({"role": "user", "parts": [{"functionResponse": {"id": "c0", "response": {"output": "ok"}}}]});
                (v, true)
            }
            Line::Telemetry => {
                let mut v = base("system");
                v["subtype"] = json!("ui_telemetry");
                v["systemPayload"] = json!({"uiEvent": {"event.name": "qwen-code.api_response"}});
                (v, true)
            }
            // A re-anchored title: a child of the tail, but not the new tail.
            Line::Title(t) => {
                let mut v = base("system");
                v["subtype"] = json!("custom_title");
                v["systemPayload"] = json!({"customTitle": t});
                (v, false)
            }
            Line::Garbage => {
                out.push_str("{\"uuid\": \"half\n");
                continue;
            }
            Line::Blank => {
                out.push('\n');
                continue;
            }
        };
        out.push_str(&value.to_string());
        out.push('\n');
        if on_chain {
            *tail = Some(uuid);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn any_bytes_parse_and_parsing_is_deterministic(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        prop_assert_eq!(parse(&bytes), parse(&bytes));
    }

    #[test]
    fn any_records_parse_deterministically(lines in prop::collection::vec(line(), 0..30)) {
        let text = write(&lines, &mut None, &mut 0);
        prop_assert_eq!(parse(text.as_bytes()), parse(text.as_bytes()));
    }

    #[test]
    fn appending_records_keeps_the_id_and_every_earlier_message(
        before in prop::collection::vec(line(), 0..20),
        added in prop::collection::vec(line(), 1..10),
        torn in any::<bool>(),
    ) {
        let (mut tail, mut next) = (None, 0);
        let old = write(&before, &mut tail, &mut next);
        let mut grown = old.clone();
        grown.push_str(&write(&added, &mut tail, &mut next));
        // A half-written last line changes nothing either.
        if torn {
            grown.push_str("{\"uuid\":\"r999\",\"parentUuid\":");
        }
        let a = parse(old.as_bytes());
        let b = parse(grown.as_bytes());
        if let Some(s) = a.sessions.first() {
            prop_assert_eq!(b.sessions.len(), 1);
            let g = &b.sessions[0];
            prop_assert_eq!(&g.id, &s.id);
            prop_assert_eq!(g.started_at_ms, s.started_at_ms);
            prop_assert!(g.messages.len() >= s.messages.len());
            prop_assert_eq!(&g.messages.as_slice()[..s.messages.len()], s.messages.as_slice());
            prop_assert_eq!(&g.commands.as_slice()[..s.commands.len()], s.commands.as_slice());
        }
    }
}

/// The append property above compares what the shorter file read with what
/// the longer one reads: it proves something only for generated chats that
/// hold a session with messages. At least a quarter of them must.
#[test]
fn generated_chats_often_hold_a_session_the_append_property_can_check() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let strategy = prop::collection::vec(line(), 0..20);
    let mut runner = TestRunner::deterministic();
    let mut with_messages = 0;
    for _ in 0..200 {
        let generated = strategy.new_tree(&mut runner).unwrap().current();
        let output = parse(write(&generated, &mut None, &mut 0).as_bytes());
        if output.sessions.iter().any(|s| !s.messages.is_empty()) {
            with_messages += 1;
        }
    }
    println!("{with_messages} of 200 generated chats hold a session with messages");
    assert!(
        with_messages >= 50,
        "only {with_messages} of 200 generated chats hold a session with messages"
    );
}
