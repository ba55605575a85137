//! deja reader plugin for aider's `.aider.chat.history.md` transcripts.
//!
//! One history file holds every launch of aider in a project, each starting
//! with `# aider chat started at <local time>`. The modules, in the order data
//! flows through them:
//!
//! - `config`: the plugin's config section; `discover`: where histories are
//!   on this machine;
//! - `decode`: bytes to text; `header`: session headers;
//! - `lines`: what a line is on its own, and whether the file kept aider's
//!   trailing spaces; `fence`: code fences;
//! - `blocks`: a session's lines to user, assistant and tool blocks;
//! - `input`: what a user input means (message, command, question, answer);
//!   `output`: the files and commands tool output records;
//! - `build`: blocks to messages and records; `ids`: session ids;
//!   `clock`: local header times to UTC; `parse`: the whole file;
//! - `resume`: why a session cannot be reopened, and what to run instead.

// Input-dependent code never indexes unchecked: a reader must not panic on
// any bytes (SECURITY.md). Tests may index.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

mod blocks;
mod build;
mod clock;
mod config;
mod decode;
mod discover;
mod fence;
mod header;
mod ids;
mod input;
mod lines;
mod output;
mod parse;
mod resume;

use deja_plugin_api::{
    Discovery, HostContext, ParseOutput, ParseRequest, PluginError, PluginInfo, RVec, ResumeAdvice,
    ResumeRequest,
};

use crate::clock::{Zone, TIMEZONE_KEY};
use crate::config::AiderConfig;
use crate::discover::HISTORY_NAME;

/// How sure `detect` is of a file named `.aider.chat.history.md`.
const NAMED_CONFIDENCE: u8 = 100;
/// How sure it is of another file whose first bytes hold a session header.
const HEADER_CONFIDENCE: u8 = 90;

/// The aider reader.
pub struct AiderReader;

impl deja_plugin_api::Reader for AiderReader {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "aider".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            harness: "aider".into(),
            description: "aider chat histories (.aider.chat.history.md)".into(),
            abi: deja_plugin_api::version::CURRENT,
            config_keys: RVec::from(vec![TIMEZONE_KEY.into()]),
        }
    }

    fn detect(path: &str, head: &[u8]) -> u8 {
        let named = std::path::Path::new(path)
            .file_name()
            .is_some_and(|name| name == HISTORY_NAME);
        if named {
            NAMED_CONFIDENCE
        } else if deja_plugin_api::text::lines(&decode::decode(head)).any(header::is_header) {
            HEADER_CONFIDENCE
        } else {
            0
        }
    }

    fn discover(context: &HostContext) -> Result<Discovery, PluginError> {
        discover::discover(context)
    }

    fn parse(request: &ParseRequest<'_>) -> Result<ParseOutput, PluginError> {
        let config: AiderConfig = request.context.config()?;
        let zone = Zone::from_setting(config.timezone.as_deref())?;
        Ok(parse::parse(
            request.path.as_str(),
            request.bytes.as_slice(),
            request.modified_ms,
            zone,
        ))
    }

    fn resume(request: &ResumeRequest<'_>) -> Result<ResumeAdvice, PluginError> {
        Ok(resume::advise(request))
    }
}

deja_plugin_api::export_plugin!(AiderReader);
