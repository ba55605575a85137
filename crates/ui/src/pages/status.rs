//! The status page: what `deja doctor` reports (problems with their fixes,
//! the index and how much of it recall by meaning covers, the readers and
//! where they looked, the model, the wiring of each agent, the team store).
//!
//! Gathering the report loads the model and runs every reader's discovery,
//! and the pages share one thread; so a report is kept for [`KEEP`] and
//! views within that time show it again.

use std::time::{Duration, Instant};

use anyhow::Result;
use maud::{html, Markup};

use super::{layout, stored, Nav, Site};
use crate::http::Page;
use crate::json::doctor as out;

/// How long a gathered report is shown before it is gathered again.
pub const KEEP: Duration = Duration::from_secs(30);

/// A value and when it was made.
#[derive(Debug)]
pub struct Kept<T> {
    made: Instant,
    value: T,
}

/// The value in `slot` when it is younger than `keep` at `now`, else a new
/// one from `make` (kept in `slot`).
pub fn kept<T>(
    slot: &mut Option<Kept<T>>,
    now: Instant,
    keep: Duration,
    make: impl FnOnce() -> Result<T>,
) -> Result<&T> {
    let fresh = slot
        .as_ref()
        .is_some_and(|k| now.saturating_duration_since(k.made) < keep);
    if !fresh {
        *slot = Some(Kept {
            made: now,
            value: make()?,
        });
    }
    slot.as_ref()
        .map(|k| &k.value)
        .ok_or_else(|| anyhow::anyhow!("the status report could not be kept"))
}

/// Label and value of one fact.
type Fact = (&'static str, String);

/// What the page shows of one reader.
#[derive(Debug)]
struct Reader {
    harness: String,
    enabled: bool,
    transcripts: usize,
    /// The places it looked, and whether each exists.
    looked_in: Vec<(String, bool)>,
}

/// What the page shows of one agent's wiring.
#[derive(Debug)]
struct Wiring {
    harness: &'static str,
    status: &'static str,
    detail: String,
    /// The command that wires it, when it is not (or no longer) wired.
    fix: Option<String>,
}

/// What the page shows of the doctor's report, taken from it when gathered.
#[derive(Debug)]
pub struct Report {
    /// Local time it was gathered.
    gathered: String,
    /// (problem, fix).
    problems: Vec<(String, String)>,
    index: Vec<Fact>,
    model: Vec<Fact>,
    readers: Vec<Reader>,
    wiring: Vec<Wiring>,
    team: Vec<Fact>,
}

/// A yes or no.
fn yes(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

/// The facts whose value is there.
fn facts(list: Vec<(&'static str, Option<String>)>) -> Vec<Fact> {
    list.into_iter()
        .filter_map(|(label, v)| v.map(|v| (label, v)))
        .collect()
}

impl Report {
    /// What the page shows of `d`.
    fn of(d: &out::Doctor<'_>) -> Report {
        let s = &d.store;
        let n = |v: Option<i64>| v.map(|v| v.to_string());
        let index = facts(vec![
            ("store", Some(s.path.display().to_string())),
            ("sessions", n(s.sessions)),
            ("messages", n(s.messages)),
            ("transcripts", n(s.transcripts)),
            ("forgotten", n(s.forgotten)),
            (
                "embedded with",
                s.embed_model
                    .as_ref()
                    .map(|m| m.clone().unwrap_or_else(|| "–".into())),
            ),
            ("messages not yet embedded", n(s.messages_without_vectors)),
            (
                "long messages embedded in part",
                n(s.messages_embedded_in_part),
            ),
            (
                "meaning covers sessions after",
                s.meaning_covers_after.clone(),
            ),
            ("vectors", s.vectors.count.map(|c| c.to_string())),
            ("vector index in sync", s.vectors.in_sync.map(yes)),
        ]);
        let m = &d.model;
        let model = facts(vec![
            ("model", m.id.clone()),
            ("status", m.status.clone()),
            ("dimensions", m.dims.map(|v| v.to_string())),
            ("load time (ms)", m.load_ms.map(|v| v.to_string())),
            (
                "runtime",
                m.runtime.as_ref().map(|p| p.display().to_string()),
            ),
        ]);
        let t = &d.team;
        let team = facts(vec![
            ("configured", Some(yes(t.configured))),
            ("server", t.server.clone()),
            ("this machine publishes as", t.origin.clone()),
            ("sessions pulled", n(t.pulled_sessions)),
        ]);
        Report {
            gathered: chrono::Local::now().format("%H:%M:%S").to_string(),
            problems: d
                .problems
                .iter()
                .map(|p| (p.problem.to_string(), p.fix.to_string()))
                .collect(),
            index,
            model,
            readers: d
                .readers
                .iter()
                .map(|r| Reader {
                    harness: r.harness.to_string(),
                    enabled: r.enabled,
                    transcripts: r.transcripts,
                    looked_in: r
                        .looked_in
                        .iter()
                        .map(|l| (l.path.clone(), l.exists))
                        .collect(),
                })
                .collect(),
            wiring: d
                .wiring
                .iter()
                .map(|w| Wiring {
                    harness: w.harness,
                    status: w.status,
                    detail: w.detail.clone(),
                    fix: ["not wired", "stale"]
                        .contains(&w.status)
                        .then(|| w.fix.clone()),
                })
                .collect(),
            team,
        }
    }
}

/// Rows of `label: value`.
fn show(facts: &[Fact]) -> Markup {
    html! {
        dl.facts {
            @for (label, value) in facts {
                dt { (label) } dd { (stored(value)) }
            }
        }
    }
}

/// The page.
pub fn page(site: &mut Site<'_>) -> Result<Page> {
    let app = site.app;
    let report = kept(&mut site.status, Instant::now(), KEEP, || {
        crate::commands::doctor::report(app, Report::of)
    })?;
    let body = html! {
        h1 { "Status" }
        p.note { "Gathered at " (report.gathered) "; shown again for "
            (KEEP.as_secs()) " seconds after that." }
        @if report.problems.is_empty() {
            p.ok { "No problem found." }
        } @else {
            section {
                h2 { "Problems" }
                ul.problems {
                    @for (problem, fix) in &report.problems {
                        li { span.problem { (stored(problem)) } br; span.fix { "fix: " (stored(fix)) } }
                    }
                }
            }
        }
        section {
            h2 { "Index" }
            (show(&report.index))
        }
        section {
            h2 { "Model" }
            (show(&report.model))
        }
        section {
            h2 { "Readers" }
            table {
                tr { th { "harness" } th { "enabled" } th.n { "transcripts" } th { "looked in" } }
                @for r in &report.readers {
                    tr {
                        td { (stored(&r.harness)) }
                        td { (yes(r.enabled)) }
                        td.n { (r.transcripts) }
                        td { @for (path, exists) in &r.looked_in {
                            span.path { (stored(path)) }
                            @if !exists { " (missing)" }
                            br;
                        } }
                    }
                }
            }
        }
        section {
            h2 { "Agents" }
            table {
                tr { th { "agent" } th { "memory" } th { "detail" } }
                @for w in &report.wiring {
                    tr {
                        td { (stored(w.harness)) }
                        td { (stored(w.status)) }
                        td { (stored(&w.detail))
                            @if let Some(fix) = &w.fix { br; span.fix { (stored(fix)) } } }
                    }
                }
            }
        }
        section {
            h2 { "Team" }
            (show(&report.team))
        }
    };
    Ok(Page::html(200, layout("Status", Nav::Status, body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_value_is_made_again_only_once_it_is_old() {
        let mut slot = None;
        let mut made = 0;
        let t0 = Instant::now();
        let keep = Duration::from_secs(30);
        let mut at = |slot: &mut Option<Kept<i32>>, secs: u64| {
            *kept(slot, t0 + Duration::from_secs(secs), keep, || {
                made += 1;
                Ok(made)
            })
            .unwrap()
        };
        assert_eq!(at(&mut slot, 0), 1);
        assert_eq!(at(&mut slot, 29), 1);
        assert_eq!(at(&mut slot, 30), 2);
        assert_eq!(at(&mut slot, 45), 2);
        // A failure keeps nothing and makes again next time.
        let mut slot: Option<Kept<i32>> = None;
        assert!(kept(&mut slot, t0, keep, || anyhow::bail!("no")).is_err());
        assert!(slot.is_none());
    }
}
