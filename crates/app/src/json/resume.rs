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
    }
}
