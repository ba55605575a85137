//! An activity calendar: one square per day, a column per week (Monday
//! first), shaded by the day's sessions, drawn on the server as inline SVG
//! (no script; colours come from the stylesheet, since the page's policy
//! allows no inline style). Each square's `<title>` gives the day's counts.

use std::collections::BTreeMap;

use chrono::{Datelike, Duration, NaiveDate};
use maud::{html, Markup};

use deja_app::recap::DayCount;

/// Most weeks drawn: a year and a bit; a longer period shows its end.
pub const MAX_WEEKS: i64 = 53;
/// A square's side and the step between squares, px.
const CELL: i64 = 11;
const STEP: i64 = 13;
/// Room for the weekday names on the left and the months on top, px.
const LEFT: i64 = 30;
const TOP: i64 = 16;
/// The legend's width, px.
const LEGEND: i64 = 180;

/// The calendar of `first` to `last` (both included; at most the last
/// [`MAX_WEEKS`] weeks), each day shaded by its sessions in `counts`.
pub fn calendar(
    counts: &BTreeMap<NaiveDate, DayCount>,
    first: NaiveDate,
    last: NaiveDate,
) -> Markup {
    let earliest = last - Duration::days(MAX_WEEKS * 7 - 1);
    let first = first.max(earliest).min(last);
    let monday = first - Duration::days(i64::from(first.weekday().num_days_from_monday()));
    let weeks = (last - monday).num_days() / 7 + 1;
    let most = counts
        .range(first..=last)
        .map(|(_, c)| c.sessions)
        .max()
        .unwrap_or(0);
    let days: Vec<NaiveDate> = first.iter_days().take_while(|d| *d <= last).collect();
    // Wide enough for the legend below a short period's few weeks.
    let width = (LEFT + weeks * STEP + 4).max(LEFT + LEGEND);
    let height = TOP + 7 * STEP + 18;
    let total: usize = counts.range(first..=last).map(|(_, c)| c.sessions).sum();
    let label = format!(
        "Sessions per day from {first} to {last}: {total} in all, at most {most} on one day"
    );
    html! {
        svg.calendar xmlns="http://www.w3.org/2000/svg" role="img" aria-label=(label)
            width=(width) height=(height) viewBox={ "0 0 " (width) " " (height) } {
            title { (label) }
            @for (row, name) in [(0, "Mon"), (2, "Wed"), (4, "Fri")] {
                text.weekday x="0" y=(TOP + row * STEP + CELL - 1) { (name) }
            }
            @for d in &days {
                @if d.day() == 1 || *d == first {
                    text.month x=(LEFT + column(monday, *d) * STEP) y=(TOP - 5) { (d.format("%b")) }
                }
            }
            @for d in &days {
                @let c = counts.get(d).copied().unwrap_or_default();
                rect class={ "day l" (level(c.sessions, most)) }
                    x=(LEFT + column(monday, *d) * STEP)
                    y=(TOP + i64::from(d.weekday().num_days_from_monday()) * STEP)
                    width=(CELL) height=(CELL) rx="2" {
                    title { (d) ": " (c.sessions) " session" @if c.sessions != 1 { "s" }
                        ", " (c.messages) " message" @if c.messages != 1 { "s" } }
                }
            }
            text.legend x=(LEFT) y=(height - 4) { "fewer" }
            @for l in 0..5 {
                rect class={ "l" (l) } x=(LEFT + 34 + l * STEP) y=(height - 4 - CELL + 1)
                    width=(CELL) height=(CELL) rx="2" {}
            }
            text.legend x=(LEFT + 34 + 5 * STEP + 3) y=(height - 4) { "more sessions" }
        }
    }
}

/// The week column of `day`, counted from the week of `monday`.
fn column(monday: NaiveDate, day: NaiveDate) -> i64 {
    (day - monday).num_days() / 7
}

/// The shade of a day with `n` sessions when the busiest has `most`: 0
/// for none, else 1 to 4 by quarters of `most`.
fn level(n: usize, most: usize) -> usize {
    if n == 0 || most == 0 {
        0
    } else {
        (4 * n).div_ceil(most).clamp(1, 4)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn day(d: &str) -> NaiveDate {
        NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn each_day_is_a_square_in_its_weeks_column_shaded_by_quarters() {
        let mut counts = BTreeMap::new();
        counts.insert(
            day("2026-07-10"),
            DayCount {
                sessions: 4,
                messages: 9,
            },
        );
        counts.insert(
            day("2026-07-13"),
            DayCount {
                sessions: 1,
                messages: 1,
            },
        );
        let svg = calendar(&counts, day("2026-07-10"), day("2026-07-16")).into_string();
        // Seven days, and the five squares of the legend.
        assert_eq!(svg.matches("<rect").count(), 12, "{svg}");
        assert_eq!(svg.matches("</rect>").count(), 12, "{svg}");
        // Friday 10 July: the week of Monday 6 July, fifth row, the darkest.
        assert!(svg.contains(&format!(
            "<rect class=\"day l4\" x=\"{LEFT}\" y=\"{}\"",
            TOP + 4 * STEP
        )));
        assert!(svg.contains("<title>2026-07-10: 4 sessions, 9 messages</title>"));
        // Monday 13 July: the next column, first row, a quarter of the busiest.
        assert!(svg.contains(&format!(
            "<rect class=\"day l1\" x=\"{}\" y=\"{TOP}\"",
            LEFT + STEP
        )));
        assert!(svg.contains("<title>2026-07-13: 1 session, 1 message</title>"));
        assert!(svg.contains("<title>2026-07-14: 0 sessions, 0 messages</title>"));
        assert!(svg.contains(">Jul</text>"));
        // Two weeks are narrower than the legend: the legend sets the width.
        assert!(
            svg.contains(&format!("width=\"{}\"", LEFT + LEGEND)),
            "{svg}"
        );
    }

    #[test]
    fn a_long_period_shows_its_last_weeks() {
        let svg = calendar(&BTreeMap::new(), day("2000-01-01"), day("2026-07-16")).into_string();
        let squares = svg.matches("class=\"day ").count() as i64;
        assert_eq!(squares, MAX_WEEKS * 7);
        assert!(svg.contains("<title>2026-07-16: 0 sessions"));
        assert!(!svg.contains("2000-01-01"));
    }

    #[test]
    fn shades_run_from_none_to_the_busiest() {
        assert_eq!(level(0, 8), 0);
        assert_eq!(level(1, 8), 1);
        assert_eq!(level(2, 8), 1);
        assert_eq!(level(3, 8), 2);
        assert_eq!(level(8, 8), 4);
        assert_eq!(level(1, 1), 4);
    }
}
