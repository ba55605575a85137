//! Parsing the dates users type for `--since`, `--until` and `--before`:
//! RFC 3339, `YYYY-MM-DD` (local midnight), `YYYY-MM-DD HH:MM` (local),
//! `today`, `yesterday`, and ages such as `90m`, `12h`, `7d`, `2w`.

use chrono::{DateTime, Local, NaiveDate, NaiveDateTime, TimeZone, Utc};

/// Parses `text` relative to `now`, returning ms since the epoch.
pub fn parse(text: &str, now: DateTime<Utc>) -> Result<i64, String> {
    let t = text.trim();
    if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        return Ok(dt.timestamp_millis());
    }
    let local_midnight = |d: NaiveDate| -> Option<i64> {
        d.and_hms_opt(0, 0, 0)
            .and_then(|n| Local.from_local_datetime(&n).earliest())
            .map(|l| l.timestamp_millis())
    };
    match t {
        "today" => {
            return local_midnight(now.with_timezone(&Local).date_naive())
                .ok_or_else(|| format!("cannot place `{t}` in local time"))
        }
        "yesterday" => {
            let d = now.with_timezone(&Local).date_naive().pred_opt();
            return d
                .and_then(local_midnight)
                .ok_or_else(|| format!("cannot place `{t}` in local time"));
        }
        _ => {}
    }
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return local_midnight(d).ok_or_else(|| format!("`{t}` does not exist in local time"));
    }
    for fmt in [
        "%Y-%m-%d %H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%dT%H:%M:%S",
    ] {
        if let Ok(n) = NaiveDateTime::parse_from_str(t, fmt) {
            return Local
                .from_local_datetime(&n)
                .earliest()
                .map(|l| l.timestamp_millis())
                .ok_or_else(|| format!("`{t}` does not exist in local time"));
        }
    }
    if let Some(ms) = age_ms(t) {
        return Ok(now.timestamp_millis() - ms);
    }
    Err(format!(
        "cannot read `{t}` as a date; use YYYY-MM-DD, YYYY-MM-DD HH:MM, RFC 3339, today, yesterday, or an age like 12h, 7d, 2w"
    ))
}

fn age_ms(t: &str) -> Option<i64> {
    let unit = t.chars().last()?;
    let n: i64 = t[..t.len() - unit.len_utf8()].parse().ok()?;
    let secs = match unit {
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 7 * 86_400,
        _ => return None,
    };
    n.checked_mul(secs * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let now = Utc.with_ymd_and_hms(2026, 7, 17, 12, 0, 0).unwrap();
        assert_eq!(
            parse("2026-07-17T09:00:00Z", now).unwrap(),
            Utc.with_ymd_and_hms(2026, 7, 17, 9, 0, 0)
                .unwrap()
                .timestamp_millis()
        );
        assert_eq!(
            parse("7d", now).unwrap(),
            now.timestamp_millis() - 7 * 86_400_000
        );
        assert_eq!(
            parse("90m", now).unwrap(),
            now.timestamp_millis() - 90 * 60_000
        );
        assert!(parse("2026-07-01", now).is_ok());
        assert!(parse("2026-07-01 10:30", now).is_ok());
        assert!(parse("yesterday", now).unwrap() < parse("today", now).unwrap());
        let e = parse("last tuesday", now).unwrap_err();
        assert!(
            e.contains("last tuesday") && e.contains("YYYY-MM-DD"),
            "{e}"
        );
        assert!(parse("9999999999999999w", now).is_err());
    }
}
