//! This machine's identity in the team store: a random id made once and kept
//! in the local data folder (`team-machine-id`, mode 0600), recorded with
//! each origin (`team.name`) it pushes under, so that two machines using one
//! name are told apart (a push under a name another machine holds is refused)
//! and a pull knows which origin is its own.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::{Result, TeamError};

/// The file, in the data folder, that holds the machine id.
pub const FILE: &str = "team-machine-id";

/// The file holding the machine id of the store in `data_dir`.
pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE)
}

/// The machine id kept in `data_dir`, if one was made.
pub fn load(data_dir: &Path) -> Result<Option<String>> {
    let file = path(data_dir);
    match std::fs::read_to_string(&file) {
        Ok(text) => {
            let id = text.trim();
            if is_machine_id(id) {
                Ok(Some(id.to_string()))
            } else {
                Err(TeamError::Config(format!(
                    "`{}` does not hold a machine id\nhint: remove it; the next `deja team push` makes a new one (and then needs `--take-over-name` for this machine's `team.name`)",
                    file.display()
                )))
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(TeamError::Config(format!("`{}`: {e}", file.display()))),
    }
}

/// The machine id kept in `data_dir`, made now (and kept, mode 0600) if
/// there is none. `data_dir` must exist.
///
/// The id is written whole to a private file beside the final one, synced,
/// then linked into place, which fails if the file exists: the file appears
/// complete or not at all, so a concurrent [`load`] never reads a partial
/// id, and of two deja making it at once the one that links second reads
/// and returns the first one's id.
pub fn load_or_create(data_dir: &Path) -> Result<String> {
    if let Some(id) = load(data_dir)? {
        return Ok(id);
    }
    let id = new_id()?;
    let file = path(data_dir);
    let fail = |e: std::io::Error| TeamError::Config(format!("`{}`: {e}", file.display()));
    let temp = data_dir.join(format!(".{FILE}.{}.tmp", hex(&random_bytes::<8>()?)));
    let linked = write_new(&temp, &id).and_then(|()| std::fs::hard_link(&temp, &file));
    // The temporary name goes either way; the linked file keeps the content.
    let _ = std::fs::remove_file(&temp);
    match linked {
        Ok(()) => {
            sync_dir(data_dir).map_err(fail)?;
            Ok(id)
        }
        // Another deja made it first: that one counts.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            load(data_dir)?.ok_or_else(|| fail(e))
        }
        Err(e) => Err(fail(e)),
    }
}

/// Writes `id` and a newline to the new file `temp` (mode 0600), synced.
fn write_new(temp: &Path, id: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options.open(temp)?;
    f.write_all(format!("{id}\n").as_bytes())?;
    f.sync_all()
}

/// Syncs the folder `dir`, so that a name just linked there survives a crash.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Whether `id` has the form this module writes (a UUID of version 4).
pub fn is_machine_id(id: &str) -> bool {
    let groups: Vec<&str> = id.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A new random id, formatted as a version-4 UUID.
fn new_id() -> Result<String> {
    let mut bytes = random_bytes::<16>()?;
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex = hex(&bytes);
    Ok(format!(
        "{}-{}-{}-{}-{}",
        hex.get(0..8).unwrap_or(""),
        hex.get(8..12).unwrap_or(""),
        hex.get(12..16).unwrap_or(""),
        hex.get(16..20).unwrap_or(""),
        hex.get(20..32).unwrap_or("")
    ))
}

/// `bytes` in lowercase hexadecimal.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `N` bytes from the operating system's random source.
fn random_bytes<const N: usize>() -> Result<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes)
        .map_err(|e| TeamError::Config(format!("cannot read the system's random source: {e}")))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_id_is_made_once_kept_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()).unwrap(), None);
        let id = load_or_create(dir.path()).unwrap();
        assert!(is_machine_id(&id), "{id}");
        assert_eq!(load_or_create(dir.path()).unwrap(), id);
        assert_eq!(load(dir.path()).unwrap().as_deref(), Some(id.as_str()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path(dir.path()))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let other = tempfile::tempdir().unwrap();
        assert_ne!(load_or_create(other.path()).unwrap(), id);
    }

    #[test]
    fn machines_making_and_reading_the_id_at_once_all_get_one_whole_id() {
        const THREADS: usize = 8;
        for _ in 0..100 {
            let dir = tempfile::tempdir().unwrap();
            let barrier = std::sync::Barrier::new(THREADS);
            let ids: Vec<String> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..THREADS)
                    .map(|i| {
                        let (dir, barrier) = (dir.path(), &barrier);
                        scope.spawn(move || {
                            barrier.wait();
                            if i % 2 == 0 {
                                return load_or_create(dir);
                            }
                            // A reader sees no file or the whole id.
                            let until =
                                std::time::Instant::now() + std::time::Duration::from_secs(10);
                            loop {
                                if let Some(id) = load(dir)? {
                                    return Ok(id);
                                }
                                assert!(std::time::Instant::now() < until, "no id made");
                                std::thread::yield_now();
                            }
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap().map_err(|e| e.to_string()).unwrap())
                    .collect()
            });
            assert!(is_machine_id(&ids[0]), "{ids:?}");
            assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
            // Nothing but the id file is left.
            let names: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, [FILE], "{names:?}");
        }
    }

    #[test]
    fn a_damaged_file_is_an_error_not_a_new_id() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(path(dir.path()), "not an id\n").unwrap();
        let e = load_or_create(dir.path()).unwrap_err().to_string();
        assert!(e.contains("does not hold a machine id"), "{e}");
        assert!(!is_machine_id("0123"));
        assert!(is_machine_id("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"));
    }
}
