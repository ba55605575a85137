//! Splits the lines of one session into blocks by who wrote them: user
//! inputs (`####`), assistant text (plain Markdown) and tool output (`>`).
//!
//! - Outside code fences, consecutive `####` lines form one user input; a
//!   blank or any other line ends it. Nothing before the session's first user
//!   line (the banner, a `--verbose` dump) is a message.
//! - In a file that keeps aider's two trailing spaces ([`Style::user_marks`]),
//!   a `####` line without them is a model's Markdown heading (`#### 1. Design
//!   Choices`) and stays assistant text; in other files every `####` line is
//!   the user's. One exception in marked files: an unmarked `####` line whose
//!   unprefixed lines below it run, without a blank, to a marked line that ends
//!   the record is one user line broken by stray carriage returns (a real
//!   UTF-16-prefixed file of the corpus).
//! - A `>` line starts a tool-output block, which is not a message and ends
//!   the assistant block before it. aider prefixes only the first line of a
//!   multi-line output and marks only its last one, and what aider writes
//!   after any record starts with a blank, a `>` line or a header. So in a
//!   file that keeps the marks ([`Style::tool_marks`]), a `>` line that is not
//!   marked, or not followed like that (a confirmation subject pads every line
//!   to the longest), starts a block that runs to the first marked line that
//!   is followed like that (outputs can hold blank lines), provided no line
//!   aider wrote comes first. Otherwise the block takes the unprefixed lines
//!   up to the first blank.
//! - Unclosed fences: an interrupted reply leaves its fence open and would hide
//!   every later `####` and `>` line of the session. Inside a fence, a line
//!   written exactly as aider writes its own (`#### ...  ` or `> ...  `, with the
//!   two trailing spaces, in a file that keeps them) closes the fence and is
//!   read as what it is. Models do not end `####` or `>` lines in code with two
//!   spaces, so this almost never misfires. Measured on the corpus (40
//!   files): it closes 46 fences in 9 files; without it 955 lines aider wrote
//!   stay hidden in fences, and 43 user messages, 48 assistant messages, 19
//!   file records and 4 command records are lost or merged into code. A
//!   session header always resets the fence state.
//! - Legacy sessions (aider before 2023-05-17): user lines are `#### > text`,
//!   a `---` line before a user line separates turns, and tool output is a
//!   whole `_italic_` (or `*italic*`) line.

use std::ops::Range;

use crate::fence;
use crate::header;
use crate::lines::{self, Style};

/// A run of lines with one role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Block<'a> {
    /// One user input: the text of each of its lines, `####` prefix removed.
    User(Vec<&'a str>),
    /// Assistant text, line by line (blank lines included).
    Assistant(Vec<&'a str>),
    /// One tool-output block: the text of its first line, `>` removed.
    Tool(&'a str),
}

/// A whole history file's lines, with what is known about them as a whole.
pub(crate) struct Layout<'a> {
    lines: &'a [&'a str],
    style: Style,
    /// For each line: the last line of the multi-line tool output that
    /// continues on it, if one ends before any line aider wrote (marked files only).
    output_ends: Vec<Option<usize>>,
}

impl<'a> Layout<'a> {
    /// Looks at every line of a file once.
    pub(crate) fn new(lines: &'a [&'a str]) -> Self {
        let mut layout = Layout {
            lines,
            style: Style::of(lines),
            output_ends: Vec::new(),
        };
        if layout.style.tool_marks {
            layout.output_ends = layout.output_ends();
        }
        layout
    }

    /// The blocks of the session whose lines (after its header) are `range`.
    pub(crate) fn blocks(&self, range: Range<usize>, legacy: bool) -> Vec<Block<'a>> {
        let mut scan = Scan {
            layout: self,
            legacy,
            end: range.end.min(self.lines.len()),
            blocks: Vec::new(),
            fence: None,
            started: false,
        };
        let mut i = range.start;
        while i < scan.end {
            i = scan.step(i);
        }
        scan.blocks
    }

    fn line(&self, i: usize) -> &'a str {
        self.lines.get(i).copied().unwrap_or_default()
    }

    /// Whether line `i` can be the last line of a multi-line record: it is
    /// marked, and what follows is what aider writes after a record.
    fn is_record_end(&self, i: usize) -> bool {
        let line = self.line(i);
        lines::has_mark(line)
            && !lines::is_blank(line)
            && !self.is_stop(i)
            && self.follows_a_record(i)
    }

    /// Whether what comes after line `i` is what aider writes after a record:
    /// nothing, a blank, a `>` line or a header.
    fn follows_a_record(&self, i: usize) -> bool {
        self.lines.get(i + 1).is_none_or(|next| {
            lines::is_blank(next) || lines::tool_body(next).is_some() || header::is_header(next)
        })
    }

    /// Whether line `i` is one a multi-line record cannot run past.
    fn is_stop(&self, i: usize) -> bool {
        let line = self.line(i);
        header::is_header(line) || lines::is_aider_written(line, self.style)
    }

    fn output_ends(&self) -> Vec<Option<usize>> {
        let mut ends = vec![None; self.lines.len() + 1];
        for i in (0..self.lines.len()).rev() {
            let end = if self.is_stop(i) {
                None
            } else if self.is_record_end(i) {
                Some(i)
            } else {
                ends.get(i + 1).copied().flatten()
            };
            if let Some(slot) = ends.get_mut(i) {
                *slot = end;
            }
        }
        ends
    }
}

/// The state of the walk through one session.
struct Scan<'l, 'a> {
    layout: &'l Layout<'a>,
    legacy: bool,
    end: usize,
    blocks: Vec<Block<'a>>,
    /// The length of the open code fence, if any.
    fence: Option<usize>,
    /// Whether the session's first user line has been seen.
    started: bool,
}

impl<'a> Scan<'_, 'a> {
    /// Takes in the line at `i` and any lines it continues on; returns the next line to read.
    fn step(&mut self, i: usize) -> usize {
        let line = self.layout.line(i);
        if let Some(open) = self.fence {
            if !lines::is_aider_written(line, self.layout.style) {
                if fence::closes(line, open) {
                    self.fence = None;
                }
                self.push_text(line);
                return i + 1;
            }
            self.fence = None;
        }
        if let Some(next) = self.user_input(i) {
            return next;
        }
        if let Some(next) = self.tool_output(i) {
            return next;
        }
        if self.started {
            self.assistant_line(i);
        }
        i + 1
    }

    /// Reads the user input starting at `i`, if one does.
    fn user_input(&mut self, i: usize) -> Option<usize> {
        let (mut parts, mut next) = self.user_line(i)?;
        while let Some((more, after)) = self.user_line(next) {
            parts.extend(more);
            next = after;
        }
        self.started = true;
        self.blocks.push(Block::User(parts));
        Some(next)
    }

    /// The text of the user line at `i` (with the lines it continues on), and the next line.
    fn user_line(&self, i: usize) -> Option<(Vec<&'a str>, usize)> {
        if i >= self.end {
            return None;
        }
        let line = self.layout.line(i);
        let mut body = lines::user_body(line)?;
        if self.legacy {
            body = body.strip_prefix('>').map_or(body, str::trim_start);
        }
        if !self.layout.style.user_marks || lines::has_mark(line) || lines::is_blank(body) {
            return Some((vec![body], i + 1));
        }
        let last = self.continued_record(i + 1)?;
        let mut parts = vec![body];
        parts.extend(self.layout.lines.get(i + 1..=last).unwrap_or_default());
        Some((parts, last + 1))
    }

    /// The last line of a record broken over unprefixed lines from `start`
    /// without a blank, if it ends properly.
    fn continued_record(&self, start: usize) -> Option<usize> {
        (start..self.end)
            .take_while(|&k| !self.starts_record(k) && !lines::is_blank(self.layout.line(k)))
            .find(|&k| self.layout.is_record_end(k))
    }

    /// Reads the tool-output block starting at `i`, if one does.
    fn tool_output(&mut self, i: usize) -> Option<usize> {
        let line = self.layout.line(i);
        let body = lines::tool_body(line).or_else(|| self.legacy_tool_body(line))?;
        self.blocks.push(Block::Tool(body.trim()));
        Some(self.output_end(i))
    }

    /// The line after the tool-output block that starts at `i`.
    fn output_end(&self, i: usize) -> usize {
        let line = self.layout.line(i);
        if self.layout.style.tool_marks && lines::tool_body(line).is_some() {
            if lines::has_mark(line) && self.layout.follows_a_record(i) {
                return i + 1;
            }
            let end = self.layout.output_ends.get(i + 1).copied().flatten();
            if let Some(end) = end.filter(|&end| end < self.end) {
                return end + 1;
            }
        }
        (i + 1..self.end)
            .find(|&k| self.starts_record(k) || lines::is_blank(self.layout.line(k)))
            .unwrap_or(self.end)
    }

    /// Whether line `k` starts a user input, a tool output or a session.
    fn starts_record(&self, k: usize) -> bool {
        let line = self.layout.line(k);
        lines::user_body(line).is_some()
            || lines::tool_body(line).is_some()
            || header::is_header(line)
            || self.legacy_tool_body(line).is_some()
    }

    /// The text of a legacy `_italic_` tool line (marked, in a marked file).
    fn legacy_tool_body(&self, line: &'a str) -> Option<&'a str> {
        if !self.legacy || (self.layout.style.user_marks && !lines::has_mark(line)) {
            return None;
        }
        let text = line.trim_end();
        let inner = ['_', '*']
            .iter()
            .find_map(|&c| text.strip_prefix(c)?.strip_suffix(c))?;
        (!inner.trim().is_empty()).then_some(inner)
    }

    /// Takes in a line of assistant text (or a blank line) at `i`.
    fn assistant_line(&mut self, i: usize) {
        let line = self.layout.line(i);
        if lines::is_blank(line) {
            if let Some(Block::Assistant(text)) = self.blocks.last_mut() {
                text.push(line);
            }
            return;
        }
        if self.legacy && line.trim_end() == "---" && self.user_line(i + 1).is_some() {
            return;
        }
        self.push_text(line);
        self.fence = fence::opening(line);
    }

    fn push_text(&mut self, line: &'a str) {
        match self.blocks.last_mut() {
            Some(Block::Assistant(text)) => text.push(line),
            _ => self.blocks.push(Block::Assistant(vec![line])),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn blocks(text: &'static str) -> Vec<Block<'static>> {
        let lines: &'static [&'static str] = Vec::leak(text.lines().collect());
        Layout::new(lines).blocks(0..lines.len(), false)
    }

    use Block::{Assistant, Tool, User};

    #[test]
    fn roles() {
        let b = blocks("> Aider v0.86  \n\n#### hi  \n\nHello.\n\n> Applied edit to a.py  \n");
        assert_eq!(
            b,
            vec![
                Tool("Aider v0.86"),
                User(vec!["hi  "]),
                Assistant(vec!["Hello.", ""]),
                Tool("Applied edit to a.py"),
            ]
        );
    }

    #[test]
    fn fences_hide_markers() {
        let b = blocks("#### hi  \n\n```\n#### not user\n> not tool\n```\nafter\n");
        assert_eq!(
            b,
            vec![
                User(vec!["hi  "]),
                Assistant(vec!["```", "#### not user", "> not tool", "```", "after"]),
            ]
        );
    }

    #[test]
    fn marked_line_ends_an_unclosed_fence() {
        let b = blocks("#### hi  \n\n```py\ncode\n\n> Tokens: 1k sent  \n\n#### next  \n");
        assert_eq!(
            b,
            vec![
                User(vec!["hi  "]),
                Assistant(vec!["```py", "code", ""]),
                Tool("Tokens: 1k sent"),
                User(vec!["next  "]),
            ]
        );
    }

    #[test]
    fn multi_line_output_runs_to_its_marked_last_line() {
        let b = blocks("#### /git log  \n> commit 1\nAuthor: x\n\n    msg  \n> Done.  \n");
        assert_eq!(
            b,
            vec![User(vec!["/git log  "]), Tool("commit 1"), Tool("Done.")]
        );
    }

    #[test]
    fn padded_first_line_continues() {
        let b =
            blocks("#### go  \n> export A=1   \n./run.sh  \n> Run shell commands? [Yes]: y  \n");
        assert_eq!(
            b,
            vec![
                User(vec!["go  "]),
                Tool("export A=1"),
                Tool("Run shell commands? [Yes]: y")
            ]
        );
    }

    #[test]
    fn headings_in_marked_files_are_assistant_text() {
        let b = blocks("#### hi  \n\nText\n\n#### 1. Design\nMore\n");
        assert_eq!(
            b,
            vec![
                User(vec!["hi  "]),
                Assistant(vec!["Text", "", "#### 1. Design", "More"]),
            ]
        );
    }

    #[test]
    fn broken_user_line_is_one_record() {
        let b = blocks("#### q  \n\n#### a\nb\nc  \n> out  \n");
        assert_eq!(
            b,
            vec![User(vec!["q  "]), User(vec!["a", "b", "c  "]), Tool("out")]
        );
    }
}
