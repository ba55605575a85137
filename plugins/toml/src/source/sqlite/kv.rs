//! Sessions kept in SQLite key-value tables (`[[source.kv]]`): a session's
//! value under one key (or many sessions in an array of one value), its
//! records each under a key of its own that holds the session's part of
//! its key, or inline in its value. Read from the same private, read-only
//! copy of the database as queries are, under the same bounds; the keys
//! are looked up by the table's key index (a prefix is a range of keys).
//!
//! A table an entry names that the database does not have gives no
//! sessions (one database may hold only some of a harness's tables); a
//! view or a virtual table in its place is refused, as for queries.

use std::time::Instant;

use deja_plugin_api::PluginError;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Row};
use serde_json::{Map, Value};

use super::{open, Bounds, Budget, Watch};
use crate::description::kv::{part_of, Ident, Kv};
use crate::description::Description;
use crate::source::{strip_at, untag, Group};

/// The other columns of a session's row (`columns`), by name.
type Columns = Map<String, Value>;

/// Reads the sessions of every `[[source.kv]]` entry of `d` in the
/// database at `path` (or `bytes`), handing each to `visit` as it is read.
pub(super) fn read(
    d: &Description,
    path: &str,
    bytes: &[u8],
    bounds: Bounds,
    visit: &mut dyn FnMut(Group),
) -> Result<Vec<String>, PluginError> {
    let started = Instant::now();
    let opened = open(path, bytes)?;
    let conn = &opened.conn;
    let watch = Watch::start(conn, bounds.deadline.saturating_sub(started.elapsed()));
    let mut reader = Reader {
        d,
        conn,
        watch: &watch,
        budget: Budget {
            bounds,
            started,
            rows: 0,
            bytes: 0,
        },
        warnings: Vec::new(),
    };
    for kv in &d.source.kv {
        if !reader.has_table(kv)? {
            continue;
        }
        reader.entry(kv, visit)?;
    }
    Ok(reader.warnings)
}

/// One database being read.
struct Reader<'a> {
    d: &'a Description,
    conn: &'a Connection,
    watch: &'a Watch,
    budget: Budget,
    warnings: Vec<String>,
}

impl Reader<'_> {
    /// Whether the database has the entry's table (a plain table: a view
    /// or a virtual table of that name is an error).
    fn has_table(&self, kv: &Kv) -> Result<bool, PluginError> {
        let cannot = |e: rusqlite::Error| {
            PluginError::invalid(format!("not a readable SQLite database: {e}"))
        };
        let mut stmt = self
            .conn
            .prepare(
                "SELECT type, coalesce(sql, '') FROM sqlite_schema WHERE name = ?1 COLLATE NOCASE",
            )
            .map_err(cannot)?;
        let mut rows = stmt.query([&kv.table.0]).map_err(cannot)?;
        let Some(row) = rows.next().map_err(cannot)? else {
            return Ok(false);
        };
        let kind: String = row.get(0).map_err(cannot)?;
        let sql: String = row.get(1).map_err(cannot)?;
        let virtual_table = sql
            .trim_start()
            .get(..14)
            .is_some_and(|s| s.eq_ignore_ascii_case("create virtual"));
        match kind.as_str() {
            "table" if !virtual_table => Ok(true),
            "table" | "view" => Err(PluginError::invalid(format!(
                "the key-value table `{}` is {} in this database, not a table; deja reads only tables",
                kv.table.0,
                if kind == "view" { "a view" } else { "a virtual table" }
            ))),
            _ => Ok(false),
        }
    }

    /// The error for a failed step: the deadline's when it interrupted it.
    fn failed(&self, kv: &Kv, e: rusqlite::Error) -> PluginError {
        if self.watch.fired() {
            self.budget.late()
        } else {
            PluginError::invalid(format!(
                "reading the key-value table `{}` failed on this database: {e}",
                kv.table.0
            ))
        }
    }

    /// The sessions of one entry.
    fn entry(&mut self, kv: &Kv, visit: &mut dyn FnMut(Group)) -> Result<(), PluginError> {
        let pattern = &kv.sessions.text;
        let found: Vec<(Option<String>, Value, Columns)> = if kv.sessions.has("session") {
            let prefix = pattern.split("{session}").next().unwrap_or_default();
            let mut found = Vec::new();
            self.scan(kv, prefix, &kv.columns, &mut |key, value, columns| {
                if let Some(part) = part_of(pattern, "session", key) {
                    found.push((Some(part.to_string()), value, columns));
                }
            })?;
            found
        } else {
            self.lookup(kv, pattern, &kv.columns)?
                .map(|(v, columns)| vec![(None, v, columns)])
                .unwrap_or_default()
        };
        for (part, value, columns) in found {
            let rows: Vec<(Option<String>, Value)> = match &kv.each {
                None => vec![(part, value)],
                Some(at) => match at.get(&value).as_deref() {
                    Some(Value::Array(items)) => {
                        items.iter().map(|item| (None, item.clone())).collect()
                    }
                    _ => Vec::new(),
                },
            };
            for (part, mut row) in rows {
                if let Value::Object(fields) = &mut row {
                    fields.extend(columns.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                let group = self.session(kv, part, row)?;
                if let Some(group) = group {
                    visit(group);
                }
            }
        }
        Ok(())
    }

    /// One session: its row, its inline records and its keyed ones.
    fn session(
        &mut self,
        kv: &Kv,
        part: Option<String>,
        mut row: Value,
    ) -> Result<Option<Group>, PluginError> {
        let id = self.d.session.id.as_ref().and_then(|f| f.string(&row));
        let Some(name) = part.clone().or_else(|| id.clone()) else {
            self.warnings
                .push("a session in the key-value table has no id; skipped".to_string());
            return Ok(None);
        };
        let mut records = Vec::new();
        if let Some(at) = &kv.records_at {
            if let Some(Value::Array(items)) = at.get(&row).as_deref() {
                records.extend(items.iter().cloned());
            }
            strip_at(&mut row, at);
        }
        if let Some(pattern) = &kv.records {
            let pattern = pattern.with_session(&name);
            let order = kv
                .order
                .as_ref()
                .and_then(|o| match o.at.get(&row).as_deref() {
                    Some(Value::Array(items)) => Some(
                        items
                            .iter()
                            .filter_map(|i| o.item.string(i))
                            .collect::<Vec<_>>(),
                    ),
                    _ => None,
                });
            match order {
                Some(names) => {
                    for record in names {
                        let key = pattern.replace("{record}", &record);
                        if let Some((value, _)) = self.lookup(kv, &key, &[])? {
                            records.push(value);
                        }
                    }
                }
                None => {
                    let prefix = pattern.split("{record}").next().unwrap_or_default();
                    self.scan(kv, prefix, &[], &mut |key, value, _| {
                        if part_of(&pattern, "record", key).is_some() {
                            records.push(value);
                        }
                    })?;
                }
            }
        }
        if self.d.source.untag {
            records = records.into_iter().map(untag).collect();
        }
        Ok(Some(Group {
            row: Some(row),
            records,
            id: part,
        }))
    }

    /// The value under `key`, read as JSON (none when there is no such
    /// key or its value is not JSON), with the row's `columns`.
    fn lookup(
        &mut self,
        kv: &Kv,
        key: &str,
        columns: &[Ident],
    ) -> Result<Option<(Value, Columns)>, PluginError> {
        let sql = format!(
            "SELECT {value}{more} FROM {table} WHERE {key} = ?1 LIMIT 1",
            value = kv.value.quoted(),
            more = select(columns),
            table = kv.table.quoted(),
            key = kv.key.quoted(),
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.failed(kv, e))?;
        let mut rows = stmt.query([key]).map_err(|e| self.failed(kv, e))?;
        let next = rows.next().map_err(|e| self.failed(kv, e))?;
        let value = match next {
            Some(row) => {
                let cell = row.get_ref(0).map_err(|e| self.failed(kv, e))?;
                match json(cell, &mut self.budget) {
                    Some(value) => Some((
                        value,
                        named(row, 1, columns).map_err(|e| self.failed(kv, e))?,
                    )),
                    None => None,
                }
            }
            None => None,
        };
        self.budget.check()?;
        Ok(value)
    }

    /// Every key that starts with `prefix`, in key order, with its value
    /// read as JSON (keys whose value is not JSON are passed over) and the
    /// row's `columns`.
    fn scan(
        &mut self,
        kv: &Kv,
        prefix: &str,
        columns: &[Ident],
        found: &mut dyn FnMut(&str, Value, Columns),
    ) -> Result<(), PluginError> {
        // The keys from `prefix` up to `prefix` followed by the last code
        // point: a range the key's index answers.
        let sql = format!(
            "SELECT {key}, {value}{more} FROM {table} WHERE {key} >= ?1 AND {key} < ?1 || char(1114111) ORDER BY {key}",
            value = kv.value.quoted(),
            more = select(columns),
            table = kv.table.quoted(),
            key = kv.key.quoted(),
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.failed(kv, e))?;
        let mut rows = stmt.query([prefix]).map_err(|e| self.failed(kv, e))?;
        loop {
            let next = rows.next().map_err(|e| self.failed(kv, e))?;
            let Some(row) = next else { break };
            let key = match row.get_ref(0).map_err(|e| self.failed(kv, e))? {
                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                _ => continue,
            };
            let cell = row.get_ref(1).map_err(|e| self.failed(kv, e))?;
            if let Some(value) = json(cell, &mut self.budget) {
                let more = named(row, 2, columns).map_err(|e| self.failed(kv, e))?;
                found(&key, value, more);
            }
            self.budget.check()?;
        }
        Ok(())
    }
}

/// `, "a", "b"` for the columns `a` and `b` (nothing for none).
fn select(columns: &[Ident]) -> String {
    columns
        .iter()
        .map(|c| format!(", {}", c.quoted()))
        .collect()
}

/// The `columns` of `row`, from its cell `first` on, by name: text as a
/// string, numbers as numbers; a null or a blob is left out.
fn named(row: &Row<'_>, first: usize, columns: &[Ident]) -> rusqlite::Result<Columns> {
    let mut fields = Map::new();
    for (i, column) in columns.iter().enumerate() {
        let value = match row.get_ref(first + i)? {
            ValueRef::Text(t) => Value::from(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Integer(n) => Value::from(n),
            ValueRef::Real(f) => Value::from(f),
            ValueRef::Null | ValueRef::Blob(_) => continue,
        };
        fields.insert(column.0.clone(), value);
    }
    Ok(fields)
}

/// A value cell as JSON: text or a blob holding JSON text (a number as
/// itself), counted against the budget.
fn json(cell: ValueRef<'_>, budget: &mut Budget) -> Option<Value> {
    budget.rows += 1;
    let bytes = match cell {
        ValueRef::Text(t) | ValueRef::Blob(t) => t,
        ValueRef::Integer(n) => return Some(Value::from(n)),
        ValueRef::Real(f) => return Some(Value::from(f)),
        ValueRef::Null => return None,
    };
    budget.bytes = budget
        .bytes
        .saturating_add(u64::try_from(bytes.len()).unwrap_or(u64::MAX));
    if budget.bytes > budget.bounds.max_bytes {
        return None;
    }
    serde_json::from_slice(bytes).ok().or_else(|| {
        // Not UTF-8 throughout: read what is.
        serde_json::from_str(&String::from_utf8_lossy(bytes)).ok()
    })
}
