//! Gemini CLI: a `deja` extension under the user's Gemini home whose manifest
//! declares the MCP server (`deja mcp`, this executable's absolute path) and
//! whose hooks file adds the project's digest at SessionStart and, after a
//! shell command that failed (AfterTool on `run_shell_command`), the note of an
//! earlier session that met the same error. The extension
//! lives in its own folder, beside a user policy file of deja's that allows
//! its three read-only tools by name (`policies/deja.toml`): no settings file
//! of the user's is touched. Every file goes through [`edit`] as a file deja
//! owns, and `--undo` removes exactly those, then the extension's folders
//! when nothing else is in them (a file the user added there stays).

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::edit::{self, FileWiring, Kind};
use super::{Agent, Env, Provides};
use crate::json::setup as out;

/// The name of deja's Gemini CLI extension (and its folder).
const EXTENSION: &str = "deja";
/// The file that marks an extension folder as written by `deja setup`.
const MARKER: &str = ".deja-setup.json";

/// Gemini CLI's home: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
pub fn gemini_home(home: &Path) -> PathBuf {
    match std::env::var_os("GEMINI_CLI_HOME").filter(|v| !v.is_empty()) {
        Some(h) => PathBuf::from(h).join(".gemini"),
        None => home.join(".gemini"),
    }
}

/// deja's extension folder under the Gemini home.
pub fn gemini_extension_dir(home: &Path) -> PathBuf {
    gemini_home(home).join("extensions").join(EXTENSION)
}

/// The files of deja's Gemini CLI extension: (path below the folder, content).
pub fn gemini_files(exe: &Path) -> Vec<(&'static str, String)> {
    let exe_text = exe.to_string_lossy().into_owned();
    let env = super::server_env();
    let hook_command = Env::command_for(exe, "context --hook gemini");
    let failure_command = Env::command_for(exe, "context --hook gemini --on tool-failure");
    let manifest = out::GeminiManifest {
        description: "deja: memory of past coding-agent sessions (MCP tools recall, session, sessions; the project's digest at session start)",
        mcp_servers: out::McpServers {
            deja: out::McpServer {
                args: &["mcp"],
                command: &exe_text,
                env,
            },
        },
        name: EXTENSION,
        version: env!("CARGO_PKG_VERSION"),
    };
    let hooks = out::GeminiHooks {
        hooks: out::HookEvents {
            after_tool: vec![out::HookGroup {
                hooks: vec![out::HookCommand {
                    command: failure_command,
                    description: "When a command fails: the earlier session that met the same error, from deja",
                    name: "deja-failure-note",
                    timeout: 5000,
                    kind: "command",
                }],
                matcher: Some("run_shell_command"),
            }],
            session_start: vec![out::HookGroup {
                hooks: vec![out::HookCommand {
                    command: hook_command,
                    description: "The project's memory from deja",
                    name: "deja-context",
                    timeout: 5000,
                    kind: "command",
                }],
                matcher: None,
            }],
        },
    };
    let marker = out::Marker {
        files: &["gemini-extension.json", "hooks/hooks.json"],
        written_by: "deja setup gemini",
    };
    fn pretty(v: &impl serde::Serialize) -> String {
        format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
    }
    vec![
        ("gemini-extension.json", pretty(&manifest)),
        ("hooks/hooks.json", pretty(&hooks)),
        (MARKER, pretty(&marker)),
    ]
}

/// The first line of deja's policy file.
const POLICY_MARKER: &str = "# deja: allows deja's MCP tools, which only read the memory. Written by `deja setup gemini`; `deja setup gemini --undo` removes it.";

/// A user policy of Gemini CLI's policy engine (`~/.gemini/policies/`) that
/// allows deja's tools without a prompt, as `deja setup claude` does for
/// Claude Code: an extension's own policies may not allow anything, and
/// `gemini -p` offers the model no tool that would need asking.
fn policy(home: &Path) -> FileWiring {
    FileWiring {
        path: gemini_home(home).join("policies").join("deja.toml"),
        kind: Kind::Owned {
            marker: Some(POLICY_MARKER),
            text: std::iter::once(format!("{POLICY_MARKER}\n"))
                .chain(super::TOOLS.iter().map(|t| {
                    format!(
                        "[[rule]]\nmcpName = \"{EXTENSION}\"\ntoolName = \"{t}\"\ndecision = \"allow\"\npriority = 100\n"
                    )
                }))
                .collect(),
            legacy: None,
        },
    }
}

/// The extension's files as files deja owns: the marker file first (an
/// earlier deja's marker says the other two are deja's), so that undo,
/// which goes in reverse, removes it last, with the folder.
fn extension_files(home: &Path, exe: &Path) -> Vec<FileWiring> {
    let dir = gemini_extension_dir(home);
    let mut files: Vec<FileWiring> = gemini_files(exe)
        .into_iter()
        .map(|(name, text)| FileWiring {
            path: dir.join(name),
            kind: Kind::Owned {
                marker: None,
                text,
                legacy: (name != MARKER).then(|| dir.join(MARKER)),
            },
        })
        .collect();
    files.rotate_right(1);
    files
}

/// Gemini CLI.
pub struct Gemini;

impl Agent for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }
    fn title(&self) -> &'static str {
        "Gemini CLI"
    }
    fn provides(&self) -> Provides {
        Provides {
            mcp: true,
            session_start: Some("SessionStart hook of deja's extension"),
            failure_notes: true,
        }
    }
    fn found(&self, env: &Env) -> Option<String> {
        super::found_at(&gemini_home(env.home()), "gemini")
    }
    fn files(&self, env: &Env) -> Result<Vec<FileWiring>> {
        let mut files = extension_files(env.home(), &env.exe);
        files.push(policy(env.home()));
        Ok(files)
    }
    fn undo(&self, env: &Env, dry_run: bool) -> Result<Vec<String>> {
        let state = env.state(self.name());
        let files: Vec<FileWiring> = self.files(env)?.into_iter().rev().collect();
        let mut changes = Vec::new();
        for f in &files {
            changes.extend(edit::undo(f, &state, true)?);
        }
        if dry_run {
            return Ok(changes);
        }
        let mut changes = Vec::new();
        for f in &files {
            changes.extend(edit::undo(f, &state, false)?);
        }
        // The extension's folders, when deja's files were all they held
        // (an earlier deja kept no record of the folders it made).
        let dir = gemini_extension_dir(env.home());
        for d in [dir.join("hooks"), dir.clone()] {
            let _ = std::fs::remove_dir(d);
        }
        if let Some(parent) = dir.parent() {
            if std::fs::remove_dir(parent).is_ok() {
                changes.push(format!("remove {} (empty)", parent.display()));
            }
        }
        Ok(changes)
    }
    fn hint(&self) -> Option<&'static str> {
        // Gemini CLI shows an extension's MCP server as "Disabled" in a
        // folder it does not trust, and says nothing else.
        Some("Gemini CLI runs deja's MCP server only in folders you trust: answer its trust prompt, or run `/permissions` in gemini (trusted folders are kept in ~/.gemini/trustedFolders.json)")
    }
}
