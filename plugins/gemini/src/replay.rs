//! Loading a chat file: a legacy `.json` (one object) or a `.jsonl` edit log,
//! replayed record by record in the order of gemini-cli's
//! `loadConversationRecord`.
//!
//! Gemini's loader keeps one list, the *visible* history. deja is memory, so it
//! keeps a second one, the messages *said*, and outputs that:
//!
//! - A message record adds its id to both lists, or, when the id is already
//!   there, replaces the stored copy in place: it keeps its first position.
//! - `$rewindTo` removes exactly what Gemini removes — the target and every
//!   visible message after it, or every visible message when the target is not
//!   visible — from both lists. Only a rewind deletes.
//! - `$set.messages` (a checkpoint restore, a compression, an a2a-server
//!   snapshot) replaces the visible history. In the said list, messages the
//!   replacement keeps stay at their first position with the replacement's
//!   copy; messages it introduces are appended in the replacement's order (it
//!   was written at one moment, after everything already said); messages it
//!   drops stay where they were, because they were said.
//!
//! So every message appears once, at the place it was first recorded, with its
//! latest content.

use std::collections::{HashMap, HashSet};

use deja_plugin_api::text;
use serde_json::Value;

use crate::records::{read, MessageRecord, Metadata, Record};

/// How a message is known: by its id, or, for an item of a message list
/// without one, by its position in the list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Id(String),
    Position(usize),
}

/// The session a file starts with: its first metadata record. deja's id is
/// built from it, so it does not change as the file grows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The first `sessionId`.
    pub session_id: String,
    /// The first metadata record's `startTime`.
    pub start_time: Option<String>,
}

/// A loaded chat file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    /// The first metadata record, when there is one.
    pub identity: Option<Identity>,
    /// All session fields, merged in order.
    pub metadata: Metadata,
    /// The messages said and not rewound, in the order they were first recorded.
    pub messages: Vec<MessageRecord>,
    /// Whether the file holds messages at all (a list or a message record).
    pub has_messages: bool,
    /// Whether any part of the file was JSON.
    pub parsed_any: bool,
}

/// Loads a chat file's text. Never fails: what cannot be read is skipped.
pub fn load(text: &str) -> Conversation {
    let mut replay = Replay::default();
    for value in values(text) {
        replay.conversation.parsed_any = true;
        replay.apply(value);
    }
    replay.finish()
}

/// The identity of a chat file, reading no further than its first metadata record.
pub fn identity(text: &str) -> Option<Identity> {
    values(text).find_map(|value| match Record::classify(value) {
        Some(Record::Metadata(meta)) => identity_of(&meta),
        _ => None,
    })
}

/// The file's JSON values: the whole text when it is one value (a legacy
/// file), else each line that parses. Blank and broken lines — a half-written
/// last line while Gemini runs — are skipped.
fn values(text: &str) -> Box<dyn Iterator<Item = Value> + '_> {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => Box::new(std::iter::once(value)),
        Err(_) => {
            Box::new(text::lines(text).filter_map(|line| serde_json::from_str::<Value>(line).ok()))
        }
    }
}

fn identity_of(meta: &Metadata) -> Option<Identity> {
    Some(Identity {
        session_id: meta.session_id.clone()?,
        start_time: meta.start_time.clone(),
    })
}

#[derive(Default)]
struct Replay {
    conversation: Conversation,
    store: HashMap<Key, MessageRecord>,
    said: Vec<Key>,
    visible: Vec<Key>,
    visible_set: HashSet<Key>,
}

impl Replay {
    fn apply(&mut self, value: Value) {
        match Record::classify(value) {
            Some(Record::Rewind(id)) => self.rewind(&Key::Id(id)),
            Some(Record::Message(message)) => {
                self.conversation.has_messages = true;
                if let Some(id) = message.id.clone() {
                    self.append(Key::Id(id), message);
                }
            }
            Some(Record::Set(mut patch)) => {
                if let Some(list) = patch.messages.take() {
                    self.conversation.has_messages = true;
                    self.replace(list);
                }
                self.conversation.metadata.merge(patch);
            }
            Some(Record::Metadata(mut meta)) => {
                if self.conversation.identity.is_none() {
                    self.conversation.identity = identity_of(&meta);
                }
                if let Some(list) = meta.messages.take() {
                    self.conversation.has_messages = true;
                    for (key, message) in keyed(list) {
                        self.append(key, message);
                    }
                }
                self.conversation.metadata.merge(meta);
            }
            None => {}
        }
    }

    /// Stores the latest copy of a message; a new one goes last in the said list.
    fn store(&mut self, key: Key, message: MessageRecord) {
        if !self.store.contains_key(&key) {
            self.said.push(key.clone());
        }
        self.store.insert(key, message);
    }

    /// A message record: Gemini's `Map.set`.
    fn append(&mut self, key: Key, message: MessageRecord) {
        if self.visible_set.insert(key.clone()) {
            self.visible.push(key.clone());
        }
        self.store(key, message);
    }

    /// `$set.messages`: the visible history becomes `list`.
    fn replace(&mut self, list: Vec<Value>) {
        self.visible.clear();
        self.visible_set.clear();
        for (key, message) in keyed(list) {
            self.append(key, message);
        }
    }

    /// `$rewindTo`: drops the target and every visible message after it, or
    /// every visible message when the target is not visible.
    fn rewind(&mut self, target: &Key) {
        let from = self
            .visible
            .iter()
            .position(|key| key == target)
            .unwrap_or(0);
        let removed: HashSet<Key> = self.visible.split_off(from).into_iter().collect();
        for key in &removed {
            self.visible_set.remove(key);
            self.store.remove(key);
        }
        self.said.retain(|key| !removed.contains(key));
    }

    fn finish(mut self) -> Conversation {
        let store = &mut self.store;
        self.conversation.messages = self
            .said
            .iter()
            .filter_map(|key| store.remove(key))
            .collect();
        self.conversation
    }
}

/// The messages of a list with their keys: the id, else the position.
fn keyed(list: Vec<Value>) -> impl Iterator<Item = (Key, MessageRecord)> {
    list.into_iter().enumerate().map(|(index, value)| {
        let message: MessageRecord = read(value);
        let key = match &message.id {
            Some(id) => Key::Id(id.clone()),
            None => Key::Position(index),
        };
        (key, message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(conversation: &Conversation) -> Vec<String> {
        conversation
            .messages
            .iter()
            .map(|m| m.id.clone().unwrap_or_default())
            .collect()
    }

    fn texts(conversation: &Conversation) -> Vec<String> {
        conversation
            .messages
            .iter()
            .map(|m| m.content.as_str().unwrap_or_default().to_string())
            .collect()
    }

    const META: &str = r#"{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z"}"#;

    fn jsonl(lines: &[&str]) -> Conversation {
        let mut all = vec![META];
        all.extend_from_slice(lines);
        load(&all.join("\n"))
    }

    fn is_session(c: &Conversation) -> bool {
        c.identity.is_some() && c.has_messages
    }

    #[test]
    fn a_reappended_id_replaces_in_place() {
        let c = jsonl(&[
            r#"{"id":"a","type":"user","content":"one"}"#,
            r#"{"id":"b","type":"gemini","content":"two"}"#,
            r#"{"id":"a","type":"user","content":"one again"}"#,
        ]);
        assert_eq!(ids(&c), ["a", "b"]);
        assert_eq!(texts(&c), ["one again", "two"]);
    }

    #[test]
    fn rewind_drops_the_target_and_what_follows() {
        let c = jsonl(&[
            r#"{"id":"a","content":"1"}"#,
            r#"{"id":"b","content":"2"}"#,
            r#"{"id":"c","content":"3"}"#,
            r#"{"$rewindTo":"b"}"#,
            r#"{"id":"d","content":"4"}"#,
        ]);
        assert_eq!(ids(&c), ["a", "d"]);
    }

    #[test]
    fn rewind_to_an_unknown_id_clears_all() {
        let c = jsonl(&[
            r#"{"id":"a","content":"1"}"#,
            r#"{"$rewindTo":"zzz"}"#,
            r#"{"id":"b","content":"2"}"#,
        ]);
        assert_eq!(ids(&c), ["b"]);
    }

    #[test]
    fn replacement_keeps_dropped_messages_and_appends_new_ones() {
        let c = jsonl(&[
            r#"{"id":"a","content":"1"}"#,
            r#"{"id":"b","content":"2"}"#,
            r#"{"id":"c","content":"3"}"#,
            r#"{"$set":{"messages":[{"id":"s","content":"summary"},{"id":"c","content":"3'"}]}}"#,
            r#"{"id":"d","content":"4"}"#,
        ]);
        assert_eq!(ids(&c), ["a", "b", "c", "s", "d"]);
        assert_eq!(texts(&c)[2], "3'");
    }

    #[test]
    fn rewind_after_a_replacement_spares_what_it_dropped() {
        let c = jsonl(&[
            r#"{"id":"a","content":"1"}"#,
            r#"{"id":"b","content":"2"}"#,
            r#"{"$set":{"messages":[{"id":"s","content":"summary"},{"id":"b","content":"2"}]}}"#,
            r#"{"$rewindTo":"b"}"#,
        ]);
        assert_eq!(ids(&c), ["a", "s"]);
    }

    #[test]
    fn identity_is_the_first_metadata_record() {
        let text = [
            r#"{"sessionId":"x","projectHash":"h","startTime":"T1"}"#,
            r#"{"$set":{"messages":[{"id":"m","content":"hi"}]}}"#,
            r#"{"sessionId":"x","projectHash":"h","startTime":"T2"}"#,
        ]
        .join("\n");
        let c = load(&text);
        let first = Some(Identity {
            session_id: "x".into(),
            start_time: Some("T1".into()),
        });
        assert_eq!(c.identity, first);
        assert_eq!(identity(&text), first);
        assert_eq!(c.metadata.start_time.as_deref(), Some("T2"));
    }

    #[test]
    fn legacy_json_is_one_object() {
        let text = "{\n  \"sessionId\": \"s\",\n  \"startTime\": \"T\",\n  \"messages\": [\n    {\"id\": \"a\", \"content\": \"1\"},\n    {\"content\": \"no id\"}\n  ]\n}";
        let c = load(text);
        assert!(is_session(&c));
        assert_eq!(texts(&c), ["1", "no id"]);
        assert_eq!(c.messages[1].id, None);
        assert_eq!(identity(text).map(|i| i.session_id).as_deref(), Some("s"));
    }

    #[test]
    fn broken_lines_are_skipped_and_other_json_is_no_session() {
        let c = jsonl(&[r#"{"id":"a","content":"1"}"#, "", "{\"id\":\"b\",\"con"]);
        assert_eq!(ids(&c), ["a"]);
        assert!(!is_session(&load(r#"[{"sessionId":"s"}]"#)));
        assert!(!is_session(&load(r#"{"clientHistory":[],"toolCall":{}}"#)));
        assert!(!is_session(&load(META)));
        assert!(!load("").parsed_any);
    }
}
