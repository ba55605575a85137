//! The Markdown report of `deja-bench all`: the machine, the date, the
//! commands, and one table per measurement with the targets beside the figures.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use deja_config::Mode;
use deja_recall::Tuning;

use crate::env::{mb, percentiles};
use crate::quality::{self, category_name, QualityReport};
use crate::scale::{self, Scale};
use crate::throughput::{self, Throughput};

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| format!("{:.0} GiB", kb as f64 / 1_048_576.0))
        .unwrap_or_default();
    format!("{cpu}, {cores} cores, {mem} RAM, {}", std::env::consts::OS)
}

fn ok(pass: bool) -> &'static str {
    if pass {
        "met"
    } else {
        "**not met**"
    }
}

/// The throughput, re-index, latency and memory tables.
pub fn throughput_table(rows: &[Throughput]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "| messages | units | index s | msg/s | embedder alone msg/s | ratio (≥ 0.85) | index peak RSS MB | re-index ms | re-index / index (< 2%) | append one session ms | store on disk MB |");
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|");
    for t in rows {
        let ratio = t.rate() / t.embed_rate();
        let re = t.reindex.wall.as_secs_f64() / t.index.wall.as_secs_f64();
        let _ = writeln!(
            s,
            "| {} | {} | {:.1} | {:.0} | {:.0} | {:.2} ({}) | {:.0} | {:.0} | {:.2}% ({}) | {:.0} | {:.1} |",
            t.stored,
            t.units,
            t.index.wall.as_secs_f64(),
            t.rate(),
            t.embed_rate(),
            ratio,
            ok(ratio >= 0.85),
            mb(t.index.peak_rss),
            t.reindex.wall.as_secs_f64() * 1000.0,
            re * 100.0,
            ok(re < 0.02),
            t.append.wall.as_secs_f64() * 1000.0,
            mb(t.disk),
        );
    }
    for t in rows.iter().filter(|t| t.embed_messages != t.stored) {
        let _ = writeln!(
            s,
            "\nAt {} messages the embedder alone was timed on a sample: the {} messages of every k-th session ({:.1} s).",
            t.stored,
            t.embed_messages,
            t.embed_alone.as_secs_f64()
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "| messages | cold `deja recall` p50 ms | p95 ms | recall peak RSS MB | in-process hybrid p50 ms | p95 ms |");
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for t in rows {
        let _ = writeln!(
            s,
            "| {} | {:.0} | {:.0} | {:.0} | {:.1} | {:.1} |",
            t.stored,
            t.cold.0,
            t.cold.1,
            mb(t.cold.2),
            t.warm.0,
            t.warm.1
        );
    }
    s
}

/// The scalar-type comparison.
pub fn quant_table(rows: &[crate::quant::QuantRow]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| scalar | vectors | recall@10 vs exact | median query ms | file MB | build s |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {:.3} | {:.3} | {:.1} | {:.1} |",
            r.kind,
            r.vectors,
            r.recall10,
            r.query_ms,
            mb(r.bytes),
            r.build_s
        );
    }
    s
}

/// The LoCoMo tables.
pub fn quality_tables(r: &QualityReport, cold: Option<(f64, f64, u64)>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| mode | questions | session hit@1 | hit@5 | hit@10 | MRR@10 | evidence turn hit@5 |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for (mode, m) in &r.by_mode {
        let (h1, h5, mrr, t5) = m.rates();
        let _ = writeln!(
            s,
            "| {mode} | {} | {h1:.3} | {h5:.3} | {:.3} | {mrr:.3} | {t5:.3} |",
            m.n,
            m.rate(m.hit10)
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "| mode | category | questions | hit@1 | hit@5 | MRR@10 | turn hit@5 |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for ((mode, cat), m) in &r.by_category {
        let (h1, h5, mrr, t5) = m.rates();
        let _ = writeln!(
            s,
            "| {mode} | {} ({cat}) | {} | {h1:.3} | {h5:.3} | {mrr:.3} | {t5:.3} |",
            category_name(*cat),
            m.n
        );
    }
    let _ = writeln!(s);
    if let Some(c) = &r.index_cost {
        let _ = writeln!(
            s,
            "Indexing the converted LoCoMo ({} messages) took {:.1} s, peak RSS {:.0} MB.",
            r.messages,
            c.wall.as_secs_f64(),
            mb(c.peak_rss)
        );
    }
    let (p50, p95) = percentiles(r.hybrid_latencies_ms.clone());
    let _ = writeln!(s, "In-process hybrid recall on it (query embedding included): p50 {p50:.1} ms, p95 {p95:.1} ms.");
    if let Some((c50, c95, rss)) = cold {
        let _ = writeln!(
            s,
            "Cold `deja recall --project <conversation>` processes: p50 {c50:.0} ms, p95 {c95:.0} ms, peak RSS {:.0} MB.",
            mb(rss)
        );
    }
    s
}

/// The table of the synthetic-vector scale runs.
pub fn scale_table(rows: &[Scale]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "| messages | units | index s (embeddings off) | msg/s | index peak RSS MB | re-index ms | re-index / index | vectors written + usearch built s | cold hybrid `deja recall` p50 / p95 ms | recall peak RSS MB | cold lexical p50 / p95 ms | in-process hybrid p50 / p95 ms | store on disk MB | `recall` via `deja mcp` p50 / p95 ms | server peak RSS MB | SessionStart hook (cold) p50 / p95 ms | failure-note hook (cold) p50 / p95 ms, note |");
    let _ = writeln!(
        s,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for t in rows {
        let secs = t.index.wall.as_secs_f64();
        let _ = writeln!(
            s,
            "| {} | {} | {:.1} | {:.0} | {:.0} | {:.0} | {:.2}% | {:.1} | {:.0} / {:.0} | {:.0} | {:.0} / {:.0} | {:.1} / {:.1} | {:.1} | {:.1} / {:.1} | {:.0} | {:.0} / {:.0} | {:.0} / {:.0}, {} |",
            t.stored,
            t.units,
            secs,
            t.stored as f64 / secs,
            mb(t.index.peak_rss),
            t.reindex.wall.as_secs_f64() * 1000.0,
            t.reindex.wall.as_secs_f64() / secs * 100.0,
            t.fill.as_secs_f64(),
            t.cold.0,
            t.cold.1,
            mb(t.cold.2.max(t.cold_lexical.2)),
            t.cold_lexical.0,
            t.cold_lexical.1,
            t.warm.0,
            t.warm.1,
            mb(t.disk),
            t.mcp.0,
            t.mcp.1,
            mb(t.mcp.2),
            t.hook.0,
            t.hook.1,
            t.failure_hook.0,
            t.failure_hook.1,
            if t.failure_hook.2 { "given" } else { "none" },
        );
    }
    s
}

/// Prints one finished section at once, so a long run shows its results as
/// it goes and an interrupted one keeps what it measured.
fn emit(section: &str) {
    use std::io::Write as _;
    print!("{section}");
    let _ = std::io::stdout().flush();
}

/// Runs everything and prints the report.
pub fn all(
    deja: &Path,
    shared: &Path,
    sizes: &[usize],
    scales: &[usize],
    cold_runs: usize,
    embed_sample: usize,
    smoke: bool,
) -> Result<()> {
    let sizes: Vec<usize> = if smoke { vec![200] } else { sizes.to_vec() };
    let scales: Vec<usize> = if smoke { vec![1000] } else { scales.to_vec() };
    let cold_runs = if smoke { 3 } else { cold_runs };
    // The smoke run samples too, so the sampled path keeps working.
    let embed_sample = if smoke { 100 } else { embed_sample };
    emit(&format!(
        "Machine: {}  \nDate: {}  \ndeja: {}\n\n",
        machine(),
        chrono::Utc::now().format("%Y-%m-%d %H:%M UTC"),
        deja.display()
    ));
    let mut rows = Vec::new();
    let largest = sizes.iter().copied().max().unwrap_or(0);
    for &n in &sizes {
        eprintln!("deja-bench: throughput at {n} messages");
        let sample = (n > embed_sample).then_some(embed_sample);
        rows.push(throughput::run(deja, n, cold_runs, n == largest, sample)?);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### Index, re-index, latency and memory (generated corpus, real embeddings)\n"
    );
    out.push_str(&throughput_table(&rows));
    if let Some(q) = rows.iter().find_map(|r| r.quantization.as_ref()) {
        let _ = writeln!(
            out,
            "\n### Vector scalar type (vectors of the largest store)\n"
        );
        out.push_str(&quant_table(q));
    }
    if let Some((n, table)) = rows
        .iter()
        .find_map(|r| r.stages.as_ref().map(|t| (r.stored, t)))
    {
        let _ = writeln!(
            out,
            "\n### Where in-process recall spends its time ({n} messages, real vectors)\n"
        );
        out.push_str(table);
    }
    emit(&out);

    let mut scaled = Vec::new();
    for &n in &scales {
        eprintln!("deja-bench: scale at {n} messages (synthetic vectors)");
        scaled.push(scale::run(deja, n, cold_runs, None)?);
    }
    if !scaled.is_empty() {
        emit(&format!(
            "\n### At scale (generated corpus, embeddings off while indexing, synthetic vectors for recall)\n\n{}",
            scale_table(&scaled)
        ));
    }

    eprintln!("deja-bench: one large transcript");
    let big = throughput::big_file(deja, if smoke { 2 } else { 64 })?;
    emit(&format!(
        "\n### One large transcript (embeddings off)\n\nA {:.0} MB aider history ({} messages): indexed in {:.1} s, peak RSS {:.0} MB.\n",
        mb(big.bytes),
        big.messages,
        big.cost.wall.as_secs_f64(),
        mb(big.cost.peak_rss)
    ));

    eprintln!("deja-bench: LoCoMo");
    let locomo = quality::prepare(deja, shared, "", None, smoke.then_some("conv-26"))?;
    // Cold processes before the in-process evaluation loads the model here
    // (a child's peak memory counts what this process holds when it starts it).
    let mut cold = Vec::new();
    let mut rss = 0;
    for q in locomo.questions.iter().take(cold_runs.max(1)) {
        let c = locomo
            .env
            .run(&["recall", &q.question, "--project", &q.project, "-n", "10"])?;
        cold.push(c.wall.as_secs_f64() * 1000.0);
        rss = rss.max(c.peak_rss);
    }
    let (c50, c95) = percentiles(cold);
    let per_session = deja_config::defaults(Path::new("/nonexistent/config.toml"), &|_| None)?
        .config
        .recall
        .per_session_cap();
    let report = quality::evaluate(
        &locomo,
        &Tuning::default(),
        &[Mode::Lexical, Mode::Semantic, Mode::Hybrid],
        per_session,
    )?;
    emit(&format!(
        "\n### Retrieval quality (LoCoMo, {} questions)\n\n{}",
        locomo.questions.len(),
        quality_tables(&report, Some((c50, c95, rss)))
    ));
    drop(locomo);

    eprintln!("deja-bench: real transcripts");
    let items = crate::real::load(&crate::real::default_set())?;
    // The smoke run reads one small harness of the corpus and its queries.
    let only = smoke.then_some("qwen");
    let items: Vec<_> = items
        .into_iter()
        .filter(|i| only.is_none_or(|h| i.harness == h))
        .collect();
    let corpus = crate::real::prepare(deja, shared, None, only)?;
    let real = crate::real::evaluate(
        &corpus,
        &items,
        &[Mode::Lexical, Mode::Semantic, Mode::Hybrid],
        per_session,
        &Tuning::default(),
    )?;
    emit(&format!(
        "\n### Retrieval quality (real transcripts, {} queries)\n\nIndexing the shared corpus took {:.1} s.\n\n{}",
        items.len(),
        corpus.index_cost.wall.as_secs_f64(),
        crate::real::tables(&real, per_session)
    ));
    drop(corpus);

    if smoke {
        eprintln!("deja-bench: day zero (smoke)");
        let d = crate::dayzero::run(deja, &crate::dayzero::Options::smoke())?;
        emit(&format!(
            "\n### Day zero (smoke size)\n\n{}",
            crate::dayzero::table(&d)
        ));
    }

    eprintln!("deja-bench: team memory");
    let server = crate::team::server()?;
    let (team_sizes, embed_at): (&[usize], usize) = if smoke {
        (&[300], 300)
    } else {
        (&[10_000, 100_000], 10_000)
    };
    let mut rows = Vec::new();
    for &n in team_sizes {
        rows.push(crate::team::run(deja, &server, n, n == embed_at)?);
    }
    emit(&format!(
        "\n### Team memory (push and pull through a scratch PostgreSQL server)\n\n{}",
        crate::team::table(&rows)
    ));
    Ok(())
}
