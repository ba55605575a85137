//! What an agent's hook sends on stdin: the session's id and folder, and for
//! a failed tool call, the failure's text as each agent reports it.

use std::io::Read;
use std::path::PathBuf;

use serde_json::Value;

/// Most bytes of the hook's input read.
const MAX_INPUT: u64 = 1 << 20;

/// What the agent sent.
#[derive(Debug, Default)]
pub struct Input {
    /// The hook's JSON (`Value::Null` when none could be read).
    pub json: Value,
}

impl Input {
    /// Reads the hook's input from stdin.
    pub fn read() -> Input {
        let mut text = String::new();
        let _ = std::io::stdin().take(MAX_INPUT).read_to_string(&mut text);
        Input {
            json: serde_json::from_str(&text).unwrap_or(Value::Null),
        }
    }

    fn str(&self, key: &str) -> Option<&str> {
        self.json[key].as_str().filter(|s| !s.trim().is_empty())
    }

    /// The session's working folder.
    pub fn cwd(&self) -> Option<PathBuf> {
        self.str("cwd").map(PathBuf::from)
    }

    /// The harness's id of the session that asks.
    pub fn session_id(&self) -> Option<&str> {
        self.str("session_id")
    }

    /// The failure's text: the `error` field (Claude Code, Qwen Code), else a
    /// tool response's `error` or stderr, else, for a shell command that
    /// exited non-zero, its output as the agent reports it (Gemini CLI's
    /// AfterTool: `llmContent` with `Exit Code: N`). `None`: no failure.
    pub fn error(&self) -> Option<String> {
        if let Some(e) = self.str("error") {
            return Some(e.to_string());
        }
        let response = &self.json["tool_response"];
        let error = &response["error"];
        if let Some(e) = error.as_str().or_else(|| error["message"].as_str()) {
            return Some(e.to_string());
        }
        if let Some(e) = response["stderr"].as_str().filter(|e| !e.trim().is_empty()) {
            return Some(e.to_string());
        }
        let content = match &response["llmContent"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => return None,
        };
        let failed = content.lines().any(|l| {
            l.trim()
                .strip_prefix("Exit Code:")
                .map(str::trim)
                .is_some_and(|code| !code.is_empty() && code != "0" && code != "(none)")
        });
        failed.then_some(content)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_read_from_each_agents_input() {
        let input = |v: Value| Input { json: v };
        let claude = input(serde_json::json!({"error": "Exit code 1\nboom"}));
        assert_eq!(claude.error().as_deref(), Some("Exit code 1\nboom"));
        let gemini = |content: &str| {
            input(
                serde_json::json!({"tool_response": {"llmContent": content, "returnDisplay": ""}}),
            )
        };
        let failed = gemini("Command: make\nOutput: Error: no rule\nExit Code: 2\n");
        assert!(failed.error().unwrap().contains("no rule"));
        assert_eq!(
            gemini("Command: ls\nOutput: a b\nExit Code: 0\n").error(),
            None
        );
        assert_eq!(gemini("Command: ls\nOutput: a b\n").error(), None);
        let object = input(serde_json::json!({"tool_response": {"error": {"message": "denied"}}}));
        assert_eq!(object.error().as_deref(), Some("denied"));
        assert_eq!(input(Value::Null).error(), None);
    }
}
