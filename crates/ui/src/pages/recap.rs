//! The recap page (`/recap?since=&until=&project=`): what `deja recap`
//! prints for the period (by default the last seven days), with the
//! period's activity calendar above it: per project and day, the sessions
//! begun (each a link), the files changed most, the commands that failed
//! (each with a link to its session), the sessions forgotten.

use anyhow::Result;
use maud::{html, Markup};

use super::calendar::calendar;
use super::{layout, session_href, session_title, stored, Nav, Site};
use crate::http::{Page, Request};
use crate::output::{local_short, plural};
use deja_app::recap::{DayRecap, Period, ProjectRecap, Recap};

/// The page.
pub fn page(site: &mut Site<'_>, request: &Request) -> Result<Page> {
    let since = request.param("since").unwrap_or("");
    let until = request.param("until").unwrap_or("");
    let project = request.param("project");
    let form = form(since, until, project.unwrap_or(""));
    let period = Period::parse(
        Some(since).filter(|s| !s.is_empty()),
        Some(until).filter(|u| !u.is_empty()),
        chrono::Utc::now(),
    );
    let body = match period {
        Err(e) => html! { h1 { "Recap" } (form) p.notice.error { (stored(&e)) } },
        Ok(period) => {
            let store = match site.engine() {
                Ok(engine) => engine.store(),
                Err(e) => {
                    let body =
                        html! { h1 { "Recap" } (form) p.notice { (stored(&format!("{e:#}"))) } };
                    return Ok(Page::html(200, layout("Recap", Nav::Recap, body)));
                }
            };
            let recap = Recap::gather(store, period, project)?;
            html! { h1 { "Recap" } (form) (content(&recap)) }
        }
    };
    Ok(Page::html(200, layout("Recap", Nav::Recap, body)))
}

/// The period's fields, filled in as asked.
fn form(since: &str, until: &str, project: &str) -> Markup {
    html! {
        form.search method="get" action="/recap" {
            div.filters {
                label { "since " input type="text" name="since" value=(since) size="12" placeholder="7 days before until"; }
                label { "until " input type="text" name="until" value=(until) size="12" placeholder="now"; }
                label { "project " input type="text" name="project" value=(project) size="14"; }
                button type="submit" { "Show" }
            }
        }
    }
}

/// The counts, the calendar and each project.
fn content(recap: &Recap) -> Markup {
    let (since, until) = (
        local_short(recap.period.since),
        local_short(recap.period.until),
    );
    html! {
        @if recap.is_empty() {
            p.empty { "Nothing recorded between " (since) " and " (until) "." }
        } @else {
            p.count {
                "From " (since) " to " (until) ": "
                (plural(recap.sessions(), "session", "sessions")) " · "
                (plural(usize::try_from(recap.messages()).unwrap_or(0), "message", "messages")) " · "
                (plural(recap.projects.len(), "project", "projects"))
                @if recap.failed() > 0 { " · " (plural(recap.failed(), "failed command", "failed commands")) }
                @if recap.forgotten() > 0 { " · " (recap.forgotten()) " forgotten" }
            }
        }
        @if let Some((first, last)) = recap.period.days() {
            figure.calendar { (calendar(&recap.days, first, last)) }
        }
        @for p in &recap.projects { (project(p)) }
    }
}

fn project(p: &ProjectRecap) -> Markup {
    html! {
        section.recap {
            h2 { (stored(&p.label)) " "
                span.meta { (plural(p.sessions(), "session", "sessions")) ", "
                    (plural(usize::try_from(p.messages()).unwrap_or(0), "message", "messages")) } }
            @if let Some(dir) = &p.project.dir { p.path { (stored(dir)) } }
            @for d in &p.days { (day(d)) }
        }
    }
}

fn day(d: &DayRecap) -> Markup {
    html! {
        h3 { (d.day.format("%Y-%m-%d %a")) }
        @if !d.sessions.is_empty() {
            ul.sessions {
                @for r in &d.sessions {
                    @let time = local_short(r.started_at);
                    @let time = time.rsplit(' ').next().unwrap_or_default();
                    li {
                        a.id href=(session_href(&r.id, None)) { (stored(&r.id)) }
                        span.meta { @if r.date_approximate { "about " } (time) " · " (stored(&r.harness))
                            " · " (r.message_count) " messages" }
                        span.title { (stored(&session_title(r, 160))) }
                    }
                }
            }
        }
        @if !d.files.is_empty() {
            table.files {
                tr { th { "changed" } th.n { "edits" } th.n { "sessions" } }
                @for f in &d.files {
                    tr { td.path { (stored(&f.path)) } td.n { (f.edits) } td.n { (f.sessions) } }
                }
            }
            @if d.more_files > 0 { p.more { "and " (plural(d.more_files, "more file", "more files")) } }
        }
        @if !d.failed.is_empty() {
            table.failed {
                tr { th { "failed" } th.n { "exit" } th { "session" } }
                @for c in &d.failed {
                    tr {
                        td.path { code { (stored(&c.command)) } }
                        td.n { @if let Some(code) = c.exit_code { (code) } }
                        td { a.id href=(session_href(&c.session, None)) { (stored(&c.session)) }
                            " " span.meta { (stored(&c.harness)) } }
                    }
                }
            }
        }
        @if !d.forgotten.is_empty() {
            ul.forgotten {
                @for t in &d.forgotten {
                    li { "forgotten " code { (stored(&t.id)) } " · " (stored(&t.harness))
                        @if let Some(ms) = t.started_at { " · started " (local_short(ms)) } }
                }
            }
        }
    }
}
