//! The structured content of the MCP server's tool answers: `recall`,
//! `session` and `sessions`. The server adds `indexing` (the first index's
//! progress) to any of them while that index runs.

use std::borrow::Cow;

use serde::Serialize;

use super::Project;

/// A `recall` answer.
#[derive(Debug, Clone, Serialize)]
pub struct Recall<'a> {
    /// The hits shown, best first.
    pub hits: Vec<Hit<'a>>,
    /// Hits left out to keep the answer within its byte bound.
    pub left_out: usize,
    /// The half of hybrid ranking that could not run (`semantic`), if any.
    pub missing_half: Option<&'a str>,
    /// The ranking that answered: `hybrid`, `semantic` or `lexical`.
    pub mode: &'a str,
    /// The query.
    pub query: &'a str,
    /// The first warning, if any.
    pub warning: Option<&'a str>,
    /// Every warning.
    pub warnings: &'a [String],
    /// How many ranked messages were withheld because none came near
    /// enough to answer the query; `hits` is then empty.
    pub withheld: usize,
}

/// One matching message, as a snippet.
#[derive(Debug, Clone, Serialize)]
pub struct Hit<'a> {
    /// Whether the session's start is only its transcript's modification
    /// time (the harness records none): `started_at` is approximate.
    pub date_approximate: bool,
    /// deja ids of other sessions holding the same text, folded into this hit.
    pub duplicates: &'a [String],
    /// The harness that wrote the session.
    pub harness: &'a str,
    /// The message's id: the harness's, else deja's `<session>#<index>`.
    pub message_id: &'a str,
    /// The message's position in its session, from 0.
    pub message_index: i64,
    /// Other matching messages of the session not listed.
    pub more_in_session: usize,
    /// The harness's id of the session.
    pub native_session_id: &'a str,
    /// Who published the session in the team store (`user@machine`); null for this machine's own.
    pub origin: Option<&'a str>,
    /// The deja id of the session that ran this one as a sub-agent; null
    /// for a session the person started.
    pub parent_id: Option<&'a str>,
    /// Where the session ran.
    pub project: Project<'a>,
    /// 1-based rank.
    pub rank: usize,
    /// `user` or `assistant`.
    pub role: &'a str,
    /// The ranking score; higher is better.
    pub score: f64,
    /// deja's id of the session.
    pub session_id: &'a str,
    /// The transcript the session was read from.
    pub source_path: Option<&'a str>,
    /// When the session started.
    pub started_at: String,
    /// The snippet around the first match.
    pub text: String,
    /// When the message was written.
    pub timestamp: String,
    /// Whether the evidence for this hit is weak: the nearest thing to an
    /// answer, which may not be one.
    pub weak: bool,
}

/// A `session` answer: a page of one session's messages.
#[derive(Debug, Clone, Serialize)]
pub struct Session<'a> {
    /// The harness that wrote it.
    pub harness: &'a str,
    /// How many messages the session has.
    pub message_count: usize,
    /// The messages of this page.
    pub messages: Vec<Message<'a>>,
    /// The harness's id of the session.
    pub native_id: &'a str,
    /// The `cursor` that reads on, when messages follow.
    pub next_cursor: Option<String>,
    /// Who published the session in the team store (`user@machine`); null for this machine's own.
    pub origin: Option<&'a str>,
    /// Where it ran.
    pub project: Project<'a>,
    /// deja's id of the session.
    pub session_id: &'a str,
    /// When it started.
    pub started_at: String,
    /// Its title, when the harness keeps one.
    pub title: Option<&'a str>,
}

/// One message of a `session` answer.
#[derive(Debug, Clone, Serialize)]
pub struct Message<'a> {
    /// Whether its text was cut to fit the answer.
    pub cut: bool,
    /// Its position in the session, from 0.
    pub index: usize,
    /// Its id: the harness's, else deja's `<session>#<index>`.
    pub message_id: Cow<'a, str>,
    /// `user` or `assistant`.
    pub role: &'a str,
    /// The text shown.
    pub text: String,
    /// When it was written.
    pub timestamp: String,
}

/// A `sessions` answer.
#[derive(Debug, Clone, Serialize)]
pub struct Sessions<'a> {
    /// Sessions left out to keep the answer within its byte bound.
    pub left_out: usize,
    /// The sessions listed, newest first.
    pub sessions: Vec<ListedSession<'a>>,
}

/// One session of a `sessions` answer.
#[derive(Debug, Clone, Serialize)]
pub struct ListedSession<'a> {
    /// The first line of its first user message.
    pub first_user_line: Option<&'a str>,
    /// The harness that wrote it.
    pub harness: &'a str,
    /// deja's id of the session.
    pub id: &'a str,
    /// How many messages it has.
    pub message_count: i64,
    /// The harness's id of the session.
    pub native_id: &'a str,
    /// Who published the session in the team store (`user@machine`); null for this machine's own.
    pub origin: Option<&'a str>,
    /// Where it ran.
    pub project: Project<'a>,
    /// When it started.
    pub started_at: String,
    /// Its title, when the harness keeps one.
    pub title: Option<&'a str>,
    /// Its last activity.
    pub updated_at: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::{hit, keys, session_row};

    #[test]
    fn field_names() {
        let h = hit();
        let recall = Recall {
            hits: vec![Hit {
                date_approximate: false,
                duplicates: &h.duplicates,
                harness: &h.harness,
                message_id: &h.message_id,
                message_index: h.message_index,
                more_in_session: 0,
                native_session_id: &h.native_session_id,
                origin: None,
                parent_id: None,
                project: Project::from(&h.project),
                rank: 1,
                role: &h.role,
                score: h.score,
                session_id: &h.session_id,
                source_path: None,
                started_at: String::new(),
                text: String::new(),
                timestamp: String::new(),
                weak: false,
            }],
            left_out: 0,
            missing_half: None,
            mode: "hybrid",
            query: "q",
            warning: None,
            warnings: &[],
            withheld: 0,
        };
        assert_eq!(
            keys(&recall),
            [
                "hits",
                "left_out",
                "missing_half",
                "mode",
                "query",
                "warning",
                "warnings",
                "withheld"
            ]
        );
        assert_eq!(
            keys(&recall.hits[0]),
            [
                "date_approximate",
                "duplicates",
                "harness",
                "message_id",
                "message_index",
                "more_in_session",
                "native_session_id",
                "origin",
                "parent_id",
                "project",
                "rank",
                "role",
                "score",
                "session_id",
                "source_path",
                "started_at",
                "text",
                "timestamp",
                "weak"
            ]
        );
        let row = session_row();
        let session = Session {
            harness: &row.harness,
            message_count: 1,
            messages: vec![Message {
                cut: false,
                index: 0,
                message_id: "s1#0".into(),
                role: "user",
                text: "hi".into(),
                timestamp: String::new(),
            }],
            native_id: &row.native_id,
            next_cursor: None,
            origin: None,
            project: Project::from(&row.project),
            session_id: &row.id,
            started_at: String::new(),
            title: None,
        };
        assert_eq!(
            keys(&session),
            [
                "harness",
                "message_count",
                "messages",
                "native_id",
                "next_cursor",
                "origin",
                "project",
                "session_id",
                "started_at",
                "title"
            ]
        );
        assert_eq!(
            keys(&session.messages[0]),
            ["cut", "index", "message_id", "role", "text", "timestamp"]
        );
        let sessions = Sessions {
            left_out: 0,
            sessions: vec![ListedSession {
                first_user_line: None,
                harness: &row.harness,
                id: &row.id,
                message_count: 1,
                native_id: &row.native_id,
                origin: None,
                project: Project::from(&row.project),
                started_at: String::new(),
                title: None,
                updated_at: String::new(),
            }],
        };
        assert_eq!(keys(&sessions), ["left_out", "sessions"]);
        assert_eq!(
            keys(&sessions.sessions[0]),
            [
                "first_user_line",
                "harness",
                "id",
                "message_count",
                "native_id",
                "origin",
                "project",
                "started_at",
                "title",
                "updated_at"
            ]
        );
    }
}
