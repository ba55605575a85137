//! `deja recall QUERY`: finds the past messages that match a query by meaning
//! and by words. Falls back to lexical search, with one warning, when the
//! model or runtime is missing. Exit status 0 with hits, 1 without.

use anyhow::Result;
use deja_config::Mode;
use serde_json::json;

use crate::app::App;
use crate::cli::RecallArgs;
use crate::embed::{Embedder, Settings};
use crate::output::{self, local_short, rfc3339, Style};
use crate::recall::{self, lexical, semantic, snippet, Candidates, Hit};
use crate::redact::Redactor;
use crate::store::Store;
use crate::vectors::{self, VectorIndex};
use crate::ExitStatus;

/// Loads what semantic ranking needs, or says why it cannot run.
fn semantic_parts(
    app: &App,
    store: &Store,
    query: &str,
) -> Result<(semantic::Vectors, Vec<f32>), String> {
    let settings = Settings::from_config(&app.config.config.embed, &app.paths);
    if !settings.enabled {
        return Err("embeddings are disabled in the config (`embed.enabled`)".into());
    }
    let missing = |e: crate::embed::EmbedError| format!("{e}; hint: run scripts/fetch-model");
    settings.model_files().map_err(missing)?;
    settings.runtime().map_err(missing)?;
    let stored = store.meta("embed_model").map_err(|e| e.to_string())?;
    let Some(stored) = stored else {
        return Err(
            "the index has no embeddings yet; run `deja index` with the model installed".into(),
        );
    };
    let mut embedder = Embedder::load(&settings, crate::embed::Known::from_store(store).as_ref())
        .map_err(|e| {
        if e.is_missing() {
            format!("{e}; hint: run scripts/fetch-model")
        } else {
            e.to_string()
        }
    })?;
    if embedder.id() != stored {
        return Err(format!(
            "the index was embedded with `{stored}`, not the configured `{}`; run `deja index` to re-embed",
            embedder.id()
        ));
    }
    let query_vector = embedder.embed_query(query).map_err(|e| e.to_string())?;
    let index = VectorIndex::open(&app.paths.vectors(), embedder.dims(), true);
    let unsynced = vectors::unsynced(store, &stored).map_err(|e| e.to_string())?;
    Ok((semantic::Vectors { index, unsynced }, query_vector))
}

/// Runs the command.
pub fn run(app: &App, args: &RecallArgs) -> Result<ExitStatus> {
    let store = super::open_read(app)?;
    let query = args.query.join(" ");
    if query.trim().is_empty() {
        anyhow::bail!("the query is empty");
    }
    let mut mode = args
        .mode
        .map(Mode::from)
        .unwrap_or(app.config.config.recall.mode);
    let limit = args.limit.unwrap_or(app.config.config.recall.limit).max(1);
    let candidates = Candidates {
        filter: args.filter.to_filter()?,
        role: args.role.map(crate::model::Role::from),
    };

    let mut warning = None;
    let parts = if mode == Mode::Lexical {
        None
    } else {
        match semantic_parts(app, &store, &query) {
            Ok(p) => Some(p),
            Err(why) => {
                warning = Some(format!(
                    "semantic recall unavailable: {why}; answering lexically"
                ));
                mode = Mode::Lexical;
                None
            }
        }
    };
    if let Some(w) = &warning {
        output::warn(w);
    }
    let hits = recall::search(
        &store,
        &query,
        mode,
        &candidates,
        parts.as_ref().map(|(v, q)| (v, q.as_slice())),
        limit,
    )?;

    if args.json {
        output::print_json(&json!({
            // The echo is redacted too: a pasted secret never comes back out.
            "query": Redactor::from_config(&app.config.config.redact)?.text(&query),
            "mode": mode.as_str(),
            "warning": warning,
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
    }
}
