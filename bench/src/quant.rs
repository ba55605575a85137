//! Choosing the vector index's scalar type on real embeddings: for f32, f16
//! and i8, recall@10 of the HNSW search against exact search, median query
//! time, file size and build time, over the vectors of an indexed store.

use std::time::Instant;

use anyhow::Result;
use deja_embed::dot;
use deja_store::Store;
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use crate::env::percentiles;

/// One scalar type's figures.
#[derive(Debug, Clone)]
pub struct QuantRow {
    /// f32, f16 or i8.
    pub kind: &'static str,
    /// Vectors indexed.
    pub vectors: usize,
    /// Share of the exact 10 nearest found by the index.
    pub recall10: f64,
    /// Median query time, ms.
    pub query_ms: f64,
    /// Saved file size, bytes.
    pub bytes: u64,
    /// Build time, s.
    pub build_s: f64,
}

/// Measures each scalar type over the vectors of `store`.
pub fn measure(store: &Store, queries: usize) -> Result<Vec<QuantRow>> {
    let vectors = store.all_vectors()?;
    anyhow::ensure!(!vectors.is_empty(), "the store has no vectors");
    let dims = vectors[0].1.len();
    let step = (vectors.len() / queries.max(1)).max(1);
    let probes: Vec<&Vec<f32>> = vectors
        .iter()
        .step_by(step)
        .take(queries)
        .map(|v| &v.1)
        .collect();
    // Exact neighbours by brute force.
    let truth: Vec<Vec<u64>> = probes
        .iter()
        .map(|q| {
            let mut scored: Vec<(u64, f32)> =
                vectors.iter().map(|(k, v)| (*k, dot(q, v))).collect();
            scored.sort_by(|a, b| b.1.total_cmp(&a.1));
            scored.into_iter().take(10).map(|s| s.0).collect()
        })
        .collect();
    let mut rows = Vec::new();
    for (kind, scalar) in [
        ("f32", ScalarKind::F32),
        ("f16", ScalarKind::F16),
        ("i8", ScalarKind::I8),
    ] {
        let index = Index::new(&IndexOptions {
            dimensions: dims,
            metric: MetricKind::Cos,
            quantization: scalar,
            connectivity: 16,
            expansion_add: 128,
            expansion_search: 64,
            multi: false,
        })?;
        index.reserve(vectors.len())?;
        let started = Instant::now();
        for (k, v) in &vectors {
            index.add(*k, v)?;
        }
        let build_s = started.elapsed().as_secs_f64();
        let mut found = 0usize;
        let mut times = Vec::new();
        for (q, t) in probes.iter().zip(&truth) {
            let started = Instant::now();
            let m = index.search(q, 10)?;
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            found += m.keys.iter().filter(|k| t.contains(k)).count();
        }
        let file = tempfile::NamedTempFile::new()?;
        index.save(&file.path().to_string_lossy())?;
        let bytes = std::fs::metadata(file.path())?.len();
        rows.push(QuantRow {
            kind,
            vectors: vectors.len(),
            recall10: found as f64 / (probes.len() * 10) as f64,
            query_ms: percentiles(times).0,
            bytes,
            build_s,
        });
    }
    Ok(rows)
}
