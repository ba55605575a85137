//! A loaded chat file turned into deja's [`Session`]: messages, times, ids,
//! project, parent and the tool activity.

use std::path::Path;

use deja_plugin_api::{
    CommandOutcome, Message, ParseOutput, ParseOutputV1_3, RString, Session, SessionEdits,
    SessionOutcomes,
};

use crate::content;
use crate::ids;
use crate::parent;
use crate::project::{self, Clues};
use crate::records::MessageRecord;
use crate::replay::{Conversation, Identity};
use crate::time;
use crate::tools;

/// The JSONL copy of a session wins over its legacy JSON one.
const JSONL_PRECEDENCE: i32 = 2;
const JSON_PRECEDENCE: i32 = 1;

/// The parse result for `conversation`, read from `path` (modified at `modified_ms`).
pub fn output(conversation: Conversation, path: &str, modified_ms: i64) -> ParseOutput {
    with_outcomes(conversation, path, modified_ms).output
}

/// [`output`], with the commands' outcomes and the edits' texts beside the
/// sessions.
pub fn with_outcomes(
    mut conversation: Conversation,
    path: &str,
    modified_ms: i64,
) -> ParseOutputV1_3 {
    let mut result = ParseOutputV1_3::default();
    let output = &mut result.output;
    let identity = match conversation.identity.take() {
        Some(identity) if conversation.has_messages => identity,
        _ => {
            output
                .warnings
                .extend(unreadable_warning(&conversation, path));
            return result;
        }
    };
    let (session, outcomes, edits) = build(identity, conversation, path, modified_ms);
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

/// A legacy `session-*.json` is rewritten whole, so unlike a JSONL file it is
/// never half-written: if none of it is JSON, it is worth telling the user.
fn unreadable_warning(conversation: &Conversation, path: &str) -> Option<RString> {
    let name = file_name(path);
    let legacy = name.starts_with("session-") && name.ends_with(".json");
    (legacy && !conversation.parsed_any).then(|| {
        format!("`{path}` is not valid JSON (a truncated copy or a Git LFS pointer?); skipped")
            .into()
    })
}

fn build(
    identity: Identity,
    conversation: Conversation,
    path: &str,
    modified_ms: i64,
) -> (Session, Vec<CommandOutcome>, Vec<Option<String>>) {
    let Conversation {
        metadata, messages, ..
    } = conversation;
    let started =
        started_ms(&identity, metadata.start_time.as_deref(), &messages).unwrap_or(modified_ms);
    let said: Vec<Message> = messages
        .iter()
        .filter_map(|m| message(m, started))
        .collect();
    let updated = time::parse_ms(metadata.last_updated.as_deref())
        .or_else(|| last_timestamp(&messages))
        .unwrap_or(started);
    let project = project::resolve(Path::new(path), Clues::from(&metadata));
    let activity = tools::activity(&messages, project::dir(&project), started);
    let native_id = metadata
        .session_id
        .unwrap_or_else(|| identity.session_id.clone());

    let mut session = Session::new(
        ids::session_id(&identity, file_name(path)),
        native_id,
        started,
        updated,
    );
    session.project = project;
    session.title = metadata
        .summary
        .filter(|s| !s.trim().is_empty())
        .map(RString::from)
        .into();
    session.parent_id = parent::of(Path::new(path))
        .map(|p| RString::from(p.id))
        .into();
    session.precedence = precedence(path);
    session.messages = said.into();
    session.files = activity.files.into();
    session.commands = activity.commands.into();
    (session, activity.outcomes, activity.edits)
}

/// The first `startTime`, else the merged one, else the first message's timestamp.
fn started_ms(
    identity: &Identity,
    merged: Option<&str>,
    messages: &[MessageRecord],
) -> Option<i64> {
    time::parse_ms(identity.start_time.as_deref())
        .or_else(|| time::parse_ms(merged))
        .or_else(|| {
            messages
                .iter()
                .find_map(|m| time::parse_ms(m.timestamp.as_deref()))
        })
}

fn last_timestamp(messages: &[MessageRecord]) -> Option<i64> {
    messages
        .iter()
        .rev()
        .find_map(|m| time::parse_ms(m.timestamp.as_deref()))
}

/// A message with text said by the user or the assistant; its timestamp, else `fallback_ms`.
fn message(record: &MessageRecord, fallback_ms: i64) -> Option<Message> {
    let role = content::role(record.kind.as_deref())?;
    let text = content::text(record)?;
    let timestamp = time::parse_ms(record.timestamp.as_deref()).unwrap_or(fallback_ms);
    let mut message = Message::new(role, text, timestamp);
    message.native_id = record.id.clone().map(RString::from).into();
    Some(message)
}

fn precedence(path: &str) -> i32 {
    if path.ends_with(".jsonl") {
        JSONL_PRECEDENCE
    } else {
        JSON_PRECEDENCE
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay;

    #[test]
    fn jsonl_outranks_json() {
        assert_eq!(precedence("/c/session-a.jsonl"), JSONL_PRECEDENCE);
        assert_eq!(precedence("/c/session-a.json"), JSON_PRECEDENCE);
        const { assert!(JSONL_PRECEDENCE > JSON_PRECEDENCE) };
    }

    #[test]
    fn a_session_without_text_is_counted_as_skipped() {
        let text = r#"{"sessionId":"s","startTime":"2026-01-01T00:00:00Z","messages":[{"id":"i","type":"info","content":"x"}]}"#;
        let output = output(replay::load(text), "/x/session-a.json", 0);
        assert!(output.sessions.is_empty());
        assert_eq!(output.skipped_empty, 1);
    }

    #[test]
    fn only_a_legacy_session_file_that_is_not_json_is_worth_a_warning() {
        let warn = |path: &str, text: &str| output(replay::load(text), path, 0).warnings.len();
        assert_eq!(warn("/c/session-a.json", "version https://git-lfs"), 1);
        assert_eq!(warn("/c/session-a.json", ""), 1);
        assert_eq!(warn("/c/session-a.json", r#"{"history":[]}"#), 0);
        assert_eq!(warn("/c/session-a.jsonl", "{\"sessionId\":\"s\",\"mess"), 0);
        assert_eq!(warn("/c/logs.json", "not json"), 0);
    }
}
