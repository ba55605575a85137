//! Where deja keeps things: the config file, the data folder (store, models,
//! runtime, plugins) and the user's home, from the environment and config.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};

/// Resolved locations.
#[derive(Debug, Clone)]
pub struct Paths {
    /// The user's home directory.
    pub home: PathBuf,
    /// The config file (it may not exist).
    pub config_file: PathBuf,
    /// The data folder.
    pub data_dir: PathBuf,
}

/// The user's home directory: `$HOME`, else the platform's idea of it.
pub fn home_dir() -> Result<PathBuf> {
    if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(h));
    }
    directories::BaseDirs::new()
        .map(|b| b.home_dir().to_path_buf())
        .ok_or_else(|| anyhow!("cannot find the home directory; set HOME"))
}

/// The config file: `$DEJA_CONFIG`, else `<platform config dir>/deja/config.toml`;
/// and whether it was named explicitly (then it must exist).
pub fn config_file(home: &Path) -> (PathBuf, bool) {
    if let Some(p) = std::env::var_os(deja_config::CONFIG_ENV).filter(|p| !p.is_empty()) {
        return (PathBuf::from(p), true);
    }
    (platform_dirs(home).0.join("config.toml"), false)
}

/// The default data folder: `<platform data dir>/deja`.
pub fn default_data_dir(home: &Path) -> PathBuf {
    platform_dirs(home).1
}

/// (config dir, data dir) for deja on this platform, honouring XDG variables on Linux.
fn platform_dirs(home: &Path) -> (PathBuf, PathBuf) {
    #[cfg(target_os = "linux")]
    {
        let xdg = |var: &str, fallback: &str| {
            std::env::var_os(var)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .unwrap_or_else(|| home.join(fallback))
                .join("deja")
        };
        (
            xdg("XDG_CONFIG_HOME", ".config"),
            xdg("XDG_DATA_HOME", ".local/share"),
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        match directories::ProjectDirs::from("", "", "deja") {
            Some(d) => (d.config_dir().to_path_buf(), d.data_dir().to_path_buf()),
            None => (home.join(".config/deja"), home.join(".local/share/deja")),
        }
    }
}

impl Paths {
    /// Resolves every location; `store_dir` is the config's `store.dir`
    /// (already overridden by `$DEJA_HOME`).
    pub fn new(home: PathBuf, config_file: PathBuf, store_dir: &str) -> Paths {
        let data_dir = if store_dir.is_empty() {
            default_data_dir(&home)
        } else {
            deja_config::expand_home(store_dir, &home)
        };
        Paths {
            home,
            config_file,
            data_dir,
        }
    }

    /// The SQLite database.
    pub fn database(&self) -> PathBuf {
        self.data_dir.join("index.sqlite")
    }

    /// The vector index.
    pub fn vectors(&self) -> PathBuf {
        self.data_dir.join("vectors.usearch")
    }

    /// The folder for user-installed plugins.
    pub fn plugin_dir(&self) -> PathBuf {
        self.data_dir.join("plugins")
    }

    /// The folder for models.
    pub fn models_dir(&self) -> PathBuf {
        self.data_dir.join("models")
    }

    /// The folder for the ONNX Runtime library.
    pub fn runtime_dir(&self) -> PathBuf {
        self.data_dir.join("runtime")
    }

    /// The writer lock file.
    pub fn lock_file(&self) -> PathBuf {
        self.data_dir.join("index.lock")
    }
}
