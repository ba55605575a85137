//! OpenCode: deja's MCP server in the `mcp` block of
//! `~/.config/opencode/opencode.json` (`$XDG_CONFIG_HOME` moves it;
//! `{"type": "local", "command": [...]}`, the form `opencode mcp add`
//! writes), and a plugin file of deja's own in the `plugin/` folder beside
//! it (OpenCode loads `{plugin,plugins}/*.{js,ts}` from its config folders)
//! that puts the project's digest before the first user message of each
//! conversation (`experimental.chat.messages.transform`), not in the system
//! prompt.
//!
//! The wiring is [`OpenCodeFamily`], one value per agent of OpenCode's
//! family: forks that keep its config format and plugin loader under their
//! own folder and file names (Kilo CLI, [`super::kilo`]).

use std::path::PathBuf;

use anyhow::Result;
use serde_json::json;

use super::edit::{Entry, FileWiring, Kind};
use super::{Agent, Env, Provides};

/// An agent of OpenCode's family: its `mcp` block of `{"type": "local",
/// "command": [...]}` servers in a JSON config file of its global config
/// folder, and plugins it loads from `{plugin,plugins}/*.{js,ts}` there.
pub struct OpenCodeFamily {
    /// The name `deja setup` takes, also the program's name on `PATH`.
    pub name: &'static str,
    /// The agent's own name.
    pub title: &'static str,
    /// The config folder's name under `$XDG_CONFIG_HOME` (`~/.config`).
    pub folder: &'static str,
    /// A variable that replaces the whole config folder, where the agent has
    /// one.
    pub dir_var: Option<&'static str>,
    /// The config file deja's MCP server goes in.
    pub config_file: &'static str,
    /// The first line of deja's plugin file.
    pub marker: &'static str,
}

/// OpenCode.
pub static OPENCODE: OpenCodeFamily = OpenCodeFamily {
    name: "opencode",
    title: "OpenCode",
    folder: "opencode",
    dir_var: None,
    config_file: "opencode.json",
    marker: "// deja: the project's memory at session start. Written by `deja setup opencode`; `deja setup opencode --undo` removes it.",
};

impl OpenCodeFamily {
    /// The agent's global config folder: its variable's folder where it has
    /// one and it is set, else `$XDG_CONFIG_HOME/FOLDER`, else
    /// `~/.config/FOLDER`.
    pub fn config_dir(&self, env: &Env) -> PathBuf {
        if let Some(dir) = self.dir_var.and_then(super::env_path) {
            return dir;
        }
        super::env_path("XDG_CONFIG_HOME")
            .unwrap_or_else(|| env.home().join(".config"))
            .join(self.folder)
    }
}

/// deja's plugin: starts `deja context --project DIR` in the background
/// when OpenCode loads it (OpenCode's start does not wait for it), and puts
/// the digest before the first user message of each conversation, as text
/// of the user's turn (`experimental.chat.messages.transform`), never in the
/// system prompt: recalled text is data, not instructions. The part is
/// added to the request only; OpenCode's stored session stays as it was.
pub fn plugin_text(env: &Env, marker: &str) -> String {
    let exe = serde_json::to_string(&env.exe_text()).unwrap_or_default();
    let vars = serde_json::to_string(&super::server_env_json()).unwrap_or_default();
    format!(
        r#"{marker}
import {{ execFile }} from "node:child_process";

export const DejaMemory = async ({{ directory }}) => {{
  const digest = new Promise((resolve) => {{
    try {{
      execFile(
        {exe},
        ["context", "--project", directory],
        {{ env: {{ ...process.env, ...{vars} }}, encoding: "utf8", timeout: 10000 }},
        (error, stdout) => resolve(error ? "" : String(stdout)),
      );
    }} catch {{
      resolve("");
    }}
  }});
  return {{
    "experimental.chat.messages.transform": async (_input, output) => {{
      const first = (output.messages ?? []).find((m) => m.info?.role === "user");
      if (!first || first.parts.some((p) => p.dejaDigest)) return;
      const text = await digest;
      if (!text.trim()) return;
      first.parts.unshift({{
        id: `${{first.info.id}}-deja`,
        sessionID: first.info.sessionID,
        messageID: first.info.id,
        type: "text",
        text,
        synthetic: true,
        dejaDigest: true,
      }});
    }},
  }};
}};
"#
    )
}

impl Agent for OpenCodeFamily {
    fn name(&self) -> &'static str {
        self.name
    }
    fn title(&self) -> &'static str {
        self.title
    }
    fn provides(&self) -> Provides {
        Provides {
            mcp: true,
            session_start: Some("a plugin that adds the digest before the first user message"),
            failure_notes: false,
        }
    }
    fn found(&self, env: &Env) -> Option<String> {
        super::found_at(&self.config_dir(env), self.name)
    }
    fn files(&self, env: &Env) -> Result<Vec<FileWiring>> {
        let dir = self.config_dir(env);
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
                path: dir.join(self.config_file),
                kind: Kind::Json(vec![Entry::Key {
                    path: vec!["mcp", "deja"],
                    value: server,
                    ours: super::is_deja_server,
                }]),
            },
            FileWiring {
                path: dir.join("plugin").join("deja.js"),
                kind: Kind::Owned {
                    marker: Some(self.marker),
                    text: plugin_text(env, self.marker),
                    legacy: None,
                },
            },
        ])
    }
}
