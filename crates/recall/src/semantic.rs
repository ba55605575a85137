//! Semantic ranking: the query's embedding against the embedding units of
//! every candidate message. Unfiltered searches use the HNSW index; filtered
//! ones score the allowed units exactly when they are few, and use a filtered
//! HNSW search otherwise. Units embedded after the index file was last saved
//! are scored exactly too, so recall sees them while an index run writes.
//!
//! A message's similarity is its best window's, discounted for its number
//! of windows: a long message (a pasted file, a log) has many, so many
//! chances to come near any query by chance, and its best is lowered by how
//! the expected best of that many draws of noise grows ([`discounted`]).

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

/// The best `k` messages for `query` (an embedding) among `candidates`
/// ([`best_messages`]).
pub fn search(
    store: &Store,
    vectors: &Vectors<'_>,
    query: &[f32],
    candidates: &Candidates,
    k: usize,
) -> Result<Best> {
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

/// How much a message's best similarity is lowered per step of √(2 ln n)
/// of its n windows ([`discounted`]). Chosen on the tuning half of the
/// real-transcript set, where 0.02 to 0.03 rank alike and 0.04 loses a vague
/// query (BENCHMARKS.md, "Many windows, many chances"); a message of one
/// window, every LoCoMo turn among them, keeps its similarity.
pub const WINDOW_DISCOUNT: f64 = 0.025;

/// The best messages of a semantic search.
#[derive(Debug, Clone, Default)]
pub struct Best {
    /// (message id, cosine similarity of its best unit), in the order of the
    /// similarities [`discounted`] for the messages' windows, best first.
    pub messages: Vec<(i64, f64)>,
    /// Message → how many windows it has in the store.
    pub windows: HashMap<i64, usize>,
}

/// The best `k` messages of the `scored` units, by their best unit's
/// similarity discounted for their windows.
pub fn best_messages(store: &Store, mut scored: Vec<(u64, f32)>, k: usize) -> Result<Best> {
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.truncate(k * UNITS_PER_MESSAGE);
    let messages = store.messages_of_units(&scored.iter().map(|s| s.0).collect::<Vec<_>>())?;
    // Best unit per message, and each message's windows.
    let mut best: HashMap<i64, f64> = HashMap::new();
    let mut windows: HashMap<i64, usize> = HashMap::new();
    for (key, score) in scored {
        // Keys no chunk row names are stale leftovers of deleted units.
        if let Some((message, count)) = messages.get(&key) {
            let e = best.entry(*message).or_insert(f64::MIN);
            *e = e.max(f64::from(score));
            windows.insert(*message, *count);
        }
    }
    let list: Vec<(i64, f64)> = best.iter().map(|(id, sim)| (*id, *sim)).collect();
    let mut order = discounted(&list, &windows, WINDOW_DISCOUNT);
    order.truncate(k);
    windows.retain(|id, _| order.iter().any(|x| x.0 == *id));
    Ok(Best {
        messages: order.into_iter().map(|(id, _)| (id, best[&id])).collect(),
        windows,
    })
}

/// `list` (message, similarity of its best window) with each similarity
/// less `discount` × √(2 ln n) for a message of n windows (`windows`; one
/// when unknown), best first, ties to the lower id. √(2 ln n) is how the
/// expected maximum of n independent standard normal draws grows, so
/// `discount` plays the part of the spread of a window's similarity to a
/// query it does not answer; a message of one window keeps its similarity.
pub fn discounted(
    list: &[(i64, f64)],
    windows: &HashMap<i64, usize>,
    discount: f64,
) -> Vec<(i64, f64)> {
    let mut out: Vec<(i64, f64)> = list
        .iter()
        .map(|(id, sim)| {
            let n = windows.get(id).copied().unwrap_or(1).max(1) as f64;
            (*id, sim - discount * (2.0 * n.ln()).sqrt())
        })
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_windows_are_discounted_by_the_expected_best_of_as_many_draws() {
        let list = [(1, 0.60), (2, 0.58), (3, 0.40)];
        let windows: HashMap<i64, usize> = [(1, 100), (2, 1)].into();
        let out = discounted(&list, &windows, 0.025);
        // 100 windows: 0.60 - 0.025 * sqrt(2 ln 100) = 0.60 - 0.0759.
        assert_eq!(out.iter().map(|x| x.0).collect::<Vec<_>>(), [2, 1, 3]);
        assert!((out[0].1 - 0.58).abs() < 1e-12, "{out:?}");
        assert!((out[1].1 - (0.60 - 0.025 * (2.0 * 100f64.ln()).sqrt())).abs() < 1e-12);
        // A message of unknown windows counts as one: no discount.
        assert!((out[2].1 - 0.40).abs() < 1e-12);
        assert_eq!(discounted(&list, &windows, 0.0), list.to_vec());
    }
}
