//! The records of a Gemini CLI chat file (`chatRecordingTypes.ts`) as serde
//! types, and how one parsed JSON value is classified the way gemini-cli's
//! loader does. A field of the wrong type reads as absent instead of failing
//! the whole record: the loader is duck-typed, and so is this.

use deja_plugin_api::CommandOutcome;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// One message (`MessageRecord`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct MessageRecord {
    /// Gemini's message id; a re-appended copy carries the same one.
    #[serde(deserialize_with = "lenient")]
    pub id: Option<String>,
    /// RFC 3339.
    #[serde(deserialize_with = "lenient")]
    pub timestamp: Option<String>,
    /// `user`, `gemini`, `info`, `error`, `warning`, ...
    #[serde(rename = "type", deserialize_with = "lenient")]
    pub kind: Option<String>,
    /// A string or a list of parts (`PartListUnion`): what the model was sent.
    pub content: Value,
    /// What the terminal showed instead, when it differs (v0.28+).
    #[serde(rename = "displayContent")]
    pub display_content: Value,
    /// The tool calls of a `gemini` message.
    #[serde(rename = "toolCalls", deserialize_with = "lenient_list")]
    pub tool_calls: Vec<ToolCallRecord>,
}

/// One tool call of a `gemini` message (`ToolCallRecord`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ToolCallRecord {
    /// The tool's name, e.g. `run_shell_command`.
    #[serde(deserialize_with = "lenient")]
    pub name: Option<String>,
    /// Its arguments, an object.
    pub args: Value,
    /// `success`, `error`, `cancelled`, ...
    #[serde(deserialize_with = "lenient")]
    pub status: Option<String>,
    /// RFC 3339.
    #[serde(deserialize_with = "lenient")]
    pub timestamp: Option<String>,
    /// How a shell command ended, where its `result` (the
    /// `functionResponse`'s `output`) ends with an `Exit Code: N` line.
    #[serde(rename = "result", deserialize_with = "shell_outcome")]
    pub outcome: Option<CommandOutcome>,
}

/// Session fields: the first line of a JSONL file, a `$set` patch, or a whole
/// legacy JSON file (`Partial<ConversationRecord>`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Metadata {
    /// The id `gemini --resume` takes.
    #[serde(rename = "sessionId", deserialize_with = "lenient")]
    pub session_id: Option<String>,
    /// `sha256` of the project root.
    #[serde(rename = "projectHash", deserialize_with = "lenient")]
    pub project_hash: Option<String>,
    /// RFC 3339.
    #[serde(rename = "startTime", deserialize_with = "lenient")]
    pub start_time: Option<String>,
    /// RFC 3339.
    #[serde(rename = "lastUpdated", deserialize_with = "lenient")]
    pub last_updated: Option<String>,
    /// A one-line summary Gemini writes when a session ends.
    #[serde(deserialize_with = "lenient")]
    pub summary: Option<String>,
    /// `main` or `subagent`.
    #[serde(deserialize_with = "lenient")]
    pub kind: Option<String>,
    /// The workspace directories.
    #[serde(deserialize_with = "lenient_list")]
    pub directories: Vec<String>,
    /// A full message list: the history of a legacy file, or a replacement in `$set`.
    #[serde(deserialize_with = "lenient")]
    pub messages: Option<Vec<Value>>,
}

impl Metadata {
    /// Merges `patch` into `self` like `{...metadata, ...patch}`; `messages` is not kept.
    pub fn merge(&mut self, patch: Metadata) {
        fn take(into: &mut Option<String>, from: Option<String>) {
            if from.is_some() {
                *into = from;
            }
        }
        take(&mut self.session_id, patch.session_id);
        take(&mut self.project_hash, patch.project_hash);
        take(&mut self.start_time, patch.start_time);
        take(&mut self.last_updated, patch.last_updated);
        take(&mut self.summary, patch.summary);
        take(&mut self.kind, patch.kind);
        if !patch.directories.is_empty() {
            self.directories = patch.directories;
        }
    }
}

/// One record of the edit log, tested in the loader's order.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// `{"$rewindTo": id}`.
    Rewind(String),
    /// A message (any object with a string `id`).
    Message(MessageRecord),
    /// `{"$set": {...}}`.
    Set(Metadata),
    /// Session fields (any object with a string `sessionId`): the first JSONL
    /// line, a repeated one, or a whole legacy file.
    Metadata(Metadata),
}

impl Record {
    /// Classifies a parsed JSON value; `None` for anything else (arrays,
    /// checkpoints, `logs.json`, ...).
    pub fn classify(value: Value) -> Option<Record> {
        let Value::Object(mut map) = value else {
            return None;
        };
        if let Some(Value::String(id)) = map.remove("$rewindTo") {
            return Some(Record::Rewind(id));
        }
        if map.get("id").is_some_and(Value::is_string) {
            return Some(Record::Message(read(Value::Object(map))));
        }
        if let Some(set @ Value::Object(_)) = map.remove("$set") {
            return Some(Record::Set(read(set)));
        }
        if map.get("sessionId").is_some_and(Value::is_string) {
            return Some(Record::Metadata(read(Value::Object(map))));
        }
        None
    }
}

/// Reads a record from an object; fields that do not fit are left at their default.
pub fn read<T: DeserializeOwned + Default>(value: Value) -> T {
    T::deserialize(value).unwrap_or_default()
}

/// A field that reads as `None` when it has the wrong type.
fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let value = Value::deserialize(deserializer)?;
    Ok(T::deserialize(value).ok())
}

/// The outcome a tool call's `result` (a list of `functionResponse` parts)
/// gives: the first part whose `response.output` says one.
fn shell_outcome<'de, D>(deserializer: D) -> Result<Option<CommandOutcome>, D::Error>
where
    D: Deserializer<'de>,
{
    let value = Value::deserialize(deserializer)?;
    let parts = match &value {
        Value::Array(parts) => parts.as_slice(),
        other => std::slice::from_ref(other),
    };
    Ok(parts.iter().find_map(|part| {
        part.get("functionResponse")?
            .get("response")?
            .get("output")?
            .as_str()
            .and_then(CommandOutcome::from_shell_tool_output)
    }))
}

/// A list field that keeps the items of the right type and drops the others.
fn lenient_list<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let Value::Array(items) = Value::deserialize(deserializer)? else {
        return Ok(Vec::new());
    };
    Ok(items
        .into_iter()
        .filter_map(|item| T::deserialize(item).ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_in_the_loaders_order() {
        let rewind = Record::classify(json!({"$rewindTo": "m1", "id": "x"}));
        assert_eq!(rewind, Some(Record::Rewind("m1".into())));
        let message = Record::classify(json!({"id": "m1", "sessionId": "s", "type": "user"}));
        assert!(matches!(message, Some(Record::Message(m)) if m.kind.as_deref() == Some("user")));
        let set = Record::classify(json!({"$set": {"summary": "t"}, "sessionId": "s"}));
        assert!(matches!(set, Some(Record::Set(m)) if m.summary.as_deref() == Some("t")));
        let meta = Record::classify(json!({"sessionId": "s", "startTime": "x"}));
        assert!(matches!(meta, Some(Record::Metadata(m)) if m.session_id.as_deref() == Some("s")));
    }

    #[test]
    fn ignores_what_is_not_a_record() {
        for value in [
            json!([{"sessionId": "s"}]),
            json!({"history": [], "commitHash": "abc"}),
            json!({"id": 5}),
            json!({"$rewindTo": 5}),
            json!({"$set": "x"}),
            json!("text"),
            json!(null),
        ] {
            assert_eq!(Record::classify(value), None);
        }
    }

    #[test]
    fn wrong_types_read_as_absent() {
        let m: MessageRecord = read(json!({
            "id": "m", "timestamp": 5, "type": ["user"], "content": "hi",
            "toolCalls": [{"name": "read_file"}, 7, {"name": 3}]
        }));
        assert_eq!(m.timestamp, None);
        assert_eq!(m.kind, None);
        assert_eq!(m.tool_calls.len(), 2);
        assert_eq!(m.tool_calls[1].name, None);
        let meta: Metadata =
            read(json!({"sessionId": "s", "messages": {}, "directories": [1, "/p"]}));
        assert_eq!(meta.messages, None);
        assert_eq!(meta.directories, vec!["/p".to_string()]);
    }

    #[test]
    fn merge_overwrites_present_fields_only() {
        let mut meta: Metadata =
            read(json!({"sessionId": "s", "startTime": "a", "summary": "old"}));
        meta.merge(read(json!({"lastUpdated": "b", "summary": "new"})));
        assert_eq!(meta.session_id.as_deref(), Some("s"));
        assert_eq!(meta.start_time.as_deref(), Some("a"));
        assert_eq!(meta.last_updated.as_deref(), Some("b"));
        assert_eq!(meta.summary.as_deref(), Some("new"));
    }
}
