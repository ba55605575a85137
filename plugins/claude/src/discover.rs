//! Finding transcripts. Claude Code keeps them in `~/.claude/projects/`
//! (`$CLAUDE_CONFIG_DIR/projects` when that is set; some versions used
//! `~/.config/claude/projects`, `$XDG_CONFIG_HOME/claude` when set).
//! `DEJA_CLAUDE_ROOT` (a path list) replaces those places for deja, and the
//! config's `roots` add more; each names a `.claude`-like folder holding
//! `projects/`, a `projects/` folder itself, or one project's folder.
//!
//! In each project folder: the session files `*.jsonl`, older subagent files
//! `agent-*.jsonl` beside them, and `<session>/subagents/*.jsonl`. Tool
//! outputs spilled to disk, `sessions-index.json`, memory files, `.meta.json`
//! and the rest of `~/.claude` are not transcripts and are not collected.

use std::fs;
use std::path::{Path, PathBuf};

use deja_plugin_api::discover::{expand_home, split_path_list, Collector, CommonConfig, Excludes};
use deja_plugin_api::{Discovery, HostContext, PluginError};

use crate::layout::{EXTENSION, SUBAGENTS};

/// Overrides where deja reads Claude Code sessions.
pub const ROOT_VAR: &str = "DEJA_CLAUDE_ROOT";
/// Claude Code's own configuration-folder override.
pub const CONFIG_VAR: &str = "CLAUDE_CONFIG_DIR";
/// Where the XDG configuration folder is, when not `~/.config`.
pub const XDG_VAR: &str = "XDG_CONFIG_HOME";

/// Finds the transcripts the host context points at.
pub fn discover(context: &HostContext) -> Result<Discovery, PluginError> {
    let config: CommonConfig = context.config()?;
    let mut collector = Collector::new(Excludes::new(&config.exclude, context.home()));
    for (root, reason) in roots(context, &config) {
        scan_root(&mut collector, &root, &reason);
    }
    Ok(collector.finish())
}

/// The folders to read, each with the reason it is read.
fn roots(context: &HostContext, config: &CommonConfig) -> Vec<(PathBuf, String)> {
    let home = context.home();
    let mut roots: Vec<(PathBuf, String)> = if let Some(value) = context.env(ROOT_VAR) {
        split_path_list(value)
            .into_iter()
            .map(|p| {
                (
                    expand_home(&p.to_string_lossy(), home),
                    ROOT_VAR.to_string(),
                )
            })
            .collect()
    } else if let Some(dir) = context.env(CONFIG_VAR) {
        vec![(expand_home(dir, home), CONFIG_VAR.to_string())]
    } else {
        let xdg = context
            .env(XDG_VAR)
            .map_or_else(|| home.join(".config"), |dir| expand_home(dir, home));
        vec![
            (
                home.join(".claude"),
                "Claude Code default (~/.claude)".to_string(),
            ),
            (
                xdg.join("claude"),
                "Claude Code XDG location (~/.config/claude)".to_string(),
            ),
        ]
    };
    roots.extend(
        config
            .roots
            .iter()
            .map(|r| (expand_home(r, home), "config roots".to_string())),
    );
    roots
}

/// Scans one root: its `projects/`, or the root itself as a projects folder
/// (whose direct `.jsonl` files make it one project's folder too).
fn scan_root(collector: &mut Collector, root: &Path, reason: &str) {
    let nested = root.join("projects");
    let projects = if nested.is_dir() {
        nested
    } else {
        root.to_path_buf()
    };
    collector.searched(&projects, reason);
    scan_project(collector, &projects);
    for project in subfolders(collector, &projects) {
        scan_project(collector, &project);
    }
}

/// The transcripts of one project folder.
fn scan_project(collector: &mut Collector, project: &Path) {
    for file in files(project) {
        collector.add(&file);
    }
    for session in subfolders(collector, project) {
        let subagents = session.join(SUBAGENTS);
        if !collector.is_excluded(&subagents) {
            for file in files(&subagents) {
                collector.add(&file);
            }
        }
    }
}

/// The `.jsonl` files directly in `dir`, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.is_file()
                && path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with(EXTENSION))
        })
        .collect();
    files.sort();
    files
}

/// The folders directly in `dir`, sorted, without excluded ones; an
/// unreadable `dir` that exists is a warning.
fn subfolders(collector: &mut Collector, dir: &Path) -> Vec<PathBuf> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            if dir.exists() {
                collector.warn(format!("cannot read folder `{}`: {e}", dir.display()));
            }
            return Vec::new();
        }
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_dir() && !collector.is_excluded(path))
        .collect();
    dirs.sort();
    dirs
}
