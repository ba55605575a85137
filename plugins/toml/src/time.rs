//! Timestamps as harnesses write them, read into ms since the epoch: numbers
//! in seconds, milliseconds, microseconds or nanoseconds (told apart by
//! size), and RFC 3339 strings.

use serde_json::Value;

/// `value` as ms since the epoch, when it is a time.
pub fn ms(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => from_number(n.as_f64()?),
        Value::String(s) => from_text(s.trim()),
        _ => None,
    }
}

fn from_number(n: f64) -> Option<i64> {
    if !n.is_finite() || n <= 0.0 {
        return None;
    }
    // Seconds until the year 5138, then ms, µs, ns.
    let ms = if n < 1e11 {
        n * 1e3
    } else if n < 1e14 {
        n
    } else if n < 1e17 {
        n / 1e3
    } else {
        n / 1e6
    };
    (ms < 9.0e15).then_some(ms as i64)
}

fn from_text(s: &str) -> Option<i64> {
    if let Ok(n) = s.parse::<f64>() {
        return from_number(n);
    }
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.timestamp_millis())
        .or_else(|| {
            // Without an offset: UTC.
            chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
                .or_else(|_| chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f"))
                .ok()
                .map(|t| t.and_utc().timestamp_millis())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_unit_and_format_reads_to_the_same_instant() {
        let want = Some(1_796_182_649_737);
        assert_eq!(ms(&json!(1_796_182_649_737i64)), want);
        assert_eq!(ms(&json!(1_796_182_649.737)), want);
        assert_eq!(ms(&json!(1_796_182_649_737_000i64)), want);
        assert_eq!(ms(&json!("2026-12-02T03:37:29.737Z")), want);
        assert_eq!(ms(&json!("2026-12-02T04:37:29.737+01:00")), want);
        assert_eq!(ms(&json!("2026-12-02 03:37:29.737")), want);
        assert_eq!(ms(&json!("1796182649737")), want);
    }

    #[test]
    fn what_is_not_a_time_is_none() {
        for v in [
            json!(null),
            json!(-5),
            json!("soon"),
            json!(true),
            json!(1e300),
        ] {
            assert_eq!(ms(&v), None, "{v}");
        }
    }
}
