//! The embedding pass of `deja index`: every stored message without
//! embedding units is split into windows, each window's text is looked up in
//! the embedding cache (by content hash and model) and embedded only when
//! missing, in batches of similar length; units and vectors are committed page
//! by page, newest sessions first, so a crash loses at most one page of work
//! and recall (which scores units the vector index does not hold yet) sees
//! each page as soon as it is committed. The vector index is synced at the end.

use std::collections::HashMap;
use std::path::Path;

use deja_embed::{EmbedError, Embedder, Known};
use deja_model::sha256_hex;
use deja_store::embedding::{PendingMessage as Pending, Unit};
use deja_store::vectors::{self, VectorError};
use deja_store::{Store, StoreError};

/// Messages read per page, at most.
const PAGE: usize = 512;
/// Messages of the first page: pages start small and double up to [`PAGE`],
/// so the newest sessions are committed (recallable by meaning) within
/// seconds of the pass's start, not after a whole page of the model's time.
const FIRST_PAGE: usize = 16;

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
    Store(#[from] StoreError),
    /// The model failed.
    #[error(transparent)]
    Embed(#[from] EmbedError),
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
    /// Every session that began at or after `started_at_ms` is done (the
    /// pass goes from the newest back).
    fn reached(&mut self, _started_at_ms: i64) {}
}

impl PassProgress for () {
    fn start(&mut self, _messages: u64) {}
    fn advance(&mut self, _n: u64) {}
}

impl PassProgress for crate::Quiet {
    fn start(&mut self, _messages: u64) {}
    fn advance(&mut self, _n: u64) {}
}

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
        store.reset_units(vectors_path)?;
        report.model_changed = had;
    }
    store.set_model_stamp(&embedder.known())?;

    progress.start(store.pending_count()?.max(0) as u64);

    // Newest sessions first: the last days become searchable by meaning
    // first, and an interrupted pass leaves the oldest for the next run.
    let mut after = None;
    for n in 0.. {
        let (page, last): (Vec<Pending>, _) = store.pending_newest(after, page_size(n))?;
        if page.is_empty() {
            break;
        }
        after = last;
        embed_page(store, embedder, &model, &page, &mut report, progress)?;
        if let Some(k) = last {
            progress.reached(k.started_at);
        }
    }

    Ok(report)
}

/// Messages in page `n` of a pass (from 0): [`FIRST_PAGE`], doubling up to
/// [`PAGE`].
fn page_size(n: u32) -> usize {
    (FIRST_PAGE << n.min(16)).min(PAGE)
}

/// Brings the vector index in line with the store once the model is done
/// (call it after dropping the embedder, so their memory does not add up).
pub fn sync_vectors(store: &Store, vectors_path: &Path, known: &Known) -> Result<(), PassError> {
    if !vectors::in_sync(store, vectors_path)? {
        vectors::sync(store, vectors_path, &known.id, known.dims)?;
    }
    Ok(())
}

/// Messages still waiting for embedding units.
pub fn pending(store: &Store) -> deja_store::Result<i64> {
    store.pending_count()
}

fn embed_page(
    store: &mut Store,
    embedder: &mut Embedder,
    model: &str,
    page: &[Pending],
    report: &mut PassReport,
    progress: &mut dyn PassProgress,
) -> Result<(), PassError> {
    // Every unit of the page; texts to embed by hash.
    let mut units: Vec<Unit> = Vec::new();
    let mut texts: HashMap<String, String> = HashMap::new();
    for m in page {
        let unit_texts = embedder.units(m.previous.as_deref(), &m.text, m.next.as_deref());
        for (ordinal, w) in unit_texts.into_iter().enumerate() {
            let hash = sha256_hex(w.as_bytes());
            units.push(Unit {
                message: m.id,
                ordinal,
                text_hash: hash.clone(),
            });
            texts.entry(hash).or_insert(w);
        }
    }

    // Only texts the cache lacks go to the model, shortest first so batches
    // hold texts of similar length.
    let mut missing: Vec<(String, String)> = Vec::new();
    for (hash, text) in &texts {
        if !store.has_cached_vector(hash, model)? {
            missing.push((hash.clone(), text.clone()));
        }
    }
    missing.sort_by_key(|(_, t)| t.len());
    let inputs: Vec<String> = missing.iter().map(|(_, t)| t.clone()).collect();
    // Progress moves with each batch, in messages: the share of the page's
    // texts embedded so far (a page of cached texts moves at once below).
    let messages = page.len() as u64;
    let mut shown = 0u64;
    let total_texts = inputs.len().max(1) as u64;
    let vectors = embedder.embed_with_progress(&inputs, &mut |done| {
        let now = (done as u64).saturating_mul(messages) / total_texts;
        if now > shown {
            progress.advance(now - shown);
            shown = now;
        }
    })?;
    if messages > shown {
        progress.advance(messages - shown);
    }
    report.embedded += inputs.len();
    report.cached += texts.len() - inputs.len();

    let new: Vec<(&str, &[f32])> = missing
        .iter()
        .zip(&vectors)
        .map(|((hash, _), v)| (hash.as_str(), v.as_slice()))
        .collect();
    store.add_units(model, &new, &units)?;
    report.messages += page.len();
    report.units += units.len();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_start_small_and_double_up_to_the_page_size() {
        let sizes: Vec<usize> = (0..8).map(page_size).collect();
        assert_eq!(sizes, [16, 32, 64, 128, 256, 512, 512, 512]);
        assert!((8..200).all(|n| page_size(n) == PAGE));
    }
}
