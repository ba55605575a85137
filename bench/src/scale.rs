//! Latency and memory at a size too large to embed on a small machine within
//! a benchmark run (100k messages take hours of model time on two cores).
//! The real `deja index` stores the generated corpus with embeddings off
//! (parse + SQLite + FTS5 throughput, peak memory, re-index); then every
//! message is cut into its real embedding units, and each unit gets a
//! synthetic unit vector (seeded, uniform on the sphere) written to the store
//! under the real model's id; the real vector sync builds the usearch index.
//! Recall then runs exactly as for a user, with the real model embedding the
//! query: cold `deja recall` processes and in-process search. The vectors say
//! nothing about quality; random vectors are the hard case for the HNSW
//! search, so latency is if anything overstated.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use deja_embed::Embedder;
use deja_store::embedding::Unit;
use deja_store::vectors;
use deja_store::{sha256_hex, Store};

use crate::engine::{engine, settings};
use crate::env::{BenchEnv, Cost};
use crate::generate::{self, Rng};
use crate::throughput::{cold_latency, warm_latency};

/// Results at one size.
#[derive(Debug, Clone)]
pub struct Scale {
    /// Messages stored.
    pub stored: i64,
    /// Embedding units (one synthetic vector each).
    pub units: usize,
    /// `deja index` with embeddings off.
    pub index: Cost,
    /// A second `deja index`, nothing changed.
    pub reindex: Cost,
    /// Writing the synthetic vectors and building the vector index.
    pub fill: Duration,
    /// Cold hybrid `deja recall` processes: (p50 ms, p95 ms, peak RSS bytes).
    pub cold: (f64, f64, u64),
    /// Cold `deja recall --mode lexical` processes: (p50 ms, p95 ms, peak RSS bytes).
    pub cold_lexical: (f64, f64, u64),
    /// In-process hybrid recall, query embedding included: (p50 ms, p95 ms).
    pub warm: (f64, f64),
    /// Store size on disk (database + vectors), bytes.
    pub disk: u64,
    /// `recall` through `deja mcp` over stdio: (p50 ms, p95 ms, server peak RSS bytes).
    pub mcp: (f64, f64, u64),
    /// Cold `deja context --hook gemini`: (p50 ms, p95 ms).
    pub hook: (f64, f64),
    /// Cold failure-note hook (`--on tool-failure`) on an error the corpus
    /// holds: (p50 ms, p95 ms, whether a note came back).
    pub failure_hook: (f64, f64, bool),
}

/// Runs the measurements at `messages`.
pub fn run(deja: &Path, messages: usize, cold_runs: usize, home: Option<&Path>) -> Result<Scale> {
    let mut env = BenchEnv::at(deja, "enabled = false\n", home)?;
    generate::corpus(&env.home, messages, 42 + messages as u64)?;
    env.set("GEMINI_CLI_HOME", env.home.clone());
    let index = env.run(&["index"])?;
    let reindex = env.run(&["index"])?;

    let started = Instant::now();
    let units = fill_vectors(&env.database(), &env.vectors())?;
    let fill = started.elapsed();

    // Embeddings on again: this run finds nothing to embed and derives the
    // fast-loading query model, as a user's first `deja index` would have.
    env.configure("")?;
    env.run(&["index"])?;
    anyhow::ensure!(
        vectors::in_sync(&Store::open_read(&env.database())?, &env.vectors())?,
        "the vector index does not match the store after the fill"
    );

    let cold = cold_latency(&env, cold_runs, &[])?;
    let cold_lexical = cold_latency(&env, cold_runs, &["--mode", "lexical"])?;

    let mut e = engine(&env.database(), &env.vectors())?;
    let stored = e.store.counts()?.messages;
    let warm = warm_latency(&mut e)?;
    let project = crate::mcp::project_dir(&e.store)?;
    drop(e);

    // The MCP server, its background index off (the store is complete).
    env.configure("[mcp]\nindex = false\n")?;
    let mcp = crate::mcp::server_latency(&env, 3)?;
    let hook = crate::mcp::hook_latency(&env, &project, cold_runs)?;
    let failure_hook = crate::mcp::failure_hook_latency(&env, generate::CORPUS_ERROR, cold_runs)?;
    Ok(Scale {
        stored,
        units,
        index,
        reindex,
        fill,
        cold,
        cold_lexical,
        warm,
        disk: env.store_size(),
        mcp,
        hook,
        failure_hook,
    })
}

/// Gives every message its real embedding units, each with a synthetic
/// vector, recorded under the real model's id, and syncs the vector index.
pub fn fill_vectors(database: &Path, vector_path: &Path) -> Result<usize> {
    let mut store = Store::open(database)?;
    let embedder = Embedder::load(&settings()?, None)?;
    let known = embedder.known();
    store.set_model_stamp(&known)?;
    let mut rng = Rng::new(7);
    let mut count = 0;
    let mut after = 0;
    loop {
        let page = store.pending_page(after, 4096)?;
        let Some(last) = page.last() else { break };
        after = last.id;
        let mut units = Vec::new();
        let mut vectors = Vec::new();
        for m in &page {
            let texts = embedder.units(m.previous.as_deref(), &m.text, m.next.as_deref());
            for (ordinal, u) in texts.iter().enumerate() {
                let hash = sha256_hex(u.as_bytes());
                vectors.push((hash.clone(), random_unit(&mut rng, known.dims)));
                units.push(Unit {
                    message: m.id,
                    ordinal,
                    text_hash: hash,
                });
                count += 1;
            }
        }
        let new: Vec<(&str, &[f32])> = vectors
            .iter()
            .map(|(h, v)| (h.as_str(), v.as_slice()))
            .collect();
        store.add_units(&known.id, &new, &units)?;
    }
    drop(embedder);
    vectors::sync(&store, vector_path, &known.id, known.dims)
        .context("building the vector index")?;
    Ok(count)
}

/// A vector uniform on the unit sphere (normalized Gaussian components).
fn random_unit(rng: &mut Rng, dims: usize) -> Vec<f32> {
    let mut uniform = || (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    let mut v: Vec<f32> = (0..dims)
        .map(|_| {
            let (a, b) = (uniform().max(f64::MIN_POSITIVE), uniform());
            ((-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()) as f32
        })
        .collect();
    let norm = v
        .iter()
        .map(|x| x * x)
        .sum::<f32>()
        .sqrt()
        .max(f32::MIN_POSITIVE);
    v.iter_mut().for_each(|x| *x /= norm);
    v
}
