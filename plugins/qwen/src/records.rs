//! One line of a Qwen Code chat file, read into the few fields deja uses.
//!
//! Every line is a JSON object (`ChatRecord` in qwen-code's
//! `chatRecordingService.ts`): `uuid`, `parentUuid`, `sessionId`, `timestamp`,
//! `type` (`user`, `assistant`, `tool_result`, `system`), an optional
//! `subtype`, `cwd`, and either `message: {role, parts}` (Gemini-style parts)
//! or a `systemPayload`. Reading is duck-typed like the harness's own loader: a
//! field of the wrong type reads as absent, and a line without a string `uuid`
//! and `sessionId` is no record. Large payloads (tool outputs, file contents in
//! telemetry) are dropped here, so a multi-megabyte file costs little memory.

use deja_plugin_api::CommandOutcome;
use serde_json::{Map, Value};

/// One part of a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// `{text}`, or `{text, thought: true}` (reasoning, never message text).
    Text {
        /// The text.
        text: String,
        /// Whether it is a thought.
        thought: bool,
    },
    /// `{functionCall: {id, name, args}}`: a tool call.
    Call(Call),
    /// `{functionResponse: {id, name, response}}`: a tool's result.
    Response {
        /// The call it answers.
        id: Option<String>,
        /// Whether the response is an `{error: …}`.
        failed: bool,
        /// How the command ended, where a shell tool's output says
        /// (`Exit Code: N`).
        outcome: Option<CommandOutcome>,
    },
    /// Anything else (images, files, unknown shapes).
    Other,
}

/// A tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The call id a tool result refers to.
    pub id: Option<String>,
    /// The tool's name, e.g. `run_shell_command`.
    pub name: String,
    /// Its arguments, an object.
    pub args: Value,
}

/// What a `system` record says, as far as deja cares.
#[derive(Debug, Clone, PartialEq)]
pub enum SystemEvent {
    /// `custom_title`: a title set by `/rename` or generated.
    Title(String),
    /// `parent_session`: the session that spawned this one.
    Parent(String),
    /// `at_command`: files an `@path` reference read.
    AtCommand {
        /// `filesRead`.
        files: Vec<String>,
        /// Whether `status` is `success`.
        ok: bool,
    },
    /// `ui_telemetry` with a `qwen-code.tool_call` event.
    ToolTelemetry {
        /// `prompt_id`: `<session>########<n>` for the main agent,
        /// `<session>#<agent>-<id>#<n>` for a subagent.
        prompt_id: String,
        /// `function_name`.
        name: String,
        /// `function_args`.
        args: Value,
        /// `success`.
        ok: bool,
    },
    /// Any other subtype (telemetry, slash commands, compression, …).
    Other,
}

/// The user-prompt payload of a `user` record (qwen-code 0.15+).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prompt {
    /// `displayText`: what the user submitted, before hook context.
    pub display_text: Option<String>,
    /// Whether `hookContext` is a string (the payload pairs with a hook part).
    pub has_hook_context: bool,
}

/// One record.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The record's id; fragments of one message share it.
    pub uuid: String,
    /// The previous record on its branch; `None` for a root.
    pub parent_uuid: Option<String>,
    /// The session the record belongs to.
    pub session_id: String,
    /// RFC 3339.
    pub timestamp: Option<String>,
    /// `user`, `assistant`, `tool_result`, `system`, …
    pub kind: String,
    /// `slash_command`, `ui_telemetry`, `mid_turn_user_message`, …
    pub subtype: Option<String>,
    /// `real_user`, `system`, … (qwen-code 0.15+).
    pub provenance: Option<String>,
    /// The working directory.
    pub cwd: Option<String>,
    /// Whether a subagent wrote it (a sidechain off the session).
    pub is_sidechain: bool,
    /// The message parts.
    pub parts: Vec<Part>,
    /// A `user` record's prompt payload.
    pub prompt: Option<Prompt>,
    /// A `system` record's event.
    pub event: SystemEvent,
    /// `toolCallResult.callId` and `toolCallResult.status`.
    pub tool_result: Option<(Option<String>, Option<String>)>,
}

impl Record {
    /// Reads one parsed line; `None` when it is not a record.
    pub fn read(value: Value) -> Option<Record> {
        let Value::Object(mut map) = value else {
            return None;
        };
        let uuid = string(&map, "uuid").filter(|s| !s.is_empty())?;
        let session_id = string(&map, "sessionId").filter(|s| !s.is_empty())?;
        let parent_uuid = match map.get("parentUuid") {
            None | Some(Value::Null) => None,
            Some(Value::String(parent)) => Some(parent.clone()),
            Some(_) => return None,
        };
        let kind = string(&map, "type")?;
        let subtype = string(&map, "subtype");
        let parts = match map.remove("message") {
            Some(Value::Object(mut message)) => match message.remove("parts") {
                Some(Value::Array(parts)) => parts.into_iter().map(part).collect(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let payload = map.remove("systemPayload");
        let prompt = (kind == "user")
            .then(|| payload.as_ref().and_then(prompt))
            .flatten();
        let event = if kind == "system" {
            system_event(subtype.as_deref(), payload)
        } else {
            SystemEvent::Other
        };
        let tool_result = match map.get("toolCallResult") {
            Some(Value::Object(result)) => {
                Some((string(result, "callId"), string(result, "status")))
            }
            _ => None,
        };
        Some(Record {
            uuid,
            parent_uuid,
            session_id,
            timestamp: string(&map, "timestamp"),
            kind,
            subtype,
            provenance: string(&map, "provenance"),
            cwd: string(&map, "cwd").filter(|s| !s.trim().is_empty()),
            is_sidechain: map.get("isSidechain") == Some(&Value::Bool(true)),
            parts,
            prompt,
            event,
            tool_result,
        })
    }
}

/// A string field.
fn string(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(String::from)
}

fn part(value: Value) -> Part {
    let Value::Object(mut map) = value else {
        return Part::Other;
    };
    if let Some(Value::String(text)) = map.remove("text") {
        return Part::Text {
            text,
            thought: map.get("thought") == Some(&Value::Bool(true)),
        };
    }
    if let Some(Value::Object(mut call)) = map.remove("functionCall") {
        if let Some(name) = string(&call, "name") {
            return Part::Call(Call {
                id: string(&call, "id"),
                name,
                args: call.remove("args").unwrap_or(Value::Null),
            });
        }
        return Part::Other;
    }
    if let Some(Value::Object(response)) = map.get("functionResponse") {
        let failed = response
            .get("response")
            .and_then(Value::as_object)
            .is_some_and(|r| r.contains_key("error"));
        let outcome = response
            .get("response")
            .and_then(|r| r.get("output"))
            .and_then(Value::as_str)
            .and_then(CommandOutcome::from_shell_tool_output);
        return Part::Response {
            id: string(response, "id"),
            failed,
            outcome,
        };
    }
    Part::Other
}

fn prompt(payload: &Value) -> Option<Prompt> {
    let map = payload.as_object()?;
    Some(Prompt {
        display_text: string(map, "displayText"),
        has_hook_context: map.get("hookContext").is_some_and(Value::is_string),
    })
}

fn system_event(subtype: Option<&str>, payload: Option<Value>) -> SystemEvent {
    let Some(Value::Object(mut map)) = payload else {
        return SystemEvent::Other;
    };
    match subtype {
        Some("custom_title") => string(&map, "customTitle")
            .map(SystemEvent::Title)
            .unwrap_or(SystemEvent::Other),
        Some("parent_session") => string(&map, "parentSessionId")
            .filter(|id| !id.is_empty())
            .map(SystemEvent::Parent)
            .unwrap_or(SystemEvent::Other),
        Some("at_command") => SystemEvent::AtCommand {
            files: match map.get("filesRead") {
                Some(Value::Array(files)) => files
                    .iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect(),
                _ => Vec::new(),
            },
            ok: map.get("status").and_then(Value::as_str) == Some("success"),
        },
        Some("ui_telemetry") => match map.remove("uiEvent") {
            Some(Value::Object(mut event)) => tool_telemetry(&mut event),
            _ => SystemEvent::Other,
        },
        _ => SystemEvent::Other,
    }
}

fn tool_telemetry(event: &mut Map<String, Value>) -> SystemEvent {
    if event.get("event.name").and_then(Value::as_str) != Some("qwen-code.tool_call") {
        return SystemEvent::Other;
    }
    let (Some(prompt_id), Some(name)) =
        (string(event, "prompt_id"), string(event, "function_name"))
    else {
        return SystemEvent::Other;
    };
    SystemEvent::ToolTelemetry {
        prompt_id,
        name,
        args: event.remove("function_args").unwrap_or(Value::Null),
        ok: event.get("success") == Some(&Value::Bool(true)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base(extra: Value) -> Value {
        let mut record = json!({"uuid": "u", "parentUuid": null, "sessionId": "s", "type": "user"});
        if let (Some(map), Value::Object(extra)) = (record.as_object_mut(), extra) {
            map.extend(extra);
        }
        record
    }

    #[test]
    fn reads_identity_and_parts() {
        let r = Record::read(base(json!({
            "timestamp": "t", "cwd": "/p",
            "message": {"role": "user", "parts": [
                {"text": "hi"}, {"text": "hmm", "thought": true},
                {"functionCall": {"id": "c1", "name": "read_file", "args": {"file_path": "a"}}},
                {"functionResponse": {"id": "c0", "name": "x", "response": {"error": "no"}}},
                {"inlineData": {}}, 5
            ]}
        })));
        let r = r.unwrap();
        assert_eq!((r.uuid.as_str(), r.session_id.as_str()), ("u", "s"));
        assert_eq!(r.parent_uuid, None);
        assert_eq!(r.cwd.as_deref(), Some("/p"));
        assert_eq!(
            r.parts,
            vec![
                Part::Text {
                    text: "hi".into(),
                    thought: false
                },
                Part::Text {
                    text: "hmm".into(),
                    thought: true
                },
                Part::Call(Call {
                    id: Some("c1".into()),
                    name: "read_file".into(),
                    args: json!({"file_path": "a"})
                }),
                Part::Response {
                    id: Some("c0".into()),
                    failed: true,
                    outcome: None
                },
                Part::Other,
                Part::Other,
            ]
        );
    }

    #[test]
    fn what_lacks_an_identity_is_no_record() {
        for value in [
            json!({"parentUuid": null, "sessionId": "s", "type": "user"}),
            json!({"uuid": "", "sessionId": "s", "type": "user"}),
            json!({"uuid": "u", "type": "user"}),
            json!({"uuid": "u", "sessionId": "s", "parentUuid": 5, "type": "user"}),
            json!({"uuid": "u", "sessionId": "s"}),
            json!([1]),
            json!("x"),
        ] {
            assert_eq!(Record::read(value.clone()), None, "{value}");
        }
    }

    #[test]
    fn reads_system_events() {
        let read = |subtype: &str, payload: Value| {
            Record::read(base(
                json!({"type": "system", "subtype": subtype, "systemPayload": payload}),
            ))
            .map(|r| r.event)
        };
        assert_eq!(
            read(
                "custom_title",
                json!({"customTitle": "T", "titleSource": "auto"})
            ),
            Some(SystemEvent::Title("T".into()))
        );
        assert_eq!(
            read("parent_session", json!({"parentSessionId": "p"})),
            Some(SystemEvent::Parent("p".into()))
        );
        assert_eq!(
            read(
                "at_command",
                json!({"filesRead": ["a", 1], "status": "success"})
            ),
            Some(SystemEvent::AtCommand {
                files: vec!["a".into()],
                ok: true
            })
        );
        assert_eq!(
            read(
                "ui_telemetry",
                json!({"uiEvent": {"event.name": "qwen-code.tool_call",
                "prompt_id": "s#a-1#0", "function_name": "read_file",
                "function_args": {"file_path": "x"}, "success": true}})
            ),
            Some(SystemEvent::ToolTelemetry {
                prompt_id: "s#a-1#0".into(),
                name: "read_file".into(),
                args: json!({"file_path": "x"}),
                ok: true
            })
        );
        assert_eq!(
            read(
                "ui_telemetry",
                json!({"uiEvent": {"event.name": "qwen-code.api_response"}})
            ),
            Some(SystemEvent::Other)
        );
        assert_eq!(
            read("slash_command", json!({"rawCommand": "/x"})),
            Some(SystemEvent::Other)
        );
    }

    #[test]
    fn reads_prompt_payloads_and_tool_results() {
        let r = Record::read(base(json!({
            "systemPayload": {"displayText": "typed", "hookContext": "ctx"}
        })))
        .unwrap();
        assert_eq!(
            r.prompt,
            Some(Prompt {
                display_text: Some("typed".into()),
                has_hook_context: true
            })
        );
        let r = Record::read(base(json!({
            "type": "tool_result", "toolCallResult": {"callId": "c", "status": "error"}
        })))
        .unwrap();
        assert_eq!(
            r.tool_result,
            Some((Some("c".into()), Some("error".into())))
        );
        assert_eq!(r.prompt, None);
    }
}
