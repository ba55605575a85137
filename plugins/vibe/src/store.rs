//! Reading one session of Mistral Vibe's session store
//! (`mistral.vibe.unified-session-store/v1`, Vibe 3.0) back into the entries
//! of its public history, as Vibe itself shows them.
//!
//! A session is a folder `<save dir>/unified/<session id>/`:
//!
//! ```text
//! CURRENT                               {"generation": "…042", "snapshot_sequence": 42, …}
//! meta.json                             the session's id, parent, folder, title, times
//! generations/<generation>/manifest.json  names the snapshot's chunks and its journal segment
//! chunks/<sha256>.json                  content-addressed pieces; the projection's are
//!                                       JSON arrays of history entries
//! journal/<first sequence>.jsonl        records written after the snapshot, chained by hash
//! ```
//!
//! The history is the projection's chunks of the generation `CURRENT` names,
//! in order, then the `projection_delta` records of the journal segment that
//! generation's manifest names whose `sequence` is past the snapshot
//! (`append_entry` adds an entry, `replace_entry` replaces the one with its
//! id): what a session that was still running, or stopped before its next
//! snapshot, has on disk. Chunks and generations no manifest names any more
//! are left behind by Vibe and never read.
//!
//! Everything is read from the session's own folder: a name from a file
//! (generation, chunk, journal segment) that is not the plain name Vibe
//! writes is refused, files are read only when they are regular files of a
//! bounded size, and nothing is written.

use std::fs;
use std::path::{Path, PathBuf};

use deja_plugin_api::text;
use serde_json::Value;

/// The store format `CURRENT` names.
pub const STORE_FORMAT: &str = "mistral.vibe.unified-session-store/";
/// The largest file read, in bytes.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// The most chunks read for one session.
const MAX_CHUNKS: usize = 100_000;

/// A session's history as read.
#[derive(Debug, Default)]
pub struct Loaded {
    /// `meta.json`, when it is there and JSON.
    pub meta: Option<Value>,
    /// The history entries, in order.
    pub entries: Vec<Value>,
    /// What could not be read, for the user.
    pub warnings: Vec<String>,
}

/// What `CURRENT` says.
struct Current {
    generation: String,
    snapshot_sequence: u64,
}

/// Whether `bytes` (the start of a file) are a `CURRENT` of Vibe's store.
pub fn is_current(bytes: &[u8]) -> bool {
    let (head, _) = text::decode(bytes);
    head.contains(STORE_FORMAT) && head.contains("\"generation\"")
}

/// Reads the session whose `CURRENT` is at `path`, with `bytes` its content.
/// `Err` says why the session cannot be read at all.
pub fn load(path: &Path, bytes: &[u8]) -> Result<Loaded, String> {
    let current = current(bytes).ok_or_else(|| {
        format!(
            "`{}` is not a Mistral Vibe session store's CURRENT file",
            path.display()
        )
    })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut loaded = Loaded {
        meta: read_json(&dir.join("meta.json")).ok(),
        ..Loaded::default()
    };
    let generation = dir.join("generations").join(&current.generation);
    let manifest = read_json(&generation.join("manifest.json")).map_err(|e| {
        format!(
            "`{}`: the generation it names has no readable manifest ({e}); skipped",
            path.display()
        )
    })?;
    let chunks = manifest
        .pointer("/projection_state/chunks")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for chunk in chunks.iter().take(MAX_CHUNKS) {
        let Some(name) = chunk.as_str().filter(|n| is_chunk_name(n)) else {
            loaded.warnings.push(format!(
                "`{}`: a chunk name that is not a hash; left out",
                path.display()
            ));
            continue;
        };
        let file = dir.join("chunks").join(format!("{name}.json"));
        match read_json(&file) {
            Ok(Value::Array(entries)) => loaded.entries.extend(entries),
            Ok(_) => loaded.warnings.push(format!(
                "`{}` is not a list of history entries; left out",
                file.display()
            )),
            Err(e) => loaded.warnings.push(format!(
                "`{}`: {e}; its entries are left out",
                file.display()
            )),
        }
    }
    if let Some(segment) = journal_segment(&manifest) {
        replay(&dir.join(segment), current.snapshot_sequence, &mut loaded);
    }
    Ok(loaded)
}

/// The generation and snapshot sequence `CURRENT` names.
fn current(bytes: &[u8]) -> Option<Current> {
    let (text, _) = text::decode(bytes);
    let value: Value = serde_json::from_str(&text).ok()?;
    let format = value.get("store_format").and_then(Value::as_str)?;
    if !format.starts_with(STORE_FORMAT) {
        return None;
    }
    let generation = value
        .get("generation")
        .and_then(Value::as_str)
        .filter(|g| !g.is_empty() && g.len() <= 32 && g.bytes().all(|b| b.is_ascii_digit()))?;
    Some(Current {
        generation: generation.to_string(),
        snapshot_sequence: value
            .get("snapshot_sequence")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    })
}

/// A chunk's name: the hex SHA-256 of its content.
fn is_chunk_name(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The journal segment a manifest names, as a path inside the session's
/// folder (`journal/<digits>.jsonl`), or none.
fn journal_segment(manifest: &Value) -> Option<PathBuf> {
    let path = manifest
        .pointer("/recovery_journal_segment/path")
        .and_then(Value::as_str)?;
    let name = path.strip_prefix("journal/")?;
    let stem = name.strip_suffix(".jsonl")?;
    (!stem.is_empty() && stem.bytes().all(|b| b.is_ascii_digit()))
        .then(|| Path::new("journal").join(name))
}

/// Applies the journal's projection changes recorded after the snapshot.
fn replay(file: &Path, after: u64, loaded: &mut Loaded) {
    let bytes = match read_bounded(file) {
        Ok(bytes) => bytes,
        // A segment not written yet: nothing happened since the snapshot.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            loaded.warnings.push(format!(
                "`{}`: {e}; what it holds is left out",
                file.display()
            ));
            return;
        }
    };
    let (text, _) = text::decode(&bytes);
    for line in text::lines(&text) {
        // A line cut short by a crash is the journal's end.
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if record.get("type").and_then(Value::as_str) != Some("projection_delta") {
            continue;
        }
        let sequence = record.get("sequence").and_then(Value::as_u64).unwrap_or(0);
        if sequence <= after {
            continue;
        }
        let ops = record
            .pointer("/payload/delta")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for op in ops {
            apply(op, &mut loaded.entries);
        }
    }
}

/// One change to the history: `append_entry` and `replace_entry` (the
/// session's envelope, `set_envelope`, holds no entry).
fn apply(op: &Value, entries: &mut Vec<Value>) {
    let Some(entry) = op.get("entry").filter(|e| e.is_object()) else {
        return;
    };
    let id = op
        .get("id")
        .or_else(|| entry.get("id"))
        .and_then(Value::as_str);
    let at = id.and_then(|id| {
        entries
            .iter()
            .position(|e| e.get("id").and_then(Value::as_str) == Some(id))
    });
    match (op.get("op").and_then(Value::as_str), at) {
        (Some("append_entry" | "replace_entry"), Some(at)) => {
            if let Some(slot) = entries.get_mut(at) {
                *slot = entry.clone();
            }
        }
        (Some("append_entry" | "replace_entry"), None) => entries.push(entry.clone()),
        _ => {}
    }
}

/// A JSON file of the session's folder.
fn read_json(file: &Path) -> Result<Value, String> {
    let bytes = read_bounded(file).map_err(|e| e.to_string())?;
    let (text, _) = text::decode(&bytes);
    serde_json::from_str(&text).map_err(|e| format!("not JSON ({e})"))
}

/// A regular file's bytes, when it is no larger than [`MAX_FILE_BYTES`].
fn read_bounded(file: &Path) -> std::io::Result<Vec<u8>> {
    let meta = fs::metadata(file)?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {MAX_FILE_BYTES} bytes"
        )));
    }
    fs::read(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn current_names_a_generation_of_digits_only() {
        let ok = br#"{"generation":"0000000000000021","snapshot_sequence":21,"store_format":"mistral.vibe.unified-session-store/v1"}"#;
        let read = current(ok).unwrap();
        assert_eq!(read.generation, "0000000000000021");
        assert_eq!(read.snapshot_sequence, 21);
        for bad in [
            r#"{"generation":"../x","store_format":"mistral.vibe.unified-session-store/v1"}"#,
            r#"{"generation":"","store_format":"mistral.vibe.unified-session-store/v1"}"#,
            r#"{"generation":"1","store_format":"other"}"#,
            r#"{"generation":1,"store_format":"mistral.vibe.unified-session-store/v1"}"#,
            "not json",
        ] {
            assert!(current(bad.as_bytes()).is_none(), "{bad}");
        }
    }

    #[test]
    fn only_plain_names_are_followed() {
        assert!(is_chunk_name(&"a".repeat(64)));
        assert!(!is_chunk_name(&format!("../{}", "a".repeat(61))));
        assert!(!is_chunk_name("abc"));
        let segment = |p: &str| journal_segment(&json!({"recovery_journal_segment": {"path": p}}));
        assert_eq!(
            segment("journal/0000000000000043.jsonl"),
            Some(Path::new("journal").join("0000000000000043.jsonl"))
        );
        assert_eq!(segment("journal/../../x.jsonl"), None);
        assert_eq!(segment("/etc/passwd"), None);
        assert_eq!(segment("journal/.jsonl"), None);
    }

    #[test]
    fn appends_add_and_replacements_replace_by_id() {
        let mut entries = vec![json!({"id": "a", "v": 1})];
        apply(
            &json!({"op": "append_entry", "entry": {"id": "b", "v": 1}}),
            &mut entries,
        );
        apply(
            &json!({"op": "replace_entry", "id": "a", "entry": {"id": "a", "v": 2}}),
            &mut entries,
        );
        apply(&json!({"op": "set_envelope", "state": {}}), &mut entries);
        apply(
            &json!({"op": "replace_entry", "id": "c", "entry": {"id": "c", "v": 1}}),
            &mut entries,
        );
        assert_eq!(
            entries,
            vec![
                json!({"id": "a", "v": 2}),
                json!({"id": "b", "v": 1}),
                json!({"id": "c", "v": 1})
            ]
        );
    }
}
