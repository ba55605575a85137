//! `deja resume --json`.

use serde::Serialize;

/// How to reopen a session, as its reader advises.
#[derive(Debug, Clone, Serialize)]
pub struct Command<'a> {
    /// The command, one argument per item.
    pub argv: &'a [String],
    /// The folder to run it in, when it matters.
    pub cwd: Option<&'a str>,
    /// What the reader wants said about it (empty when nothing).
    pub note: &'a str,
    /// deja's id of the session.
    pub session_id: &'a str,
    /// The command as one shell line (with `cd` to `cwd`).
    pub shell: &'a str,
}

/// A reader's refusal to reopen a session.
#[derive(Debug, Clone, Serialize)]
pub struct Refused<'a> {
    /// Why, and what to do instead.
    pub refused: &'a str,
    /// deja's id of the session.
    pub session_id: &'a str,
}

/// `deja resume --write-back`: the file written (or, with `--dry-run`,
/// that would be), and how to reopen it.
#[derive(Debug, Clone, Serialize)]
pub struct WriteBack<'a> {
    /// Whether nothing was written (`--dry-run`).
    pub dry_run: bool,
    /// The harness whose format the file is in.
    pub harness: &'a str,
    /// How many messages it holds.
    pub messages: usize,
    /// The session file.
    pub path: &'a str,
    /// How to reopen it, once written.
    pub resume: Option<Command<'a>>,
    /// deja's id of the session.
    pub session_id: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::keys;

    #[test]
    fn field_names() {
        let argv = vec!["gemini".to_string()];
        let command = Command {
            argv: &argv,
            cwd: None,
            note: "",
            session_id: "s1",
            shell: "gemini",
        };
        assert_eq!(
            keys(&command),
            ["argv", "cwd", "note", "session_id", "shell"]
        );
        let refused = Refused {
            refused: "no",
            session_id: "s1",
        };
        assert_eq!(keys(&refused), ["refused", "session_id"]);
        let written = WriteBack {
            session_id: "s1",
            harness: "claude",
            path: "/h/.claude/projects/-a/s1.jsonl",
            messages: 2,
            dry_run: true,
            resume: None,
        };
        assert_eq!(
            keys(&written),
            [
                "dry_run",
                "harness",
                "messages",
                "path",
                "resume",
                "session_id"
            ]
        );
    }
}
