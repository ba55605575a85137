//! Every query's ranking evidence, gathered once and written as JSON lines,
//! for studying ranking offline: the query vector, both message lists, the
//! session-level evidence and which sessions and messages answer it. The
//! same evidence `deja recall` ranks with ([`deja_recall::gather`]), on the
//! LoCoMo store (each question within its conversation) or the real-transcript
//! store (the whole store), and the queries nothing in either answers
//! (`bench/eval/unanswerable.jsonl`: on LoCoMo asked within each
//! conversation), written with `"unanswerable": true`.

use std::io::Write;

use anyhow::Result;
use deja_config::Mode;
use deja_recall::{Candidates, Signals};
use deja_store::SessionFilter;
use serde_json::{json, Value};

use crate::quality;

fn pairs(list: &[(i64, f64)]) -> Value {
    Value::Array(list.iter().map(|(id, v)| json!([id, v])).collect())
}

fn map<V: Copy + Into<Value>>(m: &std::collections::HashMap<i64, V>) -> Value {
    Value::Array(m.iter().map(|(k, v)| json!([k, (*v).into()])).collect())
}

fn evidence(s: &Signals) -> Value {
    json!({
        "lexical": pairs(&s.lexical),
        "semantic": pairs(&s.semantic),
        "windows": map(&s.windows),
        "session_lexical": map(&s.session_lexical),
        "session_of": map(&s.session_of),
        "date_affinity": map(&s.date_affinity),
        "phrases": map(&s.phrases),
    })
}

/// One query to gather: its text, its scope and what to write beside it.
struct Ask<'a> {
    text: &'a str,
    scope: Candidates,
    about: Value,
}

fn write_all(
    database: &std::path::Path,
    vectors: &std::path::Path,
    asks: Vec<Ask<'_>>,
    out: &mut impl Write,
) -> Result<()> {
    let mut e = crate::engine::engine(database, vectors)?;
    for ask in asks {
        let qv = e.embedder.embed_query(ask.text)?;
        let s = deja_recall::gather(
            &e.store,
            ask.text,
            Mode::Hybrid,
            &ask.scope,
            Some((&e.vectors(), qv.as_slice())),
            100,
        )?;
        let mut line = ask.about;
        line["query"] = json!(ask.text);
        line["vector"] = json!(qv);
        line["signals"] = evidence(&s);
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// LoCoMo's questions, each within its conversation.
pub fn locomo(locomo: &quality::Locomo, out: &mut impl Write) -> Result<()> {
    let asks = locomo
        .questions
        .iter()
        .enumerate()
        .map(|(i, q)| Ask {
            text: &q.question,
            scope: Candidates {
                filter: SessionFilter {
                    project: Some(q.project.clone()),
                    ..Default::default()
                },
                role: None,
            },
            about: json!({
                "i": i,
                "project": q.project,
                "category": q.category,
                "sessions": q.sessions,
                "evidence": q.evidence,
            }),
        })
        .collect::<Vec<_>>();
    let mut projects: Vec<&str> = locomo
        .questions
        .iter()
        .map(|q| q.project.as_str())
        .collect();
    projects.sort_unstable();
    projects.dedup();
    let nothing = crate::floor::unanswerable("locomo")?;
    let mut asks = asks;
    for project in projects {
        for u in &nothing {
            asks.push(Ask {
                text: &u.query,
                scope: Candidates {
                    filter: SessionFilter {
                        project: Some(project.to_string()),
                        ..Default::default()
                    },
                    role: None,
                },
                about: json!({
                    "id": u.id,
                    "project": project,
                    "kind": u.kind,
                    "half": u.half,
                    "unanswerable": true,
                }),
            });
        }
    }
    write_all(&locomo.env.database(), &locomo.env.vectors(), asks, out)
}

/// The demo's queries (`fixtures/demo/queries.tsv`), as gathered for the
/// demo set, with whether each row's first-ranked message is in its
/// expected session left to the reader (`expected` names it).
pub fn demo(set: &crate::demo::DemoSet, out: &mut impl Write) -> Result<()> {
    for (row, s) in set.evidence() {
        let line = json!({
            "query": row.query,
            "mode": row.mode.as_str(),
            "expected": row.expected,
            "signals": evidence(s),
        });
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// A query asked of the whole store, with `about` written beside it.
fn of_whole_store(text: &str, about: Value) -> Ask<'_> {
    Ask {
        text,
        scope: Candidates::default(),
        about,
    }
}

/// The real-transcript set's queries, over the whole store.
pub fn real(
    corpus: &crate::real::Corpus,
    items: &[crate::real::Item],
    out: &mut impl Write,
) -> Result<()> {
    let nothing = crate::floor::unanswerable("real")?;
    let answered = items.iter().map(|item| {
        of_whole_store(
            &item.query,
            json!({
                "id": item.id,
                "kind": item.kind,
                "half": item.half,
                "harness": item.harness,
                "sessions": item.sessions,
                "turns": item.turns,
            }),
        )
    });
    let unanswered = nothing.iter().map(|u| {
        of_whole_store(
            &u.query,
            json!({
                "id": u.id,
                "kind": u.kind,
                "half": u.half,
                "unanswerable": true,
            }),
        )
    });
    let asks = answered.chain(unanswered).collect();
    write_all(&corpus.env.database(), &corpus.env.vectors(), asks, out)
}

/// The languages set's queries (`bench/eval/languages.jsonl`), over the
/// whole store of `corpus`: the whole shared corpus, or its Chinese and
/// Japanese histories alone.
pub fn languages(
    corpus: &crate::real::Corpus,
    items: &[crate::languages::Item],
    out: &mut impl Write,
) -> Result<()> {
    let asks = items
        .iter()
        .map(|item| {
            of_whole_store(
                &item.query,
                json!({
                    "id": item.id,
                    "kind": item.kind,
                    "half": item.half,
                    "lang": item.lang,
                    "harness": item.harness,
                    "sessions": item.sessions,
                    "turns": item.turns,
                }),
            )
        })
        .collect();
    write_all(&corpus.env.database(), &corpus.env.vectors(), asks, out)
}
