//! The search page: a query box with the filters of `deja recall`, and
//! its answer as the command lists it (grouped by session, best first),
//! matched words highlighted, each hit opening its session at that
//! message. Without a query it lists the newest sessions.

use anyhow::Result;
use maud::{html, Markup};

use deja_recall::engine::Query;
use deja_recall::{lexical, snippet, Candidates, Hit, Tuning};

use super::{layout, session_href, session_title, stored, Nav, Site};
use crate::commands;
use crate::http::{Page, Request};
use crate::output::{dated, local_short, project_label};
use crate::select;
use crate::select::FilterArgs;

/// Characters of a hit's snippet.
const SNIPPET: usize = 240;
/// Sessions listed when there is no query.
const NEWEST: usize = 30;

/// The filters of the form, as the command line's.
fn filters(request: &Request) -> FilterArgs {
    let p = |name: &str| request.param(name).map(str::to_string);
    let origin = p("origin");
    FilterArgs {
        harness: p("harness"),
        project: p("project"),
        since: p("since"),
        until: p("until"),
        mine: origin.as_deref() == Some("mine"),
        origin: origin.filter(|o| o != "mine"),
    }
}

/// The page.
pub fn page(site: &mut Site<'_>, request: &Request) -> Result<Page> {
    let query = request.param("q").unwrap_or("").to_string();
    let args = filters(request);
    let role = request.param("role").unwrap_or("");
    let harnesses = match site.engine() {
        Ok(engine) => engine.store().harness_counts()?,
        Err(e) => {
            return Ok(Page::html(
                200,
                layout(
                    "Search",
                    Nav::Search,
                    html! {
                        (form(&query, &args, role, &[]))
                        p.notice { (stored(&format!("{e:#}"))) }
                    },
                ),
            ))
        }
    };
    let answer = if query.is_empty() {
        newest(site, &args)?
    } else {
        match results(site, &query, &args, role) {
            Ok(m) => m,
            Err(e) => html! { p.notice.error { (stored(&format!("{e:#}"))) } },
        }
    };
    let title = if query.is_empty() {
        "Search".to_string()
    } else {
        format!("{query} – search")
    };
    Ok(Page::html(
        200,
        layout(
            &title,
            Nav::Search,
            html! {
                (form(&query, &args, role, &harnesses))
                (answer)
            },
        ),
    ))
}

/// The query box and the filters, filled in as asked.
fn form(query: &str, args: &FilterArgs, role: &str, harnesses: &[(String, i64)]) -> Markup {
    let v = |o: &Option<String>| o.clone().unwrap_or_default();
    let origin = if args.mine {
        "mine".to_string()
    } else {
        v(&args.origin)
    };
    html! {
        form.search method="get" action="/search" {
            input type="search" name="q" value=(query) placeholder="what you remember of it, in any words"
                autofocus aria-label="query";
            button type="submit" { "Recall" }
            div.filters {
                label { "harness "
                    select name="harness" {
                        option value="" { "any" }
                        @for (h, n) in harnesses {
                            option value=(h) selected[args.harness.as_deref() == Some(h.as_str())] {
                                (h) " (" (n) ")"
                            }
                        }
                    }
                }
                label { "project " input type="text" name="project" value=(v(&args.project)) size="14"; }
                label { "since " input type="text" name="since" value=(v(&args.since)) size="10" placeholder="7d, 2026-01-31"; }
                label { "until " input type="text" name="until" value=(v(&args.until)) size="10"; }
                label { "role "
                    select name="role" {
                        option value="" { "any" }
                        option value="user" selected[role == "user"] { "user" }
                        option value="assistant" selected[role == "assistant"] { "assistant" }
                    }
                }
                label { "origin " input type="text" name="origin" value=(origin) size="12" placeholder="mine, user@host"; }
            }
        }
    }
}

/// The answer to `query`, as `deja recall` gives it.
fn results(site: &mut Site<'_>, query: &str, args: &FilterArgs, role: &str) -> Result<Markup> {
    let app = site.app;
    let filter = select::session_filter(args)?;
    let role = match role {
        "" => None,
        r => Some(
            deja_model::Role::parse(r)
                .ok_or_else(|| anyhow::anyhow!("role `{r}`: choose user or assistant"))?,
        ),
    };
    let engine = site.engine()?;
    engine.refresh();
    select::check_filters(
        app,
        engine.store(),
        args.harness.as_deref(),
        args.project.as_deref(),
    )?;
    select::check_origin(engine.store(), filter.origin.as_ref())?;
    let config = &app.config.config.recall;
    let candidates = Candidates { filter, role };
    let answer = engine.recall(&Query {
        text: query,
        mode: config.mode,
        scope: &candidates,
        limit: config.limit,
        tuning: Tuning {
            min_similarity: config.min_similarity,
            min_score: config.min_score,
            ..Tuning::default()
        },
        per_session: config.per_session_cap(),
    })?;
    let notes = commands::recall::warnings(&answer, engine.store());
    let terms = lexical::terms(query);
    let groups = commands::recall::by_session(&answer.hits);
    Ok(html! {
        @for n in &notes { p.notice { (stored(n)) } }
        @if groups.is_empty() && answer.withheld > 0 {
            p.empty { "No matches: the nearest messages are too far from the query to count as an answer." }
        } @else if groups.is_empty() {
            p.empty { "No matches." }
        } @else {
            p.count { (groups.len()) @if groups.len() == 1 { " session" } @else { " sessions" }
                " · ranked " (answer.mode.as_str()) }
            ol.hits {
                @for group in &groups { (session_group(group, &terms)) }
            }
        }
    })
}

/// One session of the answer and its hits.
fn session_group(group: &[&Hit], terms: &[String]) -> Markup {
    let first = group[0];
    html! {
        li.group {
            div.session {
                a.id href=(session_href(&first.session_id, Some(first.message_index))) { (stored(&first.session_id)) }
                span.meta {
                    (stored(&first.harness)) " · " (stored(&project_label(&first.project)))
                    " · " (local_short(first.started_at))
                    @if let Some(o) = &first.origin { " · from " (stored(o)) }
                    @if first.weak { " · " span.weak title="the nearest past message, which may not answer the query" { "weak match" } }
                }
            }
            @for h in group {
                a.hit href=(session_href(&h.session_id, Some(h.message_index))) {
                    span.where { "#" (h.message_index) " " (stored(&h.role)) " " (local_short(h.timestamp)) }
                    " "
                    span.snippet { (marked(&h.text, terms)) }
                }
                @if !h.duplicates.is_empty() {
                    p.dup { "(the same text is in " (h.duplicates.len())
                        @if h.duplicates.len() == 1 { " other session" } @else { " other sessions" } " too)" }
                }
            }
            @if first.more_in_session > 0 {
                p.more { "(" (first.more_in_session) " more matching in this session)" }
            }
        }
    }
}

/// The part of `text` around the first matched word, matches marked.
pub fn marked(text: &str, terms: &[String]) -> maud::PreEscaped<String> {
    let (s, spans) = snippet::snippet(text, terms, SNIPPET);
    maud::PreEscaped(deja_render::html::marked(&s, &spans))
}

/// The newest sessions the filters let through.
fn newest(site: &mut Site<'_>, args: &FilterArgs) -> Result<Markup> {
    let filter = select::session_filter(args)?;
    let engine = site.engine()?;
    let rows = engine.store().sessions(&filter, Some(NEWEST))?;
    Ok(html! {
        h2 { "Newest sessions" }
        @if rows.is_empty() { p.empty { "The index holds no session yet: `deja index` reads the agents' transcripts." } }
        ul.sessions {
            @for r in &rows {
                li {
                    a.id href=(session_href(&r.id, None)) { (stored(&r.id)) }
                    span.meta { (stored(&r.harness)) " · " (stored(&project_label(&r.project)))
                        " · " (dated(r.started_at, r.date_approximate)) " · " (r.message_count) " messages" }
                    span.title { (stored(&session_title(r, 160))) }
                }
            }
        }
    })
}
