//! `deja recall --json`.

use serde::Serialize;

use super::Project;
use crate::output::rfc3339;

/// A recall's answer: the hits, best first, with what limited them.
#[derive(Debug, Clone, Serialize)]
pub struct Recall<'a> {
    /// The hits, best first.
    pub hits: Vec<Hit<'a>>,
    /// The half of hybrid ranking that could not run (`semantic`), if any.
    pub missing_half: Option<&'a str>,
    /// The ranking that answered: `hybrid`, `semantic` or `lexical`.
    pub mode: &'a str,
    /// The query, redacted like the transcripts.
    pub query: String,
    /// Why semantic recall was unavailable, when it was.
    pub warning: Option<&'a str>,
    /// Every warning, `warning` first.
    pub warnings: &'a [String],
    /// How many ranked messages were withheld because none came near
    /// enough to answer the query (`recall.min_score`); `hits` is then empty.
    pub withheld: usize,
}

/// One matching message.
#[derive(Debug, Clone, Serialize)]
pub struct Hit<'a> {
    /// Whether `started_at` is only the transcript's modification time (no
    /// record of the harness dates the session).
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
    /// Who published the session in the team store (`user@machine`); null for this machine's own.
    pub origin: Option<&'a str>,
    /// The deja id of the session that started this one, for sub-agent
    /// work; null for a session the person started.
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
    /// The message's full text.
    pub text: &'a str,
    /// When the message was written.
    pub timestamp: String,
    /// Whether the evidence for this hit is weak: the query may have no
    /// answer in the history, and this is the nearest thing to one.
    pub weak: bool,
}

impl<'a> Hit<'a> {
    /// The hit `h`, whose session's date is approximate when
    /// `date_approximate` says so, and whose session is sub-agent work of
    /// `parent_id` (the store knows both, not the hit).
    pub fn of(h: &'a deja_recall::Hit, date_approximate: bool, parent_id: Option<&'a str>) -> Self {
        Hit {
            date_approximate,
            duplicates: &h.duplicates,
            harness: &h.harness,
            message_id: &h.message_id,
            message_index: h.message_index,
            more_in_session: h.more_in_session,
            origin: h.origin.as_deref(),
            parent_id,
            project: Project::from(&h.project),
            rank: h.rank,
            role: &h.role,
            score: h.score,
            session_id: &h.session_id,
            source_path: h.source_path.as_deref(),
            started_at: rfc3339(h.started_at),
            text: &h.text,
            timestamp: rfc3339(h.timestamp),
            weak: h.weak,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::{hit, keys};

    #[test]
    fn field_names() {
        let h = hit();
        let out = Recall {
            hits: vec![Hit::of(&h, false, None)],
            missing_half: None,
            mode: "hybrid",
            query: "q".into(),
            warning: None,
            warnings: &[],
            withheld: 0,
        };
        assert_eq!(
            keys(&out),
            [
                "hits",
                "missing_half",
                "mode",
                "query",
                "warning",
                "warnings",
                "withheld"
            ]
        );
        assert_eq!(
            keys(&out.hits[0]),
            [
                "date_approximate",
                "duplicates",
                "harness",
                "message_id",
                "message_index",
                "more_in_session",
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
    }
}
