//! The ids and times written records carry: a message's own id from the
//! store when it has the shape the agent gives its ids (so links to the
//! message keep working once the file is read again), else a UUID derived
//! from the session and the record's place (the same session always gives
//! the same file); times in RFC 3339 with milliseconds, UTC.

use std::collections::HashSet;

use chrono::{DateTime, SecondsFormat, Utc};

/// Whether `s` is a UUID (`8-4-4-4-12` hexadecimal digits).
pub fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts
            .iter()
            .all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Whether `s` is 1 to 128 letters, digits, `-`, `_` or `.`.
pub fn is_plain(s: &str) -> bool {
    (1..=128).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The ids given so far in one file: each is given once.
#[derive(Debug, Default)]
pub struct Given(HashSet<String>);

impl Given {
    /// `native` when it `fits` and was not given yet, else `fallback`.
    pub fn keep(
        &mut self,
        native: Option<&str>,
        fits: impl Fn(&str) -> bool,
        fallback: String,
    ) -> String {
        match native.filter(|n| fits(n) && !self.0.contains(*n)) {
            Some(n) => {
                self.0.insert(n.to_string());
                n.to_string()
            }
            None => fallback,
        }
    }
}

/// A version-4-shaped UUID derived from `seed`.
pub fn uuid(seed: &str) -> String {
    let hex = deja_model::sha256_hex(seed.as_bytes());
    let h = hex.as_bytes();
    let part = |a: usize, b: usize| String::from_utf8_lossy(&h[a..b]).into_owned();
    // Version nibble 4, variant 8 (10xx).
    format!(
        "{}-{}-4{}-8{}-{}",
        part(0, 8),
        part(8, 12),
        part(13, 16),
        part(17, 20),
        part(20, 32)
    )
}

/// The id of record `index` of session `id` in `harness`'s file.
pub fn record(harness: &str, id: &str, index: usize) -> String {
    uuid(&format!("deja write-back\n{harness}\n{id}\n{index}"))
}

/// `ms` as `2026-01-01T10:00:00.000Z`.
pub fn rfc3339(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_stable_and_shaped() {
        let a = uuid("x");
        assert_eq!(a, uuid("x"));
        assert_ne!(a, uuid("y"));
        let parts: Vec<&str> = a.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4') && parts[3].starts_with('8'));
    }

    #[test]
    fn native_ids_are_kept_once_and_when_they_fit() {
        let mut given = Given::default();
        let id = "0a1b2c3d-0000-4000-8000-000000000001";
        assert!(is_uuid(id) && !is_uuid("u1") && !is_uuid("0a1b2c3d-0000-4000-8000-00000000000g"));
        assert_eq!(given.keep(Some(id), is_uuid, "x".into()), id);
        assert_eq!(given.keep(Some(id), is_uuid, "again".into()), "again");
        assert_eq!(given.keep(Some("u1"), is_uuid, "y".into()), "y");
        assert_eq!(given.keep(Some("a/b"), is_plain, "z".into()), "z");
        assert_eq!(given.keep(None, is_plain, "n".into()), "n");
    }

    #[test]
    fn times_have_milliseconds() {
        assert_eq!(rfc3339(1_767_261_600_123), "2026-01-01T10:00:00.123Z");
    }
}
