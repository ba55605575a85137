//! deja reader plugin for Gemini CLI chat recordings.
//!
//! The pieces, one job each:
//! - [`discover`]: where the chat files are (`~/.gemini/tmp/*/chats`, overrides, config roots).
//! - [`records`]: the serde types of a chat file's records.
//! - [`replay`]: the edit-log loader (legacy JSON and JSONL with `$set`/`$rewindTo`).
//! - [`content`]: message types to roles, parts to text.
//! - [`tools`]: tool calls to file and command records.
//! - [`project`]: the project directory from `.project_root`, `projects.json` and hashes.
//! - [`ids`]: deja's stable session ids.
//! - [`parent`]: the parent session of a nested subagent chat.
//! - [`session`]: a loaded file turned into deja's session.
//! - [`resume`]: how to reopen a session with `gemini --resume`.
//! - [`paths`] and [`time`]: path strings of any OS, RFC 3339 timestamps.

// Input-dependent code never indexes unchecked: a reader must not panic on
// any bytes (SECURITY.md). Tests may index.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod content;
pub mod discover;
pub mod ids;
pub mod parent;
pub mod project;
pub mod records;
pub mod replay;
pub mod resume;
pub mod session;
pub mod time;
pub mod tools;

use deja_plugin_api::{
    text, Discovery, HostContext, ParseOutput, ParseOutputV1_2, ParseOutputV1_3, ParseRequest,
    PluginError, PluginInfo, RVec, ResumeAdvice, ResumeRequest,
};

/// How sure [`GeminiReader::detect`] is of a `session-*.json(l)` file holding a `sessionId`.
const DETECT_SESSION_FILE: u8 = 100;
/// How sure it is of another `.json(l)` file holding a `sessionId` (a subagent chat, or not Gemini's).
const DETECT_OTHER_JSON: u8 = 60;

/// The Gemini CLI reader.
pub struct GeminiReader;

impl deja_plugin_api::Reader for GeminiReader {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "gemini".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            harness: "gemini".into(),
            description: "Gemini CLI chat recordings (~/.gemini/tmp/*/chats)".into(),
            abi: deja_plugin_api::version::CURRENT,
            config_keys: RVec::from(vec![]),
        }
    }

    fn detect(path: &str, head: &[u8]) -> u8 {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let json = name.ends_with(".json") || name.ends_with(".jsonl");
        if !json || !text::decode(head).0.contains("\"sessionId\"") {
            0
        } else if name.starts_with("session-") {
            DETECT_SESSION_FILE
        } else {
            DETECT_OTHER_JSON
        }
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
        let conversation = replay::load(&text);
        Ok(session::with_outcomes(
            conversation,
            request.path.as_str(),
            request.modified_ms,
        ))
    }

    fn resume(request: &ResumeRequest<'_>) -> Result<ResumeAdvice, PluginError> {
        Ok(resume::advise(request))
    }
}

deja_plugin_api::export_plugin!(GeminiReader);
