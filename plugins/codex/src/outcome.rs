//! How a command ended, from what Codex writes after a call: the call's
//! output item (`function_call_output`, `custom_tool_call_output`) or an
//! `exec_command_end` event, matched to the call by its `call_id`.
//!
//! The exit code is read from, by generation: an output that begins
//! `Exit code: N` (`shell_command`), a `Process exited with code N` line
//! (`exec_command`, unified exec), a JSON output's `metadata.exit_code`
//! (the 2025 `shell` tool), and the event's `exit_code`. An output that says
//! the process is still running, or anything else, leaves it unknown.

use deja_plugin_api::CommandOutcome;
use serde_json::{Map, Value};

/// The item or event a line holds: the envelope's payload, else the line.
fn payload(object: &Map<String, Value>) -> &Map<String, Value> {
    object
        .get("payload")
        .and_then(Value::as_object)
        .unwrap_or(object)
}

fn kind(object: &Map<String, Value>) -> Option<&str> {
    object.get("type").and_then(Value::as_str)
}

/// The `call_id` of a tool call line.
pub fn call_id(object: &Map<String, Value>) -> Option<String> {
    let item = payload(object);
    match kind(item) {
        Some("function_call" | "custom_tool_call" | "local_shell_call") => item
            .get("call_id")
            .or_else(|| item.get("id"))
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .map(String::from),
        _ => None,
    }
}

/// The call a result line answers and the outcome it gives, when it gives one.
pub fn result(object: &Map<String, Value>) -> Option<(String, CommandOutcome)> {
    let item = payload(object);
    let id = item.get("call_id").and_then(Value::as_str)?.to_string();
    let code = match kind(item)? {
        "exec_command_end" => item
            .get("exit_code")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok()),
        "function_call_output" | "custom_tool_call_output" => match item.get("output")? {
            Value::String(text) => exit_code(text),
            Value::Object(output) => metadata_code(output),
            _ => None,
        },
        _ => None,
    }?;
    Some((id, CommandOutcome::from_exit_code(code)))
}

/// The exit code an output's text gives.
pub fn exit_code(text: &str) -> Option<i32> {
    if let Some(rest) = text.strip_prefix("Exit code: ") {
        return leading_int(rest);
    }
    if text.trim_start().starts_with('{') {
        let value: Value = serde_json::from_str(text).ok()?;
        return metadata_code(value.as_object()?);
    }
    text.lines()
        .take(8)
        .find_map(|line| line.strip_prefix("Process exited with code "))
        .and_then(leading_int)
}

fn metadata_code(output: &Map<String, Value>) -> Option<i32> {
    output
        .get("metadata")?
        .get("exit_code")?
        .as_i64()
        .and_then(|c| i32::try_from(c).ok())
}

fn leading_int(text: &str) -> Option<i32> {
    let end = text
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(text.len(), |(i, _)| i);
    text.get(..end)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use deja_plugin_api::CommandStatus;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn reads_every_generation_of_output() {
        assert_eq!(
            exit_code("Exit code: 1\nWall time: 4 seconds\nOutput:\nx"),
            Some(1)
        );
        assert_eq!(
            exit_code(
                "Chunk ID: 5c\nWall time: 0.0000 seconds\nProcess exited with code 127\nOutput:\n"
            ),
            Some(127)
        );
        assert_eq!(
            exit_code(r#"{"output":"x","metadata":{"exit_code":2,"duration_seconds":0.1}}"#),
            Some(2)
        );
        assert_eq!(
            exit_code("Chunk ID: 1\nProcess running with session ID 3\n"),
            None
        );
        assert_eq!(exit_code("exec command rejected by user"), None);
    }

    #[test]
    fn matches_results_to_calls() {
        let call = map(json!({"type": "response_item", "payload":
            {"type": "function_call", "name": "shell_command", "call_id": "c1", "arguments": "{}"}}));
        assert_eq!(call_id(&call).as_deref(), Some("c1"));
        let out = map(json!({"type": "response_item", "payload":
            {"type": "function_call_output", "call_id": "c1", "output": "Exit code: 0\nOutput:\n"}}));
        let (id, outcome) = result(&out).unwrap();
        assert_eq!(id, "c1");
        assert_eq!(outcome.status, CommandStatus::Succeeded);
        let end = map(json!({"type": "event_msg", "payload":
            {"type": "exec_command_end", "call_id": "c2", "exit_code": 1}}));
        assert_eq!(result(&end).unwrap().1, CommandOutcome::from_exit_code(1));
        assert_eq!(call_id(&out), None);
    }
}
