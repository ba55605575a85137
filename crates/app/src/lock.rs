//! One writer at a time: an exclusive lock on `<data dir>/index.lock`, held
//! for the whole of an index (or forget) run and released by the OS if the
//! process dies. Readers never take it.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How to behave when another writer holds the lock.
#[derive(Debug, Clone, Copy)]
pub enum Wait {
    /// Fail at once.
    No,
    /// Wait up to this long.
    Up(Duration),
}

/// Errors taking the lock.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another deja is writing and we did not wait (long enough).
    #[error("another deja is updating the index{holder} (lock `{path}`){waited}")]
    Busy {
        /// The lock file.
        path: PathBuf,
        /// " (pid N)" when known.
        holder: String,
        /// Why we stopped waiting.
        waited: String,
    },
    /// The lock file could not be opened.
    #[error("cannot open lock file `{path}`: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// A held writer lock; released on drop.
pub struct WriterLock {
    _file: File,
}

fn holder(file: &mut File) -> String {
    let mut s = String::new();
    let _ = file.seek(SeekFrom::Start(0));
    let _ = file.read_to_string(&mut s);
    match s.trim().parse::<u32>() {
        Ok(pid) => format!(" (pid {pid})"),
        Err(_) => String::new(),
    }
}

/// Takes the writer lock at `path`, waiting as `wait` says; `on_wait` is
/// called once if we have to wait (to tell the user).
pub fn acquire(
    path: &Path,
    wait: Wait,
    on_wait: &mut dyn FnMut(&str),
) -> Result<WriterLock, LockError> {
    let io = |source| LockError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Like every file of the store: private.
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(io)?;
    let started = Instant::now();
    let mut told = false;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) => {
                let who = holder(&mut file);
                let limit = match wait {
                    Wait::No => {
                        return Err(LockError::Busy {
                            path: path.to_path_buf(),
                            holder: who,
                            waited: "; not waiting (--no-wait)".into(),
                        })
                    }
                    Wait::Up(limit) => limit,
                };
                if started.elapsed() >= limit {
                    return Err(LockError::Busy {
                        path: path.to_path_buf(),
                        holder: who,
                        waited: format!(
                            "; gave up after {} s (`index.lock_wait_secs`)",
                            limit.as_secs()
                        ),
                    });
                }
                if !told {
                    on_wait(&format!(
                        "another deja is updating the index{who}; waiting for it to finish"
                    ));
                    told = true;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
    }
    file.set_len(0).map_err(io)?;
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    write!(file, "{}", std::process::id()).map_err(io)?;
    file.flush().map_err(io)?;
    Ok(WriterLock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_writer_is_refused_or_waits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.lock");
        let first = acquire(&path, Wait::No, &mut |_| {}).unwrap();
        let err = acquire(&path, Wait::No, &mut |_| {})
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("another deja") && err.contains("--no-wait"),
            "{err}"
        );
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        let mut told = String::new();
        let err = acquire(&path, Wait::Up(Duration::from_millis(250)), &mut |m| {
            told = m.to_string()
        })
        .err()
        .unwrap()
        .to_string();
        assert!(told.contains("waiting"), "{told}");
        assert!(err.contains("gave up"), "{err}");
        drop(first);
        assert!(acquire(&path, Wait::No, &mut |_| {}).is_ok());
    }
}
