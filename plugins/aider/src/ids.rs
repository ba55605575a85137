//! deja's session ids for aider, which has none of its own:
//! `aider-<path hash>-<YYYYMMDDTHHMMSS>` from the history path and the header's
//! local time digits (so the id does not depend on the time-zone setting),
//! with `-2`, `-3`, ... for further launches in the same second, in file order.
//!
//! A header whose time does not parse gets `aider-<path hash>-n<ordinal>-<marker>`:
//! its 1-based position among the file's sessions, plus the first 8 hex digits
//! of the SHA-256 of the file's first non-empty line. The file is append-only,
//! so that line never changes; a new file at the path of a deleted one starts
//! with another header, so its sessions never take the ids of kept ones.

use std::collections::HashMap;
use std::fmt::Write;

use chrono::NaiveDateTime;
use sha2::{Digest, Sha256};

/// Hands out the ids of one file's sessions, in file order.
#[derive(Debug)]
pub(crate) struct Ids {
    path_hash: String,
    marker: String,
    seen: HashMap<String, u32>,
}

impl Ids {
    /// Ids for the history at `path` whose first non-empty line is `first_line`.
    pub(crate) fn new(path: &str, first_line: &str) -> Self {
        Ids {
            path_hash: hex_prefix(path, 12),
            marker: hex_prefix(first_line, 8),
            seen: HashMap::new(),
        }
    }

    /// The id of the next session started at local time `time`.
    pub(crate) fn timed(&mut self, time: NaiveDateTime) -> String {
        let base = format!("aider-{}-{}", self.path_hash, time.format("%Y%m%dT%H%M%S"));
        let count = self.seen.entry(base.clone()).or_insert(0);
        *count += 1;
        if *count == 1 {
            base
        } else {
            format!("{base}-{count}")
        }
    }

    /// The id of the session at 1-based `ordinal` whose header has no time.
    pub(crate) fn untimed(&self, ordinal: usize) -> String {
        format!("aider-{}-n{ordinal}-{}", self.path_hash, self.marker)
    }
}

/// The first `len` hex digits of the SHA-256 of `text`.
fn hex_prefix(text: &str, len: usize) -> String {
    let mut hex = String::with_capacity(64);
    for byte in Sha256::digest(text.as_bytes()) {
        let _ = write!(hex, "{byte:02x}");
    }
    hex.truncate(len);
    hex
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap()
    }

    #[test]
    fn hashes() {
        // sha256("abc") = ba7816bf8f01cfea...
        assert_eq!(hex_prefix("abc", 12), "ba7816bf8f01");
        assert_eq!(hex_prefix("abc", 8), "ba7816bf");
    }

    #[test]
    fn same_second_launches_are_numbered() {
        let mut ids = Ids::new("abc", "x");
        let t = at("2026-07-17 09:00:00");
        assert_eq!(ids.timed(t), "aider-ba7816bf8f01-20260717T090000");
        assert_eq!(ids.timed(t), "aider-ba7816bf8f01-20260717T090000-2");
        assert_eq!(
            ids.timed(at("2026-07-17 09:00:01")),
            "aider-ba7816bf8f01-20260717T090001"
        );
        assert_eq!(ids.timed(t), "aider-ba7816bf8f01-20260717T090000-3");
    }

    #[test]
    fn untimed_ids_carry_the_file_marker() {
        let ids = Ids::new("abc", "abc");
        assert_eq!(ids.untimed(3), "aider-ba7816bf8f01-n3-ba7816bf");
        let other = Ids::new("abc", "another first line");
        assert_ne!(ids.untimed(3), other.untimed(3));
    }
}
