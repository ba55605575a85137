//! The live session of the agent that started this server, which recall
//! and `session` must never answer with: the agent's own question, read
//! back from the transcript it is writing, is no memory.
//!
//! Three signs, each enough:
//! - every session the agent process recorded through its SessionStart hook
//!   ([`deja_agents::commands::hook::live`]): the agent that started this server
//!   is its parent, and the hook records the agent's process with the
//!   session id the agent hands it, on startup, resume, `/clear` and
//!   compaction alike;
//! - the session id the agent puts in its servers' environment (Claude
//!   Code's `CLAUDE_CODE_SESSION_ID`, Qwen Code's `QWEN_CODE_SESSION_ID`,
//!   and the like where an agent sets one), fixed when the server starts;
//! - for agents without the hook, any session of this machine in the
//!   server's working folder (as the system resolves it, and as `$PWD`
//!   names it, which is what agents record) that began after the server
//!   started, less a minute's slack: an agent starts its servers as its
//!   session starts.
//!
//! A session the user began elsewhere, or earlier, is memory as ever.

use std::path::PathBuf;

use deja_store::{Origin, SessionFilter, Store};

use deja_agents::commands::hook::live;

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
    /// The server's working folder, resolved and as `$PWD` names it.
    dirs: Vec<PathBuf>,
    /// When the server started (ms since the epoch).
    started_ms: i64,
    /// deja's data folder, where the hooks record live sessions.
    data_dir: Option<PathBuf>,
    /// The agent process that started this server.
    agent: Option<live::Agent>,
}

impl Own {
    /// The marks of this process's agent; `data_dir` holds the hooks'
    /// records of live sessions.
    pub fn from_env(data_dir: &std::path::Path) -> Own {
        let mut dirs: Vec<PathBuf> = std::env::current_dir().ok().into_iter().collect();
        // `$PWD` when it names the same folder by another path (a symlink).
        if let Some(pwd) = std::env::var_os("PWD").map(PathBuf::from) {
            let same = std::fs::canonicalize(&pwd)
                .ok()
                .zip(dirs.first())
                .is_some_and(|(a, b)| &a == b);
            if same && !dirs.contains(&pwd) {
                dirs.push(pwd);
            }
        }
        Own {
            ids: SESSION_VARS
                .iter()
                .filter_map(|k| std::env::var(k).ok())
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect(),
            dirs,
            started_ms: chrono::Utc::now().timestamp_millis(),
            data_dir: Some(data_dir.to_path_buf()),
            agent: live::agent(),
        }
    }

    /// The ids (deja's and the harness's) of the live sessions in `store`.
    pub fn sessions(&self, store: &Store) -> Vec<String> {
        let mut out = self.ids.clone();
        if let (Some(data), Some(agent)) = (&self.data_dir, &self.agent) {
            out.extend(live::sessions_of(data, agent));
        }
        for dir in &self.dirs {
            let filter = SessionFilter {
                project: Some(dir.to_string_lossy().into_owned()),
                since: Some(self.started_ms - SLACK_MS),
                origin: Some(Origin::Mine),
                ..SessionFilter::default()
            };
            if let Ok(rows) = store.sessions(&filter, Some(50)) {
                out.extend(rows.into_iter().map(|r| r.id));
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_no_marks_nothing_is_excluded() {
        let own = Own::default();
        assert!(own.ids.is_empty() && own.dirs.is_empty() && own.agent.is_none());
    }
}
