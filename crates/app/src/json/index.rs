//! `deja index --json`.

use serde::Serialize;

/// What one index run did.
#[derive(Debug, Clone, Serialize)]
pub struct Index<'a> {
    /// Readers that could not look for transcripts.
    pub discovery_errors: Vec<DiscoveryError<'a>>,
    /// The embedding pass.
    pub embeddings: Embeddings<'a>,
    /// Messages written.
    pub messages: Messages,
    /// How long the run took.
    pub seconds: f64,
    /// Sessions written or skipped.
    pub sessions: Sessions,
    /// Transcripts read.
    pub transcripts: Transcripts<'a>,
}

/// A reader that could not look for transcripts.
#[derive(Debug, Clone, Serialize)]
pub struct DiscoveryError<'a> {
    /// Why.
    pub error: &'a str,
    /// The reader's harness.
    pub harness: &'a str,
}

/// The embedding pass: its counts, or why it did not run.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Embeddings<'a> {
    /// It ran.
    Done {
        /// Units whose vector came from the cache.
        cached: usize,
        /// Long messages embedded in part before that got the rest of their
        /// windows (the second pass).
        completed: usize,
        /// Texts the model embedded.
        embedded: usize,
        /// Messages that got embedding units.
        messages: usize,
        /// When a second pass ran: seconds from the start of the run until
        /// every message was searchable by meaning (`null`: one pass).
        searchable_after_seconds: Option<f64>,
        /// Units created.
        units: usize,
    },
    /// It did not run.
    Skipped {
        /// Why.
        skipped: &'a str,
    },
}

/// Messages written.
#[derive(Debug, Clone, Serialize)]
pub struct Messages {
    /// New.
    pub added: usize,
    /// Changed in place.
    pub changed: usize,
    /// Gone from their session.
    pub removed: usize,
}

/// Sessions written or skipped.
#[derive(Debug, Clone, Serialize)]
pub struct Sessions {
    /// New.
    pub added: usize,
    /// Found without messages and skipped.
    pub empty_skipped: u64,
    /// Found again but forgotten, so skipped.
    pub forgotten_skipped: usize,
    /// Kept, though their transcript is gone or no longer holds them.
    pub orphaned: usize,
    /// Replaced by a better copy from another transcript.
    pub superseded: usize,
    /// Changed.
    pub updated: usize,
}

/// Transcripts read.
#[derive(Debug, Clone, Serialize)]
pub struct Transcripts<'a> {
    /// Read and parsed because they changed.
    pub changed: usize,
    /// Those that failed to parse (what was indexed from them before is kept).
    pub failed: Vec<Failure<'a>>,
    /// Returned by the readers.
    pub scanned: usize,
}

/// A transcript that failed to parse.
#[derive(Debug, Clone, Serialize)]
pub struct Failure<'a> {
    /// Why.
    pub error: &'a str,
    /// The transcript.
    pub path: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::keys;

    #[test]
    fn field_names() {
        let out = Index {
            discovery_errors: vec![DiscoveryError {
                error: "e",
                harness: "aider",
            }],
            embeddings: Embeddings::Done {
                cached: 0,
                completed: 0,
                embedded: 1,
                messages: 1,
                searchable_after_seconds: None,
                units: 1,
            },
            messages: Messages {
                added: 1,
                changed: 0,
                removed: 0,
            },
            seconds: 0.5,
            sessions: Sessions {
                added: 1,
                empty_skipped: 0,
                forgotten_skipped: 0,
                orphaned: 0,
                superseded: 0,
                updated: 0,
            },
            transcripts: Transcripts {
                changed: 1,
                failed: vec![Failure {
                    error: "e",
                    path: "/t",
                }],
                scanned: 1,
            },
        };
        assert_eq!(
            keys(&out),
            [
                "discovery_errors",
                "embeddings",
                "messages",
                "seconds",
                "sessions",
                "transcripts"
            ]
        );
        assert_eq!(keys(&out.discovery_errors[0]), ["error", "harness"]);
        assert_eq!(
            keys(&out.embeddings),
            [
                "cached",
                "completed",
                "embedded",
                "messages",
                "searchable_after_seconds",
                "units"
            ]
        );
        assert_eq!(keys(&Embeddings::Skipped { skipped: "off" }), ["skipped"]);
        assert_eq!(keys(&out.messages), ["added", "changed", "removed"]);
        assert_eq!(
            keys(&out.sessions),
            [
                "added",
                "empty_skipped",
                "forgotten_skipped",
                "orphaned",
                "superseded",
                "updated"
            ]
        );
        assert_eq!(keys(&out.transcripts), ["changed", "failed", "scanned"]);
        assert_eq!(keys(&out.transcripts.failed[0]), ["error", "path"]);
    }
}
