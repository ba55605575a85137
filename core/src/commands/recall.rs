//! `deja recall QUERY`: finds the past messages that match a query by meaning
//! and by words. Falls back to lexical search, with one warning, when the
//! model or runtime is missing. Exit status 0 with hits, 1 without.

use anyhow::Result;
use deja_config::Mode;
use serde_json::json;

use crate::app::App;
use crate::cli::RecallArgs;
use crate::embed::query::QueryEncoder;
use crate::embed::{EmbedError, Known, Settings};
use crate::output::{self, local_short, rfc3339, Style};
use crate::recall::{self, lexical, semantic, snippet, Candidates, Hit, Tuning};
use crate::redact::Redactor;
use crate::store::Store;
use crate::vectors::{self, VectorIndex};
use crate::ExitStatus;

/// Checks, without loading the model, that semantic ranking can run: the
/// model and runtime are installed and are the ones the index was embedded
/// with. Returns the settings and what the store knows of the model.
fn semantic_plan(app: &App, store: &Store) -> Result<(Settings, Known), String> {
    let settings = Settings::from_config(&app.config.config.embed, &app.paths);
    if !settings.enabled {
        return Err("embeddings are disabled in the config (`embed.enabled`)".into());
    }
    let missing = |e: EmbedError| format!("{e}; hint: run scripts/fetch-model");
    let [onnx, ..] = settings.model_files().map_err(missing)?;
    settings.runtime().map_err(missing)?;
    let Some(known) = Known::from_store(store) else {
        return Err(
            "the index has no embeddings yet; run `deja index` with the model installed".into(),
        );
    };
    // The cheap fingerprint usually settles that the configured model is the
    // one the index was embedded with; when it does not, compare contents.
    if settings.fingerprint().as_deref() != Some(known.fingerprint.as_str()) {
        let bytes =
            std::fs::read(&onnx).map_err(|e| format!("cannot read `{}`: {e}", onnx.display()))?;
        let id = settings.model_id(&bytes);
        if id != known.id {
            return Err(format!(
                "the index was embedded with `{}`, not the configured `{id}`; run `deja index` to re-embed",
                known.id
            ));
        }
    }
    Ok((settings, known))
}

/// Loads the model and embeds `query` on another thread, so that lexical
/// ranking runs meanwhile. The vector is sent as soon as it exists: tearing
/// the model down afterwards is not waited for.
fn embed_in_background(
    settings: Settings,
    query: String,
) -> std::sync::mpsc::Receiver<Result<Vec<f32>, String>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || match QueryEncoder::load(&settings) {
        Ok(mut encoder) => {
            output::trace("model loaded");
            let v = encoder.encode(&query).map_err(|e| e.to_string());
            output::trace("query embedded");
            let _ = tx.send(v);
            // Dropped after the result is on its way.
            drop(encoder);
        }
        Err(e) => {
            let _ = tx.send(Err(e.to_string()));
        }
    });
    rx
}

/// Runs the command.
pub fn run(app: &App, args: &RecallArgs) -> Result<ExitStatus> {
    output::trace("config loaded");
    let store = super::open_read(app)?;
    output::trace("store opened");
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
    let tuning = Tuning::default();
    let depth = tuning.depth.max(limit * 3);

    let mut warning = None;
    let mut pending = None;
    if mode != Mode::Lexical {
        match semantic_plan(app, &store) {
            Ok((settings, known)) => {
                pending = Some((embed_in_background(settings, query.clone()), known))
            }
            Err(why) => warning = Some(why),
        }
    }
    let mut signals = recall::gather_lexical(&store, &query, mode, &candidates, depth)?;
    output::trace("lexical ranked");
    if let Some((receiver, known)) = pending {
        let vector = receiver
            .recv()
            .unwrap_or_else(|_| Err("the model failed while embedding the query".into()));
        match vector {
            Ok(v) => {
                let index = VectorIndex::open(&app.paths.vectors(), known.dims, true);
                let unsynced = if index.is_some() {
                    vectors::unsynced(&store, &known.id)?
                } else {
                    // No usable index file: score every stored vector directly.
                    output::warn("the vector index is missing or unreadable; scoring every vector directly (run `deja index` to rebuild it)");
                    vectors::all(&store, &known.id)?
                };
                let vectors = semantic::Vectors { index, unsynced };
                recall::add_semantic(
                    &store,
                    &mut signals,
                    &query,
                    &vectors,
                    &v,
                    &candidates,
                    depth,
                )?;
                output::trace("semantic ranked");
            }
            Err(why) => warning = Some(why),
        }
    }
    if let Some(why) = &warning {
        // Without vectors, what lexical ranking found is the answer.
        mode = Mode::Lexical;
        signals.mode = Mode::Lexical;
        output::warn(&format!(
            "semantic recall unavailable: {why}; answering lexically"
        ));
    }
    let hits = recall::hydrate(&store, &recall::rank(&signals, &tuning), limit)?;
    output::trace("searched");
    let warning = warning.map(|w| format!("semantic recall unavailable: {w}; answering lexically"));

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
