//! Building blocks for a plugin's discovery: the common config keys, `~`
//! expansion, exclude patterns and a bounded directory walk that reports
//! unreadable folders as warnings instead of failing.

use std::fs;
use std::path::{Path, PathBuf};

use abi_stable::std_types::RString;
use serde::Deserialize;

use crate::types::{Discovery, SearchedPlace};

/// Folders a walk never descends into: version control, dependency and build trees.
pub const SKIPPED_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".cache",
    "dist",
    "build",
];

/// The keys every plugin section of the config accepts.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CommonConfig {
    /// Extra places to look for transcripts.
    pub roots: Vec<String>,
    /// Glob patterns (`*`, `**`, `?`) of paths to leave out.
    pub exclude: Vec<String>,
}

/// Expands a leading `~` or `~/` to `home`.
pub fn expand_home(path: &str, home: &Path) -> PathBuf {
    if path == "~" {
        home.to_path_buf()
    } else if let Some(rest) = path.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(path)
    }
}

/// Compiled exclude patterns.
#[derive(Debug, Clone, Default)]
pub struct Excludes {
    patterns: Vec<String>,
}

impl Excludes {
    /// Patterns from the config, with `~` expanded.
    pub fn new(patterns: &[String], home: &Path) -> Self {
        Excludes {
            patterns: patterns
                .iter()
                .map(|p| expand_home(p, home).to_string_lossy().into_owned())
                .collect(),
        }
    }

    /// Whether `path` matches a pattern. A pattern without `/` matches any
    /// single path component (e.g. `scratch*`); otherwise it matches the whole
    /// path or a prefix of it ending at a component boundary.
    pub fn matches(&self, path: &Path) -> bool {
        let text = path.to_string_lossy();
        self.patterns.iter().any(|p| {
            if p.contains('/') || p.contains(std::path::MAIN_SEPARATOR) {
                glob_match(p, &text) || prefix_match(p, &text)
            } else {
                path.components()
                    .any(|c| glob_match(p, &c.as_os_str().to_string_lossy()))
            }
        })
    }
}

fn prefix_match(pattern: &str, text: &str) -> bool {
    let pattern = pattern.trim_end_matches('/');
    // Every prefix of `text` that ends at a component boundary.
    text.char_indices()
        .filter(|&(_, c)| c == '/')
        .map(|(i, _)| &text[..i])
        .any(|prefix| glob_match(pattern, prefix))
}

/// Matches `text` against a glob where `*` matches within a component, `**`
/// across components and `?` one character.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    glob_at(&p, &t)
}

fn glob_at(p: &[char], t: &[char]) -> bool {
    match p.first() {
        None => t.is_empty(),
        Some('*') if p.get(1) == Some(&'*') => {
            let rest = &p[2..];
            let rest = rest.strip_prefix(&['/']).unwrap_or(rest);
            (0..=t.len()).any(|i| glob_at(rest, &t[i..]) || glob_at(&p[2..], &t[i..]))
        }
        Some('*') => {
            let rest = &p[1..];
            for i in 0..=t.len() {
                if glob_at(rest, &t[i..]) {
                    return true;
                }
                if t.get(i) == Some(&'/') {
                    break;
                }
            }
            false
        }
        Some('?') => !t.is_empty() && t[0] != '/' && glob_at(&p[1..], &t[1..]),
        Some(c) => t.first() == Some(c) && glob_at(&p[1..], &t[1..]),
    }
}

/// Collects transcripts into a [`Discovery`], once each, skipping excluded paths.
#[derive(Debug, Default)]
pub struct Collector {
    discovery: Discovery,
    seen: std::collections::HashSet<PathBuf>,
    excludes: Excludes,
}

impl Collector {
    /// A collector applying `excludes`.
    pub fn new(excludes: Excludes) -> Self {
        Collector {
            excludes,
            ..Default::default()
        }
    }

    /// Records that `path` was examined, and why.
    pub fn searched(&mut self, path: &Path, reason: &str) {
        self.discovery.searched.push(SearchedPlace {
            path: path.to_string_lossy().into_owned().into(),
            reason: reason.into(),
            exists: path.exists(),
        });
    }

    /// Adds a transcript unless it is excluded or already present.
    pub fn add(&mut self, path: &Path) {
        if self.excludes.matches(path) {
            return;
        }
        let key = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.seen.insert(key) {
            self.discovery
                .transcripts
                .push(path.to_string_lossy().into_owned().into());
        }
    }

    /// Adds a warning.
    pub fn warn(&mut self, message: String) {
        self.discovery.warnings.push(RString::from(message));
    }

    /// Whether `path` is excluded.
    pub fn is_excluded(&self, path: &Path) -> bool {
        self.excludes.matches(path)
    }

    /// Walks `root` down to `max_depth` levels of folders below it, calling
    /// `visit` for every regular file; folders in [`SKIPPED_DIRS`] and excluded
    /// paths are not entered, and unreadable folders become warnings.
    pub fn walk(&mut self, root: &Path, max_depth: usize, visit: &mut dyn FnMut(&mut Self, &Path)) {
        self.walk_at(root, 0, max_depth, visit);
    }

    fn walk_at(
        &mut self,
        dir: &Path,
        depth: usize,
        max_depth: usize,
        visit: &mut dyn FnMut(&mut Self, &Path),
    ) {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => {
                if dir.exists() {
                    self.warn(format!("cannot read folder `{}`: {e}", dir.display()));
                }
                return;
            }
        };
        let mut paths: Vec<(PathBuf, bool)> = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            // Follow symlinks for the kind, but never loop: depth is bounded.
            let is_dir = match fs::metadata(&path) {
                Ok(m) => m.is_dir(),
                Err(_) => continue,
            };
            paths.push((path, is_dir));
        }
        paths.sort();
        for (path, is_dir) in paths {
            if self.excludes.matches(&path) {
                continue;
            }
            if is_dir {
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                let skipped = name.as_deref().is_some_and(|n| SKIPPED_DIRS.contains(&n));
                if !skipped && depth < max_depth {
                    self.walk_at(&path, depth + 1, max_depth, visit);
                }
            } else {
                visit(self, &path);
            }
        }
    }

    /// The result.
    pub fn finish(self) -> Discovery {
        self.discovery
    }
}

/// Splits a path-list variable (`:` on Unix, `;` on Windows) into paths.
pub fn split_path_list(value: &str) -> Vec<PathBuf> {
    std::env::split_paths(value)
        .filter(|p| !p.as_os_str().is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("*.md", "notes.md"));
        assert!(!glob_match("*.md", "a/notes.md"));
        assert!(glob_match("**/*.md", "a/b/notes.md"));
        assert!(glob_match("/home/**/scratch", "/home/u/x/scratch"));
        assert!(glob_match("/tmp/a?c", "/tmp/abc"));
        assert!(!glob_match("/tmp/a?c", "/tmp/a/c"));
    }

    #[test]
    fn excludes_match_components_and_prefixes() {
        let home = Path::new("/home/u");
        let ex = Excludes::new(&["scratch*".into(), "~/private".into()], home);
        assert!(ex.matches(Path::new("/work/scratch-1/.aider.chat.history.md")));
        assert!(ex.matches(Path::new("/home/u/private/x/.aider.chat.history.md")));
        assert!(!ex.matches(Path::new("/home/u/public/.aider.chat.history.md")));
    }

    #[test]
    fn walk_is_bounded_and_skips_build_dirs() {
        let dir = std::env::temp_dir().join(format!("deja-walk-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        for p in ["a/f", "a/b/f", "a/b/c/f", "node_modules/f"] {
            let path = dir.join(p);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, "x").unwrap();
        }
        let mut c = Collector::default();
        c.walk(&dir, 2, &mut |c, p| c.add(p));
        let found: Vec<String> = c
            .finish()
            .transcripts
            .iter()
            .map(|p| {
                p.as_str()
                    .trim_start_matches(dir.to_str().unwrap())
                    .to_string()
            })
            .collect();
        assert_eq!(found, vec!["/a/b/f", "/a/f"]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
