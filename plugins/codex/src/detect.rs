//! Whether a file is a Codex rollout, from its name and first bytes.
//!
//! Claude Code and Qwen Code write `.jsonl` too, so the content test is
//! specific: an envelope line starts `{"timestamp":"...","type":"<codex
//! record type>"` and holds a `"payload"`; a legacy header starts
//! `{"id":"<uuid>","timestamp":`. Neither harness writes lines like these.
//! The head handed over may end mid-line (the first line holds Codex's whole
//! system prompt), so only the line's opening is looked at.

use deja_plugin_api::text;

use crate::discover::is_rollout_name;
use crate::ids;

/// A rollout's name and Codex content.
pub const NAMED_AND_CONTENT: u8 = 100;
/// Codex content under another name (e.g. `deja parse` on a renamed copy).
pub const CONTENT_ONLY: u8 = 90;
/// A rollout's name with no complete first record yet (a file being written).
pub const NAMED_ONLY: u8 = 50;

/// The record types of envelope lines.
const ENVELOPE_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
    "world_state",
    "inter_agent_communication_metadata",
];

/// How sure deja is that `path`, starting with `head`, is a rollout (0–100).
pub fn confidence(path: &str, head: &[u8]) -> u8 {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    if !name.ends_with(".jsonl") {
        return 0;
    }
    let named = is_rollout_name(name) && ids::file_uuid(name).is_some();
    let decoded = text::decode(head).0;
    let first = decoded.trim_start().split('\n').next().unwrap_or_default();
    match (named, is_codex_line(first)) {
        (_, true) if named => NAMED_AND_CONTENT,
        (_, true) => CONTENT_ONLY,
        (true, false) if first.trim().is_empty() || !first.trim_end().ends_with('}') => NAMED_ONLY,
        _ => 0,
    }
}

/// Whether `line` opens like a rollout's first line.
fn is_codex_line(line: &str) -> bool {
    envelope_opening(line) || legacy_opening(line)
}

/// `{"timestamp":"<ts>",["ordinal":N,]"type":"<codex type>",...,"payload":`
fn envelope_opening(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("{\"timestamp\":\"") else {
        return false;
    };
    let opening: String = rest.chars().take(200).collect();
    let typed = ENVELOPE_TYPES
        .iter()
        .any(|t| opening.contains(&format!("\"type\":\"{t}\"")));
    typed && opening.contains("\"payload\":")
}

/// `{"id":"<uuid>","timestamp":` (the legacy header).
fn legacy_opening(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("{\"id\":\"") else {
        return false;
    };
    let id = rest.get(..36).unwrap_or_default();
    ids::is_uuid(id) && rest[36..].starts_with("\",\"timestamp\":")
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "/h/.codex/sessions/2026/01/08/rollout-2026-01-08T15-18-19-019b9caf-68c8-7c22-a303-de71e0e74e08.jsonl";
    const META: &[u8] = br#"{"timestamp":"2026-01-08T08:18:20.006Z","type":"session_meta","payload":{"id":"019b9caf-68c8-7c22-a303-de71e0e74e08","#;

    #[test]
    fn named_rollouts_with_codex_content_are_certain() {
        assert_eq!(confidence(NAME, META), NAMED_AND_CONTENT);
        let ordinal = br#"{"timestamp":"2026-09-02T21:58:23.736Z","ordinal":0,"type":"session_meta","payload":{"#;
        assert_eq!(confidence(NAME, ordinal), NAMED_AND_CONTENT);
        let legacy = br#"{"id":"bc45dae1-bef4-47c9-b0c0-afb7f25f12b5","timestamp":"2025-08-30T11:49:52.079Z","instructions":null}"#;
        assert_eq!(confidence(NAME, legacy), NAMED_AND_CONTENT);
        assert_eq!(confidence("/tmp/copy.jsonl", META), CONTENT_ONLY);
        assert_eq!(confidence(NAME, b""), NAMED_ONLY);
        assert_eq!(confidence(NAME, b"{\"timestamp\":\"2026"), NAMED_ONLY);
    }

    #[test]
    fn other_harnesses_are_not_claimed() {
        let claude = br#"{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/p","sessionId":"a0457e1c-7d65-4cd4-890f-7b8170dccaed","type":"user"}"#;
        let queue = br#"{"type":"queue-operation","operation":"enqueue","timestamp":"2026-03-25T03:41:33.840Z","sessionId":"x"}"#;
        let gemini = br#"{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z","messages":[]}"#;
        for head in [&claude[..], &queue[..], &gemini[..]] {
            assert_eq!(
                confidence(
                    "/h/.claude/projects/p/a0457e1c-7d65-4cd4-890f-7b8170dccaed.jsonl",
                    head
                ),
                0
            );
            assert_eq!(confidence(NAME, head), 0);
        }
        assert_eq!(confidence("/x/rollout-a.json", META), 0);
        assert_eq!(
            confidence(
                "/x/history.jsonl",
                br#"{"session_id":"s","ts":1,"text":"hi"}"#
            ),
            0
        );
    }
}
