//! A rollout read line by line into deja's [`Session`]: identity, times,
//! project, title, parent, messages and tool activity.
//!
//! Every decision about a line depends only on the lines before it, so a
//! rollout read while Codex is still appending to it gives the messages and
//! records a later read starts with.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use deja_plugin_api::{
    CommandOutcome, Message, ParseOutput, ParseOutputV1_3, Project, RString, Role, Session,
    SessionEdits, SessionOutcomes,
};

use crate::context;
use crate::conversation::{Conversation, Source};
use crate::ids::{self, Identity};
use crate::jsonl;
use crate::outcome;
use crate::paths;
use crate::record::{self, Event, Item, Line, Meta, Part, Record};
use crate::title;
use crate::tools::Activity;

/// What the lines of a rollout add up to.
#[derive(Debug, Default)]
struct Reading {
    /// The first metadata line.
    meta: Option<Meta>,
    /// The first and the latest line timestamps, and the greatest.
    first_ms: Option<i64>,
    last_ms: Option<i64>,
    max_ms: Option<i64>,
    /// The project directory's candidates, by source.
    turn_cwd_first: Option<String>,
    environment_cwd: Option<String>,
    /// The current turn's directory (for relative paths).
    turn_cwd: Option<String>,
    /// Inside `entered_review_mode` ... `exited_review_mode`.
    in_review: bool,
    /// The last `thread_name_updated`.
    thread_name: Option<String>,
    conversation: Conversation,
    activity: Activity,
    /// The commands each call recorded, by `call_id`.
    calls: HashMap<String, Range<usize>>,
    /// The outcome each call's result gives, by `call_id`.
    results: HashMap<String, CommandOutcome>,
    /// Whether any line was a JSON object.
    parsed_any: bool,
}

/// What resuming needs to know of a rollout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// The project directory.
    pub dir: Option<String>,
    /// The first metadata line.
    pub meta: Option<Meta>,
}

/// The project directory and metadata of the rollout `text`.
pub fn summary(text: &str) -> Summary {
    let reading = read(text, 0);
    Summary {
        dir: reading.project_dir(),
        meta: reading.meta,
    }
}

fn read(text: &str, modified_ms: i64) -> Reading {
    let mut reading = Reading::default();
    for (index, object) in jsonl::objects(text).enumerate() {
        reading.parsed_any = true;
        let before = reading.activity.commands.len();
        reading.line(
            record::classify(&object, index == 0),
            index == 0,
            modified_ms,
        );
        let after = reading.activity.commands.len();
        if let Some(id) = outcome::call_id(&object).filter(|_| after > before) {
            reading.calls.entry(id).or_insert(before..after);
        }
        if let Some((id, result)) = outcome::result(&object) {
            reading.results.entry(id).or_insert(result);
        }
    }
    reading
}

/// The parse result for the rollout `text` read from `path` (modified at `modified_ms`).
pub fn output(text: &str, path: &str, modified_ms: i64) -> ParseOutput {
    with_outcomes(text, path, modified_ms).output
}

/// [`output`], with the commands' outcomes and the edits' texts beside the
/// sessions.
pub fn with_outcomes(text: &str, path: &str, modified_ms: i64) -> ParseOutputV1_3 {
    let reading = read(text, modified_ms);
    let mut output = ParseOutputV1_3::default();
    if !reading.parsed_any {
        if is_complete_but_foreign(text) {
            output.output.warnings.push(RString::from(format!(
                "`{path}` holds no Codex record (a truncated copy or a Git LFS pointer?); skipped"
            )));
        }
        return output;
    }
    let outcomes = reading.outcomes();
    let edits = SessionEdits::from_texts(reading.activity.edits.clone());
    let session = reading.into_session(path, modified_ms);
    if session.messages.is_empty() {
        output.output.skipped_empty = 1;
    } else {
        output.output.sessions.push(session);
        output.outcomes.push(SessionOutcomes {
            commands: outcomes.into(),
        });
        output.edits.push(edits);
    }
    output
}

/// A file that ends its last line (so is not being written) yet holds no JSON line.
fn is_complete_but_foreign(text: &str) -> bool {
    text.ends_with('\n') && !text.trim().is_empty()
}

impl Reading {
    /// Each command's outcome, in order: the one its call's result gives
    /// when the call ran that command alone, else unknown.
    fn outcomes(&self) -> Vec<CommandOutcome> {
        let mut outcomes = vec![CommandOutcome::default(); self.activity.commands.len()];
        for (id, range) in &self.calls {
            if range.len() != 1 {
                continue;
            }
            if let (Some(result), Some(slot)) =
                (self.results.get(id), outcomes.get_mut(range.start))
            {
                *slot = *result;
            }
        }
        outcomes
    }

    /// Reads one line; `first` says whether it is the file's first record.
    fn line(&mut self, line: Line, first: bool, modified_ms: i64) {
        let stamp = line.timestamp_ms.or(match &line.record {
            Record::Meta(meta) => meta.timestamp_ms,
            _ => None,
        });
        if let Some(ms) = stamp {
            self.first_ms.get_or_insert(ms);
            self.last_ms = Some(ms);
            self.max_ms = Some(self.max_ms.map_or(ms, |m| m.max(ms)));
        }
        let at = self.last_ms.unwrap_or(modified_ms);
        match line.record {
            // Codex writes the thread's own metadata first. A later one is a
            // resumed or forked thread's copy; and were identity taken from a
            // later line, a file read before that line would get another id.
            Record::Meta(meta) => {
                if first {
                    self.meta = Some(meta);
                }
            }
            Record::TurnContext { cwd } => {
                if let Some(cwd) = cwd {
                    self.turn_cwd_first.get_or_insert_with(|| cwd.clone());
                    self.turn_cwd = Some(cwd);
                }
            }
            Record::Item(Item::Message { role, parts }) => self.message(&role, &parts, at),
            Record::Item(item) => {
                let cwd = self.current_cwd().map(String::from);
                self.activity.item(&item, cwd.as_deref(), at);
            }
            Record::Event(event) => self.event(event, at),
            Record::Other => {}
        }
    }

    fn message(&mut self, role: &str, parts: &[Part], at: i64) {
        let texts: Vec<&str> = parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(text) => Some(text.as_str()),
                Part::Other => None,
            })
            .collect();
        match role {
            "user" => {
                for text in &texts {
                    if self.environment_cwd.is_none() {
                        self.environment_cwd = context::environment_cwd(text);
                    }
                    if let Some(command) = context::user_shell_command(text) {
                        self.activity.user_command(command, at);
                    }
                }
                if let Some(typed) = context::typed_text(texts) {
                    self.conversation.say(Role::User, typed, at, Source::Item);
                }
            }
            "assistant" => self.agent_said(&texts.concat(), at, Source::Item),
            _ => {}
        }
    }

    fn event(&mut self, event: Event, at: i64) {
        match event {
            Event::EnteredReview => self.in_review = true,
            Event::ExitedReview => self.in_review = false,
            Event::ThreadName(name) => self.thread_name = Some(name),
            // What a review sub-agent says is forwarded to its parent's
            // rollout as events; it is the sub-agent's, in its own rollout.
            _ if self.in_review => {}
            Event::UserMessage { text, kind } => {
                if kind.is_none_or(|k| k == "plain") {
                    self.user_said(&text, at, Source::Event);
                }
            }
            Event::UserItem { text } => self.user_said(&text, at, Source::Completed),
            Event::AgentMessage { text } => self.agent_said(&text, at, Source::Event),
            Event::AgentItem { text } => self.agent_said(&text, at, Source::Completed),
            Event::Other => {}
        }
    }

    fn user_said(&mut self, text: &str, at: i64, source: Source) {
        if let Some(typed) = context::typed_text([text]) {
            self.conversation.say(Role::User, typed, at, source);
        }
    }

    fn agent_said(&mut self, text: &str, at: i64, source: Source) {
        let text = text.trim();
        if !text.is_empty() {
            self.conversation
                .say(Role::Assistant, text.to_string(), at, source);
        }
    }

    /// The directory relative paths of the current turn resolve against.
    fn current_cwd(&self) -> Option<&str> {
        self.turn_cwd
            .as_deref()
            .or(self.meta.as_ref().and_then(|m| m.cwd.as_deref()))
            .or(self.environment_cwd.as_deref())
    }

    /// `session_meta.cwd`, else the first `turn_context.cwd`, else the first
    /// `<environment_context>`'s `<cwd>`.
    fn project_dir(&self) -> Option<String> {
        self.meta
            .as_ref()
            .and_then(|m| m.cwd.clone())
            .or_else(|| self.turn_cwd_first.clone())
            .or_else(|| self.environment_cwd.clone())
    }

    fn into_session(self, path: &str, modified_ms: i64) -> Session {
        let file_name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let Identity { id, native_id } = ids::identity(self.meta.as_ref(), file_name);
        let legacy = self.meta.as_ref().is_some_and(|m| m.legacy);
        let started = self.first_ms.unwrap_or(modified_ms);
        let updated = if legacy {
            modified_ms.max(started)
        } else {
            self.max_ms.unwrap_or(started).max(started)
        };
        let dir = self.project_dir();
        let parent = self.meta.as_ref().and_then(|m| {
            m.forked_from_id
                .clone()
                .or_else(|| m.parent_thread_id.clone())
                .filter(|p| *p != native_id)
        });
        let title = title::indexed(Path::new(path), &native_id).or(self.thread_name);

        let mut session = Session::new(id, native_id, started, updated);
        session.project = Project {
            name: dir
                .as_deref()
                .and_then(paths::basename)
                .map(RString::from)
                .into(),
            dir: dir.map(RString::from).into(),
            id: None.into(),
        };
        session.title = title.map(RString::from).into();
        session.parent_id = parent.map(RString::from).into();
        let messages: Vec<Message> = self.conversation.into_messages();
        session.messages = messages.into();
        session.files = self.activity.files.into();
        session.commands = self.activity.commands.into();
        session
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: &str = "/h/.codex/sessions/2026/01/01/rollout-2026-01-01T00-00-00-00000000-0000-4000-8000-000000000001.jsonl";

    #[test]
    fn nothing_parsed_is_no_session() {
        let out = output("", PATH, 0);
        assert_eq!(out, ParseOutput::default());
        let torn = output("{\"timestamp\":\"2026", PATH, 0);
        assert_eq!(torn, ParseOutput::default());
        let foreign = output("version https://git-lfs.github.com/spec/v1\n", PATH, 0);
        assert_eq!(foreign.warnings.len(), 1);
    }

    #[test]
    fn only_a_first_line_session_meta_names_the_session() {
        let said = "{\"timestamp\":\"2026-01-01T00:00:01Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"user_message\",\"message\":\"hi\"}}\n";
        let late_meta = "{\"timestamp\":\"2026-01-01T00:00:02Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"other\",\"cwd\":\"/x\"}}\n";
        let before = output(said, PATH, 0);
        let after = output(&format!("{said}{late_meta}"), PATH, 0);
        assert_eq!(before.sessions[0].id, after.sessions[0].id);
        assert_eq!(
            after.sessions[0].native_id.as_str(),
            "00000000-0000-4000-8000-000000000001"
        );
        assert!(after.sessions[0].project.dir.is_none());
    }

    #[test]
    fn a_rollout_without_messages_is_skipped() {
        let text = "{\"timestamp\":\"2026-01-01T00:00:00Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"x\"}}\n";
        let out = output(text, PATH, 0);
        assert!(out.sessions.is_empty());
        assert_eq!(out.skipped_empty, 1);
    }
}
