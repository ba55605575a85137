//! Chat files whose records do not chain: records with Qwen Code's fields
//! (`chatRecordingService.ts`: `sessionId`, `timestamp`, `type`, `cwd`,
//! `message.parts`) but without some of `uuid` and `parentUuid`, as tools
//! that export or convert sessions write them. They read in the order of
//! their lines; a file with text but no record says why it gave nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use deja_plugin_api::{ParseOutput, Role, Session};
use serde_json::{json, Value};

const SID: &str = "5e55a0b1-aaaa-4bbb-8ccc-0000000000aa";
const PATH: &str =
    "/h/.qwen/projects/-home-dev-app/chats/5e55a0b1-aaaa-4bbb-8ccc-0000000000aa.jsonl";

fn parse(lines: &[Value]) -> ParseOutput {
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    common::parse_bytes(
        PATH,
        text.join("\n").as_bytes(),
        7,
        &common::empty_context(),
    )
}

/// A record as Qwen Code writes one, less the fields named in `without`.
fn record(n: u32, kind: &str, text: &str, without: &[&str]) -> Value {
    let role = if kind == "user" { "user" } else { "model" };
    let mut v = json!({
        "uuid": format!("u{n}"), "parentUuid": if n > 1 { Value::from(format!("u{}", n - 1)) } else { Value::Null },
        "sessionId": SID, "timestamp": format!("2026-07-17T09:00:0{n}.000Z"), "type": kind,
        "cwd": "/home/dev/app", "version": "0.14.0",
        "message": {"role": role, "parts": [{"text": text}]},
    });
    for key in without {
        v.as_object_mut().unwrap().remove(*key);
    }
    v
}

fn texts(s: &Session) -> Vec<(Role, &str)> {
    s.messages
        .iter()
        .map(|m| (m.role, m.text.as_str()))
        .collect()
}

fn one(out: &ParseOutput) -> &Session {
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert_eq!(out.sessions.len(), 1, "{out:#?}");
    &out.sessions[0]
}

const CONVERSATION: [(&str, &str); 4] = [
    ("user", "Why is the cache cold?"),
    ("assistant", "It is cleared on every deploy."),
    ("user", "Keep it then"),
    ("assistant", "Done: the deploy keeps it."),
];

fn expected() -> Vec<(Role, &'static str)> {
    CONVERSATION
        .iter()
        .map(|(k, t)| {
            (
                if *k == "user" {
                    Role::User
                } else {
                    Role::Assistant
                },
                *t,
            )
        })
        .collect()
}

#[test]
fn records_without_uuid_or_parent_read_in_line_order_in_their_session() {
    let lines: Vec<Value> = (1..)
        .zip(CONVERSATION)
        .map(|(n, (k, t))| record(n, k, t, &["uuid", "parentUuid"]))
        .collect();
    let out = parse(&lines);
    let s = one(&out);
    // Hand count: four records, four messages, in the file's order.
    assert_eq!(texts(s), expected());
    assert_eq!(
        s.id.as_str(),
        SID,
        "the records' session, not the file's name"
    );
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()).into_option(),
        Some("/home/dev/app")
    );
}

#[test]
fn records_with_uuids_but_no_parents_read_in_line_order() {
    let lines: Vec<Value> = (1..)
        .zip(CONVERSATION)
        .map(|(n, (k, t))| record(n, k, t, &["parentUuid"]))
        .collect();
    assert_eq!(texts(one(&parse(&lines))), expected());
}

#[test]
fn records_without_uuids_whose_parent_is_null_read_in_line_order() {
    let lines: Vec<Value> = (1..)
        .zip(CONVERSATION)
        .map(|(n, (k, t))| {
            let mut v = record(n, k, t, &["uuid"]);
            v["parentUuid"] = Value::Null;
            v
        })
        .collect();
    assert_eq!(texts(one(&parse(&lines))), expected());
}

#[test]
fn a_file_with_text_but_no_record_says_why_it_gave_nothing() {
    let lines = [
        json!({"event": "start", "session": SID}),
        json!({"type": "user", "text": "no parts"}),
    ];
    let out = parse(&lines);
    assert!(out.sessions.is_empty());
    assert_eq!(out.skipped_empty, 0);
    assert_eq!(out.warnings.len(), 1, "{out:?}");
    assert!(
        out.warnings[0].starts_with("none of its 2 line(s) is a Qwen Code chat record"),
        "{}",
        out.warnings[0]
    );
    // An empty file (one being created) is nothing, without a word.
    let empty = common::parse_bytes(PATH, b"\n\n", 7, &common::empty_context());
    assert_eq!(empty, ParseOutput::default());
}
