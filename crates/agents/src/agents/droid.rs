//! Factory's droid: deja's MCP server in `mcpServers.deja` of
//! `~/.factory/mcp.json` (`$FACTORY_HOME_OVERRIDE` takes the place of the
//! home folder), as droid's own schema has a local server:
//! `{"type": "stdio", "command": ..., "args": ["mcp"], "env": {...}}`, and
//! the project's digest from a SessionStart hook in the Claude Code form in
//! `hooks` of `~/.factory/settings.json` (droid reads hooks there and from
//! `hooks.json`). Setup approves nothing (droid's autonomy level decides).

use std::path::PathBuf;

use anyhow::Result;
use serde_json::json;

use super::edit::{Entry, FileWiring, Kind};
use super::{Agent, Env, Provides};

/// droid's folder: `$FACTORY_HOME_OVERRIDE/.factory`, else `~/.factory`.
pub fn factory_dir(env: &Env) -> PathBuf {
    super::env_path("FACTORY_HOME_OVERRIDE")
        .unwrap_or_else(|| env.home().to_path_buf())
        .join(".factory")
}

/// Factory's droid.
pub struct Droid;

impl Agent for Droid {
    fn name(&self) -> &'static str {
        "droid"
    }
    fn title(&self) -> &'static str {
        "Factory droid"
    }
    fn provides(&self) -> Provides {
        Provides {
            mcp: true,
            session_start: Some("SessionStart hook in settings.json"),
            failure_notes: false,
        }
    }
    fn found(&self, env: &Env) -> Option<String> {
        super::found_at(&factory_dir(env), "droid")
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
        Ok(vec![
            FileWiring {
                path: factory_dir(env).join("mcp.json"),
                kind: Kind::Json(vec![Entry::Key {
                    path: vec!["mcpServers", "deja"],
                    value: server,
                    ours: super::is_deja_server,
                }]),
            },
            FileWiring {
                path: factory_dir(env).join("settings.json"),
                kind: Kind::Json(super::claude_form_hooks(env, "droid", None, None)),
            },
        ])
    }
}
