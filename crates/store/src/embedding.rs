//! The embedding side of the store: which messages still need embedding
//! units (with their neighbours' text), which are embedded in part (a sample
//! of a long message's windows, the rest to follow), the content-hash cache
//! of vectors by model, the units of each message, and the model the store
//! was embedded with.

use deja_model::ModelStamp;
use rusqlite::{params, OptionalExtension};

use crate::{Result, Store};

/// The rule by which message `m` waits for units: text that is not only
/// white space, and no unit yet. The table `waiting_units` lists exactly
/// these messages (schema 14 fills it by this rule, and triggers keep it as
/// messages and units change), so that what waits is found without a scan
/// of every message; tests check the two agree.
#[cfg(test)]
pub(crate) const WITHOUT_UNITS: &str =
    "length(trim(m.text, ' ' || char(9) || char(10) || char(13))) > 0
      AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.message = m.id)";

/// A message waiting for its units, with its neighbours' text.
#[derive(Debug, Clone)]
pub struct PendingMessage {
    /// Message row id.
    pub id: i64,
    /// Its session's row id.
    pub session: i64,
    /// Its text.
    pub text: String,
    /// The text of the message before it in its session.
    pub previous: Option<String>,
    /// The text of the message after it.
    pub next: Option<String>,
    /// The ordinals of the units it already has (none unless it is embedded
    /// in part).
    pub embedded: Vec<usize>,
}

/// Which messages an embedding pass works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Messages with no unit yet.
    Units,
    /// Messages embedded in part: the rest of their windows.
    Rest,
}

impl Due {
    /// The table that lists them (by `message`), and a further condition on
    /// message `m`.
    fn source(self) -> (&'static str, &'static str) {
        match self {
            Due::Units => ("waiting_units", "1"),
            Due::Rest => (
                "partial_units",
                "EXISTS (SELECT 1 FROM chunks c WHERE c.message = m.id)",
            ),
        }
    }
}

/// Where a newest-first walk of the pending messages stands: the last
/// message returned (its session's start, its session, its row id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// The session's start (ms).
    pub started_at: i64,
    /// The session's row id.
    pub session: i64,
    /// The message's row id.
    pub message: i64,
    /// Whether the session is dated only by its transcript's modification
    /// time: such sessions come after every dated one.
    pub approximate: bool,
}

/// How much of the history the semantic half covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coverage {
    /// Messages still waiting for embedding units.
    pub pending: i64,
    /// The start (ms) of the newest session with a message still waiting:
    /// every session that began after it is covered. `None`: all are.
    pub waiting_since: Option<i64>,
    /// Long messages embedded in part so far (a sample of their windows):
    /// found by meaning already, the rest of their windows still to come.
    pub partial: i64,
}

/// The meta key of the coverage the last index run recorded.
pub(crate) const COVERAGE_KEY: &str = "embedding_coverage";

/// One embedding unit of a message: its ordinal and the hash of its text.
#[derive(Debug, Clone)]
pub struct Unit {
    /// Message row id.
    pub message: i64,
    /// Position among the message's units.
    pub ordinal: usize,
    /// sha256 of the unit's text (the cache key).
    pub text_hash: String,
}

/// Ordinals written by `group_concat` (`"0,3,7"`); none for `None`.
fn ordinals(list: Option<&str>) -> Vec<usize> {
    list.map(|l| l.split(',').filter_map(|o| o.trim().parse().ok()).collect())
        .unwrap_or_default()
}

impl Store {
    /// The model the stored vectors were made with, if any.
    pub fn model_stamp(&self) -> Option<ModelStamp> {
        Some(ModelStamp {
            fingerprint: self.meta("embed_fingerprint").ok()??,
            id: self.meta("embed_model").ok()??,
            dims: self.meta("embed_dims").ok()??.parse().ok()?,
        })
    }

    /// Records the model the stored vectors are made with.
    pub fn set_model_stamp(&self, stamp: &ModelStamp) -> Result<()> {
        self.set_meta("embed_fingerprint", &stamp.fingerprint)?;
        self.set_meta("embed_model", &stamp.id)?;
        self.set_meta("embed_dims", &stamp.dims.to_string())
    }

    /// Files the cached vectors of model `old` under `new` (the same model
    /// under a new id that computes the same vectors here).
    pub fn relabel_model(&self, old: &str, new: &str) -> Result<()> {
        self.conn()
            .execute(
                "UPDATE OR IGNORE embeddings SET model = ?2 WHERE model = ?1",
                rusqlite::params![old, new],
            )
            .map_err(|e| self.wrap(e))?;
        self.conn()
            .execute("DELETE FROM embeddings WHERE model = ?1", [old])
            .map_err(|e| self.wrap(e))?;
        Ok(())
    }

    /// Drops every embedding unit (their vectors stay cached, to be reused if
    /// the model comes back) and the vector index files at `vectors_path`:
    /// units of another model cannot mix. Vectors of texts dropped before
    /// are pruned first ([`Store::prune_embeddings`]).
    pub fn reset_units(&self, vectors_path: &std::path::Path) -> Result<()> {
        self.prune_embeddings()?;
        self.conn()
            .execute_batch(
                "DELETE FROM chunks; DELETE FROM partial_units;
                 DELETE FROM vector_trash; DELETE FROM dropped_units;",
            )
            .map_err(|e| self.wrap(e))?;
        let _ = crate::vectors::remove_files(vectors_path);
        self.set_meta(crate::vectors::WATERMARK, "0")
    }

    /// Removes the cached vectors (of any model) of texts whose units were
    /// dropped (their message changed, was redacted differently, or was
    /// forgotten) and that no remaining unit uses. Returns how many went.
    pub fn prune_embeddings(&self) -> Result<usize> {
        let n = self
            .conn()
            .execute(
                "DELETE FROM embeddings WHERE text_hash IN (
                    SELECT d.text_hash FROM dropped_units d
                    WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.text_hash = d.text_hash))",
                [],
            )
            .map_err(|e| self.wrap(e))?;
        self.conn()
            .execute("DELETE FROM dropped_units", [])
            .map_err(|e| self.wrap(e))?;
        Ok(n)
    }

    /// Removes every cached vector that no unit uses, whatever its model
    /// (vectors kept for a model the store may switch back to included).
    /// Returns how many went.
    pub fn prune_all_embeddings(&self) -> Result<usize> {
        let n = self
            .conn()
            .execute(
                "DELETE FROM embeddings WHERE NOT EXISTS (
                    SELECT 1 FROM chunks c WHERE c.text_hash = embeddings.text_hash)",
                [],
            )
            .map_err(|e| self.wrap(e))?;
        self.conn()
            .execute("DELETE FROM dropped_units", [])
            .map_err(|e| self.wrap(e))?;
        Ok(n)
    }

    /// Messages still waiting for embedding units.
    pub fn pending_count(&self) -> Result<i64> {
        self.conn()
            .query_row("SELECT count(*) FROM waiting_units", [], |r| r.get(0))
            .map_err(|e| self.wrap(e))
    }

    /// Messages embedded in part (see [`Due::Rest`]).
    pub fn partial_count(&self) -> Result<i64> {
        self.conn()
            .query_row("SELECT count(*) FROM partial_units", [], |r| r.get(0))
            .map_err(|e| self.wrap(e))
    }

    /// Messages that `due` selects.
    pub fn due_count(&self, due: Due) -> Result<i64> {
        match due {
            Due::Units => self.pending_count(),
            Due::Rest => self.partial_count(),
        }
    }

    /// Up to `limit` messages that `due` selects, newest sessions first,
    /// those dated only by their file's time last (a
    /// session's messages in order), after `after`; with the cursor of the
    /// last one. The embedding passes walk the history this way, so that the
    /// last days are searchable by meaning first.
    pub fn pending_newest(
        &self,
        due: Due,
        after: Option<Cursor>,
        limit: usize,
    ) -> Result<(Vec<PendingMessage>, Option<Cursor>)> {
        let (table, condition) = due.source();
        let mut stmt = self
            .conn()
            .prepare_cached(&format!(
                "SELECT m.id, m.text,
                    (SELECT p.text FROM messages p WHERE p.session = m.session AND p.position = m.position - 1),
                    (SELECT n.text FROM messages n WHERE n.session = m.session AND n.position = m.position + 1),
                    s.started_at, m.session,
                    (SELECT group_concat(c.ordinal) FROM chunks c WHERE c.message = m.id),
                    s.date_approximate
                 FROM {table} w CROSS JOIN messages m ON m.id = w.message
                    CROSS JOIN sessions s ON s.id = m.session
                 WHERE {condition}
                   AND (?1 IS NULL OR s.date_approximate > ?4
                        OR (s.date_approximate = ?4
                            AND (s.started_at < ?1
                                 OR (s.started_at = ?1
                                     AND (m.session < ?2 OR (m.session = ?2 AND m.id > ?3))))))
                 ORDER BY s.date_approximate, s.started_at DESC, m.session DESC, m.id
                 LIMIT {limit}"
            ))
            .map_err(|e| self.wrap(e))?;
        let (a, b, c, d) = match after {
            Some(k) => (Some(k.started_at), k.session, k.message, k.approximate),
            None => (None, 0, 0, false),
        };
        let rows = stmt
            .query_map(params![a, b, c, d], |r| {
                Ok((
                    PendingMessage {
                        id: r.get(0)?,
                        session: r.get(5)?,
                        text: r.get(1)?,
                        previous: r.get(2)?,
                        next: r.get(3)?,
                        embedded: ordinals(r.get::<_, Option<String>>(6)?.as_deref()),
                    },
                    Cursor {
                        started_at: r.get(4)?,
                        session: r.get(5)?,
                        message: r.get(0)?,
                        approximate: r.get(7)?,
                    },
                ))
            })
            .map_err(|e| self.wrap(e))?;
        let rows: Vec<(PendingMessage, Cursor)> = rows
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))?;
        let last = rows.last().map(|(_, k)| *k);
        Ok((rows.into_iter().map(|(m, _)| m).collect(), last))
    }

    /// Computes [`Store::coverage`] and keeps it, for readers to whom the
    /// computation (a walk of every message waiting, all of them while
    /// the first embedding pass runs) is too dear: recall reads it
    /// with [`Store::recorded_coverage`]. Index runs call it as they end.
    pub fn record_coverage(&self) -> Result<Coverage> {
        let c = self.coverage()?;
        let value = match c.waiting_since {
            Some(since) => format!("{} {since} {}", c.pending, c.partial),
            None => format!("{} - {}", c.pending, c.partial),
        };
        self.set_meta(COVERAGE_KEY, &value)?;
        Ok(c)
    }

    /// The coverage the last index run recorded (`None`: none recorded).
    pub fn recorded_coverage(&self) -> Result<Option<Coverage>> {
        // Written as `pending since partial`; runs before partial units
        // existed wrote the first two.
        Ok(self.meta(COVERAGE_KEY)?.and_then(|v| {
            let mut fields = v.split(' ');
            let pending = fields.next()?.parse().ok()?;
            let waiting_since = fields.next()?.parse().ok();
            let partial = fields.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            Some(Coverage {
                pending,
                waiting_since,
                partial,
            })
        }))
    }

    /// Drops the recorded coverage: a run that is about to change what is
    /// embedded calls it first, so that a run cut short leaves no record
    /// that claims more or less than the store holds.
    pub fn forget_recorded_coverage(&self) -> Result<()> {
        self.conn()
            .execute("DELETE FROM meta WHERE key = ?1", [COVERAGE_KEY])
            .map(|_| ())
            .map_err(|e| self.wrap(e))
    }

    /// How much of the history recall by meaning covers now: the coverage
    /// the last run recorded, else (a run was cut short) counted. Everything
    /// that reports coverage (doctor, recall, the MCP tools) asks this.
    pub fn current_coverage(&self) -> Result<Coverage> {
        match self.recorded_coverage()? {
            Some(c) => Ok(c),
            None => self.coverage(),
        }
    }

    /// How much of the history has embedding units (a walk of the messages
    /// still waiting, and of their sessions).
    pub fn coverage(&self) -> Result<Coverage> {
        self.conn()
            .query_row(
                "SELECT count(*), max(s.started_at), (SELECT count(*) FROM partial_units)
                 FROM waiting_units w CROSS JOIN messages m ON m.id = w.message
                    CROSS JOIN sessions s ON s.id = m.session",
                [],
                |r| {
                    Ok(Coverage {
                        pending: r.get(0)?,
                        waiting_since: r.get(1)?,
                        partial: r.get(2)?,
                    })
                },
            )
            .map_err(|e| self.wrap(e))
    }

    /// Up to `limit` messages waiting for units with a row id above `after`,
    /// in row id order.
    pub fn pending_page(&self, after: i64, limit: usize) -> Result<Vec<PendingMessage>> {
        let mut stmt = self
            .conn()
            .prepare(&format!(
                "SELECT m.id, m.text,
                    (SELECT p.text FROM messages p WHERE p.session = m.session AND p.position = m.position - 1),
                    (SELECT n.text FROM messages n WHERE n.session = m.session AND n.position = m.position + 1),
                    m.session
                 FROM waiting_units w CROSS JOIN messages m ON m.id = w.message
                 WHERE w.message > ?1 ORDER BY w.message LIMIT {limit}"
            ))
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([after], |r| {
                Ok(PendingMessage {
                    id: r.get(0)?,
                    session: r.get(4)?,
                    text: r.get(1)?,
                    previous: r.get(2)?,
                    next: r.get(3)?,
                    embedded: Vec::new(),
                })
            })
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }

    /// Whether the cache holds a vector of `model` for the text hashed `hash`.
    pub fn has_cached_vector(&self, hash: &str, model: &str) -> Result<bool> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT 1 FROM embeddings WHERE text_hash = ?1 AND model = ?2")
            .map_err(|e| self.wrap(e))?;
        stmt.query_row(params![hash, model], |_| Ok(()))
            .optional()
            .map(|found| found.is_some())
            .map_err(|e| self.wrap(e))
    }

    /// Stores new vectors of `model` (by text hash) and the units of a page of
    /// messages, in one transaction; every message of `units` has all its
    /// units now.
    pub fn add_units(
        &mut self,
        model: &str,
        vectors: &[(&str, &[f32])],
        units: &[Unit],
    ) -> Result<()> {
        self.add_page(model, vectors, units, &[])
    }

    /// [`Store::add_units`], where the messages in `partial` are embedded in
    /// part (the rest of their windows will follow, [`Due::Rest`]) and every
    /// other message of `units` is complete.
    pub fn add_page(
        &mut self,
        model: &str,
        vectors: &[(&str, &[f32])],
        units: &[Unit],
        partial: &[i64],
    ) -> Result<()> {
        self.in_transaction(|tx| {
            let mut put = tx.prepare(
                "INSERT OR IGNORE INTO embeddings (text_hash, model, vector) VALUES (?1, ?2, ?3)",
            )?;
            for (hash, v) in vectors {
                put.execute(params![hash, model, crate::vectors::to_blob(v)])?;
            }
            let mut unit = tx.prepare(
                "INSERT OR IGNORE INTO chunks (message, ordinal, text_hash) VALUES (?1, ?2, ?3)",
            )?;
            for u in units {
                unit.execute(params![u.message, u.ordinal as i64, u.text_hash])?;
            }
            let mut complete = tx.prepare_cached("DELETE FROM partial_units WHERE message = ?1")?;
            let mut part =
                tx.prepare_cached("INSERT OR IGNORE INTO partial_units (message) VALUES (?1)")?;
            let mut seen = std::collections::HashSet::new();
            for u in units {
                if seen.insert(u.message) && !partial.contains(&u.message) {
                    complete.execute([u.message])?;
                }
            }
            for m in partial {
                part.execute([m])?;
            }
            Ok(())
        })
    }
}
