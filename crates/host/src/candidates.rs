//! Finding plugin files: which folders are searched, in which order, and which
//! file names count as deja plugins (`[lib]deja_plugin_*.{so,dylib,dll}`).
//! Bundled readers sit beside the executable when it was run from a cargo
//! build folder (as `cargo build` leaves them), or in
//! `<prefix>/lib/deja/plugins` for an executable in `<prefix>/bin` (as
//! `scripts/install` puts them). An installed executable's own folder, such
//! as `~/.local/bin` where other tools drop files, is never searched.

use std::path::{Path, PathBuf};

/// File-name prefix (after the platform's `lib`) every plugin library carries.
pub const PLUGIN_PREFIX: &str = "deja_plugin_";

/// Where a candidate was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginFolder {
    /// Listed in the config's `plugins.paths`.
    Config,
    /// The user's plugin folder (`<data dir>/plugins`).
    UserDir,
    /// Next to the deja executable in a cargo build folder (the in-tree
    /// readers), or in the installation's `lib/deja/plugins` folder.
    Bundled,
}

impl PluginFolder {
    /// A short label for listings.
    pub fn as_str(&self) -> &'static str {
        match self {
            PluginFolder::Config => "config",
            PluginFolder::UserDir => "user",
            PluginFolder::Bundled => "bundled",
        }
    }
}

/// A file that may be a plugin: a library, or a reader description.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The file.
    pub path: PathBuf,
    /// Where it was found.
    pub folder: PluginFolder,
}

/// The extension of reader description files (readers defined in a file, for
/// a plugin that serves them: see [`crate::PluginHost::load`]).
pub const DESCRIPTION_EXTENSION: &str = "toml";

/// Whether `name` is a reader description's file name (`*.toml`, not hidden).
pub fn is_description_file_name(name: &str) -> bool {
    !name.starts_with('.')
        && name
            .strip_suffix(DESCRIPTION_EXTENSION)
            .and_then(|stem| stem.strip_suffix('.'))
            .is_some_and(|stem| !stem.is_empty())
}

impl Candidate {
    /// Whether it is a reader description rather than a library.
    pub fn is_description(&self) -> bool {
        self.path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(is_description_file_name)
    }
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

/// Whether `dir` is a folder cargo builds into: `<target>/debug` or
/// `<target>/release`, or `<target>/<triple>/<profile>`, or the `deps` folder
/// of one of these, where `<target>` is named `target` or is marked as
/// cargo's by its `CACHEDIR.TAG` (a `CARGO_TARGET_DIR`), and the profile folder
/// holds cargo's `.cargo-lock`.
pub fn is_cargo_build_dir(dir: &Path) -> bool {
    let name = |p: &Path| p.file_name().and_then(|n| n.to_str()).map(String::from);
    let profile = if name(dir).as_deref() == Some("deps") {
        dir.parent()
    } else {
        Some(dir)
    };
    let Some(profile) = profile else {
        return false;
    };
    if !matches!(name(profile).as_deref(), Some("debug" | "release"))
        || !profile.join(".cargo-lock").is_file()
    {
        return false;
    }
    let is_target = |p: &Path| {
        name(p).as_deref() == Some("target")
            || std::fs::read(p.join("CACHEDIR.TAG"))
                .is_ok_and(|tag| tag.starts_with(b"Signature: 8a477f597d28d172789f06886806bc55"))
    };
    let parent = profile.parent();
    let grandparent = parent.and_then(Path::parent);
    [parent, grandparent].into_iter().flatten().any(is_target)
}

/// Candidates in search order: config paths, then the user's plugin folder,
/// then the executable's folder when it is a cargo build folder
/// ([`is_cargo_build_dir`]), then the installation's plugin folder
/// ([`installed_plugin_dir`]). A plugin found earlier wins over a later one
/// for the same harness, so a user can replace a bundled reader.
pub fn find(config_paths: &[PathBuf], user_dir: &Path, exe_dir: Option<&Path>) -> Vec<Candidate> {
    let mut out = Vec::new();
    for p in config_paths {
        if p.is_dir() {
            scan_dir(p, PluginFolder::Config, &mut out);
        } else {
            // Listed explicitly: try it whatever its name, and report if missing.
            out.push(Candidate {
                path: p.clone(),
                folder: PluginFolder::Config,
            });
        }
    }
    scan_dir(user_dir, PluginFolder::UserDir, &mut out);
    if let Some(dir) = exe_dir {
        if is_cargo_build_dir(dir) {
            scan_dir(dir, PluginFolder::Bundled, &mut out);
        }
        if let Some(installed) = installed_plugin_dir(dir) {
            scan_dir(&installed, PluginFolder::Bundled, &mut out);
        }
    }
    // The same file reached twice (e.g. the user dir is the exe dir) counts once.
    let mut seen = std::collections::HashSet::new();
    out.retain(|c| seen.insert(std::fs::canonicalize(&c.path).unwrap_or_else(|_| c.path.clone())));
    out
}

fn scan_dir(dir: &Path, folder: PluginFolder, out: &mut Vec<Candidate>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| is_plugin_file_name(n) || is_description_file_name(n))
        })
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    out.extend(found.into_iter().map(|path| Candidate {
        path,
        folder: folder.clone(),
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

    fn lib(name: &str) -> String {
        format!(
            "{}deja_plugin_{name}.{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_EXTENSION
        )
    }

    fn found(user: &Path, exe_dir: &Path) -> Vec<(PathBuf, PluginFolder)> {
        find(&[], user, Some(exe_dir))
            .into_iter()
            .map(|c| (c.path, c.folder))
            .collect()
    }

    #[test]
    fn an_installed_executables_folder_is_not_searched() {
        // `~/.local/bin`: pip, pipx and npm drop files there.
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        let installed = root.path().join("lib/deja/plugins");
        let user = root.path().join("user");
        for dir in [&bin, &installed, &user] {
            std::fs::create_dir_all(dir).unwrap();
        }
        assert_eq!(installed_plugin_dir(&bin), Some(installed.clone()));
        for (dir, name) in [(&bin, "beside"), (&installed, "lib"), (&user, "mine")] {
            std::fs::write(dir.join(lib(name)), b"").unwrap();
        }
        // Even a `.cargo-lock` does not make `bin` a build folder.
        std::fs::write(bin.join(".cargo-lock"), b"").unwrap();
        std::fs::write(installed.join("README"), b"").unwrap();
        assert_eq!(
            found(&user, &bin),
            vec![
                (user.join(lib("mine")), PluginFolder::UserDir),
                (installed.join(lib("lib")), PluginFolder::Bundled),
            ]
        );
    }

    #[test]
    fn a_cargo_build_folder_is_searched() {
        let root = tempfile::tempdir().unwrap();
        let user = root.path().join("user");
        std::fs::create_dir_all(&user).unwrap();
        for profile in [
            "target/debug",
            "target/release",
            "target/x86_64-unknown-linux-gnu/release",
        ] {
            let dir = root.path().join(profile);
            std::fs::create_dir_all(dir.join("deps")).unwrap();
            std::fs::write(dir.join(".cargo-lock"), b"").unwrap();
            std::fs::write(dir.join(lib("beside")), b"").unwrap();
            assert!(is_cargo_build_dir(&dir), "{profile}");
            assert!(is_cargo_build_dir(&dir.join("deps")), "{profile}/deps");
            assert_eq!(
                found(&user, &dir),
                vec![(dir.join(lib("beside")), PluginFolder::Bundled)]
            );
        }
        // A CARGO_TARGET_DIR of another name, marked by cargo.
        let custom = root.path().join("build-out/debug");
        std::fs::create_dir_all(&custom).unwrap();
        std::fs::write(custom.join(".cargo-lock"), b"").unwrap();
        assert!(!is_cargo_build_dir(&custom));
        std::fs::write(
            root.path().join("build-out/CACHEDIR.TAG"),
            b"Signature: 8a477f597d28d172789f06886806bc55\n# cargo",
        )
        .unwrap();
        assert!(is_cargo_build_dir(&custom));
        // Named like one, but cargo never built there.
        let fake = root.path().join("fake/target/release");
        std::fs::create_dir_all(&fake).unwrap();
        assert!(!is_cargo_build_dir(&fake));
        for other in ["bin", "target", "target/doc"] {
            let dir = root.path().join(other);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(".cargo-lock"), b"").unwrap();
            assert!(!is_cargo_build_dir(&dir), "{other}");
        }
    }
}
