//! Reading transcript files for the readers: bounded reads with errors that
//! name the file, listing the files under a folder, and resolving one session
//! found in several files to the copy that wins.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use deja_plugin_api::discover::Collector;

use crate::model::Session;

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

/// Every regular file under `dir` (not descending into VCS, dependency or build folders).
pub fn files_under(dir: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let mut collector = Collector::default();
    collector.walk(dir, 32, &mut |c, p| c.add(p));
    let d = collector.finish();
    (
        d.transcripts
            .into_iter()
            .map(|p| PathBuf::from(p.into_string()))
            .collect(),
        d.warnings.into_iter().map(|w| w.into_string()).collect(),
    )
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
