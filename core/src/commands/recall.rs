//! `deja recall QUERY`: finds the past messages that match a query by meaning
//! and by words. Falls back to lexical search, with one warning, when the
//! model or runtime is missing. Exit status 0 with hits, 1 without.

use anyhow::Result;
use deja_config::Mode;
use deja_recall::engine::{Engine, Query};
use deja_recall::{lexical, snippet, Candidates, Hit, Tuning};
use serde_json::json;

use crate::app::App;
use crate::cli::RecallArgs;
use crate::output::{self, local_short, rfc3339, Style};
use crate::ExitStatus;
use deja_index::redact::Redactor;

/// Runs the command.
pub fn run(app: &App, args: &RecallArgs) -> Result<ExitStatus> {
    output::trace("config loaded");
    let store = super::open_read(app)?;
    output::trace("store opened");
    let query = args.query.join(" ");
    if query.trim().is_empty() {
        anyhow::bail!("the query is empty");
    }
    let mode = args
        .mode
        .map(Mode::from)
        .unwrap_or(app.config.config.recall.mode);
    let limit = args.limit.unwrap_or(app.config.config.recall.limit);
    super::check_filters(
        app,
        &store,
        args.filter.harness.as_deref(),
        args.filter.project.as_deref(),
    )?;
    let candidates = Candidates {
        filter: super::session_filter(&args.filter)?,
        role: args.role.map(deja_model::Role::from),
    };
    let mut engine =
        Engine::open(store, &app.paths.vectors(), Some(app.embed_settings())).one_shot();
    let answer = engine.recall(&Query {
        text: &query,
        mode,
        scope: &candidates,
        limit,
        tuning: Tuning::default(),
        per_session: args.per_session.map(usize::from),
    })?;
    let warning = answer
        .semantic_unavailable
        .as_ref()
        .map(|w| format!("semantic recall unavailable: {w}; answering lexically"));
    // Every warning, on stderr and in `--json`: the one above first.
    let warnings: Vec<String> = warning.iter().chain(&answer.notices).cloned().collect();
    for w in &warnings {
        output::warn(w);
    }
    let missing_half = answer.missing_half();
    let hits = answer.hits;
    // The process ends right after this command, without running library
    // destructors (see `deja_core::exit`); tearing the loaded model down here
    // would cost tens of milliseconds of a cold recall.
    std::mem::forget(engine);

    if args.json {
        output::print_json(&json!({
            // The echo is redacted too: a pasted secret never comes back out.
            "query": Redactor::from_config(&app.config.config.redact)?.text(&query),
            "mode": answer.mode.as_str(),
            "warning": warning,
            "warnings": warnings,
            "missing_half": missing_half,
            "hits": hits.iter().map(hit_json).collect::<Vec<_>>(),
        }))?;
    } else {
        print_hits(&hits, &query);
    }
    Ok(if hits.is_empty() {
        if !args.json {
            eprintln!("no matches");
        }
        ExitStatus::NoResults
    } else {
        ExitStatus::Success
    })
}

fn hit_json(h: &Hit) -> serde_json::Value {
    json!({
        "rank": h.rank,
        "score": h.score,
        "session_id": h.session_id,
        "harness": h.harness,
        "project": h.project,
        "started_at": rfc3339(h.started_at),
        "message_id": h.message_id,
        "message_index": h.message_index,
        "role": h.role,
        "timestamp": rfc3339(h.timestamp),
        "text": h.text,
        "source_path": h.source_path,
        "duplicates": h.duplicates,
        "more_in_session": h.more_in_session,
    })
}

fn print_hits(hits: &[Hit], query: &str) {
    let s = Style::stdout();
    let terms = lexical::terms(query);
    for h in hits {
        let project = h
            .project
            .name
            .as_deref()
            .or(h.project.id.as_deref())
            .unwrap_or("-");
        println!(
            "{:>2}. {}  {} · {} · {} · {}",
            h.rank,
            s.cyan(&h.session_id),
            h.harness,
            project,
            local_short(h.timestamp),
            h.role
        );
        let snip = snippet::highlighted(&h.text, &terms, 160, &|w| s.highlight(w));
        println!("    {snip}");
        if !h.duplicates.is_empty() {
            println!(
                "    {}",
                s.dim(&format!("(also in {} other sessions)", h.duplicates.len()))
            );
        }
        if h.more_in_session > 0 {
            let more = h.more_in_session;
            let noun = if more == 1 { "message" } else { "messages" };
            println!(
                "    {}",
                s.dim(&format!(
                    "({more} more matching {noun} in this session: deja show {})",
                    h.session_id
                ))
            );
        }
    }
}
