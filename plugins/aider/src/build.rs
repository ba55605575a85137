//! Turns one session's blocks into its messages and its file and command
//! records. Every message and record gets the session's start time (aider
//! stores no other). Empty messages are left out; a user message's lines lose
//! aider's trailing spaces, `<blank>` becomes an empty line, and blank lines at
//! either end of a message are trimmed.
//!
//! In architect mode aider hands the architect model's reply to the editor
//! model as a new input and logs it as `####` lines. Such an input, identical
//! (line ends aside) to the assistant message just before it, or to its part
//! after the model's reasoning (`</think>`, `</thinking-content-...>`, which
//! aider removes before the hand-off), is not the user's and is left out.

use std::path::Path;

use deja_plugin_api::{CommandOrigin, CommandRecord, FileAction, FileRecord, Message, Role};

use crate::blocks::Block;
use crate::input::{self, Input};
use crate::lines;
use crate::output::{self, Effect};

/// What a session holds.
#[derive(Debug, Default)]
pub(crate) struct Content {
    /// Its messages, in order.
    pub messages: Vec<Message>,
    /// The files it touched.
    pub files: Vec<FileRecord>,
    /// The shell commands it ran.
    pub commands: Vec<CommandRecord>,
}

/// The content of the session made of `blocks`, started at `time`, whose
/// history lives in `dir` (relative file paths are resolved against it).
pub(crate) fn build(blocks: &[Block<'_>], dir: Option<&Path>, time: i64) -> Content {
    let mut builder = Builder {
        dir,
        time,
        content: Content::default(),
        relogged: None,
        last_reply: Vec::new(),
    };
    for block in blocks {
        match block {
            Block::User(parts) => builder.user(&user_text(parts)),
            Block::Assistant(text) => builder.assistant(text),
            Block::Tool(text) => builder.tool(text),
        }
    }
    builder.content
}

struct Builder<'p> {
    dir: Option<&'p Path>,
    time: i64,
    content: Content,
    /// The question of the last `/ask`-like command, until aider's own copy of it is seen.
    relogged: Option<String>,
    /// The last assistant message (and its answer after any reasoning), line
    /// ends trimmed, until the next user message.
    last_reply: Vec<String>,
}

impl Builder<'_> {
    fn user(&mut self, text: &str) {
        let relogged = self.relogged.take();
        match input::classify(text) {
            Input::Message(text) if relogged.is_some_and(|q| input::is_relog_of(&text, &q)) => {}
            Input::Message(text) if self.last_reply.contains(&text) => {}
            Input::Message(text) => self.user_message(text),
            Input::Dropped => {}
            Input::Question(question) => {
                self.user_message(question.clone());
                self.relogged = Some(question);
            }
            Input::Command(command) => self.command(command, CommandOrigin::User),
        }
    }

    fn user_message(&mut self, text: String) {
        self.last_reply.clear();
        self.message(Role::User, text);
    }

    fn assistant(&mut self, text: &[&str]) {
        self.relogged = None;
        let lines = trim_blank_lines(text);
        let answer = lines
            .iter()
            .rposition(|l| l.trim().starts_with("</think") && l.trim_end().ends_with('>'))
            .and_then(|end| lines.get(end + 1..))
            .unwrap_or_default();
        self.last_reply = [lines, trim_blank_lines(answer)]
            .iter()
            .map(|part| {
                part.iter()
                    .map(|l| l.trim_end())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .filter(|reply| !reply.is_empty())
            .collect();
        self.message(Role::Assistant, lines.join("\n"));
    }

    fn tool(&mut self, text: &str) {
        match output::effect(text) {
            Some(Effect::File(path, action)) => self.file(path, action),
            Some(Effect::Command(command)) => {
                self.command(command.to_string(), CommandOrigin::Agent)
            }
            None => {}
        }
    }

    fn message(&mut self, role: Role, text: String) {
        if !text.trim().is_empty() {
            self.content
                .messages
                .push(Message::new(role, text, self.time));
        }
    }

    fn command(&mut self, command: String, origin: CommandOrigin) {
        self.content.commands.push(CommandRecord {
            command: command.into(),
            origin,
            timestamp_ms: self.time,
        });
    }

    fn file(&mut self, path: &str, action: FileAction) {
        let path = match self.dir {
            Some(dir) if !is_absolute(path) => dir.join(path).to_string_lossy().into_owned(),
            _ => path.to_string(),
        };
        self.content.files.push(FileRecord {
            path: path.into(),
            action,
            timestamp_ms: self.time,
        });
    }
}

/// The text of a user input from the text of its lines.
fn user_text(parts: &[&str]) -> String {
    let lines: Vec<&str> = parts
        .iter()
        .map(|part| match part.trim_end() {
            "<blank>" => "",
            line => line,
        })
        .collect();
    trim_blank_lines(&lines).join("\n")
}

fn trim_blank_lines<'s>(lines: &'s [&'s str]) -> &'s [&'s str] {
    let start = lines
        .iter()
        .position(|l| !lines::is_blank(l))
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !lines::is_blank(l))
        .map_or(start, |i| i + 1);
    lines.get(start..end).unwrap_or_default()
}

/// Whether `path` is absolute, on Unix or on Windows (aider on Windows writes `C:\...`).
fn is_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    let drive = bytes.len() > 2
        && bytes.first().is_some_and(u8::is_ascii_alphabetic)
        && bytes.get(1) == Some(&b':')
        && matches!(bytes.get(2), Some(b'\\' | b'/'));
    drive || path.starts_with(['/', '\\']) || Path::new(path).is_absolute()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn texts(content: &Content) -> Vec<(Role, &str)> {
        content
            .messages
            .iter()
            .map(|m| (m.role, m.text.as_str()))
            .collect()
    }

    #[test]
    fn user_lines_lose_marks_and_blanks() {
        assert_eq!(
            user_text(&["a  ", "  ", "<blank>  ", "  b  ", "  "]),
            "a\n\n\n  b"
        );
        assert_eq!(user_text(&["<blank>  "]), "");
    }

    #[test]
    fn relogged_questions_appear_once() {
        let blocks = [
            Block::User(vec!["/ask why?  "]),
            Block::User(vec!["why?  "]),
            Block::Assistant(vec!["Because."]),
        ];
        let c = build(&blocks, None, 7);
        assert_eq!(
            texts(&c),
            vec![(Role::User, "why?"), (Role::Assistant, "Because.")]
        );
    }

    #[test]
    fn a_missing_relog_keeps_the_question() {
        let blocks = [
            Block::User(vec!["/code do it  "]),
            Block::Assistant(vec!["Done."]),
        ];
        let c = build(&blocks, None, 7);
        assert_eq!(
            texts(&c),
            vec![(Role::User, "do it"), (Role::Assistant, "Done.")]
        );
    }

    #[test]
    fn architect_hand_offs_are_not_the_users() {
        let blocks = [
            Block::User(vec!["fix it  "]),
            Block::Assistant(vec!["Change `a`:  ", "", "1. rename"]),
            Block::Tool("Edit the files? (Y)es/(N)o [Yes]: y"),
            Block::User(vec!["Change `a`:  ", "  ", "1. rename  "]),
            Block::Assistant(vec!["Done."]),
            Block::User(vec!["Done.  "]),
        ];
        let c = build(&blocks, None, 7);
        assert_eq!(
            texts(&c),
            vec![
                (Role::User, "fix it"),
                (Role::Assistant, "Change `a`:  \n\n1. rename"),
                (Role::Assistant, "Done."),
            ]
        );
    }

    #[test]
    fn hand_offs_leave_out_the_reasoning() {
        let blocks = [
            Block::User(vec!["fix it  "]),
            Block::Assistant(vec!["<think>", "hmm", "</think>", "", "Rename `a`."]),
            Block::User(vec!["Rename `a`.  "]),
        ];
        let c = build(&blocks, None, 7);
        assert_eq!(c.messages.len(), 2);
        assert_eq!(c.messages[1].role, Role::Assistant);
    }

    #[test]
    fn records() {
        let blocks = [
            Block::Tool("Added a.py to the chat"),
            Block::Tool("Applied edit to /abs/b.py"),
            Block::Tool("Applied edit to C:\\w\\c.py"),
            Block::Tool("Running make"),
            Block::User(vec!["!ls  "]),
        ];
        let c = build(&blocks, Some(Path::new("/proj")), 7);
        let files: Vec<(&str, FileAction)> = c
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.action))
            .collect();
        assert_eq!(
            files,
            vec![
                ("/proj/a.py", FileAction::Add),
                ("/abs/b.py", FileAction::Edit),
                ("C:\\w\\c.py", FileAction::Edit),
            ]
        );
        let commands: Vec<(&str, CommandOrigin)> = c
            .commands
            .iter()
            .map(|r| (r.command.as_str(), r.origin))
            .collect();
        assert_eq!(
            commands,
            vec![("make", CommandOrigin::Agent), ("ls", CommandOrigin::User)]
        );
        assert!(c.messages.is_empty());
    }
}
