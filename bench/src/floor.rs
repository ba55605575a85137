//! What the relevance floor (`recall.min_similarity`) decides on, measured:
//! for each query whose answer is listed, whether an answering hit among the
//! first five sessions matches the query by words (the floor never removes
//! it) or, if none does, the best cosine similarity among them (the floor
//! must stay at or below it to keep that answer); and for queries that share
//! nothing with the history (`bench/eval/nonsense.txt`), the best similarity
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

/// The nonsense queries, one a line (`#` starts a comment).
pub fn nonsense() -> Result<Vec<String>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("eval/nonsense.txt");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read `{}`", path.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect())
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
    for q in nonsense()? {
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
