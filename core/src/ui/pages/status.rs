//! The status page: what `deja doctor` reports (problems with their fixes,
//! the index and how much of it recall by meaning covers, the readers and
//! where they looked, the model, the wiring of each agent, the team store).

use anyhow::Result;
use maud::{html, Markup};
use serde_json::Value;

use super::{layout, stored, Nav, Site};
use crate::ui::http::Page;

/// A JSON value as text (strings bare, absent as a dash).
fn show(v: &Value) -> String {
    match v {
        Value::Null => "–".into(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        other => other.to_string(),
    }
}

/// Rows of `label: value` for the fields of `object` named in `fields`.
fn facts(object: &Value, fields: &[(&str, &str)]) -> Markup {
    html! {
        dl.facts {
            @for (key, label) in fields {
                @if let Some(v) = object.get(*key) {
                    dt { (label) } dd { (stored(&show(v))) }
                }
            }
        }
    }
}

/// The page.
pub fn page(site: &mut Site<'_>) -> Result<Page> {
    let report = crate::commands::doctor::report(site.app)?;
    let empty = Vec::new();
    let list = |key: &str| report.get(key).and_then(Value::as_array).unwrap_or(&empty);
    let problems = list("problems");
    let store = &report["store"];
    let body = html! {
        h1 { "Status" }
        @if problems.is_empty() {
            p.ok { "No problem found." }
        } @else {
            section {
                h2 { "Problems" }
                ul.problems {
                    @for p in problems {
                        li { span.problem { (stored(&show(&p["problem"]))) } br; span.fix { "fix: " (stored(&show(&p["fix"]))) } }
                    }
                }
            }
        }
        section {
            h2 { "Index" }
            (facts(store, &[
                ("path", "store"), ("sessions", "sessions"), ("messages", "messages"),
                ("transcripts", "transcripts"), ("forgotten", "forgotten"),
                ("embed_model", "embedded with"), ("messages_without_vectors", "messages not yet embedded"),
                ("messages_embedded_in_part", "long messages embedded in part"),
                ("meaning_covers_after", "meaning covers sessions after"),
            ]))
            (facts(&store["vectors"], &[("count", "vectors"), ("in_sync", "vector index in sync")]))
        }
        section {
            h2 { "Model" }
            (facts(&report["model"], &[("id", "model"), ("status", "status"), ("dims", "dimensions"), ("load_ms", "load time (ms)"), ("runtime", "runtime")]))
        }
        section {
            h2 { "Readers" }
            table {
                tr { th { "harness" } th { "enabled" } th.n { "transcripts" } th { "looked in" } }
                @for r in list("readers") {
                    tr {
                        td { (stored(&show(&r["harness"]))) }
                        td { (show(&r["enabled"])) }
                        td.n { (show(&r["transcripts"])) }
                        td { @for l in r["looked_in"].as_array().unwrap_or(&empty) {
                            span.path { (stored(&show(&l["path"]))) }
                            @if l["exists"] == Value::Bool(false) { " (missing)" }
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
                @for w in list("wiring") {
                    tr {
                        td { (stored(&show(&w["harness"]))) }
                        td { (stored(&show(&w["status"]))) }
                        td { (stored(&show(&w["detail"])))
                            @if ["not wired", "stale"].iter().any(|s| w["status"] == *s) { br; span.fix { (stored(&show(&w["fix"]))) } } }
                    }
                }
            }
        }
        section {
            h2 { "Team" }
            (facts(&report["team"], &[("configured", "configured"), ("server", "server"), ("origin", "this machine publishes as"), ("pulled_sessions", "sessions pulled")]))
        }
    };
    Ok(Page::html(200, layout("Status", Nav::Status, body)))
}
