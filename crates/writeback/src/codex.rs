//! Codex CLI: `${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`
//! (the session's start, UTC). A `session_meta` line (`id`, `timestamp`,
//! `cwd`, `originator`, `source`), then each message twice as Codex writes
//! it: a `response_item` message (what the model is sent again on resume)
//! and the `user_message` / `agent_message` event (what its screen shows).
//! Codex finds a rollout by the id in its name, in any day's folder, so a
//! file of the same id anywhere under `sessions` or `archived_sessions`
//! counts as existing.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use deja_model::Role;
use serde_json::json;

use crate::{ids, Checked, Error, Placement, Places, Writer};

/// Codex CLI's writer.
pub struct Codex;

/// The rollouts under `dir` (down to `depth` folders) whose name ends
/// with `suffix`.
fn find(dir: &Path, suffix: &str, depth: usize) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && depth > 0 {
            if let Some(found) = find(&path, suffix, depth - 1) {
                return Some(found);
            }
        } else if !is_dir && entry.file_name().to_string_lossy().ends_with(suffix) {
            return Some(path);
        }
    }
    None
}

impl Writer for Codex {
    fn harness(&self) -> &'static str {
        "codex"
    }

    fn root(&self, places: &Places) -> PathBuf {
        places
            .dir_var("CODEX_HOME")
            .unwrap_or_else(|| places.home.join(".codex"))
            .join("sessions")
    }

    fn place(&self, session: &Checked<'_>, root: &Path) -> Result<Placement, Error> {
        let start = DateTime::<Utc>::from_timestamp_millis(session.started_ms).unwrap_or_default();
        Ok(Placement {
            dir: root.join(start.format("%Y/%m/%d").to_string()),
            file_name: format!(
                "rollout-{}-{}.jsonl",
                start.format("%Y-%m-%dT%H-%M-%S"),
                session.id
            ),
            markers: Vec::new(),
        })
    }

    fn existing(&self, session: &Checked<'_>, root: &Path) -> Option<PathBuf> {
        let suffix = format!("-{}.jsonl", session.id);
        find(root, &suffix, 3).or_else(|| {
            let archived = root.parent()?.join("archived_sessions");
            find(&archived, &suffix, 0)
        })
    }

    fn encode(&self, session: &Checked<'_>) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        let start = ids::rfc3339(session.started_ms);
        let mut line = |time: &str, kind: &str, payload: serde_json::Value| {
            let record = json!({"timestamp": time, "type": kind, "payload": payload});
            serde_json::to_writer(&mut out, &record)?;
            out.push(b'\n');
            Ok::<(), Error>(())
        };
        line(
            &start,
            "session_meta",
            json!({
                "id": session.id,
                "timestamp": start,
                "cwd": session.cwd,
                "originator": "deja",
                "cli_version": "",
                "source": "cli",
            }),
        )?;
        for (i, m) in session.messages.iter().enumerate() {
            let time = ids::rfc3339(session.time_of(i));
            let (role, part, event) = match m.role {
                Role::User => ("user", "input_text", "user_message"),
                Role::Assistant => ("assistant", "output_text", "agent_message"),
            };
            line(
                &time,
                "response_item",
                json!({
                    "type": "message",
                    "id": format!("msg_{}", ids::record("codex", session.id, i)),
                    "role": role,
                    "content": [{"type": part, "text": m.text}],
                }),
            )?;
            line(
                &time,
                "event_msg",
                json!({"type": event, "message": m.text}),
            )?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_rollout_of_the_same_id_in_another_day_counts_as_existing() {
        let home = tempfile::tempdir().unwrap();
        let root = home.path().join("sessions");
        let day = root.join("2025/03/04");
        std::fs::create_dir_all(&day).unwrap();
        let other = day.join("rollout-2025-03-04T08-00-00-abc-1.jsonl");
        std::fs::write(&other, "{}\n").unwrap();
        let messages = [];
        let session = Checked {
            id: "abc-1",
            cwd: "/a",
            messages: &messages,
            started_ms: 0,
            updated_ms: 0,
        };
        assert_eq!(Codex.existing(&session, &root), Some(other.clone()));
        std::fs::remove_file(&other).unwrap();
        assert_eq!(Codex.existing(&session, &root), None);
        let archived = home.path().join("archived_sessions");
        std::fs::create_dir_all(&archived).unwrap();
        std::fs::write(archived.join("rollout-x-abc-1.jsonl"), "{}\n").unwrap();
        assert!(Codex.existing(&session, &root).is_some());
    }
}
