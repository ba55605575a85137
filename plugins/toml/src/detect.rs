//! Whether a file is the described harness's: its name matches `detect.names`
//! (by default the last component of each `files.glob`) and its path one of
//! `detect.paths` when there are any, and its first bytes
//! hold every `detect.contains` string, and a sqlite source's file starts as
//! a SQLite database does.

use deja_plugin_api::paths;

use crate::description::{Description, Kind};

/// The first bytes of every SQLite 3 database.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// 0–100 for the file at `path` starting with `head`.
pub fn score(d: &Description, path: &str, head: &[u8]) -> u8 {
    let name = paths::basename(path).unwrap_or(path);
    let named = if d.detect.names.is_empty() {
        d.files.glob.iter().any(|g| {
            let last = g.text.rsplit('/').next().unwrap_or(&g.text);
            globset::Glob::new(last)
                .map(|g| g.compile_matcher().is_match(name))
                .unwrap_or(false)
        })
    } else {
        d.detect.names.iter().any(|g| g.matcher.is_match(name))
    };
    let unified = path.replace('\\', "/");
    let named = named
        && (d.detect.paths.is_empty() || d.detect.paths.iter().any(|p| p.0.is_match(&unified)));
    let linked = d.source.linked.as_ref().is_some_and(|l| l.applies(path));
    if d.source.kind == Kind::Sqlite && !linked && !head.starts_with(SQLITE_MAGIC) {
        return 0;
    }
    let holds = |needle: &str| {
        let needle = needle.as_bytes();
        !needle.is_empty() && head.windows(needle.len()).any(|w| w == needle)
    };
    let contains = d.detect.contains.iter().all(|s| holds(s));
    match (named, contains, d.detect.contains.is_empty()) {
        (true, true, false) => 95,
        (true, true, true) => 70,
        (false, true, false) => 50,
        _ => 0,
    }
}
