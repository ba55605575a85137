//! Dates mentioned in a query ("in June", "on May 23, 2023", "in 2024",
//! "October 13") become soft hints: sessions held then rank a little higher.
//! They never filter anything out (`--since`/`--until` do that).

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hint {
    /// Year, when given.
    pub year: Option<i32>,
    /// Month, when given.
    pub month: Option<u32>,
    /// Day, when given.
    pub day: Option<u32>,
}

fn regexes() -> &'static [Regex; 4] {
    static R: std::sync::OnceLock<[Regex; 4]> = std::sync::OnceLock::new();
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
            // 2023
            build(r"\b(19[89]\d|20\d\d)\b"),
        ]
    })
}

/// The periods `query` mentions, most precise first; months and days that do
/// not exist are ignored.
pub fn hints(query: &str) -> Vec<Hint> {
    let [md, dm, month, year] = regexes();
    let mut out = Vec::new();
    let mut used: Vec<(usize, usize)> = Vec::new();
    let overlaps =
        |used: &[(usize, usize)], a: usize, b: usize| used.iter().any(|&(x, y)| a < y && x < b);
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
        });
        used.push((all.start(), all.end()));
    }
    for c in year.captures_iter(query) {
        let Some(all) = c.get(0) else { continue };
        if overlaps(&used, all.start(), all.end()) {
            continue;
        }
        if let Ok(y) = all.as_str().parse() {
            out.push(Hint {
                year: Some(y),
                month: None,
                day: None,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn finds_dates_in_queries() {
        assert_eq!(
            hints("What did Gina find on 1 February, 2023?"),
            vec![Hint {
                year: Some(2023),
                month: Some(2),
                day: Some(1)
            }]
        );
        assert_eq!(
            hints("accepted for on May 23, 2023"),
            vec![Hint {
                year: Some(2023),
                month: Some(5),
                day: Some(23)
            }]
        );
        assert_eq!(
            hints("When did Melanie go camping in June?"),
            vec![Hint {
                year: None,
                month: Some(6),
                day: None
            }]
        );
        assert_eq!(
            hints("the setback in October 2023"),
            vec![Hint {
                year: Some(2023),
                month: Some(10),
                day: None
            }]
        );
        assert_eq!(
            hints("the migration in 2024"),
            vec![Hint {
                year: Some(2024),
                month: None,
                day: None
            }]
        );
        assert!(hints("we may need a retry").is_empty());
        assert!(hints("port 8080 and 12 workers").is_empty());
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
}
