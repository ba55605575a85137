//! Properties of the Gemini CLI reader over generated input: any bytes (as
//! JSON or JSONL) parse without panicking, parsing is deterministic, and
//! appending message records to a JSONL recording keeps the session's id and
//! never loses a message (only `$rewindTo` deletes).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use deja_plugin_api::{HostContext, ParseOutput, ParseRequest, Reader};
use deja_plugin_gemini::GeminiReader;
use proptest::prelude::*;

fn parse(path: &str, bytes: &[u8]) -> ParseOutput {
    let context = HostContext {
        home: "/home/dev".into(),
        env: Vec::new().into(),
        config_json: "{}".into(),
    };
    let request = ParseRequest {
        path: path.into(),
        bytes: bytes.into(),
        modified_ms: 1_767_225_600_000,
        context: &context,
    };
    GeminiReader::parse(&request).expect("parse never fails on content")
}

const JSONL: &str = "/home/dev/.gemini/tmp/app/chats/session-2026-07-17T09-00-0f18b3b3.jsonl";
const JSON: &str = "/home/dev/.gemini/tmp/app/chats/session-2026-07-17T09-00-0f18b3b3.json";

fn record() -> impl Strategy<Value = String> {
    let text = "[a-zA-Z0-9 .,!?]{1,40}";
    prop_oneof![
        (0u32..30, text, any::<bool>()).prop_map(|(i, t, user)| {
            let (kind, content) = if user {
                ("user", serde_json::json!([{ "text": t }]))
            } else {
                ("gemini", serde_json::json!(t))
            };
            serde_json::json!({"id": format!("m{i}"), "timestamp": "2026-07-17T09:00:01Z", "type": kind, "content": content}).to_string()
        }),
        Just(r#"{"$set":{"lastUpdated":"2026-07-17T09:05:00Z"}}"#.to_string()),
        (0u32..30).prop_map(|i| format!(r#"{{"$rewindTo":"m{i}"}}"#)),
        Just(r#"{"type":"info","id":"i1","content":"note"}"#.to_string()),
        Just("{\"half\": ".to_string()),
        Just(String::new()),
    ]
}

const HEAD: &str = r#"{"sessionId":"0f18b3b3-7342-4d89-826c-b78fc1922f6c","projectHash":"abc","startTime":"2026-07-17T09:00:00Z","lastUpdated":"2026-07-17T09:00:00Z","kind":"main"}"#;

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn any_bytes_parse_and_parsing_is_deterministic(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        for path in [JSONL, JSON] {
            prop_assert_eq!(parse(path, &bytes), parse(path, &bytes));
        }
    }

    #[test]
    fn appending_messages_keeps_the_id_and_every_message(
        before in prop::collection::vec(record(), 0..20),
        added in prop::collection::vec((0u32..1000, "[a-z][a-z ]{0,19}"), 1..5),
    ) {
        let old = format!("{HEAD}\n{}\n", before.join("\n"));
        let mut grown = old.clone();
        for (i, t) in &added {
            grown.push_str(&serde_json::json!({"id": format!("new{i}"), "timestamp": "2026-07-17T09:10:00Z", "type": "user", "content": [{"text": t}]}).to_string());
            grown.push('\n');
        }
        let a = parse(JSONL, old.as_bytes());
        let b = parse(JSONL, grown.as_bytes());
        prop_assert_eq!(b.sessions.len(), 1);
        if let Some(s) = a.sessions.first() {
            let g = &b.sessions[0];
            prop_assert_eq!(&g.id, &s.id);
            // Every message of the shorter file is still there, in order.
            prop_assert!(g.messages.len() >= s.messages.len());
            prop_assert_eq!(&g.messages.as_slice()[..s.messages.len()], s.messages.as_slice());
        }
    }
}

/// The append property above compares what the shorter file read with what
/// the longer one reads: it proves something only for generated recordings that
/// hold a session with messages. At least a quarter of them must.
#[test]
fn generated_recordings_often_hold_a_session_the_append_property_can_check() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let strategy = prop::collection::vec(record(), 0..20);
    let mut runner = TestRunner::deterministic();
    let mut with_messages = 0;
    for _ in 0..200 {
        let generated = strategy.new_tree(&mut runner).unwrap().current();
        let output = parse(
            JSONL,
            format!("{HEAD}\n{}\n", generated.join("\n")).as_bytes(),
        );
        if output.sessions.iter().any(|s| !s.messages.is_empty()) {
            with_messages += 1;
        }
    }
    println!("{with_messages} of 200 generated recordings hold a session with messages");
    assert!(
        with_messages >= 50,
        "only {with_messages} of 200 generated recordings hold a session with messages"
    );
}
