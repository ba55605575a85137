//! deja's benchmark: index throughput against the embedder alone, re-index
//! cost, cold and warm recall latency, peak memory, and retrieval quality on
//! LoCoMo. `deja-bench all` runs everything and writes a Markdown report;
//! `--smoke` runs tiny sizes so CI keeps it compiling and working.

mod dayzero;
mod dayzero_corpus;
mod demo;
mod engine;
mod env;
mod floor;
mod generate;
mod languages;
mod mcp;
mod newest;
mod profile;
mod quality;
mod quant;
mod queries;
mod real;
mod refresh;
mod report;
mod scale;
mod signals;
mod sweep;
mod team;
mod throughput;
mod ui;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};
use deja_config::Mode;
use deja_recall::fuse::Fusion;
use deja_recall::Tuning;

#[derive(Debug, Parser)]
#[command(name = "deja-bench", about)]
struct Cli {
    /// The deja binary to measure (default: the release build beside this one).
    #[arg(long, global = true)]
    deja: Option<PathBuf>,
    /// The shared folder holding bench/ (LoCoMo).
    #[arg(long, global = true)]
    shared: Option<PathBuf>,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Everything, as a Markdown report on stdout.
    All {
        /// Corpus sizes in messages, indexed with real embeddings.
        #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
        sizes: Vec<usize>,
        /// Corpus sizes in messages for latency and memory with synthetic
        /// vectors (embedding them for real takes hours on a small machine).
        #[arg(long, value_delimiter = ',', default_value = "100000")]
        scale: Vec<usize>,
        /// Cold recall processes per size.
        #[arg(long, default_value_t = 20)]
        cold_runs: usize,
        /// Above this many messages, the embedder alone is timed on a sample
        /// of about this many (whole sessions, every k-th one).
        #[arg(long, default_value_t = 20_000)]
        embed_sample: usize,
        /// Tiny sizes and a LoCoMo subset, for CI: checks that it runs, not the targets.
        #[arg(long)]
        smoke: bool,
    },
    /// Writes a generated corpus of transcripts into HOME (for manual runs).
    Generate {
        /// Messages to generate.
        #[arg(long, default_value_t = 1000)]
        messages: usize,
        /// The HOME to write into.
        home: PathBuf,
    },
    /// Throughput, re-index, latency and memory at one size.
    Throughput {
        /// Messages to generate.
        #[arg(long, default_value_t = 1000)]
        messages: usize,
        /// Cold recall processes.
        #[arg(long, default_value_t = 20)]
        cold_runs: usize,
        /// Time the embedder alone on about this many messages (whole
        /// sessions, every k-th one) instead of all of them.
        #[arg(long)]
        embed_sample: Option<usize>,
        /// Skip the scalar-type comparison and the time per recall stage.
        #[arg(long)]
        no_details: bool,
    },
    /// How soon a first `deja index` makes the newest sessions recallable by
    /// meaning: a generated history spread over DAYS, indexed with real
    /// embeddings and interrupted once its last 30 days are embedded.
    Newest {
        /// Messages to generate.
        #[arg(long, default_value_t = 100_000)]
        messages: usize,
        /// Days the history spans.
        #[arg(long, default_value_t = 365.0)]
        days: f64,
    },
    /// The day-zero run: about 20,000 generated Claude Code and Codex CLI
    /// sessions over months, a first `deja index` (its embedding pass
    /// interrupted after a fixed time) and `deja recall` for 100 questions
    /// with one answer session each.
    Dayzero {
        /// Sessions to write.
        #[arg(long, default_value_t = 20_000)]
        sessions: usize,
        /// Days the history spans.
        #[arg(long, default_value_t = 180.0)]
        days: f64,
        /// Seconds the embedding pass runs once every transcript is stored.
        #[arg(long, default_value_t = 600.0)]
        embed_secs: f64,
        /// Seconds, for CI: 40 sessions and 10 questions.
        #[arg(long)]
        smoke: bool,
        /// Write the 100 questions (JSON lines) to this file and exit.
        #[arg(long)]
        write_questions: Option<PathBuf>,
    },
    /// Times each stage of an in-process hybrid recall on an indexed HOME.
    Profile {
        /// Rounds over the latency queries (after one warm-up round).
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// The HOME whose store to search.
        home: PathBuf,
    },
    /// Indexes one generated corpus per embedding batch size and thread count.
    Sweep {
        /// Messages to generate.
        #[arg(long, default_value_t = 600)]
        messages: usize,
        /// `embed.batch_tokens` values.
        #[arg(long, value_delimiter = ',', default_value = "256,512,1024,2048")]
        batch_tokens: Vec<usize>,
        /// `embed.threads` values (0: one per core).
        #[arg(long, value_delimiter = ',', default_value = "0,1")]
        threads: Vec<usize>,
    },
    /// Latency and memory at one size, with synthetic vectors.
    Scale {
        /// Messages to generate.
        #[arg(long, default_value_t = 100_000)]
        messages: usize,
        /// Cold recall processes.
        #[arg(long, default_value_t = 20)]
        cold_runs: usize,
        /// Build the store in this HOME and keep it (default: a temporary one).
        #[arg(long)]
        home: Option<PathBuf>,
    },
    /// Recall through `deja mcp` and the SessionStart hook on an existing HOME.
    Mcp {
        /// A HOME whose store `deja index` (or `scale --home`) filled.
        home: PathBuf,
        /// Rounds over the latency queries.
        #[arg(long, default_value_t = 3)]
        rounds: usize,
    },
    /// The web page (`deja ui`) on an existing HOME: searches and the page
    /// of the longest session, over HTTP.
    Ui {
        /// A HOME whose store `deja index` (or `scale --home`) filled.
        home: PathBuf,
        /// Rounds over the latency queries.
        #[arg(long, default_value_t = 3)]
        rounds: usize,
    },
    /// The hooks agents run (SessionStart digest, failure note) as cold
    /// processes over a generated store of N messages, embeddings off (the
    /// hooks read words only).
    Hooks {
        /// Messages to generate.
        #[arg(long, default_value_t = 100_000)]
        messages: usize,
        /// Cold processes per hook.
        #[arg(long, default_value_t = 20)]
        runs: usize,
    },
    /// Sweeps ranking weights on LoCoMo (signals gathered once), printing the best.
    Grid {
        /// Fusion semantic weights (lexical is 1).
        #[arg(long, value_delimiter = ',', default_value = "0.5,0.7,1")]
        semantic: Vec<f64>,
        /// Session-level lexical weights.
        #[arg(long, value_delimiter = ',', default_value = "0.5,0.7,1,1.5")]
        session_lexical: Vec<f64>,
        /// Session-level semantic weights.
        #[arg(long, value_delimiter = ',', default_value = "0,0.5,1,2")]
        session_semantic: Vec<f64>,
        /// Session top-k for the semantic score.
        #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
        session_top: Vec<usize>,
        /// Date weights.
        #[arg(long, value_delimiter = ',', default_value = "0,0.5,1,1.5")]
        date_weight: Vec<f64>,
        /// Phrase weights.
        #[arg(long, value_delimiter = ',', default_value = "0")]
        phrase_weight: Vec<f64>,
        /// Lexical powers.
        #[arg(long, value_delimiter = ',', default_value = "1")]
        lexical_power: Vec<f64>,
        /// Kept, converted, indexed benchmark.
        #[arg(long)]
        home: Option<PathBuf>,
        /// Extra TOML for the indexing config.
        #[arg(long, default_value = "")]
        config: String,
    },
    /// Team memory: push and pull throughput against a scratch PostgreSQL server.
    Team {
        /// Corpus sizes in messages.
        #[arg(long, value_delimiter = ',', default_value = "10000,100000")]
        sizes: Vec<usize>,
        /// Sizes at which the pull with embedding is measured too.
        #[arg(long, value_delimiter = ',', default_value = "10000")]
        embed_sizes: Vec<usize>,
    },
    /// The cost of recall's freshness pass (`recall.refresh`) at each size.
    Refresh {
        /// Corpus sizes in messages (embeddings off).
        #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
        sizes: Vec<usize>,
        /// Cold recall processes per case.
        #[arg(long, default_value_t = 10)]
        runs: usize,
    },
    /// Retrieval quality on LoCoMo.
    Quality {
        /// Fusion: `z:LEX:SEM` (weighted z-scores) or `rrf:K`.
        #[arg(long, default_value = "default")]
        fusion: String,
        /// Messages per session counted as its evidence.
        #[arg(long)]
        session_top: Option<usize>,
        /// Candidates per ranker.
        #[arg(long)]
        depth: Option<usize>,
        /// Weight of session-level lexical scores.
        #[arg(long)]
        session_lexical: Option<f64>,
        /// Weight of session-level semantic scores.
        #[arg(long)]
        session_semantic: Option<f64>,
        /// Weight of dates named in the query.
        #[arg(long)]
        date_weight: Option<f64>,
        /// Modes to evaluate.
        #[arg(long, value_delimiter = ',', default_value = "lexical,semantic,hybrid")]
        modes: Vec<String>,
        /// Extra TOML for the indexing config.
        #[arg(long, default_value = "")]
        config: String,
        /// Keep the converted, indexed benchmark in this folder and reuse it.
        #[arg(long)]
        home: Option<PathBuf>,
        /// Most hits of one session (default: `recall.per_session`'s default; 0: no cap).
        #[arg(long)]
        per_session: Option<usize>,
        /// Which set: `locomo`, `real` (the real-transcript set), `both`, or
        /// `languages` (queries across languages, on the whole corpus and on
        /// its Chinese and Japanese histories alone).
        #[arg(long, default_value = "both")]
        set: String,
        /// Keep the indexed shared corpus (real and languages sets) in this folder and reuse it.
        #[arg(long)]
        corpus_home: Option<PathBuf>,
        /// Keep the indexed Chinese and Japanese histories (languages set) in this folder and reuse it.
        #[arg(long)]
        cjk_home: Option<PathBuf>,
        /// Only these halves of the real set (`tune`, `report`); default both.
        #[arg(long)]
        half: Option<String>,
        /// The relevance floor (default: `recall.min_similarity`'s default; 0: none).
        #[arg(long)]
        min_similarity: Option<f64>,
        /// The relevance bar of an answer (default: `recall.min_score`'s default; 0: none).
        #[arg(long)]
        min_score: Option<f64>,
    },
    /// Writes every query's ranking evidence (query vector, both message
    /// lists, session evidence, the answers) as JSON lines on stdout, for
    /// studying ranking offline.
    Signals {
        /// Which set: `locomo`, `real`, `languages` (over the whole corpus),
        /// `languages-cjk` (over its Chinese and Japanese histories) or `demo`.
        #[arg(long, default_value = "locomo")]
        set: String,
        /// The kept, indexed benchmark (LoCoMo), shared corpus (real and
        /// languages sets) or Chinese and Japanese histories.
        #[arg(long)]
        home: Option<PathBuf>,
    },
}

fn parse_fusion(s: &str) -> Result<Fusion> {
    let parts: Vec<&str> = s.split(':').collect();
    Ok(match parts.as_slice() {
        ["default"] => Tuning::default().fusion,
        ["z", l, w] => Fusion::ZScore {
            lexical: l.parse()?,
            semantic: w.parse()?,
        },
        ["rrf", k] => Fusion::Rrf { k: k.parse()? },
        ["w", l, w] => Fusion::Weighted {
            lexical: l.parse()?,
            semantic: w.parse()?,
        },
        _ => anyhow::bail!("bad --fusion `{s}`: use z:LEX:SEM or rrf:K"),
    })
}

fn deja_path(cli: &Cli) -> PathBuf {
    cli.deja.clone().unwrap_or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.join("deja")))
            .unwrap_or_else(|| PathBuf::from("deja"))
    })
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let deja = deja_path(&cli);
    let shared = cli.shared.clone().unwrap_or_else(quality::default_shared);
    match &cli.command {
        Cmd::All {
            sizes,
            scale,
            cold_runs,
            embed_sample,
            smoke,
        } => report::all(
            &deja,
            &shared,
            sizes,
            scale,
            *cold_runs,
            *embed_sample,
            *smoke,
        )?,
        Cmd::Sweep {
            messages,
            batch_tokens,
            threads,
        } => print!(
            "{}",
            sweep::table(&sweep::run(&deja, *messages, batch_tokens, threads)?)
        ),
        Cmd::Profile { rounds, home } => print!("{}", profile::run(home, *rounds)?),
        Cmd::Scale {
            messages,
            cold_runs,
            home,
        } => {
            let s = scale::run(&deja, *messages, *cold_runs, home.as_deref())?;
            print!("{}", report::scale_table(std::slice::from_ref(&s)));
            print!("{}", scale::vector_table(std::slice::from_ref(&s)));
        }
        Cmd::Mcp { home, rounds } => print!("{}", mcp::measure(&deja, home, *rounds)?),
        Cmd::Ui { home, rounds } => print!("{}", ui::measure(&deja, home, *rounds)?),
        Cmd::Hooks { messages, runs } => print!("{}", mcp::hooks(&deja, *messages, *runs)?),
        Cmd::Team { sizes, embed_sizes } => {
            let server = team::server()?;
            let mut rows = Vec::new();
            for &n in sizes {
                eprintln!("deja-bench: team push and pull at {n} messages");
                rows.push(team::run(&deja, &server, n, embed_sizes.contains(&n))?);
                print!("{}", team::table(&rows[rows.len() - 1..]));
            }
            println!("\n{}", team::table(&rows));
        }
        Cmd::Refresh { sizes, runs } => {
            let mut rows = Vec::new();
            for &n in sizes {
                eprintln!("deja-bench: refresh at {n} messages");
                rows.push(refresh::run(&deja, n, *runs)?);
                print!("{}", refresh::table(&rows[rows.len() - 1..]));
            }
            println!("\n{}", refresh::table(&rows));
        }
        Cmd::Dayzero {
            sessions,
            days,
            embed_secs,
            smoke,
            write_questions,
        } => {
            if let Some(path) = write_questions {
                let qs = dayzero_corpus::questions(dayzero_corpus::SEED, *days);
                std::fs::write(path, dayzero_corpus::questions_jsonl(&qs)?)?;
                return Ok(());
            }
            let options = if *smoke {
                dayzero::Options::smoke()
            } else {
                dayzero::Options {
                    sessions: *sessions,
                    days: *days,
                    embed_secs: *embed_secs,
                    ..dayzero::Options::full()
                }
            };
            print!("{}", dayzero::table(&dayzero::run(&deja, &options)?));
        }
        Cmd::Newest { messages, days } => {
            print!("{}", newest::table(&newest::run(&deja, *messages, *days)?));
        }
        Cmd::Generate { messages, home } => {
            let g = generate::corpus(home, *messages, 42 + *messages as u64)?;
            eprintln!(
                "wrote {} messages in {} sessions, {} files under {}",
                g.messages,
                g.sessions,
                g.files,
                home.display()
            );
        }
        Cmd::Throughput {
            messages,
            cold_runs,
            embed_sample,
            no_details,
        } => {
            let t = throughput::run(&deja, *messages, *cold_runs, !*no_details, *embed_sample)?;
            print!("{}", report::throughput_table(std::slice::from_ref(&t)));
            if let Some(q) = &t.quantization {
                print!("\n{}", report::quant_table(q));
            }
            if let Some(table) = &t.stages {
                print!("\n{table}");
            }
        }
        Cmd::Grid {
            semantic,
            session_lexical,
            session_semantic,
            session_top,
            date_weight,
            phrase_weight,
            lexical_power,
            home,
            config,
        } => {
            let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
            let demo_set = demo::prepare(&deja, &repo)?;
            let locomo = quality::prepare(&deja, &shared, config, home.as_deref(), None)?;
            let gathered = quality::gather_all(&locomo)?;
            let store = deja_store::Store::open_read(&locomo.env.database())?;
            let natives = quality::native_ids(&store)?;
            let mut results = Vec::new();
            for &ws in semantic {
                for &sl in session_lexical {
                    for &ss in session_semantic {
                        for &top in session_top {
                            for &dw in date_weight {
                                for &pw in phrase_weight {
                                    for &lp in lexical_power {
                                        let tuning = Tuning {
                                            lexical_power: lp,
                                            phrase_weight: pw,
                                            fusion: Fusion::Weighted {
                                                lexical: 1.0,
                                                semantic: ws,
                                            },
                                            session_lexical: sl,
                                            session_semantic: ss,
                                            session_top: top,
                                            date_weight: dw,
                                            ..Tuning::default()
                                        };
                                        let m = quality::score_tuning(
                                            &locomo,
                                            &store,
                                            &gathered,
                                            &tuning,
                                            Mode::Hybrid,
                                            &natives,
                                        );
                                        let (ok, total, _) = demo_set.passed(&tuning);
                                        results.push((m.rates(), tuning, ok, total));
                                    }
                                }
                            }
                        }
                    }
                }
            }
            results.sort_by(|a, b| {
                (b.2, b.0 .0 + b.0 .1)
                    .partial_cmp(&(a.2, a.0 .0 + a.0 .1))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            for ((h1, h5, mrr, _), t, ok, total) in results.iter().take(25) {
                println!("demo {ok}/{total} hit@1 {h1:.3} hit@5 {h5:.3} MRR {mrr:.3}  {t:?}");
            }
            if let Some((_, t, _, _)) = results.first() {
                for f in demo_set.passed(t).2 {
                    println!("  demo miss: {f}");
                }
            }
        }
        Cmd::Quality {
            fusion,
            session_top,
            depth,
            config,
            home,
            session_lexical,
            session_semantic,
            date_weight,
            modes,
            per_session,
            set,
            corpus_home,
            cjk_home,
            half,
            min_similarity,
            min_score,
        } => {
            let mut tuning = Tuning {
                fusion: parse_fusion(fusion)?,
                ..Tuning::default()
            };
            if let Some(t) = session_top {
                tuning.session_top = *t;
            }
            if let Some(d) = depth {
                tuning.depth = *d;
            }
            if let Some(w) = session_lexical {
                tuning.session_lexical = *w;
            }
            if let Some(w) = session_semantic {
                tuning.session_semantic = *w;
            }
            if let Some(w) = date_weight {
                tuning.date_weight = *w;
            }
            let defaults =
                deja_config::defaults(std::path::Path::new("/nonexistent/config.toml"), &|_| None)?
                    .config;
            tuning.min_similarity = min_similarity.unwrap_or(defaults.recall.min_similarity);
            tuning.min_score = min_score.unwrap_or(defaults.recall.min_score);
            let per_session = match per_session {
                Some(0) => None,
                Some(n) => Some(*n),
                None => defaults.recall.per_session_cap(),
            };
            let modes: Vec<Mode> = modes
                .iter()
                .map(|m| match m.as_str() {
                    "lexical" => Ok(Mode::Lexical),
                    "semantic" => Ok(Mode::Semantic),
                    "hybrid" => Ok(Mode::Hybrid),
                    other => Err(anyhow::anyhow!("unknown mode `{other}`")),
                })
                .collect::<Result<_>>()?;
            println!("tuning: {tuning:?}; per session: {per_session:?}");
            if set == "locomo" || set == "both" {
                let locomo = quality::prepare(&deja, &shared, config, home.as_deref(), None)?;
                eprintln!(
                    "indexed LoCoMo in {:.1} s (peak {:.0} MB)",
                    locomo.index_cost.wall.as_secs_f64(),
                    env::mb(locomo.index_cost.peak_rss)
                );
                let r = quality::evaluate(&locomo, &tuning, &modes, per_session)?;
                println!("LoCoMo");
                for (mode, m) in &r.by_mode {
                    let (h1, h5, mrr, t5) = m.rates();
                    println!(
                        "{mode:<9} n={} hit@1 {h1:.3} hit@5 {h5:.3} hit@10 {:.3} MRR@10 {mrr:.3} turn@5 {t5:.3}",
                        m.n,
                        m.rate(m.hit10)
                    );
                }
                for ((mode, cat), m) in &r.by_category {
                    let (h1, h5, mrr, t5) = m.rates();
                    println!(
                        "  {mode:<9} {:<12} n={:<4} hit@1 {h1:.3} hit@5 {h5:.3} hit@10 {:.3} MRR@10 {mrr:.3} turn@5 {t5:.3}",
                        quality::category_name(*cat),
                        m.n,
                        m.rate(m.hit10)
                    );
                }
                let (p50, p95) = env::percentiles(r.hybrid_latencies_ms.clone());
                println!("hybrid in-process latency p50 {p50:.1} ms p95 {p95:.1} ms");
                println!("{}", r.unanswerable);
            }
            if set == "real" || set == "both" {
                let items: Vec<real::Item> = real::load(&real::default_set())?
                    .into_iter()
                    .filter(|i| half.as_deref().is_none_or(|h| h == i.half))
                    .collect();
                let corpus = real::prepare(&deja, &shared, corpus_home.as_deref(), None)?;
                eprintln!(
                    "indexed the shared corpus in {:.1} s",
                    corpus.index_cost.wall.as_secs_f64()
                );
                // What the index run said of its embedding passes.
                for line in corpus.index_said.lines() {
                    if line.starts_with("embedded") {
                        eprintln!("deja index: {line}");
                    }
                }
                let r = real::evaluate(&corpus, &items, &modes, per_session, &tuning)?;
                println!("Real transcripts ({} queries)", items.len());
                print!("{}", real::tables(&r, per_session));
                println!("{}", r.unanswerable);
                if std::env::var_os("DEJA_BENCH_FAILURES").is_some() {
                    for m in &r.misses {
                        eprintln!("MISS {m}");
                    }
                }
            }
            if set == "languages" {
                let items = languages::load(&languages::default_set())?;
                println!("Languages ({} queries)", items.len());
                let mixed = real::prepare(&deja, &shared, corpus_home.as_deref(), None)?;
                let cjk = languages::prepare_cjk(&deja, &shared, cjk_home.as_deref())?;
                for (name, corpus) in [("whole corpus", &mixed), ("CJK histories", &cjk)] {
                    eprintln!(
                        "indexed the {name} in {:.1} s",
                        corpus.index_cost.wall.as_secs_f64()
                    );
                    for line in corpus.index_said.lines() {
                        if line.starts_with("embedded") {
                            eprintln!("deja index ({name}): {line}");
                        }
                    }
                    let r = languages::evaluate(corpus, &items, &modes, per_session, &tuning)?;
                    print!("{}", languages::table(name, &r));
                    if std::env::var_os("DEJA_BENCH_FAILURES").is_some() {
                        for m in &r.misses {
                            eprintln!("MISS ({name}) {m}");
                        }
                    }
                }
            }
        }
        Cmd::Signals { set, home } => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            match set.as_str() {
                "locomo" => {
                    let locomo = quality::prepare(&deja, &shared, "", home.as_deref(), None)?;
                    signals::locomo(&locomo, &mut out)?;
                }
                "real" => {
                    let items = real::load(&real::default_set())?;
                    let corpus = real::prepare(&deja, &shared, home.as_deref(), None)?;
                    signals::real(&corpus, &items, &mut out)?;
                }
                "languages" | "languages-cjk" => {
                    let items = languages::load(&languages::default_set())?;
                    let corpus = if set == "languages" {
                        real::prepare(&deja, &shared, home.as_deref(), None)?
                    } else {
                        languages::prepare_cjk(&deja, &shared, home.as_deref())?
                    };
                    signals::languages(&corpus, &items, &mut out)?;
                }
                "demo" => {
                    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
                    let set = demo::prepare(&deja, &repo)?;
                    signals::demo(&set, &mut out)?;
                }
                other => anyhow::bail!(
                    "unknown set `{other}`: use locomo, real, languages, languages-cjk or demo"
                ),
            }
            std::io::Write::flush(&mut out)?;
        }
    }
    Ok(())
}
