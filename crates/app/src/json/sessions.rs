//! `deja sessions --json`.

use serde::Serialize;

use super::Project;
use crate::output::rfc3339;
use deja_store::SessionRow;

/// The sessions that match, newest first.
#[derive(Debug, Clone, Serialize)]
pub struct Sessions<'a> {
    /// The sessions.
    pub sessions: Vec<Session<'a>>,
}

/// One indexed session, without its messages.
#[derive(Debug, Clone, Serialize)]
pub struct Session<'a> {
    /// Whether `started_at` is only its transcript's modification time (no
    /// record of the harness dates it).
    pub date_approximate: bool,
    /// The first line of its first user message.
    pub first_user_line: Option<&'a str>,
    /// Whether its transcript was found in a code folder (inside a project,
    /// where a cloned repository may have brought it) rather than in its
    /// harness's own data folder: agents are not given it unless
    /// `context.code_folder_sessions` says so.
    pub found_in_code_folder: bool,
    /// The harness that wrote it.
    pub harness: &'a str,
    /// deja's id of the session.
    pub id: &'a str,
    /// How many messages it has.
    pub message_count: i64,
    /// The harness's id of the session.
    pub native_id: &'a str,
    /// Who published it in the team store (`user@machine`); null for this machine's own.
    pub origin: Option<&'a str>,
    /// The parent session's deja id, for subagents.
    pub parent_id: Option<&'a str>,
    /// Where it ran.
    pub project: Project<'a>,
    /// The transcript it was last read from.
    pub source: Option<&'a str>,
    /// Whether that transcript is still there.
    pub source_present: bool,
    /// When it started.
    pub started_at: String,
    /// Its title, when the harness keeps one.
    pub title: Option<&'a str>,
    /// Its last activity.
    pub updated_at: String,
}

impl<'a> From<&'a SessionRow> for Session<'a> {
    fn from(r: &'a SessionRow) -> Self {
        Session {
            date_approximate: r.date_approximate,
            first_user_line: r.first_user.as_deref(),
            found_in_code_folder: r.in_code_folder,
            harness: &r.harness,
            id: &r.id,
            message_count: r.message_count,
            native_id: &r.native_id,
            origin: r.origin.as_deref(),
            parent_id: r.parent_id.as_deref(),
            project: Project::from(&r.project),
            source: r.source_path.as_deref(),
            source_present: r.has_source,
            started_at: rfc3339(r.started_at),
            title: r.title.as_deref(),
            updated_at: rfc3339(r.updated_at),
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
        let out = Sessions {
            sessions: vec![Session::from(&row)],
        };
        assert_eq!(keys(&out), ["sessions"]);
        assert_eq!(
            keys(&out.sessions[0]),
            [
                "date_approximate",
                "first_user_line",
                "found_in_code_folder",
                "harness",
                "id",
                "message_count",
                "native_id",
                "origin",
                "parent_id",
                "project",
                "source",
                "source_present",
                "started_at",
                "title",
                "updated_at"
            ]
        );
    }
}
