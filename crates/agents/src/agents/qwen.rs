//! Qwen Code: deja's MCP server (`mcpServers.deja`), its three tools allowed
//! by name (`permissions.allow`: `mcp__deja__recall`, …) and two hooks in
//! `~/.qwen/settings.json` (`$QWEN_HOME` moves the folder): the project's
//! digest at every SessionStart (startup, resume, clear, compact) and a note
//! when a shell command fails that an earlier session met
//! (PostToolUseFailure on `run_shell_command`). Qwen Code's hooks take the
//! Claude Code form (its `docs/features/hooks.md`).

use std::path::PathBuf;

use anyhow::Result;
use serde_json::json;

use super::edit::{Entry, FileWiring, Kind};
use super::{Agent, Env, Provides};

/// Qwen Code's folder: `$QWEN_HOME`, else `~/.qwen`.
pub fn qwen_home(env: &Env) -> PathBuf {
    super::env_path("QWEN_HOME").unwrap_or_else(|| env.home().join(".qwen"))
}

/// Whether a `permissions.allow` rule is one of deja's tools.
fn is_allow(v: &serde_json::Value) -> bool {
    v.as_str().is_some_and(|s| {
        super::TOOLS
            .iter()
            .any(|t| s.strip_prefix("mcp__deja__") == Some(t))
    })
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
        Ok(vec![FileWiring {
            path: qwen_home(env).join("settings.json"),
            kind: Kind::Json(
                std::iter::once(Entry::Key {
                    path: vec!["mcpServers", "deja"],
                    value: json!({
                        "command": env.exe_text(),
                        "args": ["mcp"],
                        "env": super::server_env_json(),
                    }),
                    ours: super::is_deja_server,
                })
                // deja's tools only read: no confirmation per call, tool by tool.
                .chain(super::TOOLS.iter().map(|t| Entry::Item {
                    path: vec!["permissions", "allow"],
                    value: json!(format!("mcp__deja__{t}")),
                    ours: is_allow,
                }))
                .chain(super::claude_form_hooks(
                    env,
                    "qwen",
                    Some("deja"),
                    Some("run_shell_command"),
                ))
                .collect(),
            ),
        }])
    }
}
