//! Building blocks for a plugin's discovery: the common config keys, `~`
//! expansion, exclude patterns and a bounded directory walk that reports
//! unreadable folders as warnings instead of failing.

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

/// The variable in which the host names the project folders of the sessions
/// it holds (of every harness), as a platform path list: readers of
/// transcripts kept inside a project (aider's, Crush's) look there.
pub const KNOWN_PROJECTS_VAR: &str = "DEJA_KNOWN_PROJECTS";

/// The folders under home where people usually keep their code (and clone
/// other people's): readers of transcripts kept inside a project look in
/// their projects.
pub const CODE_FOLDERS: [&str; 8] = [
    "src",
    "code",
    "projects",
    "dev",
    "work",
    "repos",
    "git",
    "workspace",
];

/// The reason, in [`Discovery::searched`], that marks a transcript a reader
/// found by looking into project folders (the [`CODE_FOLDERS`], the
/// [`KNOWN_PROJECTS_VAR`] projects) rather than in its harness's own data
/// folder or a place the user named: such a file may have come with a
/// cloned repository instead of from this machine's harness. The host
/// checks it (a file the folder's git repository tracks, or another user's,
/// is not read) and labels its sessions, which agents are not given unless
/// the user says so. See [`Collector::add_found_in_code_folder`].
pub const FOUND_IN_CODE_FOLDER: &str = "found in a code folder";

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

/// Compiled exclude patterns (globset syntax: `*` and `?` within one path
/// component, `**` across components, `[abc]` classes, `{a,b}` alternatives).
/// A pattern without `/` matches any single component of a path (`scratch*`);
/// a pattern with `/` matches the whole path or any folder above it
/// (`~/private` leaves out everything below that folder).
#[derive(Debug, Clone)]
pub struct Excludes {
    components: globset::GlobSet,
    paths: globset::GlobSet,
    invalid: Vec<String>,
}

impl Default for Excludes {
    fn default() -> Self {
        Excludes {
            components: globset::GlobSet::empty(),
            paths: globset::GlobSet::empty(),
            invalid: Vec::new(),
        }
    }
}

fn compile(pattern: &str) -> Result<globset::Glob, globset::Error> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(!cfg!(windows))
        .build()
}

impl Excludes {
    /// Patterns from the config, with `~` expanded. Patterns that do not
    /// compile are kept as messages ([`Excludes::invalid`]) and match nothing.
    pub fn new(patterns: &[String], home: &Path) -> Self {
        let mut components = globset::GlobSetBuilder::new();
        let mut paths = globset::GlobSetBuilder::new();
        let mut invalid = Vec::new();
        for raw in patterns {
            let pattern = expand_home(raw, home).to_string_lossy().into_owned();
            let has_separator =
                pattern.contains('/') || pattern.contains(std::path::MAIN_SEPARATOR);
            let compiled = if has_separator {
                let trimmed = pattern.trim_end_matches('/');
                compile(trimmed).and_then(|whole| {
                    paths.add(whole);
                    compile(&format!("{trimmed}/**")).map(|below| {
                        paths.add(below);
                    })
                })
            } else {
                compile(&pattern).map(|g| {
                    components.add(g);
                })
            };
            if let Err(e) = compiled {
                invalid.push(format!("exclude pattern `{raw}` is not a valid glob: {e}"));
            }
        }
        let build = |b: globset::GlobSetBuilder, what: &mut Vec<String>| {
            b.build().unwrap_or_else(|e| {
                what.push(format!("exclude patterns cannot be compiled: {e}"));
                globset::GlobSet::empty()
            })
        };
        let components = build(components, &mut invalid);
        let paths = build(paths, &mut invalid);
        Excludes {
            components,
            paths,
            invalid,
        }
    }

    /// Messages for the patterns that did not compile.
    pub fn invalid(&self) -> &[String] {
        &self.invalid
    }

    /// Whether `path` matches a pattern.
    pub fn matches(&self, path: &Path) -> bool {
        self.paths.is_match(path)
            || path
                .components()
                .any(|c| self.components.is_match(Path::new(c.as_os_str())))
    }
}

/// Collects transcripts into a [`Discovery`], once each, skipping excluded paths.
#[derive(Debug, Default)]
pub struct Collector {
    discovery: Discovery,
    seen: std::collections::HashSet<PathBuf>,
    canonical: crate::canonical::CanonicalPaths,
    excludes: Excludes,
}

impl Collector {
    /// A collector applying `excludes`.
    pub fn new(excludes: Excludes) -> Self {
        let mut collector = Collector::default();
        for message in excludes.invalid() {
            collector.warn(message.clone());
        }
        collector.excludes = excludes;
        collector
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
    /// A path whose name is not UTF-8 cannot cross the plugin boundary
    /// unchanged, so it becomes a warning naming it instead of a mangled path.
    pub fn add(&mut self, path: &Path) {
        self.insert(path);
    }

    /// Adds a transcript found by looking into project folders (see
    /// [`FOUND_IN_CODE_FOLDER`]), and marks it so, unless it is excluded or
    /// already present (a place the user named comes first and stays
    /// unmarked).
    pub fn add_found_in_code_folder(&mut self, path: &Path) {
        if self.insert(path) {
            self.searched(path, FOUND_IN_CODE_FOLDER);
        }
    }

    /// Adds a transcript unless it is excluded or already present; whether
    /// it was added.
    fn insert(&mut self, path: &Path) -> bool {
        if self.excludes.matches(path) {
            return false;
        }
        let Some(text) = path.to_str() else {
            self.warn(format!(
                "`{}`: the path is not valid UTF-8, so it is left out; hint: rename it",
                path.display()
            ));
            return false;
        };
        let key = self.canonical.resolve(path);
        let new = self.seen.insert(key);
        if new {
            self.discovery.transcripts.push(text.into());
        }
        new
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
    /// `visit` for every regular file in name order; symbolic links are
    /// followed (a link back to a folder above is reported, not looped
    /// through), folders in [`SKIPPED_DIRS`] and excluded paths are not
    /// entered, and unreadable folders become warnings.
    pub fn walk(&mut self, root: &Path, max_depth: usize, visit: &mut dyn FnMut(&mut Self, &Path)) {
        if !root.exists() {
            return;
        }
        let excludes = self.excludes.clone();
        let walker = walkdir::WalkDir::new(root)
            .follow_links(true)
            .min_depth(1)
            .max_depth(max_depth.saturating_add(1))
            .sort_by_file_name()
            .into_iter()
            .filter_entry(move |entry| {
                if excludes.matches(entry.path()) {
                    return false;
                }
                !(entry.file_type().is_dir()
                    && entry
                        .file_name()
                        .to_str()
                        .is_some_and(|n| SKIPPED_DIRS.contains(&n)))
            });
        for entry in walker {
            match entry {
                Ok(entry) if entry.file_type().is_file() => visit(self, entry.path()),
                Ok(_) => {}
                Err(e) => {
                    let place = e
                        .path()
                        .map(|p| format!("`{}`", p.display()))
                        .unwrap_or_else(|| format!("below `{}`", root.display()));
                    if e.loop_ancestor().is_some() {
                        self.warn(format!(
                            "{place} links back to a folder above it; not followed"
                        ));
                    } else if let Some(io) = e.io_error() {
                        if io.kind() != std::io::ErrorKind::NotFound {
                            self.warn(format!("cannot read {place}: {io}"));
                        }
                    }
                }
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
    use std::fs;

    fn one(pattern: &str) -> Excludes {
        Excludes::new(&[pattern.to_string()], Path::new("/home/u"))
    }

    #[test]
    fn globs() {
        assert!(one("*.md").matches(Path::new("notes.md")));
        assert!(one("*.md").matches(Path::new("/a/notes.md")), "a component");
        assert!(!one("/a/*.md").matches(Path::new("/a/b/notes.md")));
        assert!(one("/a/**/*.md").matches(Path::new("/a/b/c/notes.md")));
        assert!(one("/home/**/scratch").matches(Path::new("/home/u/x/scratch")));
        assert!(one("/tmp/a?c").matches(Path::new("/tmp/abc")));
        assert!(!one("/tmp/a?c").matches(Path::new("/tmp/a/c")));
        assert!(one("/tmp/{x,y}z").matches(Path::new("/tmp/yz")));
        assert!(one("/tmp/[ab]z").matches(Path::new("/tmp/bz")));
    }

    #[test]
    fn an_invalid_pattern_is_reported_and_matches_nothing() {
        let ex = one("/tmp/[oops");
        assert_eq!(ex.invalid().len(), 1, "{:?}", ex.invalid());
        assert!(ex.invalid()[0].contains("[oops"));
        assert!(!ex.matches(Path::new("/tmp/[oops")));
        let c = Collector::new(ex);
        assert_eq!(c.finish().warnings.len(), 1);
    }

    #[test]
    fn pathological_patterns_stay_fast() {
        // Exponential for a backtracking matcher; linear for globset.
        let pattern = format!("/{}b", "*a".repeat(30));
        let text = format!("/{}", "a".repeat(60));
        let started = std::time::Instant::now();
        assert!(!one(&pattern).matches(Path::new(&text)));
        let many = format!("/{}", "**/".repeat(20)) + "x";
        assert!(!one(&many).matches(Path::new(&format!("/{}", "d/".repeat(40)))));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn a_file_found_in_a_code_folder_is_marked_unless_a_named_place_found_it_first() {
        let dir = tempfile::tempdir().unwrap();
        let named = dir.path().join("named.md");
        let cloned = dir.path().join("cloned.md");
        fs::write(&named, "x").unwrap();
        fs::write(&cloned, "x").unwrap();
        let mut c = Collector::default();
        c.add(&named);
        c.add_found_in_code_folder(&named);
        c.add_found_in_code_folder(&cloned);
        c.add_found_in_code_folder(&cloned);
        let d = c.finish();
        assert_eq!(d.transcripts.len(), 2);
        let marked: Vec<&str> = d
            .searched
            .iter()
            .filter(|s| s.reason.as_str() == FOUND_IN_CODE_FOLDER)
            .map(|s| s.path.as_str())
            .collect();
        assert_eq!(marked, [cloned.to_str().unwrap()]);
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

    #[cfg(unix)]
    #[test]
    fn walk_reports_link_loops_and_non_utf8_names() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/t.md"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("a/b/up")).unwrap();
        let odd = root.join(std::ffi::OsStr::from_bytes(b"caf\xe9.md"));
        fs::write(&odd, "x").unwrap();
        let mut c = Collector::default();
        c.walk(root, 8, &mut |c, p| c.add(p));
        let d = c.finish();
        let found: Vec<&str> = d.transcripts.iter().map(|p| p.as_str()).collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].ends_with("a/b/t.md"));
        let warnings: Vec<&str> = d.warnings.iter().map(|w| w.as_str()).collect();
        assert!(
            warnings.iter().any(|w| w.contains("links back")),
            "{warnings:?}"
        );
        assert!(
            warnings.iter().any(|w| w.contains("not valid UTF-8")),
            "{warnings:?}"
        );
    }
}
