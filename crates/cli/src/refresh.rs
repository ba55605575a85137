//! The freshness pass before `deja recall`: transcripts that changed since
//! the last index are read into the store (their words are searchable at
//! once; their embeddings follow at the next `deja index` or in the MCP
//! server's background runs), within a time budget (`recall.refresh_ms`),
//! never waiting for a running index, and never on a store that only a full
//! `deja index` may upgrade, and not on a history of more transcripts than
//! `recall.refresh_max_transcripts` (checking thousands of files costs more
//! than a recall). It is the transcript pass of `deja index` with a
//! deadline, without the embedding pass and without looking for transcripts
//! that are gone.

use std::time::{Duration, Instant};

use anyhow::Result;
use deja_store::Store;

use crate::app::App;
use crate::lock::{self, Wait};
use crate::output;

/// What a freshness pass did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Refreshed {
    /// Transcripts read because they changed.
    pub changed: usize,
    /// Changed transcripts left for later: the budget ran out.
    pub left: usize,
}

/// Why no pass ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skipped {
    /// No index yet, or one only `deja index` may upgrade.
    NoStore,
    /// Another deja holds the writer lock.
    Busy,
    /// More transcripts than `recall.refresh_max_transcripts`: checking
    /// them all would cost more than it is worth on every recall.
    TooMany(i64),
}

/// Reads what changed, for at most `budget`.
pub fn run(app: &App, budget: Duration) -> Result<std::result::Result<Refreshed, Skipped>> {
    let started = Instant::now();
    let database = app.paths.database();
    // Only a store of this deja's version: reading commands never migrate.
    let Ok(store) = Store::open_read(&database) else {
        return Ok(Err(Skipped::NoStore));
    };
    let known = store.source_count()?;
    drop(store);
    let most = app.config.config.recall.refresh_max_transcripts;
    if u64::try_from(known).unwrap_or(0) > most {
        return Ok(Err(Skipped::TooMany(known)));
    }
    let _lock = match lock::acquire(&app.paths.lock_file(), Wait::No, &mut |_| {}) {
        Ok(lock) => lock,
        Err(lock::LockError::Busy { .. }) => return Ok(Err(Skipped::Busy)),
        Err(e) => return Err(e.into()),
    };
    let mut store = Store::open(&database)?;
    let report = crate::indexing::read_changed(
        app,
        &mut store,
        Some(started + budget),
        &mut deja_index::Quiet,
    )?;
    // This pass embeds nothing: what meaning covers is as the read left it.
    if report.changed > 0 {
        store.record_coverage()?;
    }
    if report.reread_for_settings > 0 {
        // Text stored before a settings change must not linger. When a
        // reader keeps the log, the scrub stays pending for `deja index`
        // (which also rebuilds the vector index file: this pass embeds
        // nothing).
        if !store.scrub()? {
            output::warn(crate::indexing::SCRUB_PENDING);
        }
    }
    output::trace("refresh: done");
    Ok(Ok(Refreshed {
        changed: report.changed,
        left: report.left,
    }))
}
