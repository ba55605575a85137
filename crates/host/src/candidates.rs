//! Finding plugin files: which folders are searched, in which order, and which
//! file names count as deja plugins (`[lib]deja_plugin_*.{so,dylib,dll}`).
//! Bundled readers sit beside the executable (as `cargo build` leaves them)
//! or in `<prefix>/lib/deja/plugins` for an executable in `<prefix>/bin`
//! (as `scripts/install` puts them).

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
    /// Next to the deja executable (the in-tree readers), or in the
    /// installation's `lib/deja/plugins` folder.
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

/// The folder of an installation's bundled readers: `<prefix>/lib/deja/plugins`
/// for an executable in `<prefix>/bin` (any folder name works: it is the
/// executable's folder's sibling `lib/deja/plugins`).
pub fn installed_plugin_dir(exe_dir: &Path) -> Option<PathBuf> {
    exe_dir
        .parent()
        .map(|prefix| prefix.join("lib").join("deja").join("plugins"))
}

/// Candidates in search order: config paths, then the user's plugin folder,
/// then the executable's folder, then the installation's plugin folder
/// ([`installed_plugin_dir`]). A plugin found earlier wins over a later one
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
        if let Some(installed) = installed_plugin_dir(dir) {
            scan_dir(&installed, Origin::Bundled, &mut out);
        }
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

    #[test]
    fn bundled_readers_are_found_beside_the_executable_and_in_the_installation() {
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        let installed = root.path().join("lib/deja/plugins");
        let user = root.path().join("user");
        for dir in [&bin, &installed, &user] {
            std::fs::create_dir_all(dir).unwrap();
        }
        assert_eq!(installed_plugin_dir(&bin), Some(installed.clone()));
        let lib = |name: &str| {
            format!(
                "{}deja_plugin_{name}.{}",
                std::env::consts::DLL_PREFIX,
                std::env::consts::DLL_EXTENSION
            )
        };
        for (dir, name) in [(&bin, "beside"), (&installed, "lib"), (&user, "mine")] {
            std::fs::write(dir.join(lib(name)), b"").unwrap();
        }
        std::fs::write(installed.join("README"), b"").unwrap();
        let found: Vec<(PathBuf, Origin)> = find(&[], &user, Some(&bin))
            .into_iter()
            .map(|c| (c.path, c.origin))
            .collect();
        assert_eq!(
            found,
            vec![
                (user.join(lib("mine")), Origin::UserDir),
                (bin.join(lib("beside")), Origin::Bundled),
                (installed.join(lib("lib")), Origin::Bundled),
            ]
        );
    }
}
