//! Semantic ranking: the query's embedding against the embedding units of
//! every candidate message. Unfiltered searches use the HNSW index; filtered
//! ones score the allowed units exactly when they are few, and use a filtered
//! HNSW search otherwise. Units embedded after the index file was last saved
//! are scored exactly too, so recall sees them while an index run writes.

use std::collections::HashMap;

use deja_embed::dot;
use deja_store::vectors::VectorIndex;
use deja_store::Store;

use crate::{Candidates, Result};

/// Up to this many allowed units are scored exactly.
const EXACT_LIMIT: usize = 20_000;

/// Vectors the semantic ranker can use.
pub struct Vectors<'a> {
    /// The saved index, when there is one.
    pub index: Option<&'a VectorIndex>,
    /// Units above the saved index's watermark.
    pub unsynced: &'a HashMap<u64, Vec<f32>>,
}

/// Units searched for each message wanted: a long message has several.
const UNITS_PER_MESSAGE: usize = 4;

/// The best `k` messages for `query` (an embedding) among `candidates`:
/// (message id, cosine similarity of its best unit).
pub fn search(
    store: &Store,
    vectors: &Vectors<'_>,
    query: &[f32],
    candidates: &Candidates,
    k: usize,
) -> Result<Vec<(i64, f64)>> {
    let scored = if candidates.is_unrestricted() {
        nearest_units(vectors, query, k)?
    } else {
        nearest_allowed(store, vectors, query, candidates, k)?
    };
    best_messages(store, scored, k)
}

/// The units nearest `query` in the whole history, enough for the best `k`
/// messages. It reads no store, so the engine runs it on the thread that
/// embedded the query, beside the lexical half.
pub fn nearest_units(vectors: &Vectors<'_>, query: &[f32], k: usize) -> Result<Vec<(u64, f32)>> {
    let mut scored: Vec<(u64, f32)> = Vec::new();
    if let Some(index) = vectors.index {
        scored.extend(index.search(query, k * UNITS_PER_MESSAGE)?);
    }
    scored.extend(
        vectors
            .unsynced
            .iter()
            .map(|(key, v)| (*key, dot(query, v))),
    );
    Ok(scored)
}

/// The units nearest `query` among those of `candidates`.
fn nearest_allowed(
    store: &Store,
    vectors: &Vectors<'_>,
    query: &[f32],
    candidates: &Candidates,
    k: usize,
) -> Result<Vec<(u64, f32)>> {
    let mut scored: Vec<(u64, f32)> = Vec::new();
    let allowed = store.units_in_scope(candidates)?;
    if allowed.len() <= EXACT_LIMIT {
        let mut buf = Vec::new();
        for key in &allowed {
            if let Some(v) = vectors.unsynced.get(key) {
                scored.push((*key, dot(query, v)));
            } else if let Some(index) = vectors.index {
                if index.contains(*key) && index.vector(*key, &mut buf) {
                    scored.push((*key, dot(query, &buf)));
                }
            }
        }
    } else {
        if let Some(index) = vectors.index {
            scored.extend(
                index
                    .filtered_search(query, k * UNITS_PER_MESSAGE, |key| allowed.contains(&key))?,
            );
        }
        scored.extend(
            vectors
                .unsynced
                .iter()
                .filter(|(key, _)| allowed.contains(key))
                .map(|(key, v)| (*key, dot(query, v))),
        );
    }
    Ok(scored)
}

/// The best `k` messages of the `scored` units: (message id, similarity of
/// its best unit), best first.
pub fn best_messages(
    store: &Store,
    mut scored: Vec<(u64, f32)>,
    k: usize,
) -> Result<Vec<(i64, f64)>> {
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.truncate(k * UNITS_PER_MESSAGE);
    let messages = store.messages_of_units(&scored.iter().map(|s| s.0).collect::<Vec<_>>())?;
    // Best unit per message.
    let mut best: HashMap<i64, f64> = HashMap::new();
    for (key, score) in scored {
        // Keys no chunk row names are stale leftovers of deleted units.
        if let Some(message) = messages.get(&key) {
            let e = best.entry(*message).or_insert(f64::MIN);
            *e = e.max(f64::from(score));
        }
    }
    let mut out: Vec<(i64, f64)> = best.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.truncate(k);
    Ok(out)
}
