//! The ids and times written records carry: UUIDs derived from the session
//! and the record's place (the same session always gives the same file),
//! times in RFC 3339 with milliseconds, UTC.

use chrono::{DateTime, SecondsFormat, Utc};

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
    fn times_have_milliseconds() {
        assert_eq!(rfc3339(1_767_261_600_123), "2026-01-01T10:00:00.123Z");
    }
}
