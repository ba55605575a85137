//! The in-process recall engine every measurement opens: a store with its
//! model and vectors, with the embedding settings of a default config (the
//! windowing overridable by `DEJA_BENCH_CONTEXT`, `DEJA_BENCH_MAX_WINDOWS`
//! and `DEJA_BENCH_FIRST_WINDOWS`).

use std::path::Path;

use anyhow::{Context, Result};
use deja_embed::{Embedder, Settings};
use deja_recall::semantic::Vectors;
use deja_store::vectors::{self, VectorIndex};
use deja_store::Store;

use crate::env::installed_model;

/// What recall needs in-process.
pub struct Engine {
    /// The store.
    pub store: Store,
    /// The model.
    pub embedder: Embedder,
    /// The saved vector index.
    pub index: Option<VectorIndex>,
    /// Vectors above its watermark.
    pub unsynced: std::collections::HashMap<u64, Vec<f32>>,
}

impl Engine {
    /// The vectors the semantic ranker reads.
    pub fn vectors(&self) -> Vectors<'_> {
        Vectors {
            index: self.index.as_ref(),
            unsynced: &self.unsynced,
        }
    }
}

/// A number from the environment variable `key`, if it is set and valid.
fn env_number(key: &str) -> Option<usize> {
    std::env::var(key).ok().and_then(|v| v.parse().ok())
}

/// The `[embed]` lines that give the stores the bench indexes the windowing
/// of [`settings`] (`DEJA_BENCH_CONTEXT`, `DEJA_BENCH_MAX_WINDOWS`), so the
/// queries and the stored vectors always agree.
pub fn embed_overrides() -> String {
    let mut lines = String::new();
    if let Some(n) = env_number("DEJA_BENCH_CONTEXT") {
        lines.push_str(&format!("context_tokens = {n}\n"));
    }
    if let Some(n) = env_number("DEJA_BENCH_MAX_WINDOWS") {
        lines.push_str(&format!("max_windows = {n}\n"));
    }
    if let Some(n) = env_number("DEJA_BENCH_FIRST_WINDOWS") {
        lines.push_str(&format!("first_windows = {n}\n"));
    }
    lines
}

/// The embedding settings of a default config with the installed model.
pub fn settings() -> Result<Settings> {
    let (model_dir, runtime) = installed_model()?;
    Ok(Settings {
        model_dir,
        runtime_candidates: vec![runtime],
        max_tokens: 256,
        overlap_tokens: 32,
        context_tokens: env_number("DEJA_BENCH_CONTEXT").unwrap_or(48),
        max_windows: env_number("DEJA_BENCH_MAX_WINDOWS").unwrap_or(0),
        first_windows: env_number("DEJA_BENCH_FIRST_WINDOWS").unwrap_or(4),
        batch_size: 64,
        batch_tokens: 512,
        threads: 0,
        enabled: true,
        cache_dir: None,
    })
}

/// Opens a store with its model and vectors, as `deja recall` does.
pub fn engine(database: &Path, vector_path: &Path) -> Result<Engine> {
    let store = Store::open_read(database)?;
    let settings = settings()?;
    let embedder = Embedder::load(&settings, store.model_stamp().as_ref())?;
    let model = store
        .meta("embed_model")?
        .context("the store has no embeddings")?;
    let index = VectorIndex::open(vector_path, embedder.dims(), true);
    let unsynced = vectors::unsynced(&store, &model)?;
    Ok(Engine {
        store,
        embedder,
        index,
        unsynced,
    })
}
