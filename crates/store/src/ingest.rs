//! Writing what a reader parsed from one transcript into the store, in one
//! transaction: sessions keyed by (harness, id), messages by (session,
//! position) plus a content hash so unchanged messages are left alone,
//! precedence between copies of a session found in two files, tombstones of
//! forgotten sessions, and sessions that outlive their transcript.

use std::collections::{HashMap, HashSet};

use rusqlite::{params, OptionalExtension, Transaction};

use super::{sha256_hex, Result, Store};
use deja_model::{CopyRank, Message, Session};

/// What the store knows of a transcript file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceState {
    /// Row id.
    pub id: i64,
    /// Size in bytes when last read.
    pub size: i64,
    /// Modification time (ns) when last read.
    pub mtime_ns: i64,
    /// sha256 of its content when last read.
    pub hash: String,
    /// Reader name and version that parsed it.
    pub reader: String,
    /// What else it was read with (fingerprints of the reader's config and
    /// of the redaction settings).
    pub settings: String,
    /// The error of the last parse, if it failed.
    pub error: Option<String>,
}

/// A transcript file's identity and state on disk.
#[derive(Debug, Clone)]
pub struct FileState<'a> {
    /// Harness whose reader returned it.
    pub harness: &'a str,
    /// Its path.
    pub path: &'a str,
    /// Size in bytes.
    pub size: i64,
    /// Modification time in ns.
    pub mtime_ns: i64,
    /// sha256 of its content.
    pub hash: &'a str,
    /// Reader name and version.
    pub reader: &'a str,
    /// Fingerprints of the reader's config and the redaction settings.
    pub settings: &'a str,
}

/// Counts from applying one transcript.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// Sessions new to the store.
    pub sessions_added: usize,
    /// Sessions whose content changed.
    pub sessions_updated: usize,
    /// Sessions skipped because they were forgotten.
    pub sessions_forgotten: usize,
    /// Sessions skipped because a copy from another file wins.
    pub sessions_superseded: usize,
    /// Sessions that left this file and now have no source.
    pub sessions_orphaned: usize,
    /// Messages inserted.
    pub messages_added: usize,
    /// Messages whose text changed.
    pub messages_changed: usize,
    /// Messages removed (the transcript lost them).
    pub messages_removed: usize,
}

impl Applied {
    /// Adds `other` to `self`.
    pub fn add(&mut self, other: &Applied) {
        self.sessions_added += other.sessions_added;
        self.sessions_updated += other.sessions_updated;
        self.sessions_forgotten += other.sessions_forgotten;
        self.sessions_superseded += other.sessions_superseded;
        self.sessions_orphaned += other.sessions_orphaned;
        self.messages_added += other.messages_added;
        self.messages_changed += other.messages_changed;
        self.messages_removed += other.messages_removed;
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The content hash of a message: its role and text.
pub fn message_hash(m: &Message) -> String {
    let mut bytes = Vec::with_capacity(m.text.len() + 16);
    bytes.extend_from_slice(m.role.as_str().as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(m.text.as_bytes());
    sha256_hex(&bytes)
}

impl Store {
    /// What the store knows of `path` for `harness`.
    pub fn source(&self, harness: &str, path: &str) -> Result<Option<SourceState>> {
        self.conn()
            .query_row(
                "SELECT id, size, mtime_ns, hash, reader, settings, error FROM sources
                 WHERE harness = ?1 AND path = ?2",
                [harness, path],
                |r| {
                    Ok(SourceState {
                        id: r.get(0)?,
                        size: r.get(1)?,
                        mtime_ns: r.get(2)?,
                        hash: r.get(3)?,
                        reader: r.get(4)?,
                        settings: r.get(5)?,
                        error: r.get(6)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.wrap(e))
    }

    /// Records a new size and mtime for a source whose content is unchanged.
    pub fn touch_source(&self, id: i64, size: i64, mtime_ns: i64) -> Result<()> {
        self.conn()
            .execute(
                "UPDATE sources SET size = ?2, mtime_ns = ?3 WHERE id = ?1",
                params![id, size, mtime_ns],
            )
            .map(|_| ())
            .map_err(|e| self.wrap(e))
    }

    /// Records that a transcript failed to parse. Its sessions already in the
    /// store are kept as they are.
    pub fn record_failure(&mut self, file: &FileState<'_>, error: &str) -> Result<()> {
        self.in_transaction(|tx| upsert_source(tx, file, Some(error)).map(|_| ()))
    }

    /// Stores the sessions parsed from one transcript, in one transaction.
    pub fn apply(&mut self, file: &FileState<'_>, sessions: &[Session]) -> Result<Applied> {
        self.in_transaction(|tx| apply_in(tx, file, sessions))
    }

    /// Sources of `harness` whose file no longer exists: their sessions stay,
    /// with no source. Returns the number of sessions orphaned.
    pub fn orphan_missing(&mut self, harness: &str) -> Result<usize> {
        self.in_transaction(|tx| {
            let gone: Vec<i64> = {
                let mut stmt = tx.prepare("SELECT id, path FROM sources WHERE harness = ?1")?;
                let rows = stmt.query_map([harness], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
                })?;
                rows.filter_map(|r| r.ok())
                    .filter(|(_, p)| !std::path::Path::new(p).exists())
                    .map(|(id, _)| id)
                    .collect()
            };
            let mut orphaned = 0;
            for id in &gone {
                orphaned += tx.execute(
                    "UPDATE sessions SET source_id = NULL WHERE source_id = ?1",
                    [id],
                )?;
                tx.execute("DELETE FROM sources WHERE id = ?1", [id])?;
            }
            Ok(orphaned)
        })
    }
}

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
                super::mark_erasure(tx)?;
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

fn upsert_source(
    tx: &Transaction<'_>,
    file: &FileState<'_>,
    error: Option<&str>,
) -> rusqlite::Result<i64> {
    tx.query_row(
        "INSERT INTO sources (harness, path, size, mtime_ns, hash, indexed_at, reader, error,
            settings)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
         ON CONFLICT (harness, path) DO UPDATE SET
            size = excluded.size, mtime_ns = excluded.mtime_ns, hash = excluded.hash,
            indexed_at = excluded.indexed_at, reader = excluded.reader, error = excluded.error,
            settings = excluded.settings
         RETURNING id",
        params![
            file.harness,
            file.path,
            file.size,
            file.mtime_ns,
            file.hash,
            now_ms(),
            file.reader,
            error,
            file.settings
        ],
        |r| r.get(0),
    )
}

struct Existing {
    row: i64,
    source_id: Option<i64>,
    precedence: i32,
    updated_at: i64,
    message_count: i64,
}

fn apply_in(
    tx: &Transaction<'_>,
    file: &FileState<'_>,
    sessions: &[Session],
) -> rusqlite::Result<Applied> {
    let source_id = upsert_source(tx, file, None)?;
    let mut applied = Applied::default();

    // One copy per id within the file, the winning one.
    let mut chosen: HashMap<&str, &Session> = HashMap::new();
    for s in sessions {
        match chosen.get(s.id.as_str()) {
            Some(prev) if !s.wins_over(prev) => {}
            _ => {
                chosen.insert(s.id.as_str(), s);
            }
        }
    }

    let previously: HashSet<String> = {
        let mut stmt = tx.prepare("SELECT session_id FROM sessions WHERE source_id = ?1")?;
        let rows = stmt.query_map([source_id], |r| r.get::<_, String>(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };

    for s in sessions {
        // Only the winning copy of each id, wherever it is in the file.
        if !std::ptr::eq(chosen[s.id.as_str()], s) {
            continue;
        }
        if is_forgotten(tx, &s.harness, &s.id)? {
            applied.sessions_forgotten += 1;
            continue;
        }
        match existing(tx, &s.harness, &s.id)? {
            None => {
                let row = insert_session(tx, s, Provenance::Transcript(source_id, file.path))?;
                applied.sessions_added += 1;
                applied.messages_added += write_messages(tx, row, &s.messages)?.added;
                write_session_document(tx, row)?;
                write_records(tx, row, s)?;
            }
            Some(e) => {
                let other_source = e.source_id.filter(|&id| id != source_id);
                if other_source.is_some() {
                    let theirs = CopyRank {
                        precedence: e.precedence,
                        updated_at_ms: e.updated_at,
                        messages: e.message_count,
                    };
                    if s.copy_rank() <= theirs {
                        applied.sessions_superseded += 1;
                        continue;
                    }
                }
                update_session(tx, e.row, s, Provenance::Transcript(source_id, file.path))?;
                let diff = write_messages(tx, e.row, &s.messages)?;
                if diff.added + diff.changed + diff.removed > 0 || other_source.is_some() {
                    applied.sessions_updated += 1;
                    write_session_document(tx, e.row)?;
                }
                applied.messages_added += diff.added;
                applied.messages_changed += diff.changed;
                applied.messages_removed += diff.removed;
                write_records(tx, e.row, s)?;
            }
        }
    }

    // Sessions that were in this file and are not any more keep their memory.
    for id in previously.difference(&chosen.keys().map(|k| k.to_string()).collect()) {
        applied.sessions_orphaned += tx.execute(
            "UPDATE sessions SET source_id = NULL WHERE harness = ?1 AND session_id = ?2",
            params![file.harness, id],
        )?;
    }
    Ok(applied)
}

fn is_forgotten(tx: &Transaction<'_>, harness: &str, id: &str) -> rusqlite::Result<bool> {
    tx.query_row(
        "SELECT 1 FROM tombstones WHERE harness = ?1 AND session_id = ?2",
        [harness, id],
        |_| Ok(()),
    )
    .optional()
    .map(|r| r.is_some())
}

fn existing(tx: &Transaction<'_>, harness: &str, id: &str) -> rusqlite::Result<Option<Existing>> {
    tx.query_row(
        "SELECT id, source_id, precedence, updated_at, message_count FROM sessions
         WHERE harness = ?1 AND session_id = ?2",
        [harness, id],
        |r| {
            Ok(Existing {
                row: r.get(0)?,
                source_id: r.get(1)?,
                precedence: r.get(2)?,
                updated_at: r.get(3)?,
                message_count: r.get(4)?,
            })
        },
    )
    .optional()
}

fn first_user(s: &Session) -> Option<String> {
    s.first_user_line().map(|l| deja_model::one_line(l, 200))
}

/// Where a stored session comes from: a transcript on this machine, or the
/// team store.
#[derive(Clone, Copy)]
enum Provenance<'a> {
    /// A transcript: its source row and path.
    Transcript(i64, &'a str),
    /// The team store.
    Team(&'a Pulled<'a>),
}

impl<'a> Provenance<'a> {
    /// The source row and transcript path (none for a pulled session).
    fn source(self) -> (Option<i64>, Option<&'a str>) {
        match self {
            Provenance::Transcript(id, path) => (Some(id), Some(path)),
            Provenance::Team(_) => (None, None),
        }
    }

    /// The origin and the team content hash (none for this machine's own).
    fn origin(self) -> (Option<&'a str>, Option<&'a str>) {
        match self {
            Provenance::Transcript(..) => (None, None),
            Provenance::Team(p) => (Some(p.origin), Some(p.hash)),
        }
    }
}

fn insert_session(
    tx: &Transaction<'_>,
    s: &Session,
    from: Provenance<'_>,
) -> rusqlite::Result<i64> {
    let (source_id, source_path) = from.source();
    let (origin, origin_hash) = from.origin();
    tx.query_row(
        "INSERT INTO sessions (harness, session_id, native_id, source_id, source_path,
            started_at, updated_at, project_dir, project_name, project_id, title, parent_id,
            precedence, message_count, first_user, origin, origin_hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
         RETURNING id",
        params![
            s.harness,
            s.id,
            s.native_id,
            source_id,
            source_path,
            s.started_at_ms,
            s.updated_at_ms,
            s.project.dir,
            s.project.name,
            s.project.id,
            s.title,
            s.parent_id,
            s.precedence,
            s.messages.len() as i64,
            first_user(s),
            origin,
            origin_hash,
        ],
        |r| r.get(0),
    )
}

fn update_session(
    tx: &Transaction<'_>,
    row: i64,
    s: &Session,
    from: Provenance<'_>,
) -> rusqlite::Result<()> {
    let (source_id, source_path) = from.source();
    let (origin, origin_hash) = from.origin();
    tx.execute(
        "UPDATE sessions SET native_id = ?2, source_id = ?3, source_path = ?4, started_at = ?5,
            updated_at = ?6, project_dir = ?7, project_name = ?8, project_id = ?9, title = ?10,
            parent_id = ?11, precedence = ?12, message_count = ?13, first_user = ?14,
            origin = ?15, origin_hash = ?16
         WHERE id = ?1",
        params![
            row,
            s.native_id,
            source_id,
            source_path,
            s.started_at_ms,
            s.updated_at_ms,
            s.project.dir,
            s.project.name,
            s.project.id,
            s.title,
            s.parent_id,
            s.precedence,
            s.messages.len() as i64,
            first_user(s),
            origin,
            origin_hash,
        ],
    )
    .map(|_| ())
}

#[derive(Default)]
struct MessageDiff {
    added: usize,
    changed: usize,
    removed: usize,
}

/// Rewrites the session-level full-text document of session `row`.
fn write_session_document(tx: &Transaction<'_>, row: i64) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM sessions_fts WHERE rowid = ?1", [row])?;
    tx.execute(
        "INSERT INTO sessions_fts (rowid, text)
         SELECT ?1, group_concat(text, char(10))
         FROM (SELECT text FROM messages WHERE session = ?1 ORDER BY position)",
        [row],
    )?;
    Ok(())
}

/// Brings the stored messages of session `row` in line with `messages`,
/// touching only positions whose content changed. Embedding units of a changed
/// message and of its neighbours are dropped, to be recomputed.
fn write_messages(
    tx: &Transaction<'_>,
    row: i64,
    messages: &[Message],
) -> rusqlite::Result<MessageDiff> {
    let old: Vec<(i64, i64, String, i64, Option<String>)> = {
        let mut stmt = tx.prepare(
            "SELECT position, id, hash, timestamp, native_id FROM messages
             WHERE session = ?1 ORDER BY position",
        )?;
        let rows = stmt.query_map([row], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let by_position: HashMap<i64, &(i64, i64, String, i64, Option<String>)> =
        old.iter().map(|m| (m.0, m)).collect();
    let mut diff = MessageDiff::default();
    let mut touched: Vec<i64> = Vec::new();

    for (pos, m) in messages.iter().enumerate() {
        let pos = pos as i64;
        let hash = message_hash(m);
        match by_position.get(&pos) {
            Some((_, id, old_hash, ts, native)) if *old_hash == hash => {
                if *ts != m.timestamp_ms || *native != m.native_id {
                    tx.execute(
                        "UPDATE messages SET timestamp = ?2, native_id = ?3 WHERE id = ?1",
                        params![id, m.timestamp_ms, m.native_id],
                    )?;
                }
            }
            Some((_, id, _, _, _)) => {
                tx.execute(
                    "UPDATE messages SET role = ?2, text = ?3, timestamp = ?4, native_id = ?5,
                        hash = ?6 WHERE id = ?1",
                    params![
                        id,
                        m.role.as_str(),
                        m.text,
                        m.timestamp_ms,
                        m.native_id,
                        hash
                    ],
                )?;
                diff.changed += 1;
                touched.push(pos);
            }
            None => {
                tx.execute(
                    "INSERT INTO messages (session, position, role, text, timestamp, native_id, hash)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![row, pos, m.role.as_str(), m.text, m.timestamp_ms, m.native_id, hash],
                )?;
                diff.added += 1;
                touched.push(pos);
            }
        }
    }
    let kept = messages.len() as i64;
    diff.removed = tx.execute(
        "DELETE FROM messages WHERE session = ?1 AND position >= ?2",
        params![row, kept],
    )?;
    if diff.removed > 0 {
        touched.push(kept);
    }
    for pos in touched {
        tx.execute(
            "DELETE FROM chunks WHERE message IN (
                SELECT id FROM messages WHERE session = ?1 AND position BETWEEN ?2 AND ?3)",
            params![row, pos - 1, pos + 1],
        )?;
    }
    Ok(diff)
}

fn write_records(tx: &Transaction<'_>, row: i64, s: &Session) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM files WHERE session = ?1", [row])?;
    tx.execute("DELETE FROM commands WHERE session = ?1", [row])?;
    let mut files = tx.prepare(
        "INSERT INTO files (session, position, path, action, timestamp) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (i, f) in s.files.iter().enumerate() {
        files.execute(params![row, i as i64, f.path, f.action, f.timestamp_ms])?;
    }
    let mut commands = tx.prepare(
        "INSERT INTO commands (session, position, command, origin, timestamp) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (i, c) in s.commands.iter().enumerate() {
        commands.execute(params![row, i as i64, c.command, c.origin, c.timestamp_ms])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::embedding::Unit;
    use crate::test_support::{self, session};
    use deja_model::{FileRecord, Role};

    fn file(path: &str) -> FileState<'_> {
        test_support::file(path, "")
    }

    fn open() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("index.sqlite")).unwrap();
        (dir, store)
    }

    /// Gives every message waiting for units one unit, its vector cached
    /// under `m`, keyed by the text itself.
    fn embed_all(store: &mut Store) {
        let pending = store.pending_page(0, 1000).unwrap();
        let units: Vec<Unit> = pending
            .iter()
            .map(|m| Unit {
                message: m.id,
                ordinal: 0,
                text_hash: m.text.clone(),
            })
            .collect();
        let vector = [1.0f32, 0.0];
        let vectors: Vec<(&str, &[f32])> = units
            .iter()
            .map(|u| (u.text_hash.as_str(), &vector[..]))
            .collect();
        store.add_units("m", &vectors, &units).unwrap();
    }

    /// (message row id, text) of session `id`, by position.
    fn messages(store: &Store, id: &str) -> Vec<(i64, String)> {
        let mut stmt = store
            .conn()
            .prepare(
                "SELECT m.id, m.text FROM messages m JOIN sessions s ON s.id = m.session
                 WHERE s.harness = 'test' AND s.session_id = ?1 ORDER BY m.position",
            )
            .unwrap();
        let rows = stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        rows.map(|r| r.unwrap()).collect()
    }

    /// The unit (chunk) id of each message of session `id`, by position;
    /// `None` where the message has no unit (it waits for embedding).
    fn units(store: &Store, id: &str) -> Vec<Option<i64>> {
        let mut stmt = store
            .conn()
            .prepare(
                "SELECT (SELECT c.id FROM chunks c WHERE c.message = m.id AND c.ordinal = 0)
                 FROM messages m JOIN sessions s ON s.id = m.session
                 WHERE s.harness = 'test' AND s.session_id = ?1 ORDER BY m.position",
            )
            .unwrap();
        let rows = stmt.query_map([id], |r| r.get(0)).unwrap();
        rows.map(|r| r.unwrap()).collect()
    }

    /// Keys waiting to leave the vector index.
    fn trash(store: &Store) -> Vec<i64> {
        let mut stmt = store
            .conn()
            .prepare("SELECT key FROM vector_trash ORDER BY key")
            .unwrap();
        let rows = stmt.query_map([], |r| r.get(0)).unwrap();
        rows.map(|r| r.unwrap()).collect()
    }

    /// Message row ids whose text the message-level full-text index matches.
    fn fts_messages(store: &Store, word: &str) -> Vec<i64> {
        let mut stmt = store
            .conn()
            .prepare("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1 ORDER BY rowid")
            .unwrap();
        let rows = stmt.query_map([word], |r| r.get(0)).unwrap();
        rows.map(|r| r.unwrap()).collect()
    }

    /// Session row ids whose document the session-level index matches.
    fn fts_sessions(store: &Store, word: &str) -> Vec<i64> {
        let mut stmt = store
            .conn()
            .prepare("SELECT rowid FROM sessions_fts WHERE sessions_fts MATCH ?1 ORDER BY rowid")
            .unwrap();
        let rows = stmt.query_map([word], |r| r.get(0)).unwrap();
        rows.map(|r| r.unwrap()).collect()
    }

    fn row(store: &Store, id: &str) -> crate::SessionRow {
        store.session_row("test", id).unwrap().unwrap()
    }

    const FIVE: [&str; 5] = ["zero", "one", "two", "three", "four"];

    #[test]
    fn applying_the_same_sessions_twice_changes_nothing() {
        let (_dir, mut store) = open();
        let sessions = [session("a", &FIVE), session("b", &["alpha", "beta"])];
        let first = store.apply(&file("/t"), &sessions).unwrap();
        assert_eq!(
            first,
            Applied {
                sessions_added: 2,
                messages_added: 7,
                ..Applied::default()
            }
        );
        embed_all(&mut store);
        let before = (
            row(&store, "a").row,
            row(&store, "b").row,
            messages(&store, "a"),
            messages(&store, "b"),
            units(&store, "a"),
            units(&store, "b"),
        );
        assert!(before.4.iter().chain(&before.5).all(Option::is_some));

        let second = store.apply(&file("/t"), &sessions).unwrap();
        assert_eq!(second, Applied::default());
        let after = (
            row(&store, "a").row,
            row(&store, "b").row,
            messages(&store, "a"),
            messages(&store, "b"),
            units(&store, "a"),
            units(&store, "b"),
        );
        assert_eq!(after, before);
        assert_eq!(store.pending_count().unwrap(), 0);
        assert!(trash(&store).is_empty());
    }

    #[test]
    fn appended_messages_are_added_and_the_old_last_one_loses_its_units() {
        let (_dir, mut store) = open();
        store
            .apply(&file("/t"), &[session("a", &FIVE[..3])])
            .unwrap();
        embed_all(&mut store);
        let old = messages(&store, "a");
        let old_units = units(&store, "a");

        let applied = store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
        assert_eq!(
            applied,
            Applied {
                sessions_updated: 1,
                messages_added: 2,
                ..Applied::default()
            }
        );
        let now = messages(&store, "a");
        assert_eq!(now.len(), 5);
        assert_eq!(now[..3], old[..], "the earlier messages keep their rows");
        assert_eq!(row(&store, "a").message_count, 5);
        // The old last message was embedded with no next message as context:
        // its unit goes; the two before it keep theirs.
        assert_eq!(
            units(&store, "a"),
            [old_units[0], old_units[1], None, None, None]
        );
        assert_eq!(trash(&store), [old_units[2].unwrap()]);
        let pending: Vec<i64> = store
            .pending_page(0, 100)
            .unwrap()
            .iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(pending, [now[2].0, now[3].0, now[4].0]);
        assert_eq!(fts_sessions(&store, "four"), [row(&store, "a").row]);
    }

    #[test]
    fn a_changed_message_invalidates_its_units_and_its_neighbours_only() {
        let (_dir, mut store) = open();
        store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
        store.apply(&file("/u"), &[session("b", &FIVE)]).unwrap();
        embed_all(&mut store);
        let old = messages(&store, "a");
        let old_units = units(&store, "a");
        let other_units = units(&store, "b");

        let mut changed = FIVE;
        changed[2] = "zebra";
        let applied = store.apply(&file("/t"), &[session("a", &changed)]).unwrap();
        assert_eq!(
            applied,
            Applied {
                sessions_updated: 1,
                messages_changed: 1,
                ..Applied::default()
            }
        );
        let now = messages(&store, "a");
        // Same rows, the middle one with its new text.
        assert_eq!(
            now.iter().map(|m| m.0).collect::<Vec<_>>(),
            old.iter().map(|m| m.0).collect::<Vec<_>>()
        );
        assert_eq!(now[2].1, "zebra");
        // Units are embedded with the neighbouring messages as context
        // (`PendingMessage::previous`/`next`): the changed message's and
        // those of the messages right before and after it go, the others
        // stay, and so does every unit of another session.
        assert_eq!(
            units(&store, "a"),
            [old_units[0], None, None, None, old_units[4]]
        );
        assert_eq!(units(&store, "b"), other_units);
        assert_eq!(
            trash(&store),
            [
                old_units[1].unwrap(),
                old_units[2].unwrap(),
                old_units[3].unwrap()
            ]
        );
        // The full-text indexes follow the new text.
        assert_eq!(fts_messages(&store, "zebra"), [now[2].0]);
        assert!(!fts_messages(&store, "two").contains(&now[2].0));
        assert_eq!(fts_sessions(&store, "zebra"), [row(&store, "a").row]);
        assert_eq!(fts_sessions(&store, "two"), [row(&store, "b").row]);

        // Re-embedding restores every unit; the untouched ones keep their ids.
        embed_all(&mut store);
        let again = units(&store, "a");
        assert!(again.iter().all(Option::is_some));
        assert_eq!((again[0], again[4]), (old_units[0], old_units[4]));
    }

    #[test]
    fn a_new_timestamp_alone_is_recorded_without_touching_the_units() {
        let (_dir, mut store) = open();
        store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
        embed_all(&mut store);
        let old_units = units(&store, "a");
        let mut later = session("a", &FIVE);
        later.messages[1].timestamp_ms = 42;
        later.messages[1].native_id = Some("n1".into());
        assert_eq!(
            store.apply(&file("/t"), &[later]).unwrap(),
            Applied::default()
        );
        assert_eq!(units(&store, "a"), old_units);
        let loaded = store.load_session(&row(&store, "a")).unwrap();
        assert_eq!(loaded.messages[1].timestamp_ms, 42);
        assert_eq!(loaded.messages[1].native_id.as_deref(), Some("n1"));
    }

    #[test]
    fn a_session_loads_with_its_header_as_stored_now() {
        let (_dir, mut store) = open();
        store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
        // A header read before a writer changed the session.
        let stale = row(&store, "a");
        let mut later = session("a", &FIVE);
        later.title = Some("renamed".into());
        later.messages.push(Message {
            role: Role::Assistant,
            text: "one more".into(),
            timestamp_ms: 0,
            native_id: None,
        });
        store.apply(&file("/t"), &[later]).unwrap();
        let loaded = store.load_session(&stale).unwrap();
        // The header comes from the same snapshot as the messages.
        assert_eq!(loaded.title.as_deref(), Some("renamed"));
        assert_eq!(loaded.messages.len(), FIVE.len() + 1);
        // And the read leaves no transaction open: a writer goes on.
        assert!(store.conn().is_autocommit());
        store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
    }

    #[test]
    fn a_new_role_alone_is_a_change() {
        let (_dir, mut store) = open();
        store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
        let mut other = session("a", &FIVE);
        other.messages[4].role = Role::Assistant;
        let applied = store.apply(&file("/t"), &[other]).unwrap();
        assert_eq!(applied.messages_changed, 1, "{applied:?}");
        let loaded = store.load_session(&row(&store, "a")).unwrap();
        assert_eq!(loaded.messages[4].role, Role::Assistant);
    }

    #[test]
    fn lost_messages_are_removed_and_the_new_last_one_loses_its_units() {
        let (_dir, mut store) = open();
        store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
        embed_all(&mut store);
        let old = messages(&store, "a");
        let old_units = units(&store, "a");

        let applied = store
            .apply(&file("/t"), &[session("a", &FIVE[..3])])
            .unwrap();
        assert_eq!(
            applied,
            Applied {
                sessions_updated: 1,
                messages_removed: 2,
                ..Applied::default()
            }
        );
        assert_eq!(messages(&store, "a"), old[..3]);
        assert_eq!(row(&store, "a").message_count, 3);
        // The new last message lost the next message it was embedded with.
        assert_eq!(units(&store, "a"), [old_units[0], old_units[1], None]);
        assert_eq!(
            trash(&store),
            [
                old_units[2].unwrap(),
                old_units[3].unwrap(),
                old_units[4].unwrap()
            ]
        );
        assert!(fts_messages(&store, "four").is_empty());
        assert!(fts_sessions(&store, "four").is_empty());
        assert_eq!(fts_sessions(&store, "two"), [row(&store, "a").row]);
    }

    #[test]
    fn a_message_removed_from_the_middle_shifts_the_later_ones() {
        let (_dir, mut store) = open();
        store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
        embed_all(&mut store);
        let old = messages(&store, "a");
        let old_units = units(&store, "a");

        // Messages are keyed by position: dropping "two" changes positions
        // 2 and 3 and removes position 4.
        let applied = store
            .apply(
                &file("/t"),
                &[session("a", &["zero", "one", "three", "four"])],
            )
            .unwrap();
        assert_eq!(
            (applied.messages_changed, applied.messages_removed),
            (2, 1),
            "{applied:?}"
        );
        let now = messages(&store, "a");
        assert_eq!(
            now.iter().map(|m| m.1.as_str()).collect::<Vec<_>>(),
            ["zero", "one", "three", "four"]
        );
        assert_eq!(now[..2], old[..2]);
        assert_eq!(units(&store, "a"), [old_units[0], None, None, None]);
    }

    #[test]
    fn a_better_copy_in_another_file_takes_the_session_over() {
        let (_dir, mut store) = open();
        let mut a = session("s", &["x", "y"]);
        a.updated_at_ms = 1;
        store.apply(&file("/a"), &[a.clone()]).unwrap();
        embed_all(&mut store);
        let old = messages(&store, "s");
        let old_units = units(&store, "s");
        let session_row = row(&store, "s").row;

        // A later copy with one more message, in another file.
        let mut b = session("s", &["x", "y", "z"]);
        b.updated_at_ms = 2;
        let applied = store.apply(&file("/b"), &[b]).unwrap();
        assert_eq!(
            applied,
            Applied {
                sessions_updated: 1,
                messages_added: 1,
                ..Applied::default()
            }
        );
        let now = row(&store, "s");
        assert_eq!(now.row, session_row);
        assert_eq!(now.source_path.as_deref(), Some("/b"));
        assert!(now.has_source);
        assert_eq!(messages(&store, "s")[..2], old[..]);
        assert_eq!(units(&store, "s"), [old_units[0], None, None]);

        // The first file read again with its older copy: superseded.
        let applied = store.apply(&file("/a"), &[a]).unwrap();
        assert_eq!(
            applied,
            Applied {
                sessions_superseded: 1,
                ..Applied::default()
            }
        );
        assert_eq!(messages(&store, "s").len(), 3);
        // The first file read again without it: the session is not its
        // any more, so nothing is orphaned.
        let applied = store.apply(&file("/a"), &[]).unwrap();
        assert_eq!(applied, Applied::default());
        assert_eq!(row(&store, "s").source_path.as_deref(), Some("/b"));
    }

    #[test]
    fn a_copy_of_higher_precedence_moves_the_session_and_keeps_its_units() {
        let (_dir, mut store) = open();
        store.apply(&file("/a"), &[session("s", &FIVE)]).unwrap();
        embed_all(&mut store);
        let old = (messages(&store, "s"), units(&store, "s"));
        let mut better = session("s", &FIVE);
        better.precedence = 1;
        let applied = store.apply(&file("/b"), &[better]).unwrap();
        assert_eq!(
            applied,
            Applied {
                sessions_updated: 1,
                ..Applied::default()
            }
        );
        assert_eq!(row(&store, "s").source_path.as_deref(), Some("/b"));
        assert_eq!((messages(&store, "s"), units(&store, "s")), old);
        assert!(trash(&store).is_empty());
    }

    #[test]
    fn an_equal_or_lower_ranked_copy_in_another_file_is_superseded() {
        let (_dir, mut store) = open();
        let mut first = session("s", &["x", "y"]);
        first.precedence = 1;
        first.updated_at_ms = 5;
        store.apply(&file("/a"), &[first.clone()]).unwrap();
        embed_all(&mut store);
        let old = (messages(&store, "s"), units(&store, "s"));

        // The same rank, other text.
        let mut equal = session("s", &["x", "changed"]);
        equal.precedence = 1;
        equal.updated_at_ms = 5;
        // Lower precedence, though later and longer.
        let mut lower = session("s", &["x", "y", "z", "w"]);
        lower.precedence = 0;
        lower.updated_at_ms = 9;
        for copy in [equal, lower] {
            let applied = store.apply(&file("/b"), &[copy]).unwrap();
            assert_eq!(
                applied,
                Applied {
                    sessions_superseded: 1,
                    ..Applied::default()
                }
            );
            assert_eq!((messages(&store, "s"), units(&store, "s")), old);
            assert_eq!(row(&store, "s").source_path.as_deref(), Some("/a"));
        }
        assert!(trash(&store).is_empty());
    }

    #[test]
    fn a_session_that_leaves_its_file_is_kept_and_any_copy_may_claim_it() {
        let (_dir, mut store) = open();
        let mut first = session("s", &["x", "y"]);
        first.precedence = 3;
        store
            .apply(&file("/a"), &[first, session("t", &["other"])])
            .unwrap();
        let applied = store
            .apply(&file("/a"), &[session("t", &["other"])])
            .unwrap();
        assert_eq!(
            applied,
            Applied {
                sessions_orphaned: 1,
                ..Applied::default()
            }
        );
        let orphan = row(&store, "s");
        assert!(!orphan.has_source);
        assert_eq!(orphan.source_path.as_deref(), Some("/a"));
        assert_eq!(messages(&store, "s").len(), 2);
        assert!(row(&store, "t").has_source);

        // With no file holding it, even a copy of lower precedence is taken.
        let applied = store
            .apply(&file("/b"), &[session("s", &["x", "y", "z"])])
            .unwrap();
        assert_eq!(
            applied,
            Applied {
                sessions_updated: 1,
                messages_added: 1,
                ..Applied::default()
            }
        );
        assert_eq!(messages(&store, "s").len(), 3);
        let claimed = row(&store, "s");
        assert_eq!(claimed.row, orphan.row);
        assert!(claimed.has_source);
        assert_eq!(claimed.source_path.as_deref(), Some("/b"));
    }

    #[test]
    fn of_two_copies_in_one_file_the_winning_one_is_stored() {
        let (_dir, mut store) = open();
        let mut low = session("s", &["low", "copy", "longer"]);
        low.precedence = 0;
        let mut high = session("s", &["high"]);
        high.precedence = 1;
        let applied = store
            .apply(&file("/a"), &[low.clone(), high.clone(), low])
            .unwrap();
        assert_eq!(
            applied,
            Applied {
                sessions_added: 1,
                messages_added: 1,
                ..Applied::default()
            }
        );
        assert_eq!(
            messages(&store, "s")
                .into_iter()
                .map(|m| m.1)
                .collect::<Vec<_>>(),
            ["high"]
        );
        // Equal copies: the first one read wins.
        let (_dir2, mut store2) = open();
        store2
            .apply(
                &file("/a"),
                &[session("s", &["first"]), session("s", &["second"])],
            )
            .unwrap();
        assert_eq!(messages(&store2, "s")[0].1, "first");
    }

    #[test]
    fn a_forgotten_session_is_not_added_again() {
        let (_dir, mut store) = open();
        let sessions = [session("a", &["quokka"]), session("b", &["wombat"])];
        store.apply(&file("/t"), &sessions).unwrap();
        embed_all(&mut store);
        assert_eq!(store.forget(&[row(&store, "a")]).unwrap(), 1);

        // The same transcript again, and a copy of it in another file.
        for (path, sessions) in [("/t", &sessions[..]), ("/u", &sessions[..1])] {
            let applied = store.apply(&file(path), sessions).unwrap();
            assert_eq!(
                applied,
                Applied {
                    sessions_forgotten: 1,
                    ..Applied::default()
                },
                "{path}"
            );
            assert!(store.session_row("test", "a").unwrap().is_none());
            assert!(messages(&store, "a").is_empty());
            assert!(fts_messages(&store, "quokka").is_empty());
            assert!(fts_sessions(&store, "quokka").is_empty());
        }
        // Other sessions of the file are still applied as usual.
        let applied = store
            .apply(&file("/t"), &[sessions[0].clone(), session("b", &["emu"])])
            .unwrap();
        assert_eq!(
            applied,
            Applied {
                sessions_forgotten: 1,
                sessions_updated: 1,
                messages_changed: 1,
                ..Applied::default()
            }
        );
        assert_eq!(store.pending_count().unwrap(), 1);
    }

    #[test]
    fn files_and_commands_are_replaced_not_appended() {
        let (_dir, mut store) = open();
        let mut s = session("a", &["x"]);
        s.files = vec![FileRecord {
            path: "src/main.rs".into(),
            action: "edit",
            timestamp_ms: 0,
        }];
        for _ in 0..2 {
            store.apply(&file("/t"), &[s.clone()]).unwrap();
        }
        let count = |store: &Store| -> i64 {
            store
                .conn()
                .query_row("SELECT count(*) FROM files", [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(count(&store), 1);
        s.files.clear();
        store.apply(&file("/t"), &[s]).unwrap();
        assert_eq!(count(&store), 0);
    }

    #[test]
    fn counts_add_up() {
        let mut total = Applied {
            sessions_added: 1,
            messages_added: 2,
            ..Applied::default()
        };
        total.add(&Applied {
            sessions_added: 1,
            sessions_updated: 2,
            sessions_forgotten: 3,
            sessions_superseded: 4,
            sessions_orphaned: 5,
            messages_added: 6,
            messages_changed: 7,
            messages_removed: 8,
        });
        assert_eq!(
            total,
            Applied {
                sessions_added: 2,
                sessions_updated: 2,
                sessions_forgotten: 3,
                sessions_superseded: 4,
                sessions_orphaned: 5,
                messages_added: 8,
                messages_changed: 7,
                messages_removed: 8,
            }
        );
    }
}
