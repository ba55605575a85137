//! The messages of a rollout, each said once.
//!
//! Codex records what was said twice or three times: as a `response_item`
//! message (what the model saw), as an `event_msg` `user_message` /
//! `agent_message` (what the UI showed) and, since 2026, as an
//! `item_completed` event. Which comes first varies (the user's response item
//! precedes its event, the agent's event usually precedes its response item).
//! Some turns have only one of them: events without response items in the
//! history a fork copies, response items without events in legacy files.
//!
//! A record therefore joins the message just before it when that message has
//! the same role and text and was not yet seen in a record of this source;
//! otherwise it starts a new message. "The same text" ignores whitespace: a
//! message of several text parts (an approval review's prompt has a dozen)
//! is one string in its events, the parts joined with nothing between, while
//! the response item's parts are trimmed and joined by a blank line. The first record of a message gives its
//! text and time, so a file read while Codex writes it (between a message's
//! two records) yields the same messages, and never more, as the complete file.

use deja_plugin_api::{Message, Role};

/// Where a message was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A `response_item` message.
    Item,
    /// A `user_message` / `agent_message` event.
    Event,
    /// An `item_completed` event.
    Completed,
}

impl Source {
    fn bit(self) -> u8 {
        match self {
            Source::Item => 1,
            Source::Event => 2,
            Source::Completed => 4,
        }
    }
}

/// The messages so far, and the sources the last one was seen in.
#[derive(Debug, Default)]
pub struct Conversation {
    messages: Vec<Message>,
    last_sources: u8,
}

impl Conversation {
    /// Records that `role` said `text` at `timestamp_ms`, as seen in `source`.
    pub fn say(&mut self, role: Role, text: String, timestamp_ms: i64, source: Source) {
        if let Some(last) = self.messages.last() {
            let twin = last.role == role && same_words(last.text.as_str(), &text);
            if twin && self.last_sources & source.bit() == 0 {
                self.last_sources |= source.bit();
                return;
            }
        }
        self.messages.push(Message::new(role, text, timestamp_ms));
        self.last_sources = source.bit();
    }

    /// The messages, in order.
    pub fn into_messages(self) -> Vec<Message> {
        self.messages
    }
}

/// Whether `a` and `b` are the same text once whitespace is left out.
fn same_words(a: &str, b: &str) -> bool {
    a == b
        || a.chars()
            .filter(|c| !c.is_whitespace())
            .eq(b.chars().filter(|c| !c.is_whitespace()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Role::{Assistant, User};
    use Source::{Completed, Event, Item};

    fn run(records: &[(Role, &str, i64, Source)]) -> Vec<(Role, String, i64)> {
        let mut c = Conversation::default();
        for (role, text, at, source) in records {
            c.say(*role, text.to_string(), *at, *source);
        }
        c.into_messages()
            .into_iter()
            .map(|m| (m.role, m.text.into_string(), m.timestamp_ms))
            .collect()
    }

    #[test]
    fn twins_are_one_message_timed_by_the_first() {
        let got = run(&[
            (User, "hi", 1, Item),
            (User, "hi", 2, Event),
            (Assistant, "hello", 3, Event),
            (Assistant, "hello", 4, Item),
            (User, "q", 5, Item),
            (User, "q", 5, Completed),
            (User, "q", 6, Event),
        ]);
        assert_eq!(
            got,
            [
                (User, "hi".into(), 1),
                (Assistant, "hello".into(), 3),
                (User, "q".into(), 5)
            ]
        );
    }

    #[test]
    fn the_same_words_said_again_are_another_message() {
        let got = run(&[
            (User, "A", 1, Item),
            (User, "A", 1, Event),
            (User, "A", 2, Item),
            (User, "A", 2, Event),
        ]);
        assert_eq!(got.len(), 2);
        // Twice from one source, with nothing between: said twice.
        assert_eq!(
            run(&[(User, "A", 1, Event), (User, "A", 2, Event)]).len(),
            2
        );
    }

    #[test]
    fn parts_joined_differently_are_twins() {
        let got = run(&[
            (User, "Review this:\n\n>>> START\n\n[1] user: go", 1, Item),
            (User, "Review this:\n>>> START\n[1] user: go\n", 2, Event),
            (User, "Review this:>>> START\n[1] user: go", 3, Completed),
        ]);
        assert_eq!(
            got,
            [(User, "Review this:\n\n>>> START\n\n[1] user: go".into(), 1)]
        );
        // Other words are another message, whatever the whitespace.
        assert_eq!(
            run(&[(User, "a b", 1, Item), (User, "a c", 2, Event)]).len(),
            2
        );
    }

    #[test]
    fn lone_events_and_items_are_messages() {
        let got = run(&[(Assistant, "copied", 1, Event), (Assistant, "own", 2, Item)]);
        assert_eq!(got.len(), 2);
    }
}
