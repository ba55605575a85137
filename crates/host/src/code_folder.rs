//! Whether a transcript a reader found in a code folder (see
//! [`deja_plugin_api::discover::FOUND_IN_CODE_FOLDER`]) may be read: one the
//! folder's git repository tracks came with the repository (a clone ships
//! it), and one another user owns was not written by this user's harness.
//! Decided from the files alone: git is never run (a cloned repository's
//! config can make git run commands); its index file is read instead
//! ([`crate::git_index`]).

use std::path::{Path, PathBuf};

use crate::git_index;

/// Why a transcript found in a code folder is not read, or `Ok` when it may
/// be (its sessions are then labelled as found in a code folder). A git
/// index that cannot be read does not refuse the file: the label keeps its
/// sessions away from agents anyway; the problem comes back as a warning.
pub fn check(path: &Path, harness: &str, read_tracked: bool) -> Checked {
    if let Some(refusal) = foreign_owner(path, harness) {
        return Checked::Refused(refusal);
    }
    if read_tracked {
        return Checked::Read { warning: None };
    }
    let Some(repo) = repository_of(path) else {
        return Checked::Read { warning: None };
    };
    match git_index::tracks(&repo.git_dir, &repo.relative) {
        Ok(false) => Checked::Read { warning: None },
        Ok(true) => Checked::Refused(format!(
            "not read: the git repository at `{}` tracks it, so it came with the repository rather than from this machine; set `index.read_tracked = true` to read it",
            repo.work_tree.display()
        )),
        Err(e) => Checked::Read {
            warning: Some(format!(
                "cannot tell whether the git repository at `{}` tracks it ({e}); read as found in a code folder",
                repo.work_tree.display()
            )),
        },
    }
}

/// The verdict of [`check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// Read it (and label its sessions), with a warning when the evidence
    /// could not all be read.
    Read {
        /// What could not be checked.
        warning: Option<String>,
    },
    /// Do not read it, for this reason.
    Refused(String),
}

/// The git repository whose work tree holds a file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Repository {
    /// The work tree's top folder.
    work_tree: PathBuf,
    /// Its git folder (`.git`, or where a `.git` file points).
    git_dir: PathBuf,
    /// The file's path below the work tree, `/`-separated, as git's index
    /// names it.
    relative: Vec<u8>,
}

/// The nearest folder above `path` that holds a `.git` folder or file.
fn repository_of(path: &Path) -> Option<Repository> {
    for dir in path.ancestors().skip(1) {
        let dot_git = dir.join(".git");
        let git_dir = if dot_git.is_dir() {
            dot_git
        } else if dot_git.is_file() {
            // A linked work tree or a submodule: `gitdir: <folder>`.
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
            dir.join(target)
        } else {
            continue;
        };
        let relative = relative_bytes(path.strip_prefix(dir).ok()?)?;
        return Some(Repository {
            work_tree: dir.to_path_buf(),
            git_dir,
            relative,
        });
    }
    None
}

/// `relative` as git writes paths: its components joined by `/`.
fn relative_bytes(relative: &Path) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for part in relative.components() {
        let std::path::Component::Normal(name) = part else {
            return None;
        };
        if !out.is_empty() {
            out.push(b'/');
        }
        #[cfg(unix)]
        out.extend_from_slice(std::os::unix::ffi::OsStrExt::as_bytes(name));
        #[cfg(not(unix))]
        out.extend_from_slice(name.to_str()?.as_bytes());
    }
    Some(out)
}

/// Why a file owned by another user is not read, when it is.
#[cfg(unix)]
fn foreign_owner(path: &Path, harness: &str) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata(path).ok()?.uid();
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    (uid != euid).then(|| {
        format!(
            "not read: it is owned by user id {uid}, not by you (user id {euid}), so this machine's harness did not write it for you; name it in `[harness.{harness}] roots` to read it"
        )
    })
}

/// Ownership is not checked where files have no Unix owner.
#[cfg(not(unix))]
fn foreign_owner(_path: &Path, _harness: &str) -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_repository_and_the_path_below_it() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("outer");
        std::fs::create_dir_all(top.join(".git")).unwrap();
        std::fs::create_dir_all(top.join("inner/sub")).unwrap();
        std::fs::write(top.join("inner/.git"), "gitdir: ../.git/modules/inner\n").unwrap();
        let file = top.join("inner/sub/.aider.chat.history.md");
        let repo = repository_of(&file).unwrap();
        assert_eq!(repo.work_tree, top.join("inner"));
        assert_eq!(repo.git_dir, top.join("inner/../.git/modules/inner"));
        assert_eq!(repo.relative, b"sub/.aider.chat.history.md");
        let repo = repository_of(&top.join("x/.crush/crush.db")).unwrap();
        assert_eq!(repo.git_dir, top.join(".git"));
        assert_eq!(repo.relative, b"x/.crush/crush.db");
    }

    /// Runs git in `dir` without the user's or the system's config.
    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    #[test]
    fn a_file_the_repository_tracks_is_refused_in_every_index_format() {
        for format in [
            &["--index-version", "2"][..],
            &["--index-version", "4"],
            &["--split-index"],
        ] {
            let dir = tempfile::tempdir().unwrap();
            let repo = dir.path().join("cloned");
            std::fs::create_dir_all(repo.join("deep/er")).unwrap();
            let tracked = repo.join("deep/er/.aider.chat.history.md");
            let untracked = repo.join("deep/.aider.chat.history.md");
            for (i, f) in ["a", "deep/b", "deep/er/.aider.chat.history.md", "z"]
                .iter()
                .enumerate()
            {
                std::fs::write(repo.join(f), format!("{i}")).unwrap();
            }
            git(&repo, &["init", "-q"]);
            git(&repo, &["add", "."]);
            let mut update = vec!["update-index"];
            update.extend_from_slice(format);
            git(&repo, &update);
            std::fs::write(&untracked, "mine").unwrap();
            match check(&tracked, "aider", false) {
                Checked::Refused(why) => {
                    assert!(why.contains("tracks it"), "{why}");
                    assert!(why.contains(&repo.display().to_string()), "{why}");
                    assert!(why.contains("index.read_tracked"), "{why}");
                }
                other => panic!("{format:?}: {other:?}"),
            }
            assert_eq!(
                check(&tracked, "aider", true),
                Checked::Read { warning: None },
                "{format:?}"
            );
            assert_eq!(
                check(&untracked, "aider", false),
                Checked::Read { warning: None },
                "{format:?}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_file_another_user_owns_is_refused_even_when_tracked_ones_are_read() {
        let dir = tempfile::tempdir().unwrap();
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        let file = if euid == 0 {
            let file = dir.path().join(".aider.chat.history.md");
            std::fs::write(&file, "x").unwrap();
            std::os::unix::fs::chown(&file, Some(65534), None).unwrap();
            file
        } else {
            // Owned by root, not by the user running the test.
            PathBuf::from("/etc/passwd")
        };
        match check(&file, "aider", true) {
            Checked::Refused(why) => {
                assert!(why.contains("owned by user id"), "{why}");
                assert!(why.contains("[harness.aider] roots"), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_file_outside_any_repository_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a/.aider.chat.history.md");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "x").unwrap();
        assert_eq!(repository_of(&file), None);
        assert_eq!(
            check(&file, "aider", false),
            Checked::Read { warning: None }
        );
    }
}
