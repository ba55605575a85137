//! Writing what a reader parsed from one transcript into the store, in one
//! transaction: sessions keyed by (harness, id), messages by (session,
//! position) plus a content hash so unchanged messages are left alone,
//! precedence between copies of a session found in two files, tombstones of
//! forgotten sessions, and sessions that outlive their transcript. Sessions
//! pulled from the team store are written by [`pulled`] through the
//! same row writers.

pub mod pulled;

use std::collections::{HashMap, HashSet};

use rusqlite::{params, OptionalExtension, Transaction};

use super::{sha256_hex, Result, Store};
use deja_model::{CopyRank, Message, Session};
use pulled::Pulled;

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

    /// What the store knows of every transcript of `harness`, by path: read
    /// in one query, so that a run over tens of thousands of unchanged
    /// transcripts does not ask for each.
    pub fn sources_of(&self, harness: &str) -> Result<HashMap<String, SourceState>> {
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT path, id, size, mtime_ns, hash, reader, settings, error FROM sources
                 WHERE harness = ?1",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([harness], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    SourceState {
                        id: r.get(1)?,
                        size: r.get(2)?,
                        mtime_ns: r.get(3)?,
                        hash: r.get(4)?,
                        reader: r.get(5)?,
                        settings: r.get(6)?,
                        error: r.get(7)?,
                    },
                ))
            })
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
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
        self.apply_found(file, sessions, Found::Own)
    }

    /// Stores the sessions parsed from one transcript found as `found` says,
    /// in one transaction.
    pub fn apply_found(
        &mut self,
        file: &FileState<'_>,
        sessions: &[Session],
        found: Found,
    ) -> Result<Applied> {
        self.in_transaction(|tx| {
            // New messages wait for embedding: the recorded coverage is
            // counted again by whoever reports it, until a run records it.
            tx.execute(
                "DELETE FROM meta WHERE key = ?1",
                [crate::embedding::COVERAGE_KEY],
            )?;
            apply_in(tx, file, sessions, found)
        })
    }

    /// Labels the sessions last read from `path` (of `harness`) as found in
    /// a code folder: its transcript is not read any more (a repository
    /// tracks it), and what was read from it before is kept, labelled.
    /// Returns the number of sessions labelled anew.
    pub fn label_found_in_code_folder(&self, harness: &str, path: &str) -> Result<usize> {
        self.conn()
            .execute(
                "UPDATE sessions SET in_code_folder = 1
                 WHERE in_code_folder = 0 AND source_id =
                     (SELECT id FROM sources WHERE harness = ?1 AND path = ?2)",
                [harness, path],
            )
            .map_err(|e| self.wrap(e))
    }

    /// Sources of `harness` whose file no longer exists: their sessions stay,
    /// with no source. Returns the number of sessions orphaned.
    pub fn orphan_missing(&mut self, harness: &str) -> Result<usize> {
        let all = self.sources_of(harness)?;
        self.orphan_missing_among(all.iter().map(|(path, k)| (k.id, path.as_str())))
    }

    /// Of the sources `candidates` (row id and path), those whose file no
    /// longer exists, as [`Store::orphan_missing`]: an index run that has
    /// just found most of a harness's transcripts asks only about the rest.
    pub fn orphan_missing_among<'p>(
        &mut self,
        candidates: impl IntoIterator<Item = (i64, &'p str)>,
    ) -> Result<usize> {
        let gone: Vec<i64> = candidates
            .into_iter()
            .filter(|(_, p)| !std::path::Path::new(p).exists())
            .map(|(id, _)| id)
            .collect();
        if gone.is_empty() {
            return Ok(0);
        }
        self.in_transaction(|tx| {
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

/// The stored state of a session that is being written again.
pub(crate) struct Existing {
    pub(crate) row: i64,
    source_id: Option<i64>,
    precedence: i32,
    updated_at: i64,
    message_count: i64,
}

fn apply_in(
    tx: &Transaction<'_>,
    file: &FileState<'_>,
    sessions: &[Session],
    found: Found,
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
                let row =
                    insert_session(tx, s, Provenance::Transcript(source_id, file.path, found))?;
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
                update_session(
                    tx,
                    e.row,
                    s,
                    Provenance::Transcript(source_id, file.path, found),
                )?;
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

pub(crate) fn is_forgotten(
    tx: &Transaction<'_>,
    harness: &str,
    id: &str,
) -> rusqlite::Result<bool> {
    tx.query_row(
        "SELECT 1 FROM tombstones WHERE harness = ?1 AND session_id = ?2",
        [harness, id],
        |_| Ok(()),
    )
    .optional()
    .map(|r| r.is_some())
}

pub(crate) fn existing(
    tx: &Transaction<'_>,
    harness: &str,
    id: &str,
) -> rusqlite::Result<Option<Existing>> {
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

/// Where a transcript was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// In its harness's own data folder, or a place the user named.
    Own,
    /// In a code folder (inside a project): it may have come with a cloned
    /// repository, so its sessions are labelled and kept from agents unless
    /// the user says otherwise.
    InCodeFolder,
}

/// Where a stored session comes from: a transcript on this machine, or the
/// team store.
#[derive(Clone, Copy)]
pub(crate) enum Provenance<'a> {
    /// A transcript: its source row and path, and where it was found.
    Transcript(i64, &'a str, Found),
    /// The team store.
    Team(&'a Pulled<'a>),
}

impl<'a> Provenance<'a> {
    /// The source row and transcript path (none for a pulled session).
    fn source(self) -> (Option<i64>, Option<&'a str>) {
        match self {
            Provenance::Transcript(id, path, _) => (Some(id), Some(path)),
            Provenance::Team(_) => (None, None),
        }
    }

    /// Whether its transcript was found in a code folder.
    fn in_code_folder(self) -> bool {
        matches!(self, Provenance::Transcript(_, _, Found::InCodeFolder))
    }

    /// The origin and the team content hash (none for this machine's own).
    fn origin(self) -> (Option<&'a str>, Option<&'a str>) {
        match self {
            Provenance::Transcript(..) => (None, None),
            Provenance::Team(p) => (Some(p.origin), Some(p.hash)),
        }
    }
}

pub(crate) fn insert_session(
    tx: &Transaction<'_>,
    s: &Session,
    from: Provenance<'_>,
) -> rusqlite::Result<i64> {
    let (source_id, source_path) = from.source();
    let (origin, origin_hash) = from.origin();
    tx.query_row(
        "INSERT INTO sessions (harness, session_id, native_id, source_id, source_path,
            started_at, updated_at, project_dir, project_name, project_id, title, parent_id,
            precedence, message_count, first_user, origin, origin_hash, in_code_folder,
            date_approximate)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
            ?18, ?19)
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
            from.in_code_folder(),
            s.date_approximate,
        ],
        |r| r.get(0),
    )
}

pub(crate) fn update_session(
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
            origin = ?15, origin_hash = ?16, in_code_folder = ?17, date_approximate = ?18
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
            from.in_code_folder(),
            s.date_approximate,
        ],
    )
    .map(|_| ())
}

#[derive(Default)]
pub(crate) struct MessageDiff {
    pub(crate) added: usize,
    pub(crate) changed: usize,
    pub(crate) removed: usize,
}

/// Rewrites the session-level full-text document of session `row`.
pub(crate) fn write_session_document(tx: &Transaction<'_>, row: i64) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM sessions_fts WHERE rowid = ?1", [row])?;
    tx.execute(
        "INSERT INTO sessions_fts (rowid, text)
         SELECT ?1, deja_segment(group_concat(text, char(10)))
         FROM (SELECT text FROM messages WHERE session = ?1 ORDER BY position)",
        [row],
    )?;
    Ok(())
}

/// Brings the stored messages of session `row` in line with `messages`,
/// touching only positions whose content changed. Embedding units of a changed
/// message and of its neighbours are dropped, to be recomputed.
pub(crate) fn write_messages(
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

pub(crate) fn write_records(tx: &Transaction<'_>, row: i64, s: &Session) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM files WHERE session = ?1", [row])?;
    tx.execute("DELETE FROM commands WHERE session = ?1", [row])?;
    let mut files = tx.prepare(
        "INSERT INTO files (session, position, path, action, timestamp, text)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for (i, f) in s.files.iter().enumerate() {
        files.execute(params![
            row,
            i as i64,
            f.path,
            f.action,
            f.timestamp_ms,
            f.text
        ])?;
    }
    let mut commands = tx.prepare(
        "INSERT INTO commands (session, position, command, origin, timestamp, outcome, exit_code)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for (i, c) in s.commands.iter().enumerate() {
        commands.execute(params![
            row,
            i as i64,
            c.command,
            c.origin,
            c.timestamp_ms,
            c.outcome.status.as_str(),
            c.outcome.exit_code
        ])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
