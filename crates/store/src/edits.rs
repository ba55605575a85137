//! The file records of the sessions a filter keeps, in one query: what a
//! summary of a period (`deja recap`) counts its most changed files from.

use rusqlite::params_from_iter;

use crate::query::{static_action, SessionFilter};
use crate::{Result, Store};

/// One file record, with the row of its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// The session's row ([`crate::SessionRow::row`]).
    pub session: i64,
    /// The path as the transcript recorded it.
    pub path: String,
    /// `edit`, `add`, `read-only` or `read`.
    pub action: &'static str,
    /// When, ms.
    pub timestamp_ms: i64,
}

impl Store {
    /// The file records whose action is one of `actions`, of every session
    /// `filter` keeps, by session row and then in the transcript's order.
    pub fn session_files(
        &self,
        filter: &SessionFilter,
        actions: &[&str],
    ) -> Result<Vec<SessionFile>> {
        let (cond, args) = filter.sql();
        let sql = format!(
            "SELECT f.session, f.path, f.action, f.timestamp
             FROM files f JOIN sessions s ON s.id = f.session
             WHERE {cond} ORDER BY f.session, f.position"
        );
        let mut stmt = self.conn().prepare(&sql).map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(params_from_iter(args), |r| {
                let action: String = r.get(2)?;
                Ok(SessionFile {
                    session: r.get(0)?,
                    path: r.get(1)?,
                    action: static_action(&action),
                    timestamp_ms: r.get(3)?,
                })
            })
            .map_err(|e| self.wrap(e))?;
        let all: Vec<SessionFile> = rows
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))?;
        Ok(all
            .into_iter()
            .filter(|f| actions.contains(&f.action))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::test_support::{file, session};
    use deja_model::FileRecord;

    #[test]
    fn the_records_of_the_kept_sessions_only_and_of_the_actions_asked() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("index.sqlite")).unwrap();
        let f = |path: &str, action: &'static str| FileRecord {
            path: path.into(),
            action,
            timestamp_ms: 5,
            text: None,
        };
        let mut early = session("early", &["a"]);
        early.files = vec![f("old.rs", "edit")];
        let mut late = session("late", &["b"]);
        late.started_at_ms = 1_000;
        late.files = vec![f("a.rs", "edit"), f("b.rs", "read"), f("c.rs", "add")];
        store.apply(&file("/t/a", "s"), &[early, late]).unwrap();
        let filter = SessionFilter {
            since: Some(500),
            ..SessionFilter::default()
        };
        let found = store.session_files(&filter, &["edit", "add"]).unwrap();
        let paths: Vec<(&str, &str)> = found.iter().map(|f| (f.path.as_str(), f.action)).collect();
        assert_eq!(paths, [("a.rs", "edit"), ("c.rs", "add")]);
        let row = store.session_row("test", "late").unwrap().unwrap().row;
        assert!(found
            .iter()
            .all(|f| f.session == row && f.timestamp_ms == 5));
    }
}
