//! The timeline: every session by month, and within a month by project
//! and harness, with counts of sessions and messages; each row lists its
//! sessions.

use std::collections::BTreeMap;

use anyhow::Result;
use chrono::{DateTime, Local, TimeZone, Utc};
use maud::html;

use super::{layout, session_href, session_title, stored, Nav, Site};
use crate::output::{local_short, project_label};
use crate::ui::http::Page;

/// `YYYY-MM` of `ms`, local time.
fn month(ms: i64) -> String {
    match Utc.timestamp_millis_opt(ms).single() {
        Some(t) => DateTime::<Local>::from(t).format("%Y-%m").to_string(),
        None => "?".into(),
    }
}

/// The page.
pub fn page(site: &mut Site<'_>) -> Result<Page> {
    let engine = site.engine()?;
    let rows = engine
        .store()
        .sessions(&deja_store::SessionFilter::default(), None)?;
    // Newest month first; within a month, projects by name.
    let mut months: BTreeMap<String, BTreeMap<(String, String), Vec<&deja_store::SessionRow>>> =
        BTreeMap::new();
    for r in &rows {
        months
            .entry(month(r.started_at))
            .or_default()
            .entry((project_label(&r.project), r.harness.clone()))
            .or_default()
            .push(r);
    }
    let messages: i64 = rows.iter().map(|r| r.message_count).sum();
    let body = html! {
        h1 { "Timeline" }
        p.count { (rows.len()) " sessions · " (messages) " messages" }
        @if rows.is_empty() { p.empty { "The index holds no session yet: `deja index` reads the agents' transcripts." } }
        @for (m, groups) in months.iter().rev() {
            section.month {
                h2 { (m) " " span.meta { (groups.values().map(Vec::len).sum::<usize>()) " sessions" } }
                table.timeline {
                    tr { th { "project" } th { "harness" } th.n { "sessions" } th.n { "messages" } th { "sessions" } }
                    @for ((project, harness), list) in groups {
                        tr {
                            td { (stored(project)) }
                            td { (stored(harness)) }
                            td.n { (list.len()) }
                            td.n { (list.iter().map(|r| r.message_count).sum::<i64>()) }
                            td {
                                details {
                                    summary { "list" }
                                    ul.sessions {
                                        @for r in list {
                                            li { a href=(session_href(&r.id, None)) { (local_short(r.started_at)) }
                                                " " span.title { (stored(&session_title(r, 100))) } }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(Page::html(200, layout("Timeline", Nav::Timeline, body)))
}
