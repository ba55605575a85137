//! Reading the store: listing sessions with filters, finding one by id or
//! unique prefix (of deja's id or the harness's), loading its messages and
//! records, forgetting sessions, listing their tombstones and lifting one,
//! what the filters can name (harnesses and projects), and the counts
//! `deja doctor` shows.

use rusqlite::{params, params_from_iter, OptionalExtension, Row};

use super::{Result, Store};
use deja_model::{CommandRecord, FileRecord, Message, Project, Role, Session};

/// A session row without its messages.
#[derive(Debug, Clone)]
pub struct SessionRow {
    /// Row id.
    pub row: i64,
    /// Harness.
    pub harness: String,
    /// deja id.
    pub id: String,
    /// Harness id.
    pub native_id: String,
    /// Start, ms.
    pub started_at: i64,
    /// Last update, ms.
    pub updated_at: i64,
    /// Project.
    pub project: Project,
    /// Title.
    pub title: Option<String>,
    /// Parent session.
    pub parent_id: Option<String>,
    /// Number of messages.
    pub message_count: i64,
    /// First line of the first user message.
    pub first_user: Option<String>,
    /// The transcript it was last read from.
    pub source_path: Option<String>,
    /// Whether that transcript is still there.
    pub has_source: bool,
    /// Who and which machine published it, for a session pulled from the
    /// team store; `None` for this machine's own.
    pub origin: Option<String>,
}

/// The columns of a [`SessionRow`], over `sessions s`. A session whose
/// project directory is unknown (a Gemini CLI hash folder) takes it from
/// another session of the same harness and project id that knows it.
const SESSION_COLUMNS: &str =
    "s.id, s.harness, s.session_id, s.native_id, s.started_at, s.updated_at,
    coalesce(s.project_dir, (SELECT o.project_dir FROM sessions o
        WHERE o.project_id = s.project_id AND o.harness = s.harness AND o.project_dir IS NOT NULL
        LIMIT 1)),
    s.project_name, s.project_id, s.title, s.parent_id, s.message_count, s.first_user,
    s.source_path, s.source_id IS NOT NULL, s.origin";

fn session_row(r: &Row<'_>) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        row: r.get(0)?,
        harness: r.get(1)?,
        id: r.get(2)?,
        native_id: r.get(3)?,
        started_at: r.get(4)?,
        updated_at: r.get(5)?,
        project: Project {
            dir: r.get(6)?,
            name: r.get(7)?,
            id: r.get(8)?,
        },
        title: r.get(9)?,
        parent_id: r.get(10)?,
        message_count: r.get(11)?,
        first_user: r.get(12)?,
        source_path: r.get(13)?,
        has_source: r.get(14)?,
        origin: r.get(15)?,
    })
}

/// Filters for listing sessions.
#[derive(Debug, Clone, Default)]
pub struct SessionFilter {
    /// Only this harness.
    pub harness: Option<String>,
    /// Only this project: a directory, a folder name or a project id.
    pub project: Option<String>,
    /// Started at or after (ms).
    pub since: Option<i64>,
    /// Started before (ms).
    pub until: Option<i64>,
    /// Only sessions of this origin.
    pub origin: Option<Origin>,
}

/// Whose sessions a filter keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// This machine's own sessions (none pulled from the team store).
    Mine,
    /// Sessions pulled from this origin: `user@machine` exactly, or every
    /// machine of `user` when no `@` is given.
    Named(String),
}

impl SessionFilter {
    /// Whether it keeps every session (every field is named here, so that a
    /// new filter cannot be forgotten).
    pub fn is_empty(&self) -> bool {
        let SessionFilter {
            harness,
            project,
            since,
            until,
            origin,
        } = self;
        harness.is_none()
            && project.is_none()
            && since.is_none()
            && until.is_none()
            && origin.is_none()
    }

    /// The SQL condition (on the `sessions` table aliased `s`) and its parameters.
    pub(crate) fn sql(&self) -> (String, Vec<rusqlite::types::Value>) {
        use rusqlite::types::Value;
        let mut conds = vec!["1".to_string()];
        let mut args: Vec<Value> = Vec::new();
        if let Some(h) = &self.harness {
            args.push(Value::Text(h.clone()));
            conds.push(format!("s.harness = ?{}", args.len()));
        }
        if let Some(p) = &self.project {
            // A trailing slash names the same directory; `/` alone is the root.
            let p = match p.trim_end_matches('/') {
                "" if !p.is_empty() => "/",
                trimmed => trimmed,
            };
            args.push(Value::Text(p.to_string()));
            let n = args.len();
            args.push(Value::Text(format!("%/{}", escape_like(p))));
            let like = args.len();
            // A folder name is the directory's last component, exactly: the
            // escaped LIKE finds the candidates (`%` and `_` are literal), and
            // since SQLite's LIKE ignores ASCII case, the suffix is compared
            // exactly too.
            // A hash-named project (Gemini CLI's folders) is shown by a short
            // prefix of its id, which matches too (six hex digits or more).
            let hex_prefix = p.len() >= 6 && p.chars().all(|c| c.is_ascii_hexdigit());
            let prefix = if hex_prefix {
                format!(" OR substr(s.project_id, 1, length(?{n})) = ?{n}")
            } else {
                String::new()
            };
            conds.push(format!(
                "(s.project_dir = ?{n} OR s.project_name = ?{n} OR s.project_id = ?{n}{prefix}
                  OR (s.project_dir LIKE ?{like} ESCAPE '\\'
                      AND substr(s.project_dir, -length(?{n}) - 1) = '/' || ?{n}))"
            ));
        }
        if let Some(t) = self.since {
            args.push(Value::Integer(t));
            conds.push(format!("s.started_at >= ?{}", args.len()));
        }
        if let Some(t) = self.until {
            args.push(Value::Integer(t));
            conds.push(format!("s.started_at < ?{}", args.len()));
        }
        match &self.origin {
            None => {}
            Some(Origin::Mine) => conds.push("s.origin IS NULL".to_string()),
            Some(Origin::Named(name)) if name.contains('@') => {
                args.push(Value::Text(name.clone()));
                conds.push(format!("s.origin = ?{}", args.len()));
            }
            Some(Origin::Named(user)) => {
                args.push(Value::Text(format!("{user}@")));
                let n = args.len();
                conds.push(format!("substr(s.origin, 1, length(?{n})) = ?{n}"));
            }
        }
        (conds.join(" AND "), args)
    }
}

/// `text` with LIKE's wildcards (`%`, `_`) and the escape character (`\`)
/// escaped, for `LIKE ... ESCAPE '\'`.
fn escape_like(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The sessions an id or prefix names (see [`Store::find_sessions`]).
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The sessions, oldest first, at most the limit asked for.
    pub rows: Vec<SessionRow>,
    /// How many sessions match in all.
    pub total: usize,
}

/// A project of the stored sessions, with how many sessions it holds.
#[derive(Debug, Clone)]
pub struct ProjectCount {
    /// The project.
    pub project: Project,
    /// Its sessions.
    pub sessions: i64,
}

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
    /// Sessions matching `filter`, newest first.
    pub fn sessions(
        &self,
        filter: &SessionFilter,
        limit: Option<usize>,
    ) -> Result<Vec<SessionRow>> {
        let (cond, args) = filter.sql();
        let sql = format!(
            "SELECT {SESSION_COLUMNS} FROM sessions s WHERE {cond}
             ORDER BY s.started_at DESC, s.id DESC LIMIT {}",
            limit.map(|l| l as i64).unwrap_or(-1)
        );
        let mut stmt = self.conn().prepare(&sql).map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(params_from_iter(args), session_row)
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }

    /// The sessions `id` names: those whose deja id equals it, else those
    /// whose harness id equals it, else those whose deja id or harness id
    /// starts with it. At most `limit` rows come back (oldest first), with
    /// the number of matches in all.
    pub fn find_sessions(&self, id: &str, limit: usize) -> Result<Found> {
        let rows_where = |cond: &str| -> Result<Found> {
            let total: i64 = self
                .conn()
                .query_row(
                    &format!("SELECT count(*) FROM sessions WHERE {cond}"),
                    [id],
                    |r| r.get(0),
                )
                .map_err(|e| self.wrap(e))?;
            let sql = format!(
                "SELECT {SESSION_COLUMNS} FROM sessions s WHERE {cond}
                 ORDER BY s.started_at, s.session_id LIMIT {}",
                i64::try_from(limit).unwrap_or(i64::MAX)
            );
            let mut stmt = self.conn().prepare(&sql).map_err(|e| self.wrap(e))?;
            let rows = stmt
                .query_map([id], session_row)
                .map_err(|e| self.wrap(e))?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(|e| self.wrap(e))?;
            Ok(Found {
                rows,
                total: usize::try_from(total).unwrap_or(0),
            })
        };
        for cond in [
            "session_id = ?1",
            "native_id = ?1",
            "substr(session_id, 1, length(?1)) = ?1 OR substr(native_id, 1, length(?1)) = ?1",
        ] {
            let found = rows_where(cond)?;
            if found.total > 0 {
                return Ok(found);
            }
        }
        Ok(Found::default())
    }

    /// The sessions (deja ids) and positions of the messages whose harness
    /// message id is `id`, at most `limit` of them.
    pub fn find_message(&self, id: &str, limit: usize) -> Result<Vec<(String, usize)>> {
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT s.session_id, m.position FROM messages m JOIN sessions s ON s.id = m.session
                 WHERE m.native_id = ?1 ORDER BY s.started_at, s.session_id LIMIT ?2",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(
                rusqlite::params![id, i64::try_from(limit).unwrap_or(i64::MAX)],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)),
            )
            .map_err(|e| self.wrap(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.wrap(e))?;
        Ok(rows
            .into_iter()
            .map(|(s, p)| (s, usize::try_from(p).unwrap_or(0)))
            .collect())
    }

    /// How many sessions match `filter`.
    pub fn count_sessions(&self, filter: &SessionFilter) -> Result<i64> {
        let (cond, args) = filter.sql();
        self.conn()
            .query_row(
                &format!("SELECT count(*) FROM sessions s WHERE {cond}"),
                params_from_iter(args),
                |r| r.get(0),
            )
            .map_err(|e| self.wrap(e))
    }

    /// The origins of sessions pulled from the team store, with their
    /// session counts, by name.
    pub fn origin_counts(&self) -> Result<Vec<(String, i64)>> {
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT origin, count(*) FROM sessions WHERE origin IS NOT NULL
                 GROUP BY origin ORDER BY origin",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }

    /// The harnesses of the stored sessions, with their session counts, by name.
    pub fn harness_counts(&self) -> Result<Vec<(String, i64)>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT harness, count(*) FROM sessions GROUP BY harness ORDER BY harness")
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }

    /// The projects of the stored sessions, most sessions first (at most
    /// `limit`), and how many there are in all.
    pub fn project_counts(&self, limit: usize) -> Result<(Vec<ProjectCount>, i64)> {
        let total: i64 = self
            .conn()
            .query_row(
                "SELECT count(*) FROM (SELECT DISTINCT project_dir, project_name, project_id
                 FROM sessions)",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.wrap(e))?;
        let mut stmt = self
            .conn()
            .prepare(&format!(
                "SELECT project_dir, project_name, project_id, count(*) AS n FROM sessions
                 GROUP BY project_dir, project_name, project_id
                 ORDER BY n DESC, project_name, project_dir, project_id LIMIT {}",
                i64::try_from(limit).unwrap_or(i64::MAX)
            ))
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(ProjectCount {
                    project: Project {
                        dir: r.get(0)?,
                        name: r.get(1)?,
                        id: r.get(2)?,
                    },
                    sessions: r.get(3)?,
                })
            })
            .map_err(|e| self.wrap(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.wrap(e))?;
        Ok((rows, total))
    }

    /// The full session of `row`, read in one snapshot: its header is read
    /// again with its messages, files and commands, so a writer committing
    /// meanwhile never yields a torn session.
    pub fn load_session(&self, row: &SessionRow) -> Result<Session> {
        let conn = self.conn();
        // A savepoint outside a transaction is a deferred read transaction;
        // inside one it nests.
        conn.execute_batch("SAVEPOINT load_session")
            .map_err(|e| self.wrap(e))?;
        let loaded = self.load_session_in(row.row);
        let end = if loaded.is_ok() {
            "RELEASE load_session"
        } else {
            "ROLLBACK TO load_session; RELEASE load_session"
        };
        conn.execute_batch(end).map_err(|e| self.wrap(e))?;
        loaded
    }

    fn load_session_in(&self, session: i64) -> Result<Session> {
        let conn = self.conn();
        let row = conn
            .query_row(
                &format!("SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id = ?1"),
                [session],
                session_row,
            )
            .map_err(|e| self.wrap(e))?;
        let mut stmt = conn
            .prepare(
                "SELECT role, text, timestamp, native_id FROM messages
                 WHERE session = ?1 ORDER BY position",
            )
            .map_err(|e| self.wrap(e))?;
        let messages = stmt
            .query_map([row.row], |r| {
                let role: String = r.get(0)?;
                Ok(Message {
                    role: Role::parse(&role).unwrap_or(Role::Assistant),
                    text: r.get(1)?,
                    timestamp_ms: r.get(2)?,
                    native_id: r.get(3)?,
                })
            })
            .map_err(|e| self.wrap(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.wrap(e))?;
        let mut stmt = conn
            .prepare(
                "SELECT path, action, timestamp FROM files WHERE session = ?1 ORDER BY position",
            )
            .map_err(|e| self.wrap(e))?;
        let files = stmt
            .query_map([row.row], |r| {
                let action: String = r.get(1)?;
                Ok(FileRecord {
                    path: r.get(0)?,
                    action: static_action(&action),
                    timestamp_ms: r.get(2)?,
                })
            })
            .map_err(|e| self.wrap(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.wrap(e))?;
        let mut stmt = conn
            .prepare(
                "SELECT command, origin, timestamp FROM commands WHERE session = ?1 ORDER BY position",
            )
            .map_err(|e| self.wrap(e))?;
        let commands = stmt
            .query_map([row.row], |r| {
                let origin: String = r.get(1)?;
                Ok(CommandRecord {
                    command: r.get(0)?,
                    origin: if origin == "user" { "user" } else { "agent" },
                    timestamp_ms: r.get(2)?,
                })
            })
            .map_err(|e| self.wrap(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.wrap(e))?;
        let precedence: i32 = conn
            .query_row(
                "SELECT precedence FROM sessions WHERE id = ?1",
                [row.row],
                |r| r.get(0),
            )
            .map_err(|e| self.wrap(e))?;
        Ok(Session {
            harness: row.harness.clone(),
            id: row.id.clone(),
            native_id: row.native_id.clone(),
            started_at_ms: row.started_at,
            updated_at_ms: row.updated_at,
            project: row.project.clone(),
            title: row.title.clone(),
            parent_id: row.parent_id.clone(),
            precedence,
            messages,
            files,
            commands,
        })
    }

    /// Removes sessions and everything derived from them (messages, FTS rows,
    /// embedding units, records, and every cached vector that no remaining
    /// unit uses) and records tombstones (ids, start, project folder and
    /// transcript path; no text) so that indexing never brings them back
    /// ([`Store::tombstones`] lists them, [`Store::unforget`] lifts one);
    /// then scrubs the files of the store so that no copy of their text is
    /// left in free space, old full-text segments or the write-ahead log
    /// ([`Store::scrub`]; when a reader kept the log, [`Store::scrub_pending`]
    /// says so and the next writer finishes it). The vector index file is
    /// marked for a rebuild, which [`crate::vectors::sync_after_change`]
    /// does. Returns how many were removed.
    pub fn forget(&mut self, rows: &[SessionRow]) -> Result<usize> {
        let now = chrono::Utc::now().timestamp_millis();
        let n = self.in_transaction(|tx| {
            let mut n = 0;
            for r in rows {
                tx.execute(
                    "INSERT OR REPLACE INTO tombstones
                        (harness, session_id, forgotten_at, native_id, started_at, project_dir,
                         source_path)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![
                        r.harness,
                        r.id,
                        now,
                        r.native_id,
                        r.started_at,
                        r.project.dir,
                        r.source_path
                    ],
                )?;
                n += tx.execute("DELETE FROM sessions WHERE id = ?1", [r.row])?;
            }
            // In the same transaction: a run killed before the scrub and
            // the vector rebuild leaves them to the next writer.
            super::mark_erasure(tx)?;
            Ok(n)
        })?;
        self.prune_all_embeddings()?;
        self.scrub()?;
        Ok(n)
    }

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

    /// The row of session `harness`/`id`, if stored.
    pub fn session_row(&self, harness: &str, id: &str) -> Result<Option<SessionRow>> {
        self.conn()
            .query_row(
                &format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.harness = ?1 AND s.session_id = ?2"
                ),
                [harness, id],
                session_row,
            )
            .optional()
            .map_err(|e| self.wrap(e))
    }
}

/// A forgotten session, as its tombstone remembers it: ids, start, project
/// folder and transcript path, never text. Tombstones written before deja
/// recorded more than the ids have `None` for the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tombstone {
    /// Harness.
    pub harness: String,
    /// deja id.
    pub id: String,
    /// Harness id.
    pub native_id: Option<String>,
    /// When the session started, ms.
    pub started_at: Option<i64>,
    /// Its project folder.
    pub project_dir: Option<String>,
    /// The transcript it was last read from.
    pub source_path: Option<String>,
    /// When it was forgotten, ms.
    pub forgotten_at: i64,
}

/// The tombstones an id names, like [`Found`] for sessions.
#[derive(Debug, Clone, Default)]
pub struct FoundTombstones {
    /// The tombstones, oldest session first, at most the limit asked for.
    pub rows: Vec<Tombstone>,
    /// How many match in all.
    pub total: usize,
}

/// What lifting a tombstone did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unforgotten {
    /// The tombstone that was removed.
    pub tombstone: Tombstone,
    /// How many stored transcripts were marked to be read again by the next
    /// index: the session's transcript, or, for a tombstone that does not
    /// name one, every transcript of its harness.
    pub marked: usize,
}

const TOMBSTONE_COLUMNS: &str =
    "harness, session_id, native_id, started_at, project_dir, source_path, forgotten_at";

fn tombstone_row(r: &Row<'_>) -> rusqlite::Result<Tombstone> {
    Ok(Tombstone {
        harness: r.get(0)?,
        id: r.get(1)?,
        native_id: r.get(2)?,
        started_at: r.get(3)?,
        project_dir: r.get(4)?,
        source_path: r.get(5)?,
        forgotten_at: r.get(6)?,
    })
}

impl Store {
    /// Every tombstone, most recently forgotten first.
    pub fn tombstones(&self) -> Result<Vec<Tombstone>> {
        let mut stmt = self
            .conn()
            .prepare(&format!(
                "SELECT {TOMBSTONE_COLUMNS} FROM tombstones
                 ORDER BY forgotten_at DESC, harness, session_id"
            ))
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([], tombstone_row)
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }

    /// The tombstones `id` names, as [`Store::find_sessions`] matches
    /// sessions: deja's id, else the harness's id, else a prefix of either.
    pub fn find_tombstones(&self, id: &str, limit: usize) -> Result<FoundTombstones> {
        for cond in [
            "session_id = ?1",
            "native_id = ?1",
            "substr(session_id, 1, length(?1)) = ?1 OR substr(native_id, 1, length(?1)) = ?1",
        ] {
            let total: i64 = self
                .conn()
                .query_row(
                    &format!("SELECT count(*) FROM tombstones WHERE {cond}"),
                    [id],
                    |r| r.get(0),
                )
                .map_err(|e| self.wrap(e))?;
            if total == 0 {
                continue;
            }
            let sql = format!(
                "SELECT {TOMBSTONE_COLUMNS} FROM tombstones WHERE {cond}
                 ORDER BY started_at, session_id LIMIT {}",
                i64::try_from(limit).unwrap_or(i64::MAX)
            );
            let mut stmt = self.conn().prepare(&sql).map_err(|e| self.wrap(e))?;
            let rows = stmt
                .query_map([id], tombstone_row)
                .map_err(|e| self.wrap(e))?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(|e| self.wrap(e))?;
            return Ok(FoundTombstones {
                rows,
                total: usize::try_from(total).unwrap_or(0),
            });
        }
        Ok(FoundTombstones::default())
    }

    /// Lifts the tombstone of session `harness`/`id`, so that indexing may
    /// bring the session back, and marks the transcript it was read from to be
    /// read again by the next index (its content has not changed, so it would
    /// otherwise be skipped); a tombstone that names no transcript marks every
    /// transcript of its harness. `None` if there is no such tombstone.
    pub fn unforget(&mut self, harness: &str, id: &str) -> Result<Option<Unforgotten>> {
        self.in_transaction(|tx| {
            let Some(tombstone) = tx
                .query_row(
                    &format!(
                        "SELECT {TOMBSTONE_COLUMNS} FROM tombstones
                         WHERE harness = ?1 AND session_id = ?2"
                    ),
                    [harness, id],
                    tombstone_row,
                )
                .optional()?
            else {
                return Ok(None);
            };
            tx.execute(
                "DELETE FROM tombstones WHERE harness = ?1 AND session_id = ?2",
                [harness, id],
            )?;
            // A size no file has: the next index reads it and compares hashes.
            const REREAD: &str = "UPDATE sources SET size = -1, mtime_ns = -1, hash = ''";
            let marked = match &tombstone.source_path {
                Some(path) => tx.execute(
                    &format!("{REREAD} WHERE harness = ?1 AND path = ?2"),
                    [harness, path.as_str()],
                )?,
                None => tx.execute(&format!("{REREAD} WHERE harness = ?1"), [harness])?,
            };
            Ok(Some(Unforgotten { tombstone, marked }))
        })
    }
}

/// The stored name of a file action as the model's static name (`read` for any other).
pub fn static_action(action: &str) -> &'static str {
    match action {
        "edit" => "edit",
        "add" => "add",
        "read-only" => "read-only",
        _ => "read",
    }
}

#[cfg(test)]
mod tombstone_tests {
    use super::*;
    use crate::ingest::FileState;
    use deja_model::Message;

    fn session(id: &str, native: &str, started: i64, text: &str) -> Session {
        Session {
            harness: "test".into(),
            id: id.into(),
            native_id: native.into(),
            started_at_ms: started,
            updated_at_ms: started,
            project: Project {
                dir: Some("/work/billing".into()),
                name: Some("billing".into()),
                id: None,
            },
            title: Some(format!("title of {id}")),
            parent_id: None,
            precedence: 0,
            messages: vec![Message {
                role: Role::User,
                text: text.into(),
                timestamp_ms: started,
                native_id: None,
            }],
            files: vec![],
            commands: vec![],
        }
    }

    fn file(path: &str) -> FileState<'_> {
        FileState {
            harness: "test",
            path,
            size: 10,
            mtime_ns: 20,
            hash: "h",
            reader: "test 1",
            settings: "s",
        }
    }

    /// A store holding sessions `a` and `b` read from `/t/one`, and `c` from `/t/two`.
    fn store(dir: &std::path::Path) -> Store {
        let mut store = Store::open(&dir.join("index.sqlite")).unwrap();
        store
            .apply(
                &file("/t/one"),
                &[
                    session("a-1", "native-a", 1_000, "first words"),
                    session("b-2", "native-b", 2_000, "second words"),
                ],
            )
            .unwrap();
        store
            .apply(
                &file("/t/two"),
                &[session("c-3", "native-c", 3_000, "third")],
            )
            .unwrap();
        store
    }

    fn forget(store: &mut Store, id: &str) {
        let row = store.session_row("test", id).unwrap().unwrap();
        assert_eq!(store.forget(&[row]).unwrap(), 1);
    }

    #[test]
    fn a_tombstone_remembers_ids_start_project_and_transcript_but_no_text() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store(dir.path());
        assert!(store.tombstones().unwrap().is_empty());
        forget(&mut store, "b-2");
        let list = store.tombstones().unwrap();
        assert_eq!(list.len(), 1);
        let t = &list[0];
        assert_eq!(
            (t.harness.as_str(), t.id.as_str(), t.native_id.as_deref()),
            ("test", "b-2", Some("native-b"))
        );
        assert_eq!(t.started_at, Some(2_000));
        assert_eq!(t.project_dir.as_deref(), Some("/work/billing"));
        assert_eq!(t.source_path.as_deref(), Some("/t/one"));
        assert!(t.forgotten_at > 0);
        let dump: String = store
            .conn()
            .query_row(
                "SELECT group_concat(coalesce(native_id,'') || coalesce(project_dir,'') ||
                    coalesce(source_path,'')) FROM tombstones",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(
            !dump.contains("title") && !dump.contains("second"),
            "{dump}"
        );
    }

    #[test]
    fn tombstones_are_found_by_either_id_or_a_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store(dir.path());
        forget(&mut store, "a-1");
        forget(&mut store, "b-2");
        let ids = |f: FoundTombstones| {
            (
                f.total,
                f.rows.into_iter().map(|t| t.id).collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            ids(store.find_tombstones("a-1", 10).unwrap()),
            (1, vec!["a-1".into()])
        );
        assert_eq!(
            ids(store.find_tombstones("native-b", 10).unwrap()),
            (1, vec!["b-2".into()])
        );
        assert_eq!(
            ids(store.find_tombstones("native", 10).unwrap()),
            (2, vec!["a-1".into(), "b-2".into()])
        );
        assert_eq!(ids(store.find_tombstones("native", 1).unwrap()).0, 2);
        assert_eq!(ids(store.find_tombstones("c-3", 10).unwrap()).0, 0);
    }

    #[test]
    fn unforgetting_lifts_the_tombstone_and_marks_only_its_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store(dir.path());
        forget(&mut store, "a-1");
        assert!(store.unforget("test", "nothing").unwrap().is_none());
        let done = store.unforget("test", "a-1").unwrap().unwrap();
        assert_eq!(done.tombstone.id, "a-1");
        assert_eq!(done.marked, 1);
        assert!(store.tombstones().unwrap().is_empty());
        let one = store.source("test", "/t/one").unwrap().unwrap();
        assert_eq!((one.size, one.hash.as_str()), (-1, ""));
        let two = store.source("test", "/t/two").unwrap().unwrap();
        assert_eq!((two.size, two.hash.as_str()), (10, "h"));
        // Indexing the same transcript again brings the session back.
        let applied = store
            .apply(
                &file("/t/one"),
                &[
                    session("a-1", "native-a", 1_000, "first words"),
                    session("b-2", "native-b", 2_000, "second words"),
                ],
            )
            .unwrap();
        assert_eq!(applied.sessions_added, 1);
        assert!(store.session_row("test", "a-1").unwrap().is_some());
        // A second undo finds nothing.
        assert!(store.unforget("test", "a-1").unwrap().is_none());
    }

    #[test]
    fn an_old_tombstone_without_a_transcript_marks_its_whole_harness() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store(dir.path());
        store
            .conn()
            .execute(
                "INSERT INTO tombstones (harness, session_id, forgotten_at) VALUES ('test', 'old', 5)",
                [],
            )
            .unwrap();
        let t = &store.tombstones().unwrap()[0];
        assert_eq!((t.native_id.as_ref(), t.source_path.as_ref()), (None, None));
        let done = store.unforget("test", "old").unwrap().unwrap();
        assert_eq!(done.marked, 2);
        for path in ["/t/one", "/t/two"] {
            assert_eq!(store.source("test", path).unwrap().unwrap().size, -1);
        }
    }
}

#[cfg(test)]
mod project_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::ingest::FileState;
    use deja_model::Message;

    fn hashed(id: &str, dir: Option<&str>) -> Session {
        Session {
            harness: "test".into(),
            id: id.into(),
            native_id: id.into(),
            started_at_ms: 1_000,
            updated_at_ms: 1_000,
            project: Project {
                dir: dir.map(Into::into),
                name: None,
                id: Some("9f2c4e1a7b3d5f60a1b2c3d4e5f60718".into()),
            },
            title: None,
            parent_id: None,
            precedence: 0,
            messages: vec![Message {
                role: Role::User,
                text: format!("words of {id}"),
                timestamp_ms: 1_000,
                native_id: None,
            }],
            files: vec![],
            commands: vec![],
        }
    }

    #[test]
    fn a_hash_project_takes_its_directory_from_a_session_that_knows_it_and_matches_by_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("index.sqlite")).unwrap();
        let file = |path| FileState {
            harness: "test",
            path,
            size: 1,
            mtime_ns: 1,
            hash: "h",
            reader: "test 1",
            settings: "",
        };
        store
            .apply(&file("/t/a"), &[hashed("knows", Some("/work/app"))])
            .unwrap();
        store
            .apply(&file("/t/b"), &[hashed("blind", None)])
            .unwrap();
        let rows = store.sessions(&SessionFilter::default(), None).unwrap();
        assert_eq!(rows.len(), 2);
        assert!(rows
            .iter()
            .all(|r| r.project.dir.as_deref() == Some("/work/app")));
        let by_prefix = SessionFilter {
            project: Some("9f2c4e".into()),
            ..Default::default()
        };
        assert_eq!(store.sessions(&by_prefix, None).unwrap().len(), 2);
        let too_short = SessionFilter {
            project: Some("9f2c4".into()),
            ..Default::default()
        };
        assert_eq!(store.sessions(&too_short, None).unwrap().len(), 0);
    }
}
