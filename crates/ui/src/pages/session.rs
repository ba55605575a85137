//! The session page: one session readable from start to end, a page of
//! [`PAGE`] messages at a time (so a session of thousands of messages
//! renders at once): its title, project, harness, dates and origin, the
//! command that resumes it, its messages with code highlighted and long
//! blocks folded, the hit and its neighbours marked, then the files and
//! commands it touched (each file linked to its history).

use anyhow::Result;
use maud::{html, Markup, PreEscaped};

use super::{encode, layout, session_title, stored, Nav, Site};
use crate::commands;
use crate::commands::resume::Advice;
use crate::http::{Page, Request};
use crate::output::{dated, local_short, project_label};
use crate::select;

/// Messages on one page.
pub const PAGE: usize = 200;
/// Messages on each side of the hit marked as its neighbours.
const NEAR: usize = 3;

/// The page of session `id`.
pub fn page(site: &mut Site<'_>, id: &str, request: &Request) -> Result<Page> {
    let app = site.app;
    let engine = site.engine()?;
    let store = engine.store();
    let row = select::pick_session(store, id)?;
    let session = store.load_session(&row)?;
    let total = session.messages.len();
    let at: Option<usize> = request
        .param("at")
        .and_then(|a| a.parse().ok())
        .filter(|&a: &usize| a < total);
    let pages = total.div_ceil(PAGE).max(1);
    let page_no = match (
        request.param("page").and_then(|p| p.parse::<usize>().ok()),
        at,
    ) {
        (Some(p), _) => p.clamp(1, pages),
        (None, Some(a)) => a / PAGE + 1,
        (None, None) => 1,
    };
    let first = (page_no - 1) * PAGE;
    let shown = session.messages.iter().enumerate().skip(first).take(PAGE);
    // A reader that cannot be asked does not stop the page.
    let resume = match commands::resume::advise(app, &row) {
        Ok(Advice::Command { line, note, .. }) => html! {
            div.resume { span { "Resume: " } code.copy { (stored(&line)) }
                @if !note.is_empty() { span.note { (stored(&note)) } } }
        },
        Ok(Advice::Refused(why)) => {
            html! { p.resume.note { "Cannot be resumed here: " (stored(&why)) } }
        }
        Err(e) => html! { p.resume.note { (stored(&format!("{e:#}"))) } },
    };
    let title = session_title(&row, 120);
    let pager = pager(&row.id, page_no, pages);
    let body = html! {
        h1 { (stored(&title)) }
        dl.facts {
            dt { "Session" } dd { code { (stored(&row.id)) } }
            dt { "Harness" } dd { (stored(&row.harness)) }
            dt { "Project" } dd { (stored(&project_label(&row.project)))
                @if let Some(dir) = &row.project.dir { " " span.path { (stored(dir)) } } }
            dt { "Dates" } dd { (dated(row.started_at, row.date_approximate)) " – " (local_short(row.updated_at)) }
            dt { "Messages" } dd { (total) }
            @if let Some(o) = &row.origin { dt { "Origin" } dd { "pulled from the team store: " (stored(o)) } }
            @if let Some(src) = &row.source_path {
                dt { "Transcript" } dd { span.path { (stored(src)) } @if !row.has_source { " (no longer there)" } }
            }
        }
        (resume)
        p.actions { a.danger href=(format!("/forget/{}", encode(&row.id))) { "Forget this session…" } }
        (pager)
        section.messages {
            @for (i, m) in shown {
                @let class = match at {
                    Some(a) if a == i => "msg hit",
                    Some(a) if a.abs_diff(i) <= NEAR => "msg near",
                    _ => "msg",
                };
                article id=(format!("m{i}")) class=(class) data-role=(m.role.as_str()) {
                    div.head {
                        a.index href=(format!("#m{i}")) { "#" (i) }
                        " " span.role { (m.role.as_str()) } " " span.time { (local_short(m.timestamp_ms)) }
                        @if at == Some(i) { " " span.badge { "hit" } }
                    }
                    div.body { (PreEscaped(deja_render::html::message(&m.text))) }
                }
            }
        }
        (pager)
        @if !session.files.is_empty() {
            section.records {
                h2 { "Files" }
                table {
                    tr { th { "when" } th { "action" } th { "path" } }
                    @for f in &session.files {
                        tr { td { (local_short(f.timestamp_ms)) } td { (f.action) } td.path { a href=(format!("/file?path={}", encode(&f.path))) { (stored(&f.path)) } } }
                    }
                }
            }
        }
        @if !session.commands.is_empty() {
            section.records {
                h2 { "Commands" }
                table {
                    tr { th { "when" } th { "by" } th { "command" } }
                    @for c in &session.commands {
                        tr { td { (local_short(c.timestamp_ms)) } td { (c.origin) } td { code { (stored(&c.command)) } } }
                    }
                }
            }
        }
    };
    Ok(Page::html(200, layout(&title, Nav::None, body)))
}

/// Links to the other pages of a long session.
fn pager(id: &str, page_no: usize, pages: usize) -> Markup {
    html! {
        @if pages > 1 {
            nav.pager {
                "Messages " ((page_no - 1) * PAGE) "–" (page_no * PAGE - 1) ", page " (page_no) " of " (pages) ": "
                @for p in 1..=pages {
                    @if p == page_no { span.here { (p) } }
                    @else { a href=(format!("/session/{}?page={p}", encode(id))) { (p) } }
                    " "
                }
            }
        }
    }
}
