//! Timestamps as harnesses write them, read into ms since the epoch: numbers
//! in seconds, milliseconds, microseconds or nanoseconds (told apart by
//! size), RFC 3339 strings, and the long form an editor writes for people,
//! with its UTC offset (`Monday, Jun 1, 2026, 12:04 PM (UTC+2)`, as Cursor
//! puts before what the person typed).

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
            // Without an offset, or to the minute with `Z` (`2025-10-14
            // 22:25Z`, as Markdown exports write it): UTC.
            let s = s.strip_suffix('Z').unwrap_or(s);
            chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
                .or_else(|_| chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f"))
                .or_else(|_| chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M"))
                .ok()
                .map(|t| t.and_utc().timestamp_millis())
        })
        .or_else(|| spelled_out(s))
}

/// `Monday, Jun 1, 2026, 12:04 PM (UTC+2)`: the weekday is not checked,
/// the offset is `UTC`, `UTC+2`, `UTC-5:30` or `UTC+0530`.
fn spelled_out(s: &str) -> Option<i64> {
    let (when, offset) = s.strip_suffix(')')?.rsplit_once('(')?;
    let offset = offset.trim().strip_prefix("UTC")?;
    let minutes = match offset.chars().next() {
        None => 0,
        Some(sign @ ('+' | '-')) => {
            let rest = offset.get(1..)?;
            let (h, m) = match rest.split_once(':') {
                Some((h, m)) => (h, m),
                None if rest.len() > 2 => rest.split_at(2),
                None => (rest, "0"),
            };
            let total = h.parse::<i64>().ok()? * 60 + m.parse::<i64>().ok()?;
            if total > 14 * 60 {
                return None;
            }
            if sign == '-' {
                -total
            } else {
                total
            }
        }
        Some(_) => return None,
    };
    let (_weekday, date) = when.trim().split_once(", ")?;
    let local = chrono::NaiveDateTime::parse_from_str(date, "%b %d, %Y, %I:%M %p").ok()?;
    Some(local.and_utc().timestamp_millis() - minutes * 60_000)
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
        let minute = ms(&json!("2026-12-02T03:37:00Z"));
        assert!(minute.is_some());
        assert_eq!(ms(&json!("2026-12-02 03:37Z")), minute);
        assert_eq!(ms(&json!("2026-12-02 03:37")), minute);
    }

    #[test]
    fn the_long_form_for_people_reads_with_its_offset() {
        // 12:04 in UTC+2 is 10:04 UTC.
        let want = ms(&json!("2026-06-01T10:04:00Z"));
        assert!(want.is_some());
        assert_eq!(ms(&json!("Monday, Jun 1, 2026, 12:04 PM (UTC+2)")), want);
        assert_eq!(ms(&json!("Monday, Jun 1, 2026, 10:04 AM (UTC)")), want);
        assert_eq!(ms(&json!("Monday, Jun 1, 2026, 4:34 AM (UTC-5:30)")), want);
        assert_eq!(ms(&json!("Monday, Jun 1, 2026, 3:34 PM (UTC+0530)")), want);
        for bad in [
            "Monday, Jun 1, 2026, 12:04 PM",
            "Monday, Jun 1, 2026, 12:04 PM (UTC+99)",
            "Monday, Jun 41, 2026, 12:04 PM (UTC+2)",
            "Jun 1, 2026 (UTC+2)",
        ] {
            assert_eq!(ms(&json!(bad)), None, "{bad}");
        }
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
