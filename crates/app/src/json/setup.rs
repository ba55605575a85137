//! The files `deja setup` writes: deja's Gemini CLI extension (its manifest,
//! its hooks file and deja's marker, in Gemini CLI's formats) and the state
//! kept to undo the aider change.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

/// `gemini-extension.json`: the extension's manifest.
#[derive(Debug, Clone, Serialize)]
pub struct GeminiManifest<'a> {
    /// What the extension does.
    pub description: &'a str,
    /// The MCP servers it declares.
    #[serde(rename = "mcpServers")]
    pub mcp_servers: McpServers<'a>,
    /// The extension's name.
    pub name: &'a str,
    /// The extension's version (deja's).
    pub version: &'a str,
}

/// The MCP servers of the extension: deja's only.
#[derive(Debug, Clone, Serialize)]
pub struct McpServers<'a> {
    /// `deja mcp`.
    pub deja: McpServer<'a>,
}

/// How Gemini CLI starts an MCP server.
#[derive(Debug, Clone, Serialize)]
pub struct McpServer<'a> {
    /// The arguments.
    pub args: &'a [&'a str],
    /// The program, absolute.
    pub command: &'a str,
    /// Variables passed to it, by name (absent when none).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<&'a str, String>,
}

/// `hooks/hooks.json`: the extension's hooks.
#[derive(Debug, Clone, Serialize)]
pub struct GeminiHooks<'a> {
    /// The hooks, by event.
    pub hooks: HookEvents<'a>,
}

/// The hooks of each event.
#[derive(Debug, Clone, Serialize)]
pub struct HookEvents<'a> {
    /// After a tool ran (deja answers only for a failed shell command).
    #[serde(rename = "AfterTool")]
    pub after_tool: Vec<HookGroup<'a>>,
    /// At session start.
    #[serde(rename = "SessionStart")]
    pub session_start: Vec<HookGroup<'a>>,
}

/// A group of hooks.
#[derive(Debug, Clone, Serialize)]
pub struct HookGroup<'a> {
    /// The hooks.
    pub hooks: Vec<HookCommand<'a>>,
    /// The tools it applies to (absent: every one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matcher: Option<&'a str>,
}

/// A hook that runs a command.
#[derive(Debug, Clone, Serialize)]
pub struct HookCommand<'a> {
    /// The shell command.
    pub command: String,
    /// What it adds.
    pub description: &'a str,
    /// Its name.
    pub name: &'a str,
    /// Milliseconds Gemini CLI waits for it.
    pub timeout: u64,
    /// `command`.
    #[serde(rename = "type")]
    pub kind: &'a str,
}

/// `.deja-setup.json`: marks the extension folder as deja's.
#[derive(Debug, Clone, Serialize)]
pub struct Marker<'a> {
    /// The files setup wrote there.
    pub files: &'a [&'a str],
    /// `deja setup gemini`.
    pub written_by: &'a str,
}

/// What setup keeps to undo its aider change.
#[derive(Debug, Clone, Serialize)]
pub struct AiderState<'a> {
    /// Whether setup created `~/.aider.conf.yml` (else it backed it up).
    pub created: bool,
    /// `~/.aider.conf.yml`.
    pub file: &'a Path,
    /// The SHA-256 of what setup wrote, to tell whether it was edited since.
    pub written_sha256: String,
}

/// `deja setup --json`: one agent, as setup sees it.
#[derive(Debug, Clone, Serialize)]
pub struct Agent {
    /// What `deja setup AGENT` would change (empty when wired).
    pub changes: Vec<String>,
    /// Whether it gets the note when a command fails.
    pub failure_notes: bool,
    /// Where it was found; `null` when it is not on this machine.
    pub found: Option<String>,
    /// Whether it gets deja's MCP tools.
    pub mcp: bool,
    /// The name `deja setup` takes.
    pub name: &'static str,
    /// How it gets the digest at session start; `null` when it cannot.
    pub session_start: Option<&'static str>,
    /// `wired`, `not wired`, `stale` or `unknown`.
    pub status: &'static str,
    /// The agent's own name.
    pub title: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::keys;

    #[test]
    fn field_names() {
        let manifest = GeminiManifest {
            description: "d",
            mcp_servers: McpServers {
                deja: McpServer {
                    args: &["mcp"],
                    command: "/bin/deja",
                    env: BTreeMap::from([("DEJA_HOME", "/h".to_string())]),
                },
            },
            name: "deja",
            version: "0.1.0",
        };
        assert_eq!(
            keys(&manifest),
            ["description", "mcpServers", "name", "version"]
        );
        assert_eq!(keys(&manifest.mcp_servers), ["deja"]);
        assert_eq!(keys(&manifest.mcp_servers.deja), ["args", "command", "env"]);
        let hooks = GeminiHooks {
            hooks: HookEvents {
                after_tool: Vec::new(),
                session_start: vec![HookGroup {
                    matcher: None,
                    hooks: vec![HookCommand {
                        command: "deja context --hook gemini".into(),
                        description: "d",
                        name: "deja-context",
                        timeout: 5000,
                        kind: "command",
                    }],
                }],
            },
        };
        assert_eq!(keys(&hooks), ["hooks"]);
        assert_eq!(keys(&hooks.hooks), ["AfterTool", "SessionStart"]);
        assert_eq!(keys(&hooks.hooks.session_start[0]), ["hooks"]);
        assert_eq!(
            keys(&hooks.hooks.session_start[0].hooks[0]),
            ["command", "description", "name", "timeout", "type"]
        );
        let marker = Marker {
            files: &[],
            written_by: "deja setup gemini",
        };
        assert_eq!(keys(&marker), ["files", "written_by"]);
        let state = AiderState {
            created: true,
            file: Path::new("/h/.aider.conf.yml"),
            written_sha256: String::new(),
        };
        assert_eq!(keys(&state), ["created", "file", "written_sha256"]);
    }
}
