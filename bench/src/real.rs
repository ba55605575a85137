//! Retrieval quality on real coding transcripts: the evaluation set in
//! `bench/eval/real.jsonl` (queries written by reading the shared corpus's
//! sessions, each with the sessions and messages that answer it, its kind and
//! its half) asked against the whole corpus as `deja index` stores it, through
//! the same engine and the same defaults as `deja recall` (hits as listed).
//! Reported by mode, kind, harness and half (`tune` may choose weights;
//! `report` is only reported).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use deja_config::Mode;
use deja_recall::engine::{Engine, Query};
use deja_recall::{Candidates, Tuning};
use deja_store::Store;
use serde::Deserialize;

use crate::env::{BenchEnv, Cost};
use crate::floor;
use crate::quality::{Listed, Metrics};

/// One query of the set.
#[derive(Debug, Clone, Deserialize)]
pub struct Item {
    /// `r001`…
    pub id: String,
    /// The harness of the answering session.
    pub harness: String,
    /// paraphrase, identifier, error, file, decision or vague.
    pub kind: String,
    /// `tune` or `report`.
    pub half: String,
    /// The query as a user would type it.
    pub query: String,
    /// Native ids of the sessions that answer it.
    pub sessions: Vec<String>,
    /// The answering messages: (native session id, message index).
    pub turns: Vec<(String, i64)>,
}

/// The set, read from the repository.
pub fn load(path: &Path) -> Result<Vec<Item>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the evaluation set `{}`", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .with_context(|| format!("`{}` line {}: not an item", path.display(), i + 1))
        })
        .collect()
}

/// The set's default location.
pub fn default_set() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("eval/real.jsonl")
}

/// The shared corpus indexed with real embeddings.
pub struct Corpus {
    /// The environment holding the store.
    pub env: BenchEnv,
    /// What indexing cost.
    pub index_cost: Cost,
    /// What `deja index` wrote to stderr.
    pub index_said: String,
}

fn dirs_in(dir: &Path, want_dirs: bool, ext: Option<&str>) -> Result<Vec<String>> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read `{}`", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() == want_dirs)
        .filter(|p| ext.is_none_or(|x| p.extension().is_some_and(|e| e == x)))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    out.sort();
    Ok(out)
}

/// Indexes every transcript of `shared/corpus` (all five harnesses, or only
/// the harness `only` names, for quick runs) into a fresh environment, or
/// into `home` (reused when already indexed).
pub fn prepare(
    deja: &Path,
    shared: &Path,
    home: Option<&Path>,
    only: Option<&str>,
) -> Result<Corpus> {
    let shared = shared
        .canonicalize()
        .with_context(|| format!("cannot find the shared folder `{}`", shared.display()))?;
    let corpus = shared.join("corpus");
    let wanted = |h: &str| only.is_none_or(|o| o == h);
    let roots = |h: &str, files: bool| -> Result<Vec<String>> {
        if wanted(h) {
            dirs_in(&corpus.join(h), !files, files.then_some("md"))
        } else {
            Ok(Vec::new())
        }
    };
    let mut extra = format!(
        "{}[harness.aider]\nroots = {:?}\ntimezone = \"UTC\"\n[harness.gemini]\nroots = {:?}\n",
        crate::engine::embed_overrides(),
        roots("aider", true)?,
        roots("gemini", false)?
    );
    for harness in ["claude", "codex", "qwen"] {
        extra.push_str(&format!(
            "[harness.{harness}]\nroots = {:?}\n",
            roots(harness, false)?
        ));
    }
    let mut env = BenchEnv::at(deja, &extra, home)?;
    // Nothing of the machine's own harness folders.
    for var in [
        "GEMINI_CLI_HOME",
        "CODEX_HOME",
        "CLAUDE_CONFIG_DIR",
        "QWEN_HOME",
    ] {
        env.set(var, env.home.join("none"));
    }
    let (index_cost, index_said) = env.run_saying(&["index"])?;
    Ok(Corpus {
        env,
        index_cost,
        index_said,
    })
}

/// Results by (mode, group) where group is `all`, `kind:K`, `harness:H` or
/// `half:H`, each split by half.
#[derive(Debug, Default)]
pub struct RealReport {
    /// (mode, half, group) → metrics.
    pub metrics: BTreeMap<(&'static str, String, String), Metrics>,
    /// Messages in the store.
    pub messages: i64,
    /// Sessions in the store.
    pub sessions: i64,
    /// Misses at 5 of either half in hybrid mode (each line names its half), for reading.
    pub misses: Vec<String>,
    /// How the unanswerable queries fared ([`crate::floor::rejection`]).
    pub unanswerable: String,
}

/// Asks every query in every mode, as `deja recall -n 10` lists hits.
pub fn evaluate(
    corpus: &Corpus,
    items: &[Item],
    modes: &[Mode],
    per_session: Option<usize>,
    tuning: &Tuning,
) -> Result<RealReport> {
    let store = Store::open_read(&corpus.env.database())?;
    let counts = store.counts()?;
    let mut engine = Engine::open(
        store,
        &corpus.env.vectors(),
        Some(crate::engine::settings()?),
    );
    if let Some(why) = engine.semantic_unavailable() {
        anyhow::bail!("semantic ranking cannot run on the corpus store: {why}");
    }
    let mut report = RealReport {
        messages: counts.messages,
        sessions: counts.sessions,
        ..Default::default()
    };
    let everything = Candidates::default();
    let mut probe = if floor::wanted() {
        Some(floor::Probe::open(
            &corpus.env.database(),
            &corpus.env.vectors(),
        )?)
    } else {
        None
    };
    for item in items {
        for &mode in modes {
            let answer = engine.recall(&Query {
                text: &item.query,
                mode,
                scope: &everything,
                limit: 10,
                tuning: *tuning,
                per_session,
            })?;
            let listed = Listed::of(&answer.hits);
            let answers = |h: &deja_recall::Hit| {
                item.sessions
                    .iter()
                    .any(|s| *s == h.native_session_id || *s == h.session_id)
            };
            let session_rank = listed.session_rank(answers);
            if let (Some(probe), Mode::Hybrid) = (probe.as_mut(), mode) {
                let rescue = probe.rescue(&item.query, &everything, &answer.hits, answers)?;
                println!(
                    "FLOOR real {} {} {} {rescue} {:?}",
                    item.half, item.kind, item.id, item.query
                );
            }
            let turn_hit = listed.turn_within(5, |h| {
                item.turns.iter().any(|(s, i)| {
                    (*s == h.native_session_id || *s == h.session_id) && *i == h.message_index
                })
            });
            if mode == Mode::Hybrid && std::env::var_os("DEJA_BENCH_TURNS").is_some() {
                println!(
                    "TURN {} {} {} {} {:?}",
                    item.half,
                    item.kind,
                    item.id,
                    if turn_hit { "hit" } else { "miss" },
                    answer
                        .hits
                        .iter()
                        .take(5)
                        .map(|h| format!("{}#{}", h.native_session_id, h.message_index))
                        .collect::<Vec<_>>()
                );
            }
            if mode == Mode::Hybrid && session_rank.is_none_or(|r| r >= 5) {
                report.misses.push(format!(
                    "{} {} [{}] {:?}: first hits {:?}",
                    item.half,
                    item.id,
                    item.kind,
                    item.query,
                    answer
                        .hits
                        .iter()
                        .take(3)
                        .map(|h| format!("{}#{}", h.native_session_id, h.message_index))
                        .collect::<Vec<_>>()
                ));
            }
            for group in [
                "all".to_string(),
                format!("kind:{}", item.kind),
                format!("harness:{}", item.harness),
            ] {
                for half in [item.half.clone(), "both".to_string()] {
                    report
                        .metrics
                        .entry((mode.as_str(), half, group.clone()))
                        .or_default()
                        .add_ranks(session_rank, turn_hit);
                }
            }
        }
    }
    if let Some(probe) = probe.as_mut() {
        crate::floor::report_nonsense("real", probe, &mut engine, tuning, per_session)?;
    }
    report.unanswerable = floor::rejection(
        "real",
        &mut engine,
        tuning,
        per_session,
        std::slice::from_ref(&everything),
    )?;
    Ok(report)
}

/// The Markdown tables of a run.
pub fn tables(r: &RealReport, per_session: Option<usize>) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} sessions, {} messages; hits as `deja recall -n 10` lists them ({}); a session counts at the first rank at which it appears.\n",
        r.sessions,
        r.messages,
        match per_session {
            Some(n) => format!("at most {n} per session"),
            None => "no per-session cap".into(),
        }
    );
    let _ = writeln!(
        s,
        "| half | mode | group | queries | session hit@1 | hit@5 | hit@10 | MRR@10 | turn hit@5 |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|");
    for half in ["report", "tune", "both"] {
        for ((mode, h, group), m) in &r.metrics {
            if h != half || (half == "both" && group != "all") {
                continue;
            }
            let _ = writeln!(
                s,
                "| {half} | {mode} | {group} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |",
                m.n,
                m.rate(m.hit1),
                m.rate(m.hit5),
                m.rate(m.hit10),
                m.mrr10 / m.n.max(1) as f64,
                m.rate(m.turn5)
            );
        }
    }
    s
}
