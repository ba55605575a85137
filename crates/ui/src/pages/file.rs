//! The file page (`/file?path=...`): a file's history, the sessions whose
//! records edited it, newest first, then those that read it, each with the
//! message behind the record linked into its session page. The paths match
//! as `deja blame` matches them. With `&line=N`, the page says which edit
//! wrote that line where it can be told (as `deja blame FILE:LINE`) and how
//! each edit's text stands against it.

use std::path::Path;

use anyhow::{bail, Result};
use maud::{html, Markup};

use super::{layout, session_href, stored, Nav, Site};
use crate::http::{Page, Request};
use crate::output::{dated, local_short, one_line, project_label};
use deja_app::blame::{self, Entry, LineAnswer, Target};

/// Characters of the message behind a record.
const SNIPPET: usize = 160;

/// The history of the file named by the `path` parameter.
pub fn page(site: &mut Site<'_>, request: &Request) -> Result<Page> {
    let Some(path) = request.param("path") else {
        bail!("the file page needs a path: /file?path=/absolute/path");
    };
    let cwd = std::env::current_dir()?;
    let target = Target::resolve(Path::new(path), &cwd);
    let file = target.abs.to_string_lossy().into_owned();
    let store = site.engine()?.store();
    let edits = blame::records(store, &target, blame::EDITS)?;
    let reads = blame::records(store, &target, blame::READS)?;
    let line = match request.param("line").filter(|l| !l.is_empty()) {
        None => None,
        Some(l) => match l.parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => bail!("the line must be a number from 1: {l}"),
        },
    };
    let answer = line
        .filter(|_| !edits.is_empty())
        .map(|n| (n, LineAnswer::of(&target.abs, n, &edits)));
    let body = html! {
        h1 { "File history" }
        p { span.path { (stored(&file)) } }
        @if let Some((n, a)) = &answer {
            p.line-answer {
                @if a.wrote().is_some() { strong { (stored(&a.sentence(&file, *n, &edits))) } }
                @else { span.note { (stored(&a.sentence(&file, *n, &edits))) } }
            }
        }
        section.records {
            h2 { "Edited by" }
            @if edits.is_empty() { p.note { "No session edited this file." } }
            @else { (table(&edits, answer.as_ref().map(|(n, a)| (*n, a)))) }
        }
        @if !reads.is_empty() {
            section.records {
                h2 { "Read by" }
                (table(&reads, None))
            }
        }
    };
    Ok(Page::html(200, layout("File history", Nav::None, body)))
}

/// The records, one row each: when, session (linked at its message),
/// harness, project, start, action, recorded path and the message; with a
/// line asked about, how each edit's text stands against it.
fn table(entries: &[Entry], line: Option<(usize, &LineAnswer)>) -> Markup {
    html! {
        table {
            tr { th { "when" } th { "session" } th { "harness" } th { "project" } th { "started" } th { "action" } th { "message" }
                @if let Some((n, _)) = line { th { "line " (n) } } }
            @for (i, e) in entries.iter().enumerate() {
                @let a = &e.activity;
                @let s = &a.session;
                @let at = a.message.as_ref().map(|(i, _, _)| *i as i64);
                tr {
                    td { (local_short(a.timestamp_ms)) }
                    td { a href=(session_href(&s.id, at)) { code { (stored(&s.id)) } } }
                    td { (stored(&s.harness)) }
                    td { (stored(&project_label(&s.project))) }
                    td { (dated(s.started_at, s.date_approximate)) }
                    td { (a.action)
                        @if e.matched != blame::Matched::Exact {
                            " " span.note { "(" (e.matched.as_str()) ": " span.path { (stored(&a.path)) } ")" }
                        }
                    }
                    td { @if let Some((i, role, text)) = &a.message {
                        "#" (i) " " (role.as_str()) ": " (stored(&one_line(text, SNIPPET)))
                    } }
                    @if let Some((_, answer)) = line {
                        td { @if let Some(m) = answer.edit(i) {
                            @if answer.wrote() == Some(i) { strong { "wrote it" } }
                            @else if m.covers { "its text covers it" }
                            @else { span.note { "text " (m.found.as_str()) } }
                        } }
                    }
                }
            }
        }
    }
}
