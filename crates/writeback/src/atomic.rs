//! Creating files without ever replacing one: folders made private to the
//! user, a file written to a temporary file beside its target and linked
//! into place only when nothing is there (a second writer, or the agent,
//! that got there first wins), and a check that the folder really is inside
//! the agent's (no link leads elsewhere).

use std::io::Write;
use std::path::Path;

use crate::error::io;
use crate::Error;

/// The mode of folders deja creates for an agent.
pub const PRIVATE_DIR: u32 = 0o700;

/// Creates `dir` and its missing parents, each private to the user.
pub fn create_dirs(dir: &Path) -> Result<(), Error> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, PRIVATE_DIR);
    builder.create(dir).map_err(io("create the folder", dir))
}

/// Fails unless `dir`, links resolved, is inside `root`, links resolved.
pub fn ensure_inside(dir: &Path, root: &Path) -> Result<(), Error> {
    let real_dir = std::fs::canonicalize(dir).map_err(io("resolve", dir))?;
    let real_root = std::fs::canonicalize(root).map_err(io("resolve", root))?;
    if real_dir.starts_with(&real_root) {
        Ok(())
    } else {
        Err(Error::Outside {
            path: real_dir,
            root: real_root,
        })
    }
}

/// Creates `path` with `bytes` unless something is there already.
pub fn create_marker(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Ok(());
    }
    match create_new(path, bytes) {
        Ok(()) | Err(Error::Exists { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Creates `path` holding `bytes` (mode 0600), atomically: whoever reads it
/// sees the whole file or none; an existing file is never replaced
/// ([`Error::Exists`]). The folder must exist.
pub fn create_new(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(
        deja_fs::PRIVATE,
    ));
    let mut tmp = builder
        .tempfile_in(dir)
        .map_err(io("create a temporary file in", dir))?;
    tmp.write_all(bytes).map_err(io("write", path))?;
    tmp.as_file().sync_all().map_err(io("flush", path))?;
    tmp.persist_noclobber(path).map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            Error::Exists {
                path: path.to_path_buf(),
            }
        } else {
            io("move into place", path)(e.error)
        }
    })?;
    #[cfg(unix)]
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io("flush the folder", dir))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn an_existing_file_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        std::fs::write(&file, "mine\n").unwrap();
        let err = create_new(&file, b"theirs\n").unwrap_err();
        assert!(matches!(err, Error::Exists { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine\n");
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_new_file_is_private_and_whole() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b");
        create_dirs(&nested).unwrap();
        let file = nested.join("s.jsonl");
        create_new(&file, b"line\n").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "line\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&file), 0o600);
            assert_eq!(mode(&nested), 0o700);
            assert_eq!(mode(&dir.path().join("a")), 0o700);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_root_is_caught() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), root.path().join("p")).unwrap();
        assert!(ensure_inside(&root.path().join("p"), root.path()).is_err());
        std::fs::create_dir(root.path().join("q")).unwrap();
        assert!(ensure_inside(&root.path().join("q"), root.path()).is_ok());
    }
}
