//! A JSON document rebuilt from its change log, as VS Code writes chat
//! sessions (its `ObjectMutationLog`): one entry a line, the first the
//! whole document (`{"kind": 0, "v": ...}`), then sets (`kind` 1), array
//! pushes that may first cut the array (`kind` 2) and deletes (`kind` 3) at
//! a path of keys and indexes (`"k": ["requests", 0, "response"]`).
//!
//! Nothing here recurses, and the document cannot grow deeper than JSON's
//! own parse allows plus [`MAX_PATH`]: an entry whose path is longer is not
//! applied (it is counted with the lines that could not be, which the
//! reader reports), since a path of a hundred thousand keys would build a
//! value whose drop overflows the stack.

use serde_json::{Map, Value};

/// The longest path of keys an entry may have; VS Code's chat documents
/// are a few levels deep.
pub const MAX_PATH: usize = 64;

/// The document `text` ends with, and how many lines could not be applied
/// (a line cut short by a crash, an entry of an unknown kind); `None` when
/// the text is not a change log (it does not start with a whole document).
pub fn replay(text: &str) -> Option<(Value, usize)> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let first: Value = serde_json::from_str(lines.next()?).ok()?;
    let mut doc = initial(&first)?;
    let mut bad = 0;
    for line in lines {
        let applied = serde_json::from_str::<Value>(line)
            .ok()
            .is_some_and(|entry| apply(&mut doc, &entry));
        if !applied {
            bad += 1;
        }
    }
    Some((doc, bad))
}

/// The document of an initial entry.
fn initial(entry: &Value) -> Option<Value> {
    (entry.get("kind")?.as_u64()? == 0).then(|| entry.get("v").cloned().unwrap_or(Value::Null))
}

/// Applies one entry; false when it is not one this log knows.
fn apply(doc: &mut Value, entry: &Value) -> bool {
    let Some(kind) = entry.get("kind").and_then(Value::as_u64) else {
        return false;
    };
    if kind == 0 {
        return match initial(entry) {
            Some(v) => {
                *doc = v;
                true
            }
            None => false,
        };
    }
    let Some(Value::Array(path)) = entry.get("k") else {
        return false;
    };
    if path.len() > MAX_PATH {
        return false;
    }
    match kind {
        1 => {
            let value = entry.get("v").cloned().unwrap_or(Value::Null);
            match path.split_last() {
                // A set at the root is the caller's business: nothing to do.
                None => true,
                Some((last, parent)) => match walk(doc, parent) {
                    Some(holder) => set(holder, last, value),
                    None => false,
                },
            }
        }
        2 => {
            let Some(slot) = walk(doc, path) else {
                return false;
            };
            if !slot.is_array() {
                *slot = Value::Array(Vec::new());
            }
            let Value::Array(items) = slot else {
                return false;
            };
            if let Some(n) = entry.get("i").and_then(Value::as_u64) {
                items.truncate(usize::try_from(n).unwrap_or(usize::MAX));
            }
            if let Some(Value::Array(more)) = entry.get("v") {
                items.extend(more.iter().cloned());
            }
            true
        }
        3 => match path.split_last() {
            None => false,
            Some((last, parent)) => {
                if let Some(holder) = walk(doc, parent) {
                    match (holder, last) {
                        (Value::Object(map), Value::String(key)) => {
                            map.remove(key);
                        }
                        (Value::Array(items), Value::Number(n)) => {
                            if let Some(item) = index(n).and_then(|i| items.get_mut(i)) {
                                *item = Value::Null;
                            }
                        }
                        _ => {}
                    }
                }
                true
            }
        },
        _ => false,
    }
}

/// The value at `path`, made (as an object) where a key is missing.
fn walk<'a>(doc: &'a mut Value, path: &[Value]) -> Option<&'a mut Value> {
    let mut at = doc;
    for step in path {
        at = match step {
            Value::String(key) => {
                if !at.is_object() {
                    *at = Value::Object(Map::new());
                }
                at.as_object_mut()?
                    .entry(key.clone())
                    .or_insert(Value::Null)
            }
            Value::Number(n) => at.as_array_mut()?.get_mut(index(n)?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Sets `key` of `holder` (an object key, or an array index: one past the
/// end appends).
fn set(holder: &mut Value, key: &Value, value: Value) -> bool {
    match key {
        Value::String(key) => {
            if !holder.is_object() {
                *holder = Value::Object(Map::new());
            }
            match holder.as_object_mut() {
                Some(map) => {
                    map.insert(key.clone(), value);
                    true
                }
                None => false,
            }
        }
        Value::Number(n) => {
            let (Some(items), Some(i)) = (holder.as_array_mut(), index(n)) else {
                return false;
            };
            if let Some(slot) = items.get_mut(i) {
                *slot = value;
                true
            } else if i == items.len() {
                items.push(value);
                true
            } else {
                false
            }
        }
        _ => false,
    }
}

fn index(n: &serde_json::Number) -> Option<usize> {
    n.as_u64().and_then(|i| usize::try_from(i).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn log(lines: &[Value]) -> String {
        lines
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn sets_pushes_and_deletes_rebuild_the_document() {
        let text = log(&[
            json!({"kind": 0, "v": {"sessionId": "s", "requests": [{"message": {"text": "a"}, "response": []}]}}),
            json!({"kind": 1, "k": ["customTitle"], "v": "Title"}),
            json!({"kind": 2, "k": ["requests", 0, "response"], "v": [{"value": "one"}, {"value": "two"}]}),
            json!({"kind": 2, "k": ["requests", 0, "response"], "v": [{"value": "2"}], "i": 1}),
            json!({"kind": 2, "k": ["requests"], "v": [{"message": {"text": "b"}}]}),
            json!({"kind": 1, "k": ["requests", 1, "message", "text"], "v": "b!"}),
            json!({"kind": 3, "k": ["customTitle"]}),
            json!({"kind": 2, "k": ["pending"]}),
        ]);
        let (doc, bad) = replay(&text).unwrap();
        assert_eq!(bad, 0);
        assert_eq!(
            doc,
            json!({"sessionId": "s", "pending": [], "requests": [
                {"message": {"text": "a"}, "response": [{"value": "one"}, {"value": "2"}]},
                {"message": {"text": "b!"}}
            ]})
        );
    }

    #[test]
    fn a_cut_line_and_unknown_entries_are_counted_not_applied() {
        let mut text = log(&[
            json!({"kind": 0, "v": {"requests": []}}),
            json!({"kind": 9, "k": []}),
            json!({"kind": 1, "k": ["requests", 5], "v": 1}),
        ]);
        text.push_str("\n{\"kind\": 2, \"k\": [\"requ");
        let (doc, bad) = replay(&text).unwrap();
        assert_eq!(doc, json!({"requests": []}));
        assert_eq!(bad, 3);
    }

    #[test]
    fn an_entry_with_a_path_too_long_is_not_applied() {
        // A path of 100,000 keys would build a document that deep, whose
        // drop overflows the stack.
        let deep: Vec<Value> = (0..100_000).map(|_| json!("x")).collect();
        let fits: Vec<Value> = (0..MAX_PATH).map(|_| json!("y")).collect();
        let text = log(&[
            json!({"kind": 0, "v": {"requests": []}}),
            json!({"kind": 1, "k": deep, "v": 1}),
            json!({"kind": 2, "k": deep, "v": [1]}),
            json!({"kind": 3, "k": deep}),
            json!({"kind": 1, "k": fits, "v": 1}),
        ]);
        let (doc, bad) = replay(&text).unwrap();
        assert_eq!(bad, 3);
        assert!(doc.get("x").is_none(), "{doc}");
        let mut depth = 0;
        let mut at = &doc;
        while let Some(next) = at.get("y") {
            depth += 1;
            at = next;
        }
        assert_eq!(depth, MAX_PATH);
    }

    #[test]
    fn a_document_that_is_not_a_log_is_not_replayed() {
        assert!(replay("{\"version\": 3, \"requests\": []}").is_none());
        assert!(replay("").is_none());
        assert!(replay("[1, 2]").is_none());
    }
}
