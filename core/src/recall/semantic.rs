//! Semantic ranking: the query's embedding against the embedding units of
//! every candidate message. Unfiltered searches use the HNSW index; filtered
//! ones score the allowed units exactly when they are few, and use a filtered
//! HNSW search otherwise. Units embedded after the index file was last saved
//! are scored exactly too, so recall sees them while an index run writes.

use std::collections::{HashMap, HashSet};

use rusqlite::params_from_iter;

use super::Candidates;
use crate::embed::dot;
use crate::store::Store;
use crate::vectors::VectorIndex;

/// Up to this many allowed units are scored exactly.
const EXACT_LIMIT: usize = 20_000;

/// Vectors the semantic ranker can use.
pub struct Vectors {
    /// The saved index, when there is one.
    pub index: Option<VectorIndex>,
    /// Units above the saved index's watermark.
    pub unsynced: HashMap<u64, Vec<f32>>,
}

/// The best `k` messages for `query` (an embedding) among `candidates`:
/// (message id, cosine similarity of its best unit).
pub fn search(
    store: &Store,
    vectors: &Vectors,
    query: &[f32],
    candidates: &Candidates,
    k: usize,
) -> crate::store::Result<Vec<(i64, f64)>> {
    let units = k * 4;
    let mut scored: Vec<(u64, f32)> = Vec::new();
    if candidates.is_unrestricted() {
        if let Some(index) = &vectors.index {
            scored.extend(index.search(query, units).unwrap_or_default());
        }
        scored.extend(
            vectors
                .unsynced
                .iter()
                .map(|(key, v)| (*key, dot(query, v))),
        );
    } else {
        let allowed = allowed_units(store, candidates)?;
        if allowed.len() <= EXACT_LIMIT {
            let mut buf = Vec::new();
            for key in &allowed {
                if let Some(v) = vectors.unsynced.get(key) {
                    scored.push((*key, dot(query, v)));
                } else if let Some(index) = &vectors.index {
                    if index.contains(*key) && index.vector(*key, &mut buf) {
                        scored.push((*key, dot(query, &buf)));
                    }
                }
            }
        } else {
            if let Some(index) = &vectors.index {
                scored.extend(
                    index
                        .filtered_search(query, units, |key| allowed.contains(&key))
                        .unwrap_or_default(),
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
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.truncate(units);
    let messages = messages_of(store, &scored.iter().map(|s| s.0).collect::<Vec<_>>())?;
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

fn allowed_units(store: &Store, candidates: &Candidates) -> crate::store::Result<HashSet<u64>> {
    let (cond, args) = candidates.sql();
    let sql = format!(
        "SELECT c.id FROM chunks c
         JOIN messages m ON m.id = c.message
         JOIN sessions s ON s.id = m.session
         WHERE {cond}"
    );
    let mut stmt = store.conn().prepare(&sql).map_err(|e| store.wrap(e))?;
    let rows = stmt
        .query_map(params_from_iter(args), |r| r.get::<_, i64>(0))
        .map_err(|e| store.wrap(e))?;
    let mut out = HashSet::new();
    for r in rows {
        out.insert(r.map_err(|e| store.wrap(e))? as u64);
    }
    Ok(out)
}

fn messages_of(store: &Store, keys: &[u64]) -> crate::store::Result<HashMap<u64, i64>> {
    let mut out = HashMap::new();
    for batch in keys.chunks(500) {
        let marks = vec!["?"; batch.len()].join(",");
        let sql = format!("SELECT id, message FROM chunks WHERE id IN ({marks})");
        let mut stmt = store.conn().prepare(&sql).map_err(|e| store.wrap(e))?;
        let rows = stmt
            .query_map(params_from_iter(batch.iter().map(|k| *k as i64)), |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
            })
            .map_err(|e| store.wrap(e))?;
        for r in rows {
            let (id, message) = r.map_err(|e| store.wrap(e))?;
            out.insert(id as u64, message);
        }
    }
    Ok(out)
}
