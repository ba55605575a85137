//! `deja forget --json`: the sessions forgotten (or, with `--dry-run`, that
//! would be), the tombstones (`--list`) and the ones lifted (`--undo`).

use serde::Serialize;

use super::Project;
use crate::output::rfc3339;
use deja_store::forget::Tombstone as Row;
use deja_store::query::SessionRow;

/// The sessions forgotten, or that a dry run would forget.
#[derive(Debug, Clone, Serialize)]
pub struct Forgotten<'a> {
    /// Whether nothing was changed.
    pub dry_run: bool,
    /// The sessions.
    pub forgotten: Vec<Session<'a>>,
}

/// A session forgotten.
#[derive(Debug, Clone, Serialize)]
pub struct Session<'a> {
    /// The first line of its first user message.
    pub first_user_line: Option<&'a str>,
    /// The harness that wrote it.
    pub harness: &'a str,
    /// deja's id of the session.
    pub id: &'a str,
    /// How many messages it had.
    pub message_count: i64,
    /// The harness's id of the session.
    pub native_id: &'a str,
    /// Where it ran.
    pub project: Project<'a>,
    /// The transcript it was last read from.
    pub source: Option<&'a str>,
    /// When it started.
    pub started_at: String,
    /// Its title, when the harness kept one.
    pub title: Option<&'a str>,
}

impl<'a> From<&'a SessionRow> for Session<'a> {
    fn from(r: &'a SessionRow) -> Self {
        Session {
            first_user_line: r.first_user.as_deref(),
            harness: &r.harness,
            id: &r.id,
            message_count: r.message_count,
            native_id: &r.native_id,
            project: Project::from(&r.project),
            source: r.source_path.as_deref(),
            started_at: rfc3339(r.started_at),
            title: r.title.as_deref(),
        }
    }
}

/// The tombstones, most recently forgotten first (`--list`).
#[derive(Debug, Clone, Serialize)]
pub struct Tombstones<'a> {
    /// The tombstones.
    pub forgotten: Vec<Tombstone<'a>>,
}

/// The tombstones lifted (`--undo`).
#[derive(Debug, Clone, Serialize)]
pub struct Unforgotten<'a> {
    /// The tombstones, as they were before they were lifted.
    pub unforgotten: Vec<Tombstone<'a>>,
}

/// What deja keeps of a forgotten session: ids, start, project folder and
/// transcript path, never text.
#[derive(Debug, Clone, Serialize)]
pub struct Tombstone<'a> {
    /// When it was forgotten.
    pub forgotten_at: String,
    /// The harness that wrote it.
    pub harness: &'a str,
    /// deja's id of the session.
    pub id: &'a str,
    /// The harness's id of the session.
    pub native_id: Option<&'a str>,
    /// The project folder.
    pub project_dir: Option<&'a str>,
    /// The transcript it was last read from.
    pub source: Option<&'a str>,
    /// Whether that transcript is still there (null when none is recorded).
    pub source_present: Option<bool>,
    /// When it started.
    pub started_at: Option<String>,
}

impl<'a> Tombstone<'a> {
    /// `t`, whose transcript is `source_present`.
    pub fn new(t: &'a Row, source_present: Option<bool>) -> Self {
        Tombstone {
            forgotten_at: rfc3339(t.forgotten_at),
            harness: &t.harness,
            id: &t.id,
            native_id: t.native_id.as_deref(),
            project_dir: t.project_dir.as_deref(),
            source: t.source_path.as_deref(),
            source_present,
            started_at: t.started_at.map(rfc3339),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::{keys, session_row};

    #[test]
    fn field_names() {
        let row = session_row();
        let out = Forgotten {
            dry_run: true,
            forgotten: vec![Session::from(&row)],
        };
        assert_eq!(keys(&out), ["dry_run", "forgotten"]);
        assert_eq!(
            keys(&out.forgotten[0]),
            [
                "first_user_line",
                "harness",
                "id",
                "message_count",
                "native_id",
                "project",
                "source",
                "started_at",
                "title"
            ]
        );
        let t = Row {
            harness: "aider".into(),
            id: "s1".into(),
            native_id: None,
            started_at: Some(0),
            project_dir: None,
            source_path: None,
            forgotten_at: 0,
        };
        let list = Tombstones {
            forgotten: vec![Tombstone::new(&t, None)],
        };
        assert_eq!(keys(&list), ["forgotten"]);
        assert_eq!(
            keys(&list.forgotten[0]),
            [
                "forgotten_at",
                "harness",
                "id",
                "native_id",
                "project_dir",
                "source",
                "source_present",
                "started_at"
            ]
        );
        let undone = Unforgotten {
            unforgotten: list.forgotten,
        };
        assert_eq!(keys(&undone), ["unforgotten"]);
    }
}
