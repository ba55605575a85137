//! Timestamps: Gemini CLI writes RFC 3339 strings (`2026-03-28T21:19:05.125Z`);
//! deja wants milliseconds since the Unix epoch, UTC.

use chrono::{DateTime, Utc};

/// Milliseconds since the epoch of an RFC 3339 timestamp; `None` when it is
/// missing or unparsable (callers fall back, never fail).
pub fn parse_ms(value: Option<&str>) -> Option<i64> {
    DateTime::parse_from_rfc3339(value?.trim())
        .ok()
        .map(|t| t.timestamp_millis())
}

/// `YYYYMMDDTHHMMSS` in UTC, the stamp in deja's session ids.
pub fn compact_utc(ms: i64) -> Option<String> {
    DateTime::<Utc>::from_timestamp_millis(ms).map(|t| t.format("%Y%m%dT%H%M%S").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rfc3339_with_offsets_and_fractions() {
        assert_eq!(parse_ms(Some("1970-01-01T00:00:01.5Z")), Some(1500));
        assert_eq!(parse_ms(Some("1970-01-01T01:00:00+01:00")), Some(0));
        assert_eq!(parse_ms(Some(" 1970-01-01T00:00:00Z\n")), Some(0));
    }

    #[test]
    fn rejects_what_is_not_rfc3339() {
        assert_eq!(parse_ms(None), None);
        assert_eq!(parse_ms(Some("")), None);
        assert_eq!(parse_ms(Some("2026-03-28 21:19")), None);
        assert_eq!(parse_ms(Some("99999999-01-01T00:00:00Z")), None);
    }

    #[test]
    fn compact_stamp_is_utc() {
        let ms = parse_ms(Some("2026-03-28T23:19:05+02:00"));
        assert_eq!(ms.and_then(compact_utc).as_deref(), Some("20260328T211905"));
        assert_eq!(compact_utc(i64::MAX), None);
    }
}
