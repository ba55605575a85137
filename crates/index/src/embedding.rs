//! The embedding passes of `deja index`: every stored message without
//! embedding units is split into windows, each window's text is looked up in
//! the embedding cache (by content hash and model) and embedded only when
//! missing, in batches of similar length; units and vectors are committed page
//! by page, newest sessions first, so a crash loses at most one page of work
//! and recall (which scores units the vector index does not hold yet) sees
//! each page as soon as it is committed. The vector index is synced at the end.
//! A text of a pulled session whose vector a teammate published with it
//! takes that vector instead of the model's, once one of the session's
//! vectors, chosen at random, agrees with the model here.
//!
//! Two passes: the first ([`Pass::First`]) gives a long message only a
//! sample of its windows (`embed.first_windows`: the first, the last, and
//! others evenly spaced between), so that the whole history is searchable by
//! meaning in a fraction of the time; the second ([`Pass::Rest`]) embeds the
//! rest of those messages' windows, newest first too. Both end with the same
//! units as one pass over all windows.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::path::Path;

use deja_embed::window;
use deja_embed::{EmbedError, Embedder, Known};
use deja_model::sha256_hex;
use deja_store::embedding::{Due, PendingMessage as Pending, Unit};
use deja_store::vectors::{self, VectorError};
use deja_store::{Store, StoreError};

/// Messages read per page, at most.
const PAGE: usize = 512;
/// Messages of the first page: pages start small and double up to [`PAGE`],
/// so the newest sessions are committed (recallable by meaning) within
/// seconds of the pass's start, not after a whole page of the model's time.
const FIRST_PAGE: usize = 16;

/// Which embedding pass runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Messages without units: all their windows, or a sample of a long
    /// message's ones (`embed.first_windows`).
    First,
    /// Messages embedded in part by a first pass: the rest of their windows.
    Rest,
}

/// Counts from one pass.
#[derive(Debug, Clone, Default)]
pub struct PassReport {
    /// Messages that got embedding units.
    pub messages: usize,
    /// Of those, long messages given only a sample of their windows (the
    /// rest is for [`Pass::Rest`]).
    pub partial: usize,
    /// Messages embedded in part before that now have all their windows.
    pub completed: usize,
    /// Units created.
    pub units: usize,
    /// Texts the model embedded.
    pub embedded: usize,
    /// Units whose vector came from the cache.
    pub cached: usize,
    /// Units whose vector a teammate published with a pulled session (the
    /// model did not run for them).
    pub team: usize,
    /// Pulled sessions whose published vectors failed the check (a sample
    /// embedded here disagreed): embedded here instead.
    pub refused: usize,
    /// Whether a model change discarded earlier units.
    pub model_changed: bool,
    /// When a second pass followed: the seconds from the start of the run
    /// until every message was searchable by meaning.
    pub first_pass_seconds: Option<f64>,
}

impl PassReport {
    /// Adds the counts of a [`Pass::Rest`] that followed this one: its
    /// messages are ones this report counted already.
    pub fn absorb_rest(&mut self, rest: &PassReport) {
        self.completed += rest.completed;
        self.units += rest.units;
        self.embedded += rest.embedded;
        self.cached += rest.cached;
        self.team += rest.team;
        self.refused += rest.refused;
        self.model_changed |= rest.model_changed;
    }
}

/// Errors of the pass.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The model failed.
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// The vector index failed.
    #[error(transparent)]
    Vectors(#[from] VectorError),
}

/// Progress of the pass.
pub trait PassProgress {
    /// The number of messages `pass` embeds is known.
    fn start(&mut self, messages: u64, pass: Pass);
    /// `n` more messages are done.
    fn advance(&mut self, n: u64);
    /// Every session that began at or after `started_at_ms` is done (the
    /// pass goes from the newest back).
    fn reached(&mut self, _started_at_ms: i64) {}
}

impl PassProgress for () {
    fn start(&mut self, _messages: u64, _pass: Pass) {}
    fn advance(&mut self, _n: u64) {}
}

impl PassProgress for crate::Quiet {
    fn start(&mut self, _messages: u64, _pass: Pass) {}
    fn advance(&mut self, _n: u64) {}
}

/// Runs `pass` over the messages it is due for (the vector index is synced
/// afterwards by [`sync_vectors`]). A first pass under another model (or
/// windowing) than the store's drops the store's units first.
pub fn run(
    store: &mut Store,
    embedder: &mut Embedder,
    vectors_path: &Path,
    pass: Pass,
    progress: &mut dyn PassProgress,
) -> Result<PassReport, PassError> {
    let mut report = PassReport::default();
    let model = embedder.id().to_string();
    let stored = store.meta("embed_model")?;
    if stored.as_deref() != Some(model.as_str()) {
        let same_vectors = deja_embed::int8_was_exact_here()
            && stored.is_some()
            && deja_embed::id_before_exact_int8(&model) == stored;
        if same_vectors {
            // Made before sessions set exact int8 arithmetic, on a processor
            // where it was exact anyway: the same vectors, under today's id.
            if let Some(old) = &stored {
                store.relabel_model(old, &model)?;
            }
        } else {
            // Another model (or windowing, or vectors made with saturating
            // int8 sums): its units cannot mix with this one's.
            store.reset_units(vectors_path)?;
            report.model_changed = stored.is_some();
        }
    }
    store.set_model_stamp(&embedder.known())?;

    let (due, sample) = match pass {
        Pass::First => (Due::Units, embedder.first_windows()),
        Pass::Rest => (Due::Rest, 0),
    };
    progress.start(store.due_count(due)?.max(0) as u64, pass);

    // Newest sessions first: the last days become searchable by meaning
    // first, and an interrupted pass leaves the oldest for the next run.
    let mut after = None;
    let mut checked = HashSet::new();
    // Published vectors are looked up only when a pull left some.
    let published = store.pulled_vector_count()? > 0;
    for n in 0.. {
        let (page, last): (Vec<Pending>, _) = store.pending_newest(due, after, page_size(n))?;
        if page.is_empty() {
            break;
        }
        after = last;
        embed_page(
            store,
            embedder,
            &model,
            &page,
            Sampling {
                windows: sample,
                published,
                checked: &mut checked,
            },
            &mut report,
            progress,
        )?;
        // A session dated only by its file's time says nothing of how far
        // back meaning reaches.
        if let Some(k) = last.filter(|k| !k.approximate) {
            progress.reached(k.started_at);
        }
    }

    if published {
        store.drop_taken_pulled_vectors()?;
    }
    Ok(report)
}

/// Messages in page `n` of a pass (from 0): [`FIRST_PAGE`], doubling up to
/// [`PAGE`].
fn page_size(n: u32) -> usize {
    (FIRST_PAGE << n.min(16)).min(PAGE)
}

/// Brings the vector index in line with the store once the model is done
/// (call it after dropping the embedder, so their memory does not add up).
pub fn sync_vectors(store: &Store, vectors_path: &Path, known: &Known) -> Result<(), PassError> {
    if !vectors::in_sync(store, vectors_path)? {
        vectors::sync_with(store, vectors_path, &known.id, known.dims, None)?;
    }
    Ok(())
}

/// Messages still waiting for embedding units, or for the rest of them.
pub fn pending(store: &Store) -> deja_store::Result<i64> {
    Ok(store.pending_count()? + store.partial_count()?)
}

/// What a page samples: at most `windows` of a message's windows when it
/// has none yet (0: all of them); whether pulled sessions wait with
/// published vectors, and those whose vectors were checked already in this
/// pass.
struct Sampling<'a> {
    windows: usize,
    published: bool,
    checked: &'a mut HashSet<i64>,
}

/// Embeds the units of `page` that its messages lack (see [`Sampling`]).
fn embed_page(
    store: &mut Store,
    embedder: &mut Embedder,
    model: &str,
    page: &[Pending],
    sampling: Sampling<'_>,
    report: &mut PassReport,
    progress: &mut dyn PassProgress,
) -> Result<(), PassError> {
    // Every unit of the page still missing; texts to embed by hash, and the
    // sessions each text is in.
    let mut units: Vec<Unit> = Vec::new();
    let mut texts: HashMap<String, String> = HashMap::new();
    let mut sessions: HashMap<String, Vec<i64>> = HashMap::new();
    let mut partial: Vec<i64> = Vec::new();
    for m in page {
        let unit_texts = embedder.units(m.previous.as_deref(), &m.text, m.next.as_deref());
        let wanted = if m.embedded.is_empty() {
            window::spread_indices(unit_texts.len(), sampling.windows)
        } else {
            (0..unit_texts.len()).collect()
        };
        if wanted.len() < unit_texts.len() {
            partial.push(m.id);
        } else if !m.embedded.is_empty() {
            report.completed += 1;
        }
        for (ordinal, w) in unit_texts.into_iter().enumerate() {
            if wanted.binary_search(&ordinal).is_err() || m.embedded.contains(&ordinal) {
                continue;
            }
            let hash = sha256_hex(w.as_bytes());
            units.push(Unit {
                message: m.id,
                ordinal,
                text_hash: hash.clone(),
            });
            let of = sessions.entry(hash.clone()).or_default();
            if !of.contains(&m.session) {
                of.push(m.session);
            }
            texts.entry(hash).or_insert(w);
        }
    }

    // Only texts the cache lacks go to the model, shortest first so batches
    // hold texts of similar length; a text a teammate published a vector of
    // with a pulled session takes that vector instead, once a sample of the
    // session's published vectors agrees with the model here.
    let mut missing: Vec<(String, String)> = Vec::new();
    let mut published = Published::default();
    for (hash, text) in &texts {
        if store.has_cached_vector(hash, model)? {
            continue;
        }
        let mut found = None;
        let of = match sampling.published {
            true => sessions.get(hash).map(Vec::as_slice).unwrap_or_default(),
            false => &[],
        };
        for &s in of {
            if let Some(v) = store.pulled_vector(s, model, hash, embedder.dims())? {
                found = Some((s, v));
                break;
            }
        }
        match found {
            Some((s, v)) => published.add(s, hash, text, v),
            None => missing.push((hash.clone(), text.clone())),
        }
    }
    let checked = sampling.checked;
    let checks = published.samples(checked);
    missing.sort_by_key(|(_, t)| t.len());
    let mut inputs: Vec<String> = missing.iter().map(|(_, t)| t.clone()).collect();
    inputs.extend(checks.iter().map(|(_, i)| published.units[*i].text.clone()));
    // Progress moves with each batch, in messages: the share of the page's
    // texts embedded so far (a page of cached texts moves at once below).
    let messages = page.len() as u64;
    let mut shown = 0u64;
    let total_texts = inputs.len().max(1) as u64;
    let vectors = embedder.embed_with_progress(&inputs, &mut |done| {
        let now = (done as u64).saturating_mul(messages) / total_texts;
        if now > shown {
            progress.advance(now - shown);
            shown = now;
        }
    })?;
    if messages > shown {
        progress.advance(messages - shown);
    }
    let mut vectors = vectors;
    let check_vectors = vectors.split_off(missing.len().min(vectors.len()));
    report.embedded += inputs.len();

    // A session whose sampled vector disagrees with the model here has all
    // its published vectors refused, and its texts embedded here.
    let mut refused: Vec<i64> = Vec::new();
    for ((session, i), here) in checks.iter().zip(&check_vectors) {
        checked.insert(*session);
        if cosine(here, &published.units[*i].vector) < AGREEMENT {
            refused.push(*session);
        }
    }
    if !refused.is_empty() {
        let redo: Vec<(String, String)> = published
            .units
            .iter()
            .filter(|u| refused.contains(&u.session))
            .map(|u| (u.hash.clone(), u.text.clone()))
            .collect();
        let texts: Vec<String> = redo.iter().map(|(_, t)| t.clone()).collect();
        let again = embedder.embed_with_progress(&texts, &mut |_| {})?;
        report.embedded += texts.len();
        missing.extend(redo);
        vectors.extend(again);
        store.drop_pulled_vectors(&refused)?;
        report.refused += refused.len();
    }
    let taken: Vec<&PublishedUnit> = published
        .units
        .iter()
        .filter(|u| !refused.contains(&u.session))
        .collect();
    report.team += taken.len();
    report.cached += texts.len() - missing.len() - taken.len();

    let mut new: Vec<(&str, &[f32])> = missing
        .iter()
        .zip(&vectors)
        .map(|((hash, _), v)| (hash.as_str(), v.as_slice()))
        .collect();
    new.extend(taken.iter().map(|u| (u.hash.as_str(), u.vector.as_slice())));
    store.add_page(model, &new, &units, &partial)?;
    report.partial += partial.len();
    report.messages += page.len();
    report.units += units.len();
    Ok(())
}

/// The least cosine similarity at which a published vector agrees with the
/// model here: the same model on the same text differs by rounding only
/// (half precision in transit, batch padding), far above this.
const AGREEMENT: f32 = 0.99;

/// A unit whose vector a teammate published.
struct PublishedUnit {
    session: i64,
    hash: String,
    text: String,
    vector: Vec<f32>,
}

/// The published vectors a page takes, by session.
#[derive(Default)]
struct Published {
    units: Vec<PublishedUnit>,
}

impl Published {
    fn add(&mut self, session: i64, hash: &str, text: &str, vector: Vec<f32>) {
        self.units.push(PublishedUnit {
            session,
            hash: hash.to_string(),
            text: text.to_string(),
            vector,
        });
    }

    /// One unit of each session not `checked` yet in this pass, chosen at
    /// random (a publisher cannot know which will be checked): (session,
    /// index into `units`).
    fn samples(&self, checked: &HashSet<i64>) -> Vec<(i64, usize)> {
        let seed = RandomState::new();
        let mut best: HashMap<i64, (u64, usize)> = HashMap::new();
        for (i, u) in self.units.iter().enumerate() {
            if checked.contains(&u.session) {
                continue;
            }
            let draw = seed.hash_one(&u.hash);
            let e = best.entry(u.session).or_insert((draw, i));
            if draw < e.0 {
                *e = (draw, i);
            }
        }
        let mut out: Vec<(i64, usize)> = best.into_iter().map(|(s, (_, i))| (s, i)).collect();
        out.sort_unstable();
        out
    }
}

/// Cosine similarity of two vectors (0 when either is zero or their
/// lengths differ).
fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_session_not_checked_yet_has_one_unit_sampled() {
        let mut p = Published::default();
        for (s, h) in [(1, "a"), (1, "b"), (2, "c"), (3, "d")] {
            p.add(s, h, h, vec![1.0]);
        }
        let checked: HashSet<i64> = [3].into_iter().collect();
        let samples = p.samples(&checked);
        let sessions: Vec<i64> = samples.iter().map(|(s, _)| *s).collect();
        assert_eq!(sessions, [1, 2]);
        assert!(samples.iter().all(|(s, i)| p.units[*i].session == *s));
    }

    #[test]
    fn cosine_tells_agreement_from_a_different_vector() {
        assert!(cosine(&[1.0, 2.0], &[1.001, 2.0]) > AGREEMENT);
        assert!(cosine(&[1.0, 0.0], &[0.0, 1.0]) < AGREEMENT);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn pages_start_small_and_double_up_to_the_page_size() {
        let sizes: Vec<usize> = (0..8).map(page_size).collect();
        assert_eq!(sizes, [16, 32, 64, 128, 256, 512, 512, 512]);
        assert!((8..200).all(|n| page_size(n) == PAGE));
    }
}
