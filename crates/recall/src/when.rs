//! Dates mentioned in a query ("in June", "on May 23, 2023", "in 2024",
//! "October 13", "2024-03-02", "last week", "3 days ago") become soft hints:
//! sessions held then rank a little higher. They never filter anything out
//! (`--since`/`--until` do that). Only dates a person means count: a bare
//! four-digit number is a year only after a word that introduces a time ("in
//! 2024", "since 2019"), so "port 2025" or "error 2019" are not dates.

use std::collections::HashMap;

use chrono::{Datelike, Local, NaiveDate, TimeZone};
use regex::Regex;

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

fn month_of(word: &str) -> Option<u32> {
    const SHORT: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let w = word.to_lowercase();
    let w = if w == "sept" { "sep".to_string() } else { w };
    MONTHS
        .iter()
        .position(|m| *m == w)
        .or_else(|| SHORT.iter().position(|m| *m == w))
        .map(|i| i as u32 + 1)
}

/// A period a query mentions: dates from `from` (inclusive) to `to` (exclusive),
/// any year when `year` is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hint {
    /// Year, when given.
    pub year: Option<i32>,
    /// Month, when given.
    pub month: Option<u32>,
    /// Day, when given.
    pub day: Option<u32>,
    /// A span of days (from inclusive, to exclusive) for relative dates
    /// ("last week"); year, month and day are then `None`.
    pub span: Option<(NaiveDate, NaiveDate)>,
}

fn regexes() -> &'static [Regex; 6] {
    static R: std::sync::OnceLock<[Regex; 6]> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        let m = "(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|apr|jun|jul|aug|sept|sep|oct|nov|dec)";
        // Constant patterns, exercised by the tests below.
        #[allow(clippy::expect_used)]
        let build = |p: &str| Regex::new(p).expect("valid date pattern");
        [
            // May 23, 2023 / May 23 2023 / May 23
            build(&format!(r"(?i)\b{m}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?")),
            // 23 May, 2023 / 23 May
            build(&format!(r"(?i)\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{m}\b(?:,?\s+(\d{{4}}))?")),
            // May 2023 / in May
            build(&format!(r"(?i)\b{m}\b(?:,?\s+(\d{{4}}))?")),
            // in 2023 / since 2019 / back in 2021 / early 2022: a year only
            // after a word that introduces a time.
            build(r"(?i)\b(?:in|during|since|from|until|till|through|before|after|early|late|mid|year)[\s-]+(19[89]\d|20\d\d)\b"),
            // 2024-03-02 / 2024/03/02
            build(r"\b(19[89]\d|20\d\d)[-/](\d{1,2})[-/](\d{1,2})\b"),
            // yesterday / today / last week / this month / 3 days ago / a week ago
            build(r"(?i)\b(?:(yesterday|today)|(last|this|past)\s+(week|month|year)|(\d{1,3}|a|an|one|two|three|four|five|six)\s+(day|week|month)s?\s+ago)\b"),
        ]
    })
}

/// The periods `query` mentions, most precise first, relative ones counted
/// from today (local time); months and days that do not exist are ignored.
pub fn hints(query: &str) -> Vec<Hint> {
    hints_at(query, Local::now().date_naive())
}

fn count_word(w: &str) -> Option<i64> {
    match w.to_lowercase().as_str() {
        "a" | "an" | "one" => Some(1),
        "two" => Some(2),
        "three" => Some(3),
        "four" => Some(4),
        "five" => Some(5),
        "six" => Some(6),
        n => n.parse().ok(),
    }
}

/// The span a relative date names, seen from `today`.
fn relative(c: &regex::Captures<'_>, today: NaiveDate) -> Option<(NaiveDate, NaiveDate)> {
    let day = chrono::Duration::days;
    let tomorrow = today.checked_add_signed(day(1))?;
    if let Some(w) = c.get(1) {
        return if w.as_str().eq_ignore_ascii_case("today") {
            Some((today, tomorrow))
        } else {
            Some((today.checked_sub_signed(day(1))?, today))
        };
    }
    if let (Some(which), Some(unit)) = (c.get(2), c.get(3)) {
        let this = !which.as_str().eq_ignore_ascii_case("last");
        let len = match unit.as_str().to_lowercase().as_str() {
            "week" => 7,
            "month" => 31,
            _ => 366,
        };
        // "this week": the last 7 days up to today; "last week": the 7
        // before those, widened to the whole 14 (people round loosely).
        let back = if this { len } else { 2 * len };
        return Some((today.checked_sub_signed(day(back))?, tomorrow));
    }
    if let (Some(n), Some(unit)) = (c.get(4), c.get(5)) {
        let n = count_word(n.as_str())?;
        let per = match unit.as_str().to_lowercase().as_str() {
            "day" => 1,
            "week" => 7,
            _ => 30,
        };
        let center = today.checked_sub_signed(day(n.checked_mul(per)?))?;
        // Give or take a third of the distance, at least a day.
        let slack = ((n * per) / 3).max(1);
        return Some((
            center.checked_sub_signed(day(slack))?,
            center.checked_add_signed(day(slack + 1))?,
        ));
    }
    None
}

/// [`hints`], with relative dates counted from `today`.
pub fn hints_at(query: &str, today: NaiveDate) -> Vec<Hint> {
    let [md, dm, month, year, iso, rel] = regexes();
    let mut out = Vec::new();
    let mut used: Vec<(usize, usize)> = Vec::new();
    let overlaps =
        |used: &[(usize, usize)], a: usize, b: usize| used.iter().any(|&(x, y)| a < y && x < b);
    for c in iso.captures_iter(query) {
        let (Some(all), Some(y), Some(m), Some(d)) = (c.get(0), c.get(1), c.get(2), c.get(3))
        else {
            continue;
        };
        let (Ok(y), Ok(m), Ok(d)) = (
            y.as_str().parse::<i32>(),
            m.as_str().parse::<u32>(),
            d.as_str().parse::<u32>(),
        ) else {
            continue;
        };
        if NaiveDate::from_ymd_opt(y, m, d).is_some() {
            out.push(Hint {
                year: Some(y),
                month: Some(m),
                day: Some(d),
                span: None,
            });
            used.push((all.start(), all.end()));
        }
    }
    for c in rel.captures_iter(query) {
        let Some(all) = c.get(0) else { continue };
        if let Some(span) = relative(&c, today) {
            out.push(Hint {
                span: Some(span),
                ..Hint::default()
            });
            used.push((all.start(), all.end()));
        }
    }
    for c in md.captures_iter(query) {
        let (Some(all), Some(mon), Some(day)) = (c.get(0), c.get(1), c.get(2)) else {
            continue;
        };
        let (Some(mo), Ok(d)) = (month_of(mon.as_str()), day.as_str().parse::<u32>()) else {
            continue;
        };
        let y = c.get(3).and_then(|y| y.as_str().parse().ok());
        if (1..=31).contains(&d) {
            out.push(Hint {
                year: y,
                month: Some(mo),
                day: Some(d),
                span: None,
            });
            used.push((all.start(), all.end()));
        }
    }
    for c in dm.captures_iter(query) {
        let (Some(all), Some(day), Some(mon)) = (c.get(0), c.get(1), c.get(2)) else {
            continue;
        };
        if overlaps(&used, all.start(), all.end()) {
            continue;
        }
        let (Some(mo), Ok(d)) = (month_of(mon.as_str()), day.as_str().parse::<u32>()) else {
            continue;
        };
        let y = c.get(3).and_then(|y| y.as_str().parse().ok());
        if (1..=31).contains(&d) {
            out.push(Hint {
                year: y,
                month: Some(mo),
                day: Some(d),
                span: None,
            });
            used.push((all.start(), all.end()));
        }
    }
    for c in month.captures_iter(query) {
        let (Some(all), Some(mon)) = (c.get(0), c.get(1)) else {
            continue;
        };
        if overlaps(&used, all.start(), all.end()) {
            continue;
        }
        let word = mon.as_str();
        // "may" is usually the verb, unless a year follows.
        if word.eq_ignore_ascii_case("may") && c.get(2).is_none() {
            continue;
        }
        let Some(mo) = month_of(word) else { continue };
        let y = c.get(2).and_then(|y| y.as_str().parse().ok());
        out.push(Hint {
            year: y,
            month: Some(mo),
            day: None,
            span: None,
        });
        used.push((all.start(), all.end()));
    }
    for c in year.captures_iter(query) {
        let (Some(all), Some(y)) = (c.get(0), c.get(1)) else {
            continue;
        };
        if overlaps(&used, y.start(), y.end()) || overlaps(&used, all.start(), all.end()) {
            continue;
        }
        if let Ok(y) = y.as_str().parse() {
            out.push(Hint {
                year: Some(y),
                ..Hint::default()
            });
        }
    }
    out
}

/// How well a date matches the hints: 1 for a hinted day (or the week after
/// it, at half weight: events are often told a few days later), 1 for a
/// hinted month, 0.5 for a hinted year, 0 otherwise; the best over all hints.
pub fn affinity(date: NaiveDate, hints: &[Hint]) -> f64 {
    let mut best: f64 = 0.0;
    for h in hints {
        if let Some((from, to)) = h.span {
            if from <= date && date < to {
                best = best.max(1.0);
            }
            continue;
        }
        if h.year.is_some_and(|y| y != date.year()) && h.day.is_none() {
            continue;
        }
        let score = match (h.month, h.day) {
            (Some(m), Some(d)) => {
                let year = h.year.unwrap_or(date.year());
                match NaiveDate::from_ymd_opt(year, m, d) {
                    Some(day) => {
                        let delta = (date - day).num_days();
                        if delta == 0 {
                            1.0
                        } else if (1..8).contains(&delta) {
                            0.5
                        } else {
                            0.0
                        }
                    }
                    None => 0.0,
                }
            }
            (Some(m), None) if m == date.month() => 1.0,
            (None, None) if h.year == Some(date.year()) => 0.5,
            _ => 0.0,
        };
        best = best.max(score);
    }
    best
}

/// Affinity of each session (row → start in ms) to `hints`, using local dates;
/// sessions with none are left out.
pub fn by_session(started: &HashMap<i64, i64>, hints: &[Hint]) -> HashMap<i64, f64> {
    if hints.is_empty() {
        return HashMap::new();
    }
    started
        .iter()
        .filter_map(|(session, ms)| {
            let t = Local.timestamp_millis_opt(*ms).single()?;
            let a = affinity(t.date_naive(), hints);
            (a > 0.0).then_some((*session, a))
        })
        .collect()
}

/// The first day of the one period `text` names whole ("June 2024", "May
/// 23", "in 2024", "last week"), read as a query's dates are and seen from
/// `today`: a month or day without a year is its latest one not after
/// today. `None` when `text` is anything more or less than one such phrase.
pub fn first_day(text: &str, today: NaiveDate) -> Option<NaiveDate> {
    let t = text.trim();
    let whole = regexes().iter().any(|r| {
        r.find(t)
            .is_some_and(|m| m.start() == 0 && m.end() == t.len())
    });
    if !whole {
        return None;
    }
    let hint = hints_at(t, today).into_iter().next()?;
    if let Some((from, _)) = hint.span {
        return Some(from);
    }
    let (month, day) = (hint.month.unwrap_or(1), hint.day.unwrap_or(1));
    match hint.year {
        Some(y) => NaiveDate::from_ymd_opt(y, month, day),
        None => [today.year(), today.year() - 1]
            .into_iter()
            .filter_map(|y| NaiveDate::from_ymd_opt(y, month, day))
            .find(|d| *d <= today),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    fn day(year: Option<i32>, month: u32, day: u32) -> Hint {
        Hint {
            year,
            month: Some(month),
            day: Some(day),
            span: None,
        }
    }

    fn month(year: Option<i32>, month: u32) -> Hint {
        Hint {
            year,
            month: Some(month),
            ..Hint::default()
        }
    }

    fn year(y: i32) -> Hint {
        Hint {
            year: Some(y),
            ..Hint::default()
        }
    }

    #[test]
    fn finds_dates_in_queries() {
        assert_eq!(
            hints("What did Gina find on 1 February, 2023?"),
            vec![day(Some(2023), 2, 1)]
        );
        assert_eq!(
            hints("accepted for on May 23, 2023"),
            vec![day(Some(2023), 5, 23)]
        );
        assert_eq!(
            hints("When did Melanie go camping in June?"),
            vec![month(None, 6)]
        );
        assert_eq!(
            hints("the setback in October 2023"),
            vec![month(Some(2023), 10)]
        );
        assert_eq!(hints("the migration in 2024"), vec![year(2024)]);
        assert_eq!(hints("what broke since 2019"), vec![year(2019)]);
        assert_eq!(
            hints("the deploy on 2024-03-02"),
            vec![day(Some(2024), 3, 2)]
        );
        assert_eq!(hints("the deploy on 2024/3/2"), vec![day(Some(2024), 3, 2)]);
        assert!(hints("we may need a retry").is_empty());
        assert!(hints("port 8080 and 12 workers").is_empty());
    }

    #[test]
    fn numbers_that_are_not_dates_are_not_hints() {
        for q in [
            "port 2025 is taken",
            "error 2019 on startup",
            "PostgreSQL 2008 compatibility",
            "issue #2024 in the tracker",
            "listen on 2000",
            "the 2024-13-45 build tag",
            "build 2023.1.4",
            "a list of 2000 items",
            "divide by 2024",
        ] {
            assert!(hints(q).is_empty(), "{q}: {:?}", hints(q));
        }
    }

    #[test]
    fn relative_dates_are_spans_from_today() {
        let today = d(2026, 12, 1);
        let span = |q: &str| {
            let h = hints_at(q, today);
            assert_eq!(h.len(), 1, "{q}: {h:?}");
            h[0].span.unwrap()
        };
        assert_eq!(span("the fix from yesterday"), (d(2026, 11, 30), today));
        assert_eq!(span("what we did today"), (today, d(2026, 12, 2)));
        assert_eq!(
            span("that bug last week"),
            (d(2026, 11, 17), d(2026, 12, 2))
        );
        let (from, to) = span("the cache thing 3 days ago");
        assert!(from <= d(2026, 11, 28) && d(2026, 11, 28) < to);
        assert!(to <= today);
        let (from, _) = span("two weeks ago");
        assert!(from <= d(2026, 11, 17));
        // Absurd numbers never overflow: they simply name no date.
        assert!(hints_at("999 months ago", d(1970, 1, 1)).len() <= 1);
        let last_week = hints_at("last week", today);
        assert_eq!(affinity(d(2026, 11, 25), &last_week), 1.0);
        assert_eq!(affinity(d(2026, 10, 1), &last_week), 0.0);
    }

    #[test]
    fn affinity_prefers_the_named_period() {
        let june = hints("camping in June");
        assert_eq!(affinity(d(2023, 6, 30), &june), 1.0);
        assert_eq!(affinity(d(2023, 7, 1), &june), 0.0);
        let day = hints("on May 23, 2023");
        assert_eq!(affinity(d(2023, 5, 23), &day), 1.0);
        assert_eq!(affinity(d(2023, 5, 26), &day), 0.5);
        assert_eq!(affinity(d(2023, 5, 22), &day), 0.0);
        assert_eq!(affinity(d(2024, 5, 23), &day), 0.0);
        let year = hints("in 2023");
        assert_eq!(affinity(d(2023, 1, 9), &year), 0.5);
    }

    #[test]
    fn a_whole_phrase_names_the_first_day_of_its_period() {
        let today = d(2026, 3, 10);
        assert_eq!(first_day("June 2024", today), Some(d(2024, 6, 1)));
        assert_eq!(first_day("May 23, 2023", today), Some(d(2023, 5, 23)));
        assert_eq!(first_day("in 2024", today), Some(d(2024, 1, 1)));
        assert_eq!(first_day("2024-03-02", today), Some(d(2024, 3, 2)));
        // Without a year: the latest one not after today.
        assert_eq!(first_day("June", today), Some(d(2025, 6, 1)));
        assert_eq!(first_day("March 2", today), Some(d(2026, 3, 2)));
        assert_eq!(first_day("yesterday", today), Some(d(2026, 3, 9)));
        assert_eq!(first_day("this week", today), Some(d(2026, 3, 3)));
        for t in ["", "soon", "port 2025", "June and more", "may", "2024"] {
            assert_eq!(first_day(t, today), None, "{t}");
        }
    }
}
