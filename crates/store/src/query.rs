//! Reading sessions: listing them with filters, finding one by id or
//! unique prefix (of deja's id or the harness's), loading its messages and
//! records in one snapshot, and what the filters can name (harnesses,
//! projects, origins). Forgetting lives in [`crate::forget`], the store-wide
//! counts in [`crate::counts`].

use rusqlite::{params_from_iter, OptionalExtension, Row};

use super::{Result, Store};
pub use crate::counts::{Counts, SourceRow};
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
    /// Whether its transcript was found in a code folder (inside a project,
    /// where a cloned repository may have brought it) rather than in its
    /// harness's own data folder.
    pub in_code_folder: bool,
    /// Whether its start is only its transcript's modification time (no
    /// record of the harness dates it).
    pub date_approximate: bool,
}

/// The columns of a [`SessionRow`], over `sessions s`. A session whose
/// project directory is unknown (a Gemini CLI hash folder) takes it from
/// another session of the same harness and project id that knows it.
pub(crate) const SESSION_COLUMNS: &str =
    "s.id, s.harness, s.session_id, s.native_id, s.started_at, s.updated_at,
    coalesce(s.project_dir, (SELECT o.project_dir FROM sessions o INDEXED BY sessions_project_dir
        WHERE o.project_id = s.project_id AND o.harness = s.harness AND o.project_dir IS NOT NULL
        LIMIT 1)),
    s.project_name, s.project_id, s.title, s.parent_id, s.message_count, s.first_user,
    s.source_path, s.source_id IS NOT NULL, s.origin, s.in_code_folder, s.date_approximate";

pub(crate) fn session_row(r: &Row<'_>) -> rusqlite::Result<SessionRow> {
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
        in_code_folder: r.get(16)?,
        date_approximate: r.get(17)?,
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
    /// Never these sessions (by session id or the harness's own id): the
    /// live session of the agent that asks, for one.
    pub exclude: Vec<String>,
    /// Never sessions whose transcript was found in a code folder: what
    /// agents are given unless the user says otherwise.
    pub skip_code_folders: bool,
}

/// Whose sessions a filter keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// This machine's own sessions (none pulled from the team store).
    Mine,
    /// Sessions pulled from this origin: `user@machine` exactly, or every
    /// machine of `user` when no `@` is given.
    Named(String),
    /// Sessions pulled from the team store, from anyone.
    Pulled,
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
            exclude,
            skip_code_folders,
        } = self;
        harness.is_none()
            && project.is_none()
            && since.is_none()
            && until.is_none()
            && origin.is_none()
            && exclude.is_empty()
            && !skip_code_folders
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
        if self.skip_code_folders {
            conds.push("s.in_code_folder = 0".to_string());
        }
        for id in &self.exclude {
            args.push(Value::Text(id.clone()));
            let n = args.len();
            conds.push(format!("s.session_id <> ?{n} AND s.native_id <> ?{n}"));
        }
        match &self.origin {
            None => {}
            Some(Origin::Mine) => conds.push("s.origin IS NULL".to_string()),
            Some(Origin::Pulled) => conds.push("s.origin IS NOT NULL".to_string()),
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

/// When a session started, by which harness, with how many messages: what
/// a count over time needs, without the rest of the row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStart {
    /// Started at (ms).
    pub started_at: i64,
    /// The harness.
    pub harness: String,
    /// Its messages.
    pub messages: i64,
}

impl Store {
    /// Every session's start, harness and size, newest first.
    pub fn session_starts(&self) -> Result<Vec<SessionStart>> {
        let mut stmt = self
            .conn()
            .prepare_cached(
                "SELECT started_at, harness, message_count FROM sessions
                 ORDER BY started_at DESC, id DESC",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(SessionStart {
                    started_at: r.get(0)?,
                    harness: r.get(1)?,
                    messages: r.get(2)?,
                })
            })
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }

    /// Sessions matching `filter`, newest first; a session dated only by
    /// its transcript's modification time comes after every session with a
    /// recorded date.
    pub fn sessions(
        &self,
        filter: &SessionFilter,
        limit: Option<usize>,
    ) -> Result<Vec<SessionRow>> {
        let (cond, args) = filter.sql();
        let sql = format!(
            "SELECT {SESSION_COLUMNS} FROM sessions s WHERE {cond}
             ORDER BY s.date_approximate, s.started_at DESC, s.id DESC LIMIT {}",
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

    /// The project directories this machine's sessions name, most recently
    /// active first (at most `limit`): where to look for transcripts that
    /// live in the project itself, such as aider's.
    pub fn project_dirs(&self, limit: usize) -> Result<Vec<String>> {
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT project_dir FROM sessions
                 WHERE project_dir IS NOT NULL AND project_dir <> '' AND origin IS NULL
                 GROUP BY project_dir ORDER BY max(updated_at) DESC LIMIT ?1",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([limit as i64], |r| r.get::<_, String>(0))
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
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

    /// Whether any session was read from a transcript found in a code
    /// folder (a filter that leaves such sessions out then removes nothing).
    pub fn has_code_folder_sessions(&self) -> Result<bool> {
        self.conn()
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sessions WHERE in_code_folder = 1)",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.wrap(e))
    }

    /// Which of the session rows `rows` were read from a transcript found
    /// in a code folder, for labelling them.
    pub fn in_code_folders(&self, rows: &[i64]) -> Result<std::collections::HashSet<i64>> {
        self.rows_where("in_code_folder", rows)
    }

    /// Which of the session rows `rows` are dated only by their
    /// transcript's modification time, for labelling their dates.
    pub fn dated_by_file_time(&self, rows: &[i64]) -> Result<std::collections::HashSet<i64>> {
        self.rows_where("date_approximate", rows)
    }

    /// The parents (deja ids) of those of the session rows `rows` that are
    /// sub-agent sessions, for labelling them as sub-agent work.
    pub fn parents_of(&self, rows: &[i64]) -> Result<std::collections::HashMap<i64, String>> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT parent_id FROM sessions WHERE id = ?1")
            .map_err(|e| self.wrap(e))?;
        let mut out = std::collections::HashMap::new();
        for &row in rows {
            let found: Option<Option<String>> = stmt
                .query_row([row], |r| r.get(0))
                .optional()
                .map_err(|e| self.wrap(e))?;
            if let Some(Some(parent)) = found {
                out.insert(row, parent);
            }
        }
        Ok(out)
    }

    /// Which of the session rows `rows` have the flag `column` set.
    fn rows_where(&self, column: &str, rows: &[i64]) -> Result<std::collections::HashSet<i64>> {
        let mut stmt = self
            .conn()
            .prepare_cached(&format!("SELECT {column} FROM sessions WHERE id = ?1"))
            .map_err(|e| self.wrap(e))?;
        let mut out = std::collections::HashSet::new();
        for &row in rows {
            let found: Option<bool> = stmt
                .query_row([row], |r| r.get(0))
                .optional()
                .map_err(|e| self.wrap(e))?;
            if found == Some(true) {
                out.insert(row);
            }
        }
        Ok(out)
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
                "SELECT path, action, timestamp, text FROM files WHERE session = ?1 ORDER BY position",
            )
            .map_err(|e| self.wrap(e))?;
        let files = stmt
            .query_map([row.row], |r| {
                let action: String = r.get(1)?;
                Ok(FileRecord {
                    path: r.get(0)?,
                    action: static_action(&action),
                    timestamp_ms: r.get(2)?,
                    text: r.get(3)?,
                })
            })
            .map_err(|e| self.wrap(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.wrap(e))?;
        let mut stmt = conn
            .prepare(
                "SELECT command, origin, timestamp, outcome, exit_code FROM commands
                 WHERE session = ?1 ORDER BY position",
            )
            .map_err(|e| self.wrap(e))?;
        let commands = stmt
            .query_map([row.row], |r| {
                let origin: String = r.get(1)?;
                let status: String = r.get(3)?;
                Ok(CommandRecord {
                    command: r.get(0)?,
                    origin: if origin == "user" { "user" } else { "agent" },
                    timestamp_ms: r.get(2)?,
                    outcome: deja_model::Outcome {
                        status: deja_model::OutcomeStatus::from_name(&status),
                        exit_code: r.get(4)?,
                    },
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
            date_approximate: row.date_approximate,
            project: row.project.clone(),
            title: row.title.clone(),
            parent_id: row.parent_id.clone(),
            precedence,
            messages,
            files,
            commands,
        })
    }

    /// The sessions whose parent is session `id` (a Claude Code session's
    /// subagents), oldest first.
    pub fn children(&self, id: &str) -> Result<Vec<SessionRow>> {
        let mut stmt = self
            .conn()
            .prepare(&format!(
                "SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.parent_id = ?1
                 ORDER BY s.started_at, s.session_id"
            ))
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([id], session_row)
            .map_err(|e| self.wrap(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.wrap(e))?;
        Ok(rows)
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
            date_approximate: false,
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
