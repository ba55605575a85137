//! Whether a file is a Qwen Code chat, from its path and first bytes.
//!
//! Claude Code, Codex and Gemini CLI write JSONL too, some with `sessionId`,
//! `uuid` and `parentUuid`, so the test is specific: a Qwen Code record has a
//! `uuid`, a `parentUuid` and a `sessionId`, carries Gemini-style
//! `message.parts` or a `systemPayload`, and has no `userType` (which every
//! Claude Code record has). Gemini CLI's records have an `id`, not a `uuid`;
//! Codex's have none.
//!
//! | evidence | score |
//! |---|---|
//! | a Qwen record, in a `.jsonl` filed as `…/projects/<folder>/chats/` | 100 |
//! | a Qwen record, in another `.jsonl` | 90 |
//! | filed as a Qwen chat, with an empty head | 50 |
//! | a minimal record (`type` user or assistant, `message.parts`, no ids), in any `.jsonl` | 40 |
//! | anything else | 0 |

use deja_plugin_api::text;
use serde_json::Value;

/// A Qwen record where qwen-code files its chats.
pub const FILED_RECORD: u8 = 100;
/// A Qwen record elsewhere.
pub const RECORD: u8 = 90;
/// Filed like a Qwen chat, with nothing in its head to tell.
pub const FILED: u8 = 50;
/// A minimal record, as other tools' conformance fixtures write them.
pub const MINIMAL: u8 = 40;

/// How sure the reader is that the file at `path`, starting with `head`, is a Qwen Code chat.
pub fn score(path: &str, head: &[u8]) -> u8 {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    if !name.ends_with(".jsonl") {
        return 0;
    }
    let filed = is_filed(path);
    let (text, _) = text::decode(head);
    let first = text.lines().map(str::trim).find(|line| !line.is_empty());
    let looks = match first {
        None => None,
        Some(line) => match serde_json::from_str::<Value>(line) {
            Ok(value) => Some(is_record(&value)),
            // A first line longer than the head: judge by its keys.
            Err(_) => Some(has_record_keys(line)),
        },
    };
    match (looks, filed) {
        (Some(true), true) => FILED_RECORD,
        (Some(true), false) => RECORD,
        (None, true) => FILED,
        _ if first
            .and_then(|l| serde_json::from_str::<Value>(l).ok())
            .is_some_and(|v| is_minimal(&v)) =>
        {
            MINIMAL
        }
        _ => 0,
    }
}

/// A minimal Qwen record: `type` user or assistant, `message.parts`, and
/// none of the chain and session fields (nor Claude Code's `userType`).
fn is_minimal(value: &Value) -> bool {
    let Some(map) = value.as_object() else {
        return false;
    };
    ["uuid", "parentUuid", "sessionId", "userType"]
        .iter()
        .all(|k| !map.contains_key(*k))
        && matches!(
            map.get("type").and_then(Value::as_str),
            Some("user" | "assistant")
        )
        && map
            .get("message")
            .and_then(|m| m.get("parts"))
            .is_some_and(Value::is_array)
}

/// `…/projects/<folder>/chats/<file>`.
fn is_filed(path: &str) -> bool {
    let mut parts = path.rsplit(['/', '\\']).skip(1);
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some("chats"), Some(folder), Some("projects")) if !folder.is_empty()
    )
}

fn is_record(value: &Value) -> bool {
    let Some(map) = value.as_object() else {
        return false;
    };
    let identity = map.get("uuid").is_some_and(Value::is_string)
        && map.get("sessionId").is_some_and(Value::is_string)
        && map
            .get("parentUuid")
            .is_some_and(|p| p.is_string() || p.is_null());
    let parts = map
        .get("message")
        .and_then(|m| m.get("parts"))
        .is_some_and(Value::is_array);
    let payload = map.get("systemPayload").is_some_and(Value::is_object);
    identity && (parts || payload) && !map.contains_key("userType")
}

fn has_record_keys(line: &str) -> bool {
    ["\"uuid\"", "\"parentUuid\"", "\"sessionId\""]
        .iter()
        .all(|key| line.contains(key))
        && (line.contains("\"parts\"") || line.contains("\"systemPayload\""))
        && !line.contains("\"userType\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILED_PATH: &str =
        "/h/.qwen/projects/-home-me/chats/9a578cd0-ad2c-423c-8f19-95412a2d81af.jsonl";
    const QWEN: &str = r#"{"uuid":"a","parentUuid":null,"sessionId":"s","timestamp":"2025-12-20T08:07:53.086Z","type":"user","cwd":"/home/me","version":"0.5.1","message":{"role":"user","parts":[{"text":"hi"}]}}"#;
    const QWEN_SYSTEM: &str = r#"{"uuid":"a","parentUuid":null,"sessionId":"s","type":"system","subtype":"slash_command","systemPayload":{"phase":"invocation","rawCommand":"/ide install"}}"#;
    const CLAUDE: &str = r#"{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/p","sessionId":"s","version":"2.1","type":"user","message":{"role":"user","content":"hi"},"uuid":"a","timestamp":"2026-01-01T00:00:00Z"}"#;
    const GEMINI: &str = r#"{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z","lastUpdated":"2026-01-01T00:00:00Z","kind":"main"}"#;
    const CODEX: &str = r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s","cwd":"/p"}}"#;

    #[test]
    fn qwen_records_are_claimed() {
        assert_eq!(score(FILED_PATH, QWEN.as_bytes()), FILED_RECORD);
        assert_eq!(score(FILED_PATH, QWEN_SYSTEM.as_bytes()), FILED_RECORD);
        assert_eq!(score("/backup/s.jsonl", QWEN.as_bytes()), RECORD);
        assert_eq!(
            score("C:\\q\\projects\\c--x\\chats\\s.jsonl", QWEN.as_bytes()),
            FILED_RECORD
        );
        // A first line cut by the head.
        assert_eq!(
            score(FILED_PATH, &QWEN.as_bytes()[..QWEN.len() - 10]),
            FILED_RECORD
        );
        assert_eq!(score(FILED_PATH, b""), FILED);
    }

    #[test]
    fn other_harnesses_are_not() {
        for head in [CLAUDE, GEMINI, CODEX] {
            assert_eq!(score("/x/s.jsonl", head.as_bytes()), 0, "{head}");
            assert_eq!(score(FILED_PATH, head.as_bytes()), 0, "{head}");
        }
        let gemini_path = "/h/.gemini/tmp/app/chats/session-2026-01-01T00-00-abcd1234.jsonl";
        assert_eq!(score(gemini_path, GEMINI.as_bytes()), 0);
        assert_eq!(score("/x/s.json", QWEN.as_bytes()), 0);
        assert_eq!(score("/x/s.jsonl", b"garbage"), 0);
    }
}
