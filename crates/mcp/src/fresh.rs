//! Freshness without blocking: the server runs the incremental index in a
//! background thread at start and then every `mcp.index_interval_secs`,
//! under the same writer lock as `deja index` (a running `deja index` is
//! waited for, never raced). Tool calls never wait for it; they read what is
//! committed. The shared [`Status`] says what the thread is doing, so an
//! answer given while a first index runs can say so, with its progress.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deja_index::embedding::{Pass, PassProgress};
use deja_index::Progress;

use crate::app::App;
use crate::indexing::{index_all, RunProgress};
use crate::lock::Wait;

/// What the background indexer is doing.
#[derive(Debug, Default)]
pub struct Status {
    running: AtomicBool,
    finished_runs: AtomicU64,
    transcripts_total: AtomicU64,
    transcripts_done: AtomicU64,
    embed_total: AtomicU64,
    embed_done: AtomicU64,
    /// Whether the embedding counts are of the second pass (the rest of
    /// long messages' windows).
    embed_rest: AtomicBool,
    last_error: Mutex<Option<String>>,
}

impl Status {
    /// Whether a run is going on.
    pub fn running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }

    /// Runs finished since the server started.
    pub fn finished_runs(&self) -> u64 {
        self.finished_runs.load(Ordering::SeqCst)
    }

    /// The progress of the current run, in words.
    pub fn progress(&self) -> String {
        let (td, tt) = (
            self.transcripts_done.load(Ordering::SeqCst),
            self.transcripts_total.load(Ordering::SeqCst),
        );
        let (ed, et) = (
            self.embed_done.load(Ordering::SeqCst),
            self.embed_total.load(Ordering::SeqCst),
        );
        if et > 0 && self.embed_rest.load(Ordering::SeqCst) {
            format!(
                "{td} of {tt} transcripts read, every message embedded; the rest of the windows of {ed} of {et} long messages"
            )
        } else if et > 0 {
            format!("{td} of {tt} transcripts read, {ed} of {et} messages embedded")
        } else {
            format!("{td} of {tt} transcripts read")
        }
    }

    /// The error of the last run, if it failed.
    pub fn last_error(&self) -> Option<String> {
        self.last_error.lock().ok().and_then(|e| e.clone())
    }
}

/// Feeds a run's progress into the shared status.
struct Feed(Arc<Status>);

impl Progress for Feed {
    fn transcripts(&mut self, total: usize) {
        self.0
            .transcripts_total
            .store(total as u64, Ordering::SeqCst);
    }

    fn transcript_done(&mut self, _path: &Path) {
        self.0.transcripts_done.fetch_add(1, Ordering::SeqCst);
    }
}

impl PassProgress for Feed {
    fn start(&mut self, messages: u64, pass: Pass) {
        self.0
            .embed_rest
            .store(pass == Pass::Rest, Ordering::SeqCst);
        self.0.embed_done.store(0, Ordering::SeqCst);
        self.0.embed_total.store(messages, Ordering::SeqCst);
    }

    fn advance(&mut self, n: u64) {
        self.0.embed_done.fetch_add(n, Ordering::SeqCst);
    }
}

impl RunProgress for Feed {}

/// One background run: a fresh view of the config, the index, and the
/// outcome recorded in `status` (errors go to stderr, never to stdout).
fn run_once(status: &Arc<Status>) {
    for counter in [
        &status.transcripts_total,
        &status.transcripts_done,
        &status.embed_total,
        &status.embed_done,
    ] {
        counter.store(0, Ordering::SeqCst);
    }
    status.embed_rest.store(false, Ordering::SeqCst);
    status.running.store(true, Ordering::SeqCst);
    let outcome = App::new().and_then(|app| {
        let wait = Wait::Up(Duration::from_secs(app.config.config.index.lock_wait_secs));
        index_all(&app, wait, &mut Feed(status.clone()))
    });
    let error = match outcome {
        Ok(o) => {
            for (path, reason) in &o.report.failed {
                eprintln!("deja mcp: background index skipped `{path}`: {reason}");
            }
            if let Err(why) = &o.embedded {
                eprintln!("deja mcp: background index did not embed: {why}");
            }
            None
        }
        Err(e) => {
            eprintln!("deja mcp: background index failed: {e:#}");
            Some(format!("{e:#}"))
        }
    };
    if let Ok(mut last) = status.last_error.lock() {
        *last = error;
    }
    status.finished_runs.fetch_add(1, Ordering::SeqCst);
    status.running.store(false, Ordering::SeqCst);
}

/// Starts the background indexer (when `enabled`): a run now, then one
/// every `interval` (none more when it is zero).
pub fn start(enabled: bool, interval: Duration) -> Arc<Status> {
    let status = Arc::new(Status::default());
    if enabled {
        let shared = status.clone();
        let spawned = std::thread::Builder::new()
            .name("deja-index".into())
            .spawn(move || loop {
                run_once(&shared);
                if interval.is_zero() {
                    break;
                }
                std::thread::sleep(interval);
            });
        if let Err(e) = spawned {
            eprintln!("deja mcp: cannot start the background index: {e}");
        }
    }
    status
}
