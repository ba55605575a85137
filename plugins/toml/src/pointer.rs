//! JSON pointers (RFC 6901) into a record, and conditions on them.
//!
//! A record is a JSON value: a JSONL line, an element of a JSON document's
//! records array, or a SQLite row as an object of its columns. A pointer
//! does not look inside a string holding JSON unless it says so with `#`:
//! `/data/input#/command` is the `command` of the JSON text at `/data/input`
//! (or of the object there, for a harness that writes the field either
//! way; a sqlite source can also name such columns in `json_columns`).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer};
use serde::Deserialize;
use serde_json::Value;

/// A checked JSON pointer, optionally continued inside the JSON text it
/// points at (`#`).
#[derive(Clone, PartialEq, Eq)]
pub struct Pointer {
    text: String,
    path: String,
    inner: Option<Box<Pointer>>,
}

impl Pointer {
    /// Checks `text`: empty (the whole record) or starting with `/`, with
    /// `~` only in the escapes `~0` and `~1`; `#` continues inside the JSON
    /// text found there.
    pub fn parse(text: &str) -> Result<Pointer, String> {
        if let Some((outer, inner)) = text.split_once('#') {
            let mut p = Pointer::parse_one(outer)?;
            p.inner = Some(Box::new(
                Pointer::parse(inner).map_err(|e| format!("after `#` in `{text}`: {e}"))?,
            ));
            p.text = text.to_string();
            return Ok(p);
        }
        Pointer::parse_one(text)
    }

    fn parse_one(text: &str) -> Result<Pointer, String> {
        if !text.is_empty() && !text.starts_with('/') {
            return Err(format!(
                "`{text}` is not a JSON pointer: a JSON pointer starts with `/` (for example `/{text}`)"
            ));
        }
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
                return Err(format!(
                    "`{text}` is not a JSON pointer: `~` must be followed by `0` or `1`"
                ));
            }
        }
        Ok(Pointer {
            text: text.to_string(),
            path: text.to_string(),
            inner: None,
        })
    }

    /// A pointer known to be valid (for defaults).
    pub(crate) fn literal(text: &'static str) -> Pointer {
        Pointer {
            text: text.to_string(),
            path: text.to_string(),
            inner: None,
        }
    }

    /// The value it points at in `record`, if any (JSON null counts as none).
    pub fn get<'a>(&self, record: &'a Value) -> Option<Cow<'a, Value>> {
        let found = record.pointer(&self.path).filter(|v| !v.is_null())?;
        match &self.inner {
            None => Some(Cow::Borrowed(found)),
            // JSON text, or a value already parsed (a harness that
            // writes the same field either way).
            Some(inner) => match found {
                Value::Object(_) | Value::Array(_) => inner.get(found),
                _ => {
                    let parsed: Value = serde_json::from_str(found.as_str()?).ok()?;
                    inner.get(&parsed).map(|v| Cow::Owned(v.into_owned()))
                }
            },
        }
    }

    /// The string it points at (numbers are written out; empty strings are none).
    pub fn string(&self, record: &Value) -> Option<String> {
        match self.get(record)?.as_ref() {
            Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// As written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Debug for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.text)
    }
}

impl<'de> Deserialize<'de> for Pointer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Pointer::parse(&s).map_err(de::Error::custom)
    }
}

/// A condition on a record: every pointer's value equals the one given, or
/// one of the values of a list.
#[derive(Debug, Clone)]
pub struct Condition(Vec<(Pointer, Vec<Value>)>);

impl Condition {
    /// Whether `record` meets it.
    pub fn matches(&self, record: &Value) -> bool {
        self.0.iter().all(|(pointer, wanted)| {
            pointer
                .get(record)
                .is_some_and(|v| wanted.iter().any(|w| same(&v, w)))
        })
    }
}

/// JSON equality, with numbers compared by value (`1` equals `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

impl<'de> Deserialize<'de> for Condition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let table = std::collections::BTreeMap::<String, toml::Value>::deserialize(d)?;
        if table.is_empty() {
            return Err(de::Error::custom(
                "a condition needs at least one `\"/pointer\" = value`",
            ));
        }
        let mut out = Vec::new();
        for (key, value) in table {
            let pointer = Pointer::parse(&key).map_err(de::Error::custom)?;
            let values = match value {
                toml::Value::Array(items) => items,
                one => vec![one],
            };
            let values = values
                .into_iter()
                .map(|v| {
                    json_of(v).ok_or_else(|| {
                        de::Error::custom(format!(
                            "the value for `{key}` must be a string, number or boolean, or a list of them"
                        ))
                    })
                })
                .collect::<Result<Vec<_>, D::Error>>()?;
            out.push((pointer, values));
        }
        Ok(Condition(out))
    }
}

/// A TOML scalar as JSON.
fn json_of(v: toml::Value) -> Option<Value> {
    Some(match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => Value::from(f),
        toml::Value::Boolean(b) => Value::Bool(b),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_are_checked() {
        assert!(Pointer::parse("/a/b").is_ok());
        assert!(Pointer::parse("").is_ok());
        assert!(Pointer::parse("/a~1b/~0").is_ok());
        assert!(Pointer::parse("a/b")
            .unwrap_err()
            .contains("starts with `/`"));
        assert!(Pointer::parse("/a~2").is_err());
    }

    #[test]
    fn strings_and_numbers_are_read_null_is_none() {
        let r = json!({"a": {"b": "x", "n": 7, "z": null, "e": " "}});
        let p = |s| Pointer::parse(s).unwrap();
        assert_eq!(p("/a/b").string(&r).as_deref(), Some("x"));
        assert_eq!(p("/a/n").string(&r).as_deref(), Some("7"));
        assert_eq!(p("/a/z").string(&r), None);
        assert_eq!(p("/a/e").string(&r), None);
        assert_eq!(p("/a/missing").string(&r), None);
    }

    #[test]
    fn a_pointer_continues_inside_json_text_after_a_hash() {
        let r = json!({"data": {"input": "{\"command\": \"ls -la\", \"n\": 2}"}});
        let p = Pointer::parse("/data/input#/command").unwrap();
        assert_eq!(p.string(&r).as_deref(), Some("ls -la"));
        assert_eq!(
            Pointer::parse("/data/input#/n")
                .unwrap()
                .string(&r)
                .as_deref(),
            Some("2")
        );
        assert_eq!(
            Pointer::parse("/data/missing#/command").unwrap().string(&r),
            None
        );
        let not_json = json!({"data": {"input": "ls"}});
        assert_eq!(p.string(&not_json), None);
        assert!(Pointer::parse("/a#b").unwrap_err().contains("after `#`"));
    }

    #[test]
    fn after_a_hash_a_value_already_parsed_is_read_as_it_is() {
        let p = Pointer::parse("/data/input#/command").unwrap();
        let parsed = json!({"data": {"input": {"command": "ls -la"}}});
        assert_eq!(p.string(&parsed).as_deref(), Some("ls -la"));
        let number = json!({"data": {"input": 7}});
        assert_eq!(p.string(&number), None);
    }

    #[test]
    fn conditions_match_all_pointers_any_value() {
        let c: Condition = toml::from_str::<std::collections::BTreeMap<String, Condition>>(
            "c = { \"/type\" = \"tool\", \"/tool\" = [\"write\", \"edit\"] }",
        )
        .unwrap()
        .remove("c")
        .unwrap();
        assert!(c.matches(&json!({"type": "tool", "tool": "edit"})));
        assert!(!c.matches(&json!({"type": "tool", "tool": "read"})));
        assert!(!c.matches(&json!({"tool": "edit"})));
        let n: Condition =
            toml::from_str::<std::collections::BTreeMap<String, Condition>>("c = { \"/n\" = 1 }")
                .unwrap()
                .remove("c")
                .unwrap();
        assert!(n.matches(&json!({"n": 1.0})));
    }
}
