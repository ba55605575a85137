//! Finding chat files. Qwen Code keeps them in
//! `<runtime dir>/projects/<encoded cwd>/chats/<sessionId>.jsonl`, where the
//! runtime dir is `$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, else `~/.qwen`
//! (`Storage.getRuntimeBaseDir`). `DEJA_QWEN_ROOT` (a path list) replaces
//! that place for deja, and the config's `roots` add more; each names a
//! `.qwen`-like folder holding `projects/`, or a `projects/` folder itself.
//!
//! Only JSONL files directly inside a project's `chats/` are sessions: the
//! older `tmp/<hash>/logs.json` (prompts only), settings, credentials and
//! anything nested deeper are not read.

use std::fs;
use std::path::{Path, PathBuf};

use deja_plugin_api::discover::{expand_home, split_path_list, Collector, CommonConfig, Excludes};
use deja_plugin_api::{Discovery, HostContext, PluginError};

/// Overrides where deja reads Qwen Code sessions.
pub const ROOT_VAR: &str = "DEJA_QWEN_ROOT";
/// Qwen Code's runtime folder (sessions, temp files), first choice.
pub const RUNTIME_VAR: &str = "QWEN_RUNTIME_DIR";
/// Qwen Code's home folder (config, and the runtime folder when unset).
pub const HOME_VAR: &str = "QWEN_HOME";

/// Finds the chat files the host context points at.
pub fn discover(context: &HostContext) -> Result<Discovery, PluginError> {
    let config: CommonConfig = context.config()?;
    let mut collector = Collector::new(Excludes::new(&config.exclude, context.home()));
    for (root, reason) in roots(context, &config) {
        scan_root(&mut collector, &root, &reason);
    }
    Ok(collector.finish())
}

/// Where Qwen Code itself keeps sessions for this context, and why.
pub fn qwen_runtime_dir(context: &HostContext) -> (PathBuf, String) {
    let home = context.home();
    match (context.env(RUNTIME_VAR), context.env(HOME_VAR)) {
        (Some(dir), _) => (expand_home(dir, home), RUNTIME_VAR.to_string()),
        (None, Some(dir)) => (expand_home(dir, home), HOME_VAR.to_string()),
        (None, None) => (home.join(".qwen"), "Qwen Code default (~/.qwen)".into()),
    }
}

/// The folders to read, each with the reason it is read.
fn roots(context: &HostContext, config: &CommonConfig) -> Vec<(PathBuf, String)> {
    let home = context.home();
    let mut roots: Vec<(PathBuf, String)> = match context.env(ROOT_VAR) {
        Some(value) => split_path_list(value)
            .into_iter()
            .map(|p| {
                (
                    expand_home(&p.to_string_lossy(), home),
                    ROOT_VAR.to_string(),
                )
            })
            .collect(),
        None => vec![qwen_runtime_dir(context)],
    };
    roots.extend(
        config
            .roots
            .iter()
            .map(|r| (expand_home(r, home), "config roots".to_string())),
    );
    roots
}

/// Scans one root: its `projects/`, or the root itself when it is a `projects/` folder.
fn scan_root(collector: &mut Collector, root: &Path, reason: &str) {
    let nested = root.join("projects");
    let projects = if nested.is_dir() {
        nested
    } else {
        root.to_path_buf()
    };
    collector.searched(&projects, reason);
    for project in project_dirs(collector, &projects) {
        let chats = project.join("chats");
        if chats.is_dir() {
            collector.walk(&chats, 0, &mut |c, file| {
                if is_chat_file(file) {
                    c.add(file);
                }
            });
        }
    }
}

/// The project folders of `projects`, sorted, without excluded ones.
fn project_dirs(collector: &mut Collector, projects: &Path) -> Vec<PathBuf> {
    let entries = match fs::read_dir(projects) {
        Ok(entries) => entries,
        Err(e) => {
            if projects.exists() {
                collector.warn(format!("cannot read folder `{}`: {e}", projects.display()));
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

/// A `.jsonl` file.
fn is_chat_file(file: &Path) -> bool {
    file.extension().is_some_and(|ext| ext == "jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;
    use deja_plugin_api::EnvVar;

    fn context(env: &[(&str, &str)]) -> HostContext {
        HostContext {
            home: "/home/me".into(),
            env: env
                .iter()
                .map(|(k, v)| EnvVar {
                    key: (*k).into(),
                    value: (*v).into(),
                })
                .collect(),
            config_json: "{}".into(),
        }
    }

    #[test]
    fn the_runtime_dir_follows_qwen_codes_priority() {
        let dir = |env: &[(&str, &str)]| qwen_runtime_dir(&context(env)).0;
        assert_eq!(dir(&[]), PathBuf::from("/home/me/.qwen"));
        assert_eq!(dir(&[(HOME_VAR, "~/q")]), PathBuf::from("/home/me/q"));
        assert_eq!(
            dir(&[(HOME_VAR, "/q"), (RUNTIME_VAR, "/rt")]),
            PathBuf::from("/rt")
        );
        // An empty variable counts as unset.
        assert_eq!(dir(&[(RUNTIME_VAR, "")]), PathBuf::from("/home/me/.qwen"));
    }

    #[test]
    fn only_jsonl_files_are_chats() {
        assert!(is_chat_file(Path::new("/q/projects/p/chats/a.jsonl")));
        assert!(!is_chat_file(Path::new("/q/projects/p/chats/a.json")));
        assert!(!is_chat_file(Path::new("/q/projects/p/chats/a.jsonl.bak")));
    }
}
