//! One session built record by record: its messages, its files and
//! commands, its times, working directories and title records.
//!
//! - A `user` record says what [`crate::content::user`] finds in it, unless
//!   it is injected (`isMeta`), a compaction summary, a local command's
//!   input or output (a child of the caveat Claude Code writes before them),
//!   or a copy ([`crate::lineage`]).
//! - An `assistant` record adds its text to the message of its API reply:
//!   the records that share a `message.id` are one message, placed where its
//!   first text appears; text a record repeats is not added twice. Made-up
//!   replies (`<synthetic>`, API errors) say nothing.
//! - Tool calls become files and commands records ([`crate::tools`]), once
//!   per call id; a call whose result says it did not happen is dropped. A
//!   Bash call's result gives its outcome ([`crate::tools::shell_outcome`]).
//! - Queued prompts delivered mid-turn are the person's messages ([`crate::queue`]).
//! - Every record's timestamp counts for the session's start and end; a
//!   record without one takes the last one seen, else the file's time.

use std::collections::{HashMap, HashSet};

use deja_plugin_api::{
    CommandOrigin, CommandOutcome, CommandRecord, FileRecord, Message, Project, RString, Role,
};
use serde_json::Value;

use crate::content;
use crate::lineage::{Lineage, Turn};
use crate::project;
use crate::queue::Queue;
use crate::records::{result_text, Block, Record};
use crate::time;
use crate::title::Titles;
use crate::tools::{self, Effect};
use deja_plugin_api::paths;

/// A session under construction.
#[derive(Debug, Default)]
pub struct Builder {
    lineage: Lineage,
    queue: Queue,
    messages: Vec<Message>,
    replies: HashMap<String, Reply>,
    activity: Vec<Act>,
    calls: HashMap<String, usize>,
    first_ms: Option<i64>,
    last_ms: Option<i64>,
    cwds: Vec<String>,
    titles: Titles,
    conversation: bool,
    first_user: Option<String>,
    /// Local-command caveats: their child records are the command's input and output.
    caveats: HashSet<String>,
}

/// The message of one API reply, and the texts it already holds.
#[derive(Debug)]
struct Reply {
    index: usize,
    texts: HashSet<String>,
}

/// A tool call or bash-mode command.
#[derive(Debug)]
struct Act {
    effect: Effect,
    origin: CommandOrigin,
    at: i64,
    cwd: Option<String>,
    happened: bool,
    outcome: CommandOutcome,
    /// What an edit wrote.
    text: Option<String>,
}

/// What a finished builder holds.
#[derive(Debug)]
pub struct Built {
    /// The messages, in order.
    pub messages: Vec<Message>,
    /// Files touched; relative paths resolved against the record's directory.
    pub files: Vec<FileRecord>,
    /// Commands run.
    pub commands: Vec<CommandRecord>,
    /// How each of them ended, in the same order.
    pub outcomes: Vec<CommandOutcome>,
    /// What each file record's edit wrote, in the order of `files`.
    pub edits: Vec<Option<String>>,
    /// The earliest and latest record times.
    pub span: Option<(i64, i64)>,
    /// Where it ran ([`crate::project`]).
    pub project: Project,
    /// Its title, where Claude Code recorded one ([`crate::title`]).
    pub title: Option<String>,
    /// Whether it held any conversation record at all.
    pub conversation: bool,
    /// The first thing the user said.
    pub first_user: Option<String>,
}

impl Builder {
    /// Adds one record; `fallback_ms` is the time of a record without one when
    /// no earlier record had one either.
    pub fn add(&mut self, record: &Record, fallback_ms: i64) {
        if self.lineage.repeated(record.uuid.as_deref()) {
            return;
        }
        let at = match time::parse_ms(record.timestamp.as_deref()) {
            Some(ms) => {
                self.first_ms = Some(self.first_ms.map_or(ms, |f| f.min(ms)));
                self.last_ms = Some(self.last_ms.map_or(ms, |l| l.max(ms)));
                ms
            }
            None => self.last_ms.unwrap_or(fallback_ms),
        };
        if let Some(cwd) = record.cwd.as_deref().filter(|c| !c.trim().is_empty()) {
            if !self.cwds.iter().any(|known| known == cwd) {
                self.cwds.push(cwd.to_string());
            }
        }
        match record.kind() {
            "user" => self.user(record, at),
            "assistant" => self.assistant(record, at),
            "summary" => self
                .titles
                .summary(record.summary.as_deref(), record.leaf_uuid.as_deref()),
            "custom-title" => self.titles.custom(record.custom_title.as_deref()),
            "agent-name" => self.titles.agent_name(record.agent_name.as_deref()),
            "ai-title" => self.titles.ai(record.ai_title.as_deref()),
            "queue-operation" => self.queued(record, at),
            "attachment" => self.attachment(record, at),
            _ => self.passive(record),
        }
    }

    fn passive(&mut self, record: &Record) {
        self.lineage.passive(record.uuid.as_deref(), parent(record));
    }

    fn user(&mut self, record: &Record, at: i64) {
        self.conversation = true;
        for block in record.blocks() {
            if let Block::ToolResult {
                tool_use_id: Some(id),
                is_error,
                content,
            } = block
            {
                self.result(id, is_error, &result_text(content));
            }
        }
        if content::is_local_caveat(record) {
            if let Some(uuid) = &record.uuid {
                self.caveats.insert(uuid.clone());
            }
        }
        if record.is_meta || record.is_compact_summary || record.is_visible_in_transcript_only {
            return self.passive(record);
        }
        let mut said = content::user(record);
        if parent(record).is_some_and(|p| self.caveats.contains(p)) {
            // Local-command output (`Unknown skill: x`); bash-mode input stays a command.
            said.said.clear();
        }
        if said.is_empty() {
            return self.passive(record);
        }
        let payload = format!("{}\n{}", said.said, said.shell.join("\n"));
        let uuid = record.uuid.as_deref();
        if self.lineage.user(uuid, parent(record), &payload) == Turn::Copy {
            return;
        }
        if !said.said.is_empty() {
            self.say(Role::User, said.said, at, uuid);
        }
        for command in said.shell {
            self.act(
                Effect::Shell(command),
                CommandOrigin::User,
                at,
                record,
                None,
            );
        }
    }

    fn assistant(&mut self, record: &Record, at: i64) {
        self.conversation = true;
        let message_id = record.message.as_ref().and_then(|m| m.id.as_deref());
        self.lineage.reply(record.uuid.as_deref(), message_id);
        if content::is_synthetic(record) {
            return;
        }
        for block in record.blocks() {
            if let Block::ToolUse { id, name, input } = block {
                if let Some(effect) = tools::effect(name, input) {
                    if self.act(effect, CommandOrigin::Agent, at, record, id) {
                        if let Some(act) = self.activity.last_mut() {
                            act.text = tools::edit_text(name, input);
                        }
                    }
                }
            }
        }
        let texts = content::assistant_texts(record);
        if texts.is_empty() {
            return;
        }
        let key = message_id
            .map(|id| format!("m:{id}"))
            .or_else(|| record.uuid.as_deref().map(|u| format!("u:{u}")));
        if let Some(reply) = key.as_ref().and_then(|k| self.replies.get_mut(k)) {
            for text in texts {
                if reply.texts.insert(text.to_string()) {
                    if let Some(message) = self.messages.get_mut(reply.index) {
                        let joined = format!("{}\n\n{text}", message.text);
                        message.text = RString::from(joined);
                    }
                }
            }
            return;
        }
        let index = self.messages.len();
        let native = message_id.or(record.uuid.as_deref());
        self.say(Role::Assistant, texts.join("\n\n"), at, native);
        if let Some(key) = key {
            let texts = texts.into_iter().map(String::from).collect();
            self.replies.insert(key, Reply { index, texts });
        }
    }

    fn queued(&mut self, record: &Record, at: i64) {
        let operation = record.operation.as_deref().unwrap_or_default();
        if let Some(delivered) = self.queue.operation(
            operation,
            record.content.as_str(),
            record.timestamp.as_deref(),
        ) {
            if let content::Typed::Said(text) = content::typed(&delivered.text) {
                let when = time::parse_ms(delivered.timestamp.as_deref()).unwrap_or(at);
                self.conversation = true;
                self.say(Role::User, text, when, None);
            }
        }
    }

    fn attachment(&mut self, record: &Record, at: i64) {
        self.passive(record);
        let attachment = &record.attachment;
        if attachment.get("type").and_then(Value::as_str) != Some("queued_command") {
            return;
        }
        let prompt = match attachment.get("prompt") {
            Some(Value::String(text)) => text.clone(),
            Some(blocks @ Value::Array(_)) => result_text(blocks),
            _ => return,
        };
        if !self.queue.attachment(&prompt) {
            return;
        }
        let mode = attachment.get("commandMode").and_then(Value::as_str);
        match (mode, content::typed(&prompt)) {
            (Some("bash"), _) => {
                let command = prompt.trim().to_string();
                if !command.is_empty() {
                    self.act(
                        Effect::Shell(command),
                        CommandOrigin::User,
                        at,
                        record,
                        None,
                    );
                }
            }
            (_, content::Typed::Said(text)) => {
                self.conversation = true;
                self.say(Role::User, text, at, record.uuid.as_deref());
            }
            _ => {}
        }
    }

    fn say(&mut self, role: Role, text: String, at: i64, native_id: Option<&str>) {
        if role == Role::User && self.first_user.is_none() {
            self.first_user = Some(text.clone());
        }
        let mut message = Message::new(role, text, at);
        message.native_id = native_id.map(RString::from).into();
        self.messages.push(message);
    }

    fn act(
        &mut self,
        effect: Effect,
        origin: CommandOrigin,
        at: i64,
        record: &Record,
        call_id: Option<&str>,
    ) -> bool {
        if let Some(id) = call_id {
            if self.calls.contains_key(id) {
                return false;
            }
            self.calls.insert(id.to_string(), self.activity.len());
        }
        self.activity.push(Act {
            effect,
            origin,
            at,
            cwd: record.cwd.clone(),
            happened: true,
            outcome: CommandOutcome::default(),
            text: None,
        });
        true
    }

    /// The call `id` returned `text`, an error when `is_error`: a call
    /// that did not happen is dropped, a shell command's outcome noted.
    fn result(&mut self, id: &str, is_error: bool, text: &str) {
        if let Some(act) = self.calls.get(id).and_then(|&i| self.activity.get_mut(i)) {
            if is_error && !tools::happened_despite_error(&act.effect, text) {
                act.happened = false;
            }
            if let Effect::Shell(_) = act.effect {
                act.outcome = tools::shell_outcome(is_error, text);
            }
        }
    }

    /// The session's contents, filed under the project folder `folder`;
    /// relative paths are resolved against the calling record's directory,
    /// else the project's.
    pub fn finish(self, folder: Option<&str>) -> Built {
        let cwds: Vec<&str> = self.cwds.iter().map(String::as_str).collect();
        let project = project::resolve(&cwds, folder);
        let project_dir = project::dir(&project);
        let mut files = Vec::new();
        let mut commands = Vec::new();
        let mut outcomes = Vec::new();
        let mut edits = Vec::new();
        for act in self.activity.into_iter().filter(|a| a.happened) {
            match act.effect {
                Effect::Shell(command) => {
                    commands.push(CommandRecord {
                        command: command.into(),
                        origin: act.origin,
                        timestamp_ms: act.at,
                    });
                    outcomes.push(act.outcome);
                }
                Effect::File(path, action) => {
                    let base = act.cwd.as_deref().or(project_dir);
                    let path = match base {
                        Some(dir) => paths::join(dir, &path),
                        None => path,
                    };
                    files.push(FileRecord {
                        path: path.into(),
                        action,
                        timestamp_ms: act.at,
                    });
                    edits.push(act.text);
                }
            }
        }
        let lineage = self.lineage;
        Built {
            title: self.titles.pick(|leaf| lineage.knows(leaf)),
            messages: self.messages,
            files,
            commands,
            outcomes,
            edits,
            span: self.first_ms.zip(self.last_ms),
            project: project.clone(),
            conversation: self.conversation,
            first_user: self.first_user,
        }
    }
}

/// The record a record follows: its parent, or across a compaction its logical parent.
fn parent(record: &Record) -> Option<&str> {
    record
        .parent_uuid
        .as_deref()
        .or(record.logical_parent_uuid.as_deref())
}
