//! Why a session cannot be written back.

use std::path::PathBuf;

/// Why a session cannot be written back, naming the file or the value.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No writer for the harness.
    #[error(
        "deja cannot write back {harness} sessions; it can write back sessions of: {supported}"
    )]
    Unsupported {
        /// The session's harness.
        harness: String,
        /// The harnesses that have a writer, comma-separated.
        supported: String,
    },
    /// The target exists: never replaced.
    #[error("`{path}` exists already; deja never replaces a session file (move it away to write this one back)")]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// A value of the session cannot be used to name a file or folder.
    #[error("the session's {what} `{value}` cannot be written back: {why}")]
    Unsafe {
        /// Which value (`id`, `directory`).
        what: &'static str,
        /// The value, escaped for display.
        value: String,
        /// Why.
        why: &'static str,
    },
    /// The session's directory is unknown, and the agent files sessions by it.
    #[error("the session's project directory is unknown, and {harness} files its sessions by it")]
    NoDirectory {
        /// The harness.
        harness: String,
    },
    /// A subagent's session, which its agent resumes only within its parent.
    #[error("this is a subagent's session, which its agent resumes only as part of session `{parent}`: write that one back instead")]
    Subagent {
        /// deja's id of the session that started it.
        parent: String,
    },
    /// Nothing to write.
    #[error("the session has no messages to write back")]
    NoMessages,
    /// A path would land outside the agent's folder.
    #[error("`{path}` is outside the agent's folder `{root}`; nothing was written")]
    Outside {
        /// The path.
        path: PathBuf,
        /// The agent's folder.
        root: PathBuf,
    },
    /// A file-system operation failed.
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The session's text could not be encoded.
    #[error("cannot encode the session: {0}")]
    Encode(#[from] serde_json::Error),
}

/// Maps an I/O error on `path` while doing `action`.
pub(crate) fn io(
    action: &'static str,
    path: &std::path::Path,
) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    move |source| Error::Io {
        action,
        path,
        source,
    }
}
