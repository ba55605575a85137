//! Parsing the dates users type for `--since`, `--until` and `--before`:
//! RFC 3339, `YYYY-MM-DD` (local midnight), `YYYY-MM-DD HH:MM` (local),
//! `today`, `yesterday`, ages such as `90m`, `12h`, `7d`, `2w` or `3 days
//! ago`, and the periods a query's words name (`June 2024`, `May 3`, `in
//! 2024`, `last week`: the period's first day, local midnight).
//!
//! An age is a count of minutes, hours, days or weeks back from now, without
//! a sign, at most [`MAX_AGE_DAYS`]; every date lies in the years 1 to 9999.
//! Anything else is an error, never a date in the future or an overflow.

use chrono::{DateTime, Datelike, Local, NaiveDate, NaiveDateTime, TimeZone, Utc};

/// The longest age accepted, in days (100 years).
pub const MAX_AGE_DAYS: i64 = 36_525;
/// The earliest and latest years of a date.
const YEARS: std::ops::RangeInclusive<i32> = 1..=9999;

/// Parses `text` relative to `now`, returning ms since the epoch.
pub fn parse(text: &str, now: DateTime<Utc>) -> Result<i64, String> {
    let t = text.trim();
    let ms = parse_unchecked(t, now)?;
    match DateTime::from_timestamp_millis(ms) {
        Some(d) if YEARS.contains(&d.year()) => Ok(ms),
        _ => Err(out_of_range(t)),
    }
}

fn out_of_range(t: &str) -> String {
    format!("`{t}` is out of range: dates run from the year 1 to 9999")
}

fn parse_unchecked(t: &str, now: DateTime<Utc>) -> Result<i64, String> {
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
        if !YEARS.contains(&d.year()) {
            return Err(out_of_range(t));
        }
        return local_midnight(d).ok_or_else(|| format!("`{t}` does not exist in local time"));
    }
    for fmt in [
        "%Y-%m-%d %H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%dT%H:%M:%S",
    ] {
        if let Ok(n) = NaiveDateTime::parse_from_str(t, fmt) {
            if !YEARS.contains(&n.year()) {
                return Err(out_of_range(t));
            }
            return Local
                .from_local_datetime(&n)
                .earliest()
                .map(|l| l.timestamp_millis())
                .ok_or_else(|| format!("`{t}` does not exist in local time"));
        }
    }
    if let Some(age) = age_ms(t)? {
        return now
            .timestamp_millis()
            .checked_sub(age)
            .ok_or_else(|| out_of_range(t));
    }
    if let Some(age) = worded_age_ms(t)? {
        return now
            .timestamp_millis()
            .checked_sub(age)
            .ok_or_else(|| out_of_range(t));
    }
    // A phrase a query understands ("June 2024", "last week"): its first day.
    let today = now.with_timezone(&Local).date_naive();
    if let Some(day) = deja_recall::when::first_day(t, today) {
        return local_midnight(day).ok_or_else(|| format!("`{t}` does not exist in local time"));
    }
    // A date whose year has more than four digits (chrono reads some of them).
    if let Some((year, _)) = t.split_once('-') {
        if year.len() > 4 && year.bytes().all(|b| b.is_ascii_digit()) {
            return Err(out_of_range(t));
        }
    }
    Err(format!(
        "cannot read `{t}` as a date; use YYYY-MM-DD, YYYY-MM-DD HH:MM, RFC 3339, today, yesterday, an age like 12h, 7d, 2w or 3 days ago, or a period like June 2024 or last week"
    ))
}

/// Refuses a range that holds no date: `since` (the flag or argument
/// `since_name`) at or after `until`.
pub fn check_range(
    since: Option<i64>,
    until: Option<i64>,
    since_name: &str,
    until_name: &str,
) -> Result<(), String> {
    match (since, until) {
        (Some(s), Some(u)) if s >= u => {
            let day = |ms: i64| {
                DateTime::from_timestamp_millis(ms).map_or_else(
                    || ms.to_string(),
                    |d| d.with_timezone(&Local).format("%Y-%m-%d %H:%M").to_string(),
                )
            };
            Err(format!(
                "{since_name} ({}) is not before {until_name} ({}): no session can start in that range; swap them?",
                day(s),
                day(u)
            ))
        }
        _ => Ok(()),
    }
}

/// An age in words, `3 days ago`, `a week ago`, `2 hours ago` (a month is
/// 30 days, a year 365), in ms; `None` when `t` is not shaped like one.
fn worded_age_ms(t: &str) -> Result<Option<i64>, String> {
    let words: Vec<String> = t.split_whitespace().map(str::to_lowercase).collect();
    let [count, unit, ago] = words.as_slice() else {
        return Ok(None);
    };
    if ago != "ago" {
        return Ok(None);
    }
    let days_per = |u: &str| -> Option<(&'static str, i64)> {
        Some(match u.strip_suffix('s').unwrap_or(u) {
            "minute" => ("m", 1),
            "hour" => ("h", 1),
            "day" => ("d", 1),
            "week" => ("w", 1),
            "month" => ("d", 30),
            "year" => ("d", 365),
            _ => return None,
        })
    };
    let Some((short, times)) = days_per(unit) else {
        return Ok(None);
    };
    let n: u64 = match count.as_str() {
        "a" | "an" | "one" => 1,
        c if !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()) => c.parse().map_err(|_| {
            format!("`{t}` is too long an age: at most 100 years ({MAX_AGE_DAYS}d)")
        })?,
        _ => return Ok(None),
    };
    let n = n
        .checked_mul(times as u64)
        .ok_or_else(|| format!("`{t}` is too long an age: at most 100 years ({MAX_AGE_DAYS}d)"))?;
    age_ms(&format!("{n}{short}"))
        .map_err(|_| format!("`{t}` is too long an age: at most 100 years ({MAX_AGE_DAYS}d)"))
}

/// An age such as `90m`, `12h`, `7d`, `2w` in ms; `None` when `t` is not
/// shaped like one; an error for a signed or too long age.
fn age_ms(t: &str) -> Result<Option<i64>, String> {
    let Some(unit) = t.chars().last() else {
        return Ok(None);
    };
    let secs: i64 = match unit {
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 7 * 86_400,
        _ => return Ok(None),
    };
    let number = &t[..t.len() - unit.len_utf8()];
    let digits = number.trim_start_matches(['-', '+']);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(None);
    }
    if digits.len() != number.len() {
        return Err(format!(
            "`{t}`: an age has no sign; `{digits}{unit}` already means {digits}{unit} before now"
        ));
    }
    let max = MAX_AGE_DAYS * 86_400 / secs;
    let too_long = || format!("`{t}` is too long an age: at most 100 years ({MAX_AGE_DAYS}d)");
    let n: i64 = digits.parse().map_err(|_| too_long())?;
    if n > max {
        return Err(too_long());
    }
    Ok(Some(n * secs * 1000))
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
        assert_eq!(parse("2026-07-01", now).unwrap(), local(2026, 7, 1, 0, 0));
        assert_eq!(
            parse("2026-07-01 10:30", now).unwrap(),
            local(2026, 7, 1, 10, 30)
        );
        assert!(parse("yesterday", now).unwrap() < parse("today", now).unwrap());
        let e = parse("last tuesday", now).unwrap_err();
        assert!(
            e.contains("last tuesday") && e.contains("YYYY-MM-DD"),
            "{e}"
        );
        assert!(parse("9999999999999999w", now).is_err());
    }

    /// A local time, in ms since the epoch.
    fn local(year: i32, month: u32, day: u32, hour: u32, minute: u32) -> i64 {
        Local
            .with_ymd_and_hms(year, month, day, hour, minute, 0)
            .earliest()
            .unwrap()
            .timestamp_millis()
    }

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 7, 17, 12, 0, 0).unwrap()
    }

    #[test]
    fn the_phrases_a_query_understands_are_dates() {
        let now_ms = now().timestamp_millis();
        assert_eq!(parse("3 days ago", now()).unwrap(), now_ms - 3 * 86_400_000);
        assert_eq!(parse("a week ago", now()).unwrap(), now_ms - 7 * 86_400_000);
        assert_eq!(parse("2 Hours ago", now()).unwrap(), now_ms - 2 * 3_600_000);
        assert_eq!(parse("June 2024", now()).unwrap(), local(2024, 6, 1, 0, 0));
        assert_eq!(parse("in 2024", now()).unwrap(), local(2024, 1, 1, 0, 0));
        assert_eq!(parse("May 3", now()).unwrap(), local(2026, 5, 3, 0, 0));
        assert_eq!(parse("last week", now()).unwrap(), local(2026, 7, 3, 0, 0));
        let e = parse("200 years ago", now()).unwrap_err();
        assert!(e.contains("too long an age"), "{e}");
        for t in [
            "3 days",
            "days ago",
            "x days ago",
            "-3 days ago",
            "June and July",
        ] {
            assert!(parse(t, now()).is_err(), "{t}");
        }
    }

    #[test]
    fn an_inverted_range_is_refused() {
        let (may, april) = (
            parse("2026-05-01", now()).unwrap(),
            parse("2026-04-01", now()).unwrap(),
        );
        let e = check_range(Some(may), Some(april), "--since", "--until").unwrap_err();
        assert!(
            e.contains("--since (2026-05-01 00:00) is not before --until (2026-04-01 00:00)"),
            "{e}"
        );
        assert!(check_range(Some(may), Some(may), "--since", "--until").is_err());
        assert!(check_range(Some(april), Some(may), "--since", "--until").is_ok());
        assert!(check_range(Some(may), None, "--since", "--until").is_ok());
    }

    #[test]
    fn signed_ages_are_errors_not_future_dates() {
        for t in ["-7d", "+7d", "-0d", "--7d", "-90m"] {
            let e = parse(t, now()).unwrap_err();
            assert!(e.contains("no sign"), "{t}: {e}");
        }
        let e = parse("-7d", now()).unwrap_err();
        assert!(e.contains("`7d`"), "{e}");
        assert_eq!(parse("0d", now()).unwrap(), now().timestamp_millis());
        for t in ["d", "7", "7x", "7.5d", "1e3d", "7 d"] {
            assert!(parse(t, now()).is_err(), "{t}");
        }
    }

    #[test]
    fn absurd_ages_and_dates_are_errors() {
        for t in [
            "99999999999d",
            "99999999999999999999999999d",
            "9223372036854775807m",
            "36526d",
            "5219w",
        ] {
            let e = parse(t, now()).unwrap_err();
            assert!(e.contains("too long an age"), "{t}: {e}");
        }
        const DAY: i64 = 86_400_000;
        let now_ms = now().timestamp_millis();
        assert_eq!(parse("36525d", now()).unwrap(), now_ms - 36_525 * DAY);
        assert_eq!(parse("5217w", now()).unwrap(), now_ms - 5_217 * 7 * DAY);
        for t in [
            "300000-01-01",
            "200000-01-01",
            "10000-01-01",
            "10000-01-01 10:00",
            "262143-12-31",
            "0000-01-01",
            "0000-01-01T00:00:00Z",
        ] {
            let e = parse(t, now()).unwrap_err();
            assert!(e.contains("out of range"), "{t}: {e}");
        }
        assert_eq!(
            parse("9999-12-30", now()).unwrap(),
            local(9999, 12, 30, 0, 0)
        );
        assert_eq!(parse("0001-01-02", now()).unwrap(), local(1, 1, 2, 0, 0));
    }
}
