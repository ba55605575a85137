//! The timeline: every month with its counts of sessions and messages per
//! harness, and one month (the newest, or the one asked for) in full: by
//! project and harness, each row listing its sessions. One month at a time
//! keeps the page small however long the history is. Above them, the
//! activity calendar of the year that ends with that month.

use std::collections::BTreeMap;

use anyhow::Result;
use chrono::{DateTime, Local, NaiveDate, TimeZone, Utc};
use maud::html;

use super::calendar::calendar;
use super::{encode, layout, session_href, session_title, stored, Nav, Site};
use crate::http::{Page, Request};
use crate::output::{dated, project_label};
use deja_app::recap::{local_day, DayCount};
use deja_store::{SessionFilter, SessionRow};

/// `YYYY-MM` of `ms`, local time.
fn month(ms: i64) -> String {
    match Utc.timestamp_millis_opt(ms).single() {
        Some(t) => DateTime::<Local>::from(t).format("%Y-%m").to_string(),
        None => "?".into(),
    }
}

/// The first instant (ms) of month `year`-`month` in local time.
fn month_start(year: i32, month: u32) -> Option<i64> {
    let day = NaiveDate::from_ymd_opt(year, month, 1)?.and_hms_opt(0, 0, 0)?;
    Some(
        Local
            .from_local_datetime(&day)
            .earliest()?
            .timestamp_millis(),
    )
}

/// The local-time bounds (ms, end excluded) of `YYYY-MM`.
fn month_bounds(m: &str) -> Option<(i64, i64)> {
    let (y, mo) = m.split_once('-')?;
    let (y, mo): (i32, u32) = (y.parse().ok()?, mo.parse().ok()?);
    let (ny, nmo) = if mo == 12 { (y + 1, 1) } else { (y, mo + 1) };
    Some((month_start(y, mo)?, month_start(ny, nmo)?))
}

/// Most sessions a row of the month lists by name (the newest): a month of
/// a large history (or of many undated sessions, dated by their files)
/// holds tens of thousands, which would make the page megabytes long.
pub const LISTED: usize = 50;

/// Each month's sessions, messages and sessions per harness.
#[derive(Default)]
struct Month {
    sessions: usize,
    messages: i64,
    by_harness: BTreeMap<String, usize>,
}

/// The page; `?month=YYYY-MM` picks the month shown in full.
pub fn page(site: &mut Site<'_>, request: &Request) -> Result<Page> {
    let engine = site.engine()?;
    let store = engine.store();
    let starts = store.session_starts()?;
    let mut months: BTreeMap<String, Month> = BTreeMap::new();
    let mut harnesses: Vec<&str> = Vec::new();
    let mut days: BTreeMap<NaiveDate, DayCount> = BTreeMap::new();
    for s in &starts {
        if let Some(day) = local_day(s.started_at) {
            let d = days.entry(day).or_default();
            d.sessions += 1;
            d.messages += s.messages;
        }
        let m = months.entry(month(s.started_at)).or_default();
        m.sessions += 1;
        m.messages += s.messages;
        *m.by_harness.entry(s.harness.clone()).or_default() += 1;
        if !harnesses.contains(&s.harness.as_str()) {
            harnesses.push(&s.harness);
        }
    }
    harnesses.sort_unstable();
    let chosen = request
        .param("month")
        .filter(|m| months.contains_key(*m))
        .map(str::to_string)
        .or_else(|| months.keys().next_back().cloned());
    // The chosen month's sessions, by project and harness.
    let rows = match chosen.as_deref().and_then(month_bounds) {
        Some((since, until)) => store.sessions(
            &SessionFilter {
                since: Some(since),
                until: Some(until),
                ..SessionFilter::default()
            },
            None,
        )?,
        None => Vec::new(),
    };
    let mut groups: BTreeMap<(String, String), Vec<&SessionRow>> = BTreeMap::new();
    for r in &rows {
        groups
            .entry((project_label(&r.project), r.harness.clone()))
            .or_default()
            .push(r);
    }
    // The calendar ends with the chosen month's last day.
    let year = chosen
        .as_deref()
        .and_then(month_bounds)
        .and_then(|(_, until)| local_day(until - 1))
        .map(|last| (last - chrono::Duration::days(364), last));
    let sessions = starts.len();
    let messages: i64 = starts.iter().map(|s| s.messages).sum();
    let body = html! {
        h1 { "Timeline" }
        p.count { (sessions) " sessions · " (messages) " messages · " (months.len()) " months" }
        @if starts.is_empty() { p.empty { "The index holds no session yet: `deja index` reads the agents' transcripts." } }
        @if let Some((first, last)) = year {
            figure.calendar { (calendar(&days, first, last)) }
        }
        @if let Some(m) = &chosen {
            section.month {
                h2 { (m) " " span.meta { (rows.len()) " sessions" } }
                table.timeline {
                    tr { th { "project" } th { "harness" } th.n { "sessions" } th.n { "messages" } th { "sessions" } }
                    @for ((project, harness), list) in &groups {
                        tr {
                            td { (stored(project)) }
                            td { (stored(harness)) }
                            td.n { (list.len()) }
                            td.n { (list.iter().map(|r| r.message_count).sum::<i64>()) }
                            td {
                                details {
                                    summary { "list" }
                                    ul.sessions {
                                        @for r in newest(list) {
                                            li { a href=(session_href(&r.id, None)) { (dated(r.started_at, r.date_approximate)) }
                                                " " span.title { (stored(&session_title(r, 100))) } }
                                        }
                                        @if list.len() > LISTED {
                                            li.more { "and " (list.len() - LISTED) " older sessions of this month (deja sessions lists them)" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if months.len() > 1 {
            section.months {
                h2 { "All months" }
                table.months {
                    tr {
                        th { "month" } th.n { "sessions" } th.n { "messages" }
                        @for h in &harnesses { th.n { (stored(h)) } }
                    }
                    @for (m, counts) in months.iter().rev() {
                        tr.current[chosen.as_deref() == Some(m.as_str())] {
                            td { a href={ "/timeline?month=" (encode(m)) } { (m) } }
                            td.n { (counts.sessions) } td.n { (counts.messages) }
                            @for h in &harnesses { td.n { (counts.by_harness.get(*h).copied().unwrap_or(0)) } }
                        }
                    }
                }
            }
        }
    };
    Ok(Page::html(200, layout("Timeline", Nav::Timeline, body)))
}

/// The [`LISTED`] newest of `list`, newest first.
fn newest<'a>(list: &[&'a SessionRow]) -> Vec<&'a SessionRow> {
    let mut sorted = list.to_vec();
    sorted.sort_by(|a, b| b.started_at.cmp(&a.started_at).then(b.row.cmp(&a.row)));
    sorted.truncate(LISTED);
    sorted
}
