//! Properties of the Claude Code reader over generated input: any bytes
//! parse without panicking, parsing is deterministic, and appending records
//! to a transcript (as Claude Code does while a session runs) never changes
//! the session's id or the messages already read; appending more of the
//! reply in progress only extends the last message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use deja_plugin_api::{HostContext, ParseOutput, ParseRequest, Reader};
use deja_plugin_claude::ClaudeReader;
use proptest::prelude::*;
use serde_json::json;

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
    ClaudeReader::parse(&request).expect("parse never fails on content")
}

const SESSION: &str =
    "/home/dev/.claude/projects/-home-dev-app/11111111-2222-4333-8444-555555555555.jsonl";
const SUBAGENT: &str = "/home/dev/.claude/projects/-home-dev-app/11111111-2222-4333-8444-555555555555/subagents/agent-a1.jsonl";

fn stamp(i: usize) -> String {
    format!("2026-07-17T09:{:02}:{:02}Z", (i / 60) % 60, i % 60)
}

/// One generated line, given its position `i` (uuids are `r<i>`, so a few
/// generated ones repeat on purpose through `copy`).
fn line(kind: u8, i: usize, text: &str, pick: usize) -> String {
    let uuid = format!("r{i}");
    let parent = (i > 0).then(|| format!("r{}", i - 1));
    let base = |extra: serde_json::Value| {
        let mut record = json!({
            "parentUuid": parent, "isSidechain": false, "userType": "external",
            "cwd": "/home/dev/app", "sessionId": "11111111-2222-4333-8444-555555555555",
            "uuid": uuid, "timestamp": stamp(i)
        });
        if let (Some(map), serde_json::Value::Object(extra)) = (record.as_object_mut(), extra) {
            map.extend(extra);
        }
        record.to_string()
    };
    match kind % 12 {
        0 | 1 => base(json!({"type": "user", "message": {"role": "user", "content": text}})),
        2 | 3 => base(json!({"type": "assistant", "message": {
            "id": format!("msg_{}", pick % 4), "model": "claude",
            "content": [{"type": "text", "text": text}]}})),
        4 => base(json!({"type": "assistant", "message": {
            "id": format!("msg_{}", pick % 4), "model": "claude",
            "content": [{"type": "tool_use", "id": format!("t{}", pick % 3), "name": "Bash",
                         "input": {"command": text}}]}})),
        5 => base(
            json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("t{}", pick % 3), "content": text,
             "is_error": pick.is_multiple_of(2)}]}}),
        ),
        6 => base(
            json!({"type": "user", "isMeta": true, "message": {"role": "user", "content": text}}),
        ),
        7 => {
            let operation = ["enqueue", "dequeue", "remove", "popAll"][pick % 4];
            json!({"type": "queue-operation", "operation": operation, "content": text,
                   "timestamp": stamp(i)})
            .to_string()
        }
        8 => base(json!({"type": "system", "subtype": "turn_duration"})),
        9 => {
            json!({"type": "summary", "summary": text, "leafUuid": format!("r{pick}")}).to_string()
        }
        // A copy of an earlier record (a resume): same uuid.
        10 => base(
            json!({"type": "user", "uuid": format!("r{}", pick % (i + 1)),
                          "message": {"role": "user", "content": text}}),
        ),
        _ => ["", "{\"type\":\"user\",\"mess", "not json", "[]"][pick % 4].to_string(),
    }
}

fn transcript() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec((any::<u8>(), "[a-z][a-z ]{0,15}", 0usize..8), 0..30).prop_map(|lines| {
        lines
            .into_iter()
            .enumerate()
            .map(|(i, (kind, text, pick))| line(kind, i, &text, pick))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn any_bytes_parse_and_parsing_is_deterministic(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        for path in [SESSION, SUBAGENT] {
            prop_assert_eq!(parse(path, &bytes), parse(path, &bytes));
            let _ = ClaudeReader::detect(path, &bytes);
        }
    }

    #[test]
    fn generated_transcripts_parse_deterministically(lines in transcript()) {
        let text = lines.join("\n");
        prop_assert_eq!(parse(SESSION, text.as_bytes()), parse(SESSION, text.as_bytes()));
    }

    #[test]
    fn appending_records_keeps_the_id_and_every_message(
        before in transcript(),
        added in prop::collection::vec((any::<bool>(), "[a-z][a-z ]{0,15}"), 1..6),
    ) {
        let mut old = before.join("\n");
        old.push('\n');
        let mut grown = old.clone();
        for (k, (user, text)) in added.iter().enumerate() {
            let i = before.len() + k;
            // New records: fresh uuids and a fresh reply id each.
            let record = if *user {
                json!({"type": "user", "uuid": format!("new{k}"), "parentUuid": format!("r{}", i.saturating_sub(1)),
                       "timestamp": stamp(i), "cwd": "/home/dev/app",
                       "message": {"role": "user", "content": text}})
            } else {
                json!({"type": "assistant", "uuid": format!("new{k}"), "timestamp": stamp(i),
                       "message": {"id": format!("msg_new{k}"), "content": [{"type": "text", "text": text}]}})
            };
            grown.push_str(&record.to_string());
            grown.push('\n');
        }
        let a = parse(SESSION, old.as_bytes());
        let b = parse(SESSION, grown.as_bytes());
        prop_assert!(b.sessions.len() >= a.sessions.len());
        for (s, g) in a.sessions.iter().zip(b.sessions.iter()) {
            prop_assert_eq!(&g.id, &s.id);
            prop_assert_eq!(&g.native_id, &s.native_id);
            prop_assert_eq!(g.started_at_ms, s.started_at_ms);
            prop_assert!(g.messages.len() >= s.messages.len());
            prop_assert_eq!(&g.messages.as_slice()[..s.messages.len()], s.messages.as_slice());
        }
    }

    #[test]
    fn appending_more_of_the_reply_in_progress_extends_only_the_last_message(
        before in transcript(),
        first in "[a-z][a-z ]{0,15}",
        more in "[A-Z][a-z ]{0,15}",
    ) {
        let reply = |uuid: &str, text: &str| json!({"type": "assistant", "uuid": uuid,
            "timestamp": "2026-07-17T10:00:00Z",
            "message": {"id": "msg_live", "content": [{"type": "text", "text": text}]}}).to_string();
        let old = format!("{}\n{}\n", before.join("\n"), reply("live1", &first));
        let grown = format!("{old}{}\n", reply("live2", &more));
        let a = parse(SESSION, old.as_bytes());
        let b = parse(SESSION, grown.as_bytes());
        prop_assert_eq!(a.sessions.len(), 1);
        let (s, g) = (&a.sessions[0], &b.sessions[0]);
        prop_assert_eq!(&g.id, &s.id);
        prop_assert_eq!(g.messages.len(), s.messages.len());
        let n = s.messages.len();
        prop_assert_eq!(&g.messages.as_slice()[..n - 1], &s.messages.as_slice()[..n - 1]);
        let last = &g.messages[n - 1];
        prop_assert!(last.text.starts_with(s.messages[n - 1].text.as_str()));
        prop_assert!(last.text.ends_with(more.trim()));
    }
}

/// The append property above compares what the shorter file read with what
/// the longer one reads: it proves something only for generated transcripts that
/// hold a session with messages. At least a quarter of them must.
#[test]
fn generated_transcripts_often_hold_a_session_the_append_property_can_check() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let strategy = transcript();
    let mut runner = TestRunner::deterministic();
    let mut with_messages = 0;
    for _ in 0..200 {
        let generated = strategy.new_tree(&mut runner).unwrap().current();
        let output = parse(SESSION, format!("{}\n", generated.join("\n")).as_bytes());
        if output.sessions.iter().any(|s| !s.messages.is_empty()) {
            with_messages += 1;
        }
    }
    println!("{with_messages} of 200 generated transcripts hold a session with messages");
    assert!(
        with_messages >= 50,
        "only {with_messages} of 200 generated transcripts hold a session with messages"
    );
}
