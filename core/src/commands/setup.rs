//! `deja setup gemini|aider [--dry-run] [--undo]`: wires deja into a
//! harness so that its agent uses the memory without being told.
//!
//! - Gemini CLI: a `deja` extension under the user's Gemini home whose
//!   manifest declares the MCP server (`deja mcp`, this executable's absolute
//!   path) and whose hooks file adds the project's digest at SessionStart. The
//!   extension lives in its own folder: no settings file of the user's is
//!   touched, and `--undo` removes exactly that folder.
//! - aider: the digest file (`deja aider` keeps it current) is added to
//!   `read:` in `~/.aider.conf.yml`, a line-level edit that keeps every other
//!   key and comment; the original is backed up and `--undo` restores it
//!   byte for byte (or removes only deja's entry if the file changed since).
//!
//! Running setup twice changes nothing; `--dry-run` prints what would change.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::app::App;
use crate::json::setup as out;
use crate::ExitStatus;

/// The harnesses setup knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// Gemini CLI: MCP server and SessionStart hook, as an extension.
    Gemini,
    /// aider: the project digest as a read-only file in `~/.aider.conf.yml`.
    Aider,
}

/// `deja setup` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct SetupArgs {
    /// The harness to wire deja into.
    pub harness: Target,
    /// Print what would change, changing nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Remove what setup added.
    #[arg(long, conflicts_with = "dry_run")]
    pub undo: bool,
}

/// The name of deja's Gemini CLI extension (and its folder).
const EXTENSION: &str = "deja";
/// The file that marks an extension folder as written by `deja setup`.
const MARKER: &str = ".deja-setup.json";
/// The comment that marks deja's line in `~/.aider.conf.yml`.
const AIDER_MARK: &str = "# added by deja setup aider";

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

/// aider's per-user config file.
pub fn aider_conf(home: &Path) -> PathBuf {
    home.join(".aider.conf.yml")
}

/// This executable, absolute.
fn this_exe() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find deja's own executable")?;
    Ok(std::fs::canonicalize(&exe).unwrap_or(exe))
}

/// Single-quotes `s` for a POSIX shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The files of deja's Gemini CLI extension: (path below the folder, content).
pub fn gemini_files(exe: &Path) -> Vec<(&'static str, String)> {
    let exe_text = exe.to_string_lossy().into_owned();
    // Gemini CLI hands extension servers only a few safe variables; the ones
    // that move deja's config and store travel explicitly.
    let mut env = std::collections::BTreeMap::new();
    for key in ["DEJA_HOME", "DEJA_CONFIG"] {
        if let Some(v) = std::env::var_os(key).filter(|v| !v.is_empty()) {
            env.insert(key, v.to_string_lossy().into_owned());
        }
    }
    let prefix: String = env
        .iter()
        .map(|(k, v)| format!("{k}={} ", shell_quote(v)))
        .collect();
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
            session_start: vec![out::HookGroup {
                hooks: vec![out::HookCommand {
                    command: format!("{prefix}{} context --hook gemini", shell_quote(&exe_text)),
                    description: "The project's memory from deja",
                    name: "deja-context",
                    timeout: 5000,
                    kind: "command",
                }],
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

/// What the Gemini CLI wiring looks like now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wiring {
    /// Everything setup would write is there, as it would write it.
    Wired,
    /// Not there.
    Missing,
    /// There, but different (another deja, an older version, edited).
    Stale(String),
}

/// Compares deja's Gemini extension on disk with what setup writes.
pub fn gemini_wiring(home: &Path) -> Result<Wiring> {
    let dir = gemini_extension_dir(home);
    if !dir.exists() {
        return Ok(Wiring::Missing);
    }
    for (name, content) in gemini_files(&this_exe()?) {
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

/// Writes `content` to `path` (creating folders) when it differs.
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
    let tmp = path.with_extension("deja-tmp");
    std::fs::write(&tmp, content).with_context(|| format!("cannot write `{}`", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write `{}`", path.display()))?;
    Ok(())
}

fn setup_gemini(app: &App, args: &SetupArgs) -> Result<Vec<String>> {
    let dir = gemini_extension_dir(&app.paths.home);
    let mut changes = Vec::new();
    let ours = dir.join(MARKER).is_file();
    if args.undo {
        if !dir.exists() {
            return Ok(changes);
        }
        if !ours {
            bail!(
                "`{}` was not written by `deja setup gemini` (no `{MARKER}`); it is left alone",
                dir.display()
            );
        }
        changes.push(format!("remove {}", dir.display()));
        std::fs::remove_dir_all(&dir)
            .with_context(|| format!("cannot remove `{}`", dir.display()))?;
        return Ok(changes);
    }
    if dir.exists() && !ours {
        bail!(
            "`{}` exists and was not written by deja; move it away, then run `deja setup gemini` again",
            dir.display()
        );
    }
    for (name, content) in gemini_files(&this_exe()?) {
        write_if_changed(&dir.join(name), &content, &mut changes, args.dry_run)?;
    }
    Ok(changes)
}

/// `~/.aider.conf.yml` with `entry` added to its top-level `read:` key.
/// Returns `None` when the entry is there already.
pub fn aider_conf_with(text: &str, entry: &str) -> Option<String> {
    if text.lines().any(|l| l.contains(entry)) {
        return None;
    }
    let item = format!("  - {entry}  {AIDER_MARK}");
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::new();
    let key = lines.iter().position(|l| l.starts_with("read:"));
    match key {
        None => {
            out.extend(lines.iter().map(|l| l.to_string()));
            out.push("read:".into());
            out.push(item);
        }
        Some(k) => {
            let rest = lines[k]["read:".len()..].trim();
            let (value, comment) = match rest.find(" #") {
                Some(i) => (rest[..i].trim(), rest[i..].trim()),
                None if rest.starts_with('#') => ("", rest),
                None => (rest, ""),
            };
            out.extend(lines[..k].iter().map(|l| l.to_string()));
            if value.is_empty() {
                // A block list: append after its last item.
                let mut end = k + 1;
                while end < lines.len()
                    && (lines[end].starts_with(' ') || lines[end].starts_with('-'))
                    && !lines[end].trim().is_empty()
                {
                    end += 1;
                }
                out.extend(lines[k..end].iter().map(|l| l.to_string()));
                out.push(item);
                out.extend(lines[end..].iter().map(|l| l.to_string()));
            } else if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                // A flow list.
                let sep = if inner.trim().is_empty() { "" } else { ", " };
                out.push(format!(
                    "read: [{}{sep}{entry}]  {AIDER_MARK}",
                    inner.trim()
                ));
                out.extend(lines[k + 1..].iter().map(|l| l.to_string()));
            } else {
                // A single value becomes a list of two.
                out.push(format!("read:  {AIDER_MARK} (was: read: {value})"));
                let comment = if comment.is_empty() {
                    String::new()
                } else {
                    format!("  {comment}")
                };
                out.push(format!("  - {value}{comment}"));
                out.push(item);
                out.extend(lines[k + 1..].iter().map(|l| l.to_string()));
            }
        }
    }
    let mut joined = out.join("\n");
    joined.push('\n');
    Some(joined)
}

/// The state setup keeps to undo its aider change.
fn aider_state(app: &App) -> PathBuf {
    app.paths.data_dir.join("setup").join("aider.json")
}

fn setup_aider(app: &App, args: &SetupArgs) -> Result<Vec<String>> {
    let conf = aider_conf(&app.paths.home);
    let state_file = aider_state(app);
    let backup = conf.with_file_name(".aider.conf.yml.deja-backup");
    let entry = super::aider::context_file(app)
        .to_string_lossy()
        .into_owned();
    let mut changes = Vec::new();
    let current = match std::fs::read(&conf) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read `{}`", conf.display())),
    };
    if args.undo {
        let Ok(state) = std::fs::read_to_string(&state_file) else {
            return Ok(changes);
        };
        let state: serde_json::Value = serde_json::from_str(&state).unwrap_or_default();
        let written = state["written_sha256"].as_str().unwrap_or_default();
        let unchanged = current
            .as_deref()
            .is_some_and(|b| deja_model::sha256_hex(b) == written);
        if unchanged {
            if state["created"].as_bool() == Some(true) {
                changes.push(format!("remove {}", conf.display()));
                std::fs::remove_file(&conf)
                    .with_context(|| format!("cannot remove `{}`", conf.display()))?;
            } else {
                changes.push(format!(
                    "restore {} from {}",
                    conf.display(),
                    backup.display()
                ));
                std::fs::copy(&backup, &conf)
                    .with_context(|| format!("cannot restore `{}`", conf.display()))?;
            }
        } else if let Some(b) = &current {
            // Edited since: remove only deja's entry.
            let text = String::from_utf8_lossy(b);
            let kept: Vec<&str> = text.lines().filter(|l| !l.contains(AIDER_MARK)).collect();
            changes.push(format!(
                "remove deja's entry from {} (edited since setup; the rest is kept)",
                conf.display()
            ));
            std::fs::write(&conf, kept.join("\n") + "\n")
                .with_context(|| format!("cannot write `{}`", conf.display()))?;
        }
        let _ = std::fs::remove_file(&backup);
        std::fs::remove_file(&state_file)
            .with_context(|| format!("cannot remove `{}`", state_file.display()))?;
        return Ok(changes);
    }
    let text = current
        .as_deref()
        .map(String::from_utf8_lossy)
        .unwrap_or_default();
    let Some(next) = aider_conf_with(&text, &entry) else {
        return Ok(changes);
    };
    changes.push(format!("add `{entry}` to `read:` in {}", conf.display()));
    if args.dry_run {
        return Ok(changes);
    }
    if let Some(b) = &current {
        std::fs::write(&backup, b)
            .with_context(|| format!("cannot write `{}`", backup.display()))?;
        changes.push(format!("back up the original to {}", backup.display()));
    }
    std::fs::write(&conf, &next).with_context(|| format!("cannot write `{}`", conf.display()))?;
    deja_store::create_private_dir(&app.paths.data_dir)?;
    write_if_changed(
        &state_file,
        &format!(
            "{}\n",
            serde_json::to_string(&out::AiderState {
                created: current.is_none(),
                file: &conf,
                written_sha256: deja_model::sha256_hex(next.as_bytes()),
            })?
        ),
        &mut Vec::new(),
        false,
    )?;
    // The file aider will read exists from now on (`deja aider` refreshes it).
    if !super::aider::context_file(app).exists() {
        let project = std::env::current_dir().unwrap_or_default();
        super::aider::write_context(app, &super::aider::project_dir(&project))?;
    }
    Ok(changes)
}

/// Runs the command.
pub fn run(app: &App, args: &SetupArgs) -> Result<ExitStatus> {
    let changes = match args.harness {
        Target::Gemini => setup_gemini(app, args)?,
        Target::Aider => setup_aider(app, args)?,
    };
    let name = match args.harness {
        Target::Gemini => "gemini",
        Target::Aider => "aider",
    };
    if changes.is_empty() {
        eprintln!(
            "deja setup {name}: nothing to change ({})",
            if args.undo {
                "nothing to undo"
            } else {
                "already set up"
            }
        );
    }
    for c in &changes {
        if args.dry_run {
            println!("would {c}");
        } else {
            println!("{c}");
        }
    }
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    const E: &str = "/d/context/aider.md";

    #[test]
    fn read_key_forms_are_kept_and_extended() {
        let added = format!("  - {E}  {AIDER_MARK}");
        assert_eq!(aider_conf_with("", E).unwrap(), format!("read:\n{added}\n"));
        let conf = "# mine\nmodel: gpt-4o\n";
        assert_eq!(
            aider_conf_with(conf, E).unwrap(),
            format!("# mine\nmodel: gpt-4o\nread:\n{added}\n")
        );
        let conf = "read: CONVENTIONS.md  # style\nmodel: x\n";
        assert_eq!(
            aider_conf_with(conf, E).unwrap(),
            format!("read:  {AIDER_MARK} (was: read: CONVENTIONS.md)\n  - CONVENTIONS.md  # style\n{added}\nmodel: x\n")
        );
        let conf = "read:\n  - a.md\n  - b.md\n# after\nmodel: x\n";
        assert_eq!(
            aider_conf_with(conf, E).unwrap(),
            format!("read:\n  - a.md\n  - b.md\n{added}\n# after\nmodel: x\n")
        );
        let conf = "read: [a.md, b.md]\n";
        assert_eq!(
            aider_conf_with(conf, E).unwrap(),
            format!("read: [a.md, b.md, {E}]  {AIDER_MARK}\n")
        );
        assert_eq!(aider_conf_with(&format!("read:\n{added}\n"), E), None);
    }
}
