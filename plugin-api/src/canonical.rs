//! Transcripts' paths resolved as `std::fs::canonicalize` resolves them,
//! each folder once: discovery over tens of thousands of transcripts in a
//! few hundred folders would otherwise resolve every folder of every path
//! again (a `readlink` for each of its components).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Resolves paths, remembering the folders it resolved.
#[derive(Debug, Default)]
pub struct CanonicalPaths {
    folders: HashMap<PathBuf, PathBuf>,
}

impl CanonicalPaths {
    /// `path` with every link and `..` resolved, as `std::fs::canonicalize`
    /// gives it; `path` itself when it cannot be resolved (it does not
    /// exist).
    pub fn resolve(&mut self, path: &Path) -> PathBuf {
        // A file that is not itself a link lies where its folder really is.
        let plain = std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_symlink());
        match (plain, path.parent(), path.file_name()) {
            (true, Some(folder), Some(name)) if !folder.as_os_str().is_empty() => self
                .folders
                .entry(folder.to_path_buf())
                .or_insert_with(|| {
                    std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf())
                })
                .join(name),
            _ => std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        }
    }

    /// How many folders were resolved.
    pub fn folders(&self) -> usize {
        self.folders.len()
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn paths_resolve_as_canonicalize_resolves_them_with_each_folder_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let real = root.join("real/chats");
        std::fs::create_dir_all(&real).unwrap();
        std::fs::write(real.join("a.jsonl"), "{}").unwrap();
        std::fs::write(real.join("b.jsonl"), "{}").unwrap();
        // A linked folder, a linked file, `..`, a missing file, a folder.
        std::os::unix::fs::symlink(root.join("real"), root.join("linked")).unwrap();
        std::os::unix::fs::symlink(real.join("a.jsonl"), root.join("link.jsonl")).unwrap();
        let mut canonical = CanonicalPaths::default();
        let cases = [
            root.join("linked/chats/a.jsonl"),
            root.join("linked/chats/b.jsonl"),
            root.join("link.jsonl"),
            root.join("real/chats/../chats/b.jsonl"),
            root.join("linked/chats/missing.jsonl"),
            root.join("linked/chats"),
        ];
        for case in &cases {
            let expected = std::fs::canonicalize(case).unwrap_or_else(|_| case.clone());
            assert_eq!(canonical.resolve(case), expected, "{}", case.display());
        }
        assert_eq!(
            canonical.resolve(&root.join("linked/chats/a.jsonl")),
            real.join("a.jsonl")
        );
        // The linked folder was resolved once for its files.
        assert!(canonical.folders() <= 3, "{canonical:?}");
    }
}
