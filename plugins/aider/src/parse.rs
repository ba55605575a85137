//! A whole history file to a [`ParseOutput`]: decode the bytes, split the
//! lines at session headers, read each session's blocks (each session on its
//! own, so that appending to a history never changes the sessions already in
//! it), build its messages,
//! and give it an id and a start time. Sessions without a message are counted
//! in `skipped_empty`. Never fails and never panics, whatever the bytes.

use std::ops::Range;
use std::path::Path;

use deja_plugin_api::text;
use deja_plugin_api::{ParseOutput, Project, RString, Session};

use crate::blocks::Layout;
use crate::build::{self, Content};
use crate::clock::Zone;
use crate::decode;
use crate::header::{self, Header};
use crate::ids::Ids;
use crate::lines;

/// Parses the history at `path` holding `bytes`, last modified at `modified_ms`.
pub(crate) fn parse(path: &str, bytes: &[u8], modified_ms: i64, zone: Zone) -> ParseOutput {
    let text = decode::decode(bytes);
    let lines: Vec<&str> = text::lines(&text).collect();
    let dir = history_dir(path);
    let project = project(dir);
    let first_line = lines
        .iter()
        .find(|l| !lines::is_blank(l))
        .map_or("", |l| l.trim());
    let mut ids = Ids::new(path, first_line);
    let mut output = ParseOutput::default();
    let mut previous_start = None;
    let spans = spans(&lines);
    for (index, span) in spans.iter().enumerate() {
        let (id, started) = match span.header.time {
            Some(time) => (ids.timed(time), zone.utc_ms(time)),
            None => (
                ids.untimed(index + 1),
                previous_start.unwrap_or(modified_ms),
            ),
        };
        previous_start = Some(started);
        // Each session is read on its own (its style too: whether aider's
        // trailing spaces survived), so appending sessions to a history never
        // changes how the earlier ones read.
        let body = lines.get(span.body.clone()).unwrap_or_default();
        let layout = Layout::new(body);
        let blocks = layout.blocks(0..body.len(), span.header.legacy);
        let content = build::build(&blocks, dir, started);
        if content.messages.is_empty() {
            output.skipped_empty += 1;
        } else {
            output
                .sessions
                .push(session(id, started, &project, content));
        }
    }
    let prelude_end = spans
        .first()
        .map_or(lines.len(), |s| s.body.start.saturating_sub(1));
    let ignored = lines
        .iter()
        .take(prelude_end)
        .filter(|l| !lines::is_blank(l))
        .count();
    if ignored > 0 {
        output.warnings.push(RString::from(format!(
            "{ignored} line(s) before the first `# aider chat started at` header were ignored"
        )));
    }
    output
}

/// One session: its header, and the lines after it up to the next header.
struct Span {
    header: Header,
    body: Range<usize>,
}

fn spans(lines: &[&str]) -> Vec<Span> {
    let starts: Vec<(usize, Header)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| Some((i, header::parse(line)?)))
        .collect();
    starts
        .iter()
        .enumerate()
        .map(|(n, &(i, header))| {
            let end = starts.get(n + 1).map_or(lines.len(), |&(next, _)| next);
            Span {
                header,
                body: i + 1..end,
            }
        })
        .collect()
}

/// The directory the history lives in (`None` for a bare file name).
fn history_dir(path: &str) -> Option<&Path> {
    Path::new(path)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
}

fn project(dir: Option<&Path>) -> Project {
    let text = |p: &Path| RString::from(p.to_string_lossy().into_owned());
    Project {
        dir: dir.map(text).into(),
        name: dir
            .and_then(Path::file_name)
            .map(|n| text(Path::new(n)))
            .into(),
        id: None.into(),
    }
}

fn session(id: String, started: i64, project: &Project, content: Content) -> Session {
    let mut session = Session::new(id.clone(), id, started, started);
    session.project = project.clone();
    session.messages = content.messages.into();
    session.files = content.files.into();
    session.commands = content.commands.into();
    session
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn splits_sessions_at_headers() {
        let lines = [
            "x",
            "# aider chat started at 2026-01-01 00:00:00",
            "a",
            "# aider chat started at bad",
            "b",
        ];
        let spans = spans(&lines);
        assert_eq!(spans.len(), 2);
        assert_eq!(spans[0].body, 2..3);
        assert_eq!(spans[1].body, 4..5);
        assert!(spans[1].header.time.is_none());
    }

    #[test]
    fn project_of_a_history() {
        let p = project(history_dir("/home/u/proj/.aider.chat.history.md"));
        assert_eq!(
            p.dir.as_ref().map(|d| d.as_str()).into_option(),
            Some("/home/u/proj")
        );
        assert_eq!(
            p.name.as_ref().map(|d| d.as_str()).into_option(),
            Some("proj")
        );
        assert_eq!(
            project(history_dir(".aider.chat.history.md")),
            Project::default()
        );
    }

    #[test]
    fn empty_input() {
        let out = parse("/p/.aider.chat.history.md", b"", 5, Zone::Local);
        assert_eq!(out, ParseOutput::default());
    }

    #[test]
    fn text_before_the_first_header_is_reported() {
        let out = parse(
            "/p/h.md",
            b"junk\n# aider chat started at 2026-01-01 00:00:00\n",
            5,
            Zone::Local,
        );
        assert_eq!(out.skipped_empty, 1);
        assert_eq!(out.warnings.len(), 1);
    }
}
