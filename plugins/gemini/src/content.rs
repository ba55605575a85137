//! A message's text: its `content` is a string or a list of parts
//! (`PartListUnion`); only text parts count, thoughts do not.

use deja_plugin_api::Role;
use serde_json::Value;

use crate::records::MessageRecord;

/// Who wrote a message of this `type`; `None` for `info`, `error`,
/// `warning` and anything else Gemini records that nobody said.
pub fn role(kind: Option<&str>) -> Option<Role> {
    match kind? {
        "user" => Some(Role::User),
        // `model` never appears in recordings (it is the role of `Content[]`
        // in checkpoints), but it means the assistant wherever it does.
        "gemini" | "model" => Some(Role::Assistant),
        _ => None,
    }
}

/// The message's text, or `None` when it holds none (a tool response recorded
/// as a `user` message with only a `functionResponse` part, a tool-call-only
/// `gemini` message).
///
/// `content` wins over `displayContent`: it is what the model was sent and
/// answered to — the referenced files' text an `@path` expanded to, a
/// selected agent's note — so a later search finds what the conversation was
/// really about, and it is present in every version while `displayContent`
/// is v0.28+ and only set when the two differ. `displayContent` is used only
/// when `content` has no text.
pub fn text(message: &MessageRecord) -> Option<String> {
    [&message.content, &message.display_content]
        .into_iter()
        .map(parts_text)
        .find(|text| !text.trim().is_empty())
}

/// The text of a `PartListUnion`: parts are joined without a separator, as
/// gemini-cli's `partToString` does (parts carry their own line breaks).
fn parts_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().map(part_text).collect(),
        Value::Object(_) => part_text(value).to_string(),
        _ => String::new(),
    }
}

fn part_text(part: &Value) -> &str {
    match part {
        Value::String(text) => text,
        Value::Object(map) if map.get("thought") != Some(&Value::Bool(true)) => {
            map.get("text").and_then(Value::as_str).unwrap_or_default()
        }
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(content: Value, display: Value) -> MessageRecord {
        MessageRecord {
            content,
            display_content: display,
            ..MessageRecord::default()
        }
    }

    #[test]
    fn maps_types_to_roles() {
        assert_eq!(role(Some("user")), Some(Role::User));
        assert_eq!(role(Some("gemini")), Some(Role::Assistant));
        assert_eq!(role(Some("model")), Some(Role::Assistant));
        for ignored in ["info", "error", "warning", "tool", ""] {
            assert_eq!(role(Some(ignored)), None);
        }
        assert_eq!(role(None), None);
    }

    #[test]
    fn joins_text_parts_and_skips_thoughts_and_calls() {
        let content = json!([
            {"text": "@a.md"},
            {"text": "hidden", "thought": true},
            {"functionCall": {"name": "read_file"}},
            "\nplain",
            {"text": 5}
        ]);
        assert_eq!(
            text(&message(content, Value::Null)).as_deref(),
            Some("@a.md\nplain")
        );
        assert_eq!(
            text(&message(json!("hi"), Value::Null)).as_deref(),
            Some("hi")
        );
        assert_eq!(
            text(&message(json!({"text": "one"}), Value::Null)).as_deref(),
            Some("one")
        );
    }

    #[test]
    fn content_wins_over_display_content() {
        let m = message(
            json!([{"text": "@a.md"}, {"text": "\nfile body"}]),
            json!("@a.md"),
        );
        assert_eq!(text(&m).as_deref(), Some("@a.md\nfile body"));
        let m = message(json!([]), json!([{"text": "shown"}]));
        assert_eq!(text(&m).as_deref(), Some("shown"));
    }

    #[test]
    fn no_text_is_none() {
        let response = json!([{"functionResponse": {"id": "x", "response": {"output": "ok"}}}]);
        assert_eq!(text(&message(response, Value::Null)), None);
        assert_eq!(text(&message(json!("  \n"), Value::Null)), None);
        assert_eq!(text(&message(json!(42), Value::Null)), None);
    }
}
