//! The readers' test kit (feature `testing`, for their tests only): a host
//! context built explicitly (never from the process environment), parsing
//! through the [`Reader`] trait, fixture walks, and on Unix
//! [`rerun_unprivileged`] for checks that root would pass whatever the code
//! does.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};

use crate::{EnvVar, HostContext, ParseOutput, ParseOutputV1_3, ParseRequest, Reader};

#[cfg(unix)]
mod unprivileged;
#[cfg(unix)]
pub use unprivileged::*;

/// A context with `home`, exactly the variables `env` and the config section `config`.
pub fn context(home: &Path, env: &[(&str, &Path)], config: &str) -> HostContext {
    HostContext {
        home: home.to_string_lossy().into_owned().into(),
        env: env
            .iter()
            .map(|(key, value)| EnvVar {
                key: (*key).into(),
                value: value.to_string_lossy().into_owned().into(),
            })
            .collect(),
        config_json: config.into(),
    }
}

/// A context that points nowhere.
pub fn empty_context() -> HostContext {
    context(Path::new("/nonexistent-home"), &[], "{}")
}

/// Parses `bytes` with reader `R` as if read from `path`, modified at `modified_ms`.
pub fn parse_bytes<R: Reader>(
    path: &str,
    bytes: &[u8],
    modified_ms: i64,
    context: &HostContext,
) -> ParseOutput {
    let request = ParseRequest {
        path: path.into(),
        bytes: bytes.into(),
        modified_ms,
        context,
    };
    R::parse(&request).expect("parse never fails")
}

/// Parses `bytes` with reader `R` as if read from `path` (modification time
/// 0), through the ABI 1.3 call: with the commands' outcomes and the edits'
/// texts.
pub fn parse_edits<R: Reader>(path: &str, bytes: &[u8], context: &HostContext) -> ParseOutputV1_3 {
    let request = ParseRequest {
        path: path.into(),
        bytes: bytes.into(),
        modified_ms: 0,
        context,
    };
    R::parse_with_edits(&request).expect("parse never fails")
}

/// Parses the file at `path` with reader `R` (modification time 0).
pub fn parse_file<R: Reader>(path: &Path, context: &HostContext) -> ParseOutput {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    parse_bytes::<R>(&path.to_string_lossy(), &bytes, 0, context)
}

/// The golden fixtures of `harness` (`fixtures/golden/<harness>` of the repository).
pub fn fixtures(harness: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/golden")
        .join(harness)
}

/// Every file below `dir`, sorted.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files.sort();
    files
}
