//! Claude Code: deja's MCP server at user scope (`mcpServers.deja` in
//! `~/.claude.json`, what `claude mcp add -s user` writes), its three tools
//! allowed by name (`permissions.allow`: `mcp__deja__recall`, …), and two hooks in `~/.claude/settings.json`: the
//! project's digest at every SessionStart (startup, resume, clear and after
//! compaction) and a note when a Bash command fails that an earlier session
//! met (PostToolUseFailure). `$CLAUDE_CONFIG_DIR` moves both files, as it
//! does for Claude Code.

use std::path::PathBuf;

use anyhow::Result;
use serde_json::{json, Value};

use super::edit::{Entry, FileWiring, Kind};
use super::{Agent, Env, Provides};

/// Claude Code's folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn config_dir(env: &Env) -> PathBuf {
    super::env_path("CLAUDE_CONFIG_DIR").unwrap_or_else(|| env.home().join(".claude"))
}

/// The file of user-scope MCP servers: `.claude.json` in
/// `$CLAUDE_CONFIG_DIR`, else in the home folder.
pub fn global_config(env: &Env) -> PathBuf {
    super::env_path("CLAUDE_CONFIG_DIR")
        .unwrap_or_else(|| env.home().to_path_buf())
        .join(".claude.json")
}

/// Whether a `permissions.allow` rule is deja's: one of its tools by name,
/// or the whole server (what earlier versions allowed).
fn is_allow(v: &Value) -> bool {
    v.as_str().is_some_and(|s| {
        s == "mcp__deja"
            || super::TOOLS
                .iter()
                .any(|t| s.strip_prefix("mcp__deja__") == Some(t))
    })
}

/// Claude Code.
pub struct Claude;

impl Agent for Claude {
    fn name(&self) -> &'static str {
        "claude"
    }
    fn title(&self) -> &'static str {
        "Claude Code"
    }
    fn provides(&self) -> Provides {
        Provides {
            mcp: true,
            session_start: Some("SessionStart hook (startup, resume, clear, compact)"),
            failure_notes: true,
        }
    }
    fn found(&self, env: &Env) -> Option<String> {
        super::found_at(&config_dir(env), "claude")
    }
    fn files(&self, env: &Env) -> Result<Vec<FileWiring>> {
        let server = json!({
            "type": "stdio",
            "command": env.exe_text(),
            "args": ["mcp"],
            "env": super::server_env_json(),
        });
        Ok(vec![
            FileWiring {
                path: global_config(env),
                kind: Kind::Json(vec![Entry::Key {
                    path: vec!["mcpServers", "deja"],
                    value: server,
                    ours: super::is_deja_server,
                }]),
            },
            FileWiring {
                path: config_dir(env).join("settings.json"),
                kind: Kind::Json(
                    super::TOOLS
                        .iter()
                        .map(|t| Entry::Item {
                            path: vec!["permissions", "allow"],
                            value: json!(format!("mcp__deja__{t}")),
                            ours: is_allow,
                        })
                        .chain(super::claude_form_hooks(env, "claude", None, Some("Bash")))
                        .collect(),
                ),
            },
        ])
    }
    fn hint(&self) -> Option<&'static str> {
        // Claude Code rewrites ~/.claude.json while it runs.
        Some("quit Claude Code before setup or undo (it rewrites ~/.claude.json while it runs; setup reads a file that changed under it again), and start it again to use deja")
    }
}
