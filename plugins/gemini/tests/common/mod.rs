//! Helpers shared by the integration tests, from the readers' test kit
//! (`deja_plugin_api::testing`) with this reader filled in.

#![allow(dead_code, unused_imports)]

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
pub use deja_plugin_api::testing::{context, empty_context};
use deja_plugin_api::{HostContext, ParseOutput};
use deja_plugin_gemini::GeminiReader;

/// Parses `bytes` as if read from `path`, modified at `modified_ms`.
pub fn parse_bytes(
    path: &str,
    bytes: &[u8],
    modified_ms: i64,
    context: &HostContext,
) -> ParseOutput {
    testing::parse_bytes::<GeminiReader>(path, bytes, modified_ms, context)
}

/// Parses the file at `path` (modification time 0).
pub fn parse_file(path: &Path, context: &HostContext) -> ParseOutput {
    testing::parse_file::<GeminiReader>(path, context)
}

/// The directory of the fixtures of this plugin.
pub fn fixtures() -> PathBuf {
    testing::fixtures("gemini")
}
