//! Transcripts in folders every user can write to (the system's temporary
//! folder, where some harnesses keep their chats): one that another user
//! owns may have been put there by that user, was not written for you, and
//! is not read.

use std::path::{Path, PathBuf};

/// Why the transcript at `path`, whose metadata is `meta`, is not read, when
/// another user owns it and it lies in a folder every user can write to
/// (with no folder of one's own that only one may write to between the two).
#[cfg(unix)]
pub fn refusal(path: &Path, meta: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let owner = meta.uid();
    // Asked once: an index run checks every transcript.
    static EUID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = *EUID.get_or_init(|| unsafe { libc::geteuid() });
    if owner == euid {
        return None;
    }
    // Up from the file's folder: a folder of one's own that others cannot
    // write to vouches for what is below it; one anyone can write to before
    // that means another user may have made the way down to the file.
    for dir in path.ancestors().skip(1) {
        let Ok(meta) = std::fs::metadata(dir) else {
            return None;
        };
        if meta.mode() & 0o002 != 0 {
            return Some(reason(dir, owner, euid));
        }
        if meta.uid() == euid {
            return None;
        }
    }
    None
}

/// Files have no Unix owner elsewhere: nothing is refused.
#[cfg(not(unix))]
pub fn refusal(_path: &Path, _meta: &std::fs::Metadata) -> Option<String> {
    None
}

/// The refusal of a file owned by `owner`, not `euid`, in `shared`.
fn reason(shared: &Path, owner: u32, euid: u32) -> String {
    format!(
        "not read: it lies in `{}`, a folder every user can write to, and is owned by user id {owner}, not by you (user id {euid}): another user may have put it there",
        PathBuf::from(shared).display()
    )
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// [`super::refusal`] of the file at `path` as it is now.
    fn refusal(path: &Path) -> Option<String> {
        super::refusal(path, &std::fs::metadata(path).ok()?)
    }

    #[test]
    fn the_refusal_names_the_folder_and_both_users() {
        let why = reason(Path::new("/tmp/chat_cache"), 1001, 1000);
        assert!(why.contains("`/tmp/chat_cache`"), "{why}");
        assert!(
            why.contains("user id 1001, not by you (user id 1000)"),
            "{why}"
        );
    }

    #[test]
    fn a_file_of_ones_own_in_a_folder_anyone_can_write_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let file = shared.join("chat");
        std::fs::write(&file, "[]").unwrap();
        assert_eq!(refusal(&file), None);
    }

    #[test]
    fn another_users_file_is_refused_only_in_a_folder_anyone_can_write() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            // Another user's file cannot be made without root: a file root
            // owns, in a folder only root may write to, is read.
            assert_eq!(refusal(Path::new("/etc/passwd")), None);
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("private");
        let shared = dir.path().join("shared");
        for (folder, mode) in [(&private, 0o755), (&shared, 0o1777)] {
            std::fs::create_dir(folder).unwrap();
            std::fs::set_permissions(folder, std::fs::Permissions::from_mode(mode)).unwrap();
            let file = folder.join("chat");
            std::fs::write(&file, "[]").unwrap();
            std::os::unix::fs::chown(&file, Some(65534), None).unwrap();
        }
        assert_eq!(refusal(&private.join("chat")), None);
        let why = refusal(&shared.join("chat")).expect("refused");
        assert!(why.contains("owned by user id 65534"), "{why}");
    }
}
