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
//!
//! The vector sync runs as a process of its own (`deja-bench-sync`), twice:
//! first with a segment size above the highest chunk id, which gives the
//! single file of earlier versions, then with the default segments; after
//! each, `deja forget` removes one session, so that the cost of erasure is
//! measured under both layouts on the same store.

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

/// Above this many units the one-file half (what versions before segments
/// did) is not run: its single graph is the slow, large build that segments
/// replace (about 800 s and 200 MB at 178,000 units; hours at a million
/// messages).
pub const SINGLE_UNITS: usize = 400_000;

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
    /// A `deja index` with nothing changed and embeddings on, once every
    /// unit has its vector.
    pub reindex_embed: Cost,
    /// Writing the synthetic vectors and building the vector index.
    pub fill: Duration,
    /// The vector sync writing the index as one file (earlier versions);
    /// not run above [`SINGLE_UNITS`] units.
    pub sync_single: Option<Cost>,
    /// `deja forget` of one session with the index as one file.
    pub forget_single: Option<Cost>,
    /// The vector sync writing the index as segments of
    /// [`vectors::SEGMENT_SIZE`] chunk ids.
    pub sync_segmented: Cost,
    /// `deja forget` of one session with the index in segments.
    pub forget_segmented: Cost,
    /// Segment files, and how many the segmented forget rewrote.
    pub segments: (usize, usize),
    /// The segment size of the segmented half ([`segment_size_for`]).
    pub segment_size: i64,
    /// Bytes on disk: SQLite tables and indexes, the full-text indexes,
    /// the vector files.
    pub disk_split: (u64, u64, u64),
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

    let begun = Instant::now();
    let phase = |what: &str| {
        eprintln!(
            "deja-bench scale: {what} ({:.0} s)",
            begun.elapsed().as_secs_f64()
        )
    };
    phase(&format!("indexed {messages} messages"));
    let started = Instant::now();
    let units = fill_units(&env.database())?;
    let written = started.elapsed();
    phase(&format!("{units} units with synthetic vectors"));
    let (sync_single, forget_single) = if units <= SINGLE_UNITS {
        let sync = timed_sync(&env, Some(i64::MAX / 2))?;
        let forget = forget_one(&env, 1)?;
        phase("the index as one file, and a forget");
        (Some(sync), Some(forget))
    } else {
        (None, None)
    };
    let segment_size = segment_size_for(units);
    let sync_segmented = timed_sync(&env, Some(segment_size))?;
    phase("the index in segments");
    let fill = written + sync_segmented.wall;
    let before = segment_bytes(&env.vectors());
    let forget_segmented = forget_one(&env, 2)?;
    phase("a forget in segments");
    let after = segment_bytes(&env.vectors());
    let rewritten = before
        .iter()
        .filter(|(n, stamp)| after.iter().find(|(m, _)| m == n).map(|(_, s)| s) != Some(stamp))
        .count();
    let segments = (after.len(), rewritten);

    // Embeddings on again: this run finds nothing to embed and derives the
    // fast-loading query model, as a user's first `deja index` would have.
    env.configure("")?;
    env.run(&["index"])?;
    // And a run with nothing changed, embeddings on: what a user's
    // `deja index` costs on this history once it is complete.
    let reindex_embed = env.run(&["index"])?;
    anyhow::ensure!(
        vectors::in_sync(&Store::open_read(&env.database())?, &env.vectors())?,
        "the vector index does not match the store after the fill"
    );

    phase("checked");
    let cold = cold_latency(&env, cold_runs, &[])?;
    let cold_lexical = cold_latency(&env, cold_runs, &["--mode", "lexical"])?;

    let mut e = engine(&env.database(), &env.vectors())?;
    let stored = e.store.counts()?.messages;
    let warm = warm_latency(&mut e)?;
    let project = crate::mcp::project_dir(&e.store)?;
    drop(e);

    // The MCP server, its background index off (the store is complete).
    env.configure("[mcp]\nindex = false\n")?;
    phase("cold and in-process recall");
    let mcp = crate::mcp::server_latency(&env, 3)?;
    let hook = crate::mcp::hook_latency(&env, &project, cold_runs)?;
    let failure_hook = crate::mcp::failure_hook_latency(&env, generate::CORPUS_ERROR, cold_runs)?;
    let disk_split = disk_split(&env.database(), &env.vectors())?;
    Ok(Scale {
        stored,
        units,
        index,
        reindex,
        reindex_embed,
        fill,
        sync_single,
        forget_single,
        sync_segmented,
        forget_segmented,
        segments,
        segment_size,
        disk_split,
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
    let count = fill_units(database)?;
    let store = Store::open(database)?;
    let known = Embedder::load(&settings()?, None)?.known();
    vectors::sync(&store, vector_path, &known.id, known.dims)
        .context("building the vector index")?;
    Ok(count)
}

/// Gives every message its real embedding units, each with a synthetic
/// vector, recorded under the real model's id; the vector index is left
/// behind. Returns how many units.
pub fn fill_units(database: &Path) -> Result<usize> {
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
    Ok(count)
}

/// Runs `program` with `args` under `/usr/bin/time` (when there is one):
/// its wall time and peak RSS.
fn timed(program: &Path, args: &[&std::ffi::OsStr]) -> Result<Cost> {
    let rss_file = tempfile::NamedTempFile::new()?;
    let gnu_time = Path::new("/usr/bin/time");
    let mut cmd = if gnu_time.is_file() {
        let mut c = std::process::Command::new(gnu_time);
        c.arg("-f")
            .arg("%M")
            .arg("-o")
            .arg(rss_file.path())
            .arg(program);
        c
    } else {
        std::process::Command::new(program)
    };
    cmd.args(args).stdout(std::process::Stdio::null());
    let started = Instant::now();
    let status = cmd
        .status()
        .with_context(|| format!("running {}", program.display()))?;
    let wall = started.elapsed();
    anyhow::ensure!(status.success(), "{} failed: {status}", program.display());
    let kb: u64 = std::fs::read_to_string(rss_file.path())
        .ok()
        .and_then(|s| s.lines().last().and_then(|l| l.trim().parse().ok()))
        .unwrap_or(0);
    Ok(Cost {
        wall,
        peak_rss: kb * 1024,
    })
}

/// The vector sync as a process of its own (`deja-bench-sync`, beside this
/// binary) with segment size `size`.
fn timed_sync(env: &BenchEnv, size: Option<i64>) -> Result<Cost> {
    let exe = std::env::current_exe()?;
    let sync = exe.with_file_name("deja-bench-sync");
    anyhow::ensure!(
        sync.is_file(),
        "{} is missing: build the deja-bench package",
        sync.display()
    );
    let database = env.database();
    let path = env.vectors();
    let size_text = size.map(|s| s.to_string());
    let mut args: Vec<&std::ffi::OsStr> = vec![database.as_os_str(), path.as_os_str()];
    if let Some(s) = &size_text {
        args.push(std::ffi::OsStr::new(s));
    }
    timed(&sync, &args)
}

/// The segment size the segmented half runs with: the default, or a
/// quarter of the units (rounded up to a thousand) where the default would
/// give a single segment, which would measure nothing but the one file
/// again.
fn segment_size_for(units: usize) -> i64 {
    let units = units as i64;
    if units > vectors::SEGMENT_SIZE {
        vectors::SEGMENT_SIZE
    } else {
        ((units / 4 + 999) / 1000).max(1) * 1000
    }
}

/// `deja forget --yes` of the session at `nth` in the middle of the
/// history (counted from there, so that two calls take two sessions).
fn forget_one(env: &BenchEnv, nth: i64) -> Result<Cost> {
    let id: String = {
        let conn = rusqlite::Connection::open(env.database())?;
        conn.query_row(
            "SELECT native_id FROM sessions ORDER BY id
             LIMIT 1 OFFSET (SELECT count(*) / 2 FROM sessions) + ?1",
            [nth],
            |r| r.get(0),
        )?
    };
    env.run(&["forget", "--yes", &id])
}

/// Each segment file's number, size and modification time.
fn segment_bytes(path: &Path) -> Vec<(usize, (u64, Option<std::time::SystemTime>))> {
    vectors::file_stamps(path)
        .into_iter()
        .map(|(n, size, modified)| (n, (size, modified)))
        .collect()
}

/// Bytes on disk of the SQLite tables and their indexes, of the full-text
/// indexes (FTS5 tables and their shadow tables), and of the vector files.
fn disk_split(database: &Path, vector_path: &Path) -> Result<(u64, u64, u64)> {
    let conn = rusqlite::Connection::open(database)?;
    let mut stmt = conn.prepare("SELECT name, sum(pgsize) FROM dbstat GROUP BY name")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    let (mut tables, mut fts) = (0u64, 0u64);
    for row in rows {
        let (name, bytes) = row?;
        if name.contains("_fts") {
            fts += bytes as u64;
        } else {
            tables += bytes as u64;
        }
    }
    Ok((tables, fts, vectors::disk_bytes(vector_path).unwrap_or(0)))
}

/// The vector index's own table at each size: the sync as one file and in
/// segments (wall time, peak RSS), `deja forget` of one session under each,
/// and the store on disk per message, split.
pub fn vector_table(rows: &[Scale]) -> String {
    let mb = |b: u64| b as f64 / 1_048_576.0;
    let mut out = String::from(
        "\n| messages | units | segment size | segments | sync as one file s / peak RSS MB | sync in segments s / peak RSS MB | forget one session, one file s / peak RSS MB | forget one session, segments s / peak RSS MB | segments rewritten | `deja index` with nothing changed, embeddings on s / peak RSS MB | disk per message: tables / FTS / vectors bytes |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let cost = |c: &Option<Cost>, digits: usize| match c {
        Some(c) => format!(
            "{:.*} / {:.0}",
            digits,
            c.wall.as_secs_f64(),
            mb(c.peak_rss)
        ),
        None => "not run".to_string(),
    };
    for s in rows {
        let per = |b: u64| b as f64 / s.stored.max(1) as f64;
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.1} / {:.0} | {} | {:.2} / {:.0} | {} | {:.2} / {:.0} | {:.0} / {:.0} / {:.0} |\n",
            s.stored,
            s.units,
            s.segment_size,
            s.segments.0,
            cost(&s.sync_single, 1),
            s.sync_segmented.wall.as_secs_f64(),
            mb(s.sync_segmented.peak_rss),
            cost(&s.forget_single, 2),
            s.forget_segmented.wall.as_secs_f64(),
            mb(s.forget_segmented.peak_rss),
            s.segments.1,
            s.reindex_embed.wall.as_secs_f64(),
            mb(s.reindex_embed.peak_rss),
            per(s.disk_split.0),
            per(s.disk_split.1),
            per(s.disk_split.2),
        ));
    }
    out
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
