//! deja reader plugin for Qwen Code chat recordings.
//!
//! Qwen Code (a fork of Gemini CLI) records each session as JSONL in
//! `~/.qwen/projects/<encoded cwd>/chats/<sessionId>.jsonl`: one record a
//! line, chained by `uuid`/`parentUuid`, with Gemini-style message parts. The
//! pieces, one job each:
//! - [`discover`]: where the chat files are (`QWEN_RUNTIME_DIR`, `QWEN_HOME`,
//!   `~/.qwen`, `DEJA_QWEN_ROOT`, config roots).
//! - [`records`]: one line read into the fields deja uses.
//! - [`chain`]: the file's records in conversation order (fragments merged,
//!   the `parentUuid` chain from the last record, rewinds and gaps).
//! - [`content`]: who said a record and its text.
//! - [`tools`]: tool calls, `@path` reads and subagent calls to file and command records.
//! - [`project`]: the project directory from `cwd`, the encoded folder as a fallback.
//! - [`session`]: a loaded file turned into deja's session.
//! - [`resume`]: how to reopen a session with `qwen --resume`.
//! - [`detect`]: whether a file is a Qwen Code chat, without claiming other harnesses' JSONL.
//! - [`paths`] and [`time`]: path strings of any OS, RFC 3339 timestamps.

// Input-dependent code never indexes unchecked: a reader must not panic on
// any bytes (SECURITY.md). Tests may index.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod chain;
pub mod content;
pub mod detect;
pub mod discover;
pub mod paths;
pub mod project;
pub mod records;
pub mod resume;
pub mod session;
pub mod time;
pub mod tools;

use deja_plugin_api::{
    text, Discovery, HostContext, ParseOutput, ParseOutputV1_2, ParseOutputV1_3, ParseRequest,
    PluginError, PluginInfo, RVec, ResumeAdvice, ResumeRequest,
};

/// The Qwen Code reader.
pub struct QwenReader;

impl deja_plugin_api::Reader for QwenReader {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "qwen".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            harness: "qwen".into(),
            description: "Qwen Code chat recordings (~/.qwen/projects/*/chats)".into(),
            abi: deja_plugin_api::version::CURRENT,
            config_keys: RVec::from(vec![]),
        }
    }

    fn detect(path: &str, head: &[u8]) -> u8 {
        detect::score(path, head)
    }

    fn discover(context: &HostContext) -> Result<Discovery, PluginError> {
        discover::discover(context)
    }

    fn parse(request: &ParseRequest<'_>) -> Result<ParseOutput, PluginError> {
        Self::parse_with_edits(request).map(|o| o.output)
    }

    fn parse_with_outcomes(request: &ParseRequest<'_>) -> Result<ParseOutputV1_2, PluginError> {
        Self::parse_with_edits(request).map(ParseOutputV1_3::into_v1_2)
    }

    fn parse_with_edits(request: &ParseRequest<'_>) -> Result<ParseOutputV1_3, PluginError> {
        let (text, _) = text::decode(request.bytes.as_slice());
        // A file of minimal records is named by its file name.
        let stem = paths::basename(request.path.as_str())
            .and_then(|name| name.strip_suffix(".jsonl"))
            .filter(|stem| !stem.is_empty())
            .unwrap_or(chain::MINIMAL_SESSION);
        let loaded = chain::load_named(&text, stem);
        Ok(session::with_outcomes(
            loaded,
            request.path.as_str(),
            request.modified_ms,
        ))
    }

    fn resume(request: &ResumeRequest<'_>) -> Result<ResumeAdvice, PluginError> {
        Ok(resume::advise(request))
    }
}

deja_plugin_api::export_plugin!(QwenReader);
