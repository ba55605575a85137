//! Helpers shared by the integration tests: a host context built explicitly
//! (never from the process environment) and parsing through the `Reader` trait.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use deja_plugin_api::{EnvVar, HostContext, ParseOutput, ParseRequest, Reader};
use deja_plugin_claude::ClaudeReader;

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

/// Parses `bytes` as if read from `path`.
pub fn parse_bytes(
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
    <ClaudeReader as Reader>::parse(&request).expect("parse never fails")
}

/// Parses the file at `path`.
pub fn parse_file(path: &Path, context: &HostContext) -> ParseOutput {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    parse_bytes(&path.to_string_lossy(), &bytes, 0, context)
}

/// The directory of the fixtures of this plugin.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/golden/claude")
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
