//! A `text` source: a plain text file (Markdown among them) in which each
//! line that the description's `marker` matches begins a record.
//!
//! A record is a JSON object of the marker's named groups (those that
//! matched; `(?P<role>User|Assistant)` gives `/role`), its `text` (the
//! lines after the marker up to the next marker, joined by `\n` and
//! trimmed) and its `line` (the marker's line number, from 1). The lines
//! before the first marker are the file's header: each `header` pattern's
//! named groups, from the first header line it matches, are the session's
//! own fields (its row), as a `json` source's document is.

use deja_plugin_api::text;
use regex::{Captures, Regex};
use serde_json::{Map, Value};

use crate::description::Description;

/// The session's fields (from the header) and its records, in order.
pub fn read(d: &Description, bytes: &[u8]) -> (Value, Vec<Value>) {
    let (text, _) = text::decode(bytes);
    let mut row = Map::new();
    let mut records = Vec::new();
    let Some(marker) = &d.source.marker else {
        return (Value::Object(row), records);
    };
    let mut matched = vec![false; d.source.header.len()];
    let mut current: Option<(Map<String, Value>, Vec<&str>)> = None;
    for (n, line) in text::lines(&text).enumerate() {
        if let Some(caps) = marker.0.captures(line) {
            records.extend(current.take().map(record));
            let mut fields = named(&marker.0, &caps);
            fields.insert("line".into(), Value::from(n + 1));
            current = Some((fields, Vec::new()));
            continue;
        }
        if let Some((_, lines)) = current.as_mut() {
            lines.push(line);
            continue;
        }
        for (pattern, done) in d.source.header.iter().zip(matched.iter_mut()) {
            if *done {
                continue;
            }
            if let Some(caps) = pattern.0.captures(line) {
                *done = true;
                for (k, v) in named(&pattern.0, &caps) {
                    row.entry(k).or_insert(v);
                }
            }
        }
    }
    records.extend(current.take().map(record));
    (Value::Object(row), records)
}

/// The named groups that matched, as strings.
fn named(regex: &Regex, caps: &Captures<'_>) -> Map<String, Value> {
    regex
        .capture_names()
        .flatten()
        .filter_map(|name| {
            caps.name(name)
                .map(|m| (name.to_string(), Value::String(m.as_str().to_string())))
        })
        .collect()
}

fn record((mut fields, lines): (Map<String, Value>, Vec<&str>)) -> Value {
    let text = lines.join("\n");
    fields.insert("text".into(), Value::String(text.trim().to_string()));
    Value::Object(fields)
}
