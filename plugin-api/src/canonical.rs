//! Transcripts' paths resolved as `std::fs::canonicalize` resolves them,
//! each folder once: discovery over tens of thousands of transcripts in a
//! few hundred folders would otherwise resolve every folder of every path
//! again (a `readlink` for each of its components), and look at every file
//! to learn whether it is a link. A folder is listed once instead, which
//! says of each of its files whether it is a link, and whether a file of a
//! given name is there.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Resolves paths, remembering the folders it resolved and listed.
#[derive(Debug, Default)]
pub struct CanonicalPaths {
    folders: HashMap<PathBuf, Folder>,
}

/// A folder as it was resolved and listed.
#[derive(Debug)]
struct Folder {
    /// Where it really is.
    real: PathBuf,
    /// Its entries' names, and whether each is a plain file or folder (not
    /// a link, and of a type the listing told); `None` when it could not
    /// be listed.
    entries: Option<HashMap<OsString, bool>>,
}

impl Folder {
    fn read(path: &Path) -> Folder {
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let entries = std::fs::read_dir(path).ok().map(|list| {
            list.filter_map(|e| e.ok())
                .map(|e| {
                    let plain = e
                        .file_type()
                        .is_ok_and(|t| (t.is_file() || t.is_dir()) && !t.is_symlink());
                    (e.file_name(), plain)
                })
                .collect()
        });
        Folder { real, entries }
    }
}

impl CanonicalPaths {
    /// `path` with every link and `..` resolved, as `std::fs::canonicalize`
    /// gives it; `path` itself when it cannot be resolved (it does not
    /// exist).
    pub fn resolve(&mut self, path: &Path) -> PathBuf {
        if let (Some(folder), Some(name)) = (path.parent(), path.file_name()) {
            if !folder.as_os_str().is_empty() {
                let folder = self
                    .folders
                    .entry(folder.to_path_buf())
                    .or_insert_with(|| Folder::read(folder));
                // A file that is not itself a link lies where its folder
                // really is. Where the listing cannot tell, the file is
                // looked at.
                let plain = match folder.entries.as_ref().and_then(|e| e.get(name)) {
                    Some(true) => true,
                    _ => std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_symlink()),
                };
                if plain {
                    return folder.real.join(name);
                }
            }
        }
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    }

    /// Whether the folder of `path` held a file named as `path` when it was
    /// listed: `None` when it was not listed (no path in it was resolved)
    /// or could not be.
    pub fn listed(&self, path: &Path) -> Option<bool> {
        let folder = self.folders.get(path.parent()?)?;
        Some(folder.entries.as_ref()?.contains_key(path.file_name()?))
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
        // Each folder was resolved and listed once for its files: the
        // linked one, the one reached by `..`, and the folders of the link
        // and of the folder case.
        assert_eq!(canonical.folders(), 4, "{canonical:?}");
        // A file made after its folder was listed, and a link made in place
        // of a file after the listing, are looked at.
        std::fs::write(real.join("c.jsonl"), "{}").unwrap();
        assert_eq!(
            canonical.resolve(&root.join("linked/chats/c.jsonl")),
            real.join("c.jsonl")
        );
        std::fs::remove_file(real.join("b.jsonl")).unwrap();
        std::os::unix::fs::symlink(real.join("a.jsonl"), real.join("b.jsonl")).unwrap();
        let mut fresh = CanonicalPaths::default();
        assert_eq!(
            fresh.resolve(&root.join("linked/chats/b.jsonl")),
            real.join("a.jsonl")
        );
    }

    #[test]
    fn a_listed_folder_says_which_names_it_held() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("crush.db");
        std::fs::write(&db, "").unwrap();
        std::fs::write(dir.path().join("crush.db-wal"), "").unwrap();
        let mut canonical = CanonicalPaths::default();
        assert_eq!(canonical.listed(&db), None, "not listed yet");
        canonical.resolve(&db);
        assert_eq!(
            canonical.listed(&dir.path().join("crush.db-wal")),
            Some(true)
        );
        assert_eq!(canonical.listed(&dir.path().join("other-wal")), Some(false));
    }
}
