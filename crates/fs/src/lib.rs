//! deja's file-system plumbing, in one place: [`atomic_write`] (a temporary
//! file in the same folder, written, flushed to disk, renamed over the
//! target, the folder flushed too, the target's mode kept), [`mode`],
//! [`expand_home`] and [`lock_exclusive`].
//!
//! Whoever reads the target sees either the old bytes or the new ones, never
//! a mix or an empty file, whatever happens during the write (a crash, a full
//! disk, a second writer).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The mode a file written by [`atomic_write`] gets when it is new: private
/// to the user, since deja's files and the config files it edits may hold
/// secrets.
pub const PRIVATE: u32 = 0o600;

/// What went wrong, with the path it went wrong on.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// An I/O operation on `path` failed.
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        /// What was being done ("write", "rename into place", ...).
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// This crate's result.
pub type Result<T> = std::result::Result<T, FsError>;

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> FsError {
    let path = path.to_path_buf();
    move |source| FsError::Io {
        action,
        path,
        source,
    }
}

/// Replaces `path` with `bytes` atomically, keeping the mode of the file
/// there (a new file gets [`PRIVATE`]).
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    atomic_write_with_mode(path, bytes, PRIVATE)
}

/// Replaces `path` with `bytes` atomically, keeping the mode of the file
/// there; a new file gets `new_mode`.
pub fn atomic_write_with_mode(path: &Path, bytes: &[u8], new_mode: u32) -> Result<()> {
    atomic_write_with(path, new_mode, |f| f.write_all(bytes))
}

/// Replaces `path` atomically with what `write` writes to a temporary file
/// beside it, keeping the mode of the file there (a new file gets
/// `new_mode`). When `write` fails, or anything after it, the temporary file
/// is removed and `path` is left as it was.
///
/// A symbolic link at `path` is written through (the file it points to is
/// replaced, the link stays), so dotfiles kept elsewhere and linked in keep
/// working. The folder must exist.
pub fn atomic_write_with(
    path: &Path,
    new_mode: u32,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    let target = through_link(path)?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let keep = mode(&target);
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(io("create a temporary file in", &dir))?;
    set_file_mode(tmp.as_file(), keep.unwrap_or(new_mode))
        .map_err(io("set the mode of", &target))?;
    write(tmp.as_file_mut()).map_err(io("write", &target))?;
    tmp.as_file().sync_all().map_err(io("flush", &target))?;
    tmp.persist(&target)
        .map_err(|e| e.error)
        .map_err(io("rename into place", &target))?;
    sync_dir(&dir).map_err(io("flush the folder", &dir))?;
    Ok(())
}

/// `path`, or the file it links to when it is a symbolic link.
fn through_link(path: &Path) -> Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).map_err(io("follow the link", path))
        }
        _ => Ok(path.to_path_buf()),
    }
}

#[cfg(unix)]
fn set_file_mode(file: &File, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_file_mode(_file: &File, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

/// The permission bits of `path` (`0o644`, ...; links followed), or `None`
/// when it cannot be read or the platform has no modes.
pub fn mode(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path)
            .ok()
            .map(|m| m.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// `~` and `~/...` in `path` under `home`; any other path as it is.
pub fn expand_home(path: &str, home: &Path) -> PathBuf {
    if path == "~" {
        home.to_path_buf()
    } else if let Some(rest) = path.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(path)
    }
}

/// An exclusive lock on a file, held until dropped (or until the process
/// ends: the OS releases it).
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// Takes an exclusive lock on `path` (created, [`PRIVATE`], when missing),
/// waiting for another holder to let go. Guards read-modify-write cycles of
/// small shared files: lock, read, [`atomic_write`], drop.
pub fn lock_exclusive(path: &Path) -> Result<FileLock> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, PRIVATE);
    let file = options.open(path).map_err(io("open the lock file", path))?;
    file.lock().map_err(io("lock", path))?;
    Ok(FileLock { _file: file })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn content_is_replaced_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("conf.yml");
        std::fs::write(&file, "old: a much longer first version\n").unwrap();
        atomic_write(&file, b"new: 1\n").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new: 1\n");
        assert_eq!(names(dir.path()), ["conf.yml"]);
    }

    #[cfg(unix)]
    #[test]
    fn the_existing_mode_is_kept_and_a_new_file_takes_the_given_one() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("shared.json");
        std::fs::write(&file, "{}").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        atomic_write(&file, b"{\"a\": 1}").unwrap();
        assert_eq!(mode(&file), Some(0o640));
        atomic_write_with_mode(&file, b"{}", 0o600).unwrap();
        assert_eq!(mode(&file), Some(0o640), "an existing file keeps its mode");

        let fresh = dir.path().join("fresh");
        atomic_write_with_mode(&fresh, b"x", 0o644).unwrap();
        assert_eq!(mode(&fresh), Some(0o644));
        let private = dir.path().join("private");
        atomic_write(&private, b"x").unwrap();
        assert_eq!(mode(&private), Some(PRIVATE));
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_intact() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("conf.yml");
        std::fs::write(&file, "mine: true\n").unwrap();
        let err = atomic_write_with(&file, PRIVATE, |f| {
            f.write_all(b"half of the new")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("conf.yml") && text.contains("disk full"),
            "{text}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine: true\n");
        assert_eq!(names(dir.path()), ["conf.yml"]);
    }

    #[test]
    fn a_failed_rename_names_the_path_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty folder cannot be renamed over, even by root.
        let target = dir.path().join("taken");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), "kept").unwrap();
        let err = atomic_write(&target, b"x").unwrap_err();
        assert!(err.to_string().contains("taken"), "{err}");
        assert_eq!(names(dir.path()), ["taken"]);
        assert_eq!(
            std::fs::read_to_string(target.join("inside")).unwrap(),
            "kept"
        );
        // A missing folder: the error names it.
        let err = atomic_write(&dir.path().join("no/such/file"), b"x").unwrap_err();
        assert!(err.to_string().contains("no/such"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_written_through_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles-conf.yml");
        std::fs::write(&real, "old\n").unwrap();
        let link = dir.path().join(".conf.yml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        atomic_write(&link, b"new\n").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new\n");
    }

    #[test]
    fn home_is_expanded_only_at_the_start() {
        let home = Path::new("/home/ana");
        assert_eq!(expand_home("~", home), PathBuf::from("/home/ana"));
        assert_eq!(expand_home("~/x/y", home), PathBuf::from("/home/ana/x/y"));
        assert_eq!(expand_home("/a/~/b", home), PathBuf::from("/a/~/b"));
        assert_eq!(expand_home("~ana/x", home), PathBuf::from("~ana/x"));
    }

    #[test]
    fn the_lock_serialises_read_modify_write_cycles() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("list");
        let lock = dir.path().join("list.lock");
        std::fs::write(&file, "").unwrap();
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let (file, lock) = (file.clone(), lock.clone());
                std::thread::spawn(move || {
                    let _held = lock_exclusive(&lock).unwrap();
                    let mut text = std::fs::read_to_string(&file).unwrap();
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    text.push_str(&format!("{i}\n"));
                    atomic_write(&file, text.as_bytes()).unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort();
        assert_eq!(lines, ["0", "1", "2", "3", "4", "5", "6", "7"]);
    }
}
