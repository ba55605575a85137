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

use std::path::Path;

use deja_plugin_api::{text, PluginError};
use serde_json::{json, Value};

use crate::description::linked::{Linked, Links};
use crate::source::Group;

/// The largest file read, in bytes.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// The most files (records and parts) read for one session.
const MAX_FILES: usize = 200_000;

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
        id: None,
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
