//! The agents deja wires its memory into, one module each behind one
//! interface ([`Agent`]: found, apply, undo, check), so that `deja setup`,
//! `deja doctor` and the uninstaller iterate over agents instead of naming
//! them.
//!
//! What an agent gets, where it has the mechanism: deja's MCP server (`deja
//! mcp`), the project's digest at session start (`deja context --hook
//! AGENT`), and a short note when a command fails that an earlier session
//! met (`deja context --hook AGENT --on tool-failure`). The settings-file
//! Every agent changes its files through [`edit`], the one mechanism that
//! also takes the change back: settings files (JSON, TOML, aider's YAML) and
//! files of deja's own (plugins, Gemini CLI's extension).

pub mod aider;
pub mod claude;
pub mod cline;
pub mod codex;
pub mod copilot;
pub mod droid;
pub mod edit;
pub mod gemini;
pub mod json_text;
pub mod kilo;
pub mod opencode;
pub mod qwen;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::app::App;

/// What one agent's wiring looks like now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wiring {
    /// Everything setup would write is there, as it would write it.
    Wired,
    /// Not there.
    Missing,
    /// There, but different (another deja, an older version, edited).
    Stale(String),
}

/// What an agent is given, for `deja setup` and the README's matrix.
#[derive(Debug, Clone, Copy)]
pub struct Provides {
    /// deja's MCP tools.
    pub mcp: bool,
    /// The project's digest at session start (and how).
    pub session_start: Option<&'static str>,
    /// A note when a failing command matches an earlier session.
    pub failure_notes: bool,
}

/// What the agents need to know about this deja.
pub struct Env<'a> {
    /// The app (paths, config).
    pub app: &'a App,
    /// This executable, absolute.
    pub exe: PathBuf,
}

impl<'a> Env<'a> {
    /// The environment of this deja.
    pub fn new(app: &'a App) -> Result<Env<'a>> {
        Ok(Env {
            app,
            exe: this_exe()?,
        })
    }

    /// The home folder.
    pub fn home(&self) -> &Path {
        &self.app.paths.home
    }

    /// This executable as text.
    pub fn exe_text(&self) -> String {
        self.exe.to_string_lossy().into_owned()
    }

    /// The folder of an agent's undo records.
    pub fn state(&self, agent: &str) -> PathBuf {
        edit::state_dir(&self.app.paths.data_dir, agent)
    }

    /// The shell command that runs `deja ARGS` with deja's own variables.
    pub fn command(&self, args: &str) -> String {
        Env::command_for(&self.exe, args)
    }

    /// The shell command that runs `EXE ARGS` with deja's own variables.
    pub fn command_for(exe: &Path, args: &str) -> String {
        let prefix: String = server_env()
            .iter()
            .map(|(k, v)| format!("{k}={} ", shell_quote(v)))
            .collect();
        format!("{prefix}{} {args}", shell_quote(&exe.to_string_lossy()))
    }
}

/// One agent deja can wire.
pub trait Agent: Sync {
    /// The name `deja setup` takes (`claude`).
    fn name(&self) -> &'static str;
    /// The agent's own name (`Claude Code`).
    fn title(&self) -> &'static str;
    /// What setup gives it.
    fn provides(&self) -> Provides;
    /// Where it was found on this machine (its settings folder, or its
    /// program on `PATH`); `None` when it is not here.
    fn found(&self, env: &Env) -> Option<String>;
    /// The settings files setup changes and deja's part in each (empty for
    /// agents wired another way, which override the methods below).
    fn files(&self, _env: &Env) -> Result<Vec<edit::FileWiring>> {
        Ok(Vec::new())
    }
    /// Wires deja in; returns what changed (with `dry_run`, what would).
    fn apply(&self, env: &Env, dry_run: bool) -> Result<Vec<String>> {
        let state = env.state(self.name());
        let files = self.files(env)?;
        // Every file is checked before any is written.
        let mut changes = Vec::new();
        for f in &files {
            changes.extend(edit::apply(f, &state, true)?);
        }
        if dry_run {
            return Ok(changes);
        }
        let mut changes = Vec::new();
        for f in &files {
            changes.extend(edit::apply(f, &state, false)?);
        }
        Ok(changes)
    }
    /// Takes deja's wiring out; returns what changed (with `dry_run`, what
    /// would).
    fn undo(&self, env: &Env, dry_run: bool) -> Result<Vec<String>> {
        let state = env.state(self.name());
        // The reverse of setup's order: a folder goes with its last file.
        let files: Vec<edit::FileWiring> = self.files(env)?.into_iter().rev().collect();
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
        Ok(changes)
    }
    /// What the wiring looks like now.
    fn check(&self, env: &Env) -> Result<Wiring> {
        let files = self.files(env)?;
        let mut missing = 0;
        let mut why = Vec::new();
        for f in &files {
            if !edit::is_wired(f)? {
                missing += 1;
                why.push(format!("`{}` lacks deja's entries", f.path.display()));
            }
        }
        let state = env.state(self.name());
        Ok(if missing == 0 {
            Wiring::Wired
        } else if missing == files.len() && !state.exists() {
            Wiring::Missing
        } else {
            Wiring::Stale(why.join("; "))
        })
    }
    /// A line to show after wiring (a step the agent needs of the user).
    fn hint(&self) -> Option<&'static str> {
        None
    }
}

/// The words of a POSIX shell command line (quotes and backslashes as the
/// shell reads them); `None` when a quote does not close.
fn shell_words(s: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.push(c),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => w.push(chars.next()?),
                        c => w.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

/// Whether a program path is deja's (its file name is `deja`).
pub fn is_deja_program(program: &str) -> bool {
    Path::new(program)
        .file_name()
        .is_some_and(|n| n == "deja" || n == "deja.exe")
}

/// Whether a hook command is deja's, of this version or an earlier one:
/// `[VAR=value ...] PATH/deja context --hook ...`, told by its program and
/// arguments (never by a substring of another command).
pub fn is_deja_command(command: &str) -> bool {
    let Some(words) = shell_words(command) else {
        return false;
    };
    let mut rest = words.iter().skip_while(|w| {
        w.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty()
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !k.starts_with(|c: char| c.is_ascii_digit())
        })
    });
    rest.next().is_some_and(|p| is_deja_program(p))
        && rest.next().is_some_and(|w| w == "context")
        && rest.next().is_some_and(|w| w == "--hook")
}

/// Whether an MCP server entry is deja's, wherever that deja is and
/// whatever its variables: `{"command": ".../deja", "args": ["mcp"]}`, or
/// OpenCode's `{"command": [".../deja", "mcp"]}`.
pub fn is_deja_server(v: &serde_json::Value) -> bool {
    let args_mcp = |a: &[serde_json::Value]| a.len() == 1 && a[0] == "mcp";
    match v.get("command") {
        Some(serde_json::Value::String(c)) => {
            is_deja_program(c)
                && v.get("args")
                    .and_then(serde_json::Value::as_array)
                    .is_some_and(|a| args_mcp(a))
        }
        Some(serde_json::Value::Array(c)) => {
            c.first()
                .and_then(serde_json::Value::as_str)
                .is_some_and(is_deja_program)
                && args_mcp(&c[1..])
        }
        _ => false,
    }
}

/// The names of deja's MCP tools, each allowed without a prompt where an
/// agent allows tools one by one (they only read the memory).
pub const TOOLS: [&str; 3] = ["recall", "session", "sessions"];

/// deja's hooks in the Claude Code form, which Claude Code, Codex CLI and
/// Qwen Code take: the digest at every SessionStart and, where the agent has
/// the event, a note when its shell tool `failure_tool` fails
/// (PostToolUseFailure). `name` is the hooks' name where the agent shows one.
pub fn claude_form_hooks(
    env: &Env,
    agent: &str,
    name: Option<&str>,
    failure_tool: Option<&str>,
) -> Vec<edit::Entry> {
    let hook = |args: String, timeout: u64| {
        let mut h = serde_json::json!({"type": "command", "command": env.command(&args), "timeout": timeout});
        if let Some(name) = name {
            h["name"] = name.into();
        }
        h
    };
    let mut entries = vec![edit::Entry::Hook {
        path: vec!["hooks", "SessionStart"],
        group: serde_json::json!({"hooks": [hook(format!("context --hook {agent}"), 10)]}),
        ours: is_deja_command,
    }];
    if let Some(tool) = failure_tool {
        entries.push(edit::Entry::Hook {
            path: vec!["hooks", "PostToolUseFailure"],
            group: serde_json::json!({
                "matcher": tool,
                "hooks": [hook(format!("context --hook {agent} --on tool-failure"), 5)],
            }),
            ours: is_deja_command,
        });
    }
    entries
}

/// Every agent deja can wire, in the order `deja setup` lists them.
pub fn all() -> [&'static dyn Agent; 10] {
    [
        &claude::Claude,
        &codex::Codex,
        &gemini::Gemini,
        &qwen::Qwen,
        &opencode::OPENCODE,
        &kilo::KILO,
        &copilot::Copilot,
        &droid::Droid,
        &cline::Cline,
        &aider::Aider,
    ]
}

/// The agent of that name.
pub fn by_name(name: &str) -> Option<&'static dyn Agent> {
    all().into_iter().find(|a| a.name() == name)
}

/// This executable, absolute.
pub fn this_exe() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find deja's own executable")?;
    Ok(std::fs::canonicalize(&exe).unwrap_or(exe))
}

/// Single-quotes `s` for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The variables that move deja's config and store, and those that tell the
/// readers where transcripts are: agents hand their MCP servers and hooks
/// only some variables, so these travel explicitly.
pub fn server_env() -> BTreeMap<&'static str, String> {
    let mut env = BTreeMap::new();
    for key in [
        "DEJA_HOME",
        "DEJA_CONFIG",
        "DEJA_PLUGIN_DIR",
        "DEJA_AIDER_ROOTS",
        "DEJA_GEMINI_ROOT",
        "DEJA_CLAUDE_ROOT",
        "DEJA_CODEX_ROOT",
        "DEJA_QWEN_ROOT",
    ] {
        if let Some(v) = std::env::var_os(key).filter(|v| !v.is_empty()) {
            env.insert(key, v.to_string_lossy().into_owned());
        }
    }
    env
}

/// [`server_env`] as a JSON object.
pub fn server_env_json() -> serde_json::Value {
    serde_json::Value::Object(
        server_env()
            .into_iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::String(v)))
            .collect(),
    )
}

/// Whether `program` is on `PATH`; its path when it is.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Where an agent is found: its folder when it exists, else its program on
/// `PATH`.
pub fn found_at(dir: &Path, program: &str) -> Option<String> {
    if dir.is_dir() {
        return Some(dir.display().to_string());
    }
    on_path(program).map(|p| format!("{} on PATH", p.display()))
}

/// The value of a non-empty environment variable.
pub fn env_path(key: &str) -> Option<PathBuf> {
    std::env::var_os(key)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deja_commands_are_told_by_their_program() {
        let ours = Env::command_for(Path::new("/opt/it's here/deja"), "context --hook claude");
        assert!(is_deja_command(&ours), "{ours}");
        assert!(is_deja_command(
            "DEJA_HOME='/x y' /old/deja context --hook qwen --on tool-failure"
        ));
        for other in [
            "~/bin/notify-start",
            "echo ' context --hook '",
            "/usr/bin/not-deja context --hook claude",
            "deja-wrapper context --hook claude",
            "/bin/deja mcp",
            "sh -c '/bin/deja context --hook claude'",
        ] {
            assert!(!is_deja_command(other), "{other}");
        }
        assert!(is_deja_server(
            &json!({"command": "/a/deja", "args": ["mcp"], "env": {"X": "1"}})
        ));
        assert!(is_deja_server(
            &json!({"command": ["/b/deja", "mcp"], "type": "local"})
        ));
        assert!(!is_deja_server(
            &json!({"command": "/a/other", "args": ["mcp"]})
        ));
        assert!(!is_deja_server(
            &json!({"command": "/a/deja", "args": ["mcp", "--x"]})
        ));
    }
}
