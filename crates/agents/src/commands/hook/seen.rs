//! Which errors a session was already told about, so that a failure note
//! comes at most once per error text per session: one small file per
//! session under `<data>/hooks/`, the records of sessions untouched for a
//! week removed.

use std::path::{Path, PathBuf};

use crate::app::App;

/// How long a session's record of the errors it was told about is kept.
const SEEN_KEPT: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// The file that records which errors a session was already told about.
pub fn seen_file(app: &App, agent: &str, session: &str) -> PathBuf {
    let key = deja_model::sha256_hex(format!("{agent}\0{session}").as_bytes());
    app.paths
        .data_dir
        .join("hooks")
        .join(format!("{agent}-{}", &key[..16]))
}

/// Records `error` for `session`; false when it was recorded already.
pub fn first_time(path: &Path, error: &str) -> bool {
    let hash = deja_model::sha256_hex(error.as_bytes());
    let seen = std::fs::read_to_string(path).unwrap_or_default();
    if seen.lines().any(|l| l == hash) {
        return false;
    }
    if let Some(dir) = path.parent() {
        let _ = deja_store::create_private_dir(dir);
        if seen.is_empty() {
            forget_old_sessions(dir);
        }
    }
    let _ = deja_fs::atomic_write(path, format!("{seen}{hash}\n").as_bytes());
    true
}

/// Removes the records of sessions untouched for [`SEEN_KEPT`] (run when a
/// new session's first note is recorded, so the folder stays small).
fn forget_old_sessions(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > SEEN_KEPT);
        if old && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}
