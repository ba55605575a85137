//! deja reader plugin that reads transcripts by reader descriptions: a
//! harness described in a TOML file (where its files are, what they hold,
//! which records are messages and what their fields are) is read with no
//! code and no compiler.
//!
//! The host loads this plugin once and calls it once per description, with
//! the description in the context (ABI 1.1): the `*.toml` files in the plugin
//! folders, and the descriptions built in here ([`BUILTIN`]). The pieces:
//! - [`description`]: the TOML read into checked values; errors name the
//!   file, the line and the key.
//! - [`pointer`]: JSON pointers into records, and conditions on them.
//! - [`discover`]: roots per OS and variables, globs, excludes.
//! - [`source`]: JSONL lines, a JSON document (or its change log: [`log`])
//!   or SQLite queries, read into groups of records, one per session.
//! - [`linked`]: a session kept as a tree of JSON files (its messages and
//!   their parts files of their own), read into one group.
//! - [`session`]: a group turned into deja's session; [`place`]: values
//!   taken from the transcript's path.
//! - [`detect`], [`resume`] and [`time`]: recognising a file, reopening a
//!   session, reading timestamps; [`dated`]: a session's times where the
//!   description says they are (its records, its path, an index beside it).

// Input-dependent code never indexes unchecked: a reader must not panic on
// any bytes (SECURITY.md). Tests may index.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod dated;
pub mod description;
pub mod detect;
pub mod discover;
pub mod linked;
pub mod log;
pub mod place;
pub mod pointer;
pub mod resume;
pub mod session;
pub mod source;
pub mod time;

use deja_plugin_api::{
    DescriptionFile, Descriptions, Discovery, HostContext, ParseOutput, ParseOutputV1_2,
    ParseOutputV1_3, ParseRequest, PluginError, PluginInfo, RVec, ResumeAdvice, ResumeRequest,
    DESCRIPTION_PATH_VAR, DESCRIPTION_VAR,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use sha2::{Digest, Sha256};

use crate::description::Description;

/// The descriptions built into this plugin: (file name, text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("opencode.toml", include_str!("../readers/opencode.toml")),
    ("continue.toml", include_str!("../readers/continue.toml")),
    ("kilo.toml", include_str!("../readers/kilo.toml")),
    ("copilot.toml", include_str!("../readers/copilot.toml")),
    ("cline.toml", include_str!("../readers/cline.toml")),
    ("pi.toml", include_str!("../readers/pi.toml")),
    ("crush.toml", include_str!("../readers/crush.toml")),
    ("droid.toml", include_str!("../readers/droid.toml")),
    (
        "command-code.toml",
        include_str!("../readers/command-code.toml"),
    ),
    (
        "letta-code.toml",
        include_str!("../readers/letta-code.toml"),
    ),
    ("nanocoder.toml", include_str!("../readers/nanocoder.toml")),
    ("omp.toml", include_str!("../readers/omp.toml")),
    ("gptme.toml", include_str!("../readers/gptme.toml")),
    ("kimi.toml", include_str!("../readers/kimi.toml")),
    ("openhands.toml", include_str!("../readers/openhands.toml")),
    (
        "open-interpreter.toml",
        include_str!("../readers/open-interpreter.toml"),
    ),
    ("goose.toml", include_str!("../readers/goose.toml")),
    ("llm.toml", include_str!("../readers/llm.toml")),
    ("elia.toml", include_str!("../readers/elia.toml")),
    ("oterm.toml", include_str!("../readers/oterm.toml")),
    ("ra-aid.toml", include_str!("../readers/ra-aid.toml")),
    ("shell-gpt.toml", include_str!("../readers/shell-gpt.toml")),
    ("chatblade.toml", include_str!("../readers/chatblade.toml")),
    ("parllama.toml", include_str!("../readers/parllama.toml")),
    (
        "klaude-code.toml",
        include_str!("../readers/klaude-code.toml"),
    ),
    ("tunacode.toml", include_str!("../readers/tunacode.toml")),
    (
        "mini-swe-agent.toml",
        include_str!("../readers/mini-swe-agent.toml"),
    ),
    (
        "code-puppy.toml",
        include_str!("../readers/code-puppy.toml"),
    ),
    ("zed.toml", include_str!("../readers/zed.toml")),
    ("amp.toml", include_str!("../readers/amp.toml")),
    ("cursor.toml", include_str!("../readers/cursor.toml")),
    (
        "cursor-editor.toml",
        include_str!("../readers/cursor-editor.toml"),
    ),
    (
        "copilot-chat.toml",
        include_str!("../readers/copilot-chat.toml"),
    ),
    (
        "cline-vscode.toml",
        include_str!("../readers/cline-vscode.toml"),
    ),
    ("roo-code.toml", include_str!("../readers/roo-code.toml")),
    ("kilo-code.toml", include_str!("../readers/kilo-code.toml")),
    ("amazon-q.toml", include_str!("../readers/amazon-q.toml")),
    (
        "hermes-agent.toml",
        include_str!("../readers/hermes-agent.toml"),
    ),
    ("specstory.toml", include_str!("../readers/specstory.toml")),
];

/// Descriptions already read, by origin and text.
type Read = HashMap<(String, String), Arc<Description>>;

/// The description the host handed over in `context`, read once per text
/// and origin: the host calls the plugin for every file it detects or
/// parses, with the same few descriptions.
fn described(context: &HostContext) -> Result<(Arc<Description>, String), PluginError> {
    let text = context.env(DESCRIPTION_VAR).ok_or_else(|| {
        PluginError::config(
            "the TOML reader was called without a reader description (it needs a deja with plugin ABI 1.1)",
        )
    })?;
    let origin = context
        .env(DESCRIPTION_PATH_VAR)
        .unwrap_or("(a reader description)")
        .to_string();
    static READ: OnceLock<Mutex<Read>> = OnceLock::new();
    let cache = READ.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (origin, text.to_string());
    if let Some(d) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok((d, key.1));
    }
    let d =
        Arc::new(description::parse(&key.0, text).map_err(|e| PluginError::config(e.to_string()))?);
    if let Ok(mut c) = cache.lock() {
        // A handful of descriptions in a process; a bound keeps a caller that
        // keeps changing them (an editor's check loop) from growing it.
        if c.len() >= 64 {
            c.clear();
        }
        c.insert(key.clone(), Arc::clone(&d));
    }
    Ok((d, key.1))
}

/// The reader's version: the description's own, and a short hash of its
/// text, so that a changed description reads its transcripts again.
fn version(d: &Description, text: &str) -> String {
    let hash = Sha256::digest(text.as_bytes());
    let short: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!(
        "{}+toml.{short}",
        d.reader.version.as_deref().unwrap_or("0")
    )
}

/// The reader of descriptions.
pub struct TomlReader;

impl deja_plugin_api::Reader for TomlReader {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "toml".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            harness: "toml".into(),
            description: "reads transcripts by reader descriptions written in TOML".into(),
            abi: deja_plugin_api::version::CURRENT,
            config_keys: RVec::new(),
        }
    }

    fn info_in(context: &HostContext) -> Result<PluginInfo, PluginError> {
        let (d, text) = described(context)?;
        let harness = d.reader.harness.0.clone();
        Ok(PluginInfo {
            name: d
                .reader
                .name
                .clone()
                .unwrap_or_else(|| harness.clone())
                .into(),
            version: version(&d, &text).into(),
            description: d
                .reader
                .description
                .clone()
                .unwrap_or_else(|| format!("{harness} transcripts (a TOML reader description)"))
                .into(),
            harness: harness.into(),
            abi: deja_plugin_api::version::CURRENT,
            config_keys: RVec::new(),
        })
    }

    fn detect(_path: &str, _head: &[u8]) -> u8 {
        0
    }

    fn detect_in(context: &HostContext, path: &str, head: &[u8]) -> u8 {
        described(context).map_or(0, |(d, _)| detect::score(&d, path, head))
    }

    fn discover(context: &HostContext) -> Result<Discovery, PluginError> {
        let (d, _) = described(context)?;
        discover::discover(&d, context)
    }

    fn parse(request: &ParseRequest<'_>) -> Result<ParseOutput, PluginError> {
        Self::parse_with_edits(request).map(|o| o.output)
    }

    fn parse_with_outcomes(request: &ParseRequest<'_>) -> Result<ParseOutputV1_2, PluginError> {
        Self::parse_with_edits(request).map(ParseOutputV1_3::into_v1_2)
    }

    fn parse_with_edits(request: &ParseRequest<'_>) -> Result<ParseOutputV1_3, PluginError> {
        let (d, _) = described(request.context)?;
        let path = request.path.as_str();
        session::output(&d, path, request.bytes.as_slice(), request.modified_ms)
    }

    fn resume(request: &ResumeRequest<'_>) -> Result<ResumeAdvice, PluginError> {
        let (d, _) = described(request.context)?;
        Ok(resume::advise(&d, request))
    }

    fn descriptions() -> Descriptions {
        Descriptions {
            extension: "toml".into(),
            builtin: BUILTIN
                .iter()
                .map(|(name, text)| DescriptionFile {
                    name: (*name).into(),
                    text: (*text).into(),
                })
                .collect(),
        }
    }
}

deja_plugin_api::export_plugin!(TomlReader);
