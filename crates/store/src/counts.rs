//! Store-wide counts and the transcripts' own state, for `deja doctor` and
//! the freshness pass.

use crate::{Result, Store};

/// A row of the `sources` table, for `deja doctor`.
#[derive(Debug, Clone)]
pub struct SourceRow {
    /// Harness.
    pub harness: String,
    /// Path.
    pub path: String,
    /// Last error.
    pub error: Option<String>,
}

/// Store-wide counts.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    /// Sessions.
    pub sessions: i64,
    /// Sessions whose transcript is gone.
    pub orphaned: i64,
    /// Messages.
    pub messages: i64,
    /// Transcripts known.
    pub sources: i64,
    /// Embedding units.
    pub chunks: i64,
    /// Cached embeddings.
    pub embeddings: i64,
    /// Forgotten sessions.
    pub tombstones: i64,
}

impl Store {
    /// Store-wide counts.
    pub fn counts(&self) -> Result<Counts> {
        let one = |sql: &str| -> Result<i64> {
            self.conn()
                .query_row(sql, [], |r| r.get(0))
                .map_err(|e| self.wrap(e))
        };
        Ok(Counts {
            sessions: one("SELECT count(*) FROM sessions")?,
            orphaned: one("SELECT count(*) FROM sessions WHERE source_id IS NULL")?,
            messages: one("SELECT count(*) FROM messages")?,
            sources: one("SELECT count(*) FROM sources")?,
            chunks: one("SELECT count(*) FROM chunks")?,
            embeddings: one("SELECT count(*) FROM embeddings")?,
            tombstones: one("SELECT count(*) FROM tombstones")?,
        })
    }

    /// How many transcripts the store knows (one cheap count).
    pub fn source_count(&self) -> Result<i64> {
        self.conn()
            .query_row("SELECT count(*) FROM sources", [], |r| r.get(0))
            .map_err(|e| self.wrap(e))
    }

    /// Transcripts whose last parse failed.
    pub fn failed_sources(&self) -> Result<Vec<SourceRow>> {
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT harness, path, error FROM sources WHERE error IS NOT NULL ORDER BY path",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(SourceRow {
                    harness: r.get(0)?,
                    path: r.get(1)?,
                    error: r.get(2)?,
                })
            })
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }
}
