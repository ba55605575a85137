//! Sessions kept as a tree of JSON files (`[source.linked]`): the
//! transcript is a JSON document of the session's own fields, and its
//! messages, and each message's parts, are files of their own in folders
//! named by their owner's id, as OpenCode's `storage/` folder keeps them:
//!
//! ```text
//! storage/session/<project>/<session>.json   the transcript
//! storage/message/<session>/<message>.json   its messages
//! storage/part/<message>/<part>.json         each message's parts
//! ```
//!
//! A link is a path relative to the transcript's folder whose folders may
//! hold `{/pointer}`, the value at that pointer in the owner's document (the
//! session's for `records`, the record's for `parts`), and whose last
//! component is a glob of file names. The files are read in the order of
//! their names. With `parts`, each part is one record `{"message": <the
//! record's document>, "part": <the part's>}`, as a SQL join of the two
//! would give; a record without parts gives none.
//!
//! What is read is bounded (a file's size, the files of a session), a value
//! that is not one plain folder name (`..`, a `/`) names no folder, and only
//! regular files are read, as side files are (no FIFO, no device).

use std::path::{Path, PathBuf};

use deja_plugin_api::{text, PluginError};
use serde::de::{self, Deserializer};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::description::Glob;
use crate::pointer::Pointer;
use crate::source::Group;

/// The largest file read, in bytes.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// The most files (records and parts) read for one session.
const MAX_FILES: usize = 200_000;

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
        let crate::description::OneOrMany(texts) = crate::description::OneOrMany::deserialize(d)?;
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
    names: globset::GlobMatcher,
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
    fn folder(&self, base: &Path, owner: &Value) -> Option<PathBuf> {
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

/// What reading one session found wrong, for the warnings.
#[derive(Default)]
struct Tally {
    unreadable: usize,
    files: usize,
    cut: bool,
}

impl Tally {
    /// Whether another file may be read.
    fn room(&mut self) -> bool {
        if self.files >= MAX_FILES {
            self.cut = true;
            return false;
        }
        self.files += 1;
        true
    }
}

/// The documents of the files `links` name for `owner`, in name order.
fn documents(links: &Links, base: &Path, owner: &Value, tally: &mut Tally) -> Vec<Value> {
    let Some((folder, link)) = links.0.iter().find_map(|link| {
        link.folder(base, owner)
            .filter(|f| f.is_dir())
            .map(|f| (f, link))
    }) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&folder) else {
        tally.unreadable += 1;
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| link.names.is_match(n))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        if !tally.room() {
            break;
        }
        match read_json(&folder.join(&name)) {
            Some(doc) => out.push(doc),
            None => tally.unreadable += 1,
        }
    }
    out
}

/// The JSON document in the regular file at `path`, when it is one (read
/// as a side file is: [`crate::place::read_small`]).
fn read_json(path: &Path) -> Option<Value> {
    let bytes = crate::place::read_small(path, MAX_FILE_BYTES)?;
    let (text, _) = text::decode(&bytes);
    serde_json::from_str(&text).ok()
}

/// Reads the session document `bytes` (the transcript at `path`) and the
/// files it links to into one group for `visit`; returns the warnings.
pub fn load(
    linked: &Linked,
    path: &str,
    bytes: &[u8],
    visit: &mut dyn FnMut(Group),
) -> Result<Vec<String>, PluginError> {
    let (text, _) = text::decode(bytes);
    let session: Value = serde_json::from_str(&text)
        .map_err(|e| PluginError::invalid(format!("not a JSON document: {e}")))?;
    if !session.is_object() {
        return Err(PluginError::invalid(
            "the session file is not a JSON object".to_string(),
        ));
    }
    let base = Path::new(path).parent().unwrap_or(Path::new("."));
    let mut tally = Tally::default();
    let mut records = Vec::new();
    for record in documents(&linked.records, base, &session, &mut tally) {
        match &linked.parts {
            None => records.push(record),
            Some(parts) => {
                for part in documents(parts, base, &record, &mut tally) {
                    records.push(json!({"message": record, "part": part}));
                }
            }
        }
    }
    visit(Group {
        row: Some(session),
        records,
    });
    let mut warnings = Vec::new();
    if tally.unreadable > 0 {
        warnings.push(format!(
            "{} of the session's message or part files could not be read as JSON and were skipped",
            tally.unreadable
        ));
    }
    if tally.cut {
        warnings.push(format!(
            "the session has more than {MAX_FILES} message and part files: only the first were read"
        ));
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

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
