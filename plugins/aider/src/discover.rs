//! Finds aider histories on this machine, from the host's context only (its
//! home and environment, never the process's own):
//!
//! - `~/.aider.chat.history.md` (aider launched from home);
//! - `AIDER_CHAT_HISTORY_FILE`, where the user moved it;
//! - `<dir>/.aider.chat.history.md` for every project directory listed in
//!   `~/.config/deja/aider-projects` (one absolute directory a line; blank
//!   lines and `#` comments ignored) — the projects deja started aider in;
//! - every `.aider.chat.history.md` down to two folders below each directory
//!   of `DEJA_AIDER_ROOTS` (a platform path list);
//! - the config's `roots`: a file is taken as is, a directory walked as above;
//! - without any configuration: `<dir>/.aider.chat.history.md` for every
//!   project directory the other harnesses' sessions name (the host passes
//!   them in `DEJA_KNOWN_PROJECTS`, a platform path list; only the histories
//!   found are recorded), and the usual code folders under home (`~/src`,
//!   `~/code`, `~/projects`, `~/dev`, `~/work`, `~/repos`, `~/git`,
//!   `~/workspace`), walked as above when they exist;
//!
//! minus the config's `exclude` patterns. The walk skips `.git`,
//! `node_modules`, `target` and other build folders; an unreadable folder is
//! a warning. Every place examined is recorded for `deja doctor`. The
//! histories found without configuration are marked as found in a code
//! folder ([`deja_plugin_api::discover::FOUND_IN_CODE_FOLDER`]): one there
//! may have come with a cloned repository, so the host checks and labels it.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use deja_plugin_api::discover::{
    expand_home, split_path_list, Collector, Excludes, CODE_FOLDERS, KNOWN_PROJECTS_VAR,
};
use deja_plugin_api::{Discovery, HostContext, PluginError};

use crate::config::AiderConfig;

/// The name aider gives its history.
pub(crate) const HISTORY_NAME: &str = ".aider.chat.history.md";
/// The variable aider reads for another history path.
const HISTORY_VAR: &str = "AIDER_CHAT_HISTORY_FILE";
/// The variable listing deja's extra roots for aider.
const ROOTS_VAR: &str = "DEJA_AIDER_ROOTS";
/// The list of projects deja started aider in, below home.
const PROJECTS_LIST: &str = ".config/deja/aider-projects";
/// How many folders below a root the walk descends.
const ROOT_DEPTH: usize = 2;

/// Finds the histories `context` points to.
pub(crate) fn discover(context: &HostContext) -> Result<Discovery, PluginError> {
    let config: AiderConfig = context.config()?;
    let home = context.home();
    let mut collector = Collector::new(Excludes::new(&config.common.exclude, home));
    history_file(&mut collector, &home.join(HISTORY_NAME), "home history");
    if let Some(path) = context.env(HISTORY_VAR) {
        history_file(&mut collector, &expand_home(path, home), HISTORY_VAR);
    }
    listed_projects(&mut collector, home);
    if let Some(list) = context.env(ROOTS_VAR) {
        for root in split_path_list(list) {
            search_root(
                &mut collector,
                &expand_home(&root.to_string_lossy(), home),
                ROOTS_VAR,
            );
        }
    }
    for root in &config.common.roots {
        search_root(&mut collector, &expand_home(root, home), "config roots");
    }
    // Project folders: a history there may have come with the repository.
    if let Some(list) = context.env(KNOWN_PROJECTS_VAR) {
        for dir in split_path_list(list) {
            let history = dir.join(HISTORY_NAME);
            if dir.is_absolute() && history.is_file() {
                collector.searched(&history, "a project of another harness's session");
                collector.add_found_in_code_folder(&history);
            }
        }
    }
    for name in CODE_FOLDERS {
        let dir = home.join(name);
        if dir.is_dir() {
            collector.searched(&dir, "code folders under home");
            if !collector.is_excluded(&dir) {
                collector.walk(&dir, ROOT_DEPTH, &mut |collector, path| {
                    if is_history(path) {
                        collector.add_found_in_code_folder(path);
                    }
                });
            }
        }
    }
    Ok(collector.finish())
}

/// Records `path` as searched, and adds it if it is a file.
fn history_file(collector: &mut Collector, path: &Path, reason: &str) {
    collector.searched(path, reason);
    if path.is_file() {
        collector.add(path);
    }
}

/// The histories of the projects listed in `~/.config/deja/aider-projects`.
fn listed_projects(collector: &mut Collector, home: &Path) {
    let list = home.join(PROJECTS_LIST);
    collector.searched(&list, "aider-projects");
    let text = match fs::read(&list) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == ErrorKind::NotFound => return,
        Err(e) => {
            collector.warn(format!("cannot read `{}`: {e}", list.display()));
            return;
        }
    };
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let dir = expand_home(line, home);
        if dir.is_absolute() {
            history_file(collector, &dir.join(HISTORY_NAME), "aider-projects");
        } else {
            collector.warn(format!(
                "`{}` lists `{line}`, which is not an absolute directory",
                list.display()
            ));
        }
    }
}

/// A root: a file is taken as is, a directory is searched two folders deep.
fn search_root(collector: &mut Collector, root: &Path, reason: &str) {
    collector.searched(root, reason);
    if collector.is_excluded(root) {
        return;
    }
    if root.is_file() {
        collector.add(root);
    } else if root.is_dir() {
        collector.walk(root, ROOT_DEPTH, &mut |collector, path| {
            if is_history(path) {
                collector.add(path);
            }
        });
    }
}

/// Whether `path` is named as aider names its history.
fn is_history(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == HISTORY_NAME)
}
