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
pub fn load_or_create(data_dir: &Path) -> Result<String> {
    if let Some(id) = load(data_dir)? {
        return Ok(id);
    }
    let id = new_id()?;
    let file = path(data_dir);
    let fail = |e: std::io::Error| TeamError::Config(format!("`{}`: {e}", file.display()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(&file) {
        Ok(mut f) => {
            f.write_all(format!("{id}\n").as_bytes()).map_err(fail)?;
            f.sync_all().map_err(fail)?;
            Ok(id)
        }
        // Another deja made it first: that one counts.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            load(data_dir)?.ok_or_else(|| fail(e))
        }
        Err(e) => Err(fail(e)),
    }
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
    let mut bytes = random_bytes()?;
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        hex.get(0..8).unwrap_or(""),
        hex.get(8..12).unwrap_or(""),
        hex.get(12..16).unwrap_or(""),
        hex.get(16..20).unwrap_or(""),
        hex.get(20..32).unwrap_or("")
    ))
}

#[cfg(unix)]
fn random_bytes() -> Result<[u8; 16]> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| TeamError::Config(format!("cannot read /dev/urandom: {e}")))?;
    Ok(bytes)
}

#[cfg(not(unix))]
fn random_bytes() -> Result<[u8; 16]> {
    use sha2::{Digest, Sha256};
    use std::hash::{BuildHasher, Hasher};
    // The standard library seeds its hashers randomly per process.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write_u32(std::process::id());
    let digest = Sha256::digest(h.finish().to_le_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(digest.get(..16).unwrap_or(&[0u8; 16]));
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
    fn a_damaged_file_is_an_error_not_a_new_id() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(path(dir.path()), "not an id\n").unwrap();
        let e = load_or_create(dir.path()).unwrap_err().to_string();
        assert!(e.contains("does not hold a machine id"), "{e}");
        assert!(!is_machine_id("0123"));
        assert!(is_machine_id("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"));
    }
}
