//! `deja parse --json`.

use std::borrow::Cow;

use serde::Serialize;

/// What the readers made of the transcripts, indexing nothing.
#[derive(Debug, Clone, Serialize)]
pub struct Parse<'a> {
    /// The files no reader could read.
    pub errors: Vec<Error<'a>>,
    /// The files read.
    pub files: Vec<File<'a>>,
    /// The sessions, oldest first, each with the transcript it came from.
    pub sessions: Vec<super::Session<'a>>,
    /// Sessions without messages, skipped.
    pub skipped_empty: u32,
    /// The readers' warnings, each after its file.
    pub warnings: &'a [String],
}

/// A file a reader read.
#[derive(Debug, Clone, Serialize)]
pub struct File<'a> {
    /// The harness of the reader that read it.
    pub harness: &'a str,
    /// The file.
    pub path: String,
    /// Sessions found in it.
    pub sessions: usize,
    /// Sessions without messages in it, skipped.
    pub skipped_empty: u32,
}

/// A file that could not be read.
#[derive(Debug, Clone, Serialize)]
pub struct Error<'a> {
    /// Why.
    pub error: &'a str,
    /// The file.
    pub path: Cow<'a, str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::keys;

    #[test]
    fn field_names() {
        let out = Parse {
            errors: vec![Error {
                error: "e",
                path: "/t".into(),
            }],
            files: vec![File {
                harness: "aider",
                path: "/t".into(),
                sessions: 1,
                skipped_empty: 0,
            }],
            sessions: Vec::new(),
            skipped_empty: 0,
            warnings: &[],
        };
        assert_eq!(
            keys(&out),
            ["errors", "files", "sessions", "skipped_empty", "warnings"]
        );
        assert_eq!(keys(&out.errors[0]), ["error", "path"]);
        assert_eq!(
            keys(&out.files[0]),
            ["harness", "path", "sessions", "skipped_empty"]
        );
    }
}
