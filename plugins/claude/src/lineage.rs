//! Records Claude Code wrote twice. Resuming or compacting a session can
//! re-append earlier records to the same file: newer versions copy them
//! verbatim (same `uuid`), 2.0-era versions rewrite them with new `uuid`s, a
//! new timestamp, user turns split into several records, but the same API
//! `message.id` for each reply. Copies are not said again.
//!
//! Every record has an *identity*: a reply is `a:<message.id>`; a user record
//! that says something is `u:<uuid>`, or the identity of the user record it
//! copies; any other record takes its parent's. A user record is a copy when
//! an earlier one said the same thing after the same identity: the same words
//! in the same place of the conversation. The same words after a different
//! reply (a second "yes") are new. Only earlier records are consulted, so
//! appending records never changes what was decided for earlier ones.

use std::collections::{HashMap, HashSet};

/// The conversation tree seen so far.
#[derive(Debug, Default)]
pub struct Lineage {
    seen: HashSet<String>,
    identity: HashMap<String, String>,
    said: HashMap<(Option<String>, String), String>,
}

/// What a user record that says something is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// Said for the first time here.
    New,
    /// A copy of an earlier record.
    Copy,
}

impl Lineage {
    /// Whether a record with this `uuid` was already seen (a verbatim copy).
    /// Records without a uuid are never copies.
    pub fn repeated(&mut self, uuid: Option<&str>) -> bool {
        match uuid {
            Some(uuid) => !self.seen.insert(uuid.to_string()),
            None => false,
        }
    }

    /// Whether a record with this uuid was seen.
    pub fn knows(&self, uuid: &str) -> bool {
        self.seen.contains(uuid)
    }

    /// The identity of the record `parent` names, if known.
    pub fn parent_identity(&self, parent: Option<&str>) -> Option<String> {
        self.identity.get(parent?).cloned()
    }

    /// A reply record: its identity is its API message id (else its uuid).
    pub fn reply(&mut self, uuid: Option<&str>, message_id: Option<&str>) {
        if let Some(uuid) = uuid {
            let identity = match message_id {
                Some(id) => format!("a:{id}"),
                None => format!("r:{uuid}"),
            };
            self.identity.insert(uuid.to_string(), identity);
        }
    }

    /// A record that says nothing: it takes its parent's identity.
    pub fn passive(&mut self, uuid: Option<&str>, parent: Option<&str>) {
        if let (Some(uuid), Some(identity)) = (uuid, self.parent_identity(parent)) {
            self.identity.insert(uuid.to_string(), identity);
        }
    }

    /// A user record that says `payload` after `parent`: new, or a copy.
    pub fn user(&mut self, uuid: Option<&str>, parent: Option<&str>, payload: &str) -> Turn {
        let key = (self.parent_identity(parent), payload.to_string());
        match self.said.get(&key) {
            Some(original) => {
                if let Some(uuid) = uuid {
                    self.identity.insert(uuid.to_string(), original.clone());
                }
                Turn::Copy
            }
            None => {
                // Without a uuid there is no place in the tree to compare.
                if let Some(uuid) = uuid {
                    let identity = format!("u:{uuid}");
                    self.identity.insert(uuid.to_string(), identity.clone());
                    self.said.insert(key, identity);
                }
                Turn::New
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbatim_copies_repeat_their_uuid() {
        let mut l = Lineage::default();
        assert!(!l.repeated(Some("a")));
        assert!(l.repeated(Some("a")));
        assert!(!l.repeated(None));
        assert!(!l.repeated(None));
    }

    #[test]
    fn rewritten_copies_say_the_same_after_the_same_reply() {
        let mut l = Lineage::default();
        // Original: u1 "hi" -> reply M (two records) -> tool result -> u2 "yes".
        assert_eq!(l.user(Some("u1"), None, "hi"), Turn::New);
        l.reply(Some("r1"), Some("M"));
        l.reply(Some("r2"), Some("M"));
        l.passive(Some("t1"), Some("r2"));
        assert_eq!(l.user(Some("u2"), Some("t1"), "yes"), Turn::New);
        // Copy: a root split into an IDE-only record and the words, new uuids.
        l.passive(Some("c0"), None);
        assert_eq!(l.user(Some("c1"), Some("c0"), "hi"), Turn::Copy);
        l.reply(Some("c2"), Some("M"));
        assert_eq!(l.user(Some("c3"), Some("c2"), "yes"), Turn::Copy);
        // A second "yes" after a new reply is new.
        l.reply(Some("r3"), Some("N"));
        assert_eq!(l.user(Some("u3"), Some("r3"), "yes"), Turn::New);
        // The same words after the same reply in another branch: one thing said.
        assert_eq!(l.user(Some("u4"), Some("r3"), "yes"), Turn::Copy);
    }

    #[test]
    fn records_without_uuids_are_always_new() {
        let mut l = Lineage::default();
        assert_eq!(l.user(None, None, "hi"), Turn::New);
        assert_eq!(l.user(None, None, "hi"), Turn::New);
    }
}
