//! An indexing run, shared by `deja index`, the MCP server's background
//! runs, `deja aider`, recall's refresh and the team commands: under the
//! writer lock, the changed transcripts through the readers and the redactor
//! into the store, then the embedding passes and the vector index, and the
//! erasure of what was removed; and what recall by meaning covers so far,
//! in words.

use std::time::Instant;

use anyhow::{Context, Result};
use deja_embed::Embedder;
use deja_index::embedding::{self as pass, Pass, PassProgress, PassReport};
use deja_index::redact::Redactor;
use deja_index::Progress;
use deja_store::Store;

use crate::app::App;
use crate::lock::{self, Wait};
use crate::output;

/// What one indexing run did.
pub struct Outcome {
    /// The transcript pass.
    pub report: deja_index::Report,
    /// The embedding pass: `Ok(None)` when embeddings are disabled, `Err`
    /// says why it could not run.
    pub embedded: std::result::Result<Option<PassReport>, String>,
    /// The embedding pass could not run for a reason other than a missing
    /// model or runtime (a corrupt model file, a runtime that fails to load).
    pub embedding_broken: bool,
    /// A scrub is still owed: a reader kept the write-ahead log from being
    /// truncated (see [`Store::scrub`]); the next writer finishes it.
    pub scrub_pending: bool,
}

/// Progress of a whole run: transcripts, then embeddings.
pub trait RunProgress: Progress + PassProgress {
    /// The run is over.
    fn finish(&mut self) {}
}

impl RunProgress for deja_index::Quiet {}

/// Indexes under the writer lock (waiting for it as `wait` says): removes
/// what writers killed mid-save left behind, then every changed transcript,
/// then the embedding pass and the vector sync; drops cached vectors of texts
/// that are gone, and finishes the erasure of removed text: scrubs the store
/// when a settings change re-read transcripts or an earlier scrub was left
/// pending (the text they held before must not linger), and rebuilds the
/// vector index file when it may hold erased vectors, model or not. Used by
/// `deja index` and by the MCP server's background runs.
pub fn index_all(app: &App, wait: Wait, progress: &mut dyn RunProgress) -> Result<Outcome> {
    let started = Instant::now();
    deja_store::create_private_dir(&app.paths.data_dir)?;
    let _lock = lock::acquire(&app.paths.lock_file(), wait, &mut |m| output::warn(m))?;
    remove_stale_temporaries(app)?;
    let mut store = Store::open(&app.paths.database())?;
    let report = read_changed(app, &mut store, None, progress)?;
    // Until the run records what it covers, coverage is counted afresh.
    store.forget_recorded_coverage()?;
    let (embedded, embedding_broken) = match embed(app, &mut store, started, progress)? {
        Embedded::Done(done) => (Ok(done), false),
        Embedded::Missing(why) => (Err(why), false),
        Embedded::Broken(why) => (Err(why), true),
    };
    store.prune_embeddings()?;
    // What recall by meaning covers now, for recall to say without counting.
    // With embeddings off nothing asks (and every message waits).
    if !matches!(embedded, Ok(None)) {
        store.record_coverage()?;
    }
    // The embedding pass syncs the file when it runs; without a model the
    // erased vectors still go.
    erase_vectors(app, &store)?;
    let scrubbed = if report.reread_for_settings > 0 {
        Some(store.scrub()?)
    } else {
        store.finish_scrub()?
    };
    progress.finish();
    Ok(Outcome {
        report,
        embedded,
        embedding_broken,
        scrub_pending: scrubbed == Some(false),
    })
}

/// Rebuilds the vector index file when text was erased since it was saved
/// (forgotten, retracted by its publisher, or re-read under new settings),
/// so that no freed slot keeps an erased vector; needs no model. The caller
/// holds the writer lock.
pub fn erase_vectors(app: &App, store: &Store) -> Result<()> {
    if deja_store::vectors::rebuild_pending(store)? {
        deja_store::vectors::sync_after_change(store, &app.paths.vectors())?;
    }
    Ok(())
}

/// What the embedding pass did.
pub enum Embedded {
    /// It ran (`None`: embeddings are disabled).
    Done(Option<PassReport>),
    /// The model or runtime is not installed: says so, with the fix.
    Missing(String),
    /// The model or runtime is there but could not be loaded: says why.
    Broken(String),
}

impl Embedded {
    /// The pass as a result: `Ok(None)` when embeddings are disabled, `Err`
    /// says why it could not run.
    pub fn into_result(self) -> std::result::Result<Option<PassReport>, String> {
        match self {
            Embedded::Done(done) => Ok(done),
            Embedded::Missing(why) | Embedded::Broken(why) => Err(why),
        }
    }
}

/// The transcript pass of an index run (the caller holds the writer lock):
/// every enabled reader's changed transcripts, redacted, into `store`, until
/// `deadline` when one is given.
pub fn read_changed(
    app: &App,
    store: &mut Store,
    deadline: Option<std::time::Instant>,
    progress: &mut dyn Progress,
) -> Result<deja_index::Report> {
    let redactor = Redactor::from_config(&app.config.config.redact)?;
    let readers = app.readers()?;
    output::trace("readers loaded");
    let options = deja_index::Options {
        home: &app.paths.home,
        max_file_bytes: app.config.config.index.max_file_bytes,
        deadline,
        read_tracked: app.config.config.index.read_tracked,
    };
    deja_index::run(&readers, &options, store, &redactor, progress)
        .with_context(|| format!("indexing into `{}`", store.path().display()))
}

/// Temporary files of writers that died while saving (the vector index's,
/// which only a lock holder writes, so all of them) or while deriving the
/// query model (those of processes no longer running: a recall may be making
/// one now).
fn remove_stale_temporaries(app: &App) -> Result<()> {
    deja_store::vectors::remove_stale_temporaries(&app.paths.vectors())?;
    deja_embed::query::remove_stale_temporaries(&app.embed_settings(), &process_running);
    Ok(())
}

/// Whether a process with this id exists (unknown counts as running).
fn process_running(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return true;
        };
        // SAFETY: signal 0 only checks that the process exists; nothing is sent.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        alive || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// The embedding passes (see [`Embedded`]) of a run that began at `started`
/// (the time at which every message was searchable by meaning is counted
/// from it). The caller holds the writer lock.
pub fn embed(
    app: &App,
    store: &mut Store,
    started: Instant,
    progress: &mut dyn RunProgress,
) -> Result<Embedded> {
    let settings = app.embed_settings();
    if !settings.enabled {
        return Ok(Embedded::Done(None));
    }
    let known = store.model_stamp();
    let unchanged_model = known
        .as_ref()
        .is_some_and(|k| settings.fingerprint().as_deref() == Some(k.fingerprint.as_str()));
    if unchanged_model
        && pass::pending(store)? == 0
        && deja_store::vectors::in_sync(store, &app.paths.vectors())?
        && deja_recall::relevance::ceiling_measured(store)
    {
        // Nothing to embed: do not spend time loading the model.
        let _ = deja_embed::query::prepare(&settings);
        return Ok(Embedded::Done(Some(PassReport::default())));
    }
    let mut embedder = match Embedder::load(&settings, known.as_ref()) {
        Ok(e) => {
            app.record_model_choice(store)?;
            e
        }
        Err(e) if e.is_missing() => {
            return Ok(Embedded::Missing(format!(
                "{e}\nhint: run {} to install the model and runtime",
                deja_embed::install::fetch_model_command_for(&settings.model_dir)
            )))
        }
        Err(e) => return Ok(Embedded::Broken(e.to_string())),
    };
    let mut report = pass::run(
        store,
        &mut embedder,
        &app.paths.vectors(),
        Pass::First,
        progress,
    )?;
    if store.partial_count()? > 0 {
        // Every message is searchable by meaning now (recall scores the
        // units the vector index does not hold yet); the rest of the long
        // messages' windows follow. The vector index is synced once, at the
        // end, so its graph is the one a single pass would build.
        report.first_pass_seconds = Some(started.elapsed().as_secs_f64());
        let rest = pass::run(
            store,
            &mut embedder,
            &app.paths.vectors(),
            Pass::Rest,
            progress,
        )?;
        report.absorb_rest(&rest);
    }
    let known = embedder.known();
    // The probes of the history's noise ceiling, embedded while the model
    // is loaded; measured once the vector index is in line.
    let probes: Vec<Vec<f32>> = deja_recall::relevance::PROBES
        .iter()
        .filter_map(|p| embedder.embed_query(p).ok())
        .collect();
    drop(embedder);
    pass::sync_vectors(store, &app.paths.vectors(), &known)?;
    record_noise_ceiling(store, &app.paths.vectors(), known.dims, &probes);
    // Derive the fast-loading copy of the model for recall now, not at the
    // first query.
    let _ = deja_embed::query::prepare(&settings);
    Ok(Embedded::Done(Some(report)))
}

/// Measures and keeps the history's noise ceiling (see
/// [`deja_recall::relevance`]); a history without vectors has none, and a
/// failure only leaves recall judging answers by their score alone.
fn record_noise_ceiling(
    store: &Store,
    vectors: &std::path::Path,
    dims: usize,
    probes: &[Vec<f32>],
) {
    let ceiling = match deja_store::vectors::VectorIndex::open(vectors, dims, true) {
        Some(index) => match deja_recall::relevance::noise_ceiling(&index, probes) {
            Ok(c) => c,
            Err(_) => return,
        },
        None => None,
    };
    let _ = deja_recall::relevance::record_ceiling(store, ceiling);
}

/// The warning when a scrub could not truncate the write-ahead log.
pub const SCRUB_PENDING: &str =
    "another process kept the database's write-ahead log open, so removed text may still be in \
     `index.sqlite-wal`; the next `deja index` or `deja forget` finishes the scrub";

/// The day (UTC, `YYYY-MM-DD`) after which recall by meaning covers every
/// session, from [`deja_store::Store::current_coverage`]: `None` when it
/// covers everything. Doctor and recall both say it in these words.
pub fn covers_after(c: &deja_store::embedding::Coverage) -> Option<String> {
    let since = c.waiting_since?;
    Some(
        chrono::DateTime::from_timestamp_millis(since)
            .map(|d| d.format("%Y-%m-%d").to_string())
            .unwrap_or_else(|| "?".into()),
    )
}

/// What a recall by meaning does not cover yet, in words: `None` when it
/// covers everything.
pub fn coverage_note(c: &deja_store::embedding::Coverage) -> Option<String> {
    let day = covers_after(c)?;
    Some(format!(
        "meaning covers the sessions begun after {day}; {} of older sessions are found by words only until `deja index` has embedded them (it goes on where it stopped)",
        crate::output::plural(usize::try_from(c.pending).unwrap_or(0), "message", "messages")
    ))
}
