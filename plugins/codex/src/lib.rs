//! deja reader plugin for Codex CLI rollouts (`~/.codex/sessions/**/rollout-*.jsonl`).
//!
//! A rollout is one Codex thread, appended to as it runs, in one of three
//! generations (legacy bare items, `{timestamp, type, payload}` envelopes,
//! envelopes with ordinals). The modules, in the order data flows through them:
//!
//! - [`discover`]: where rollouts are (`$CODEX_HOME`, `DEJA_CODEX_ROOT`, config roots);
//!   [`detect`]: whether a file is one; [`home`]: a rollout's place in its Codex home.
//! - [`jsonl`]: text to JSON lines (torn last lines skipped); [`record`]: a line of
//!   any generation to what deja reads; [`time`]: timestamps; [`outcome`]: how a
//!   command ended, from its call's result.
//! - [`context`]: what in a user message was typed and what Codex injected;
//!   [`conversation`]: response items and events of one message counted once.
//! - [`tools`]: tool calls to command and file records, with [`shell`] (argv and
//!   words), [`patch`] (`apply_patch` files), [`reads`] (files shell commands read)
//!   and [`codemode`] (commands in code-mode programs); [`paths`]: path strings of any OS.
//! - [`ids`]: a rollout's identity; [`title`]: thread names from `session_index.jsonl`;
//!   [`session`]: a rollout to deja's session; [`resume`]: `codex resume <id>`.

// Input-dependent code never indexes unchecked: a reader must not panic on
// any bytes (SECURITY.md). Tests may index.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod codemode;
pub mod context;
pub mod conversation;
pub mod detect;
pub mod discover;
pub mod home;
pub mod ids;
pub mod jsonl;
pub mod outcome;
pub mod patch;
pub mod paths;
pub mod reads;
pub mod record;
pub mod resume;
pub mod session;
pub mod shell;
pub mod time;
pub mod title;
pub mod tools;

use deja_plugin_api::{
    text, Discovery, HostContext, ParseOutput, ParseOutputV1_2, ParseOutputV1_3, ParseRequest,
    PluginError, PluginInfo, RVec, ResumeAdvice, ResumeRequest,
};

/// The Codex CLI reader.
pub struct CodexReader;

impl deja_plugin_api::Reader for CodexReader {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "codex".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            harness: "codex".into(),
            description: "Codex CLI rollouts (~/.codex/sessions, archived_sessions)".into(),
            abi: deja_plugin_api::version::CURRENT,
            config_keys: RVec::from(vec![]),
        }
    }

    fn detect(path: &str, head: &[u8]) -> u8 {
        detect::confidence(path, head)
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
        Ok(session::with_outcomes(
            &text,
            request.path.as_str(),
            request.modified_ms,
        ))
    }

    fn resume(request: &ResumeRequest<'_>) -> Result<ResumeAdvice, PluginError> {
        Ok(resume::advise(request))
    }
}

deja_plugin_api::export_plugin!(CodexReader);
