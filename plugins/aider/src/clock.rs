//! The header's local time to UTC. The zone is the machine's (chrono's
//! `Local`, which honours `TZ`) unless the plugin config sets `timezone`: an
//! IANA name (`Europe/Berlin`), `UTC`, or a fixed offset (`+02:00`, `-0530`).
//! A local time that falls twice (DST fall-back) takes the earlier instant; one
//! that never happened (spring-forward) is read with the offset in force just
//! before the gap, which moves it forward by the gap's length (02:30 → 03:30).

use chrono::{FixedOffset, Local, LocalResult, NaiveDateTime, Offset, TimeDelta, TimeZone};
use chrono_tz::Tz;
use deja_plugin_api::PluginError;

/// The config key naming the zone.
pub(crate) const TIMEZONE_KEY: &str = "timezone";

/// The longest a gap in local time is searched back for its start.
const MAX_GAP_MINUTES: i64 = 48 * 60;

/// The zone the history's local times are read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Zone {
    /// The machine's zone.
    Local,
    /// An IANA zone.
    Named(Tz),
    /// A fixed offset from UTC.
    Fixed(FixedOffset),
}

impl Zone {
    /// The zone for the config's `timezone` setting (`None` or empty: the machine's).
    pub(crate) fn from_setting(setting: Option<&str>) -> Result<Zone, PluginError> {
        let Some(text) = setting.map(str::trim).filter(|t| !t.is_empty()) else {
            return Ok(Zone::Local);
        };
        if let Some(offset) = fixed_offset(text) {
            return Ok(Zone::Fixed(offset));
        }
        if text.eq_ignore_ascii_case("utc") {
            return Ok(Zone::Named(Tz::UTC));
        }
        text.parse::<Tz>().map(Zone::Named).map_err(|_| {
            PluginError::config(format!(
                "invalid `{TIMEZONE_KEY}` `{text}`: expected an IANA zone name such as \
                 `Europe/Berlin`, `UTC`, or an offset such as `+02:00`"
            ))
        })
    }

    /// Milliseconds since the epoch (UTC) of local time `local` in this zone.
    pub(crate) fn utc_ms(self, local: NaiveDateTime) -> i64 {
        match self {
            Zone::Local => resolve(&Local, local),
            Zone::Named(tz) => resolve(&tz, local),
            Zone::Fixed(offset) => resolve(&offset, local),
        }
    }
}

/// Parses `+HH:MM`, `-HHMM` or `+HH`.
fn fixed_offset(text: &str) -> Option<FixedOffset> {
    let sign = match text.chars().next()? {
        '+' => 1,
        '-' => -1,
        _ => return None,
    };
    let digits: String = text.get(1..)?.chars().filter(|&c| c != ':').collect();
    if !digits.chars().all(|c| c.is_ascii_digit()) || !matches!(digits.len(), 2 | 4) {
        return None;
    }
    let hours: i32 = digits.get(..2)?.parse().ok()?;
    let minutes: i32 = digits
        .get(2..)
        .filter(|m| !m.is_empty())
        .map_or(Some(0), |m| m.parse().ok())?;
    if minutes >= 60 {
        return None;
    }
    FixedOffset::east_opt(sign * (hours * 3600 + minutes * 60))
}

fn resolve<Z: TimeZone>(zone: &Z, local: NaiveDateTime) -> i64 {
    match zone.from_local_datetime(&local) {
        LocalResult::Single(t) => t.timestamp_millis(),
        LocalResult::Ambiguous(a, b) => a.timestamp_millis().min(b.timestamp_millis()),
        LocalResult::None => {
            let offset = TimeDelta::seconds(i64::from(offset_before_gap(zone, local).unwrap_or(0)));
            local
                .checked_sub_signed(offset)
                .unwrap_or(local)
                .and_utc()
                .timestamp_millis()
        }
    }
}

/// The UTC offset (seconds) in force just before the gap that `local` falls in.
fn offset_before_gap<Z: TimeZone>(zone: &Z, local: NaiveDateTime) -> Option<i32> {
    (1..=MAX_GAP_MINUTES).find_map(|minutes| {
        let earlier = local.checked_sub_signed(TimeDelta::minutes(minutes))?;
        let time = zone.from_local_datetime(&earlier).earliest()?;
        Some(time.offset().fix().local_minus_utc())
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap()
    }

    fn utc(s: &str) -> i64 {
        at(s).and_utc().timestamp_millis()
    }

    fn zone(s: &str) -> Zone {
        Zone::from_setting(Some(s)).unwrap()
    }

    #[test]
    fn settings() {
        assert_eq!(Zone::from_setting(None).unwrap(), Zone::Local);
        assert_eq!(Zone::from_setting(Some("  ")).unwrap(), Zone::Local);
        assert_eq!(zone("UTC"), Zone::Named(Tz::UTC));
        assert_eq!(zone("Europe/Berlin"), Zone::Named(Tz::Europe__Berlin));
        assert_eq!(
            zone("+02:00"),
            Zone::Fixed(FixedOffset::east_opt(7200).unwrap())
        );
        assert_eq!(
            zone("-0530"),
            Zone::Fixed(FixedOffset::west_opt(19800).unwrap())
        );
        assert_eq!(
            zone("+09"),
            Zone::Fixed(FixedOffset::east_opt(9 * 3600).unwrap())
        );
        for bad in ["Mars/Olympus", "+2", "+02:75", "+99:00", "UTC+2"] {
            let err = Zone::from_setting(Some(bad)).unwrap_err();
            assert_eq!(err.kind, deja_plugin_api::ErrorKind::Config, "{bad}");
            assert!(err.message.contains("`timezone`"), "{}", err.message);
        }
    }

    #[test]
    fn conversions() {
        let t = at("2026-07-17 09:00:00");
        assert_eq!(zone("UTC").utc_ms(t), utc("2026-07-17 09:00:00"));
        assert_eq!(zone("+02:00").utc_ms(t), utc("2026-07-17 07:00:00"));
        assert_eq!(zone("Europe/Berlin").utc_ms(t), utc("2026-07-17 07:00:00"));
        assert_eq!(
            zone("America/New_York").utc_ms(t),
            utc("2026-07-17 13:00:00")
        );
        assert_eq!(
            zone("Europe/Berlin").utc_ms(at("2026-01-17 09:00:00")),
            utc("2026-01-17 08:00:00")
        );
    }

    #[test]
    fn fall_back_takes_the_earlier_instant() {
        // Berlin leaves summer time on 2026-10-25 at 03:00 CEST -> 02:00 CET.
        let t = at("2026-10-25 02:30:00");
        assert_eq!(zone("Europe/Berlin").utc_ms(t), utc("2026-10-25 00:30:00"));
    }

    #[test]
    fn extreme_times_do_not_panic() {
        for zone in [
            Zone::Local,
            zone("Europe/Berlin"),
            zone("-12:00"),
            zone("+14:00"),
        ] {
            for time in [NaiveDateTime::MIN, NaiveDateTime::MAX] {
                let _ = zone.utc_ms(time);
            }
        }
        let leap = NaiveDateTime::parse_from_str("2026-06-30 23:59:60", "%Y-%m-%d %H:%M:%S");
        if let Ok(leap) = leap {
            let _ = zone("Europe/Berlin").utc_ms(leap);
        }
    }

    #[test]
    fn spring_forward_shifts_forward() {
        // Berlin skips 02:00-03:00 on 2026-03-29; 02:30 is read as 03:30 CEST.
        let t = at("2026-03-29 02:30:00");
        assert_eq!(zone("Europe/Berlin").utc_ms(t), utc("2026-03-29 01:30:00"));
        assert_eq!(
            zone("Europe/Berlin").utc_ms(at("2026-03-29 03:30:00")),
            utc("2026-03-29 01:30:00")
        );
    }
}
