//! The commands that failed, of the sessions a filter keeps, in one query:
//! what a summary of a period (`deja recap`) lists per project and day.

use rusqlite::params_from_iter;

use crate::query::SessionFilter;
use crate::{Result, Store};

/// One failed command, with the row of its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedCommand {
    /// The session's row ([`crate::SessionRow::row`]).
    pub session: i64,
    /// The command line.
    pub command: String,
    /// `user` or `agent`.
    pub origin: String,
    /// When it ran, ms.
    pub timestamp_ms: i64,
    /// Its exit code, when the transcript gave one.
    pub exit_code: Option<i64>,
}

impl Store {
    /// The commands whose outcome is `failed`, of every session `filter`
    /// keeps, by session row and then in the transcript's order.
    pub fn failed_commands(&self, filter: &SessionFilter) -> Result<Vec<FailedCommand>> {
        let (cond, args) = filter.sql();
        let sql = format!(
            "SELECT c.session, c.command, c.origin, c.timestamp, c.exit_code
             FROM commands c JOIN sessions s ON s.id = c.session
             WHERE c.outcome = 'failed' AND ({cond}) ORDER BY c.session, c.position"
        );
        let mut stmt = self.conn().prepare(&sql).map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(params_from_iter(args), |r| {
                Ok(FailedCommand {
                    session: r.get(0)?,
                    command: r.get(1)?,
                    origin: r.get(2)?,
                    timestamp_ms: r.get(3)?,
                    exit_code: r.get(4)?,
                })
            })
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::test_support::{file, session};
    use deja_model::{CommandRecord, Outcome, OutcomeStatus};

    fn command(line: &str, status: OutcomeStatus, exit_code: Option<i64>) -> CommandRecord {
        CommandRecord {
            command: line.into(),
            origin: "agent",
            timestamp_ms: 7,
            outcome: Outcome { status, exit_code },
        }
    }

    #[test]
    fn the_failed_commands_of_the_kept_sessions_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("index.sqlite")).unwrap();
        let mut early = session("early", &["a"]);
        early.commands = vec![command("make", OutcomeStatus::Failed, Some(2))];
        let mut late = session("late", &["b"]);
        late.started_at_ms = 1_000;
        late.commands = vec![
            command("ls", OutcomeStatus::Succeeded, Some(0)),
            command("cargo test", OutcomeStatus::Failed, Some(101)),
            command("git push", OutcomeStatus::Unknown, None),
            command("rg x", OutcomeStatus::Failed, None),
        ];
        store.apply(&file("/t/a", "s"), &[early, late]).unwrap();
        let filter = SessionFilter {
            since: Some(500),
            ..SessionFilter::default()
        };
        let found = store.failed_commands(&filter).unwrap();
        let lines: Vec<(&str, Option<i64>)> = found
            .iter()
            .map(|c| (c.command.as_str(), c.exit_code))
            .collect();
        assert_eq!(lines, [("cargo test", Some(101)), ("rg x", None)]);
        let row = store.session_row("test", "late").unwrap().unwrap();
        assert!(found
            .iter()
            .all(|c| c.session == row.row && c.timestamp_ms == 7));
        // What is stored is read back as it was.
        let back = store.load_session(&row).unwrap();
        assert_eq!(back.commands[1].outcome.exit_code, Some(101));
        assert_eq!(back.commands[2].outcome.status, OutcomeStatus::Unknown);
    }
}
