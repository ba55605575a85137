//! Timestamps: Codex writes RFC 3339 strings (`2025-12-25T13:45:23.750Z`);
//! deja wants milliseconds since the Unix epoch, UTC.

use chrono::{DateTime, Utc};
use serde_json::Value;

/// Milliseconds since the epoch of an RFC 3339 string; `None` when the value
/// is missing, not a string or unparsable (callers fall back, never fail).
pub fn parse_ms(value: Option<&Value>) -> Option<i64> {
    parse_str_ms(value?.as_str()?)
}

/// Milliseconds since the epoch of an RFC 3339 string.
pub fn parse_str_ms(text: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(text.trim())
        .ok()
        .map(|t| t.timestamp_millis())
}

/// The RFC 3339 form of `ms` (for messages to the user).
pub fn rfc3339(ms: i64) -> Option<String> {
    DateTime::<Utc>::from_timestamp_millis(ms).map(|t| t.to_rfc3339())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_codex_timestamps() {
        assert_eq!(
            parse_ms(Some(&json!("1970-01-01T00:00:01.500Z"))),
            Some(1500)
        );
        assert_eq!(parse_ms(Some(&json!("1970-01-01T01:00:00+01:00"))), Some(0));
    }

    #[test]
    fn rejects_what_is_not_a_timestamp() {
        assert_eq!(parse_ms(None), None);
        assert_eq!(parse_ms(Some(&json!(5))), None);
        assert_eq!(parse_ms(Some(&json!("2026-13-01T00:00:00Z"))), None);
        assert_eq!(parse_ms(Some(&json!("99999999-01-01T00:00:00Z"))), None);
        assert_eq!(rfc3339(i64::MAX), None);
    }
}
