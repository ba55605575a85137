//! A session's times where the description says they are
//! ([`TimeField`]): in its records, in the transcript's path, or in an
//! index file beside the transcript that lists sessions with their times;
//! and the other values such an index holds for a session (its folder,
//! title or parent: [`value_in_index`]).
//!
//! An index file is read once for all the transcripts beside it: what it
//! maps (session id to the entry's value) is kept while the file's size and
//! modification time stay the same, so a folder of N sessions reads its
//! index once, not N times. Like every side file it is read only when it
//! is a regular file of bounded size ([`crate::place::read_small`]); an
//! index that cannot be read, or has no entry for the session, gives no
//! time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use deja_plugin_api::text;
use serde_json::Value;

use crate::description::{Index, TimeField};
use crate::source::Group;
use crate::time;

/// The largest index file read, in bytes.
const MAX_INDEX_BYTES: u64 = 32 * 1024 * 1024;
/// The most index files kept read at once.
const KEPT: usize = 16;

/// The time `field` names for the session `id` read from `group` (the
/// transcript at `path`).
pub fn of(field: &TimeField, group: &Group, path: &str, id: &str) -> Option<i64> {
    match field {
        TimeField::At(_) | TimeField::Capture { .. } => group
            .row
            .as_ref()
            .and_then(|r| field.in_record(r))
            .or_else(|| group.records.iter().find_map(|r| field.in_record(r))),
        TimeField::InPath(pattern, format) => {
            let unified = path.replace('\\', "/");
            let found = pattern.0.captures(&unified)?.get(1)?.as_str().to_string();
            match format {
                Some(f) => chrono::NaiveDateTime::parse_from_str(&found, f)
                    .ok()
                    .map(|t| t.and_utc().timestamp_millis()),
                None => time::ms(&Value::String(found)),
            }
        }
        TimeField::InIndex(index) => time::ms(&value_in_index(index, path, id)?),
        TimeField::FirstOf(fields) => fields.iter().find_map(|f| of(f, group, path, id)),
    }
}

/// The value at `index.at` in the entry for session `id` of the index
/// file beside the transcript at `path`.
pub fn value_in_index(index: &Index, path: &str, id: &str) -> Option<Value> {
    let file = Path::new(path).parent()?.join(&index.file);
    values_in(index, &file)?.get(id).cloned()
}

/// The string at `index.at` in session `id`'s entry (a number is written
/// out; a blank string is none).
pub fn string_in_index(index: &Index, path: &str, id: &str) -> Option<String> {
    match value_in_index(index, path, id)? {
        Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// What one index file maps, with the size and time it was read at.
struct Read {
    len: u64,
    modified: Option<SystemTime>,
    times: Arc<HashMap<String, Value>>,
}

/// The session ids and their values `index` finds in `file`, read again
/// only when the file changed.
fn values_in(index: &Index, file: &Path) -> Option<Arc<HashMap<String, Value>>> {
    type Kept = HashMap<(PathBuf, String), Read>;
    static KEPT_FILES: OnceLock<Mutex<Kept>> = OnceLock::new();
    let meta = std::fs::metadata(file).ok()?;
    let (len, modified) = (meta.len(), meta.modified().ok());
    // The same file may be read by two descriptions with other pointers.
    let key = (
        file.to_path_buf(),
        format!("{:?}", (&index.list, &index.key, &index.at)),
    );
    let kept = KEPT_FILES.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(read) = kept.lock().ok().and_then(|k| {
        k.get(&key)
            .filter(|r| r.len == len && r.modified == modified)
            .map(|r| Arc::clone(&r.times))
    }) {
        return Some(read);
    }
    let times = Arc::new(read_index(index, file)?);
    if let Ok(mut k) = kept.lock() {
        if k.len() >= KEPT {
            k.clear();
        }
        k.insert(
            key,
            Read {
                len,
                modified,
                times: Arc::clone(&times),
            },
        );
    }
    Some(times)
}

/// Reads `file` as `index` describes it: each entry's id (a string or a
/// number) and value; entries without either are left out.
fn read_index(index: &Index, file: &Path) -> Option<HashMap<String, Value>> {
    let bytes = crate::place::read_small(file, MAX_INDEX_BYTES)?;
    let (text, _) = text::decode(&bytes);
    let document: Value = serde_json::from_str(&text).ok()?;
    let entries = match &index.list {
        Some(p) => p.get(&document)?.into_owned(),
        None => document,
    };
    let Value::Array(entries) = entries else {
        return None;
    };
    Some(
        entries
            .iter()
            .filter_map(|entry| {
                let id = match index.key.get(entry)?.as_ref() {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => return None,
                };
                let at = index.at.get(entry)?.into_owned();
                Some((id, at))
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pointer::Pointer;
    use serde_json::json;

    fn index() -> Index {
        Index {
            file: "sessions.json".into(),
            list: None,
            key: Pointer::parse("/sessionId").unwrap(),
            at: Pointer::parse("/dateCreated").unwrap(),
        }
    }

    #[test]
    fn an_index_gives_each_session_its_time_and_is_read_again_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sessions.json");
        let entries = json!([
            {"sessionId": "a", "dateCreated": "1734000000000"},
            {"sessionId": "b", "dateCreated": 1734000000},
            {"sessionId": "c", "dateCreated": "2024-12-12T10:40:00Z"},
            {"sessionId": "d", "dateCreated": "soon"},
            {"dateCreated": 1734000000000i64},
            "not an entry"
        ]);
        std::fs::write(&file, entries.to_string()).unwrap();
        let transcript = dir.path().join("a.json");
        let transcript = transcript.to_str().unwrap();
        let time_of =
            |id: &str| value_in_index(&index(), transcript, id).and_then(|v| time::ms(&v));
        assert_eq!(time_of("a"), Some(1_734_000_000_000));
        assert_eq!(time_of("b"), Some(1_734_000_000_000));
        assert_eq!(time_of("c"), Some(1_734_000_000_000));
        assert_eq!(time_of("d"), None);
        assert_eq!(values_in(&index(), &file).unwrap().len(), 4);
        // Rewritten (another size): read again.
        std::fs::write(
            &file,
            json!([{"sessionId": "a", "dateCreated": 5_000_000_000_000i64}]).to_string(),
        )
        .unwrap();
        assert_eq!(time_of("a"), Some(5_000_000_000_000));
        // Not a list, not JSON, not there: no times.
        std::fs::write(&file, "{\"sessionId\": \"a\"}").unwrap();
        assert!(values_in(&index(), &file).is_none());
        std::fs::write(&file, "[{").unwrap();
        assert!(values_in(&index(), &file).is_none());
        assert!(values_in(&index(), &dir.path().join("gone.json")).is_none());
    }

    #[test]
    fn an_index_gives_a_session_its_folder_as_a_string() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("sessions.json"),
            json!([{"sessionId": "a", "dateCreated": "/w/app"}, {"sessionId": 7, "dateCreated": 12}, {"sessionId": "b", "dateCreated": " "}]).to_string(),
        )
        .unwrap();
        let transcript = dir.path().join("x.json");
        let transcript = transcript.to_str().unwrap();
        assert_eq!(
            string_in_index(&index(), transcript, "a").as_deref(),
            Some("/w/app")
        );
        assert_eq!(
            string_in_index(&index(), transcript, "7").as_deref(),
            Some("12")
        );
        assert_eq!(string_in_index(&index(), transcript, "b"), None);
        assert_eq!(string_in_index(&index(), transcript, "c"), None);
    }

    #[test]
    fn a_time_in_the_path_is_read_as_a_time() {
        let field = TimeField::InPath(
            crate::description::Pattern(
                regex::Regex::new(r"/(\d{4}-\d\d-\d\dT[^/]+)\.json$").unwrap(),
            ),
            None,
        );
        let group = Group {
            row: None,
            records: Vec::new(),
            id: None,
        };
        assert_eq!(
            of(&field, &group, "/s/2024-12-12T10:40:00Z.json", "x"),
            Some(1_734_000_000_000)
        );
        assert_eq!(of(&field, &group, "/s/untimed.json", "x"), None);
    }

    #[test]
    fn a_time_in_the_path_is_read_by_its_format() {
        let field = TimeField::InPath(
            crate::description::Pattern(regex::Regex::new(r"__([^/]+)\.json$").unwrap()),
            Some("%B_%d_%Y_%H-%M-%S".to_string()),
        );
        let group = Group {
            row: None,
            records: Vec::new(),
            id: None,
        };
        assert_eq!(
            of(
                &field,
                &group,
                "/c/Fix_the__December_12_2024_10-40-00.json",
                "x"
            ),
            Some(1_734_000_000_000)
        );
        assert_eq!(of(&field, &group, "/c/Fix_the__Smarch_12.json", "x"), None);
    }
}
