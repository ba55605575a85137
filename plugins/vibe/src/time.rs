//! Timestamps: `meta.json` keeps RFC 3339 strings
//! (`2026-12-06T05:02:11.569000+00:00`), history entries milliseconds.

use chrono::DateTime;

/// Milliseconds since the epoch of an RFC 3339 timestamp; `None` when it is
/// missing or unparsable (callers fall back, never fail).
pub fn parse_ms(value: Option<&str>) -> Option<i64> {
    DateTime::parse_from_rfc3339(value?.trim())
        .ok()
        .map(|t| t.timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_vibe_writes_and_rejects_the_rest() {
        assert_eq!(
            parse_ms(Some("1970-01-01T00:00:01.500000+00:00")),
            Some(1500)
        );
        assert_eq!(parse_ms(None), None);
        assert_eq!(parse_ms(Some("yesterday")), None);
    }
}
