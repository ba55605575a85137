//! Finding sessions. Mistral Vibe keeps them in
//! `$VIBE_HOME/logs/session/unified/<session id>/` (`VIBE_HOME` defaults to
//! `~/.vibe`, on every OS); each session's `CURRENT` file is its
//! transcript for deja. `DEJA_VIBE_ROOT` replaces that place (a path list,
//! each a `logs/session`-like folder holding `unified/`, or a `unified/`
//! folder itself), and the config's `roots` add more (a `session_logging.save_dir`
//! set in Vibe's config is one to add).

use std::path::{Path, PathBuf};

use deja_plugin_api::discover::{expand_home, split_path_list, Collector, CommonConfig, Excludes};
use deja_plugin_api::{Discovery, HostContext, PluginError};

/// Overrides where deja reads Vibe sessions.
pub const ROOT_VAR: &str = "DEJA_VIBE_ROOT";
/// Vibe's own home override.
pub const HOME_VAR: &str = "VIBE_HOME";

/// Finds the sessions the host context points at.
pub fn discover(context: &HostContext) -> Result<Discovery, PluginError> {
    let config: CommonConfig = context.config()?;
    let mut collector = Collector::new(Excludes::new(&config.exclude, context.home()));
    for (root, reason) in roots(context, &config) {
        scan_root(&mut collector, &root, &reason);
    }
    Ok(collector.finish())
}

/// Vibe's session folder for `context` (`$VIBE_HOME/logs/session`).
pub fn session_root(context: &HostContext) -> (PathBuf, String) {
    let home = context.home();
    match context.env(HOME_VAR).filter(|v| !v.is_empty()) {
        Some(vibe_home) => (
            expand_home(vibe_home, home).join("logs").join("session"),
            HOME_VAR.to_string(),
        ),
        None => (
            home.join(".vibe").join("logs").join("session"),
            "Mistral Vibe default (~/.vibe/logs/session)".into(),
        ),
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
        None => vec![session_root(context)],
    };
    roots.extend(
        config
            .roots
            .iter()
            .map(|r| (expand_home(r, home), "config roots".to_string())),
    );
    roots
}

/// Scans one root: its `unified/`, or the root itself when it is one.
fn scan_root(collector: &mut Collector, root: &Path, reason: &str) {
    let nested = root.join("unified");
    let unified = if nested.is_dir() {
        nested
    } else {
        root.to_path_buf()
    };
    collector.searched(&unified, reason);
    collector.walk(&unified, 1, &mut |c, file| {
        if is_current(&unified, file) {
            c.add(file);
        }
    });
}

/// `<unified>/<session>/CURRENT`.
fn is_current(unified: &Path, file: &Path) -> bool {
    file.file_name().is_some_and(|n| n == "CURRENT")
        && file.parent().and_then(Path::parent) == Some(unified)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_the_current_file_of_its_folder() {
        let unified = Path::new("/h/.vibe/logs/session/unified");
        assert!(is_current(unified, &unified.join("6dcf/CURRENT")));
        assert!(!is_current(unified, &unified.join("CURRENT")));
        assert!(!is_current(unified, &unified.join("6dcf/meta.json")));
        assert!(!is_current(unified, &unified.join("6dcf/x/CURRENT")));
    }
}
