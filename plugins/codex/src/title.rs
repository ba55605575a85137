//! Thread titles. Codex appends `{"id", "thread_name", "updated_at"}` to
//! `$CODEX_HOME/session_index.jsonl` whenever a thread is named or renamed,
//! and looks a name up by scanning that file from its end, so the last entry
//! for an id wins; deja does the same. A rollout may also carry
//! `thread_name_updated` events, used when the index has no entry.

use std::fs;
use std::path::Path;

use deja_plugin_api::text;
use serde_json::Value;

use crate::home::Location;

/// The index file's name, in the Codex home.
pub const INDEX_FILE: &str = "session_index.jsonl";

/// Larger indexes are not read (a real one holds ~130 bytes per thread).
const MAX_INDEX_BYTES: u64 = 64 * 1024 * 1024;

/// The latest `thread_name` the index beside `transcript` has for `id`.
pub fn indexed(transcript: &Path, id: &str) -> Option<String> {
    let index = Location::of(transcript)?.home.join(INDEX_FILE);
    if fs::metadata(&index).ok()?.len() > MAX_INDEX_BYTES {
        return None;
    }
    let bytes = fs::read(&index).ok()?;
    latest_name(&text::decode(&bytes).0, id)
}

/// The `thread_name` of the last line of `index` whose `id` is `id`.
pub fn latest_name(index: &str, id: &str) -> Option<String> {
    if id.is_empty() {
        return None;
    }
    let mut end = index.len();
    while let Some(found) = index[..end].rfind(id) {
        let start = index[..found].rfind('\n').map_or(0, |i| i + 1);
        let stop = index[found..].find('\n').map_or(index.len(), |i| found + i);
        end = start;
        let Ok(entry) = serde_json::from_str::<Value>(index[start..stop].trim()) else {
            if start == 0 {
                break;
            }
            continue;
        };
        let name = entry
            .get("thread_name")
            .and_then(Value::as_str)
            .map(str::trim);
        if entry.get("id").and_then(Value::as_str) == Some(id) {
            if let Some(name) = name.filter(|n| !n.is_empty()) {
                return Some(name.to_string());
            }
        }
        if start == 0 {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_entry_for_an_id_wins() {
        let index = concat!(
            "{\"id\":\"a\",\"thread_name\":\"First\",\"updated_at\":\"x\"}\n",
            "{\"id\":\"b\",\"thread_name\":\"about a\",\"updated_at\":\"x\"}\n",
            "{\"id\":\"a\",\"thread_name\":\"Renamed\",\"updated_at\":\"y\"}\n",
            "{\"id\":\"b\",\"thread_name\":\"mentions a too\"}\n",
            "{\"id\":\"a\",\"thread_na",
        );
        assert_eq!(latest_name(index, "a").as_deref(), Some("Renamed"));
        assert_eq!(latest_name(index, "b").as_deref(), Some("mentions a too"));
        assert_eq!(latest_name(index, "c"), None);
        assert_eq!(latest_name(index, ""), None);
        assert_eq!(
            latest_name("{\"id\":\"a\",\"thread_name\":\"  \"}", "a"),
            None
        );
    }
}
