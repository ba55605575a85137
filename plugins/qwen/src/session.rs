//! A loaded chat file turned into deja's [`Session`].
//!
//! - One file is one session. Its `native_id` is the `sessionId` of its first
//!   record (the file's own name in qwen-code), and so is deja's `id`: a
//!   resumed session keeps appending to the same file under the same id, and
//!   qwen-code gives a new session (a fork included) a new UUID. The first
//!   record never changes, so neither does the id as the file grows.
//! - It starts at the first record's time and was last active at the latest
//!   time of any record; a message without a time takes the session's start,
//!   a file without any the file's modification time.
//! - Its title is the last `custom_title` record's (`/rename`, or generated);
//!   its parent the `parent_session` record's session (a sub-session).
//! - A file with text but no record gives no session and a warning that
//!   says so, never nothing at all.

use deja_plugin_api::{
    CommandOutcome, Message, ParseOutput, ParseOutputV1_3, RString, Session, SessionEdits,
    SessionOutcomes,
};

use crate::chain::Loaded;
use crate::content;
use crate::project;
use crate::records::SystemEvent;
use crate::time;
use crate::tools;

/// The parse result for `loaded`, read from `path` (modified at `modified_ms`).
pub fn output(loaded: Loaded, path: &str, modified_ms: i64) -> ParseOutput {
    with_outcomes(loaded, path, modified_ms).output
}

/// [`output`], with the commands' outcomes and the edits' texts beside the
/// sessions.
pub fn with_outcomes(loaded: Loaded, path: &str, modified_ms: i64) -> ParseOutputV1_3 {
    let mut result = ParseOutputV1_3::default();
    let output = &mut result.output;
    let Some((session, outcomes, edits)) = build(&loaded, path, modified_ms) else {
        // Nothing is dropped without a word: a file with text but no
        // record says why it gave nothing.
        if loaded.unread_lines > 0 {
            output.warnings.push(RString::from(format!(
                "none of its {} line(s) is a Qwen Code chat record (a JSON object with a `type` and `message.parts`, or with a `uuid` and a `sessionId`): nothing was read",
                loaded.unread_lines
            )));
        }
        return result;
    };
    if session.messages.is_empty() {
        output.skipped_empty = 1;
    } else {
        output.sessions.push(session);
        result.outcomes.push(SessionOutcomes {
            commands: outcomes.into(),
        });
        result.edits.push(SessionEdits::from_texts(edits));
    }
    result
}

/// A session, its commands' outcomes and its edits' texts.
type Built = (Session, Vec<CommandOutcome>, Vec<Option<String>>);

fn build(loaded: &Loaded, path: &str, modified_ms: i64) -> Option<Built> {
    let session_id = loaded.session_id()?;
    let times = || {
        loaded
            .records
            .iter()
            .filter_map(|r| time::parse_ms(r.timestamp.as_deref()))
    };
    let started = times().next().unwrap_or(modified_ms);
    let updated = times().max().unwrap_or(started).max(started);
    let messages: Vec<Message> = loaded
        .conversation()
        .filter_map(|record| {
            let (role, text) = content::message(record)?;
            let at = time::parse_ms(record.timestamp.as_deref()).unwrap_or(started);
            let mut message = Message::new(role, text, at);
            message.native_id = Some(RString::from(record.uuid.as_str())).into();
            Some(message)
        })
        .collect();
    let cwd = loaded.records.iter().find_map(|r| r.cwd.as_deref());
    let project = project::resolve(path, cwd);
    let activity = tools::activity(
        loaded.conversation(),
        &loaded.records,
        project::dir(&project),
        started,
    );
    let mut title = None;
    let mut parent = None;
    for record in &loaded.records {
        match &record.event {
            SystemEvent::Title(t) if !t.trim().is_empty() => title = Some(t.clone()),
            SystemEvent::Parent(p) if parent.is_none() => parent = Some(p.clone()),
            _ => {}
        }
    }

    let mut session = Session::new(session_id, session_id, started, updated);
    session.project = project;
    session.title = title.map(RString::from).into();
    session.parent_id = parent.map(RString::from).into();
    session.messages = messages.into();
    session.files = activity.files.into();
    session.commands = activity.commands.into();
    Some((session, activity.outcomes, activity.edits))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain;

    #[test]
    fn a_file_without_records_is_nothing_and_one_without_messages_is_skipped() {
        assert_eq!(
            output(chain::load(""), "/c/s.jsonl", 0),
            ParseOutput::default()
        );
        let slash = r#"{"uuid":"a","parentUuid":null,"sessionId":"s","type":"system","subtype":"slash_command","systemPayload":{"phase":"invocation","rawCommand":"/ide install"}}"#;
        let out = output(chain::load(slash), "/c/s.jsonl", 0);
        assert!(out.sessions.is_empty());
        assert_eq!(out.skipped_empty, 1);
    }

    #[test]
    fn times_fall_back_to_the_start_then_the_file() {
        let text = [
            r#"{"uuid":"a","parentUuid":null,"sessionId":"s","type":"user","message":{"parts":[{"text":"x"}]}}"#,
        ]
        .join("\n");
        let out = output(chain::load(&text), "/c/s.jsonl", 42);
        let s = &out.sessions[0];
        assert_eq!((s.started_at_ms, s.updated_at_ms), (42, 42));
        assert_eq!(s.messages[0].timestamp_ms, 42);
    }
}
