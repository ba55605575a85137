//! Codex CLI: deja's MCP server as `[mcp_servers.deja]`, a block appended to
//! `$CODEX_HOME/config.toml` (default `~/.codex`) that leaves every other
//! line of the file as it was, and the project's digest at SessionStart in
//! `$CODEX_HOME/hooks.json` (Codex's hooks, in the Claude Code form). Codex
//! runs a new hook only once the user has trusted it (`/hooks` in codex;
//! `codex exec --dangerously-bypass-hook-trust` for a one-off run), which
//! setup says.

use std::path::PathBuf;

use anyhow::Result;

use super::edit::{FileWiring, Kind};
use super::{Agent, Env, Provides};

/// Codex's folder: `$CODEX_HOME`, else `~/.codex`.
pub fn codex_home(env: &Env) -> PathBuf {
    super::env_path("CODEX_HOME").unwrap_or_else(|| env.home().join(".codex"))
}

/// A TOML string literal.
fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// deja's block in `config.toml`.
pub fn server_block(env: &Env) -> String {
    let mut text = String::from(
        "# deja's MCP server, added by `deja setup codex` (`deja setup codex --undo` takes it out)\n[mcp_servers.deja]\n",
    );
    text.push_str(&format!("command = {}\n", toml_str(&env.exe_text())));
    text.push_str("args = [\"mcp\"]\n");
    let vars = super::server_env();
    if !vars.is_empty() {
        let items: Vec<String> = vars
            .iter()
            .map(|(k, v)| format!("{k} = {}", toml_str(v)))
            .collect();
        text.push_str(&format!("env = {{ {} }}\n", items.join(", ")));
    }
    // deja's tools only read, each approved by name; without this `codex
    // exec` refuses every call ("requires approval, but approval policy is
    // never"). A tool a later deja adds is asked about.
    for t in super::TOOLS {
        text.push_str(&format!(
            "[mcp_servers.deja.tools.{t}]\napproval_mode = \"approve\"\n"
        ));
    }
    text
}

/// Codex CLI.
pub struct Codex;

impl Agent for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }
    fn title(&self) -> &'static str {
        "Codex CLI"
    }
    fn provides(&self) -> Provides {
        Provides {
            mcp: true,
            session_start: Some("SessionStart hook in hooks.json (once trusted in `/hooks`)"),
            failure_notes: false,
        }
    }
    fn found(&self, env: &Env) -> Option<String> {
        super::found_at(&codex_home(env), "codex")
    }
    fn files(&self, env: &Env) -> Result<Vec<FileWiring>> {
        let home = codex_home(env);
        Ok(vec![
            FileWiring {
                path: home.join("config.toml"),
                kind: Kind::TomlBlock {
                    table: vec!["mcp_servers", "deja"],
                    text: server_block(env),
                },
            },
            FileWiring {
                path: home.join("hooks.json"),
                kind: Kind::Json(super::claude_form_hooks(env, "codex", None, None)),
            },
        ])
    }
    fn hint(&self) -> Option<&'static str> {
        Some("Codex runs a new hook only once you trust it: open `/hooks` in codex and trust deja's SessionStart hook (deja's MCP tools work without this)")
    }
}
