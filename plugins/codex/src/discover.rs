//! Finding rollouts. Codex keeps them in `$CODEX_HOME` (default `~/.codex`):
//! `sessions/YYYY/MM/DD/rollout-*.jsonl`, and archived ones flat in
//! `archived_sessions/`. `DEJA_CODEX_ROOT` (a path list) replaces that home
//! for deja's reads, and the config's `roots` add more; each names a
//! Codex-home-like folder holding `sessions/` and/or `archived_sessions/`,
//! or a folder of rollouts itself.
//!
//! Only files named `*rollout-*.jsonl` are collected: `history.jsonl` repeats
//! prompts that are already in rollouts, `session_index.jsonl` holds titles
//! (read beside each rollout), and `auth.json`, `config.toml` and logs are no
//! transcripts.

use std::path::{Path, PathBuf};

use deja_plugin_api::discover::{expand_home, split_path_list, Collector, CommonConfig, Excludes};
use deja_plugin_api::{Discovery, HostContext, PluginError};

use crate::home::{ARCHIVED, SESSIONS};

/// Overrides where deja reads Codex sessions.
pub const ROOT_VAR: &str = "DEJA_CODEX_ROOT";
/// Codex's own home override.
pub const HOME_VAR: &str = "CODEX_HOME";

/// How deep below `sessions/` rollouts are looked for (`YYYY/MM/DD/file`).
const SESSIONS_DEPTH: usize = 4;

/// Finds the rollouts the host context points at.
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
    let mut roots: Vec<(PathBuf, String)> = match (context.env(ROOT_VAR), context.env(HOME_VAR)) {
        (Some(value), _) => split_path_list(value)
            .into_iter()
            .map(|p| {
                (
                    expand_home(&p.to_string_lossy(), home),
                    ROOT_VAR.to_string(),
                )
            })
            .collect(),
        (None, Some(codex_home)) => vec![(expand_home(codex_home, home), HOME_VAR.to_string())],
        (None, None) => vec![(home.join(".codex"), "Codex CLI default (~/.codex)".into())],
    };
    roots.extend(
        config
            .roots
            .iter()
            .map(|r| (expand_home(r, home), "config roots".to_string())),
    );
    roots
}

/// Scans one root: its `sessions/` and `archived_sessions/`, or itself when it has neither.
fn scan_root(collector: &mut Collector, root: &Path, reason: &str) {
    let live = root.join(SESSIONS);
    let archived = root.join(ARCHIVED);
    if live.is_dir() || archived.is_dir() {
        for dir in [live, archived] {
            collector.searched(&dir, reason);
            collector.walk(&dir, SESSIONS_DEPTH, &mut |c, file| {
                if is_rollout(file) {
                    c.add(file);
                }
            });
        }
    } else {
        collector.searched(root, reason);
        collector.walk(root, SESSIONS_DEPTH, &mut |c, file| {
            if is_rollout(file) {
                c.add(file);
            }
        });
    }
}

/// `rollout-*.jsonl` (also with a prefix, as copies of rollouts are named).
pub fn is_rollout(file: &Path) -> bool {
    file.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(is_rollout_name)
}

/// Whether a file name is a rollout's.
pub fn is_rollout_name(name: &str) -> bool {
    name.ends_with(".jsonl") && name.contains("rollout-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollout_names() {
        assert!(is_rollout_name(
            "rollout-2026-01-08T15-18-19-019b9caf-68c8-7c22-a303-de71e0e74e08.jsonl"
        ));
        assert!(is_rollout_name(
            "6934d1e4dfef__rollout-2025-12-25T22-45-23-019b55c1.jsonl"
        ));
        assert!(!is_rollout_name("history.jsonl"));
        assert!(!is_rollout_name("session_index.jsonl"));
        assert!(!is_rollout_name("rollout-x.json"));
    }
}
