//! Prompts typed while Claude is busy. Claude Code queues them
//! (`queue-operation` `enqueue`, with the typed `content`) and then either
//! `dequeue`s one, which is then written as an ordinary `user` record, or
//! `remove`s it because it was handed to the model in the middle of a turn,
//! in which case no `user` record follows: the queued text is the only copy
//! of what the person typed. Newer versions also write that hand-over as an
//! `attachment` of type `queued_command` carrying the same prompt.
//! `popAll` takes queued prompts back into the input box, unsent.
//!
//! A removed prompt becomes a user message where it was removed, and the
//! `queued_command` attachment that repeats it is not counted twice; an
//! attachment with no matching removal is a user message of its own.

use std::collections::VecDeque;

/// A prompt the person typed, handed to the model mid-turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    /// What they typed.
    pub text: String,
    /// When they typed it (RFC 3339), if recorded.
    pub timestamp: Option<String>,
}

/// The queue of typed prompts, replayed from `queue-operation` records.
#[derive(Debug, Default)]
pub struct Queue {
    waiting: VecDeque<Option<Delivered>>,
    /// Prompts already turned into messages at their removal, awaiting their attachment.
    announced: VecDeque<String>,
}

impl Queue {
    /// Applies one `queue-operation`; returns the prompt it delivers, if any.
    pub fn operation(
        &mut self,
        operation: &str,
        content: Option<&str>,
        timestamp: Option<&str>,
    ) -> Option<Delivered> {
        match operation {
            "enqueue" => {
                let prompt = content
                    .map(str::trim)
                    .filter(|text| !text.is_empty())
                    .map(|text| Delivered {
                        text: text.to_string(),
                        timestamp: timestamp.map(String::from),
                    });
                self.waiting.push_back(prompt);
                None
            }
            "dequeue" => {
                self.waiting.pop_front();
                None
            }
            "remove" => {
                let delivered = self.waiting.pop_front().flatten()?;
                self.announced.push_back(delivered.text.clone());
                Some(delivered)
            }
            "popAll" => {
                self.waiting.clear();
                None
            }
            _ => None,
        }
    }

    /// A `queued_command` attachment with `prompt`: whether it is news (not
    /// already delivered by a removal).
    pub fn attachment(&mut self, prompt: &str) -> bool {
        let prompt = prompt.trim();
        match self.announced.iter().position(|text| text == prompt) {
            Some(at) => {
                self.announced.remove(at);
                false
            }
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dequeued_prompts_are_not_delivered_here() {
        let mut q = Queue::default();
        assert_eq!(q.operation("enqueue", Some("next"), Some("t1")), None);
        assert_eq!(q.operation("dequeue", None, Some("t2")), None);
        assert_eq!(q.operation("remove", None, Some("t3")), None);
    }

    #[test]
    fn removed_prompts_are_delivered_once() {
        let mut q = Queue::default();
        q.operation("enqueue", Some(" stop "), Some("t1"));
        let delivered = q.operation("remove", None, Some("t2"));
        assert_eq!(
            delivered,
            Some(Delivered {
                text: "stop".into(),
                timestamp: Some("t1".into())
            })
        );
        assert!(!q.attachment("stop"));
        assert!(q.attachment("stop"));
    }

    #[test]
    fn queues_keep_their_order_and_pop_all_empties() {
        let mut q = Queue::default();
        q.operation("enqueue", None, None);
        q.operation("enqueue", Some("b"), None);
        assert_eq!(q.operation("remove", None, None), None);
        assert_eq!(
            q.operation("remove", None, None).map(|d| d.text),
            Some("b".into())
        );
        q.operation("enqueue", Some("c"), None);
        q.operation("popAll", None, None);
        assert_eq!(q.operation("remove", None, None), None);
        assert_eq!(q.operation("mystery", Some("x"), None), None);
    }
}
