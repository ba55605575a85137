//! The live session of the agent that started this server, which recall
//! must never answer with: the agent's own question, read back from the
//! transcript it is writing, is no memory.
//!
//! Two signs, either enough: the session id the agent puts in its servers'
//! environment (Claude Code's `CLAUDE_CODE_SESSION_ID`, Qwen Code's
//! `QWEN_CODE_SESSION_ID`, and the like where an agent sets one), and any
//! session of this machine in the server's working folder that began after
//! the server started (less a minute's slack: an agent starts its servers as
//! its session starts). A session the user began elsewhere, or earlier, is
//! memory as ever.

use std::path::PathBuf;

use deja_store::{Origin, SessionFilter, Store};

/// The variables agents set to their session's id.
const SESSION_VARS: &[&str] = &[
    "CLAUDE_CODE_SESSION_ID",
    "CODEX_THREAD_ID",
    "CODEX_SESSION_ID",
    "QWEN_CODE_SESSION_ID",
    "GEMINI_SESSION_ID",
];

/// How long before the server's start the live session may have begun (ms).
const SLACK_MS: i64 = 60_000;

/// What marks the live session.
#[derive(Debug, Clone, Default)]
pub struct Own {
    /// Session ids from the agent's variables.
    ids: Vec<String>,
    /// The server's working folder.
    cwd: Option<PathBuf>,
    /// When the server started (ms since the epoch).
    started_ms: i64,
}

impl Own {
    /// The marks of this process's agent.
    pub fn from_env() -> Own {
        Own {
            ids: SESSION_VARS
                .iter()
                .filter_map(|k| std::env::var(k).ok())
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect(),
            cwd: std::env::current_dir().ok(),
            started_ms: chrono::Utc::now().timestamp_millis(),
        }
    }

    /// The ids (deja's and the harness's) of the live sessions in `store`.
    pub fn sessions(&self, store: &Store) -> Vec<String> {
        let mut out = self.ids.clone();
        if let Some(cwd) = &self.cwd {
            let filter = SessionFilter {
                project: Some(cwd.to_string_lossy().into_owned()),
                since: Some(self.started_ms - SLACK_MS),
                origin: Some(Origin::Mine),
                ..SessionFilter::default()
            };
            if let Ok(rows) = store.sessions(&filter, Some(50)) {
                out.extend(rows.into_iter().map(|r| r.id));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_no_marks_nothing_is_excluded() {
        let own = Own::default();
        assert!(own.ids.is_empty() && own.cwd.is_none());
    }
}
