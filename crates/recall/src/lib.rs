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
//! - [`snippet`]: the part of a hit's text to show.

pub mod engine;
pub mod fuse;
pub mod lexical;
pub mod semantic;
pub mod session;
pub mod snippet;
pub mod when;

use std::collections::HashMap;

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
    /// Other hits with the same text, folded into this one.
    pub duplicates: Vec<String>,
    /// How many other ranked messages of the same session are not shown
    /// (set on the session's first hit when a per-session cap applies).
    pub more_in_session: usize,
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
            duplicates: Vec::new(),
            more_in_session: 0,
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
}

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
    /// (message, cosine similarity of its best unit), best first.
    pub semantic: Vec<(i64, f64)>,
    /// Session row → session-level lexical score.
    pub session_lexical: HashMap<i64, f64>,
    /// Message → its session row, for every message in either list.
    pub session_of: HashMap<i64, i64>,
    /// Session row → how well its start date matches the dates in the query.
    pub date_affinity: HashMap<i64, f64>,
    /// Session row → share of the query's word pairs it holds as phrases.
    pub phrases: HashMap<i64, f64>,
}

impl Signals {
    /// No evidence at all, for `mode` (a half that could not be gathered).
    pub fn empty(mode: Mode) -> Signals {
        Signals {
            mode,
            lexical: Vec::new(),
            semantic: Vec::new(),
            session_lexical: HashMap::new(),
            session_of: HashMap::new(),
            date_affinity: HashMap::new(),
            phrases: HashMap::new(),
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
    hydrate(store, &rank(&signals, tuning), limit)
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
    let wants_lexical = matches!(mode, Mode::Lexical | Mode::Hybrid);
    let (lexical, session_lexical, phrases) = if wants_lexical {
        (
            lexical::search(store, query, candidates, lexical::Level::Message, depth)?,
            lexical::search(store, query, candidates, lexical::Level::Session, depth)?
                .into_iter()
                .collect(),
            lexical::phrase_coverage(store, query, candidates)?,
        )
    } else {
        (Vec::new(), HashMap::new(), HashMap::new())
    };
    let mut signals = Signals {
        mode,
        lexical,
        semantic: Vec::new(),
        session_lexical,
        session_of: HashMap::new(),
        date_affinity: HashMap::new(),
        phrases,
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
        signals.semantic = semantic::search(store, vectors, query_vector, candidates, depth)?;
        locate(store, signals, query)?;
    }
    Ok(())
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
/// match with dates the query names.
pub fn rank(s: &Signals, tuning: &Tuning) -> Vec<(i64, f64)> {
    let power = |v: f64| {
        if tuning.lexical_power == 1.0 {
            v
        } else {
            v.max(0.0).powf(tuning.lexical_power)
        }
    };
    let lexical: Vec<(i64, f64)> = s.lexical.iter().map(|(id, v)| (*id, power(*v))).collect();
    let mut ranked = match s.mode {
        Mode::Lexical => lexical,
        Mode::Semantic => s.semantic.clone(),
        Mode::Hybrid => fuse::fuse(&s.semantic, &lexical, tuning.fusion),
    };
    let mut session_score: HashMap<i64, f64> = HashMap::new();
    if tuning.session_semantic != 0.0 && s.mode != Mode::Lexical && !s.semantic.is_empty() {
        for (session, v) in session::top_mean(&s.semantic, &s.session_of, tuning.session_top) {
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
