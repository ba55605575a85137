//! The project a session belongs to.
//!
//! Every record carries `cwd`, the real directory; the session's is its first
//! record's, the one qwen-code matches when it lists or resumes sessions. The
//! project's id is the folder qwen-code filed the session under
//! (`projects/<encoded cwd>/chats/`), or the encoding of the `cwd` when the
//! file is elsewhere.
//!
//! The folder name alone is ambiguous (`-` stands for `/`, `-`, `_`, `.`, a
//! space, …; Windows folders are lower-cased since 0.13), so it is only a
//! fallback for files whose records carry no `cwd`: the directory is taken
//! when exactly one existing directory on this machine encodes to it, found by
//! a bounded search from the root; otherwise it stays unknown.

use std::fs;
use std::path::{Path, PathBuf};

use deja_plugin_api::{Project, ROption};

use crate::paths;

/// How many folders the fallback search may list.
const SEARCH_BUDGET: usize = 256;

/// The folder a transcript at `path` is filed under: `<folder>/chats/<file>`.
pub fn folder(path: &str) -> Option<&str> {
    let mut parts = path.rsplit(['/', '\\']).skip(1);
    let chats = parts.next()?;
    let folder = parts.next()?;
    (chats == "chats" && !folder.is_empty()).then_some(folder)
}

/// The project of a transcript at `path` whose first `cwd` is `cwd`.
pub fn resolve(path: &str, cwd: Option<&str>) -> Project {
    let folder = folder(path);
    let dir = cwd.map(String::from).or_else(|| folder.and_then(search));
    let id = folder
        .map(String::from)
        .or_else(|| dir.as_deref().map(paths::encode));
    let name = dir.as_deref().and_then(paths::basename).map(String::from);
    Project {
        dir: dir.map(Into::into).into(),
        name: name.map(Into::into).into(),
        id: id.map(Into::into).into(),
    }
}

/// The directory of a project, when known.
pub fn dir(project: &Project) -> Option<&str> {
    match &project.dir {
        ROption::RSome(dir) => Some(dir.as_str()),
        ROption::RNone => None,
    }
}

/// The one existing directory whose encoding is `folder`, if exactly one is found.
pub fn search(folder: &str) -> Option<String> {
    let (root, rest, windows) = if let Some(rest) = folder.strip_prefix('-') {
        (PathBuf::from("/"), rest, false)
    } else {
        let bytes = folder.as_bytes();
        match bytes {
            [letter, b'-', b'-', ..] if letter.is_ascii_alphabetic() && cfg!(windows) => (
                PathBuf::from(format!("{}:\\", char::from(*letter))),
                folder.get(3..).unwrap_or_default(),
                true,
            ),
            _ => return None,
        }
    };
    let mut search = Search {
        budget: SEARCH_BUDGET,
        found: Vec::new(),
        windows,
    };
    search.descend(&root, rest);
    match search.found.as_slice() {
        [only] => Some(only.to_string_lossy().into_owned()),
        _ => None,
    }
}

struct Search {
    budget: usize,
    found: Vec<PathBuf>,
    windows: bool,
}

impl Search {
    /// Looks below `dir` for the directories encoding to `rest`; stops at two.
    fn descend(&mut self, dir: &Path, rest: &str) {
        if rest.is_empty() {
            self.found.push(dir.to_path_buf());
            return;
        }
        if self.budget == 0 || self.found.len() > 1 {
            return;
        }
        self.budget -= 1;
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let mut children: Vec<(PathBuf, String)> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| {
                let name = encode_name(&e.file_name().to_string_lossy(), self.windows);
                (e.path(), name)
            })
            .collect();
        children.sort();
        for (child, name) in children {
            if self.found.len() > 1 {
                return;
            }
            if rest == name {
                self.found.push(child);
            } else if let Some(after) = rest
                .strip_prefix(name.as_str())
                .and_then(|r| r.strip_prefix('-'))
            {
                self.descend(&child, after);
            }
        }
    }
}

fn encode_name(name: &str, windows: bool) -> String {
    let encoded = paths::encode(name);
    if windows {
        encoded.to_lowercase()
    } else {
        encoded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_is_the_one_holding_chats() {
        assert_eq!(
            folder("/h/.qwen/projects/-home-me/chats/s.jsonl"),
            Some("-home-me")
        );
        assert_eq!(
            folder("C:\\q\\projects\\c--x\\chats\\s.jsonl"),
            Some("c--x")
        );
        assert_eq!(folder("/h/elsewhere/s.jsonl"), None);
        assert_eq!(folder("s.jsonl"), None);
    }

    #[test]
    fn cwd_gives_dir_name_and_id() {
        let p = resolve(
            "/q/projects/c--users-me-app/chats/s.jsonl",
            Some("C:\\Users\\me\\App"),
        );
        assert_eq!(p.dir, ROption::RSome("C:\\Users\\me\\App".into()));
        assert_eq!(p.name, ROption::RSome("App".into()));
        assert_eq!(p.id, ROption::RSome("c--users-me-app".into()));
        let p = resolve("/tmp/s.jsonl", Some("/home/me/app"));
        assert_eq!(p.id, ROption::RSome("-home-me-app".into()));
    }

    #[test]
    fn an_unresolvable_folder_leaves_the_dir_unknown() {
        let p = resolve("/q/projects/-no-such-dir-anywhere-x1/chats/s.jsonl", None);
        assert_eq!(p.dir, ROption::RNone);
        assert_eq!(p.name, ROption::RNone);
        assert_eq!(p.id, ROption::RSome("-no-such-dir-anywhere-x1".into()));
        assert_eq!(search("not-encoded"), None);
    }

    #[test]
    fn the_search_finds_a_unique_directory_and_refuses_ambiguity() {
        let base = std::env::temp_dir()
            .canonicalize()
            .unwrap_or_else(|_| std::env::temp_dir())
            .join(format!("deja-qwen-search-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        let unique = base.join("my app").join("src");
        fs::create_dir_all(&unique).unwrap();
        let encoded = paths::encode(&unique.to_string_lossy());
        assert_eq!(
            search(&encoded),
            Some(unique.to_string_lossy().into_owned())
        );
        // `a-b` and `a/b` encode alike: found while it is the only one...
        let dashed = base.join("a-b");
        let nested = base.join("a").join("b");
        let encoded = paths::encode(&dashed.to_string_lossy());
        assert_eq!(encoded, paths::encode(&nested.to_string_lossy()));
        fs::create_dir_all(&dashed).unwrap();
        assert_eq!(
            search(&encoded),
            Some(dashed.to_string_lossy().into_owned())
        );
        // ...and ambiguous, so unknown, once the other exists.
        fs::create_dir_all(&nested).unwrap();
        assert_eq!(search(&encoded), None);
        let _ = fs::remove_dir_all(&base);
    }
}
