//! Gemini CLI: a `deja` extension under the user's Gemini home whose manifest
//! declares the MCP server (`deja mcp`, this executable's absolute path) and
//! whose hooks file adds the project's digest at SessionStart and, after a
//! shell command that failed (AfterTool on `run_shell_command`), the note of an
//! earlier session that met the same error. The extension
//! lives in its own folder, beside a user policy file of deja's that allows
//! its read-only tools (`policies/deja.toml`): no settings file of the user's
//! is touched, and `--undo` removes exactly those.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::edit::{self, FileWiring, Kind};
use super::{Agent, Env, Provides, Wiring};
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

/// Compares deja's Gemini extension on disk with what setup writes.
fn gemini_wiring(home: &Path, exe: &Path) -> Result<Wiring> {
    let dir = gemini_extension_dir(home);
    if !dir.exists() {
        return Ok(Wiring::Missing);
    }
    for (name, content) in gemini_files(exe) {
        match std::fs::read_to_string(dir.join(name)) {
            Ok(found) if found == content => {}
            Ok(_) => {
                return Ok(Wiring::Stale(format!(
                    "`{}` differs from what this deja writes",
                    dir.join(name).display()
                )))
            }
            Err(_) => {
                return Ok(Wiring::Stale(format!(
                    "`{}` is missing",
                    dir.join(name).display()
                )))
            }
        }
    }
    Ok(Wiring::Wired)
}

/// Writes `content` to `path` (creating folders) when it differs: atomically,
/// keeping the file's mode (`0644` when new).
fn write_if_changed(
    path: &Path,
    content: &str,
    changes: &mut Vec<String>,
    dry_run: bool,
) -> Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(content) {
        return Ok(());
    }
    changes.push(format!("write {}", path.display()));
    if dry_run {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    deja_fs::atomic_write_with_mode(path, content.as_bytes(), 0o644)?;
    Ok(())
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
            marker: POLICY_MARKER,
            text: format!(
                "{POLICY_MARKER}\n[[rule]]\nmcpName = \"{EXTENSION}\"\ntoolName = \"*\"\ndecision = \"allow\"\npriority = 100\n"
            ),
        },
    }
}

fn undo_gemini(home: &Path, dry_run: bool) -> Result<Vec<String>> {
    let dir = gemini_extension_dir(home);
    let mut changes = Vec::new();
    if !dir.exists() {
        return Ok(changes);
    }
    if !dir.join(MARKER).is_file() {
        bail!(
            "`{}` was not written by `deja setup gemini` (no `{MARKER}`); it is left alone",
            dir.display()
        );
    }
    changes.push(format!("remove {}", dir.display()));
    if dry_run {
        return Ok(changes);
    }
    std::fs::remove_dir_all(&dir).with_context(|| format!("cannot remove `{}`", dir.display()))?;
    // The `extensions` folder goes too when deja's was all it held.
    if let Some(parent) = dir.parent() {
        if std::fs::read_dir(parent).is_ok_and(|mut d| d.next().is_none()) {
            changes.push(format!("remove {} (empty)", parent.display()));
            let _ = std::fs::remove_dir(parent);
        }
    }
    Ok(changes)
}

fn apply_gemini(home: &Path, exe: &Path, dry_run: bool) -> Result<Vec<String>> {
    let dir = gemini_extension_dir(home);
    let mut changes = Vec::new();
    if dir.exists() && !dir.join(MARKER).is_file() {
        bail!(
            "`{}` exists and was not written by deja; move it away, then run `deja setup gemini` again",
            dir.display()
        );
    }
    for (name, content) in gemini_files(exe) {
        write_if_changed(&dir.join(name), &content, &mut changes, dry_run)?;
    }
    Ok(changes)
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
    fn apply(&self, env: &Env, dry_run: bool) -> Result<Vec<String>> {
        let mut changes = apply_gemini(env.home(), &env.exe, dry_run)?;
        changes.extend(edit::apply(
            &policy(env.home()),
            &env.state(self.name()),
            dry_run,
        )?);
        Ok(changes)
    }
    fn undo(&self, env: &Env, dry_run: bool) -> Result<Vec<String>> {
        let mut changes = undo_gemini(env.home(), dry_run)?;
        changes.extend(edit::undo(
            &policy(env.home()),
            &env.state(self.name()),
            dry_run,
        )?);
        Ok(changes)
    }
    fn check(&self, env: &Env) -> Result<Wiring> {
        Ok(match gemini_wiring(env.home(), &env.exe)? {
            Wiring::Wired if !edit::is_wired(&policy(env.home()))? => Wiring::Stale(format!(
                "`{}` is missing",
                policy(env.home()).path.display()
            )),
            w => w,
        })
    }
    fn hint(&self) -> Option<&'static str> {
        // Gemini CLI shows an extension's MCP server as "Disabled" in a
        // folder it does not trust, and says nothing else.
        Some("Gemini CLI runs deja's MCP server only in folders you trust: answer its trust prompt, or run `/permissions` in gemini (trusted folders are kept in ~/.gemini/trustedFolders.json)")
    }
}
