//! deja reader plugin for Mistral Vibe (PyPI `mistral-vibe`, 3.0 and later).
//!
//! Vibe 3.0 keeps each session as a folder of its session store,
//! `~/.vibe/logs/session/unified/<session id>/`: a `CURRENT` file naming the
//! latest snapshot generation, whose manifest names content-addressed
//! chunks of the session's history, and a journal of what happened since.
//! deja reads a session through its `CURRENT` file. The pieces, one job each:
//! - [`discover`]: where the sessions are (`VIBE_HOME`, `DEJA_VIBE_ROOT`,
//!   config roots).
//! - [`store`]: `CURRENT`, the manifest, the chunks and the journal read
//!   into the session's history entries.
//! - [`session`]: the entries turned into deja's session (messages,
//!   commands, files), with `meta.json`'s id, parent, folder and title.
//! - [`time`]: RFC 3339 timestamps.

// Input-dependent code never indexes unchecked: a reader must not panic on
// any bytes (SECURITY.md). Tests may index.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod discover;
pub mod session;
pub mod store;
pub mod time;

use std::path::Path;

use deja_plugin_api::{
    paths, Discovery, HostContext, ParseOutput, ParseOutputV1_2, ParseRequest, PluginError,
    PluginInfo, ROption, RString, RVec, ResumeAdvice, ResumeRequest,
};

/// The Mistral Vibe reader.
pub struct VibeReader;

impl deja_plugin_api::Reader for VibeReader {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "vibe".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            harness: "vibe".into(),
            description: "Mistral Vibe sessions (~/.vibe/logs/session/unified/*/CURRENT)".into(),
            abi: deja_plugin_api::version::CURRENT,
            config_keys: RVec::from(vec![]),
        }
    }

    fn detect(path: &str, head: &[u8]) -> u8 {
        let named = paths::basename(path) == Some("CURRENT");
        match (named, store::is_current(head)) {
            (true, true) => 100,
            (false, true) => 60,
            _ => 0,
        }
    }

    fn discover(context: &HostContext) -> Result<Discovery, PluginError> {
        discover::discover(context)
    }

    fn parse(request: &ParseRequest<'_>) -> Result<ParseOutput, PluginError> {
        Self::parse_with_outcomes(request).map(|o| o.output)
    }

    fn parse_with_outcomes(request: &ParseRequest<'_>) -> Result<ParseOutputV1_2, PluginError> {
        let path = Path::new(request.path.as_str());
        let folder = path
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match store::load(path, request.bytes.as_slice()) {
            Ok(loaded) => Ok(session::output(loaded, &folder, request.modified_ms)),
            Err(warning) => {
                let mut output = ParseOutputV1_2::default();
                output.output.warnings.push(warning.into());
                Ok(output)
            }
        }
    }

    fn resume(request: &ResumeRequest<'_>) -> Result<ResumeAdvice, PluginError> {
        let cwd = request
            .project_dir
            .into_option()
            .map(|d| d.as_str().to_string())
            .filter(|d| !d.is_empty());
        let note = if cwd.is_none() {
            "The session's folder is unknown: Vibe lists a session for `--resume` in the folder it ran in."
        } else {
            ""
        };
        Ok(ResumeAdvice::Command {
            argv: ["vibe", "--resume", request.native_id.as_str()]
                .map(RString::from)
                .to_vec()
                .into(),
            cwd: cwd
                .map(RString::from)
                .map_or(ROption::RNone, ROption::RSome),
            note: note.into(),
        })
    }
}

deja_plugin_api::export_plugin!(VibeReader);
