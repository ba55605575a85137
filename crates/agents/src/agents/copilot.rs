//! GitHub Copilot CLI: deja's MCP server in `mcpServers.deja` of
//! `~/.copilot/mcp-config.json` (`$COPILOT_HOME` replaces the folder), in
//! the form `copilot mcp add deja -- DEJA mcp` writes (`{"type": "local",
//! "command": ..., "args": ["mcp"], "tools": ["*"]}`; `tools` is the list of
//! the server's tools offered to the model, not an approval). Copilot CLI
//! asks before each tool call unless `--allow-tool` says otherwise; setup
//! approves nothing, and gives no session-start digest.

use std::path::PathBuf;

use anyhow::Result;
use serde_json::json;

use super::edit::{Entry, FileWiring, Kind};
use super::{Agent, Env, Provides};

/// Copilot CLI's folder: `$COPILOT_HOME`, else `~/.copilot`.
pub fn copilot_home(env: &Env) -> PathBuf {
    super::env_path("COPILOT_HOME").unwrap_or_else(|| env.home().join(".copilot"))
}

/// GitHub Copilot CLI.
pub struct Copilot;

impl Agent for Copilot {
    fn name(&self) -> &'static str {
        "copilot"
    }
    fn title(&self) -> &'static str {
        "Copilot CLI"
    }
    fn provides(&self) -> Provides {
        Provides {
            mcp: true,
            session_start: None,
            failure_notes: false,
        }
    }
    fn found(&self, env: &Env) -> Option<String> {
        super::found_at(&copilot_home(env), "copilot")
    }
    fn files(&self, env: &Env) -> Result<Vec<FileWiring>> {
        let mut server = json!({
            "type": "local",
            "command": env.exe_text(),
            "args": ["mcp"],
            "tools": ["*"],
        });
        let vars = super::server_env_json();
        if vars.as_object().is_some_and(|o| !o.is_empty()) {
            server["env"] = vars;
        }
        Ok(vec![FileWiring {
            path: copilot_home(env).join("mcp-config.json"),
            kind: Kind::Json(vec![Entry::Key {
                path: vec!["mcpServers", "deja"],
                value: server,
                ours: super::is_deja_server,
            }]),
        }])
    }
    fn hint(&self) -> Option<&'static str> {
        Some("Copilot CLI asks before each of deja's tools runs; `copilot --allow-tool 'deja(recall)'` allows one without asking")
    }
}
