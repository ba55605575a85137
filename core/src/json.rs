//! The JSON shapes deja prints with `--json`: sessions with their messages,
//! files and commands, timestamps in RFC 3339. Fields may be added, never renamed.

use serde_json::{json, Value};

use crate::output::rfc3339;
use deja_model::{message_id, Session};

/// A session, with every message, file and command record.
pub fn session(s: &Session, source: Option<&str>) -> Value {
    let mut v = session_summary(s, source);
    if let Value::Object(map) = &mut v {
        map.insert(
            "messages".into(),
            s.messages
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    json!({
                        "index": i,
                        "role": m.role.as_str(),
                        "text": m.text,
                        "timestamp": rfc3339(m.timestamp_ms),
                        "id": m.native_id.clone().unwrap_or_else(|| message_id(&s.id, i)),
                        "native_id": m.native_id,
                    })
                })
                .collect::<Vec<_>>()
                .into(),
        );
        map.insert(
            "files".into(),
            s.files
                .iter()
                .map(|f| {
                    json!({
                        "path": f.path,
                        "action": f.action,
                        "timestamp": rfc3339(f.timestamp_ms),
                    })
                })
                .collect::<Vec<_>>()
                .into(),
        );
        map.insert(
            "commands".into(),
            s.commands
                .iter()
                .map(|c| {
                    json!({
                        "command": c.command,
                        "origin": c.origin,
                        "timestamp": rfc3339(c.timestamp_ms),
                    })
                })
                .collect::<Vec<_>>()
                .into(),
        );
    }
    v
}

/// A session without its messages and records.
pub fn session_summary(s: &Session, source: Option<&str>) -> Value {
    json!({
        "id": s.id,
        "harness": s.harness,
        "native_id": s.native_id,
        "started_at": rfc3339(s.started_at_ms),
        "updated_at": rfc3339(s.updated_at_ms),
        "project": s.project,
        "title": s.title,
        "parent_id": s.parent_id,
        "message_count": s.messages.len(),
        "source": source,
    })
}
