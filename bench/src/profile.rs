//! Where one in-process recall spends its time: each stage of a hybrid search
//! timed on its own over [`QUERIES`](crate::queries::QUERIES), on a store
//! that already exists (a HOME that `deja index` filled).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use deja_config::Mode;
use deja_recall::{lexical, Candidates, Tuning};

use crate::engine::{engine, Engine};
use crate::env::percentiles;
use crate::queries::QUERIES;

/// Stage names, in the order a search runs them.
const STAGES: &[&str] = &[
    "query embedding",
    "lexical, messages",
    "lexical, sessions",
    "phrases",
    "lexical half (all of the above but the embedding, with locating)",
    "semantic half (vector search, locating)",
    "rank",
    "hydrate (10 hits, snippets)",
    "whole search, embedding included",
];

/// [`stages`] on the store of `home`, a HOME that `deja index` filled.
pub fn run(home: &Path, rounds: usize) -> Result<String> {
    let data = home.join(".local/share/deja");
    let mut e = engine(&data.join("index.sqlite"), &data.join("vectors.usearch"))?;
    stages(&mut e, rounds)
}

/// Times every stage `rounds` times per query (after one warm-up round) and
/// returns a Markdown table of p50/p95 per stage.
pub fn stages(e: &mut Engine, rounds: usize) -> Result<String> {
    let all = Candidates::default();
    let depth = Tuning::default().depth;
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); STAGES.len()];
    for round in 0..=rounds {
        for q in QUERIES {
            let mut t = [0.0f64; 9];
            let lap = |since: &Instant| since.elapsed().as_secs_f64() * 1000.0;
            let s = Instant::now();
            let qv = e.embedder.embed_query(q)?;
            t[0] = lap(&s);
            let s = Instant::now();
            lexical::search(&e.store, q, &all, lexical::Level::Message, depth)?;
            t[1] = lap(&s);
            let s = Instant::now();
            lexical::search(&e.store, q, &all, lexical::Level::Session, depth)?;
            t[2] = lap(&s);
            let s = Instant::now();
            lexical::phrase_coverage(&e.store, q, &all)?;
            t[3] = lap(&s);
            let s = Instant::now();
            let mut signals = deja_recall::gather_lexical(&e.store, q, Mode::Hybrid, &all, depth)?;
            t[4] = lap(&s);
            let s = Instant::now();
            deja_recall::add_semantic(&e.store, &mut signals, q, &e.vectors(), &qv, &all, depth)?;
            t[5] = lap(&s);
            let s = Instant::now();
            let ranked = deja_recall::rank(&signals, &Tuning::default());
            t[6] = lap(&s);
            let s = Instant::now();
            deja_recall::hydrate(&e.store, &ranked, 10)?;
            t[7] = lap(&s);
            // The whole search as a user runs it, timed separately.
            let s = Instant::now();
            let qv = e.embedder.embed_query(q)?;
            deja_recall::search(
                &e.store,
                q,
                Mode::Hybrid,
                &all,
                Some((&e.vectors(), qv.as_slice())),
                10,
            )?;
            t[8] = lap(&s);
            if round > 0 {
                for (i, v) in t.iter().enumerate() {
                    times[i].push(*v);
                }
            }
        }
    }
    let counts = e.store.counts()?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} messages, {} sessions, {} units; {} queries × {rounds} rounds\n",
        counts.messages,
        counts.sessions,
        counts.chunks,
        QUERIES.len()
    );
    let _ = writeln!(out, "| stage | p50 ms | p95 ms |\n|---|---|---|");
    for (name, v) in STAGES.iter().zip(times) {
        let (p50, p95) = percentiles(v);
        let _ = writeln!(out, "| {name} | {p50:.1} | {p95:.1} |");
    }
    Ok(out)
}
