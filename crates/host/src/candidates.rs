//! Finding plugin files: which folders are searched, in which order, and which
//! file names count as deja plugins (`[lib]deja_plugin_*.{so,dylib,dll}`).

use std::path::{Path, PathBuf};

/// File-name prefix (after the platform's `lib`) every plugin library carries.
pub const PLUGIN_PREFIX: &str = "deja_plugin_";

/// Where a candidate was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Listed in the config's `plugins.paths`.
    Config,
    /// The user's plugin folder (`<data dir>/plugins`).
    UserDir,
    /// Next to the deja executable (the in-tree readers).
    Bundled,
}

impl Origin {
    /// A short label for listings.
    pub fn as_str(&self) -> &'static str {
        match self {
            Origin::Config => "config",
            Origin::UserDir => "user",
            Origin::Bundled => "bundled",
        }
    }
}

/// A file that may be a plugin.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The library file.
    pub path: PathBuf,
    /// Where it was found.
    pub origin: Origin,
}

/// Whether `name` looks like a deja plugin library on this platform.
pub fn is_plugin_file_name(name: &str) -> bool {
    let ext = std::env::consts::DLL_EXTENSION;
    let Some(stem) = name.strip_suffix(ext).and_then(|s| s.strip_suffix('.')) else {
        return false;
    };
    let stem = stem
        .strip_prefix(std::env::consts::DLL_PREFIX)
        .unwrap_or(stem);
    stem.starts_with(PLUGIN_PREFIX) && stem.len() > PLUGIN_PREFIX.len()
}

/// Candidates in search order: config paths, then the user's plugin folder,
/// then the executable's folder. A plugin found earlier wins over a later one
/// for the same harness, so a user can replace a bundled reader.
pub fn find(config_paths: &[PathBuf], user_dir: &Path, exe_dir: Option<&Path>) -> Vec<Candidate> {
    let mut out = Vec::new();
    for p in config_paths {
        if p.is_dir() {
            scan_dir(p, Origin::Config, &mut out);
        } else {
            // Listed explicitly: try it whatever its name, and report if missing.
            out.push(Candidate {
                path: p.clone(),
                origin: Origin::Config,
            });
        }
    }
    scan_dir(user_dir, Origin::UserDir, &mut out);
    if let Some(dir) = exe_dir {
        scan_dir(dir, Origin::Bundled, &mut out);
    }
    // The same file reached twice (e.g. the user dir is the exe dir) counts once.
    let mut seen = std::collections::HashSet::new();
    out.retain(|c| seen.insert(std::fs::canonicalize(&c.path).unwrap_or_else(|_| c.path.clone())));
    out
}

fn scan_dir(dir: &Path, origin: Origin, out: &mut Vec<Candidate>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_plugin_file_name)
        })
        .collect();
    found.sort();
    out.extend(found.into_iter().map(|path| Candidate {
        path,
        origin: origin.clone(),
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_file_names() {
        let ext = std::env::consts::DLL_EXTENSION;
        let pre = std::env::consts::DLL_PREFIX;
        assert!(is_plugin_file_name(&format!(
            "{pre}deja_plugin_aider.{ext}"
        )));
        assert!(is_plugin_file_name(&format!("deja_plugin_aider.{ext}")));
        assert!(!is_plugin_file_name(&format!("{pre}deja_plugin_.{ext}")));
        assert!(!is_plugin_file_name(&format!("{pre}deja_plugin_api.rlib")));
        assert!(!is_plugin_file_name(&format!("{pre}other.{ext}")));
        assert!(!is_plugin_file_name("libdeja_plugin_aider.d"));
    }
}
