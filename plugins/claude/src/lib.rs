//! deja reader plugin for Claude Code session transcripts
//! (`~/.claude/projects/<encoded cwd>/<sessionId>.jsonl`).
//!
//! Each transcript is a JSONL log: `user` and `assistant` records carry the
//! conversation, many other record types carry titles, queue operations,
//! snapshots and progress. The modules, in the order data flows through them:
//!
//! - [`discover`]: where transcripts are (`~/.claude`, `CLAUDE_CONFIG_DIR`,
//!   `DEJA_CLAUDE_ROOT`, config roots); [`layout`]: what a path says
//!   (session or subagent, parent, project folder);
//! - [`records`]: the serde type of a line; [`parse`]: a file to sessions,
//!   splitting off inline subagents and reading [`family`] files around a
//!   subagent's transcript;
//! - [`builder`]: one session record by record, with [`content`] (what a
//!   record says, after [`markup`] removes Claude Code's own), [`tools`]
//!   (files and commands), [`queue`] (prompts typed while Claude was busy),
//!   [`lineage`] (records written twice), [`title`] and [`project`];
//! - [`ids`]: deja's ids; [`resume`]: `claude --resume` advice;
//!   [`paths`] and [`time`]: path strings of any OS, RFC 3339 timestamps.

// Input-dependent code never indexes unchecked: a reader must not panic on
// any bytes (SECURITY.md). Tests may index.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod builder;
pub mod content;
pub mod discover;
pub mod family;
pub mod ids;
pub mod layout;
pub mod lineage;
pub mod markup;
pub mod parse;
pub mod project;
pub mod queue;
pub mod records;
pub mod resume;
pub mod time;
pub mod title;
pub mod tools;

use deja_plugin_api::{
    text, Discovery, HostContext, ParseOutput, ParseOutputV1_2, ParseOutputV1_3, ParseRequest,
    PluginError, PluginInfo, RVec, ResumeAdvice, ResumeRequest,
};

/// How sure [`ClaudeReader::detect`] is of a `.jsonl` file whose first bytes
/// hold a field or record type only Claude Code writes.
const DETECT_MARKED: u8 = 100;
/// How sure it is of a `.jsonl` file laid out as Claude Code lays them out
/// (`projects/<folder>/`, `subagents/`) holding conversation fields.
const DETECT_PLACED: u8 = 80;

/// How sure it is of a `.jsonl` file anywhere whose first line is a minimal
/// Claude Code record: `{"type": "user" | "assistant", "message": {"role",
/// "content"}}` without the chain and session fields (as other tools'
/// conformance fixtures write them). Qwen Code's records hold `parts`, not
/// `content`, and Codex CLI's an envelope, so neither matches.
const DETECT_MINIMAL: u8 = 40;

/// Field names and record types no other harness writes (Qwen Code's chats
/// share `uuid`, `parentUuid` and `sessionId`, Gemini CLI's `sessionId`).
const MARKERS: &[&str] = &[
    "\"isSidechain\"",
    "\"userType\"",
    "\"leafUuid\"",
    "\"requestId\"",
    "\"file-history-snapshot\"",
    "\"queue-operation\"",
    "\"permission-mode\"",
    "\"custom-title\"",
    "\"ai-title\"",
    "\"agent-name\"",
    "\"last-prompt\"",
    "\"teleported-from\"",
    "\"pr-link\"",
];

/// The Claude Code reader.
pub struct ClaudeReader;

impl deja_plugin_api::Reader for ClaudeReader {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "claude".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            harness: "claude".into(),
            description: "Claude Code session transcripts (~/.claude/projects)".into(),
            abi: deja_plugin_api::version::CURRENT,
            config_keys: RVec::new(),
        }
    }

    fn detect(path: &str, head: &[u8]) -> u8 {
        let mut parts = path.rsplit(['/', '\\']);
        let name = parts.next().unwrap_or(path);
        let folder = parts.next().unwrap_or_default();
        // Qwen Code keeps its Claude-like chats in `projects/<folder>/chats/`.
        if !name.ends_with(layout::EXTENSION) || folder == "chats" {
            return 0;
        }
        let head = text::decode(head).0;
        if MARKERS.iter().any(|marker| head.contains(marker)) {
            return DETECT_MARKED;
        }
        let placed = folder == layout::SUBAGENTS
            || parts.next() == Some("projects")
            || name.starts_with(layout::AGENT_PREFIX);
        if placed && head.contains("\"parentUuid\"") && head.contains("\"sessionId\"") {
            DETECT_PLACED
        } else if is_minimal_record(&head) {
            DETECT_MINIMAL
        } else {
            0
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
        Ok(parse::parse(
            request.path.as_str(),
            request.bytes.as_slice(),
            request.modified_ms,
        ))
    }

    fn resume(request: &ResumeRequest<'_>) -> Result<ResumeAdvice, PluginError> {
        Ok(resume::advise(request))
    }
}

/// Whether the first complete line of `head` is a minimal Claude Code
/// conversation record (see [`DETECT_MINIMAL`]).
fn is_minimal_record(head: &str) -> bool {
    let Some(line) = head.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return false;
    };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
        return false;
    };
    let kind = value.get("type").and_then(|t| t.as_str());
    let message = value.get("message");
    matches!(kind, Some("user" | "assistant"))
        && message
            .and_then(|m| m.get("role"))
            .is_some_and(|r| r.is_string())
        && message
            .and_then(|m| m.get("content"))
            .is_some_and(|c| c.is_string() || c.is_array())
        && message.and_then(|m| m.get("parts")).is_none()
}

deja_plugin_api::export_plugin!(ClaudeReader);
