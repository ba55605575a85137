//! Loading a chat file and putting its records in conversation order, the way
//! qwen-code rebuilds a session on resume (`sessionService.ts`,
//! `conversation-chain.ts`):
//!
//! - Lines are read one by one; a torn last line, a blank line or a line that
//!   is not a record is skipped, so a file still being written reads up to its
//!   last complete record.
//! - Records that share a `uuid` are fragments of one message: their parts are
//!   joined in file order and the latest timestamp is kept.
//! - The conversation is the `parentUuid` chain that ends at the last record
//!   (its *leaf*), walked back to the root. A rewind re-roots the chain, so
//!   the rewound turns sit on a dead branch and are left out; side records
//!   written off the chain (a re-anchored title) are left out too.
//! - A parent that is not in the file (a corrupt line in the middle) is a gap:
//!   the walk continues at the newest earlier record of another connected part
//!   of the tree, as qwen-code's gap bridging does, so one bad line never
//!   drops the history before it.
//! - Records of another `sessionId` than the file's first are ignored.

use std::collections::{HashMap, HashSet};

use deja_plugin_api::text;

use crate::records::Record;
use crate::time;

/// System subtypes that are artifacts, never the end of the conversation.
const ARTIFACT_SUBTYPES: &[&str] = &["session_artifact_event", "session_artifact_snapshot"];

/// A loaded file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    /// Every record of the session, fragments merged, in order of first appearance.
    pub records: Vec<Record>,
    /// Indices into `records` of the conversation, root first.
    pub chain: Vec<usize>,
    /// Lines with text that are not records (not JSON, or not a record).
    pub unread_lines: usize,
}

impl Loaded {
    /// The records of the conversation, in order.
    pub fn conversation(&self) -> impl Iterator<Item = &Record> {
        self.chain.iter().filter_map(|&i| self.records.get(i))
    }

    /// The session's id: the first record's `sessionId`.
    pub fn session_id(&self) -> Option<&str> {
        self.records.first().map(|r| r.session_id.as_str())
    }
}

/// Loads a chat file's text. Never fails: what cannot be read is skipped.
pub fn load(text: &str) -> Loaded {
    load_named(text, MINIMAL_SESSION)
}

/// The session id of a file of minimal records when nothing names it.
pub const MINIMAL_SESSION: &str = "minimal";

/// A record that lacks some of the fields that chain it, as other tools
/// write them (conformance fixtures, exports): a `user` or `assistant`
/// record with `message.parts` and no `uuid`, `parentUuid` or `sessionId`.
/// What it lacks is filled in so that the file's lines read in order: a
/// `uuid` of `line-<n>`, as parent the record of the line before (unless it
/// names one, or has a uuid and says `null`: a root), and the session of the
/// file's first record, else `session` (the file's name when parsing a file).
fn complete_minimal(
    value: &mut serde_json::Value,
    line: usize,
    previous: Option<&str>,
    session: &str,
) {
    let Some(map) = value.as_object_mut() else {
        return;
    };
    let message = matches!(
        map.get("type").and_then(|t| t.as_str()),
        Some("user" | "assistant")
    ) && map
        .get("message")
        .and_then(|m| m.get("parts"))
        .is_some_and(serde_json::Value::is_array);
    if !message {
        return;
    }
    let named = map
        .get("uuid")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|u| !u.is_empty());
    if !named {
        map.insert("uuid".into(), format!("line-{line}").into());
    }
    // A record without a uuid is no record's parent: nothing chains it but
    // the order of the lines.
    let parent = map.get("parentUuid");
    if parent.is_none() || (!named && parent.is_some_and(serde_json::Value::is_null)) {
        map.insert(
            "parentUuid".into(),
            previous.map_or(serde_json::Value::Null, |p| p.into()),
        );
    }
    if map
        .get("sessionId")
        .and_then(serde_json::Value::as_str)
        .is_none_or(str::is_empty)
    {
        map.insert("sessionId".into(), session.into());
    }
}

/// [`load`], with `session` as the session id of minimal records.
pub fn load_named(text: &str, session: &str) -> Loaded {
    let mut records: Vec<Record> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    // The position of each line's record, for the leaf: the last line wins.
    let mut lines: Vec<usize> = Vec::new();
    let mut unread_lines = 0;
    for line in text::lines(text) {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Ok(mut value) = serde_json::from_str(line) else {
            unread_lines += 1;
            continue;
        };
        let previous = lines
            .last()
            .and_then(|&at| records.get(at))
            .map(|r| r.uuid.clone());
        // The file's session, once a record has named it.
        let session = records.first().map_or(session, |r| r.session_id.as_str());
        complete_minimal(&mut value, lines.len(), previous.as_deref(), session);
        let Some(record) = Record::read(value) else {
            unread_lines += 1;
            continue;
        };
        if records
            .first()
            .is_some_and(|first| first.session_id != record.session_id)
        {
            continue;
        }
        match index.get(&record.uuid) {
            Some(&at) => {
                if let Some(first) = records.get_mut(at) {
                    merge(first, record);
                }
                lines.push(at);
            }
            None => {
                index.insert(record.uuid.clone(), records.len());
                lines.push(records.len());
                records.push(record);
            }
        }
    }
    let chain = leaf(&records, &lines)
        .map(|leaf| walk(&records, &index, leaf))
        .unwrap_or_default();
    Loaded {
        records,
        chain,
        unread_lines,
    }
}

/// Adds a later fragment to the first one: parts appended, latest timestamp.
fn merge(first: &mut Record, fragment: Record) {
    first.parts.extend(fragment.parts);
    let later = match (
        time::parse_ms(first.timestamp.as_deref()),
        time::parse_ms(fragment.timestamp.as_deref()),
    ) {
        (Some(a), Some(b)) => b > a,
        (None, Some(_)) => true,
        _ => false,
    };
    if later {
        first.timestamp = fragment.timestamp;
    }
    if first.tool_result.is_none() {
        first.tool_result = fragment.tool_result;
    }
    if first.cwd.is_none() {
        first.cwd = fragment.cwd;
    }
}

/// The record the conversation ends at: the last line's, skipping artifacts
/// and subagent sidechains.
fn leaf(records: &[Record], lines: &[usize]) -> Option<usize> {
    let eligible = |&&i: &&usize| {
        records
            .get(i)
            .is_some_and(|r| !r.is_sidechain && !is_artifact(r))
    };
    lines.iter().rev().find(eligible).copied()
}

fn is_artifact(record: &Record) -> bool {
    record.kind == "system"
        && record
            .subtype
            .as_deref()
            .is_some_and(|s| ARTIFACT_SUBTYPES.contains(&s))
}

/// The chain ending at `leaf`, root first, bridging gaps.
fn walk(records: &[Record], index: &HashMap<String, usize>, leaf: usize) -> Vec<usize> {
    let mut chain = Vec::new();
    let mut visited: HashSet<usize> = HashSet::new();
    let mut bridge: Option<Bridge> = None;
    let mut current = Some(leaf);
    while let Some(at) = current {
        if !visited.insert(at) {
            break;
        }
        chain.push(at);
        if let Some(bridge) = bridge.as_mut() {
            bridge.visit(at);
        }
        let Some(record) = records.get(at) else {
            break;
        };
        let Some(parent) = record.parent_uuid.as_deref() else {
            break;
        };
        current = match index.get(parent) {
            Some(&parent) => Some(parent),
            // A rewind's parent is deliberate: never bridge past it.
            None if record.subtype.as_deref() == Some("rewind") => None,
            None => bridge
                .get_or_insert_with(|| Bridge::new(records, index, &chain))
                .target(records, at),
        };
    }
    chain.reverse();
    chain
}

/// What bridging gaps needs: the connected parts of the record tree
/// (union-find over the parent links present), the parts the chain has
/// visited, and a budget that keeps every walk linear in the file's size.
struct Bridge {
    root: Vec<usize>,
    used: HashSet<usize>,
    sidechain: bool,
    budget: usize,
}

impl Bridge {
    fn new(records: &[Record], index: &HashMap<String, usize>, chain: &[usize]) -> Self {
        let mut bridge = Bridge {
            root: (0..records.len()).collect(),
            used: HashSet::new(),
            sidechain: chain
                .first()
                .and_then(|&i| records.get(i))
                .is_some_and(|r| r.is_sidechain),
            budget: records.len().saturating_mul(2),
        };
        for (i, record) in records.iter().enumerate() {
            if let Some(&parent) = record.parent_uuid.as_ref().and_then(|p| index.get(p)) {
                let (a, b) = (bridge.find(i), bridge.find(parent));
                if let Some(slot) = bridge.root.get_mut(a) {
                    *slot = b;
                }
            }
        }
        for &at in chain {
            bridge.visit(at);
        }
        bridge
    }

    fn find(&mut self, mut i: usize) -> usize {
        let mut steps = 0;
        while let Some(&next) = self.root.get(i) {
            if next == i || steps > self.root.len() {
                break;
            }
            // Path halving keeps the trees flat.
            let grand = self.root.get(next).copied().unwrap_or(next);
            if let Some(slot) = self.root.get_mut(i) {
                *slot = grand;
            }
            i = next;
            steps += 1;
        }
        i
    }

    fn visit(&mut self, at: usize) {
        let part = self.find(at);
        self.used.insert(part);
    }

    /// The newest record before `child` in a part the chain has not visited,
    /// of the same kind (sidechain or not) as the chain's leaf.
    fn target(&mut self, records: &[Record], child: usize) -> Option<usize> {
        for i in (0..child).rev() {
            if self.budget == 0 {
                return None;
            }
            self.budget -= 1;
            if records
                .get(i)
                .is_some_and(|r| r.is_sidechain == self.sidechain)
            {
                let part = self.find(i);
                if !self.used.contains(&part) {
                    return Some(i);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(uuid: &str, parent: Option<&str>, kind: &str, text: &str) -> String {
        serde_json::json!({
            "uuid": uuid, "parentUuid": parent, "sessionId": "s", "type": kind,
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "parts": [{"text": text}]}
        })
        .to_string()
    }

    fn uuids(loaded: &Loaded) -> Vec<&str> {
        loaded.conversation().map(|r| r.uuid.as_str()).collect()
    }

    #[test]
    fn a_linear_file_is_its_own_chain() {
        let text = [
            line("a", None, "user", "1"),
            line("b", Some("a"), "assistant", "2"),
            line("c", Some("b"), "user", "3"),
        ]
        .join("\n");
        assert_eq!(uuids(&load(&text)), ["a", "b", "c"]);
    }

    #[test]
    fn a_side_leaf_in_the_middle_is_left_out() {
        let text = [
            line("a", None, "user", "1"),
            line("t", Some("a"), "system", "title"),
            line("b", Some("a"), "assistant", "2"),
        ]
        .join("\n");
        assert_eq!(uuids(&load(&text)), ["a", "b"]);
    }

    #[test]
    fn a_gap_is_bridged_to_the_previous_part() {
        let text = [
            line("a", None, "user", "1"),
            line("b", Some("a"), "assistant", "2"),
            line("d", Some("lost"), "user", "4"),
            line("e", Some("d"), "assistant", "5"),
        ]
        .join("\n");
        assert_eq!(uuids(&load(&text)), ["a", "b", "d", "e"]);
    }

    #[test]
    fn many_gaps_are_bridged_in_linear_time() {
        // Every other line lost: 20 000 gaps over 40 000 records.
        let mut lines = vec![line("r0", None, "user", "0")];
        for i in 1..40_000 {
            let parent = if i % 2 == 0 {
                format!("lost{i}")
            } else {
                format!("r{}", i - 1)
            };
            lines.push(line(&format!("r{i}"), Some(&parent), "user", "x"));
        }
        let start = std::time::Instant::now();
        let loaded = load(&lines.join("\n"));
        assert_eq!(loaded.chain.len(), 40_000);
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
    }

    #[test]
    fn cycles_end_the_walk() {
        let text = [
            line("a", Some("b"), "user", "1"),
            line("b", Some("a"), "user", "2"),
        ]
        .join("\n");
        assert_eq!(uuids(&load(&text)), ["a", "b"]);
        let text = line("a", Some("a"), "user", "1");
        assert_eq!(uuids(&load(&text)), ["a"]);
    }

    #[test]
    fn other_sessions_and_garbage_are_skipped() {
        let other = line("x", None, "user", "other").replace("\"s\"", "\"t\"");
        let text = [
            "not json".to_string(),
            line("a", None, "user", "1"),
            other,
            "{\"uuid\":".to_string(),
        ]
        .join("\n");
        let loaded = load(&text);
        assert_eq!(uuids(&loaded), ["a"]);
        assert_eq!(loaded.session_id(), Some("s"));
    }
}
