//! What a subagent transcript learns from the files around it: the uuids of
//! its parent session's records, and its `.meta.json`.
//!
//! A side question (`/btw`, `agent-aside_question-*`) and other forked
//! subagents start with a copy of the parent's conversation so far, written
//! with the parent's own uuids. Those records are the parent's, already
//! indexed with it; the subagent's session is what follows. The parent's
//! uuids are read from the top level of its records only: the parent's
//! `progress` records embed the subagent's own records, uuids and all.

use std::collections::HashSet;
use std::fs;
use std::path::Path;

use deja_plugin_api::text;
use serde::Deserialize;
use serde_json::Value;

/// Parent transcripts larger than this are not read (their copies, if any, stay).
const MAX_PARENT_BYTES: u64 = 256 * 1024 * 1024;

/// The `uuid` of a record, and nothing else.
#[derive(Deserialize)]
struct Uuid {
    #[serde(default)]
    uuid: Value,
}

/// The top-level `uuid`s of the records of the transcript at `path`; empty
/// when it cannot be read.
pub fn uuids(path: &Path) -> HashSet<String> {
    let readable = fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() <= MAX_PARENT_BYTES);
    let Some(bytes) = readable.then(|| fs::read(path).ok()).flatten() else {
        return HashSet::new();
    };
    let (text, _) = text::decode(&bytes);
    text::lines(&text)
        .filter_map(|line| serde_json::from_str::<Uuid>(line.trim()).ok())
        .filter_map(|record| match record.uuid {
            Value::String(uuid) => Some(uuid),
            _ => None,
        })
        .collect()
}

/// A subagent's `.meta.json`: `{"agentType": ..., "description": ...}`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Meta {
    description: Value,
}

/// The task description of the `.meta.json` at `path`, if it has one.
pub fn description(path: &Path) -> Option<String> {
    let bytes = fs::read(path).ok()?;
    let meta: Meta = serde_json::from_str(&text::decode(&bytes).0).ok()?;
    meta.description
        .as_str()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(String::from)
}
