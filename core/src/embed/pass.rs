//! The embedding pass of `deja index`: every stored message without
//! embedding units is split into windows, each window's text is looked up in
//! the embedding cache (by content hash and model) and embedded only when
//! missing, in batches of similar length; units and vectors are committed page
//! by page, so a crash loses at most one page of work. The vector index is
//! synced at the end.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{params, OptionalExtension};

use super::Embedder;
use crate::store::{sha256_hex, Store};
use crate::vectors::{self, to_blob, VectorError};

/// Messages read per page.
const PAGE: usize = 512;

/// Counts from one pass.
#[derive(Debug, Clone, Default)]
pub struct PassReport {
    /// Messages that got embedding units.
    pub messages: usize,
    /// Units created.
    pub units: usize,
    /// Texts the model embedded.
    pub embedded: usize,
    /// Units whose vector came from the cache.
    pub cached: usize,
    /// Whether a model change discarded earlier units.
    pub model_changed: bool,
}

/// Errors of the pass.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The model failed.
    #[error(transparent)]
    Embed(#[from] super::EmbedError),
    /// The vector index failed.
    #[error(transparent)]
    Vectors(#[from] VectorError),
}

/// Progress of the pass.
pub trait PassProgress {
    /// The number of messages to embed is known.
    fn start(&mut self, messages: u64);
    /// `n` more messages are done.
    fn advance(&mut self, n: u64);
}

impl PassProgress for () {
    fn start(&mut self, _messages: u64) {}
    fn advance(&mut self, _n: u64) {}
}

const PENDING: &str = "FROM messages m
    WHERE length(trim(m.text, ' ' || char(9) || char(10) || char(13))) > 0
      AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.message = m.id)";

/// Embeds every message that has no units yet (the vector index is synced
/// afterwards by [`sync_vectors`]).
pub fn run(
    store: &mut Store,
    embedder: &mut Embedder,
    vectors_path: &Path,
    progress: &mut dyn PassProgress,
) -> Result<PassReport, PassError> {
    let mut report = PassReport::default();
    let model = embedder.id().to_string();
    if store.meta("embed_model")?.as_deref() != Some(model.as_str()) {
        // Another model (or windowing): its units cannot mix with this one's.
        let had = store.meta("embed_model")?.is_some();
        store
            .conn()
            .execute_batch("DELETE FROM chunks; DELETE FROM vector_trash;")
            .map_err(|e| store.wrap(e))?;
        let _ = std::fs::remove_file(vectors_path);
        store.set_meta("vectors_watermark", "0")?;
        report.model_changed = had;
    }
    embedder.known().save(store)?;

    progress.start(pending(store)?.max(0) as u64);

    let mut after = 0i64;
    loop {
        let page: Vec<Pending> = {
            let mut stmt = store
                .conn()
                .prepare(&format!(
                    "SELECT m.id, m.text,
                        (SELECT p.text FROM messages p WHERE p.session = m.session AND p.position = m.position - 1),
                        (SELECT n.text FROM messages n WHERE n.session = m.session AND n.position = m.position + 1)
                     {PENDING} AND m.id > ?1 ORDER BY m.id LIMIT {PAGE}"
                ))
                .map_err(|e| store.wrap(e))?;
            let rows = stmt
                .query_map([after], |r| {
                    Ok(Pending {
                        id: r.get(0)?,
                        text: r.get(1)?,
                        previous: r.get(2)?,
                        next: r.get(3)?,
                    })
                })
                .map_err(|e| store.wrap(e))?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(|e| store.wrap(e))?
        };
        let Some(last) = page.last() else { break };
        after = last.id;
        embed_page(store, embedder, &model, &page, &mut report)?;
        progress.advance(page.len() as u64);
    }

    Ok(report)
}

/// Brings the vector index in line with the store once the model is done
/// (call it after dropping the embedder, so their memory does not add up).
pub fn sync_vectors(
    store: &Store,
    vectors_path: &Path,
    known: &super::Known,
) -> Result<(), PassError> {
    if !vectors::in_sync(store, vectors_path)? {
        vectors::sync(store, vectors_path, &known.id, known.dims)?;
    }
    Ok(())
}

/// Messages still waiting for embedding units.
pub fn pending(store: &Store) -> crate::store::Result<i64> {
    store
        .conn()
        .query_row(&format!("SELECT count(*) {PENDING}"), [], |r| r.get(0))
        .map_err(|e| store.wrap(e))
}

/// A message waiting for its units, with its neighbours' text.
struct Pending {
    id: i64,
    text: String,
    previous: Option<String>,
    next: Option<String>,
}

fn embed_page(
    store: &mut Store,
    embedder: &mut Embedder,
    model: &str,
    page: &[Pending],
    report: &mut PassReport,
) -> Result<(), PassError> {
    // (message id, ordinal, hash) for every unit; texts to embed by hash.
    let mut units: Vec<(i64, usize, String)> = Vec::new();
    let mut texts: HashMap<String, String> = HashMap::new();
    for m in page {
        let unit_texts = embedder.units(m.previous.as_deref(), &m.text, m.next.as_deref());
        for (ordinal, w) in unit_texts.into_iter().enumerate() {
            let hash = sha256_hex(w.as_bytes());
            units.push((m.id, ordinal, hash.clone()));
            texts.entry(hash).or_insert(w);
        }
    }

    // Only texts the cache lacks go to the model, shortest first so batches
    // hold texts of similar length.
    let mut missing: Vec<(String, String)> = Vec::new();
    {
        let mut stmt = store
            .conn()
            .prepare("SELECT 1 FROM embeddings WHERE text_hash = ?1 AND model = ?2")
            .map_err(|e| store.wrap(e))?;
        for (hash, text) in &texts {
            let cached = stmt
                .query_row(params![hash, model], |_| Ok(()))
                .optional()
                .map_err(|e| store.wrap(e))?
                .is_some();
            if !cached {
                missing.push((hash.clone(), text.clone()));
            }
        }
    }
    missing.sort_by_key(|(_, t)| t.len());
    let inputs: Vec<String> = missing.iter().map(|(_, t)| t.clone()).collect();
    let vectors = embedder.embed(&inputs)?;
    report.embedded += inputs.len();
    report.cached += texts.len() - inputs.len();

    store.in_transaction(|tx| {
        let mut put = tx.prepare(
            "INSERT OR IGNORE INTO embeddings (text_hash, model, vector) VALUES (?1, ?2, ?3)",
        )?;
        for ((hash, _), v) in missing.iter().zip(&vectors) {
            put.execute(params![hash, model, to_blob(v)])?;
        }
        let mut unit = tx.prepare(
            "INSERT OR IGNORE INTO chunks (message, ordinal, text_hash) VALUES (?1, ?2, ?3)",
        )?;
        for (message, ordinal, hash) in &units {
            unit.execute(params![message, *ordinal as i64, hash])?;
        }
        Ok(())
    })?;
    report.messages += page.len();
    report.units += units.len();
    Ok(())
}
