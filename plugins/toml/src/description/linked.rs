//! `[source.linked]` in a description: which transcripts are kept as a tree
//! of JSON files, and the links from a session to its records and from a
//! record to its parts. How they are read is [`crate::linked`].
//!
//! A link is a path relative to the transcript's folder whose folders may
//! hold `{/pointer}`, the value at that pointer in the owner's document (the
//! session's for `records`, the record's for `parts`), and whose last
//! component is a glob of file names. A value that is not one plain folder
//! name (`..`, a `/`) names no folder.

use std::path::{Path, PathBuf};

use serde::de::{self, Deserializer};
use serde::Deserialize;
use serde_json::Value;

use super::{Glob, OneOrMany};
use crate::pointer::Pointer;

/// `[source.linked]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Linked {
    /// The transcripts read this way, by file name (`ses_*.json`); the
    /// description's other files are read as its `kind` says.
    pub names: Vec<Glob>,
    /// Where the session's records are (the first link whose folder exists).
    pub records: Links,
    /// Where each record's parts are (the first link whose folder exists).
    pub parts: Option<Links>,
}

impl Linked {
    /// Whether the transcript at `path` is read this way.
    pub fn applies(&self, path: &str) -> bool {
        let name = deja_plugin_api::paths::basename(path).unwrap_or(path);
        self.names.iter().any(|g| g.matcher.is_match(name))
    }
}

/// One link or several, tried in order.
#[derive(Debug)]
pub struct Links(pub Vec<Link>);

impl<'de> Deserialize<'de> for Links {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let OneOrMany(texts) = OneOrMany::deserialize(d)?;
        if texts.is_empty() {
            return Err(de::Error::custom("at least one link is needed"));
        }
        texts
            .iter()
            .map(|t| Link::parse(t).map_err(de::Error::custom))
            .collect::<Result<Vec<_>, _>>()
            .map(Links)
    }
}

/// A folder path of text and `{/pointer}` values, and a glob of names.
#[derive(Debug)]
pub struct Link {
    folders: Vec<Vec<Piece>>,
    pub(crate) names: globset::GlobMatcher,
}

/// A piece of a folder's name.
#[derive(Debug)]
enum Piece {
    Text(String),
    Value(Pointer),
}

impl Link {
    /// Reads `../../message/{/id}/*.json`.
    pub fn parse(text: &str) -> Result<Link, String> {
        if text.starts_with('/') || text.contains('\\') || text.contains(':') {
            return Err(format!(
                "`{text}` is a path relative to the transcript's folder, written with `/`"
            ));
        }
        let mut components = split_outside_braces(text);
        let glob = components.pop().unwrap_or_default();
        if components.is_empty() {
            return Err(format!("`{text}` needs a folder and a glob of file names"));
        }
        let names = globset::Glob::new(&glob)
            .map_err(|e| format!("invalid glob `{glob}`: {}", e.kind()))?
            .compile_matcher();
        let folders = components
            .iter()
            .map(|component| pieces(component).map_err(|e| format!("in `{text}`: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Link { folders, names })
    }

    /// The folder it names below `base` for `owner`, when every value is a
    /// plain folder name.
    pub(crate) fn folder(&self, base: &Path, owner: &Value) -> Option<PathBuf> {
        let mut out = base.to_path_buf();
        for component in &self.folders {
            let mut name = String::new();
            for piece in component {
                match piece {
                    Piece::Text(t) => name.push_str(t),
                    Piece::Value(p) => name.push_str(&plain_name(p, owner)?),
                }
            }
            match name.as_str() {
                "" | "." => {}
                ".." => {
                    out.push("..");
                }
                _ => out.push(name),
            }
        }
        Some(out)
    }
}

/// `text` cut at each `/` that is not inside `{ }` (a pointer's own `/`).
fn split_outside_braces(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            '/' if depth == 0 => {
                out.push(String::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = out.last_mut() {
            last.push(c);
        }
    }
    out
}

/// The pieces of one folder name: text and `{/pointer}` values.
fn pieces(component: &str) -> Result<Vec<Piece>, String> {
    let mut out = Vec::new();
    let mut rest = component;
    while let Some(open) = rest.find('{') {
        let (before, after) = rest.split_at(open);
        if !before.is_empty() {
            out.push(Piece::Text(before.to_string()));
        }
        let after = after.get(1..).unwrap_or("");
        let Some(close) = after.find('}') else {
            return Err("a `{` without its `}`".to_string());
        };
        let (pointer, tail) = after.split_at(close);
        out.push(Piece::Value(
            Pointer::parse(pointer).map_err(|e| e.to_string())?,
        ));
        rest = tail.get(1..).unwrap_or("");
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest.to_string()));
    }
    Ok(out)
}

/// The value at `p` in `owner` as one folder name: a string or a number,
/// never empty, `.`, `..`, or holding a separator or a NUL.
fn plain_name(p: &Pointer, owner: &Value) -> Option<String> {
    let value = p.get(owner)?;
    let name = match value.as_ref() {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let plain =
        !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0', ':']);
    plain.then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn links_name_plain_folders_only() {
        let link = Link::parse("../../message/{/id}/*.json").unwrap();
        let base = Path::new("/d/storage/session/p");
        assert_eq!(
            link.folder(base, &json!({"id": "ses_1"})),
            Some(PathBuf::from("/d/storage/session/p/../../message/ses_1"))
        );
        for bad in [
            json!({"id": ".."}),
            json!({"id": "a/b"}),
            json!({"id": ""}),
            json!({}),
        ] {
            assert_eq!(link.folder(base, &bad), None, "{bad}");
        }
        assert!(Link::parse("/abs/*.json").is_err());
        assert!(Link::parse("nofolder.json").is_err());
        assert!(Link::parse("x/{/id/*.json").is_err());
    }
}
