//! Finding chat files. Gemini CLI keeps them in `~/.gemini/tmp/<project id>/chats/`
//! (`$GEMINI_CLI_HOME/.gemini` when that is set). `DEJA_GEMINI_ROOT` replaces
//! that place for deja, and the config's `roots` add more; each names a
//! `.gemini`-like folder holding `tmp/`, or a `tmp/` folder itself.
//!
//! Only `chats/session-*.json(l)` and the subagent files nested one level
//! below (`chats/<parent>/*.json(l)`) are collected: checkpoints, `logs.json`,
//! tool outputs and the rest of the tree are not sessions and are not entered.

use std::fs;
use std::path::{Path, PathBuf};

use deja_plugin_api::discover::{expand_home, split_path_list, Collector, CommonConfig, Excludes};
use deja_plugin_api::{Discovery, HostContext, PluginError};

/// Overrides where deja reads Gemini sessions.
pub const ROOT_VAR: &str = "DEJA_GEMINI_ROOT";
/// Gemini CLI's own home override.
pub const HOME_VAR: &str = "GEMINI_CLI_HOME";

/// Finds the chat files the host context points at.
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
        (None, Some(gemini_home)) => vec![(
            expand_home(gemini_home, home).join(".gemini"),
            HOME_VAR.to_string(),
        )],
        (None, None) => vec![(
            home.join(".gemini"),
            "Gemini CLI default (~/.gemini)".into(),
        )],
    };
    roots.extend(
        config
            .roots
            .iter()
            .map(|r| (expand_home(r, home), "config roots".to_string())),
    );
    roots
}

/// Scans one root: its `tmp/`, or the root itself when it is a `tmp/` folder.
fn scan_root(collector: &mut Collector, root: &Path, reason: &str) {
    let nested = root.join("tmp");
    let tmp = if nested.is_dir() {
        nested
    } else {
        root.to_path_buf()
    };
    collector.searched(&tmp, reason);
    for project in project_dirs(collector, &tmp) {
        let chats = project.join("chats");
        if chats.is_dir() {
            collector.walk(&chats, 1, &mut |c, file| {
                if is_chat_file(&chats, file) {
                    c.add(file);
                }
            });
        }
    }
}

/// The project folders of `tmp`, sorted, without excluded ones.
fn project_dirs(collector: &mut Collector, tmp: &Path) -> Vec<PathBuf> {
    let entries = match fs::read_dir(tmp) {
        Ok(entries) => entries,
        Err(e) => {
            if tmp.exists() {
                collector.warn(format!("cannot read folder `{}`: {e}", tmp.display()));
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

/// `chats/session-*.json(l)`, or any `chats/<parent>/*.json(l)`.
fn is_chat_file(chats: &Path, file: &Path) -> bool {
    let Some(name) = file.file_name().map(|n| n.to_string_lossy()) else {
        return false;
    };
    let json = name.ends_with(".json") || name.ends_with(".jsonl");
    let direct = file.parent() == Some(chats);
    json && (!direct || name.starts_with("session-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_files_are_sessions_and_nested_subagents() {
        let chats = Path::new("/g/tmp/p/chats");
        assert!(is_chat_file(
            chats,
            &chats.join("session-2026-01-01T00-00-abcd1234.jsonl")
        ));
        assert!(is_chat_file(chats, &chats.join("session-x.json")));
        assert!(is_chat_file(chats, &chats.join("parent/sub.jsonl")));
        assert!(is_chat_file(chats, &chats.join("parent/sub.json")));
        assert!(!is_chat_file(chats, &chats.join("notes.json")));
        assert!(!is_chat_file(chats, &chats.join("session-x.md")));
        assert!(!is_chat_file(chats, &chats.join("parent/sub.txt")));
    }
}
