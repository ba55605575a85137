//! Timestamps: Claude Code writes RFC 3339 strings (`2026-04-09T13:46:01.086Z`);
//! deja wants milliseconds since the Unix epoch, UTC.

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
    fn parses_rfc3339() {
        assert_eq!(parse_ms(Some("1970-01-01T00:00:01.5Z")), Some(1500));
        assert_eq!(parse_ms(Some("1970-01-01T01:00:00+01:00")), Some(0));
        assert_eq!(parse_ms(None), None);
        assert_eq!(parse_ms(Some("yesterday")), None);
    }
}
