//! Reading a transcript file into groups of records, one group per session,
//! by the description's source kind: JSONL lines, a JSON document (or its
//! change log), a YAML document, text split at marker lines (see [`marked`]),
//! or a SQLite database's queries.
//!
//! A SQLite database is read from a private copy of the file at its path
//! and of its write-ahead log (the `-wal` file beside it, where a running
//! harness writes first), so that what the log holds is read too and
//! nothing is written beside the harness's file (see [`sqlite`]); the bytes
//! the host read are opened only when there is no file at the path (a copy
//! handed over by a test or a tool).

mod marked;
mod sqlite;

use std::collections::HashMap;

use deja_plugin_api::{text, PluginError};
use serde_json::{Map, Value};

use crate::description::{Description, Grouping, Kind};
use crate::log;

/// The records of one session, and the row that lists it (sqlite) or the
/// document that holds them (json).
#[derive(Debug, Default)]
pub struct Group {
    /// Where the session's own fields are looked for first.
    pub row: Option<Value>,
    /// Its records, in order.
    pub records: Vec<Value>,
    /// The session's id where the source itself knows it (the part of a
    /// key-value source's key that names the session), taken when
    /// `session.id` finds none.
    pub id: Option<String>,
}

/// A file read into groups.
#[derive(Debug, Default)]
pub struct Loaded {
    /// One group per session.
    pub groups: Vec<Group>,
    /// What was skipped, for the user.
    pub warnings: Vec<String>,
}

/// Reads the transcript at `path` (whose bytes are `bytes`), handing each
/// session's group to `visit` as soon as it is read (a database's sessions
/// are never all in memory at once); returns the warnings.
pub fn load(
    d: &Description,
    path: &str,
    bytes: &[u8],
    visit: &mut dyn FnMut(Group),
) -> Result<Vec<String>, PluginError> {
    let loaded = match d.source.kind {
        Kind::Jsonl => jsonl(d, bytes),
        Kind::Json => json(d, bytes)?,
        Kind::JsonLog => json_log(d, bytes)?,
        Kind::Yaml => yaml(d, bytes)?,
        Kind::Text => {
            let (row, records) = marked::read(d, bytes);
            Loaded {
                groups: group(d, Some(row), records),
                warnings: Vec::new(),
            }
        }
        Kind::Sqlite => return sqlite::read(d, path, bytes, sqlite::BOUNDS, visit),
    };
    for mut group in loaded.groups {
        if d.source.untag {
            group.records = group.records.into_iter().map(untag).collect();
        }
        visit(group);
    }
    Ok(loaded.warnings)
}

fn jsonl(d: &Description, bytes: &[u8]) -> Loaded {
    let (text, _) = text::decode(bytes);
    let mut bad = 0usize;
    let mut records = Vec::new();
    for line in text::lines(&text) {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) => records.push(v),
            // A line cut short by a crash, or not JSON at all.
            Err(_) => bad += 1,
        }
    }
    let mut loaded = Loaded {
        groups: group(d, None, records),
        warnings: Vec::new(),
    };
    if bad > 0 {
        loaded
            .warnings
            .push(format!("{bad} line(s) are not JSON and were skipped"));
    }
    loaded
}

fn json(d: &Description, bytes: &[u8]) -> Result<Loaded, PluginError> {
    let (text, _) = text::decode(bytes);
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| PluginError::invalid(format!("not a JSON document: {e}")))?;
    document(d, doc)
}

/// A YAML document, as the JSON value it maps to: a mapping's keys as
/// text, a tagged value as its value.
fn yaml(d: &Description, bytes: &[u8]) -> Result<Loaded, PluginError> {
    let (text, _) = text::decode(bytes);
    let doc: serde_norway::Value = serde_norway::from_str(&text)
        .map_err(|e| PluginError::invalid(format!("not a YAML document: {e}")))?;
    document(d, yaml_json(doc))
}

fn yaml_json(v: serde_norway::Value) -> Value {
    use serde_norway::Value as Y;
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                n.as_f64()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(Value::Null, Value::Number)
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(items.into_iter().map(yaml_json).collect()),
        Y::Mapping(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| (yaml_key(k), yaml_json(v)))
                .collect(),
        ),
        Y::Tagged(t) => yaml_json(t.value),
    }
}

/// A mapping key as text: a string as it is, anything else as its JSON.
fn yaml_key(k: serde_norway::Value) -> String {
    match yaml_json(k) {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// A change log replayed into its document, or a file that is the
/// document itself.
fn json_log(d: &Description, bytes: &[u8]) -> Result<Loaded, PluginError> {
    let (text, _) = text::decode(bytes);
    let Some((doc, bad)) = log::replay(&text) else {
        return json(d, bytes);
    };
    let mut loaded = document(d, doc)?;
    if bad > 0 {
        loaded.warnings.push(format!(
            "{bad} line(s) of the change log could not be applied and were skipped"
        ));
    }
    Ok(loaded)
}

/// The records of one JSON document (at `records_at`, else the document).
fn document(d: &Description, doc: Value) -> Result<Loaded, PluginError> {
    let records = match &d.source.records_at {
        Some(p) => match p.get(&doc).as_deref() {
            Some(Value::Array(items)) => items.clone(),
            Some(_) => {
                return Err(PluginError::invalid(format!(
                    "`{}` in the document is not an array of records",
                    p.as_str()
                )))
            }
            None => Vec::new(),
        },
        None => match &doc {
            Value::Array(items) => items.clone(),
            other => vec![other.clone()],
        },
    };
    let row = d.source.records_at.is_some().then_some(doc);
    Ok(Loaded {
        groups: group(d, row, records),
        warnings: Vec::new(),
    })
}

/// Groups records by the description's `sessions_by`: one group for the
/// file, or one per value of a field (a record without it joins the group
/// of the record before it).
fn group(d: &Description, row: Option<Value>, records: Vec<Value>) -> Vec<Group> {
    let by = match &d.source.sessions_by {
        Some(Grouping::Field(p)) => p,
        Some(Grouping::File) | None => {
            return vec![Group {
                row,
                records,
                id: None,
            }]
        }
    };
    let mut order: Vec<String> = Vec::new();
    let mut groups: HashMap<String, Vec<Value>> = HashMap::new();
    let mut pending: Vec<Value> = Vec::new();
    let mut current: Option<String> = None;
    for record in records {
        if let Some(key) = by.string(&record) {
            if !groups.contains_key(&key) {
                order.push(key.clone());
                let mut first = std::mem::take(&mut pending);
                first.push(record);
                groups.insert(key.clone(), first);
            } else if let Some(g) = groups.get_mut(&key) {
                g.push(record);
            }
            current = Some(key);
        } else {
            match current.as_ref().and_then(|k| groups.get_mut(k)) {
                Some(g) => g.push(record),
                None => pending.push(record),
            }
        }
    }
    order
        .into_iter()
        .filter_map(|k| groups.remove(&k))
        .map(|records| Group {
            row: row.clone(),
            records,
            id: None,
        })
        .collect()
}

/// Removes the value at `at` from `row` (so that a session's row does not
/// keep a second copy of its records).
pub(crate) fn strip_at(row: &mut Value, at: &crate::pointer::Pointer) {
    let text = at.as_str();
    if text.contains('#') {
        return;
    }
    let Some((parent, last)) = text.rsplit_once('/') else {
        return;
    };
    let key = last.replace("~1", "/").replace("~0", "~");
    if let Some(Value::Object(map)) = row.pointer_mut(parent) {
        map.remove(&key);
    }
}

/// An externally tagged value untagged (see `source.untag`): the record
/// itself, and the elements of every array in it.
pub fn untag(value: Value) -> Value {
    let value = untag_one(value);
    match value {
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, untag_arrays(v))).collect())
        }
        other => other,
    }
}

/// `{"K": {...}}` to `{"type": "K", ...}`, `{"K": v}` to `{"type": "K", "value": v}`.
fn untag_one(value: Value) -> Value {
    match value {
        Value::Object(map) if map.len() == 1 => {
            let Some((key, inner)) = map.into_iter().next() else {
                return Value::Null;
            };
            match inner {
                Value::Object(mut fields) => {
                    fields.entry("type").or_insert(Value::String(key));
                    Value::Object(fields)
                }
                other => {
                    let mut fields = Map::new();
                    fields.insert("type".to_string(), Value::String(key));
                    fields.insert("value".to_string(), other);
                    Value::Object(fields)
                }
            }
        }
        other => other,
    }
}

/// The elements of arrays inside `value`, untagged, at any depth.
fn untag_arrays(value: Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| untag_arrays_in_object(untag_one(item)))
                .collect(),
        ),
        Value::Object(map) => untag_arrays_in_object(Value::Object(map)),
        other => other,
    }
}

fn untag_arrays_in_object(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, untag_arrays(v))).collect())
        }
        other => other,
    }
}
