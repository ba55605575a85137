//! Qwen Code: deja's MCP server (`mcpServers.deja`) and two hooks in
//! `~/.qwen/settings.json` (`$QWEN_HOME` moves the folder): the project's
//! digest at every SessionStart (startup, resume, clear, compact) and a note
//! when a shell command fails that an earlier session met
//! (PostToolUseFailure on `run_shell_command`). Qwen Code's hooks take the
//! Claude Code form (its `docs/features/hooks.md`).

use std::path::PathBuf;

use anyhow::Result;
use serde_json::{json, Value};

use super::edit::{Entry, FileWiring, Kind};
use super::{Agent, Env, Provides};

/// Qwen Code's folder: `$QWEN_HOME`, else `~/.qwen`.
pub fn qwen_home(env: &Env) -> PathBuf {
    super::env_path("QWEN_HOME").unwrap_or_else(|| env.home().join(".qwen"))
}

fn is_deja_hook(v: &Value) -> bool {
    v.to_string().contains(" context --hook qwen")
}

/// Qwen Code.
pub struct Qwen;

impl Agent for Qwen {
    fn name(&self) -> &'static str {
        "qwen"
    }
    fn title(&self) -> &'static str {
        "Qwen Code"
    }
    fn provides(&self) -> Provides {
        Provides {
            mcp: true,
            session_start: Some("SessionStart hook (startup, resume, clear, compact)"),
            failure_notes: true,
        }
    }
    fn found(&self, env: &Env) -> Option<String> {
        super::found_at(&qwen_home(env), "qwen")
    }
    fn files(&self, env: &Env) -> Result<Vec<FileWiring>> {
        let hook = |args: &str, timeout: u64| json!({"type": "command", "command": env.command(args), "name": "deja", "timeout": timeout});
        Ok(vec![FileWiring {
            path: qwen_home(env).join("settings.json"),
            kind: Kind::Json(vec![
                Entry::Key {
                    path: vec!["mcpServers", "deja"],
                    value: json!({
                        "command": env.exe_text(),
                        "args": ["mcp"],
                        "env": super::server_env_json(),
                        // deja's tools only read: no confirmation per call.
                        "trust": true,
                    }),
                },
                Entry::Item {
                    path: vec!["hooks", "SessionStart"],
                    value: json!({"hooks": [hook("context --hook qwen", 10)]}),
                    ours: is_deja_hook,
                },
                Entry::Item {
                    path: vec!["hooks", "PostToolUseFailure"],
                    value: json!({
                        "matcher": "run_shell_command",
                        "hooks": [hook("context --hook qwen --on tool-failure", 5)],
                    }),
                    ours: is_deja_hook,
                },
            ]),
        }])
    }
}
