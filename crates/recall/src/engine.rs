//! The recall engine: opened once over a store and, when semantic ranking is
//! possible, the embedding model; then asked any number of queries. A
//! one-shot command (`deja recall`) loads the model on a second thread while
//! lexical ranking runs; a long-lived caller (the MCP server) keeps the loaded
//! encoder warm between queries. Both rank through the same functions.

use std::path::{Path, PathBuf};

use deja_config::Mode;
use deja_embed::query::QueryEncoder;
use deja_embed::{EmbedError, Settings};
use deja_model::trace::trace;
use deja_model::ModelStamp;
use deja_store::vectors::{self, VectorIndex};
use deja_store::Store;

use std::collections::HashMap;

use crate::{
    add_located, add_nearest, add_semantic, add_session_evidence, gather_lexical, hydrate_capped,
    lexical_messages, locate_nearest, rank, relevance, scripts, semantic, session_evidence,
    Candidates, Hit, Signals, Tuning,
};

pub use crate::RecallError;

/// One question to the engine.
#[derive(Debug, Clone)]
pub struct Query<'a> {
    /// The words of the query.
    pub text: &'a str,
    /// How to rank.
    pub mode: Mode,
    /// Which messages may be returned.
    pub scope: &'a Candidates,
    /// Most hits.
    pub limit: usize,
    /// The knobs of ranking.
    pub tuning: Tuning,
    /// Most messages of one session among the hits (`None`: no cap).
    pub per_session: Option<usize>,
}

/// The engine's answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The hits, best first.
    pub hits: Vec<Hit>,
    /// The mode the hits were ranked in: lexical when semantic ranking was
    /// asked for but could not run, semantic when the lexical half of a
    /// hybrid query failed.
    pub mode: Mode,
    /// Why semantic ranking could not run, when it was asked for.
    pub semantic_unavailable: Option<String>,
    /// Why the lexical half of a hybrid query failed (the answer is
    /// semantic only).
    pub lexical_unavailable: Option<String>,
    /// Things the user should know: a half that failed, rows that could not
    /// be read, a vector index that had to be bypassed.
    pub notices: Vec<String>,
    /// How many ranked messages were withheld because even the best stayed
    /// under `min_score` (then `hits` is empty).
    pub withheld: usize,
}

impl Answer {
    /// The half of a hybrid answer that is missing, if one is.
    pub fn missing_half(&self) -> Option<&'static str> {
        if self.semantic_unavailable.is_some() {
            Some("semantic")
        } else if self.lexical_unavailable.is_some() {
            Some("lexical")
        } else {
            None
        }
    }
}

/// What semantic ranking needs, or why it cannot run.
enum Semantic {
    Unavailable(String),
    Ready {
        settings: Box<Settings>,
        stamp: ModelStamp,
        encoder: Option<Box<QueryEncoder>>,
    },
}

/// A store opened for recall, with the model when semantic ranking can run.
pub struct Engine {
    store: Store,
    vectors_path: PathBuf,
    settings: Option<Settings>,
    semantic: Semantic,
    /// The vector index file as last opened, and what identified it.
    index: Option<(IndexFile, Option<VectorIndex>)>,
    /// Whether the query model stays loaded between queries (a server) or is
    /// let go as soon as the query is embedded (a one-shot command, whose
    /// peak memory then does not hold the model and the vectors at once).
    keep_model: bool,
    /// A second read connection to the store, on which the embedding thread
    /// gathers the session evidence once the query is embedded (while this
    /// one ranks the messages); opened at the first query that uses it.
    aside: Option<Store>,
}

/// What identifies the saved vector index: the store's watermark and each
/// segment file's size and modification time. A sync that saves a new file
/// changes at least one of them, so a cached view is replaced when stale.
#[derive(Debug, Clone, PartialEq, Eq)]
struct IndexFile {
    watermark: i64,
    files: Vec<(usize, u64, Option<std::time::SystemTime>)>,
}

/// Checks, without loading the model, that semantic ranking can run: the
/// model and runtime are installed and are the ones the store was embedded
/// with.
fn plan(settings: Option<Settings>, store: &Store) -> Semantic {
    let Some(settings) = settings else {
        return Semantic::Unavailable(
            "embeddings are disabled in the config (`embed.enabled`)".into(),
        );
    };
    match check(&settings, store) {
        Ok(stamp) => Semantic::Ready {
            settings: Box::new(settings),
            stamp,
            encoder: None,
        },
        Err(why) => Semantic::Unavailable(why),
    }
}

fn check(settings: &Settings, store: &Store) -> Result<ModelStamp, String> {
    if !settings.enabled {
        return Err("embeddings are disabled in the config (`embed.enabled`)".into());
    }
    let missing = |e: EmbedError| {
        format!(
            "{e}; hint: run {}",
            deja_embed::install::fetch_model_command()
        )
    };
    let [onnx, ..] = settings.model_files().map_err(missing)?;
    settings.runtime().map_err(missing)?;
    let Some(stamp) = store.model_stamp() else {
        return Err(
            "the index has no embeddings yet; run `deja index` with the model installed".into(),
        );
    };
    // The cheap fingerprint usually settles that the configured model is the
    // one the index was embedded with; when it does not, compare contents.
    if settings.fingerprint().as_deref() != Some(stamp.fingerprint.as_str()) {
        let bytes =
            std::fs::read(&onnx).map_err(|e| format!("cannot read `{}`: {e}", onnx.display()))?;
        let id = settings.model_id(&bytes);
        // Vectors made before int8 arithmetic was exact are the same model's:
        // they answer until the next index run re-embeds them where they
        // differ.
        let older_arithmetic = deja_embed::id_before_exact_int8(&id).as_deref() == Some(&stamp.id);
        if id != stamp.id && !older_arithmetic {
            return Err(format!(
                "the index was embedded with `{}`, not the configured `{id}`; run `deja index` to re-embed",
                stamp.id
            ));
        }
    }
    Ok(stamp)
}

impl Engine {
    /// Opens the engine over `store`, whose vector index file is at
    /// `vectors_path`. `settings` are the embedding settings (`None` when
    /// embeddings are off); the model is not loaded until a query needs it.
    pub fn open(store: Store, vectors_path: &Path, settings: Option<Settings>) -> Engine {
        let semantic = plan(settings.clone(), &store);
        Engine {
            store,
            vectors_path: vectors_path.to_path_buf(),
            settings,
            semantic,
            index: None,
            keep_model: true,
            aside: None,
        }
    }

    /// Lets the query model go right after each query is embedded (on a
    /// thread of its own, so nobody waits for its teardown), for callers
    /// that ask one question.
    pub fn one_shot(mut self) -> Engine {
        self.keep_model = false;
        self
    }

    /// Checks again whether semantic ranking can run (after an index run
    /// added the first embeddings or changed the model); a loaded encoder is
    /// kept when the model is the same.
    pub fn refresh(&mut self) {
        let fresh = plan(self.settings.clone(), &self.store);
        let same = matches!(
            (&self.semantic, &fresh),
            (Semantic::Ready { stamp: a, .. }, Semantic::Ready { stamp: b, .. }) if a == b
        );
        if !same {
            self.semantic = fresh;
        }
    }

    /// The store it reads.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Why semantic ranking cannot run, if it cannot.
    pub fn semantic_unavailable(&self) -> Option<&str> {
        match &self.semantic {
            Semantic::Unavailable(why) => Some(why),
            Semantic::Ready { .. } => None,
        }
    }

    /// Loads the query encoder now, so that the first query does not wait for
    /// it (for long-lived callers).
    pub fn warm_up(&mut self) -> Result<(), EmbedError> {
        if let Semantic::Ready {
            settings, encoder, ..
        } = &mut self.semantic
        {
            if encoder.is_none() {
                *encoder = Some(Box::new(QueryEncoder::load(settings)?));
            }
        }
        Ok(())
    }

    /// Answers `query`. The query is embedded on a second thread (loading the
    /// model first if it is not loaded yet) while lexical ranking runs here.
    /// When one half of a hybrid query fails (the full-text index, the
    /// vector index, the embedding table), the other half answers and the
    /// answer says which half it lacks and why; a failure of the only half
    /// asked for is an error, never an empty answer.
    pub fn recall(&mut self, query: &Query<'_>) -> Result<Answer, RecallError> {
        trace("recall begins");
        // Leaving out sessions found in code folders when the store holds
        // none is no restriction: the search then takes the whole-history
        // path, so an agent's answer equals the person's to the last digit.
        let whole_scope;
        let narrowed;
        let query = if query.scope.filter.skip_code_folders
            && !self.store.has_code_folder_sessions().unwrap_or(true)
        {
            let mut scope = query.scope.clone();
            scope.filter.skip_code_folders = false;
            whole_scope = scope;
            narrowed = Query {
                scope: &whole_scope,
                ..query.clone()
            };
            &narrowed
        } else {
            query
        };
        let depth = query.tuning.depth.max(query.limit * 3);
        let wants_semantic = query.mode != Mode::Lexical;
        let mut unavailable = None;
        let mut notices = Vec::new();
        // Whether the model compares meaning across writing systems, and
        // how near off-topic questions come with it (its card's).
        let mut across_scripts = false;
        let mut off_topic = 0.0;
        let store = &self.store;
        let (lexical, embedded) = match &mut self.semantic {
            Semantic::Ready {
                settings,
                stamp,
                encoder,
            } if wants_semantic => {
                // The vectors are made ready first: the search of the whole
                // history needs no store, so the worker runs it as soon as
                // the query is embedded, while the lexical half runs here.
                let prepared = prepare_vectors(store, &self.vectors_path, &mut self.index, stamp);
                let ready = prepared.as_ref().ok();
                let whole = query.scope.is_unrestricted();
                let loaded = encoder.take();
                // With the model loaded, the embedding thread is free a few
                // milliseconds in: it then gathers the session evidence on a
                // connection of its own while this thread ranks messages.
                // (A model still to load would delay it instead.)
                let aside = if query.mode == Mode::Hybrid && loaded.is_some() {
                    self.aside
                        .take()
                        .or_else(|| Store::open_read(store.path()).ok())
                } else {
                    None
                };
                let split = aside.is_some();
                let settings: &Settings = settings;
                let text = query.text;
                let candidates = query.scope;
                let (signals, (back, vector, nearest, aside, evidence, located)) =
                    std::thread::scope(|threads| {
                        let worker = threads.spawn(move || {
                            let mut encoder = match loaded {
                                Some(e) => e,
                                None => match QueryEncoder::load(settings) {
                                    Ok(e) => {
                                        trace("model loaded");
                                        Box::new(e)
                                    }
                                    Err(e) => {
                                        return (None, Err(e.to_string()), None, aside, None, None)
                                    }
                                },
                            };
                            let v = encoder.encode(text).map_err(|e| e.to_string());
                            trace("query embedded");
                            let nearest = match (&v, ready) {
                                (Ok(v), Some(p)) if whole => {
                                    let found = semantic::nearest_units(&p.vectors(), v, depth);
                                    trace("nearest units found");
                                    Some(found)
                                }
                                _ => None,
                            };
                            let evidence = aside
                                .as_ref()
                                .map(|a| session_evidence(a, text, candidates, depth));
                            if evidence.is_some() {
                                trace("session evidence gathered");
                            }
                            // The units' messages and sessions too, on the
                            // same connection.
                            let located = match (&nearest, &aside) {
                                (Some(Ok(units)), Some(a)) => {
                                    let l = locate_nearest(a, text, units.clone(), depth);
                                    trace("nearest messages located");
                                    Some(l)
                                }
                                _ => None,
                            };
                            (Some(encoder), v, nearest, aside, evidence, located)
                        });
                        let signals = if split {
                            lexical_messages(store, query.text, query.mode, query.scope, depth)
                        } else {
                            gather_lexical(store, query.text, query.mode, query.scope, depth)
                        };
                        trace("lexical ranked");
                        let embedded = worker.join().unwrap_or_else(|_| {
                            (
                                None,
                                Err("the model failed while embedding the query".into()),
                                None,
                                None,
                                None,
                                None,
                            )
                        });
                        (signals, embedded)
                    });
                self.aside = aside;
                if let Some(e) = &back {
                    across_scripts = e.compares_scripts();
                    off_topic = e.off_topic();
                }
                // The session evidence joins the messages' ranking; if the
                // other connection could not gather it, this one does.
                let signals = match (split, signals, evidence) {
                    (true, Ok(mut s), Some(Ok(e))) => {
                        add_session_evidence(&mut s, e);
                        Ok(s)
                    }
                    (true, Ok(mut s), _) => session_evidence(store, query.text, query.scope, depth)
                        .map(|e| {
                            add_session_evidence(&mut s, e);
                            s
                        }),
                    (_, signals, _) => signals,
                };
                match back {
                    Some(e) if !self.keep_model => {
                        std::thread::spawn(move || drop(e));
                    }
                    back => *encoder = back,
                }
                (signals, Some((vector, nearest, located, prepared)))
            }
            Semantic::Unavailable(why) if wants_semantic => {
                unavailable = Some(why.clone());
                (
                    gather_lexical(store, query.text, query.mode, query.scope, depth),
                    None,
                )
            }
            _ => (
                gather_lexical(store, query.text, query.mode, query.scope, depth),
                None,
            ),
        };
        // The lexical half of a hybrid query may fail and leave the semantic
        // half to answer; in lexical mode it is the whole answer.
        let mut lexical_unavailable = None;
        let mut signals = match lexical {
            Ok(signals) => signals,
            Err(e) if query.mode == Mode::Hybrid && matches!(embedded, Some((Ok(_), _, _, _))) => {
                lexical_unavailable = Some(format!("the full-text search failed: {e}"));
                Signals::empty(query.mode)
            }
            Err(e) => return Err(e),
        };
        if let Some((vector, nearest, located, prepared)) = embedded {
            match vector {
                Ok(v) => {
                    let found = prepared.and_then(|p| {
                        match (located, nearest) {
                            (Some(Ok(l)), _) => add_located(&mut signals, l),
                            (_, Some(units)) => {
                                add_nearest(store, &mut signals, query.text, units?, depth)?
                            }
                            (_, None) => add_semantic(
                                store,
                                &mut signals,
                                query.text,
                                &p.vectors(),
                                &v,
                                query.scope,
                                depth,
                            )?,
                        }
                        if p.index.is_none() {
                            notices.push("the vector index is missing or unreadable; scoring every vector directly (run `deja index` to rebuild it)".to_string());
                        }
                        Ok(())
                    });
                    match found {
                        Ok(()) => trace("semantic ranked"),
                        Err(e) if lexical_unavailable.is_none() => {
                            signals.semantic.clear();
                            unavailable = Some(format!("the semantic search failed: {e}"));
                        }
                        // Both halves failed: nothing to answer with.
                        Err(e) => return Err(e),
                    }
                }
                Err(why) => unavailable = Some(why),
            }
        }
        let mut mode = query.mode;
        if unavailable.is_some() {
            // Without vectors, what lexical ranking finds is the answer
            // (gathered now when semantic ranking alone was asked for).
            if query.mode == Mode::Semantic {
                signals = gather_lexical(store, query.text, Mode::Lexical, query.scope, depth)?;
            }
            mode = Mode::Lexical;
            signals.mode = Mode::Lexical;
        } else if lexical_unavailable.is_some() {
            mode = Mode::Semantic;
            signals.mode = Mode::Semantic;
        }
        if let Some(why) = &lexical_unavailable {
            notices.push(format!("{why}; answering by meaning only"));
        }
        if across_scripts && mode == Mode::Hybrid && query.tuning.across_scripts != 0.0 {
            scripts::mark(store, &mut signals, query.text)?;
        }
        let mut ranked = rank(&signals, &query.tuning);
        let withheld = relevance::judge(
            store,
            &signals,
            &mut ranked,
            query.tuning.min_score,
            off_topic,
        );
        let mut hits =
            hydrate_capped(store, &ranked, query.limit, query.per_session, &mut notices)?;
        relevance::mark(&mut hits, mode);
        if query.per_session.is_some() {
            count_more(&mut hits, &ranked, &signals.session_of);
        }
        trace("searched");
        Ok(Answer {
            hits,
            mode,
            semantic_unavailable: unavailable,
            lexical_unavailable,
            notices,
            withheld,
        })
    }
}

/// The vectors a query is ranked against: the saved index (when it is
/// usable) and the units embedded since it was saved.
struct Prepared<'a> {
    index: Option<&'a VectorIndex>,
    unsynced: HashMap<u64, Vec<f32>>,
}

impl Prepared<'_> {
    fn vectors(&self) -> semantic::Vectors<'_> {
        semantic::Vectors {
            index: self.index,
            unsynced: &self.unsynced,
        }
    }
}

/// Opens (or reuses) the memory-mapped vector index while it is the current
/// file, and reads the vectors embedded since it was saved: every stored
/// vector when there is no usable index file.
fn prepare_vectors<'c>(
    store: &Store,
    vectors_path: &Path,
    cache: &'c mut Option<(IndexFile, Option<VectorIndex>)>,
    stamp: &ModelStamp,
) -> Result<Prepared<'c>, RecallError> {
    let file = IndexFile {
        watermark: vectors::watermark(store)?,
        files: vectors::file_stamps(vectors_path),
    };
    if cache.as_ref().is_none_or(|(known, _)| *known != file) {
        let opened = VectorIndex::open(vectors_path, stamp.dims, true);
        *cache = Some((file, opened));
    }
    let index = cache.as_ref().and_then(|(_, ix)| ix.as_ref());
    let unsynced = match index {
        Some(_) => vectors::unsynced(store, &stamp.id)?,
        None => vectors::all(store, &stamp.id)?,
    };
    Ok(Prepared { index, unsynced })
}

/// Sets each shown session's `more_in_session` (on its first hit): how many
/// of its ranked messages are not among the hits.
fn count_more(hits: &mut [Hit], ranked: &[(i64, f64)], session_of: &HashMap<i64, i64>) {
    let mut ranked_in: HashMap<i64, usize> = HashMap::new();
    for (message, _) in ranked {
        if let Some(session) = session_of.get(message) {
            *ranked_in.entry(*session).or_default() += 1;
        }
    }
    let mut shown_in: HashMap<i64, usize> = HashMap::new();
    for h in hits.iter() {
        *shown_in.entry(h.session_row).or_default() += 1;
    }
    let mut done = std::collections::HashSet::new();
    for h in hits.iter_mut() {
        if done.insert(h.session_row) {
            let ranked = ranked_in.get(&h.session_row).copied().unwrap_or(0);
            let shown = shown_in.get(&h.session_row).copied().unwrap_or(0);
            h.more_in_session = ranked.saturating_sub(shown);
        }
    }
}
