//! Sessions pulled from the team store: storing them with their origin (a
//! pulled session never replaces this machine's own copy, and one forgotten
//! here stays forgotten), listing them, and removing those that left the
//! team store, with the same erasure as forgetting.

use rusqlite::Transaction;

use crate::ingest::{
    existing, insert_session, is_forgotten, update_session, write_messages, write_records,
    write_session_document, Provenance,
};
use crate::{Result, Store};
use deja_model::Session;

/// A session pulled from the team store.
#[derive(Debug, Clone, Copy)]
pub struct Pulled<'a> {
    /// Who and which machine published it (`user@machine`).
    pub origin: &'a str,
    /// Its team content hash.
    pub hash: &'a str,
    /// The session.
    pub session: &'a Session,
}

/// What storing a pulled session did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PullOutcome {
    /// New to this store.
    Added,
    /// Its content changed and was rewritten.
    Updated,
    /// Forgotten on this machine: a tombstone keeps it out.
    Forgotten,
    /// This store has its own copy (read from a transcript here, or pulled
    /// from another origin first), which is kept.
    Kept,
}

/// A session this store pulled from the team store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PulledRow {
    /// Row id.
    pub row: i64,
    /// Who published it.
    pub origin: String,
    /// Harness.
    pub harness: String,
    /// deja id.
    pub id: String,
    /// The team content hash it was pulled at.
    pub hash: String,
}

impl Store {
    /// Stores sessions pulled from the team store, in one transaction: a
    /// pulled session never replaces this machine's own copy, and a
    /// forgotten one stays forgotten.
    pub fn apply_pulled(&mut self, pulled: &[Pulled<'_>]) -> Result<Vec<PullOutcome>> {
        self.in_transaction(|tx| pulled.iter().map(|p| apply_pulled_in(tx, p)).collect())
    }

    /// Every session pulled from the team store.
    pub fn pulled(&self) -> Result<Vec<PulledRow>> {
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT id, origin, harness, session_id, coalesce(origin_hash, '') FROM sessions
                 WHERE origin IS NOT NULL ORDER BY id",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(PulledRow {
                    row: r.get(0)?,
                    origin: r.get(1)?,
                    harness: r.get(2)?,
                    id: r.get(3)?,
                    hash: r.get(4)?,
                })
            })
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }

    /// Removes pulled sessions that left the team store (their publisher
    /// forgot them or stopped sharing them) with everything derived from
    /// them, leaving no tombstone: should they be shared again, the next
    /// pull brings them back. Only pulled sessions are removed; the store's
    /// files are scrubbed and the vector index file marked for a rebuild as
    /// [`Store::forget`] does ([`Store::scrub_pending`] says when a reader
    /// kept the write-ahead log). Returns how many went.
    pub fn remove_pulled(&mut self, rows: &[i64]) -> Result<usize> {
        let n = self.in_transaction(|tx| {
            let mut n = 0;
            for row in rows {
                n += tx.execute(
                    "DELETE FROM sessions WHERE id = ?1 AND origin IS NOT NULL",
                    [row],
                )?;
            }
            if n > 0 {
                // In the same transaction, as for `forget`.
                crate::mark_erasure(tx)?;
            }
            Ok(n)
        })?;
        if n > 0 {
            self.prune_all_embeddings()?;
            self.scrub()?;
        }
        Ok(n)
    }
}

fn apply_pulled_in(tx: &Transaction<'_>, p: &Pulled<'_>) -> rusqlite::Result<PullOutcome> {
    let s = p.session;
    if is_forgotten(tx, &s.harness, &s.id)? {
        return Ok(PullOutcome::Forgotten);
    }
    let Some(e) = existing(tx, &s.harness, &s.id)? else {
        let row = insert_session(tx, s, Provenance::Team(p))?;
        write_messages(tx, row, &s.messages)?;
        write_session_document(tx, row)?;
        write_records(tx, row, s)?;
        return Ok(PullOutcome::Added);
    };
    let origin: Option<String> =
        tx.query_row("SELECT origin FROM sessions WHERE id = ?1", [e.row], |r| {
            r.get(0)
        })?;
    if origin.as_deref() != Some(p.origin) {
        return Ok(PullOutcome::Kept);
    }
    update_session(tx, e.row, s, Provenance::Team(p))?;
    let diff = write_messages(tx, e.row, &s.messages)?;
    if diff.added + diff.changed + diff.removed > 0 {
        write_session_document(tx, e.row)?;
    }
    write_records(tx, e.row, s)?;
    Ok(PullOutcome::Updated)
}
