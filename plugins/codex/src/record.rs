//! One rollout line, whatever its generation, as the few things deja reads.
//!
//! - Envelope lines (from about September 2025) are `{timestamp, type, payload}`,
//!   sometimes with an `ordinal` (2026-09): `type` is `session_meta`,
//!   `turn_context`, `response_item`, `event_msg`, `compacted`, `world_state`, ...
//! - Legacy lines (until about September 2025) have no envelope: the first is a
//!   header `{id, timestamp, instructions, git}`, the rest bare response items
//!   and `{"record_type": "state"}` markers, none with a timestamp.
//!
//! Everything deja does not use (reasoning, tool outputs, token counts,
//! snapshots, compaction copies of earlier messages, ...) becomes [`Record::Other`].

use serde_json::{Map, Value};

use crate::time;

/// A line's timestamp and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The line's own timestamp (envelope lines), or the header's (legacy).
    pub timestamp_ms: Option<i64>,
    /// What it holds.
    pub record: Record,
}

/// What a line holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// `session_meta`, or the legacy header.
    Meta(Meta),
    /// `turn_context`: the settings of a turn.
    TurnContext {
        /// The turn's working directory.
        cwd: Option<String>,
    },
    /// A `response_item` (or a legacy bare item).
    Item(Item),
    /// An `event_msg`.
    Event(Event),
    /// Anything else.
    Other,
}

/// A session's metadata line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// `id`: this rollout's thread.
    pub id: Option<String>,
    /// `session_id`: the root thread (2026+), shared by forks and sub-agents.
    pub session_id: Option<String>,
    /// `forked_from_id`.
    pub forked_from_id: Option<String>,
    /// `parent_thread_id`, at the top level or in a spawned sub-agent's `source`.
    pub parent_thread_id: Option<String>,
    /// Whether `source` names a sub-agent (a review, a spawned thread, ...).
    pub subagent: bool,
    /// `cwd`.
    pub cwd: Option<String>,
    /// The payload's own `timestamp`.
    pub timestamp_ms: Option<i64>,
    /// Whether this is a legacy header line.
    pub legacy: bool,
}

/// A response item.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// `message`.
    Message {
        /// `user`, `assistant`, `developer`, `system`.
        role: String,
        /// Its content parts.
        parts: Vec<Part>,
    },
    /// `function_call`: `name` and `arguments` (a JSON string).
    FunctionCall {
        /// The tool's name.
        name: String,
        /// The arguments, parsed when they are a JSON object.
        arguments: Value,
    },
    /// `custom_tool_call`: `name` and free-form `input` (e.g. an `apply_patch` patch).
    CustomToolCall {
        /// The tool's name.
        name: String,
        /// Its input.
        input: String,
    },
    /// `local_shell_call`: a command line as argv.
    LocalShellCall {
        /// The argv.
        command: Vec<String>,
        /// `working_directory`.
        workdir: Option<String>,
    },
    /// Any other item (reasoning, outputs, snapshots, searches, inter-agent messages, ...).
    Other,
}

/// A content part of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// `input_text` or `output_text` (or a bare `text`).
    Text(String),
    /// `input_image` and anything else without text.
    Other,
}

/// An event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `user_message` (`kind` is set by 2025 versions: `plain`, `user_instructions`, ...).
    UserMessage {
        /// What the person sent.
        text: String,
        /// Its kind, when recorded.
        kind: Option<String>,
    },
    /// `agent_message`.
    AgentMessage {
        /// What the agent said.
        text: String,
    },
    /// `item_completed` with a `UserMessage` item (2026-09).
    UserItem {
        /// Its text.
        text: String,
    },
    /// `item_completed` with an `AgentMessage` item (2026-09).
    AgentItem {
        /// Its text.
        text: String,
    },
    /// `thread_name_updated`.
    ThreadName(String),
    /// `entered_review_mode`.
    EnteredReview,
    /// `exited_review_mode`.
    ExitedReview,
    /// Any other event.
    Other,
}

/// Classifies one JSON object. `first` says whether it is the file's first
/// object (where a legacy header can be).
pub fn classify(object: &Map<String, Value>, first: bool) -> Line {
    let envelope_payload = object.get("payload").and_then(Value::as_object);
    let kind = str_of(object, "type");
    match (kind, envelope_payload) {
        (Some(kind), Some(payload)) => Line {
            timestamp_ms: time::parse_ms(object.get("timestamp")),
            record: envelope(kind, payload),
        },
        _ => Line {
            timestamp_ms: None,
            record: legacy(object, first),
        },
    }
}

fn envelope(kind: &str, payload: &Map<String, Value>) -> Record {
    match kind {
        "session_meta" => Record::Meta(meta(payload, false)),
        "turn_context" => Record::TurnContext {
            cwd: string_of(payload, "cwd"),
        },
        "response_item" => Record::Item(item(payload)),
        "event_msg" => Record::Event(event(payload)),
        _ => Record::Other,
    }
}

/// A legacy line: the header, a state marker, or a bare item.
fn legacy(object: &Map<String, Value>, first: bool) -> Record {
    if object.contains_key("record_type") {
        return Record::Other;
    }
    if object.contains_key("type") {
        return Record::Item(item(object));
    }
    if first && object.get("id").is_some_and(Value::is_string) {
        return Record::Meta(meta(object, true));
    }
    Record::Other
}

fn meta(payload: &Map<String, Value>, legacy: bool) -> Meta {
    let source = payload.get("source");
    let subagent = source
        .and_then(Value::as_object)
        .and_then(|s| s.get("subagent"));
    let spawned_parent = subagent
        .and_then(|s| s.get("thread_spawn"))
        .and_then(|t| t.get("parent_thread_id"))
        .and_then(Value::as_str)
        .and_then(non_empty);
    Meta {
        id: string_of(payload, "id"),
        session_id: string_of(payload, "session_id"),
        forked_from_id: string_of(payload, "forked_from_id"),
        parent_thread_id: string_of(payload, "parent_thread_id").or(spawned_parent),
        subagent: subagent.is_some(),
        cwd: string_of(payload, "cwd"),
        timestamp_ms: time::parse_ms(payload.get("timestamp")),
        legacy,
    }
}

fn item(payload: &Map<String, Value>) -> Item {
    match str_of(payload, "type") {
        Some("message") => Item::Message {
            role: str_of(payload, "role").unwrap_or_default().to_string(),
            parts: parts(payload.get("content")),
        },
        Some("function_call") => Item::FunctionCall {
            name: str_of(payload, "name").unwrap_or_default().to_string(),
            arguments: arguments(payload.get("arguments")),
        },
        Some("custom_tool_call") => Item::CustomToolCall {
            name: str_of(payload, "name").unwrap_or_default().to_string(),
            input: str_of(payload, "input").unwrap_or_default().to_string(),
        },
        Some("local_shell_call") => {
            let action = payload.get("action").and_then(Value::as_object);
            Item::LocalShellCall {
                command: action
                    .and_then(|a| a.get("command"))
                    .map(strings)
                    .unwrap_or_default(),
                workdir: action.and_then(|a| string_of(a, "working_directory")),
            }
        }
        // A message whose payload says only who wrote it and what (as other
        // tools' conformance fixtures write them): plainly a message.
        None if payload.get("role").is_some_and(Value::is_string)
            && payload.get("content").is_some_and(Value::is_array) =>
        {
            Item::Message {
                role: str_of(payload, "role").unwrap_or_default().to_string(),
                parts: parts(payload.get("content")),
            }
        }
        _ => Item::Other,
    }
}

/// `arguments` as Codex writes them (a JSON string), parsed; an object given
/// directly is taken as is; anything else is `Null`.
fn arguments(value: Option<&Value>) -> Value {
    match value {
        Some(Value::String(text)) => serde_json::from_str(text).unwrap_or(Value::Null),
        Some(object @ Value::Object(_)) => object.clone(),
        _ => Value::Null,
    }
}

fn parts(content: Option<&Value>) -> Vec<Part> {
    match content {
        Some(Value::String(text)) => vec![Part::Text(text.clone())],
        Some(Value::Array(items)) => items
            .iter()
            .map(|part| match part.get("text").and_then(Value::as_str) {
                Some(text) if part.get("type").and_then(Value::as_str) != Some("input_image") => {
                    Part::Text(text.to_string())
                }
                _ => Part::Other,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn event(payload: &Map<String, Value>) -> Event {
    let text = || str_of(payload, "message").unwrap_or_default().to_string();
    match str_of(payload, "type") {
        Some("user_message") => Event::UserMessage {
            text: text(),
            kind: string_of(payload, "kind"),
        },
        Some("agent_message") => Event::AgentMessage { text: text() },
        Some("item_completed") => completed(payload.get("item")),
        Some("thread_name_updated") => string_of(payload, "thread_name")
            .map(Event::ThreadName)
            .unwrap_or(Event::Other),
        Some("entered_review_mode") => Event::EnteredReview,
        Some("exited_review_mode") => Event::ExitedReview,
        _ => Event::Other,
    }
}

/// An `item_completed` event's item: its text joined, for user and agent messages.
fn completed(item: Option<&Value>) -> Event {
    let Some(item) = item.and_then(Value::as_object) else {
        return Event::Other;
    };
    let text = || -> String {
        parts(item.get("content"))
            .into_iter()
            .filter_map(|part| match part {
                Part::Text(text) => Some(text),
                Part::Other => None,
            })
            .collect()
    };
    match str_of(item, "type") {
        Some("UserMessage") => Event::UserItem { text: text() },
        Some("AgentMessage") => Event::AgentItem { text: text() },
        _ => Event::Other,
    }
}

fn str_of<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str)
}

/// A non-blank string field.
fn string_of(object: &Map<String, Value>, key: &str) -> Option<String> {
    str_of(object, key).and_then(non_empty)
}

fn non_empty(text: &str) -> Option<String> {
    (!text.trim().is_empty()).then(|| text.to_string())
}

/// The strings of a JSON array (anything else gives none).
pub fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(value: Value, first: bool) -> Line {
        match value {
            Value::Object(map) => classify(&map, first),
            _ => unreachable!(),
        }
    }

    #[test]
    fn reads_an_envelope_session_meta() {
        let l = line(
            json!({"timestamp": "1970-01-01T00:00:02Z", "ordinal": 0, "type": "session_meta",
                   "payload": {"id": "a", "session_id": "r", "cwd": "/p", "timestamp": "1970-01-01T00:00:01Z",
                               "source": {"subagent": {"thread_spawn": {"parent_thread_id": "r"}}}}}),
            true,
        );
        assert_eq!(l.timestamp_ms, Some(2000));
        let Record::Meta(meta) = l.record else {
            panic!("{l:?}")
        };
        assert_eq!(meta.id.as_deref(), Some("a"));
        assert_eq!(meta.parent_thread_id.as_deref(), Some("r"));
        assert!(meta.subagent);
        assert_eq!(meta.timestamp_ms, Some(1000));
    }

    #[test]
    fn reads_legacy_lines() {
        let header = line(
            json!({"id": "x", "timestamp": "1970-01-01T00:00:01Z", "instructions": null}),
            true,
        );
        assert!(matches!(
            header.record,
            Record::Meta(Meta { legacy: true, .. })
        ));
        let not_first = line(json!({"id": "x"}), false);
        assert_eq!(not_first.record, Record::Other);
        let state = line(json!({"record_type": "state"}), false);
        assert_eq!(state.record, Record::Other);
        let item = line(
            json!({"type": "message", "id": null, "role": "user", "content": [{"type": "input_text", "text": "hi"}]}),
            false,
        );
        assert_eq!(
            item.record,
            Record::Item(Item::Message {
                role: "user".into(),
                parts: vec![Part::Text("hi".into())]
            })
        );
    }

    #[test]
    fn parses_function_arguments_and_ignores_bad_ones() {
        let call = |args: Value| {
            line(
                json!({"type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": args}}),
                false,
            )
            .record
        };
        assert_eq!(
            call(json!("{\"command\":[\"ls\"]}")),
            Record::Item(Item::FunctionCall {
                name: "shell".into(),
                arguments: json!({"command": ["ls"]})
            })
        );
        assert_eq!(
            call(json!("{not json")),
            Record::Item(Item::FunctionCall {
                name: "shell".into(),
                arguments: Value::Null
            })
        );
    }

    #[test]
    fn reads_completed_items() {
        let l = line(
            json!({"type": "event_msg", "payload": {"type": "item_completed",
                   "item": {"type": "AgentMessage", "content": [{"type": "Text", "text": "Hello"}]}}}),
            false,
        );
        assert_eq!(
            l.record,
            Record::Event(Event::AgentItem {
                text: "Hello".into()
            })
        );
    }
}
