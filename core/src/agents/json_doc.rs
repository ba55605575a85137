//! An agent's JSON settings file as an order-keeping tree, so that adding
//! deja's keys leaves every key of the user's where it was.
//!
//! `serde_json::Value` sorts object keys (deja builds it without
//! `preserve_order`); a settings file written back sorted would be a diff of
//! the whole file. [`Json`] keeps keys in file order and prints as two-space
//! indented JSON, as the agents themselves write these files.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON value whose objects keep their keys in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as serde_json read it.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, keys in order.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// Parses `text` (an empty or blank file reads as an empty object).
    pub fn parse(text: &str) -> Result<Json, serde_json::Error> {
        if text.trim().is_empty() {
            return Ok(Json::Object(Vec::new()));
        }
        serde_json::from_str(text)
    }

    /// Prints as two-space indented JSON with a final newline.
    pub fn to_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// The value, order forgotten, for comparisons.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// From a `serde_json::Value` (its keys in its own order).
    pub fn from_value(v: &Value) -> Json {
        match v {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => Json::Number(n.clone()),
            Value::String(s) => Json::String(s.clone()),
            Value::Array(a) => Json::Array(a.iter().map(Json::from_value).collect()),
            Value::Object(o) => Json::Object(
                o.iter()
                    .map(|(k, v)| (k.clone(), Json::from_value(v)))
                    .collect(),
            ),
        }
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The member `key` of an object, mutable.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Object(members) => members.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value at `path` (object keys).
    pub fn at(&self, path: &[&str]) -> Option<&Json> {
        path.iter().try_fold(self, |v, k| v.get(k))
    }

    /// The value at `path`, mutable.
    pub fn at_mut(&mut self, path: &[&str]) -> Option<&mut Json> {
        let mut v = self;
        for k in path {
            v = v.get_mut(k)?;
        }
        Some(v)
    }

    /// Sets `key` of an object (in place when there, else at the end).
    /// Returns the value it replaced. Not an object: nothing happens.
    pub fn set(&mut self, key: &str, value: Json) -> Option<Json> {
        let Json::Object(members) = self else {
            return None;
        };
        if let Some((_, v)) = members.iter_mut().find(|(k, _)| k == key) {
            return Some(std::mem::replace(v, value));
        }
        members.push((key.to_string(), value));
        None
    }

    /// Removes `key` of an object, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Json> {
        let Json::Object(members) = self else {
            return None;
        };
        let i = members.iter().position(|(k, _)| k == key)?;
        Some(members.remove(i).1)
    }

    /// Whether this is an empty object or array.
    pub fn is_empty_container(&self) -> bool {
        match self {
            Json::Object(m) => m.is_empty(),
            Json::Array(a) => a.is_empty(),
            _ => false,
        }
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(v) => s.serialize_str(v),
            Json::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Json::Object(m) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(Json::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut out: Vec<(String, Json)> = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            // A repeated key: the last one wins, as in JavaScript.
            if let Some(slot) = out.iter_mut().find(|(key, _)| *key == k) {
                slot.1 = v;
            } else {
                out.push((k, v));
            }
        }
        Ok(Json::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order_through_a_round_trip() {
        let text = "{\n  \"zeta\": 1,\n  \"alpha\": [true, null, \"x\"],\n  \"mid\": {\n    \"b\": 2.5,\n    \"a\": {}\n  }\n}\n";
        let j = Json::parse(text).unwrap();
        assert_eq!(
            j.to_text(),
            "{\n  \"zeta\": 1,\n  \"alpha\": [\n    true,\n    null,\n    \"x\"\n  ],\n  \"mid\": {\n    \"b\": 2.5,\n    \"a\": {}\n  }\n}\n"
        );
        assert_eq!(Json::parse(&j.to_text()).unwrap(), j);
    }

    #[test]
    fn set_replaces_in_place_and_appends_new_keys() {
        let mut j = Json::parse(r#"{"b": 1, "a": 2}"#).unwrap();
        assert_eq!(j.set("b", Json::Bool(true)), Some(Json::Number(1.into())));
        assert_eq!(j.set("c", Json::Null), None);
        assert_eq!(
            j.to_text(),
            "{\n  \"b\": true,\n  \"a\": 2,\n  \"c\": null\n}\n"
        );
        assert_eq!(j.remove("a"), Some(Json::Number(2.into())));
        assert_eq!(j.at(&["c"]), Some(&Json::Null));
        assert!(Json::parse("  \n").unwrap().is_empty_container());
    }
}
