//! Cline's CLI: deja's MCP server in `mcpServers.deja` of
//! `~/.cline/data/settings/cline_mcp_settings.json` (`$CLINE_DIR` moves
//! `~/.cline`, `$CLINE_DATA_DIR` its `data` folder, and
//! `$CLINE_MCP_SETTINGS_PATH` names the file itself), in the stdio form its
//! settings schema takes: `{"type": "stdio", "command": ..., "args":
//! ["mcp"], "env": {...}}`. Setup approves nothing (the CLI's tool policy
//! decides) and gives no session-start digest.

use std::path::PathBuf;

use anyhow::Result;
use serde_json::json;

use super::edit::{Entry, FileWiring, Kind};
use super::{Agent, Env, Provides};

/// The CLI's folder: `$CLINE_DIR`, else `~/.cline`.
pub fn cline_dir(env: &Env) -> PathBuf {
    super::env_path("CLINE_DIR").unwrap_or_else(|| env.home().join(".cline"))
}

/// The CLI's MCP settings file, as its storage code finds it.
pub fn mcp_settings(env: &Env) -> PathBuf {
    super::env_path("CLINE_MCP_SETTINGS_PATH").unwrap_or_else(|| {
        super::env_path("CLINE_DATA_DIR")
            .unwrap_or_else(|| cline_dir(env).join("data"))
            .join("settings")
            .join("cline_mcp_settings.json")
    })
}

/// Cline's CLI.
pub struct Cline;

impl Agent for Cline {
    fn name(&self) -> &'static str {
        "cline"
    }
    fn title(&self) -> &'static str {
        "Cline CLI"
    }
    fn provides(&self) -> Provides {
        Provides {
            mcp: true,
            session_start: None,
            failure_notes: false,
        }
    }
    fn found(&self, env: &Env) -> Option<String> {
        super::found_at(&cline_dir(env), "cline")
    }
    fn files(&self, env: &Env) -> Result<Vec<FileWiring>> {
        let mut server = json!({
            "type": "stdio",
            "command": env.exe_text(),
            "args": ["mcp"],
        });
        let vars = super::server_env_json();
        if vars.as_object().is_some_and(|o| !o.is_empty()) {
            server["env"] = vars;
        }
        Ok(vec![FileWiring {
            path: mcp_settings(env),
            kind: Kind::Json(vec![Entry::Key {
                path: vec!["mcpServers", "deja"],
                value: server,
                ours: super::is_deja_server,
            }]),
        }])
    }
}
