//! Retrieval quality on LoCoMo: the shared benchmark is converted into Gemini
//! CLI recordings by its own script, indexed by the real `deja index`, and
//! every question is asked in-process through deja's recall, restricted to
//! its conversation's project, in each mode. Reports session-level hit@1,
//! hit@5 and MRR@10, and evidence-turn hit@5, overall and by category.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use deja_config::Mode;
use deja_recall::{Candidates, Tuning};
use deja_store::SessionFilter;
use deja_store::Store;
use serde::Deserialize;

use crate::engine::{embed_overrides, engine, settings};
use crate::env::{BenchEnv, Cost};

/// One LoCoMo question as the conversion script writes it.
#[derive(Debug, Clone, Deserialize)]
pub struct Question {
    /// Project slug of its conversation.
    pub project: String,
    /// The question.
    pub question: String,
    /// LoCoMo's category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial).
    pub category: Option<u8>,
    /// Dialog ids that hold the answer.
    pub evidence: Vec<String>,
    /// Native session ids that hold the answer.
    pub sessions: Vec<String>,
}

/// Name of a LoCoMo category.
pub fn category_name(c: u8) -> &'static str {
    match c {
        1 => "multi-hop",
        2 => "temporal",
        3 => "open-domain",
        4 => "single-hop",
        5 => "adversarial",
        _ => "other",
    }
}

/// Hits as a user sees them listed, read session by session: a session
/// counts at the first rank at which it appears.
pub struct Listed<'a> {
    hits: &'a [deja_recall::Hit],
}

impl<'a> Listed<'a> {
    /// The hits of one answer, in listed order.
    pub fn of(hits: &'a [deja_recall::Hit]) -> Self {
        Listed { hits }
    }

    /// The 0-based rank, among distinct sessions in listed order, of the
    /// first session whose hits `answers` accepts.
    pub fn session_rank(&self, answers: impl Fn(&deja_recall::Hit) -> bool) -> Option<usize> {
        let mut seen: Vec<i64> = Vec::new();
        for h in self.hits {
            if seen.contains(&h.session_row) {
                continue;
            }
            if answers(h) {
                return Some(seen.len());
            }
            seen.push(h.session_row);
        }
        None
    }

    /// Whether one of the first `n` hits is an answering message.
    pub fn turn_within(&self, n: usize, answers: impl Fn(&deja_recall::Hit) -> bool) -> bool {
        self.hits.iter().take(n).any(answers)
    }
}

/// Accumulated metrics.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    /// Questions.
    pub n: usize,
    /// Session hit at rank 1.
    pub hit1: usize,
    /// Session hit within rank 5.
    pub hit5: usize,
    /// Session hit within rank 10.
    pub hit10: usize,
    /// Sum of reciprocal ranks of the first evidence session within 10.
    pub mrr10: f64,
    /// An evidence turn within the first 5 hits.
    pub turn5: usize,
}

impl Metrics {
    /// Adds one query: the 0-based session rank (if found) and whether an
    /// answering message was among the first five hits.
    pub fn add_ranks(&mut self, rank: Option<usize>, turn_hit: bool) {
        self.n += 1;
        if rank == Some(0) {
            self.hit1 += 1;
        }
        if rank.is_some_and(|r| r < 5) {
            self.hit5 += 1;
        }
        if let Some(r) = rank.filter(|r| *r < 10) {
            self.hit10 += 1;
            self.mrr10 += 1.0 / (r as f64 + 1.0);
        }
        if turn_hit {
            self.turn5 += 1;
        }
    }

    /// `count` as a share of the queries.
    pub fn rate(&self, count: usize) -> f64 {
        count as f64 / self.n.max(1) as f64
    }

    fn add(&mut self, sessions: &[String], turns: &[String], q: &Question) {
        self.n += 1;
        let rank = sessions.iter().position(|s| q.sessions.contains(s));
        if rank == Some(0) {
            self.hit1 += 1;
        }
        if rank.is_some_and(|r| r < 5) {
            self.hit5 += 1;
        }
        if let Some(r) = rank.filter(|r| *r < 10) {
            self.mrr10 += 1.0 / (r as f64 + 1.0);
        }
        if turns.iter().take(5).any(|t| q.evidence.contains(t)) {
            self.turn5 += 1;
        }
    }

    /// (hit@1, hit@5, MRR@10, turn hit@5).
    pub fn rates(&self) -> (f64, f64, f64, f64) {
        let n = self.n.max(1) as f64;
        (
            self.hit1 as f64 / n,
            self.hit5 as f64 / n,
            self.mrr10 / n,
            self.turn5 as f64 / n,
        )
    }
}

/// The results of one quality run.
#[derive(Debug, Clone, Default)]
pub struct QualityReport {
    /// Metrics by mode name.
    pub by_mode: BTreeMap<&'static str, Metrics>,
    /// Metrics by (mode, category).
    pub by_category: BTreeMap<(&'static str, u8), Metrics>,
    /// Cost of indexing the converted benchmark.
    pub index_cost: Option<Cost>,
    /// Messages indexed.
    pub messages: i64,
    /// In-process query latencies (ms) in hybrid mode, embedding included.
    pub hybrid_latencies_ms: Vec<f64>,
    /// How the unanswerable queries fared, each asked within every
    /// conversation ([`crate::floor::rejection`]).
    pub unanswerable: String,
}

/// A LoCoMo store, converted and indexed.
pub struct Locomo {
    /// The environment holding the store.
    pub env: BenchEnv,
    /// The questions.
    pub questions: Vec<Question>,
    /// What indexing cost.
    pub index_cost: Cost,
}

/// Converts and indexes LoCoMo into a fresh environment, or into `home`
/// (where an earlier run's conversion is reused); `only` keeps one
/// conversation, for quick runs.
pub fn prepare(
    deja: &Path,
    shared: &Path,
    extra_config: &str,
    home: Option<&Path>,
    only: Option<&str>,
) -> Result<Locomo> {
    let config = format!("{}{extra_config}", embed_overrides());
    let mut env = BenchEnv::at(deja, &config, home)?;
    if !env.home.join("questions.jsonl").exists() {
        let script = shared.join("bench/locomo_to_gemini.py");
        let status = std::process::Command::new("python3")
            .arg(&script)
            .arg(shared.join("bench/locomo10.json"))
            .arg(&env.home)
            .status()
            .with_context(|| format!("cannot run {}", script.display()))?;
        anyhow::ensure!(status.success(), "{} failed", script.display());
    }
    env.set("DEJA_GEMINI_ROOT", env.home.join(".gemini"));
    if let Some(keep) = only {
        // A quick run: one conversation only.
        for entry in std::fs::read_dir(env.home.join(".gemini/tmp"))? {
            let entry = entry?;
            if entry.file_name().to_string_lossy() != keep {
                std::fs::remove_dir_all(entry.path())?;
            }
        }
    }
    let index_cost = env.run(&["index"])?;
    let questions = std::fs::read_to_string(env.home.join("questions.jsonl"))?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<std::result::Result<Vec<Question>, _>>()?
        .into_iter()
        .filter(|q| only.is_none_or(|o| q.project == o))
        .collect();
    Ok(Locomo {
        env,
        questions,
        index_cost,
    })
}

/// Every question's signals, gathered once in hybrid mode, for sweeping
/// tunings without touching the store again.
pub fn gather_all(locomo: &Locomo) -> Result<Vec<(usize, deja_recall::Signals)>> {
    let mut e = engine(&locomo.env.database(), &locomo.env.vectors())?;
    let mut out = Vec::new();
    for (i, q) in locomo.questions.iter().enumerate() {
        let qv = e.embedder.embed_query(&q.question)?;
        let candidates = Candidates {
            filter: SessionFilter {
                project: Some(q.project.clone()),
                ..Default::default()
            },
            role: None,
        };
        let s = deja_recall::gather(
            &e.store,
            &q.question,
            Mode::Hybrid,
            &candidates,
            Some((&e.vectors(), qv.as_slice())),
            100,
        )?;
        out.push((i, s));
    }
    Ok(out)
}

/// Session-level metrics of one tuning over gathered signals, for `mode`.
pub fn score_tuning(
    locomo: &Locomo,
    store: &Store,
    gathered: &[(usize, deja_recall::Signals)],
    tuning: &Tuning,
    mode: Mode,
    natives: &std::collections::HashMap<i64, String>,
) -> Metrics {
    let _ = store;
    let mut m = Metrics::default();
    for (i, s) in gathered {
        let q = &locomo.questions[*i];
        let mut s = s.clone();
        s.mode = mode;
        let ranked = deja_recall::rank(&s, tuning);
        let mut sessions: Vec<String> = Vec::new();
        for (id, _) in ranked.iter().take(200) {
            if let Some(n) = s.session_of.get(id).and_then(|x| natives.get(x)) {
                if !sessions.contains(n) {
                    sessions.push(n.clone());
                }
            }
            if sessions.len() >= 10 {
                break;
            }
        }
        m.add(&sessions, &[], q);
    }
    m
}

/// Session row → native session id, for scoring without hydrating hits.
pub fn native_ids(store: &Store) -> Result<std::collections::HashMap<i64, String>> {
    Ok(store
        .sessions(&SessionFilter::default(), None)?
        .into_iter()
        .map(|r| (r.row, r.native_id))
        .collect())
}

/// Asks every question in every mode through the engine `deja recall`
/// uses, restricted to its conversation's project, and scores the hits as
/// `deja recall -n 10` lists them (with `per_session` as the cap).
pub fn evaluate(
    locomo: &Locomo,
    tuning: &Tuning,
    modes: &[Mode],
    per_session: Option<usize>,
) -> Result<QualityReport> {
    let store = Store::open_read(&locomo.env.database())?;
    let messages = store.counts()?.messages;
    let mut engine =
        deja_recall::engine::Engine::open(store, &locomo.env.vectors(), Some(settings()?));
    engine.warm_up()?;
    if let Some(why) = engine.semantic_unavailable() {
        anyhow::bail!("semantic ranking cannot run on the LoCoMo store: {why}");
    }
    let mut report = QualityReport {
        index_cost: Some(locomo.index_cost),
        messages,
        ..Default::default()
    };
    let mut probe = if crate::floor::wanted() {
        Some(crate::floor::Probe::open(
            &locomo.env.database(),
            &locomo.env.vectors(),
        )?)
    } else {
        None
    };
    for q in &locomo.questions {
        let candidates = Candidates {
            filter: SessionFilter {
                project: Some(q.project.clone()),
                ..Default::default()
            },
            role: None,
        };
        for &mode in modes {
            let started = Instant::now();
            let answer = engine.recall(&deja_recall::engine::Query {
                text: &q.question,
                mode,
                scope: &candidates,
                limit: 10,
                tuning: *tuning,
                per_session,
            })?;
            if mode == Mode::Hybrid {
                report
                    .hybrid_latencies_ms
                    .push(started.elapsed().as_secs_f64() * 1000.0);
            }
            let hits = &answer.hits;
            let listed = Listed::of(hits);
            let answers = |h: &deja_recall::Hit| q.sessions.contains(&h.native_session_id);
            let rank = listed.session_rank(answers);
            if let (Some(probe), Mode::Hybrid) = (probe.as_mut(), mode) {
                let rescue = probe.rescue(&q.question, &candidates, hits, answers)?;
                println!(
                    "FLOOR locomo {} {rescue} {:?}",
                    category_name(q.category.unwrap_or(0)),
                    q.question
                );
            }
            let turn = listed.turn_within(5, |h| q.evidence.contains(&h.message_id));
            let name = mode.as_str();
            if mode == Mode::Hybrid
                && std::env::var_os("DEJA_BENCH_FAILURES").is_some()
                && rank != Some(0)
            {
                eprintln!(
                    "MISS [{}] {}",
                    category_name(q.category.unwrap_or(0)),
                    q.question
                );
                eprintln!("   evidence {:?}", q.evidence);
                for h in hits.iter().take(3) {
                    let ok = if q.sessions.contains(&h.native_session_id) {
                        "*"
                    } else {
                        " "
                    };
                    eprintln!(
                        "   {ok} {:.3} {} {}",
                        h.score,
                        h.message_id,
                        h.text.chars().take(150).collect::<String>()
                    );
                }
            }
            report
                .by_mode
                .entry(name)
                .or_default()
                .add_ranks(rank, turn);
            report
                .by_category
                .entry((name, q.category.unwrap_or(0)))
                .or_default()
                .add_ranks(rank, turn);
        }
    }
    if let Some(probe) = probe.as_mut() {
        crate::floor::report_nonsense("locomo", probe, &mut engine, tuning, per_session)?;
    }
    let mut projects: Vec<&String> = locomo.questions.iter().map(|q| &q.project).collect();
    projects.sort_unstable();
    projects.dedup();
    let scopes: Vec<Candidates> = projects
        .into_iter()
        .map(|p| Candidates {
            filter: SessionFilter {
                project: Some(p.clone()),
                ..Default::default()
            },
            role: None,
        })
        .collect();
    report.unanswerable =
        crate::floor::rejection("locomo", &mut engine, tuning, per_session, &scopes)?;
    Ok(report)
}

/// The default location of the shared folder, beside the checkout.
pub fn default_shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}
