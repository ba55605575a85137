//! Retrieval across languages: the set in `bench/eval/languages.jsonl`
//! (Chinese and Japanese queries for the shared corpus's Chinese and Japanese
//! sessions, in other words than the answer's and as keywords; English
//! queries for those sessions; Chinese and Japanese queries for English
//! sessions), asked against two stores: the whole corpus, and one holding
//! only the folders and files with Chinese or Japanese sessions. Reported by
//! store, mode, query language and kind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use deja_config::Mode;
use deja_recall::engine::{Engine, Query};
use deja_recall::{Candidates, Tuning};
use deja_store::Store;
use serde::Deserialize;

use crate::env::BenchEnv;
use crate::quality::{Listed, Metrics};
use crate::real::Corpus;

/// One query of the set.
#[derive(Debug, Clone, Deserialize)]
pub struct Item {
    /// `l001`…
    pub id: String,
    /// The harness of the answering session.
    pub harness: String,
    /// `paraphrase` (the query's language is the session's, in other words),
    /// `keyword` (a few of the session's own words) or `cross` (the query in
    /// another language than the session).
    pub kind: String,
    /// `tune` or `report`.
    pub half: String,
    /// The query's language: `zh`, `ja` or `en`.
    pub lang: String,
    /// The query.
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
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("eval/languages.jsonl")
}

/// The corpus's aider histories with Chinese or Japanese sessions.
const CJK_AIDER: &[&str] = &[
    "Ag3497120__nullai-app.md",
    "BeehiveInnovations__zen-mcp-server.md",
];

/// The corpus's Codex folders with Chinese or Japanese rollouts.
const CJK_CODEX: &[&str] = &[
    "0h-n0__local-voice-assistant-codex",
    "ADIOCLASSMATE__dotfile",
    "doudouqie66__CommonTools",
    "h-morishita-esol__devenv",
];

/// Indexes only the corpus's Chinese and Japanese histories (the aider
/// files and Codex folders above) into a fresh environment, or into `home`.
pub fn prepare_cjk(deja: &Path, shared: &Path, home: Option<&Path>) -> Result<Corpus> {
    let corpus = shared
        .canonicalize()
        .with_context(|| format!("cannot find the shared folder `{}`", shared.display()))?
        .join("corpus");
    let aider: Vec<String> = CJK_AIDER
        .iter()
        .map(|f| corpus.join("aider").join(f).to_string_lossy().into_owned())
        .collect();
    let codex: Vec<String> = CJK_CODEX
        .iter()
        .map(|f| corpus.join("codex").join(f).to_string_lossy().into_owned())
        .collect();
    let extra = format!(
        "{}[harness.aider]\nroots = {aider:?}\ntimezone = \"UTC\"\n[harness.codex]\nroots = {codex:?}\n\
         [harness.gemini]\nroots = []\n[harness.claude]\nroots = []\n[harness.qwen]\nroots = []\n",
        crate::engine::embed_overrides(),
    );
    let mut env = BenchEnv::at(deja, &extra, home)?;
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

/// Results by (mode, group): `all`, `kind:K`, `lang:L`, `lang:L kind:K`.
#[derive(Debug, Default)]
pub struct Report {
    /// (mode, group) → metrics.
    pub metrics: BTreeMap<(&'static str, String), Metrics>,
    /// Sessions in the store.
    pub sessions: i64,
    /// Messages in the store.
    pub messages: i64,
    /// Queries whose answer is not in the store (left out).
    pub skipped: usize,
    /// Hybrid misses at 5, for reading.
    pub misses: Vec<String>,
}

/// Asks every query whose answer the store holds, in every mode, as `deja
/// recall -n 10` lists hits.
pub fn evaluate(
    corpus: &Corpus,
    items: &[Item],
    modes: &[Mode],
    per_session: Option<usize>,
    tuning: &Tuning,
) -> Result<Report> {
    let store = Store::open_read(&corpus.env.database())?;
    let counts = store.counts()?;
    let natives: std::collections::HashSet<String> =
        crate::quality::native_ids(&store)?.into_values().collect();
    let mut engine = Engine::open(
        store,
        &corpus.env.vectors(),
        Some(crate::engine::settings()?),
    );
    if let Some(why) = engine.semantic_unavailable() {
        anyhow::bail!("semantic ranking cannot run on the store: {why}");
    }
    let mut report = Report {
        sessions: counts.sessions,
        messages: counts.messages,
        ..Default::default()
    };
    let everything = Candidates::default();
    for item in items {
        if !item.sessions.iter().any(|s| natives.contains(s)) {
            report.skipped += 1;
            continue;
        }
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
            let rank = listed.session_rank(answers);
            let turn_hit = listed.turn_within(5, |h| {
                item.turns.iter().any(|(s, i)| {
                    (*s == h.native_session_id || *s == h.session_id) && *i == h.message_index
                })
            });
            if mode == Mode::Hybrid && rank.is_none_or(|r| r >= 5) {
                report.misses.push(format!(
                    "{} {} {} [{} {}] {:?}: first hits {:?}",
                    item.half,
                    item.harness,
                    item.id,
                    item.lang,
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
                format!("lang:{}", item.lang),
                format!("lang:{} kind:{}", item.lang, item.kind),
            ] {
                report
                    .metrics
                    .entry((mode.as_str(), group))
                    .or_default()
                    .add_ranks(rank, turn_hit);
            }
        }
    }
    Ok(report)
}

/// The Markdown table of one store's run.
pub fn table(store: &str, r: &Report) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{store}: {} sessions, {} messages; {} queries left out (answer not in this store)\n",
        r.sessions, r.messages, r.skipped
    );
    let _ = writeln!(
        s,
        "| store | mode | group | queries | hit@1 | hit@5 | hit@10 | MRR@10 | turn hit@5 |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|");
    for ((mode, group), m) in &r.metrics {
        let _ = writeln!(
            s,
            "| {store} | {mode} | {group} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |",
            m.n,
            m.rate(m.hit1),
            m.rate(m.hit5),
            m.rate(m.hit10),
            m.mrr10 / m.n.max(1) as f64,
            m.rate(m.turn5)
        );
    }
    s
}
