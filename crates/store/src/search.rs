//! The lookups ranking is built on: which messages a search may return
//! ([`Scope`]), full-text counts and BM25 scores (FTS5), the embedding units
//! of messages, the sessions of messages, and the rows of hits. Ranking itself
//! (weights, fusion, IDF arithmetic) belongs to the recall engine; this module
//! only turns its questions into SQL.

use std::collections::{HashMap, HashSet};

use deja_model::{message_id, Project, Role};
use rusqlite::types::Value;
use rusqlite::{params_from_iter, Row};

use crate::query::SessionFilter;
use crate::{Result, Store};

/// Most values bound in one `IN (...)` list.
const IN_BATCH: usize = 500;

/// Which messages a search may return.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Session filters.
    pub filter: SessionFilter,
    /// Only messages of this role.
    pub role: Option<Role>,
}

impl Scope {
    /// Whether nothing is filtered.
    pub fn is_unrestricted(&self) -> bool {
        self.role.is_none() && self.filter.is_empty()
    }

    /// SQL condition over `m` (messages) and `s` (sessions), with parameters ?1..
    fn sql(&self) -> (String, Vec<Value>) {
        let (mut cond, mut args) = self.filter.sql();
        if let Some(role) = self.role {
            args.push(Value::Text(role.as_str().to_string()));
            cond.push_str(&format!(" AND m.role = ?{}", args.len()));
        }
        (cond, args)
    }

    /// The condition for documents of `level` (roles apply to messages only).
    fn sql_for(&self, level: Level) -> (String, Vec<Value>) {
        match level {
            Level::Message => self.sql(),
            Level::Session => self.filter.sql(),
        }
    }
}

/// Which full-text index to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// One document per message.
    Message,
    /// One document per session (all its messages).
    Session,
}

impl Level {
    fn fts(self) -> &'static str {
        match self {
            Level::Message => "messages_fts",
            Level::Session => "sessions_fts",
        }
    }

    fn table(self) -> &'static str {
        match self {
            Level::Message => "messages",
            Level::Session => "sessions",
        }
    }

    /// FROM/JOIN clauses reaching the documents of this level, their sessions
    /// `s` and (for messages) `m`, from the full-text table.
    fn joins(self) -> &'static str {
        match self {
            Level::Message => {
                "JOIN messages m ON m.id = messages_fts.rowid JOIN sessions s ON s.id = m.session"
            }
            Level::Session => "JOIN sessions s ON s.id = sessions_fts.rowid",
        }
    }

    /// The documents of this level with their sessions, for scope counts.
    fn scope_from(self) -> &'static str {
        match self {
            Level::Message => "messages m JOIN sessions s ON s.id = m.session",
            Level::Session => "sessions s",
        }
    }
}

/// `text` as one FTS5 phrase: quoted, with any quote inside removed, so no
/// input is FTS5 syntax.
pub fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('"', ""))
}

/// An FTS5 MATCH expression for `terms`: each term quoted, any of them may match.
pub fn match_expression(terms: &[String]) -> Option<String> {
    if terms.is_empty() {
        return None;
    }
    Some(
        terms
            .iter()
            .map(|t| quote(t))
            .collect::<Vec<_>>()
            .join(" OR "),
    )
}

/// Renumbers `?N` placeholders in `sql` to `?N+by`.
fn shift_placeholders(sql: &str, by: usize) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '?' {
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            if let Ok(n) = digits.parse::<usize>() {
                out.push_str(&(n + by).to_string());
            } else {
                out.push_str(&digits);
            }
        }
    }
    out
}

/// A stored message as a hit shows it.
#[derive(Debug, Clone)]
pub struct HitRow {
    /// Message row id.
    pub message_row: i64,
    /// Session row id.
    pub session_row: i64,
    /// The session's deja id.
    pub session_id: String,
    /// Harness.
    pub harness: String,
    /// Project.
    pub project: Project,
    /// Session start, ms.
    pub started_at: i64,
    /// The harness's message id, or deja's.
    pub message_id: String,
    /// Position in the session.
    pub message_index: i64,
    /// Role.
    pub role: String,
    /// Message time, ms.
    pub timestamp: i64,
    /// Full text.
    pub text: String,
    /// Transcript path.
    pub source_path: Option<String>,
    /// The harness's id of the session.
    pub native_session_id: String,
    /// Who published the session, when pulled from the team store.
    pub origin: Option<String>,
}

fn hit_row(r: &Row<'_>) -> rusqlite::Result<HitRow> {
    let session_id: String = r.get(1)?;
    let native: Option<String> = r.get(7)?;
    let position: i64 = r.get(8)?;
    Ok(HitRow {
        message_row: r.get(0)?,
        session_row: r.get(14)?,
        message_id: native.unwrap_or_else(|| message_id(&session_id, position as usize)),
        session_id,
        harness: r.get(2)?,
        project: Project {
            dir: r.get(3)?,
            name: r.get(4)?,
            id: r.get(5)?,
        },
        started_at: r.get(6)?,
        message_index: position,
        role: r.get(9)?,
        timestamp: r.get(10)?,
        text: r.get(11)?,
        source_path: r.get(12)?,
        native_session_id: r.get(13)?,
        origin: r.get(15)?,
    })
}

impl Store {
    /// Runs `sql` (whose `{in}` is replaced by a list of placeholders) once
    /// per batch of `ids`, collecting every row: the one way this crate binds
    /// long `IN` lists.
    fn rows_in<T>(
        &self,
        sql: &str,
        ids: &[i64],
        row: impl Fn(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        for batch in ids.chunks(IN_BATCH) {
            let marks = vec!["?"; batch.len()].join(",");
            let mut stmt = self
                .conn()
                .prepare(&sql.replace("{in}", &marks))
                .map_err(|e| self.wrap(e))?;
            let rows = stmt
                .query_map(params_from_iter(batch.iter()), &row)
                .map_err(|e| self.wrap(e))?;
            for r in rows {
                out.push(r.map_err(|e| self.wrap(e))?);
            }
        }
        Ok(out)
    }

    /// How many documents of `level` hold `phrase` (a [`quote`]d term).
    pub fn fts_doc_count(&self, level: Level, phrase: &str) -> Result<f64> {
        let fts = level.fts();
        self.conn()
            .query_row(
                &format!("SELECT count(*) FROM {fts} WHERE {fts} MATCH ?1"),
                [phrase],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as f64)
            .map_err(|e| self.wrap(e))
    }

    /// The largest row id of `level`'s documents: at least their number.
    pub fn max_row_id(&self, level: Level) -> Result<f64> {
        self.conn()
            .query_row(
                &format!("SELECT coalesce(max(id), 0) FROM {}", level.table()),
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as f64)
            .map_err(|e| self.wrap(e))
    }

    /// How many documents of `level` are in `scope`.
    pub fn count_in_scope(&self, level: Level, scope: &Scope) -> Result<f64> {
        let (cond, args) = scope.sql_for(level);
        self.conn()
            .query_row(
                &format!("SELECT count(*) FROM {} WHERE {cond}", level.scope_from()),
                params_from_iter(args),
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as f64)
            .map_err(|e| self.wrap(e))
    }

    /// The best `limit` documents of `level` in `scope` holding `phrase`, by
    /// FTS5's BM25 of that phrase alone (higher is better).
    pub fn fts_term_top(
        &self,
        level: Level,
        phrase: &str,
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        let (fts, joins) = (level.fts(), level.joins());
        let (cond, args) = scope.sql_for(level);
        let cond = shift_placeholders(&cond, 1);
        let mut all = vec![Value::Text(phrase.to_string())];
        all.extend(args);
        let mut stmt = self
            .conn()
            .prepare_cached(&format!(
                "SELECT {fts}.rowid, -bm25({fts}) FROM {fts} {joins}
                 WHERE {fts} MATCH ?1 AND {cond}
                 ORDER BY bm25({fts}) LIMIT {limit}"
            ))
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(params_from_iter(all.iter()), |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }

    /// How many documents of `level` in `scope` hold `phrase`.
    pub fn fts_term_count(&self, level: Level, phrase: &str, scope: &Scope) -> Result<f64> {
        let (fts, joins) = (level.fts(), level.joins());
        let (cond, args) = scope.sql_for(level);
        let cond = shift_placeholders(&cond, 1);
        let mut all = vec![Value::Text(phrase.to_string())];
        all.extend(args);
        self.conn()
            .query_row(
                &format!("SELECT count(*) FROM {fts} {joins} WHERE {fts} MATCH ?1 AND {cond}"),
                params_from_iter(all.iter()),
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as f64)
            .map_err(|e| self.wrap(e))
    }

    /// The `k` best documents of `level` for `expression` by FTS5's BM25 of
    /// all its terms (higher is better), among those matching `among` when
    /// given.
    pub fn bm25_top(
        &self,
        level: Level,
        expression: &str,
        among: Option<&str>,
        k: usize,
    ) -> Result<Vec<(i64, f64)>> {
        let fts = level.fts();
        let mut params = vec![
            Value::Text(expression.to_string()),
            Value::Integer(k as i64),
        ];
        let filter = match among {
            Some(among) => {
                params.push(Value::Text(among.to_string()));
                // The unary `+` keeps SQLite from driving the outer search by row
                // id (one full-text lookup per candidate): the subquery becomes a
                // set that each match is checked against.
                format!("AND +rowid IN (SELECT rowid FROM {fts} WHERE {fts} MATCH ?3)")
            }
            None => String::new(),
        };
        let mut stmt = self
            .conn()
            .prepare_cached(&format!(
                "SELECT rowid, -bm25({fts}) FROM {fts} WHERE {fts} MATCH ?1 {filter}
                 ORDER BY bm25({fts}) LIMIT ?2"
            ))
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(params_from_iter(params.iter()), |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
            })
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }

    /// Row ids of the sessions matching `filter` whose whole text holds `phrase`.
    pub fn sessions_with_phrase(&self, phrase: &str, filter: &SessionFilter) -> Result<Vec<i64>> {
        let (cond, args) = filter.sql();
        let cond = shift_placeholders(&cond, 1);
        let mut all = vec![Value::Text(phrase.to_string())];
        all.extend(args);
        let mut stmt = self
            .conn()
            .prepare_cached(&format!(
                "SELECT s.id FROM sessions_fts JOIN sessions s ON s.id = sessions_fts.rowid
                 WHERE sessions_fts MATCH ?1 AND {cond}"
            ))
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(params_from_iter(all.iter()), |r| r.get::<_, i64>(0))
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }

    /// The embedding units (chunk ids) of every message in `scope`.
    pub fn units_in_scope(&self, scope: &Scope) -> Result<HashSet<u64>> {
        let (cond, args) = scope.sql();
        let sql = format!(
            "SELECT c.id FROM chunks c
             JOIN messages m ON m.id = c.message
             JOIN sessions s ON s.id = m.session
             WHERE {cond}"
        );
        let mut stmt = self.conn().prepare(&sql).map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(params_from_iter(args), |r| r.get::<_, i64>(0))
            .map_err(|e| self.wrap(e))?;
        let mut out = HashSet::new();
        for r in rows {
            out.insert(r.map_err(|e| self.wrap(e))? as u64);
        }
        Ok(out)
    }

    /// The message of each embedding unit in `keys` that still exists, with
    /// how many units (windows) that message has in the store.
    pub fn messages_of_units(&self, keys: &[u64]) -> Result<HashMap<u64, (i64, usize)>> {
        let ids: Vec<i64> = keys.iter().map(|k| *k as i64).collect();
        let rows = self.rows_in(
            "SELECT c.id, c.message, (SELECT count(*) FROM chunks w WHERE w.message = c.message)
             FROM chunks c WHERE c.id IN ({in})",
            &ids,
            |r| {
                Ok((
                    r.get::<_, i64>(0)? as u64,
                    (r.get::<_, i64>(1)?, r.get::<_, i64>(2)? as usize),
                ))
            },
        )?;
        Ok(rows.into_iter().collect())
    }

    /// For `messages`: message → session row, and session row → start (ms).
    pub fn sessions_of_messages(
        &self,
        messages: &[i64],
    ) -> Result<(HashMap<i64, i64>, HashMap<i64, i64>)> {
        let mut ids = messages.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let rows = self.rows_in(
            "SELECT m.id, m.session, s.started_at FROM messages m JOIN sessions s ON s.id = m.session
             WHERE m.id IN ({in})",
            &ids,
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            },
        )?;
        let mut session_of = HashMap::new();
        let mut started = HashMap::new();
        for (m, s, t) in rows {
            session_of.insert(m, s);
            started.insert(s, t);
        }
        Ok((session_of, started))
    }

    /// The first `chars` characters of each of the messages `ids`, by
    /// message row id: enough to tell what a message is written in without
    /// reading a long tool output whole.
    pub fn message_openings(&self, ids: &[i64], chars: usize) -> Result<HashMap<i64, String>> {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let sql = format!("SELECT id, substr(text, 1, {chars}) FROM messages WHERE id IN ({{in}})");
        let rows = self.rows_in(&sql, &ids, |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })?;
        Ok(rows.into_iter().collect())
    }

    /// The hit rows of the messages `ids`, by message row id.
    pub fn hit_rows(&self, ids: &[i64]) -> Result<HashMap<i64, HitRow>> {
        let rows = self.rows_in(
            "SELECT m.id, s.session_id, s.harness, s.project_dir, s.project_name, s.project_id,
                    s.started_at, m.native_id, m.position, m.role, m.timestamp, m.text, s.source_path,
                    s.native_id, m.session, s.origin
             FROM messages m JOIN sessions s ON s.id = m.session
             WHERE m.id IN ({in})",
            ids,
            hit_row,
        )?;
        Ok(rows.into_iter().map(|h| (h.message_row, h)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_shift() {
        assert_eq!(
            shift_placeholders("a = ?1 AND b = ?12", 1),
            "a = ?2 AND b = ?13"
        );
    }

    #[test]
    fn expressions_are_quoted() {
        let terms: Vec<String> = ["near(ab", "c\"d"].iter().map(|s| s.to_string()).collect();
        assert_eq!(
            match_expression(&terms).as_deref(),
            Some("\"near(ab\" OR \"cd\"")
        );
        assert_eq!(match_expression(&[]), None);
    }
}
