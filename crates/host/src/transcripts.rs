//! Reading transcript files for the readers: bounded reads with errors that
//! name the file, listing the files under a folder, and resolving one session
//! found in several files to the copy that wins.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use deja_model::Session;
use deja_plugin_api::discover::SKIPPED_DIRS;

/// Why a transcript could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// An I/O error.
    #[error("cannot read `{path}`: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Over the configured size limit.
    #[error("`{path}` is {size} bytes, over the limit of {limit} (`index.max_file_bytes`)")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
}

/// A transcript's bytes and modification time.
pub struct Transcript {
    /// The contents.
    pub bytes: Vec<u8>,
    /// Modification time, ms since epoch.
    pub modified_ms: i64,
    /// Size in bytes.
    pub size: u64,
}

/// Modification time of `meta` in ms since epoch (0 when unknown).
pub fn modified_ms(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The write-ahead log beside a SQLite database at `path` (`<path>-wal`),
/// when there is one: a harness that keeps its sessions in SQLite writes
/// there first, and the database file itself may not change for a long
/// time, so the log counts as part of the transcript when deciding whether
/// it changed.
pub fn write_ahead_log(path: &Path) -> Option<PathBuf> {
    let wal = write_ahead_log_name(path)?;
    wal.is_file().then_some(wal)
}

/// Where the write-ahead log of a database at `path` would be.
pub fn write_ahead_log_name(path: &Path) -> Option<PathBuf> {
    let mut name = path.file_name()?.to_os_string();
    name.push("-wal");
    Some(path.with_file_name(name))
}

/// Reads `path`, refusing files over `limit` bytes without reading them.
pub fn read(path: &Path, limit: u64) -> Result<Transcript, ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.len() > limit {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // Read at most limit+1 bytes, in case the file grows while we read it.
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(Transcript {
        size: bytes.len() as u64,
        bytes,
        modified_ms: modified_ms(&meta),
    })
}

/// The first bytes of a file, for plugin detection.
pub fn head(path: &Path) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(4096).read_to_end(&mut buf);
    }
    buf
}

/// Most folder levels below the starting folder that are walked.
const MAX_DEPTH: usize = 32;

/// Every regular file under `dir` (following links, never into a loop, and
/// not descending into VCS, dependency or build folders), in name order, and
/// warnings for what could not be read. Paths are kept as the OS gives them,
/// so names that are not UTF-8 are read too.
pub fn files_under(dir: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    let walk = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .max_depth(MAX_DEPTH + 1)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !e.file_type().is_dir()
                || !SKIPPED_DIRS.contains(&e.file_name().to_string_lossy().as_ref())
        });
    for entry in walk {
        match entry {
            Ok(e) if e.file_type().is_file() => files.push(e.into_path()),
            Ok(_) => {}
            Err(e) => {
                let at = e
                    .path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| dir.display().to_string());
                if e.loop_ancestor().is_some() {
                    warnings.push(format!("`{at}`: symbolic link loop, not followed"));
                } else if e
                    .io_error()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound)
                {
                    // A dangling link or a file removed during the walk.
                } else {
                    warnings.push(format!("cannot read folder `{at}`: {e}"));
                }
            }
        }
    }
    (files, warnings)
}

/// Keeps one copy of every (harness, id): the one that wins by precedence,
/// then by last update, then by message count. Order follows first appearance.
pub fn dedup(sessions: Vec<(Session, PathBuf)>) -> Vec<(Session, PathBuf)> {
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let mut out: Vec<(Session, PathBuf)> = Vec::new();
    for (s, path) in sessions {
        let key = (s.harness.clone(), s.id.clone());
        match index.get(&key) {
            Some(&i) => {
                if s.wins_over(&out[i].0) {
                    out[i] = (s, path);
                }
            }
            None => {
                index.insert(key, out.len());
                out.push((s, path));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn session(id: &str, precedence: i32, updated: i64) -> Session {
        Session {
            harness: "h".into(),
            id: id.into(),
            native_id: id.into(),
            started_at_ms: 0,
            updated_at_ms: updated,
            date_approximate: false,
            project: Default::default(),
            title: None,
            parent_id: None,
            precedence,
            messages: vec![],
            files: vec![],
            commands: vec![],
        }
    }

    #[test]
    fn precedence_then_update_decides() {
        let out = dedup(vec![
            (session("a", 1, 50), "a.json".into()),
            (session("b", 0, 0), "b".into()),
            (session("a", 2, 10), "a.jsonl".into()),
            (session("a", 2, 5), "old.jsonl".into()),
        ]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].1, PathBuf::from("a.jsonl"));
    }

    #[test]
    fn walks_non_utf8_names_and_survives_link_loops() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a");
        std::fs::create_dir_all(sub.join("node_modules")).unwrap();
        std::fs::write(sub.join("node_modules").join("skipped"), "x").unwrap();
        std::fs::write(sub.join("f.md"), "x").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let name = std::ffi::OsStr::from_bytes(b"caf\xe9.md");
            std::fs::write(sub.join(name), "x").unwrap();
            std::os::unix::fs::symlink(dir.path(), sub.join("loop")).unwrap();
        }
        let (files, warnings) = files_under(dir.path());
        assert!(files.contains(&sub.join("f.md")), "{files:?}");
        assert!(!files.iter().any(|f| f.ends_with("skipped")), "{files:?}");
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            assert!(
                files
                    .iter()
                    .any(|f| f.file_name().unwrap().as_bytes() == b"caf\xe9.md"),
                "{files:?}"
            );
            assert!(warnings.iter().any(|w| w.contains("loop")), "{warnings:?}");
        }
    }

    #[test]
    fn size_limit_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.md");
        std::fs::write(&p, "0123456789").unwrap();
        assert_eq!(read(&p, 10).unwrap().bytes.len(), 10);
        let e = read(&p, 9).err().unwrap().to_string();
        assert!(e.contains("t.md") && e.contains("max_file_bytes"), "{e}");
        let e = read(&dir.path().join("missing"), 9)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("missing"), "{e}");
    }
}
