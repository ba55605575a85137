//! A rollout's text as a sequence of JSON objects, one per line.
//!
//! Lines end at `\n` only: Codex's JSON strings may hold raw U+0085 (NEL) and
//! U+2028, which other line splitters treat as line ends and so cut records
//! in two. A line that is not a complete JSON object is skipped: blank lines,
//! NUL padding a crash left at the end, and above all the last line of a file
//! Codex is still writing. That torn line cannot parse until it is complete
//! (a JSON object only parses once its closing brace is there), so a file read
//! mid-write yields exactly the records a later, longer read starts with.

use serde_json::{Map, Value};

/// The JSON objects of `text`, in order, one per line that holds one.
pub fn objects(text: &str) -> impl Iterator<Item = Map<String, Value>> + '_ {
    text.split('\n').filter_map(|line| {
        let line = line.trim();
        if !line.starts_with('{') {
            return None;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(text: &str) -> usize {
        objects(text).count()
    }

    #[test]
    fn splits_on_newlines_only() {
        let text = "{\"a\":\"x\u{85}y\u{2028}z\"}\r\n{\"b\":1}\n";
        let all: Vec<_> = objects(text).collect();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0]["a"], "x\u{85}y\u{2028}z");
    }

    #[test]
    fn skips_torn_blank_and_foreign_lines() {
        assert_eq!(count("{\"a\":1}\n{\"b\":"), 1);
        assert_eq!(count("{\"a\":1}\n\n[1,2]\n5\nnot json\n"), 1);
        assert_eq!(count("{\"a\":1}\n\0\0\0"), 1);
        assert_eq!(count(""), 0);
        // A complete last line without its newline is a complete record.
        assert_eq!(count("{\"a\":1}\n{\"b\":2}"), 2);
    }
}
