//! `deja index`: takes the writer lock, runs the ingest pipeline and the
//! embedding pass with a progress bar on a terminal, and ends with a summary.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use deja_embed::Embedder;
use deja_index::embedding::{self as pass, Pass, PassProgress, PassReport};
use deja_index::redact::Redactor;
use deja_index::Progress;
use deja_store::Store;

use crate::app::App;
use crate::lock::{self, Wait};
use crate::output::{self, Style};
use crate::{json, ExitStatus};

/// `deja index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Exit at once if another index is running, instead of waiting.
    #[arg(long)]
    pub no_wait: bool,
    /// Print a JSON summary.
    #[arg(long)]
    pub json: bool,
}

/// The progress bar of an index run (drawn on a terminal only).
pub(crate) struct Bar {
    bar: ProgressBar,
    /// Whether the second embedding pass is running.
    rest: bool,
}

impl Bar {
    /// A bar on stderr.
    pub(crate) fn new() -> Bar {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        // The rate and the time left are taken over the whole run so far, not
        // the last few steps: texts vary in length, so a recent rate swings.
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} {msg:12} [{bar:30}] {pos}/{len} {elapsed} ({rate}, about {left} left)",
        ) {
            let style = style
                .with_key(
                    "rate",
                    |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{:.1}/s", average_rate(state));
                    },
                )
                .with_key(
                    "left",
                    |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let rate = average_rate(state);
                        let rest = state.len().unwrap_or(0).saturating_sub(state.pos());
                        match rest as f64 / rate {
                            secs if rate > 0.0 && secs.is_finite() => {
                                let _ = write!(w, "{}", left(secs));
                            }
                            _ => {
                                let _ = write!(w, "?");
                            }
                        }
                    },
                );
            bar.set_style(style.progress_chars("=> "));
        }
        Bar { bar, rest: false }
    }
}

/// Steps per second over the whole run so far.
fn average_rate(state: &indicatif::ProgressState) -> f64 {
    let secs = state.elapsed().as_secs_f64();
    if secs > 0.0 {
        state.pos() as f64 / secs
    } else {
        0.0
    }
}

/// A duration left, for people: `40s`, `3m`, `1h 20m`.
fn left(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s.div_ceil(60)),
        _ => format!("{}h {}m", s / 3600, (s % 3600) / 60),
    }
}

impl Progress for Bar {
    fn transcripts(&mut self, total: usize) {
        self.bar.set_length(total as u64);
        self.bar.set_message("transcripts");
    }

    fn transcript_done(&mut self, _path: &Path) {
        self.bar.inc(1);
    }
}

impl PassProgress for Bar {
    fn start(&mut self, messages: u64, pass: Pass) {
        self.rest = pass == Pass::Rest;
        self.bar.reset();
        self.bar.set_length(messages);
        self.bar.set_position(0);
        self.bar.set_message(if self.rest {
            "embeddings, the rest of long messages"
        } else {
            "embeddings"
        });
    }

    fn advance(&mut self, n: u64) {
        self.bar.inc(n);
    }

    fn reached(&mut self, started_at_ms: i64) {
        // Newest first: what is done is everything since that day.
        if let Some(day) = chrono::DateTime::from_timestamp_millis(started_at_ms) {
            let day = day.format("%Y-%m-%d");
            self.bar.set_message(if self.rest {
                format!("embeddings, long messages in full back to {day}")
            } else {
                format!("embeddings (by meaning back to {day})")
            });
        }
    }
}

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

impl RunProgress for Bar {
    fn finish(&mut self) {
        self.bar.finish_and_clear();
    }
}

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
    let (embedded, embedding_broken) = match embed(app, &mut store, started, progress)? {
        Embedded::Done(done) => (Ok(done), false),
        Embedded::Missing(why) => (Err(why), false),
        Embedded::Broken(why) => (Err(why), true),
    };
    store.prune_embeddings()?;
    // What recall by meaning covers now, for recall to say without a scan.
    store.record_coverage()?;
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
pub(crate) fn erase_vectors(app: &App, store: &Store) -> Result<()> {
    if deja_store::vectors::rebuild_pending(store)? {
        deja_store::vectors::sync_after_change(store, &app.paths.vectors())?;
    }
    Ok(())
}

/// What the embedding pass did.
pub(crate) enum Embedded {
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
    pub(crate) fn into_result(self) -> std::result::Result<Option<PassReport>, String> {
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
pub(crate) fn embed(
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
    {
        // Nothing to embed: do not spend time loading the model.
        let _ = deja_embed::query::prepare(&settings);
        return Ok(Embedded::Done(Some(PassReport::default())));
    }
    let mut embedder = match Embedder::load(&settings, known.as_ref()) {
        Ok(e) => e,
        Err(e) if e.is_missing() => {
            return Ok(Embedded::Missing(format!(
                "{e}\nhint: run scripts/fetch-model to install the model and runtime"
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
    drop(embedder);
    pass::sync_vectors(store, &app.paths.vectors(), &known)?;
    // Derive the fast-loading copy of the model for recall now, not at the
    // first query.
    let _ = deja_embed::query::prepare(&settings);
    Ok(Embedded::Done(Some(report)))
}

/// Runs the command.
pub fn run(app: &App, args: &IndexArgs) -> Result<ExitStatus> {
    let started = Instant::now();
    let wait = if args.no_wait {
        Wait::No
    } else {
        Wait::Up(Duration::from_secs(app.config.config.index.lock_wait_secs))
    };
    let Outcome {
        report,
        embedded,
        embedding_broken,
        scrub_pending,
    } = index_all(app, wait, &mut Bar::new())?;

    for (harness, reason) in &report.discovery_failed {
        output::error(&format!(
            "{harness} reader could not look for transcripts: {reason}"
        ));
    }
    for w in &report.warnings {
        output::warn(w);
    }
    for (path, reason) in &report.failed {
        output::error(&format!(
            "`{path}`: {reason} (skipped; what was indexed before is kept)"
        ));
    }
    let a = &report.applied;
    let elapsed = started.elapsed();
    if args.json {
        output::print_json(&json::index::Index {
            discovery_errors: report
                .discovery_failed
                .iter()
                .map(|(h, e)| json::index::DiscoveryError {
                    error: e,
                    harness: h,
                })
                .collect(),
            embeddings: match &embedded {
                Ok(Some(p)) => json::index::Embeddings::Done {
                    cached: p.cached,
                    completed: p.completed,
                    embedded: p.embedded,
                    messages: p.messages,
                    searchable_after_seconds: p.first_pass_seconds,
                    units: p.units,
                },
                Ok(None) => json::index::Embeddings::Skipped {
                    skipped: "disabled in the config (`embed.enabled`)",
                },
                Err(why) => json::index::Embeddings::Skipped { skipped: why },
            },
            messages: json::index::Messages {
                added: a.messages_added,
                changed: a.messages_changed,
                removed: a.messages_removed,
            },
            seconds: elapsed.as_secs_f64(),
            sessions: json::index::Sessions {
                added: a.sessions_added,
                empty_skipped: report.skipped_empty,
                forgotten_skipped: a.sessions_forgotten,
                orphaned: a.sessions_orphaned,
                superseded: a.sessions_superseded,
                updated: a.sessions_updated,
            },
            transcripts: json::index::Transcripts {
                changed: report.changed,
                failed: report
                    .failed
                    .iter()
                    .map(|(p, e)| json::index::Failure { error: e, path: p })
                    .collect(),
                scanned: report.scanned,
            },
        })?;
    }
    let s = Style::stderr();
    use crate::output::plural;
    eprintln!(
        "{} in {:.2} s: {} scanned ({} changed, {} failed); {} added, {} updated; {} added",
        s.green("indexed"),
        elapsed.as_secs_f64(),
        plural(report.scanned, "transcript", "transcripts"),
        report.changed,
        report.failed.len(),
        plural(a.sessions_added, "session", "sessions"),
        a.sessions_updated,
        plural(a.messages_added, "message", "messages"),
    );
    match &embedded {
        // Messages are cut into text windows; each distinct window text is
        // embedded once and cached, so windows = new + cached + repeats.
        Ok(Some(p)) if p.units > 0 => {
            let repeats = p.units.saturating_sub(p.embedded + p.cached);
            let what = if p.messages > 0 {
                plural(p.messages, "message", "messages")
            } else {
                format!(
                    "the rest of {}",
                    plural(p.completed, "long message", "long messages")
                )
            };
            let passes = match p.first_pass_seconds {
                Some(secs) if p.messages > 0 => format!(
                    "; every message was searchable by meaning after {secs:.1} s, then the rest of the windows of {} followed",
                    plural(p.completed, "long message", "long messages")
                ),
                _ => String::new(),
            };
            eprintln!(
                "embedded {what} as {} ({} new to the model, {} from the cache{}){passes}",
                plural(p.units, "text window", "text windows"),
                p.embedded,
                p.cached,
                if repeats > 0 {
                    format!(
                        ", {} of a text embedded once in this run",
                        plural(repeats, "repeat", "repeats")
                    )
                } else {
                    String::new()
                }
            )
        }
        Ok(_) => {}
        Err(why) => {
            output::warn(&format!(
                "semantic index not updated: {why}; recall answers lexically"
            ));
        }
    }
    if a.sessions_orphaned > 0 {
        eprintln!(
            "{} kept whose transcript is gone or no longer holds {} (`deja forget` removes {})",
            plural(a.sessions_orphaned, "session", "sessions"),
            if a.sessions_orphaned == 1 {
                "it"
            } else {
                "them"
            },
            if a.sessions_orphaned == 1 {
                "it"
            } else {
                "them"
            },
        );
    }
    if scrub_pending {
        output::warn(SCRUB_PENDING);
    }
    // Problems the run could not get past: scripts must see them. A
    // transcript that failed is not one (it is reported, and retried).
    if !report.discovery_failed.is_empty() || embedding_broken || scrub_pending {
        return Ok(ExitStatus::Incomplete);
    }
    Ok(ExitStatus::Success)
}

/// The warning when a scrub could not truncate the write-ahead log.
pub(crate) const SCRUB_PENDING: &str =
    "another process kept the database's write-ahead log open, so removed text may still be in \
     `index.sqlite-wal`; the next `deja index` or `deja forget` finishes the scrub";

#[cfg(test)]
mod progress_tests {
    use super::left;

    #[test]
    fn time_left_reads_as_people_say_it() {
        assert_eq!(left(4.4), "4s");
        assert_eq!(left(59.0), "59s");
        assert_eq!(left(61.0), "2m");
        assert_eq!(left(3600.0), "1h 0m");
        assert_eq!(left(4_830.0), "1h 20m");
    }
}
