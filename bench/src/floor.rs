//! What the relevance floor (`recall.min_similarity`) decides on, measured:
//! for each query whose answer is listed, whether an answering hit among the
//! first five sessions matches the query by words (the floor never removes
//! it) or, if none does, the best cosine similarity among them (the floor
//! must stay at or below it to keep that answer); and for queries that share
//! nothing with the history (`bench/eval/unanswerable.jsonl`), the best similarity
//! of any message without a word in common (the floor must be above it for
//! recall to say "no matches"). Printed when `DEJA_BENCH_FLOOR` is set; the
//! lines are read by hand or summarised with `sort`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use deja_config::Mode;
use deja_recall::{floor, Candidates, Hit};

/// Whether floor reports are asked for.
pub fn wanted() -> bool {
    std::env::var_os("DEJA_BENCH_FLOOR").is_some()
}

/// A query that nothing in an evaluation corpus answers
/// (`bench/eval/unanswerable.jsonl`): random letters, or a topic the corpus
/// does not discuss.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Unanswerable {
    /// `u01`, `u02`, ...
    pub id: String,
    /// `random` or `offtopic`.
    pub kind: String,
    /// `tune` (may choose settings) or `report` (only reported).
    pub half: String,
    /// The query.
    pub query: String,
    /// Sets whose corpus does discuss the topic (`locomo`, `real`), where
    /// the query is not asked.
    #[serde(default)]
    pub not_for: Vec<String>,
}

/// The unanswerable queries asked of `set` (`locomo` or `real`).
pub fn unanswerable(set: &str) -> Result<Vec<Unanswerable>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("eval/unanswerable.jsonl");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read `{}`", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let q: Unanswerable = serde_json::from_str(line)
            .with_context(|| format!("`{}` line {}", path.display(), n + 1))?;
        if !q.not_for.iter().any(|s| s == set) {
            out.push(q);
        }
    }
    Ok(out)
}

/// How a listed answer fares under a floor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rescue {
    /// An answering hit among the first five sessions matches by words
    /// (the best lexical score of those that do).
    Words(f64),
    /// None does; the best similarity among those found by meaning.
    Meaning(f64),
    /// No answering hit among the first five sessions.
    Missed,
}

impl std::fmt::Display for Rescue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rescue::Words(l) => write!(f, "words {l:.4}"),
            Rescue::Meaning(s) => write!(f, "{s:.4}"),
            Rescue::Missed => write!(f, "missed"),
        }
    }
}

/// The store, its vectors and the model, for gathering the evidence the
/// floor sees.
pub struct Probe {
    engine: crate::engine::Engine,
}

impl Probe {
    /// Opens the store at `database` with its vectors.
    pub fn open(database: &Path, vectors: &Path) -> Result<Probe> {
        Ok(Probe {
            engine: crate::engine::engine(database, vectors)?,
        })
    }

    fn signals(&mut self, query: &str, scope: &Candidates) -> Result<deja_recall::Signals> {
        let v = self.engine.embedder.embed_query(query)?;
        let e = &self.engine;
        Ok(deja_recall::gather(
            &e.store,
            query,
            Mode::Hybrid,
            scope,
            Some((&e.vectors(), v.as_slice())),
            deja_recall::Tuning::default().depth,
        )?)
    }

    /// How the answer among `hits` (listed without a floor) fares: see
    /// [`Rescue`].
    pub fn rescue(
        &mut self,
        query: &str,
        scope: &Candidates,
        hits: &[Hit],
        answers: impl Fn(&Hit) -> bool,
    ) -> Result<Rescue> {
        let s = self.signals(query, scope)?;
        let mut sessions: Vec<i64> = Vec::new();
        let mut best: Option<f64> = None;
        let mut words: Option<f64> = None;
        for h in hits {
            if !sessions.contains(&h.session_row) {
                if sessions.len() == 5 {
                    break;
                }
                sessions.push(h.session_row);
            }
            if !answers(h) {
                continue;
            }
            match floor::evidence(&s, h.message_row) {
                (Some(l), _) => words = Some(words.map_or(l, |w: f64| w.max(l))),
                (None, Some(sim)) => best = Some(best.map_or(sim, |b: f64| b.max(sim))),
                (None, None) => {}
            }
        }
        Ok(match (words, best) {
            (Some(l), _) => Rescue::Words(l),
            (None, Some(sim)) => Rescue::Meaning(sim),
            (None, None) => Rescue::Missed,
        })
    }

    /// For a query that should match nothing: the best similarity of a
    /// message that shares no word with it, how many messages do share one,
    /// and the best lexical score among them.
    pub fn nearest(
        &mut self,
        query: &str,
        scope: &Candidates,
    ) -> Result<(Option<f64>, usize, Option<f64>)> {
        let s = self.signals(query, scope)?;
        let best = s
            .semantic
            .iter()
            .filter(|(id, _)| !s.lexical.iter().any(|l| l.0 == *id))
            .map(|x| x.1)
            .fold(None, |b: Option<f64>, v| Some(b.map_or(v, |b| b.max(v))));
        let words = s.lexical.first().map(|x| x.1);
        Ok((best, s.lexical.len(), words))
    }
}

/// Prints the nonsense queries' nearest messages in the store at `database`
/// (the whole store), and how many hits `engine` lists for each with `tuning`.
pub fn report_nonsense(
    set: &str,
    probe: &mut Probe,
    engine: &mut deja_recall::engine::Engine,
    tuning: &deja_recall::Tuning,
    per_session: Option<usize>,
) -> Result<()> {
    let everything = Candidates::default();
    for q in unanswerable(set)? {
        let q = q.query;
        let (best, by_words, best_words) = probe.nearest(&q, &everything)?;
        let answer = engine.recall(&deja_recall::engine::Query {
            text: &q,
            mode: Mode::Hybrid,
            scope: &everything,
            limit: 10,
            tuning: *tuning,
            per_session,
        })?;
        println!(
            "NONSENSE {set} best-similarity-without-words {} word-matches {by_words} best-lexical {} hits {} {q:?}",
            best.map_or("none".to_string(), |b| format!("{b:.4}")),
            best_words.map_or("none".to_string(), |b| format!("{b:.4}")),
            answer.hits.len(),
        );
        for h in answer.hits.iter().take(2) {
            let text: String = h.text.chars().take(80).collect();
            println!("    {:.4} {:?}", h.score, text.replace('\n', " "));
        }
    }
    Ok(())
}

/// How many of the unanswerable queries asked of `set` get no hits in
/// hybrid ranking with `tuning` (as `deja recall` would say "no matches"),
/// each asked within every scope of `scopes`; one line, by kind and half.
pub fn rejection(
    set: &str,
    engine: &mut deja_recall::engine::Engine,
    tuning: &deja_recall::Tuning,
    per_session: Option<usize>,
    scopes: &[Candidates],
) -> Result<String> {
    use std::collections::BTreeMap;
    // (group) -> (no matches, asked)
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for q in unanswerable(set)? {
        for scope in scopes {
            let answer = engine.recall(&deja_recall::engine::Query {
                text: &q.query,
                mode: Mode::Hybrid,
                scope,
                limit: 10,
                tuning: *tuning,
                per_session,
            })?;
            let none = answer.hits.is_empty();
            for group in ["all".to_string(), q.kind.clone(), q.half.clone()] {
                let c = counts.entry(group).or_default();
                c.0 += usize::from(none);
                c.1 += 1;
            }
        }
    }
    let part = |g: &str| {
        let (n, of) = counts.get(g).copied().unwrap_or_default();
        format!("{n}/{of}")
    };
    Ok(format!(
        "unanswerable queries (bench/eval/unanswerable.jsonl), hybrid: \"no matches\" for {} (random {}, off-topic {}; tune half {}, report half {})",
        part("all"),
        part("random"),
        part("offtopic"),
        part("tune"),
        part("report"),
    ))
}
