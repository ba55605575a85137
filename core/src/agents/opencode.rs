//! OpenCode: deja's MCP server in the `mcp` block of
//! `~/.config/opencode/opencode.json` (`$XDG_CONFIG_HOME` moves it;
//! `{"type": "local", "command": [...]}`, the form `opencode mcp add`
//! writes), and a plugin file of deja's own in the `plugin/` folder beside
//! it (OpenCode loads `{plugin,plugins}/*.{js,ts}` from its config folders)
//! that adds the project's digest to the system prompt
//! (`experimental.chat.system.transform`).

use std::path::PathBuf;

use anyhow::Result;
use serde_json::json;

use super::edit::{Entry, FileWiring, Kind};
use super::{Agent, Env, Provides};

/// The first line of deja's plugin file.
const PLUGIN_MARKER: &str =
    "// deja: the project's memory at session start. Written by `deja setup opencode`; `deja setup opencode --undo` removes it.";

/// OpenCode's config folder: `$XDG_CONFIG_HOME/opencode`, else
/// `~/.config/opencode`.
pub fn config_dir(env: &Env) -> PathBuf {
    super::env_path("XDG_CONFIG_HOME")
        .unwrap_or_else(|| env.home().join(".config"))
        .join("opencode")
}

/// deja's plugin: runs `deja context --project DIR` once when OpenCode
/// loads it, and adds the digest to each request's system prompt.
pub fn plugin_text(env: &Env) -> String {
    let exe = serde_json::to_string(&env.exe_text()).unwrap_or_default();
    let vars = serde_json::to_string(&super::server_env_json()).unwrap_or_default();
    format!(
        r#"{PLUGIN_MARKER}
import {{ execFileSync }} from "node:child_process";

export const DejaMemory = async ({{ directory }}) => {{
  let digest = "";
  try {{
    digest = execFileSync({exe}, ["context", "--project", directory], {{
      env: {{ ...process.env, ...{vars} }},
      encoding: "utf8",
      timeout: 10000,
      stdio: ["ignore", "pipe", "ignore"],
    }});
  }} catch {{
    digest = "";
  }}
  return {{
    "experimental.chat.system.transform": async (_input, output) => {{
      if (digest.trim()) output.system.push(digest);
    }},
  }};
}};
"#
    )
}

/// OpenCode.
pub struct OpenCode;

impl Agent for OpenCode {
    fn name(&self) -> &'static str {
        "opencode"
    }
    fn title(&self) -> &'static str {
        "OpenCode"
    }
    fn provides(&self) -> Provides {
        Provides {
            mcp: true,
            session_start: Some("a plugin that adds the digest to the system prompt"),
            failure_notes: false,
        }
    }
    fn found(&self, env: &Env) -> Option<String> {
        super::found_at(&config_dir(env), "opencode")
    }
    fn files(&self, env: &Env) -> Result<Vec<FileWiring>> {
        let dir = config_dir(env);
        let mut server = json!({
            "type": "local",
            "command": [env.exe_text(), "mcp"],
            "enabled": true,
        });
        let vars = super::server_env_json();
        if vars.as_object().is_some_and(|o| !o.is_empty()) {
            server["environment"] = vars;
        }
        Ok(vec![
            FileWiring {
                path: dir.join("opencode.json"),
                kind: Kind::Json(vec![Entry::Key {
                    path: vec!["mcp", "deja"],
                    value: server,
                }]),
            },
            FileWiring {
                path: dir.join("plugin").join("deja.js"),
                kind: Kind::Owned {
                    marker: PLUGIN_MARKER,
                    text: plugin_text(env),
                },
            },
        ])
    }
}
