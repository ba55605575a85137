//! The period a recap covers: `--since` and `--until` as `deja recall`
//! reads them ([`crate::dates`]), by default the last seven days up to now,
//! and the local day an instant falls on.

use chrono::{DateTime, Local, NaiveDate, TimeZone, Utc};

/// The default length of a period, in days.
pub const DEFAULT_DAYS: i64 = 7;

/// From `since` (included) to `until` (excluded), ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    /// The first instant, ms.
    pub since: i64,
    /// The instant after the last, ms.
    pub until: i64,
}

impl Period {
    /// The period `since` and `until` name, relative to `now`: either left
    /// out is seven days before `until`, or now. An error names the flag.
    pub fn parse(
        since: Option<&str>,
        until: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Period, String> {
        Period::parse_named(since, until, now, ["--since", "--until"])
    }

    /// As [`Period::parse`], an error naming the argument as `names` (the
    /// names of `since` and `until`) spell it.
    pub fn parse_named(
        since: Option<&str>,
        until: Option<&str>,
        now: DateTime<Utc>,
        names: [&str; 2],
    ) -> Result<Period, String> {
        let date = |text: Option<&str>, flag: &str| {
            text.map(|t| crate::dates::parse(t, now).map_err(|e| format!("{flag}: {e}")))
                .transpose()
        };
        let until = date(until, names[1])?.unwrap_or_else(|| now.timestamp_millis());
        let since = match date(since, names[0])? {
            Some(s) => s,
            None => until.saturating_sub(DEFAULT_DAYS * 24 * 60 * 60 * 1000),
        };
        crate::dates::check_range(Some(since), Some(until), names[0], names[1])?;
        Ok(Period { since, until })
    }

    /// Whether `ms` lies in it.
    pub fn holds(&self, ms: i64) -> bool {
        (self.since..self.until).contains(&ms)
    }

    /// Its first and last local days.
    pub fn days(&self) -> Option<(NaiveDate, NaiveDate)> {
        Some((
            local_day(self.since)?,
            local_day(self.until.saturating_sub(1))?,
        ))
    }
}

/// The local day `ms` falls on.
pub fn local_day(ms: i64) -> Option<NaiveDate> {
    let t = Utc.timestamp_millis_opt(ms).single()?;
    Some(DateTime::<Local>::from(t).date_naive())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-07-20T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn the_default_is_the_last_seven_days() {
        let p = Period::parse(None, None, now()).unwrap();
        assert_eq!(p.until, now().timestamp_millis());
        assert_eq!(p.until - p.since, 7 * 86_400_000);
        let p = Period::parse(None, Some("2026-07-10T00:00:00Z"), now()).unwrap();
        assert_eq!(crate::output::rfc3339(p.since), "2026-07-03T00:00:00Z");
        let p = Period::parse(Some("2d"), None, now()).unwrap();
        assert_eq!(p.until - p.since, 2 * 86_400_000);
        assert!(p.holds(p.since) && !p.holds(p.until));
    }

    #[test]
    fn bad_dates_and_empty_ranges_name_the_flag() {
        let e = Period::parse(Some("someday"), None, now()).unwrap_err();
        assert!(e.starts_with("--since: cannot read `someday`"), "{e}");
        let e = Period::parse(None, Some("-3d"), now()).unwrap_err();
        assert!(e.starts_with("--until: "), "{e}");
        let e = Period::parse(Some("2026-07-10"), Some("2026-07-01"), now()).unwrap_err();
        assert!(e.contains("is not before --until"), "{e}");
    }
}
