//! Throughput, re-index, latency and memory on a generated corpus: the real
//! `deja index` end to end against the embedder alone on the same texts, a
//! second run with nothing changed, a run after appending one session, cold
//! `deja recall` processes, and in-process recall latency.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;
use deja_config::Mode;
use deja_recall::Candidates;

use crate::engine::{engine, Engine};
use crate::env::{percentiles, BenchEnv, Cost};
use crate::generate;
use crate::queries::QUERIES;

/// Results at one corpus size.
#[derive(Debug, Clone)]
pub struct Throughput {
    /// Messages in the store after indexing.
    pub stored: i64,
    /// Embedding units (windows) created.
    pub units: i64,
    /// First index.
    pub index: Cost,
    /// The embedder alone on the same messages' windows (all of them, or
    /// the windows of every k-th session when sampled).
    pub embed_alone: Duration,
    /// Messages whose windows the embedder-alone pass embedded.
    pub embed_messages: i64,
    /// Second index, nothing changed.
    pub reindex: Cost,
    /// Index after appending one session.
    pub append: Cost,
    /// Cold recall processes: (p50 ms, p95 ms, peak RSS bytes).
    pub cold: (f64, f64, u64),
    /// In-process hybrid recall: (p50 ms, p95 ms).
    pub warm: (f64, f64),
    /// Store size on disk (database + vectors), bytes.
    pub disk: u64,
    /// Scalar types compared on this store's vectors, when asked.
    pub quantization: Option<Vec<crate::quant::QuantRow>>,
    /// Where in-process recall spends its time (a Markdown table), when asked.
    pub stages: Option<String>,
}

impl Throughput {
    /// End-to-end messages per second.
    pub fn rate(&self) -> f64 {
        self.stored as f64 / self.index.wall.as_secs_f64()
    }

    /// Embedder-alone messages per second.
    pub fn embed_rate(&self) -> f64 {
        self.embed_messages as f64 / self.embed_alone.as_secs_f64()
    }
}

/// Runs every measurement at one size; `details` adds the scalar-type
/// comparison and the time per recall stage. `embed_sample`, when set, limits the
/// embedder-alone pass to about that many messages: the windows of every k-th
/// session, which keeps its mix of lengths (at 100k messages the full pass
/// takes as long as the index itself).
pub fn run(
    deja: &Path,
    messages: usize,
    cold_runs: usize,
    details: bool,
    embed_sample: Option<usize>,
) -> Result<Throughput> {
    let mut env = BenchEnv::new(deja, "")?;
    generate::corpus(&env.home, messages, 42 + messages as u64)?;
    env.set("GEMINI_CLI_HOME", env.home.clone());
    let index = env.run(&["index"])?;

    // Process measurements first: a child's peak memory counts what this
    // process holds when it starts it, so nothing big is loaded here yet.
    let reindex = env.run(&["index"])?;
    generate::append_session(&env.home, 7)?;
    let append = env.run(&["index"])?;

    let cold = cold_latency(&env, cold_runs, &[])?;

    let mut e = engine(&env.database(), &env.vectors())?;
    let counts = e.store.counts()?;
    // The embedder alone, on the same texts deja embedded (each message's
    // windows with their neighbours' context), sorted by length over the
    // whole corpus, which is the best batching there is.
    let sessions = e.store.texts_by_session()?;
    let every = match embed_sample {
        Some(n) if n > 0 => (counts.messages as usize / n).max(1),
        _ => 1,
    };
    let mut units: Vec<String> = Vec::new();
    let mut embed_messages = 0i64;
    for session in sessions.iter().step_by(every) {
        embed_messages += session.len() as i64;
        for (i, text) in session.iter().enumerate() {
            if text.trim().is_empty() {
                continue;
            }
            let previous = i
                .checked_sub(1)
                .and_then(|p| session.get(p))
                .map(String::as_str);
            let next = session.get(i + 1).map(String::as_str);
            units.extend(e.embedder.units(previous, text, next));
        }
    }
    units.sort_by_key(|w| w.len());
    let started = Instant::now();
    e.embedder.embed(&units)?;
    let embed_alone = started.elapsed();

    let warm = warm_latency(&mut e)?;
    let stages = if details {
        Some(crate::profile::stages(&mut e, 3)?)
    } else {
        None
    };
    let disk = env.store_size();
    Ok(Throughput {
        stored: counts.messages,
        units: counts.chunks,
        index,
        embed_alone,
        embed_messages,
        reindex,
        append,
        cold,
        warm,
        disk,
        stages,
        quantization: if details {
            Some(crate::quant::measure(&e.store, 200)?)
        } else {
            None
        },
    })
}

/// Cold `deja recall` processes over [`QUERIES`] with `extra` arguments:
/// (p50 ms, p95 ms, peak RSS bytes).
pub fn cold_latency(env: &BenchEnv, runs: usize, extra: &[&str]) -> Result<(f64, f64, u64)> {
    let mut times = Vec::new();
    let mut rss = 0;
    for i in 0..runs {
        let mut args = vec!["recall", QUERIES[i % QUERIES.len()], "-n", "10"];
        args.extend_from_slice(extra);
        let c = env.run(&args)?;
        times.push(c.wall.as_secs_f64() * 1000.0);
        rss = rss.max(c.peak_rss);
    }
    let (p50, p95) = percentiles(times);
    Ok((p50, p95, rss))
}

/// In-process hybrid recall over [`QUERIES`], query embedding included, after
/// one warm-up round: (p50 ms, p95 ms).
pub fn warm_latency(e: &mut Engine) -> Result<(f64, f64)> {
    let mut warm = Vec::new();
    for round in 0..3 {
        for q in QUERIES {
            let started = Instant::now();
            let qv = e.embedder.embed_query(q)?;
            deja_recall::search(
                &e.store,
                q,
                Mode::Hybrid,
                &Candidates::default(),
                Some((&e.vectors(), qv.as_slice())),
                10,
            )?;
            if round > 0 {
                warm.push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
    }
    Ok(percentiles(warm))
}

/// Indexing one large aider history with embeddings off: time and memory.
pub struct BigFile {
    /// File size.
    pub bytes: u64,
    /// Messages stored.
    pub messages: i64,
    /// What indexing cost.
    pub cost: Cost,
}

/// Writes one aider history of about `megabytes` MB and indexes it.
pub fn big_file(deja: &Path, megabytes: usize) -> Result<BigFile> {
    let mut env = BenchEnv::new(deja, "enabled = false\n")?;
    let dir = env.home.join("work/big");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(".aider.chat.history.md");
    let target = megabytes * 1024 * 1024;
    let mut rng = generate::Rng::new(9);
    let mut text = String::with_capacity(target + 4096);
    let mut n = 0u64;
    while text.len() < target {
        n += 1;
        text.push_str(&format!(
            "\n# aider chat started at 2025-{:02}-{:02} {:02}:{:02}:{:02}\n\n",
            1 + n % 12,
            1 + n % 28,
            n % 24,
            n % 60,
            (n / 60) % 60
        ));
        for _ in 0..10 {
            text.push_str(&format!(
                "#### {}  \n\n{}\n\n> Tokens: 1k sent, 2k received.  \n\n",
                generate::message(&mut rng, true),
                generate::message(&mut rng, false)
            ));
        }
    }
    std::fs::write(&path, &text)?;
    env.set("DEJA_AIDER_ROOTS", dir.clone());
    let cost = env.run(&["index"])?;
    let store = deja_store::Store::open_read(&env.database())?;
    Ok(BigFile {
        bytes: text.len() as u64,
        messages: store.counts()?.messages,
        cost,
    })
}
