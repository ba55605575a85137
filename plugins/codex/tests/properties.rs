//! Properties of the Codex reader over generated input: any bytes parse
//! without panicking, parsing is deterministic, and a rollout that grows (by
//! whole records, or cut at any byte as a file Codex is still writing) never
//! changes its id or the messages, commands and files already read.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use deja_plugin_api::{HostContext, ParseOutput, ParseRequest, Reader};
use deja_plugin_codex::CodexReader;
use proptest::prelude::*;
use serde_json::json;

const PATH: &str = "/home/dev/.codex/sessions/2026/07/17/rollout-2026-07-17T11-00-00-019f0000-0000-7000-8000-000000000001.jsonl";
const OTHER: &str = "/tmp/copy.jsonl";

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
    CodexReader::parse(&request).expect("parse never fails on content")
}

fn line(kind: &str, payload: serde_json::Value, second: u32) -> String {
    json!({"timestamp": format!("2026-07-17T09:00:{:02}.000Z", second % 60), "type": kind, "payload": payload}).to_string()
}

/// One rollout line, in Codex's shapes (including duplicates and context).
fn record() -> impl Strategy<Value = String> {
    let text = "[a-zA-Z0-9 .,!?]{1,30}";
    let words = prop_oneof![
        Just("A".to_string()),
        Just("ok".to_string()),
        text.prop_map(String::from)
    ];
    prop_oneof![
        (words.clone(), 0u32..60).prop_map(|(t, s)| line("response_item", json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]}), s)),
        (words.clone(), 0u32..60).prop_map(|(t, s)| line("event_msg", json!({"type": "user_message", "message": t, "images": []}), s)),
        (words.clone(), 0u32..60).prop_map(|(t, s)| line("event_msg", json!({"type": "agent_message", "message": t}), s)),
        (words.clone(), 0u32..60).prop_map(|(t, s)| line("response_item", json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": t}]}), s)),
        (words.clone(), 0u32..60).prop_map(|(t, s)| line("event_msg", json!({"type": "item_completed", "item": {"type": "AgentMessage", "content": [{"type": "Text", "text": t}]}}), s)),
        (words, 0u32..60).prop_map(|(t, s)| line("response_item", json!({"type": "function_call", "name": "shell_command", "arguments": json!({"command": format!("cat {t}")}).to_string()}), s)),
        (0u32..60).prop_map(|s| line("response_item", json!({"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch\n*** Add File: a.md\n+x\n*** End Patch"}), s)),
        (0u32..60).prop_map(|s| line("response_item", json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>"}]}), s)),
        (0u32..60).prop_map(|s| line("turn_context", json!({"cwd": "/home/dev/app"}), s)),
        Just(line("event_msg", json!({"type": "entered_review_mode"}), 1)),
        Just(line("event_msg", json!({"type": "exited_review_mode"}), 2)),
        Just(line("event_msg", json!({"type": "token_count", "info": null}), 3)),
        (0u32..3).prop_map(|n| line("session_meta", json!({"id": format!("019f0000-0000-7000-8000-00000000009{n}"), "cwd": format!("/other/{n}")}), 4)),
        Just(r#"{"id":"019f0000-0000-7000-8000-000000000077","timestamp":"2026-07-17T09:00:05.000Z","instructions":null}"#.to_string()),
        Just("{\"record_type\":\"state\"}".to_string()),
        Just(String::new()),
    ]
}

const META: &str = r#"{"timestamp":"2026-07-17T09:00:00.000Z","type":"session_meta","payload":{"id":"019f0000-0000-7000-8000-000000000001","cwd":"/home/dev/app"}}"#;

fn rollout(records: &[String]) -> String {
    headed(true, records)
}

/// The records, after the session_meta line when `header`.
fn headed(header: bool, records: &[String]) -> String {
    let mut text = if header {
        format!("{META}\n")
    } else {
        String::new()
    };
    for r in records {
        text.push_str(r);
        text.push('\n');
    }
    text
}

/// Whether everything `before` read is where `after` has it.
fn is_prefix(before: &ParseOutput, after: &ParseOutput) -> Result<(), TestCaseError> {
    if let Some(b) = before.sessions.first() {
        prop_assert_eq!(after.sessions.len(), 1);
        let a = &after.sessions[0];
        prop_assert_eq!(&a.id, &b.id);
        prop_assert_eq!(&a.native_id, &b.native_id);
        prop_assert_eq!(a.started_at_ms, b.started_at_ms);
        prop_assert!(a.messages.len() >= b.messages.len());
        prop_assert_eq!(
            &a.messages.as_slice()[..b.messages.len()],
            b.messages.as_slice()
        );
        prop_assert_eq!(
            &a.commands.as_slice()[..b.commands.len()],
            b.commands.as_slice()
        );
        prop_assert_eq!(&a.files.as_slice()[..b.files.len()], b.files.as_slice());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn any_bytes_parse_and_parsing_is_deterministic(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        for path in [PATH, OTHER] {
            prop_assert_eq!(parse(path, &bytes), parse(path, &bytes));
            let _ = CodexReader::detect(path, &bytes);
        }
    }

    #[test]
    fn any_records_parse_deterministically(records in prop::collection::vec(record(), 0..30)) {
        let text = rollout(&records);
        prop_assert_eq!(parse(PATH, text.as_bytes()), parse(PATH, text.as_bytes()));
    }

    #[test]
    fn appending_records_keeps_what_was_read(
        before in prop::collection::vec(record(), 0..25),
        added in prop::collection::vec(record(), 1..10),
    ) {
        let old = rollout(&before);
        let mut all = before.clone();
        all.extend(added);
        let grown = rollout(&all);
        is_prefix(&parse(PATH, old.as_bytes()), &parse(PATH, grown.as_bytes()))?;
    }

    #[test]
    fn a_file_cut_anywhere_reads_as_a_prefix(
        header in any::<bool>(),
        records in prop::collection::vec(record(), 1..20),
        cut in any::<prop::sample::Index>(),
        path in prop_oneof![Just(PATH), Just(OTHER)],
    ) {
        let full = headed(header, &records);
        let end = cut.index(full.len() + 1);
        let part = &full.as_bytes()[..end];
        is_prefix(&parse(path, part), &parse(path, full.as_bytes()))?;
    }
}

/// The append property above compares what the shorter file read with what
/// the longer one reads: it proves something only for generated rollouts that
/// hold a session with messages. At least a quarter of them must.
#[test]
fn generated_rollouts_often_hold_a_session_the_append_property_can_check() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let strategy = prop::collection::vec(record(), 0..25);
    let mut runner = TestRunner::deterministic();
    let mut with_messages = 0;
    for _ in 0..200 {
        let generated = strategy.new_tree(&mut runner).unwrap().current();
        let output = parse(PATH, rollout(&generated).as_bytes());
        if output.sessions.iter().any(|s| !s.messages.is_empty()) {
            with_messages += 1;
        }
    }
    println!("{with_messages} of 200 generated rollouts hold a session with messages");
    assert!(
        with_messages >= 50,
        "only {with_messages} of 200 generated rollouts hold a session with messages"
    );
}
