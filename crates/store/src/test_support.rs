//! Builders the store's unit tests share: a session of user messages and the
//! state of the transcript it came from.

use deja_model::{Message, Role, Session};

use crate::ingest::FileState;

/// A session `id` of the harness `test` whose messages are `texts`, all by
/// the user at time 0.
pub fn session(id: &str, texts: &[&str]) -> Session {
    Session {
        harness: "test".into(),
        id: id.into(),
        native_id: id.into(),
        started_at_ms: 0,
        updated_at_ms: 0,
        date_approximate: false,
        project: Default::default(),
        title: None,
        parent_id: None,
        precedence: 0,
        messages: texts
            .iter()
            .map(|t| Message {
                role: Role::User,
                text: (*t).to_string(),
                timestamp_ms: 0,
                native_id: None,
            })
            .collect(),
        files: vec![],
        commands: vec![],
    }
}

/// The transcript at `path`, read with `settings`.
pub fn file<'a>(path: &'a str, settings: &'a str) -> FileState<'a> {
    FileState {
        harness: "test",
        path,
        size: 1,
        mtime_ns: 1,
        hash: "h",
        reader: "test 1",
        settings,
    }
}
