//! Edits of a JSON settings file made in its text: a value is set, an item
//! added or a member taken out by splicing the file's bytes, so every part
//! of the file deja does not touch keeps its bytes (its formatting, its key
//! order, numbers beyond 64 bits, repeated keys). Taking out what was added
//! gives back the bytes it was added to.
//!
//! [`Doc::parse`] reads the file into a tree of byte spans; the edits
//! ([`set`], [`remove`], [`push`], [`remove_item`]) return the new text. New
//! values are printed in the indentation the surrounding lines use.

use serde_json::Value;

/// A JSON value and where it is in the text.
#[derive(Debug, Clone)]
pub struct Node {
    /// The byte where the value starts.
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
    /// What it is.
    pub kind: NodeKind,
}

/// The kinds of JSON value, with their parts' spans.
#[derive(Debug, Clone)]
pub enum NodeKind {
    /// An object's members in file order (a repeated key stays repeated).
    Object(Vec<Member>),
    /// An array's items.
    Array(Vec<Node>),
    /// A string, number, `true`, `false` or `null`.
    Scalar,
}

/// One member of an object.
#[derive(Debug, Clone)]
pub struct Member {
    /// The key, unescaped.
    pub key: String,
    /// The byte where the key's opening quote is.
    pub key_start: usize,
    /// The value.
    pub value: Node,
}

/// A parsed file: its text and the tree of spans.
pub struct Doc<'a> {
    /// The text.
    pub text: &'a str,
    /// The top value.
    pub root: Node,
}

/// Why a text is not JSON setup can edit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

/// Nesting deeper than this is refused (a reader never overflows its stack).
const MAX_DEPTH: usize = 128;

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Parser<'a> {
    fn err<T>(&self, what: &str) -> Result<T, ParseError> {
        let line = self.text[..self.at.min(self.text.len())]
            .matches('\n')
            .count()
            + 1;
        Err(ParseError(format!("{what} at line {line}")))
    }

    fn ws(&mut self) {
        while self.at < self.bytes.len()
            && matches!(self.bytes[self.at], b' ' | b'\t' | b'\n' | b'\r')
        {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, ParseError> {
        if depth > MAX_DEPTH {
            return self.err("nesting too deep");
        }
        self.ws();
        let start = self.at;
        match self.bytes.get(self.at) {
            Some(b'{') => {
                self.at += 1;
                let mut members = Vec::new();
                self.ws();
                if self.bytes.get(self.at) == Some(&b'}') {
                    self.at += 1;
                    return Ok(Node {
                        start,
                        end: self.at,
                        kind: NodeKind::Object(members),
                    });
                }
                loop {
                    self.ws();
                    let key_start = self.at;
                    if self.bytes.get(self.at) != Some(&b'"') {
                        return self.err("expected a key");
                    }
                    self.string()?;
                    let key: String = serde_json::from_str(&self.text[key_start..self.at])
                        .map_err(|e| ParseError(format!("a bad key ({e})")))?;
                    self.ws();
                    if self.bytes.get(self.at) != Some(&b':') {
                        return self.err("expected `:`");
                    }
                    self.at += 1;
                    let value = self.value(depth + 1)?;
                    members.push(Member {
                        key,
                        key_start,
                        value,
                    });
                    self.ws();
                    match self.bytes.get(self.at) {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(Node {
                                start,
                                end: self.at,
                                kind: NodeKind::Object(members),
                            });
                        }
                        _ => return self.err("expected `,` or `}`"),
                    }
                }
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                self.ws();
                if self.bytes.get(self.at) == Some(&b']') {
                    self.at += 1;
                    return Ok(Node {
                        start,
                        end: self.at,
                        kind: NodeKind::Array(items),
                    });
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.bytes.get(self.at) {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(Node {
                                start,
                                end: self.at,
                                kind: NodeKind::Array(items),
                            });
                        }
                        _ => return self.err("expected `,` or `]`"),
                    }
                }
            }
            Some(b'"') => {
                self.string()?;
                Ok(self.scalar(start))
            }
            Some(_) => {
                while self.at < self.bytes.len()
                    && !matches!(
                        self.bytes[self.at],
                        b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'
                    )
                {
                    self.at += 1;
                }
                let word = &self.text[start..self.at];
                let ok = matches!(word, "true" | "false" | "null")
                    || serde_json::from_str::<serde_json::Number>(word).is_ok()
                    || is_number(word);
                if !ok {
                    self.at = start;
                    return self.err("an unexpected value");
                }
                Ok(self.scalar(start))
            }
            None => self.err("unexpected end"),
        }
    }

    fn scalar(&self, start: usize) -> Node {
        Node {
            start,
            end: self.at,
            kind: NodeKind::Scalar,
        }
    }

    fn string(&mut self) -> Result<(), ParseError> {
        self.at += 1;
        while let Some(&b) = self.bytes.get(self.at) {
            match b {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Ok(());
                }
                b if b < 0x20 => return self.err("a control character in a string"),
                _ => self.at += 1,
            }
        }
        self.err("a string that does not close")
    }
}

/// A JSON number of any size (`-`, digits, fraction, exponent).
fn is_number(w: &str) -> bool {
    let w = w.strip_prefix('-').unwrap_or(w);
    let (int, rest) = w.split_at(w.find(|c: char| !c.is_ascii_digit()).unwrap_or(w.len()));
    if int.is_empty() || (int.len() > 1 && int.starts_with('0')) {
        return false;
    }
    let rest = match rest.strip_prefix('.') {
        Some(r) => {
            let n = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            if n == 0 {
                return false;
            }
            &r[n..]
        }
        None => rest,
    };
    match rest.strip_prefix(['e', 'E']) {
        Some(r) => {
            let r = r.strip_prefix(['+', '-']).unwrap_or(r);
            !r.is_empty() && r.chars().all(|c| c.is_ascii_digit())
        }
        None => rest.is_empty(),
    }
}

impl<'a> Doc<'a> {
    /// Parses `text`; a blank text reads as an empty object.
    pub fn parse(text: &'a str) -> Result<Doc<'a>, ParseError> {
        let mut p = Parser {
            text,
            bytes: text.as_bytes(),
            at: 0,
        };
        p.ws();
        if p.at == text.len() {
            return Ok(Doc {
                text,
                root: Node {
                    start: p.at,
                    end: p.at,
                    kind: NodeKind::Object(Vec::new()),
                },
            });
        }
        let root = p.value(0)?;
        p.ws();
        if p.at != text.len() {
            return p.err("text after the value");
        }
        Ok(Doc { text, root })
    }

    /// The node at `path` (object keys; a repeated key: its last member).
    pub fn at(&self, path: &[&str]) -> Option<&Node> {
        let mut n = &self.root;
        for k in path {
            n = &member(n, k)?.value;
        }
        Some(n)
    }

    /// The value of a node, parsed.
    pub fn value(&self, n: &Node) -> Option<Value> {
        if n.start == n.end {
            return Some(Value::Object(Default::default()));
        }
        serde_json::from_str(&self.text[n.start..n.end]).ok()
    }

    /// The value at `path`, parsed.
    pub fn value_at(&self, path: &[&str]) -> Option<Value> {
        self.at(path).and_then(|n| self.value(n))
    }

    /// The whole file's value.
    pub fn to_value(&self) -> Option<Value> {
        self.value(&self.root)
    }

    /// The indentation unit the file uses (two spaces when it shows none).
    fn unit(&self) -> String {
        for line in self.text.lines().skip(1) {
            let lead = &line[..line.len() - line.trim_start().len()];
            if !lead.is_empty() && !line.trim().is_empty() {
                return lead.to_string();
            }
        }
        "  ".into()
    }

    /// The whitespace at the start of the line holding byte `at`.
    fn line_indent(&self, at: usize) -> &str {
        let line_start = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line = &self.text[line_start..];
        &line[..line.len() - line.trim_start().len()]
    }

    /// The newline the file uses.
    fn newline(&self) -> &'static str {
        if self.text.contains("\r\n") {
            "\r\n"
        } else {
            "\n"
        }
    }
}

/// The last member `key` of an object node.
fn member<'n>(n: &'n Node, key: &str) -> Option<&'n Member> {
    match &n.kind {
        NodeKind::Object(m) => m.iter().rev().find(|m| m.key == key),
        _ => None,
    }
}

/// The value of the member `key` of an object node (its last one).
pub fn member_node<'n>(n: &'n Node, key: &str) -> Option<&'n Node> {
    member(n, key).map(|m| &m.value)
}

/// `value` printed at `indent`, the file's `unit` per level.
fn render(value: &Value, indent: &str, unit: &str, nl: &str) -> String {
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    if serde::Serialize::serialize(value, &mut ser).is_err() {
        return "null".into();
    }
    let text = String::from_utf8(buf).unwrap_or_default();
    text.replace('\n', &format!("{nl}{indent}"))
}

/// `value` nested under the keys of `rest` (`{"a": {"b": value}}`).
fn nest(rest: &[&str], value: &Value) -> Value {
    rest.iter().rev().fold(value.clone(), |v, k| {
        let mut m = serde_json::Map::new();
        m.insert((*k).to_string(), v);
        Value::Object(m)
    })
}

/// The text with a new member (`key`) or item (no key) holding `value`
/// added at the end of the container `n`, whose parts start at `parts[0]`
/// and end at `parts[1]` (empty: the container is empty).
fn append(doc: &Doc, n: &Node, parts: &[usize], key: Option<&str>, value: &Value) -> String {
    let text = doc.text;
    let nl = doc.newline();
    let unit = doc.unit();
    let head = key
        .map(|k| format!("{}: ", serde_json::to_string(k).unwrap_or_default()))
        .unwrap_or_default();
    let body = |indent: &str| format!("{head}{}", render(value, indent, &unit, nl));
    if n.start == n.end {
        // A blank file: the first member of a new top-level object.
        return format!("{{{nl}{unit}{}{nl}}}{nl}", body(&unit));
    }
    let indent = doc.line_indent(n.start).to_string();
    match parts {
        [first_start, last_end] => {
            let (first_start, last_end) = (*first_start, *last_end);
            if text[n.start..first_start].contains('\n') {
                let inner = doc.line_indent(first_start).to_string();
                format!(
                    "{},{nl}{inner}{}{}",
                    &text[..last_end],
                    body(&inner),
                    &text[last_end..]
                )
            } else {
                let compact = serde_json::to_string(value).unwrap_or_default();
                format!(
                    "{}, {head}{compact}{}",
                    &text[..last_end],
                    &text[last_end..]
                )
            }
        }
        _ => {
            let inner = format!("{indent}{unit}");
            format!(
                "{}{nl}{inner}{}{nl}{indent}{}",
                &text[..n.start + 1],
                body(&inner),
                &text[n.end - 1..]
            )
        }
    }
}

/// An edit that cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// Something on the way is not an object (or not a list).
    #[error("`{0}` is not {1}")]
    NotA(String, &'static str),
}

/// `text` with `path` set to `value`: in place when the key is there, else
/// added at the end of its object, with the objects on the way that are
/// missing. Returns the new text and how many keys of `path` were missing.
pub fn set(doc: &Doc, path: &[&str], value: &Value) -> Result<(String, usize), EditError> {
    let text = doc.text;
    let nl = doc.newline();
    let unit = doc.unit();
    let mut n = &doc.root;
    for (i, k) in path.iter().enumerate() {
        let NodeKind::Object(members) = &n.kind else {
            return Err(EditError::NotA(path[..i].join("."), "an object"));
        };
        match member(n, k) {
            Some(m) if i + 1 == path.len() => {
                let indent = doc.line_indent(m.key_start);
                let new = render(value, indent, &unit, nl);
                let out = format!("{}{new}{}", &text[..m.value.start], &text[m.value.end..]);
                return Ok((out, 0));
            }
            Some(m) => {
                if !matches!(m.value.kind, NodeKind::Object(_)) {
                    return Err(EditError::NotA(path[..=i].join("."), "an object"));
                }
                n = &m.value;
            }
            None => {
                let v = nest(&path[i + 1..], value);
                let parts: Vec<usize> = match (members.first(), members.last()) {
                    (Some(f), Some(l)) => vec![f.key_start, l.value.end],
                    _ => Vec::new(),
                };
                let out = append(doc, n, &parts, Some(k), &v);
                return Ok((out, path.len() - i));
            }
        }
    }
    Ok((text.to_string(), 0))
}

/// `text` with `item` added at the end of the list at `path` (created, with
/// the objects on the way, when missing). Returns the new text and how many
/// keys of `path` were missing.
pub fn push(doc: &Doc, path: &[&str], item: &Value) -> Result<(String, usize), EditError> {
    match doc.at(path) {
        None => set(doc, path, &Value::Array(vec![item.clone()])),
        Some(n) => {
            let NodeKind::Array(items) = &n.kind else {
                return Err(EditError::NotA(path.join("."), "a list"));
            };
            let parts: Vec<usize> = match (items.first(), items.last()) {
                (Some(f), Some(l)) => vec![f.start, l.end],
                _ => Vec::new(),
            };
            let out = append(doc, n, &parts, None, item);
            Ok((out, 0))
        }
    }
}

/// The span to cut to take out part `i` of a container whose parts span
/// `spans` (start, end), the container itself being `n`.
pub fn cut_span(n: &Node, spans: &[(usize, usize)], i: usize) -> (usize, usize) {
    if spans.len() == 1 {
        (n.start + 1, n.end - 1)
    } else if i > 0 {
        (spans[i - 1].1, spans[i].1)
    } else {
        (spans[0].0, spans[1].0)
    }
}

/// `text` without the member `path` (its last one when repeated); the text
/// unchanged when it is not there.
pub fn remove(doc: &Doc, path: &[&str]) -> String {
    let Some((last, parents)) = path.split_last() else {
        return doc.text.to_string();
    };
    let Some(n) = doc.at(parents) else {
        return doc.text.to_string();
    };
    let NodeKind::Object(members) = &n.kind else {
        return doc.text.to_string();
    };
    let Some(i) = members.iter().rposition(|m| m.key == *last) else {
        return doc.text.to_string();
    };
    let spans: Vec<(usize, usize)> = members.iter().map(|m| (m.key_start, m.value.end)).collect();
    let (a, b) = cut_span(n, &spans, i);
    format!("{}{}", &doc.text[..a], &doc.text[b..])
}

/// `text` without item `i` of the list at `path`.
pub fn remove_item(doc: &Doc, path: &[&str], i: usize) -> String {
    let Some(n) = doc.at(path) else {
        return doc.text.to_string();
    };
    let NodeKind::Array(items) = &n.kind else {
        return doc.text.to_string();
    };
    if i >= items.len() {
        return doc.text.to_string();
    }
    let spans: Vec<(usize, usize)> = items.iter().map(|m| (m.start, m.end)).collect();
    let (a, b) = cut_span(n, &spans, i);
    format!("{}{}", &doc.text[..a], &doc.text[b..])
}

/// The items of the list at `path`, parsed (`None` for an item that does
/// not parse).
pub fn items(doc: &Doc, path: &[&str]) -> Vec<Option<Value>> {
    match doc.at(path).map(|n| &n.kind) {
        Some(NodeKind::Array(items)) => items.iter().map(|i| doc.value(i)).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set_text(text: &str, path: &[&str], v: Value) -> String {
        set(&Doc::parse(text).unwrap(), path, &v).unwrap().0
    }

    #[test]
    fn adding_then_removing_gives_the_bytes_back() {
        for text in [
            "{\n    \"zeta\": 1,\n    \"big\": 123456789012345678901234567890\n}\n",
            "{\"a\": 1}",
            "{}",
            "{\n  \"dup\": 1,\n  \"dup\": 2\n}",
            "",
        ] {
            let with = set_text(text, &["mcpServers", "deja"], json!({"command": "/d"}));
            let doc = Doc::parse(&with).unwrap();
            assert_eq!(
                doc.value_at(&["mcpServers", "deja", "command"]),
                Some(json!("/d"))
            );
            let without = remove(&doc, &["mcpServers"]);
            let expect = if text.is_empty() { "{}\n" } else { text };
            assert_eq!(without, expect, "from {text:?} via {with:?}");
        }
    }

    #[test]
    fn new_members_take_the_files_indentation() {
        let text = "{\n    \"a\": {\n        \"b\": 1\n    }\n}\n";
        let out = set_text(text, &["a", "c"], json!({"x": [1]}));
        assert_eq!(
            out,
            "{\n    \"a\": {\n        \"b\": 1,\n        \"c\": {\n            \"x\": [\n                1\n            ]\n        }\n    }\n}\n"
        );
        let out = push(
            &Doc::parse("{\"l\": [\"a\"]}").unwrap(),
            &["l"],
            &json!("b"),
        )
        .unwrap()
        .0;
        assert_eq!(out, "{\"l\": [\"a\", \"b\"]}");
        let doc = Doc::parse(&out).unwrap();
        assert_eq!(remove_item(&doc, &["l"], 1), "{\"l\": [\"a\"]}");
        assert_eq!(remove_item(&doc, &["l"], 0), "{\"l\": [\"b\"]}");
    }

    #[test]
    fn bad_text_is_refused() {
        for text in [
            "{",
            "{\"a\" 1}",
            "[1,]",
            "{\"a\": tru}",
            "{} x",
            "{\"a\": 01}",
        ] {
            assert!(Doc::parse(text).is_err(), "{text:?}");
        }
        let deep = "[".repeat(1000) + &"]".repeat(1000);
        assert!(Doc::parse(&deep).is_err());
        assert!(Doc::parse("{\"n\": -1.5e10, \"m\": 123456789012345678901234567890}").is_ok());
    }
}
