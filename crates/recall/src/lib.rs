//! deja's recall engine: ranks stored messages for a query by meaning
//! (embeddings), by words (BM25), or both fused, with session-level
//! evidence; folds near-duplicate hits; and returns them with their session,
//! project and time. It reads the store only through the store's API.
//!
//! [`engine::Engine`] is opened once over a store (and, when semantic ranking
//! is possible, the model) and answers many queries: the CLI, the MCP server
//! and the benchmark all rank through it.
//!
//! - [`lexical`]: query terms, BM25 with local IDF, phrase pairs.
//! - [`semantic`]: the query vector against the vector index.
//! - [`session`]: session-level evidence from a session's best messages.
//! - [`when`]: dates the query names.
//! - [`fuse`]: fusing the two rankings.
//! - [`scripts`]: more weight on meaning for messages in another writing
//!   system than the question's, which words cannot reach.
//! - [`floor`]: the relevance a hit found by meaning alone must have.
//! - [`relevance`]: whether an answer is worth giving, and its weak hits.
//! - [`snippet`]: the part of a hit's text to show.

pub mod engine;
pub mod floor;
pub mod fuse;
pub mod lexical;
pub mod relevance;
pub mod scripts;
pub mod semantic;
pub mod session;
pub mod snippet;
pub mod when;

use std::collections::{HashMap, HashSet};

use deja_config::Mode;
use deja_model::{sha256_hex, Project};
use deja_store::search::HitRow;
use deja_store::Store;

pub use deja_store::{Scope as Candidates, SessionFilter, StoreError};

/// Why ranking failed: the store, or the vector index, could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecallError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The vector index failed.
    #[error(transparent)]
    Vectors(#[from] deja_store::vectors::VectorError),
    /// A ranked message could not be read.
    #[error("{0}")]
    Unreadable(String),
}

/// Result alias of ranking.
pub type Result<T> = std::result::Result<T, RecallError>;

/// One result.
#[derive(Debug, Clone)]
pub struct Hit {
    /// 1-based rank.
    pub rank: usize,
    /// The fused (or single-mode) score; higher is better.
    pub score: f64,
    /// Message row id.
    pub message_row: i64,
    /// Session row id.
    pub session_row: i64,
    /// The session's deja id.
    pub session_id: String,
    /// Harness.
    pub harness: String,
    /// Project.
    pub project: Project,
    /// Session start, ms.
    pub started_at: i64,
    /// The harness's message id, or deja's.
    pub message_id: String,
    /// Position in the session.
    pub message_index: i64,
    /// Role.
    pub role: String,
    /// Message time, ms.
    pub timestamp: i64,
    /// Full text.
    pub text: String,
    /// Transcript path.
    pub source_path: Option<String>,
    /// The harness's id of the session.
    pub native_session_id: String,
    /// Who published the session, when pulled from the team store.
    pub origin: Option<String>,
    /// Other hits with the same text, folded into this one.
    pub duplicates: Vec<String>,
    /// How many other ranked messages of the same session are not shown
    /// (set on the session's first hit when a per-session cap applies).
    pub more_in_session: usize,
    /// Whether the hit's evidence is weak ([`relevance::weak`]).
    pub weak: bool,
}

impl Hit {
    fn from_row(r: HitRow) -> Hit {
        Hit {
            rank: 0,
            score: 0.0,
            message_row: r.message_row,
            session_row: r.session_row,
            session_id: r.session_id,
            harness: r.harness,
            project: r.project,
            started_at: r.started_at,
            message_id: r.message_id,
            message_index: r.message_index,
            role: r.role,
            timestamp: r.timestamp,
            text: r.text,
            source_path: r.source_path,
            native_session_id: r.native_session_id,
            origin: r.origin,
            duplicates: Vec::new(),
            more_in_session: 0,
            weak: false,
        }
    }
}

/// The knobs of ranking. [`Tuning::default`] is what deja uses; the
/// benchmark measures the others (BENCHMARKS.md has the numbers).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tuning {
    /// How many candidates each ranker contributes.
    pub depth: usize,
    /// How the message-level rankings are fused in hybrid mode.
    pub fusion: fuse::Fusion,
    /// Weight of the session-level lexical score (BM25 of the whole session,
    /// normalized by the query's weight) added to each of its messages.
    pub session_lexical: f64,
    /// Weight of the session-level semantic score (the mean similarity of the
    /// session's `session_top` best messages) added to each of its messages.
    pub session_semantic: f64,
    /// How many of a session's best messages make its semantic score.
    pub session_top: usize,
    /// Weight of a session's match with the dates the query mentions.
    pub date_weight: f64,
    /// Weight of the share of the query's word pairs a session holds as phrases.
    pub phrase_weight: f64,
    /// Lexical scores (the share of the query's weight a message or session
    /// matches) are raised to this power: above 1, a chance match of one word
    /// of a paraphrase counts for little while a full match keeps its weight.
    pub lexical_power: f64,
    /// The relevance floor: the least cosine similarity of a message that
    /// does not match the query by words (see [`floor`]); 0: none. deja
    /// takes it from `recall.min_similarity`.
    pub min_similarity: f64,
    /// The least score of a hybrid answer's best hit; under it the answer
    /// is withheld (see [`relevance`]); 0: never. deja takes it from
    /// `recall.min_score`.
    pub min_score: f64,
    /// How much more the meaning of a message in another writing system
    /// than the question's counts, when the question's words match well
    /// (see [`scripts`]); 0: no more.
    pub across_scripts: f64,
}

/// The default of `recall.min_similarity` (config/default.toml): below every
/// answer found by meaning alone on the demo, LoCoMo and the real-transcript
/// set, above the nearest message of random strings on the demo
/// (BENCHMARKS.md, "Relevance floor").
pub const MIN_SIMILARITY: f64 = 0.25;

impl Default for Tuning {
    /// Chosen on LoCoMo (all 1,978 questions; BENCHMARKS.md shows the sweep)
    /// and checked on the demo paraphrases.
    fn default() -> Self {
        Tuning {
            depth: 100,
            fusion: fuse::DEFAULT,
            session_lexical: 0.4,
            session_semantic: 0.25,
            session_top: 3,
            date_weight: 1.5,
            phrase_weight: 0.5,
            lexical_power: 1.5,
            min_similarity: MIN_SIMILARITY,
            min_score: relevance::MIN_SCORE,
            across_scripts: scripts::WEIGHT,
        }
    }
}

/// Everything ranking needs for one query, gathered from the store once.
#[derive(Debug, Clone)]
pub struct Signals {
    /// The mode the lists were gathered for.
    pub mode: Mode,
    /// (message, BM25 normalized by the query's weight), best first.
    pub lexical: Vec<(i64, f64)>,
    /// (message, cosine similarity of its best unit), best first once
    /// discounted for the messages' windows ([`semantic::discounted`]).
    pub semantic: Vec<(i64, f64)>,
    /// Message → how many windows it has in the store, for the messages of
    /// `semantic`.
    pub windows: HashMap<i64, usize>,
    /// Session row → session-level lexical score.
    pub session_lexical: HashMap<i64, f64>,
    /// Message → its session row, for every message in either list.
    pub session_of: HashMap<i64, i64>,
    /// Session row → how well its start date matches the dates in the query.
    pub date_affinity: HashMap<i64, f64>,
    /// Session row → share of the query's word pairs it holds as phrases.
    pub phrases: HashMap<i64, f64>,
    /// Messages of `semantic` written in another writing system than the
    /// query, marked only when the model compares meaning across them
    /// ([`scripts::mark`]).
    pub other_script: HashSet<i64>,
}

impl Signals {
    /// No evidence at all, for `mode` (a half that could not be gathered).
    pub fn empty(mode: Mode) -> Signals {
        Signals {
            mode,
            lexical: Vec::new(),
            semantic: Vec::new(),
            windows: HashMap::new(),
            session_lexical: HashMap::new(),
            session_of: HashMap::new(),
            date_affinity: HashMap::new(),
            phrases: HashMap::new(),
            other_script: HashSet::new(),
        }
    }
}

/// Ranks messages for `query` with the default tuning. `semantic` carries the
/// query embedding and the vectors when semantic ranking is possible.
pub fn search(
    store: &Store,
    query: &str,
    mode: Mode,
    candidates: &Candidates,
    semantic: Option<(&semantic::Vectors, &[f32])>,
    limit: usize,
) -> Result<Vec<Hit>> {
    search_with(
        store,
        query,
        mode,
        candidates,
        semantic,
        limit,
        &Tuning::default(),
    )
}

/// [`search`] with explicit tuning.
pub fn search_with(
    store: &Store,
    query: &str,
    mode: Mode,
    candidates: &Candidates,
    semantic: Option<(&semantic::Vectors, &[f32])>,
    limit: usize,
    tuning: &Tuning,
) -> Result<Vec<Hit>> {
    let signals = gather(
        store,
        query,
        mode,
        candidates,
        semantic,
        tuning.depth.max(limit * 3),
    )?;
    let mut ranked = rank(&signals, tuning);
    relevance::judge(store, &signals, &mut ranked, tuning.min_score, 0.0);
    let mut hits = hydrate(store, &ranked, limit)?;
    relevance::mark(&mut hits, signals.mode);
    Ok(hits)
}

/// Collects the rankings and session facts for `query`.
pub fn gather(
    store: &Store,
    query: &str,
    mode: Mode,
    candidates: &Candidates,
    semantic: Option<(&semantic::Vectors, &[f32])>,
    depth: usize,
) -> Result<Signals> {
    let mut signals = gather_lexical(store, query, mode, candidates, depth)?;
    if let Some((vectors, q)) = semantic {
        add_semantic(store, &mut signals, query, vectors, q, candidates, depth)?;
    }
    Ok(signals)
}

/// The lexical half of [`gather`]: it needs no model, so a caller can run it
/// while the model loads.
pub fn gather_lexical(
    store: &Store,
    query: &str,
    mode: Mode,
    candidates: &Candidates,
    depth: usize,
) -> Result<Signals> {
    let mut signals = lexical_messages(store, query, mode, candidates, depth)?;
    if matches!(mode, Mode::Lexical | Mode::Hybrid) {
        add_session_evidence(
            &mut signals,
            session_evidence(store, query, candidates, depth)?,
        );
    }
    Ok(signals)
}

/// What whole sessions say about a query: each session's lexical score and
/// the share of the query's word pairs it holds as phrases. Part of the
/// lexical half that needs nothing else from it, so it can run on another
/// connection beside the rest.
#[derive(Debug, Clone, Default)]
pub struct SessionEvidence {
    /// Session row id -> lexical score of the whole session.
    pub lexical: HashMap<i64, f64>,
    /// Session row id -> share of the query's word pairs held as phrases.
    pub phrases: HashMap<i64, f64>,
}

/// The [`SessionEvidence`] for `query` among `candidates`.
pub fn session_evidence(
    store: &Store,
    query: &str,
    candidates: &Candidates,
    depth: usize,
) -> Result<SessionEvidence> {
    Ok(SessionEvidence {
        lexical: lexical::search(store, query, candidates, lexical::Level::Session, depth)?
            .into_iter()
            .collect(),
        phrases: lexical::phrase_coverage(store, query, candidates)?,
    })
}

/// Puts `evidence` into `signals`.
pub fn add_session_evidence(signals: &mut Signals, evidence: SessionEvidence) {
    signals.session_lexical = evidence.lexical;
    signals.phrases = evidence.phrases;
}

/// The lexical half without the session evidence: the messages' lexical
/// ranking (none in semantic mode), their sessions and date affinity.
pub fn lexical_messages(
    store: &Store,
    query: &str,
    mode: Mode,
    candidates: &Candidates,
    depth: usize,
) -> Result<Signals> {
    let lexical = if matches!(mode, Mode::Lexical | Mode::Hybrid) {
        lexical::search(store, query, candidates, lexical::Level::Message, depth)?
    } else {
        Vec::new()
    };
    let mut signals = Signals {
        mode,
        lexical,
        semantic: Vec::new(),
        windows: HashMap::new(),
        session_lexical: HashMap::new(),
        session_of: HashMap::new(),
        date_affinity: HashMap::new(),
        phrases: HashMap::new(),
        other_script: HashSet::new(),
    };
    locate(store, &mut signals, query)?;
    Ok(signals)
}

/// The semantic half of [`gather`], added to `signals`.
pub fn add_semantic(
    store: &Store,
    signals: &mut Signals,
    query: &str,
    vectors: &semantic::Vectors,
    query_vector: &[f32],
    candidates: &Candidates,
    depth: usize,
) -> Result<()> {
    if matches!(signals.mode, Mode::Semantic | Mode::Hybrid) {
        let best = semantic::search(store, vectors, query_vector, candidates, depth)?;
        signals.semantic = best.messages;
        signals.windows = best.windows;
        locate(store, signals, query)?;
    }
    Ok(())
}

/// [`add_semantic`] for units already found nearest the query (by
/// [`semantic::nearest_units`], while the lexical half ran).
pub fn add_nearest(
    store: &Store,
    signals: &mut Signals,
    query: &str,
    units: Vec<(u64, f32)>,
    depth: usize,
) -> Result<()> {
    if matches!(signals.mode, Mode::Semantic | Mode::Hybrid) {
        add_located(signals, locate_nearest(store, query, units, depth)?);
    }
    Ok(())
}

/// What [`add_nearest`] adds for units already found, computed apart (on
/// another connection, while the lexical half runs) and joined by
/// [`add_located`]: the best messages, their sessions and those sessions'
/// date affinity.
#[derive(Debug, Clone, Default)]
pub struct Located {
    semantic: semantic::Best,
    session_of: HashMap<i64, i64>,
    date_affinity: HashMap<i64, f64>,
}

/// The [`Located`] semantic half of `query` for `units`.
pub fn locate_nearest(
    store: &Store,
    query: &str,
    units: Vec<(u64, f32)>,
    depth: usize,
) -> Result<Located> {
    let semantic = semantic::best_messages(store, units, depth)?;
    let ids: Vec<i64> = semantic.messages.iter().map(|x| x.0).collect();
    let (session_of, started) = store.sessions_of_messages(&ids)?;
    Ok(Located {
        semantic,
        session_of,
        date_affinity: when::by_session(&started, &when::hints(query)),
    })
}

/// Joins a [`Located`] semantic half to `signals`, as [`add_nearest`] would
/// have added it.
pub fn add_located(signals: &mut Signals, located: Located) {
    if matches!(signals.mode, Mode::Semantic | Mode::Hybrid) {
        signals.semantic = located.semantic.messages;
        signals.windows = located.semantic.windows;
        for (message, session) in located.session_of {
            signals.session_of.entry(message).or_insert(session);
        }
        for (session, affinity) in located.date_affinity {
            signals.date_affinity.entry(session).or_insert(affinity);
        }
    }
}

/// Fills in the sessions of every candidate message and their date affinity.
fn locate(store: &Store, signals: &mut Signals, query: &str) -> Result<()> {
    let ids: Vec<i64> = signals
        .lexical
        .iter()
        .chain(&signals.semantic)
        .map(|x| x.0)
        .filter(|id| !signals.session_of.contains_key(id))
        .collect();
    let (session_of, started) = store.sessions_of_messages(&ids)?;
    signals.session_of.extend(session_of);
    signals
        .date_affinity
        .extend(when::by_session(&started, &when::hints(query)));
    Ok(())
}

/// Orders messages by their own fused score plus what their session earns:
/// its lexical score as a whole, its best messages' similarity, and its
/// match with dates the query names. Similarities are discounted for many
/// windows ([`semantic::discounted`]) everywhere but in the relevance floor,
/// which reads them as they are. In hybrid mode, the meaning of a message
/// in another writing system than the query counts more ([`scripts`]).
pub fn rank(s: &Signals, tuning: &Tuning) -> Vec<(i64, f64)> {
    let power = |v: f64| {
        if tuning.lexical_power == 1.0 {
            v
        } else {
            v.max(0.0).powf(tuning.lexical_power)
        }
    };
    let lexical: Vec<(i64, f64)> = s.lexical.iter().map(|(id, v)| (*id, power(*v))).collect();
    let mut semantic = semantic::discounted(&s.semantic, &s.windows, semantic::WINDOW_DISCOUNT);
    if s.mode == Mode::Hybrid {
        scripts::weigh(&mut semantic, s, tuning.across_scripts);
    }
    let mut ranked = match s.mode {
        Mode::Lexical => lexical,
        Mode::Semantic => semantic.clone(),
        Mode::Hybrid => fuse::fuse(&semantic, &lexical, tuning.fusion),
    };
    let mut session_score: HashMap<i64, f64> = HashMap::new();
    if tuning.session_semantic != 0.0 && s.mode != Mode::Lexical && !semantic.is_empty() {
        for (session, v) in session::top_mean(&semantic, &s.session_of, tuning.session_top) {
            *session_score.entry(session).or_default() += tuning.session_semantic * v;
        }
    }
    if tuning.session_lexical != 0.0 && s.mode != Mode::Semantic {
        for (session, v) in &s.session_lexical {
            *session_score.entry(*session).or_default() += tuning.session_lexical * power(*v);
        }
    }
    if tuning.phrase_weight != 0.0 && s.mode != Mode::Semantic {
        for (session, v) in &s.phrases {
            *session_score.entry(*session).or_default() += tuning.phrase_weight * v;
        }
    }
    if tuning.date_weight != 0.0 {
        for (session, v) in &s.date_affinity {
            *session_score.entry(*session).or_default() += tuning.date_weight * v;
        }
    }
    if !session_score.is_empty() {
        for (id, score) in &mut ranked {
            if let Some(extra) = s.session_of.get(id).and_then(|x| session_score.get(x)) {
                *score += extra;
            }
        }
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    }
    floor::apply(s, &mut ranked, tuning.min_similarity);
    ranked
}

/// Loads the top hits, folding messages with the same text into the first.
pub fn hydrate(store: &Store, ranked: &[(i64, f64)], limit: usize) -> Result<Vec<Hit>> {
    let mut unreadable = Vec::new();
    let hits = hydrate_capped(store, ranked, limit, None, &mut unreadable)?;
    match unreadable.into_iter().next() {
        Some(first) => Err(RecallError::Unreadable(first)),
        None => Ok(hits),
    }
}

/// [`hydrate`] showing at most `per_session` messages of any one session
/// (when given), so the list reaches more sessions.
pub fn hydrate_capped(
    store: &Store,
    ranked: &[(i64, f64)],
    limit: usize,
    per_session: Option<usize>,
    unreadable: &mut Vec<String>,
) -> Result<Vec<Hit>> {
    let mut hits: Vec<Hit> = Vec::new();
    let mut by_text: HashMap<String, usize> = HashMap::new();
    // Session row -> hits shown.
    let mut shown: HashMap<i64, usize> = HashMap::new();
    for chunk in ranked.chunks(50) {
        let rows = load(store, chunk, unreadable)?;
        for (id, score) in chunk {
            let Some(mut hit) = rows.get(id).cloned() else {
                continue;
            };
            let key = sha256_hex(
                hit.text
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_lowercase()
                    .as_bytes(),
            );
            if let Some(&i) = by_text.get(&key) {
                hits[i].duplicates.push(hit.session_id.clone());
                continue;
            }
            if let (Some(cap), Some(count)) = (per_session, shown.get(&hit.session_row)) {
                if *count >= cap {
                    continue;
                }
            }
            if hits.len() == limit {
                continue;
            }
            hit.score = *score;
            hit.rank = hits.len() + 1;
            by_text.insert(key, hits.len());
            *shown.entry(hit.session_row).or_default() += 1;
            hits.push(hit);
        }
        if hits.len() == limit {
            break;
        }
    }
    Ok(hits)
}

/// The hits of `ids`. When a batch cannot be read, its rows are read one by
/// one: a row that fails is left out and named in `unreadable`, and the
/// others are kept; a store that fails for every row is an error.
fn load(
    store: &Store,
    ids: &[(i64, f64)],
    unreadable: &mut Vec<String>,
) -> Result<HashMap<i64, Hit>> {
    let ids: Vec<i64> = ids.iter().map(|x| x.0).collect();
    let rows = match store.hit_rows(&ids) {
        Ok(rows) => rows,
        Err(batch) => {
            let mut rows = HashMap::new();
            let mut failed = 0;
            for id in &ids {
                match store.hit_rows(&[*id]) {
                    Ok(one) => rows.extend(one),
                    Err(e) => {
                        failed += 1;
                        unreadable.push(format!(
                            "message {id} could not be read and is left out: {e}"
                        ));
                    }
                }
            }
            if failed == ids.len() {
                return Err(batch.into());
            }
            rows
        }
    };
    Ok(rows
        .into_iter()
        .map(|(id, row)| (id, Hit::from_row(row)))
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_default_floor_is_the_configs() {
        let loaded =
            deja_config::defaults(std::path::Path::new("/nonexistent/config.toml"), &|_| None)
                .unwrap();
        assert_eq!(loaded.config.recall.min_similarity, MIN_SIMILARITY);
        assert_eq!(Tuning::default().min_similarity, MIN_SIMILARITY);
    }

    /// Signals for `mode` whose messages each sit in the session given.
    fn signals(mode: Mode, sessions: &[(i64, i64)]) -> Signals {
        let mut s = Signals::empty(mode);
        s.session_of = sessions.iter().copied().collect();
        s
    }

    fn ids(ranked: &[(i64, f64)]) -> Vec<i64> {
        ranked.iter().map(|x| x.0).collect()
    }

    fn score(ranked: &[(i64, f64)], id: i64) -> f64 {
        ranked.iter().find(|x| x.0 == id).unwrap().1
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// What the default tuning is: the tests below are written against it.
    #[test]
    fn the_default_tuning_is_the_measured_one() {
        let t = Tuning::default();
        assert_eq!(
            t.fusion,
            fuse::Fusion::Weighted {
                lexical: 1.0,
                semantic: 0.5
            }
        );
        assert_eq!(
            (
                t.session_lexical,
                t.session_semantic,
                t.session_top,
                t.date_weight,
                t.phrase_weight,
                t.lexical_power
            ),
            (0.4, 0.25, 3, 1.5, 0.5, 1.5)
        );
        assert!(t.depth >= 10);
    }

    #[test]
    fn a_long_message_is_discounted_for_its_windows_but_the_floor_reads_its_similarity() {
        let mut s = signals(Mode::Semantic, &[(1, 10), (2, 20), (3, 30)]);
        // 1 is a paste of 200 windows whose best is a little nearer the
        // query than 2's single window; 3 has 50 windows and a similarity
        // just over the floor, which its discount would take it under.
        s.semantic = vec![(1, 0.62), (2, 0.60), (3, 0.26)];
        s.windows = [(1, 200), (2, 1), (3, 50)].into();
        let tuning = Tuning {
            session_semantic: 0.0,
            ..Tuning::default()
        };
        for mode in [Mode::Semantic, Mode::Hybrid] {
            s.mode = mode;
            let ranked = rank(&s, &tuning);
            // 3 is kept: its discounted score is under the floor, its
            // similarity is not.
            assert_eq!(ids(&ranked), [2, 1, 3], "{mode:?}");
        }
        s.mode = Mode::Semantic;
        assert!(score(&rank(&s, &tuning), 3) < MIN_SIMILARITY);
        // Without window counts nothing is discounted.
        s.windows.clear();
        assert_eq!(ids(&rank(&s, &tuning)), [1, 2, 3]);
    }

    #[test]
    fn no_evidence_ranks_nothing() {
        for mode in [Mode::Lexical, Mode::Semantic, Mode::Hybrid] {
            assert!(rank(&Signals::empty(mode), &Tuning::default()).is_empty());
        }
    }

    #[test]
    fn lexical_mode_orders_by_the_lexical_list_alone() {
        let mut s = signals(Mode::Lexical, &[(1, 10), (2, 20), (3, 30), (9, 90)]);
        s.lexical = vec![(3, 0.9), (1, 0.5), (2, 0.2)];
        // Semantic evidence is not used in lexical mode.
        s.semantic = vec![(2, 0.99), (9, 0.98), (1, 0.97), (3, 0.96)];
        let ranked = rank(&s, &Tuning::default());
        assert_eq!(ids(&ranked), [3, 1, 2]);
        // Scores are the lexical ones raised to the lexical power.
        assert!(close(score(&ranked, 3), 0.9f64.powf(1.5)));
        assert!(close(score(&ranked, 2), 0.2f64.powf(1.5)));
        let linear = Tuning {
            lexical_power: 1.0,
            ..Tuning::default()
        };
        assert_eq!(rank(&s, &linear), s.lexical);
    }

    #[test]
    fn semantic_mode_orders_by_the_semantic_list_alone() {
        let mut s = signals(Mode::Semantic, &[(5, 50), (6, 60), (7, 70)]);
        s.semantic = vec![(5, 0.8), (6, 0.7), (7, 0.1)];
        // Lexical evidence of any level is not used in semantic mode.
        s.lexical = vec![(7, 1.0), (8, 1.0)];
        s.session_lexical = [(70, 1.0)].into();
        s.phrases = [(70, 1.0)].into();
        let ranked = rank(&s, &Tuning::default());
        assert_eq!(ids(&ranked), [5, 6, 7]);
        // Each message is its session's only one: the session adds a
        // quarter of the mean of its best three (the missing two count 0).
        assert!(close(score(&ranked, 5), 0.8 + 0.25 * 0.8 / 3.0));
        let no_sessions = Tuning {
            session_semantic: 0.0,
            ..Tuning::default()
        };
        assert_eq!(rank(&s, &no_sessions), s.semantic);
    }

    #[test]
    fn hybrid_puts_a_message_high_in_both_lists_over_one_high_in_one() {
        let mut s = signals(Mode::Hybrid, &[(10, 1), (20, 2), (30, 3), (40, 4)]);
        // 10 leads the semantic list, 20 the lexical one; 30 is second in
        // both.
        s.semantic = vec![(10, 0.80), (30, 0.75), (40, 0.3)];
        s.lexical = vec![(20, 0.90), (30, 0.80), (40, 0.1)];
        let ranked = rank(&s, &Tuning::default());
        assert_eq!(ids(&ranked)[0], 30, "{ranked:?}");
        assert_eq!(ids(&ranked), [30, 20, 10, 40]);
        // Weighted sum: lexical (to the power 1.5) plus half the similarity,
        // plus the session's share of its best similarities.
        assert!(close(
            score(&ranked, 30),
            0.8f64.powf(1.5) + 0.5 * 0.75 + 0.25 * 0.75 / 3.0
        ));
        // Only in the lexical list: nothing from the semantic side.
        assert!(close(score(&ranked, 20), 0.9f64.powf(1.5)));
    }

    #[test]
    fn a_session_matching_the_query_as_a_whole_lifts_its_messages() {
        let mut s = signals(Mode::Lexical, &[(1, 100), (2, 200), (3, 200)]);
        s.lexical = vec![(1, 0.6), (2, 0.5), (3, 0.05)];
        let without = Tuning {
            session_lexical: 0.0,
            ..Tuning::default()
        };
        assert_eq!(ids(&rank(&s, &without)), [1, 2, 3]);
        s.session_lexical = [(200, 0.9), (100, 0.1)].into();
        let ranked = rank(&s, &Tuning::default());
        assert_eq!(ids(&ranked), [2, 1, 3]);
        let lift = 0.4 * 0.9f64.powf(1.5);
        assert!(close(score(&ranked, 2), 0.5f64.powf(1.5) + lift));
        assert!(close(score(&ranked, 3), 0.05f64.powf(1.5) + lift));
        assert!(close(
            score(&ranked, 1),
            0.6f64.powf(1.5) + 0.4 * 0.1f64.powf(1.5)
        ));
        // Hybrid too.
        s.mode = Mode::Hybrid;
        assert_eq!(ids(&rank(&s, &Tuning::default()))[0], 2);
    }

    #[test]
    fn a_session_holding_the_query_phrases_lifts_its_messages() {
        let mut s = signals(Mode::Hybrid, &[(1, 100), (2, 200)]);
        s.lexical = vec![(1, 0.6), (2, 0.5)];
        assert_eq!(ids(&rank(&s, &Tuning::default())), [1, 2]);
        s.phrases = [(200, 1.0)].into();
        let ranked = rank(&s, &Tuning::default());
        assert_eq!(ids(&ranked), [2, 1]);
        assert!(close(score(&ranked, 2), 0.5f64.powf(1.5) + 0.5));
    }

    #[test]
    fn several_good_messages_of_a_session_outrank_a_lone_better_one() {
        let mut s = signals(Mode::Semantic, &[(1, 100), (2, 100), (3, 100), (4, 200)]);
        s.semantic = vec![(4, 0.71), (1, 0.70), (2, 0.69), (3, 0.68)];
        let without = Tuning {
            session_semantic: 0.0,
            ..Tuning::default()
        };
        assert_eq!(ids(&rank(&s, &without)), [4, 1, 2, 3]);
        let ranked = rank(&s, &Tuning::default());
        assert_eq!(ids(&ranked), [1, 2, 3, 4]);
        let mean = (0.70 + 0.69 + 0.68) / 3.0;
        assert!(close(score(&ranked, 3), 0.68 + 0.25 * mean));
        assert!(close(score(&ranked, 4), 0.71 + 0.25 * 0.71 / 3.0));
    }

    #[test]
    fn a_date_the_query_names_lifts_the_messages_of_sessions_of_that_date() {
        for mode in [Mode::Lexical, Mode::Semantic, Mode::Hybrid] {
            let mut s = signals(mode, &[(1, 100), (2, 200), (3, 200)]);
            s.lexical = vec![(1, 0.8), (2, 0.5), (3, 0.1)];
            s.semantic = vec![(1, 0.8), (2, 0.5), (3, 0.1)];
            let before = rank(&s, &Tuning::default());
            assert_eq!(ids(&before), [1, 2, 3], "{mode:?}");
            s.date_affinity = [(200, 1.0), (100, 0.0)].into();
            let after = rank(&s, &Tuning::default());
            assert_eq!(ids(&after), [2, 3, 1], "{mode:?}");
            // Every message of the session gains the same: the weight times
            // the affinity.
            for id in [2, 3] {
                assert!(
                    close(score(&after, id) - score(&before, id), 1.5),
                    "{mode:?} {id}"
                );
            }
            assert!(close(score(&after, 1), score(&before, 1)), "{mode:?}");
            let off = Tuning {
                date_weight: 0.0,
                ..Tuning::default()
            };
            assert_eq!(ids(&rank(&s, &off)), [1, 2, 3], "{mode:?}");
        }
    }

    #[test]
    fn a_message_without_a_known_session_gets_no_session_evidence() {
        let mut s = signals(Mode::Lexical, &[(2, 200)]);
        s.lexical = vec![(1, 0.6), (2, 0.5)];
        s.session_lexical = [(200, 0.1)].into();
        s.date_affinity = [(100, 1.0)].into();
        let ranked = rank(&s, &Tuning::default());
        assert_eq!(ids(&ranked), [1, 2]);
        assert!(close(score(&ranked, 1), 0.6f64.powf(1.5)));
    }

    #[test]
    fn ties_are_broken_by_message_id_whatever_the_input_order() {
        // Equal fused scores.
        let mut s = signals(Mode::Hybrid, &[]);
        s.lexical = vec![(9, 0.5), (4, 0.5), (7, 0.5)];
        assert_eq!(ids(&rank(&s, &Tuning::default())), [4, 7, 9]);
        s.lexical.reverse();
        assert_eq!(ids(&rank(&s, &Tuning::default())), [4, 7, 9]);

        // Equal scores after session evidence, in every mode; many sessions
        // so that hash-map order would show.
        for mode in [Mode::Lexical, Mode::Semantic, Mode::Hybrid] {
            let n = 40i64;
            let build = |reverse: bool| {
                let mut s = signals(mode, &(1..=n).map(|i| (i, 1000 + i)).collect::<Vec<_>>());
                let mut list: Vec<(i64, f64)> = (1..=n).map(|i| (i, 0.5)).collect();
                if reverse {
                    list.reverse();
                }
                s.lexical = list.clone();
                s.semantic = list;
                s.date_affinity = (1..=n).map(|i| (1000 + i, 0.25)).collect();
                s
            };
            let first = rank(&build(false), &Tuning::default());
            assert_eq!(ids(&first), (1..=n).collect::<Vec<_>>(), "{mode:?}");
            for reverse in [false, true, false, true] {
                assert_eq!(rank(&build(reverse), &Tuning::default()), first, "{mode:?}");
            }
        }
    }
}
