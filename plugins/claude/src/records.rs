//! One line of a Claude Code transcript as a serde type. Every line is a JSON
//! object with a `type`; conversation lines (`user`, `assistant`) carry a
//! `message`, the others (`summary`, `custom-title`, `queue-operation`,
//! `system`, `attachment`, ...) carry their own fields. A field of the wrong
//! type reads as absent instead of failing the whole line, and fields deja
//! does not use (`toolUseResult`, snapshots, progress data) are skipped
//! without being built.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// One transcript line.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Record {
    /// `user`, `assistant`, `system`, `summary`, `custom-title`, ...
    #[serde(rename = "type", deserialize_with = "lenient")]
    pub kind: Option<String>,
    /// The record's own id (conversation, system and attachment lines).
    #[serde(deserialize_with = "lenient")]
    pub uuid: Option<String>,
    /// The record it follows in the conversation tree; `null` at a root.
    #[serde(rename = "parentUuid", deserialize_with = "lenient")]
    pub parent_uuid: Option<String>,
    /// Where a compaction boundary (whose `parentUuid` is `null`) continues from.
    #[serde(rename = "logicalParentUuid", deserialize_with = "lenient")]
    pub logical_parent_uuid: Option<String>,
    /// The session the line was written for.
    #[serde(rename = "sessionId", deserialize_with = "lenient")]
    pub session_id: Option<String>,
    /// RFC 3339.
    #[serde(deserialize_with = "lenient")]
    pub timestamp: Option<String>,
    /// The working directory when the line was written.
    #[serde(deserialize_with = "lenient")]
    pub cwd: Option<String>,
    /// The subagent that wrote the line.
    #[serde(rename = "agentId", deserialize_with = "lenient")]
    pub agent_id: Option<String>,
    /// Written by a subagent (a sidechain of the main conversation).
    #[serde(rename = "isSidechain", deserialize_with = "flag")]
    pub is_sidechain: bool,
    /// Injected context (caveats, skill text, slash-command expansions).
    #[serde(rename = "isMeta", deserialize_with = "flag")]
    pub is_meta: bool,
    /// The summary that continues a compacted conversation.
    #[serde(rename = "isCompactSummary", deserialize_with = "flag")]
    pub is_compact_summary: bool,
    /// Shown in the transcript view only, never sent as said.
    #[serde(rename = "isVisibleInTranscriptOnly", deserialize_with = "flag")]
    pub is_visible_in_transcript_only: bool,
    /// A reply Claude Code made up for an API error.
    #[serde(rename = "isApiErrorMessage", deserialize_with = "flag")]
    pub is_api_error_message: bool,
    /// The API message of a `user` or `assistant` line.
    #[serde(deserialize_with = "lenient")]
    pub message: Option<ApiMessage>,
    /// `summary` lines: the summary text.
    #[serde(deserialize_with = "lenient")]
    pub summary: Option<String>,
    /// `summary` and `last-prompt` lines: the last record of the conversation summarized.
    #[serde(rename = "leafUuid", deserialize_with = "lenient")]
    pub leaf_uuid: Option<String>,
    /// `custom-title` lines (`/rename`).
    #[serde(rename = "customTitle", deserialize_with = "lenient")]
    pub custom_title: Option<String>,
    /// `agent-name` lines.
    #[serde(rename = "agentName", deserialize_with = "lenient")]
    pub agent_name: Option<String>,
    /// `ai-title` lines.
    #[serde(rename = "aiTitle", deserialize_with = "lenient")]
    pub ai_title: Option<String>,
    /// `system` lines: `local_command`, `compact_boundary`, `api_error`, ...
    #[serde(deserialize_with = "lenient")]
    pub subtype: Option<String>,
    /// `queue-operation` lines: `enqueue`, `dequeue`, `remove`, `popAll`.
    #[serde(deserialize_with = "lenient")]
    pub operation: Option<String>,
    /// `queue-operation` lines: the queued prompt; `system` lines: their text.
    pub content: Value,
    /// `attachment` lines: what was attached to the prompt.
    pub attachment: Value,
}

/// The `message` of a conversation line (the Anthropic API message).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ApiMessage {
    /// The API's message id (`msg_...`), shared by every line of one reply.
    #[serde(deserialize_with = "lenient")]
    pub id: Option<String>,
    /// The model; `<synthetic>` for replies Claude Code made up.
    #[serde(deserialize_with = "lenient")]
    pub model: Option<String>,
    /// A string, or a list of blocks (`text`, `thinking`, `tool_use`, `tool_result`, `image`).
    pub content: Value,
}

impl Record {
    /// Parses one line; `None` when it is not a JSON object (a torn last
    /// line, a blank line, garbage).
    pub fn parse(line: &str) -> Option<Record> {
        let line = line.trim();
        if !line.starts_with('{') {
            return None;
        }
        serde_json::from_str(line).ok()
    }

    /// The record's `type`, or `""`.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or_default()
    }

    /// Whether it is a `user` or `assistant` line.
    pub fn is_conversation(&self) -> bool {
        matches!(self.kind(), "user" | "assistant")
    }

    /// The record's content blocks: `message.content` as a list (a string
    /// becomes one text block).
    pub fn blocks(&self) -> Vec<Block<'_>> {
        let Some(message) = &self.message else {
            return Vec::new();
        };
        match &message.content {
            Value::String(text) => vec![Block::Text(text)],
            Value::Array(items) => items.iter().filter_map(Block::of).collect(),
            _ => Vec::new(),
        }
    }
}

/// One content block of a message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Block<'a> {
    /// Text.
    Text(&'a str),
    /// A tool call: `id`, `name` and `input`.
    ToolUse {
        /// `toolu_...`.
        id: Option<&'a str>,
        /// `Bash`, `Edit`, `Read`, ...
        name: &'a str,
        /// The arguments.
        input: &'a Value,
    },
    /// A tool's output, returned to the model under the user role.
    ToolResult {
        /// The call it answers.
        tool_use_id: Option<&'a str>,
        /// Whether the tool failed or did not run.
        is_error: bool,
        /// A string or a list of text and image blocks.
        content: &'a Value,
    },
    /// Reasoning, images and anything else: not said.
    Other,
}

impl<'a> Block<'a> {
    fn of(value: &'a Value) -> Option<Block<'a>> {
        let kind = value.get("type")?.as_str()?;
        let str_field = |key: &str| value.get(key).and_then(Value::as_str);
        Some(match kind {
            "text" => Block::Text(str_field("text")?),
            "tool_use" => Block::ToolUse {
                id: str_field("id"),
                name: str_field("name")?,
                input: value.get("input").unwrap_or(&Value::Null),
            },
            "tool_result" => Block::ToolResult {
                tool_use_id: str_field("tool_use_id"),
                is_error: value.get("is_error") == Some(&Value::Bool(true)),
                content: value.get("content").unwrap_or(&Value::Null),
            },
            _ => Block::Other,
        })
    }
}

/// The text of a tool result's `content`: a string, or its text blocks joined.
pub fn result_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|item| item.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
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

/// A flag: `true` only when it is the JSON `true`.
fn flag<'de, D>(deserializer: D) -> Result<bool, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(Value::deserialize(deserializer)? == Value::Bool(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_conversation_line() {
        let r = Record::parse(
            r#"{"type":"assistant","uuid":"u1","parentUuid":null,"isSidechain":false,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","message":{"id":"msg_1","model":"claude","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}},{"type":"thinking","thinking":""}]},"toolUseResult":{"huge":[1,2,3]}}"#,
        )
        .unwrap();
        assert_eq!(r.kind(), "assistant");
        assert!(r.is_conversation());
        assert_eq!(r.parent_uuid, None);
        let blocks = r.blocks();
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks[0], Block::Text("hi"));
        assert!(matches!(
            blocks[1],
            Block::ToolUse {
                name: "Bash",
                id: Some("t1"),
                ..
            }
        ));
        assert_eq!(blocks[2], Block::Other);
    }

    #[test]
    fn wrong_types_read_as_absent() {
        let r = Record::parse(
            r#"{"type":5,"uuid":["x"],"isMeta":"yes","isSidechain":1,"message":"text","timestamp":{}}"#,
        )
        .unwrap();
        assert_eq!(r.kind(), "");
        assert_eq!(r.uuid, None);
        assert!(!r.is_meta && !r.is_sidechain);
        assert_eq!(r.message, None);
        assert_eq!(r.timestamp, None);
    }

    #[test]
    fn string_content_is_one_text_block() {
        let r = Record::parse(r#"{"type":"user","message":{"role":"user","content":"hello"}}"#)
            .unwrap();
        assert_eq!(r.blocks(), vec![Block::Text("hello")]);
    }

    #[test]
    fn non_objects_and_torn_lines_are_none() {
        for line in [
            "",
            "   ",
            "[1]",
            "\"x\"",
            "{\"type\":\"user\",\"mess",
            "null",
        ] {
            assert_eq!(Record::parse(line), None, "{line}");
        }
    }

    #[test]
    fn result_text_joins_text_blocks() {
        let v: Value = serde_json::json!([{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]);
        assert_eq!(result_text(&v), "a\nb");
        assert_eq!(result_text(&Value::String("s".into())), "s");
        assert_eq!(result_text(&Value::Null), "");
    }
}
