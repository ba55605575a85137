//! `deja blame --json` (and the MCP server's `blame` tool).

use serde::Serialize;

use super::sessions::Session;
use crate::blame::{Entry, LineAnswer};
use crate::output::{one_line, rfc3339};

/// The sessions that wrote a file, newest first.
#[derive(Debug, Clone, Serialize)]
pub struct Blame<'a> {
    /// The records that wrote it (`edit`, `add`), newest first.
    pub edits: Vec<Record<'a>>,
    /// The file, made absolute.
    pub file: String,
    /// The line asked about, counted from 1; null for the whole file.
    pub line: Option<usize>,
    /// The edit that wrote the line asked about (the newest whose text,
    /// found once in the file today, covers it), as in `edits`; null when
    /// no line was asked about or it cannot be told.
    pub line_edit: Option<Record<'a>>,
    /// Why the edit that wrote the line cannot be named, when a line was
    /// asked about; every edit is listed then.
    pub line_note: Option<String>,
    /// The records that read it (`read`, `read-only`), newest first; present
    /// only when asked for (`--reads`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reads: Option<Vec<Record<'a>>>,
}

/// One record of the file.
#[derive(Debug, Clone, Serialize)]
pub struct Record<'a> {
    /// `edit`, `add`, `read` or `read-only`.
    pub action: &'a str,
    /// When.
    pub at: String,
    /// Whether the text this edit wrote covers the line asked about today;
    /// null when no line was asked about, or the file was not read.
    pub covers_line: Option<bool>,
    /// How the recorded path means the file: `exact`, `relative` (under the
    /// session's project folder) or `elsewhere` (the same place in a
    /// project of the same name, another home or machine).
    pub matched: &'a str,
    /// The message that led to it; null when none comes before it.
    pub message: Option<Message>,
    /// The path as the transcript recorded it.
    pub path: &'a str,
    /// The session.
    pub session: Session<'a>,
    /// The command that opens the message: `deja show ID#INDEX`.
    pub show: String,
    /// Where the text this edit wrote is in the file today: `located`
    /// (found once), `ambiguous` (only in several places), `absent` (not
    /// there) or `no-text` (the edit kept none); null when no line was
    /// asked about, or the file was not read.
    pub text_match: Option<&'static str>,
}

impl<'a> Record<'a> {
    /// The record of edit `i` of `edits`, with how its text stands against
    /// the line `answer` is about.
    pub fn of_edit(e: &'a Entry, i: usize, answer: Option<&LineAnswer>) -> Self {
        let mut r = Record::from(e);
        if let Some(m) = answer.and_then(|a| a.edit(i)) {
            r.covers_line = Some(m.covers);
            r.text_match = Some(m.found.as_str());
        }
        r
    }
}

/// The message before a record.
#[derive(Debug, Clone, Serialize)]
pub struct Message {
    /// Its index, as `deja show ID#INDEX` counts.
    pub index: usize,
    /// `user` or `assistant` (or `system`).
    pub role: &'static str,
    /// Its first line, shortened to 160 characters.
    pub snippet: String,
}

impl<'a> From<&'a Entry> for Record<'a> {
    fn from(e: &'a Entry) -> Self {
        let a = &e.activity;
        Record {
            action: a.action,
            at: rfc3339(a.timestamp_ms),
            covers_line: None,
            matched: e.matched.as_str(),
            message: a.message.as_ref().map(|(index, role, text)| Message {
                index: *index,
                role: role.as_str(),
                snippet: one_line(text, 160),
            }),
            path: &a.path,
            session: Session::from(&a.session),
            show: e.pointer(),
            text_match: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blame::Matched;
    use crate::json::testing::{keys, session_row};
    use deja_store::activity::FileActivity;

    #[test]
    fn field_names() {
        let entry = Entry {
            activity: FileActivity {
                session: session_row(),
                path: "src/x.rs".into(),
                action: "edit",
                timestamp_ms: 0,
                message: Some((3, deja_model::Role::Assistant, "Fixing\nit.".into())),
                text: None,
            },
            matched: Matched::Relative,
        };
        let record = Record::from(&entry);
        let out = Blame {
            edits: vec![record.clone()],
            file: "/p/src/x.rs".into(),
            line: None,
            line_edit: None,
            line_note: None,
            reads: None,
        };
        assert_eq!(
            keys(&out),
            ["edits", "file", "line", "line_edit", "line_note"]
        );
        assert_eq!(
            keys(&record),
            [
                "action",
                "at",
                "covers_line",
                "matched",
                "message",
                "path",
                "session",
                "show",
                "text_match"
            ]
        );
        assert_eq!(
            record.message.as_ref().map(|m| m.snippet.as_str()),
            Some("Fixing it.")
        );
        assert_eq!(record.matched, "relative");
        assert!(record.show.ends_with("#3"), "{}", record.show);
    }
}
