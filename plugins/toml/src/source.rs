//! Reading a transcript file into groups of records, one group per session,
//! by the description's source kind: JSONL lines, a JSON document, or a
//! SQLite database's queries.
//!
//! A SQLite database is opened read-only at its path, so that what its
//! write-ahead log holds (the `-wal` file beside it, where a running harness
//! writes first) is read too; the bytes the host read are opened only when
//! there is no file at the path (a copy handed over by a test or a tool).

use std::collections::HashMap;
use std::path::Path;

use deja_plugin_api::{text, PluginError};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
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
        Kind::Sqlite => return sqlite(d, path, bytes, visit),
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
        Some(Grouping::File) | None => return vec![Group { row, records }],
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
        })
        .collect()
}

fn sqlite(
    d: &Description,
    path: &str,
    bytes: &[u8],
    visit: &mut dyn FnMut(Group),
) -> Result<Vec<String>, PluginError> {
    let conn = open(path, bytes)?;
    let (Some(sessions_sql), Some(id)) = (&d.source.sessions, &d.session.id) else {
        return Err(PluginError::config(
            "a sqlite source needs `source.sessions` and `session.id`",
        ));
    };
    let query_error = |what: &str, e: rusqlite::Error| {
        PluginError::invalid(format!(
            "the `source.{what}` query failed on this database: {e}"
        ))
    };
    let columns = Columns {
        json: &d.source.json_columns,
        zstd: &d.source.zstd_columns,
    };
    let rows = rows(&conn, sessions_sql, None, &columns).map_err(|e| query_error("sessions", e))?;
    let mut warnings = Vec::new();
    let mut stmt = match &d.source.records {
        Some(sql) => Some(conn.prepare(sql).map_err(|e| query_error("records", e))?),
        None => None,
    };
    for mut row in rows {
        let Some(session_id) = id.string(&row) else {
            warnings.push("a row of the sessions query has no session id; skipped".to_string());
            continue;
        };
        let mut records = match stmt.as_mut() {
            Some(stmt) => {
                query(stmt, Some(&session_id), &columns).map_err(|e| query_error("records", e))?
            }
            None => vec![row.clone()],
        };
        if let Some(at) = &d.source.records_at {
            records = records
                .iter()
                .flat_map(|r| match at.get(r).as_deref() {
                    Some(Value::Array(items)) => items.clone(),
                    _ => Vec::new(),
                })
                .collect();
            // The records are out of the row now; keep its other fields.
            if d.source.records.is_none() {
                strip_at(&mut row, at);
            }
        }
        if d.source.untag {
            records = records.into_iter().map(untag).collect();
        }
        visit(Group {
            row: Some(row),
            records,
        });
    }
    Ok(warnings)
}

/// Removes the value at `at` from `row` (so that a session's row does not
/// keep a second copy of its records).
fn strip_at(row: &mut Value, at: &crate::pointer::Pointer) {
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

/// How columns are read.
struct Columns<'a> {
    json: &'a [String],
    zstd: &'a [String],
}

/// The most a zstd column may decompress to.
const MAX_DECOMPRESSED: usize = 256 << 20;

/// The first bytes of a zstd frame.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// The database at `path`, read-only, or `bytes` as a database when there
/// is no file there.
fn open(path: &str, bytes: &[u8]) -> Result<Connection, PluginError> {
    let cannot =
        |e: rusqlite::Error| PluginError::invalid(format!("not a readable SQLite database: {e}"));
    let conn = if Path::new(path).is_file() {
        Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(cannot)?
    } else {
        if bytes.is_empty() {
            return Err(PluginError::invalid(
                "not a SQLite database: the file is empty",
            ));
        }
        let mut conn = Connection::open_in_memory().map_err(cannot)?;
        conn.deserialize_read_exact(rusqlite::MAIN_DB, bytes, bytes.len(), true)
            .map_err(cannot)?;
        conn
    };
    // A harness writing at the same time holds its lock only briefly.
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(cannot)?;
    conn.execute_batch("PRAGMA query_only = ON")
        .map_err(cannot)?;
    // Reading the schema is what fails on a file that is not a database.
    conn.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))
        .map_err(cannot)?;
    Ok(conn)
}

fn rows(
    conn: &Connection,
    sql: &str,
    param: Option<&str>,
    columns: &Columns<'_>,
) -> rusqlite::Result<Vec<Value>> {
    let mut stmt = conn.prepare(sql)?;
    query(&mut stmt, param, columns)
}

/// Runs `stmt` (with `?1` bound to `param` when the query has a parameter)
/// and turns each row into an object of its columns.
fn query(
    stmt: &mut rusqlite::Statement<'_>,
    param: Option<&str>,
    columns: &Columns<'_>,
) -> rusqlite::Result<Vec<Value>> {
    let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let mut rows = match param {
        Some(p) if stmt.parameter_count() > 0 => stmt.query([p])?,
        _ => stmt.query([])?,
    };
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let mut object = Map::new();
        for (i, name) in names.iter().enumerate() {
            let is = |list: &[String]| list.iter().any(|c| c == name);
            let bytes = match row.get_ref(i)? {
                ValueRef::Null => {
                    object.insert(name.clone(), Value::Null);
                    continue;
                }
                ValueRef::Integer(n) => {
                    object.insert(name.clone(), Value::from(n));
                    continue;
                }
                ValueRef::Real(f) => {
                    object.insert(name.clone(), Value::from(f));
                    continue;
                }
                ValueRef::Text(t) => t,
                // A blob is read only where the description says what it holds.
                ValueRef::Blob(b) if is(columns.zstd) || is(columns.json) => b,
                ValueRef::Blob(_) => {
                    object.insert(name.clone(), Value::Null);
                    continue;
                }
            };
            let decompressed;
            let bytes = if is(columns.zstd) && bytes.starts_with(&ZSTD_MAGIC) {
                decompressed = zstd::bulk::decompress(bytes, MAX_DECOMPRESSED).ok();
                match &decompressed {
                    Some(d) => d.as_slice(),
                    None => {
                        object.insert(name.clone(), Value::Null);
                        continue;
                    }
                }
            } else {
                bytes
            };
            let t = String::from_utf8_lossy(bytes);
            let value = if is(columns.json) {
                serde_json::from_str(&t).unwrap_or(Value::String(t.into_owned()))
            } else {
                Value::String(t.into_owned())
            };
            object.insert(name.clone(), value);
        }
        out.push(Value::Object(object));
    }
    Ok(out)
}
