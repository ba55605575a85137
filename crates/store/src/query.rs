//! Reading the store: listing sessions with filters, finding one by id or
//! unique prefix (of deja's id or the harness's), loading its messages and
//! records, forgetting sessions, what the filters can name (harnesses and
//! projects), and the counts `deja doctor` shows.

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
}

const SESSION_COLUMNS: &str = "id, harness, session_id, native_id, started_at, updated_at,
    project_dir, project_name, project_id, title, parent_id, message_count, first_user,
    source_path, source_id IS NOT NULL";

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
}

impl SessionFilter {
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
            conds.push(format!(
                "(s.project_dir = ?{n} OR s.project_name = ?{n} OR s.project_id = ?{n}
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
                "SELECT {SESSION_COLUMNS} FROM sessions WHERE {cond}
                 ORDER BY started_at, session_id LIMIT {}",
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

    /// The full session of `row`.
    pub fn load_session(&self, row: &SessionRow) -> Result<Session> {
        let conn = self.conn();
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
    /// unit uses) and records tombstones so that indexing never brings them
    /// back; then scrubs the files of the store so that no copy of their text
    /// is left in free space, old full-text segments or the write-ahead log
    /// ([`Store::scrub`]). Returns how many were removed.
    pub fn forget(&mut self, rows: &[SessionRow]) -> Result<usize> {
        let path = self.path.clone();
        let wrap = |source| super::sqlite_error(&path, source);
        let tx = self.conn.transaction().map_err(wrap)?;
        let now = chrono::Utc::now().timestamp_millis();
        let mut n = 0;
        for r in rows {
            tx.execute(
                "INSERT OR REPLACE INTO tombstones (harness, session_id, forgotten_at) VALUES (?1, ?2, ?3)",
                params![r.harness, r.id, now],
            )
            .map_err(wrap)?;
            n += tx
                .execute("DELETE FROM sessions WHERE id = ?1", [r.row])
                .map_err(wrap)?;
        }
        tx.commit().map_err(wrap)?;
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
                    "SELECT {SESSION_COLUMNS} FROM sessions WHERE harness = ?1 AND session_id = ?2"
                ),
                [harness, id],
                session_row,
            )
            .optional()
            .map_err(|e| self.wrap(e))
    }
}

fn static_action(action: &str) -> &'static str {
    match action {
        "edit" => "edit",
        "add" => "add",
        "read-only" => "read-only",
        _ => "read",
    }
}
