//! Where the agents keep their data: the home folder and the variables that
//! move their folders (`CLAUDE_CONFIG_DIR`, `QWEN_RUNTIME_DIR`, `QWEN_HOME`,
//! `GEMINI_CLI_HOME`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The home folder and the environment the agents' folders derive from.
#[derive(Debug, Clone, Default)]
pub struct Places {
    /// The user's home folder.
    pub home: PathBuf,
    /// Environment variables (only those set to valid UTF-8).
    pub env: BTreeMap<String, String>,
}

impl Places {
    /// `home` with this process's environment.
    pub fn from_process(home: &Path) -> Places {
        Places {
            home: home.to_path_buf(),
            env: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
        }
    }

    /// The folder variable `name` names (`~` expanded), when it is set and
    /// not empty.
    pub fn dir_var(&self, name: &str) -> Option<PathBuf> {
        self.env
            .get(name)
            .filter(|v| !v.trim().is_empty())
            .map(|v| deja_fs::expand_home(v, &self.home))
    }
}
