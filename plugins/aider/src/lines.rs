//! What one line of a history file is, looked at on its own: a `####` user
//! line, a `>` tool-output line, blank, or carrying aider's two trailing
//! spaces; and [`Style`], which says whether the file kept those spaces.

/// The two spaces aider appends to every `####` and `>` line it writes.
const MARK: &str = "  ";

/// The text after the `####` prefix of a user line (`####` alone or `#### text`),
/// or `None` when the line is not one (e.g. `#####`, `####text`).
pub(crate) fn user_body(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("####")?;
    if rest.is_empty() {
        Some(rest)
    } else {
        rest.strip_prefix(' ')
    }
}

/// The text after the `>` prefix of a tool-output line (`> text`, or `>`
/// followed only by spaces), or `None` (e.g. `>>>>>>> REPLACE`).
pub(crate) fn tool_body(line: &str) -> Option<&str> {
    let rest = line.strip_prefix('>')?;
    if rest.trim().is_empty() {
        Some("")
    } else {
        rest.strip_prefix(' ')
    }
}

/// Whether the line ends in aider's two trailing spaces.
pub(crate) fn has_mark(line: &str) -> bool {
    line.ends_with(MARK)
}

/// Whether the line holds nothing but whitespace.
pub(crate) fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Whether the line is written exactly as aider writes its own `####` or `>`
/// lines: the prefix, and the two trailing spaces.
pub(crate) fn is_aider_written(line: &str, style: Style) -> bool {
    has_mark(line)
        && ((style.user_marks && user_body(line).is_some())
            || (style.tool_marks && tool_body(line).is_some()))
}

/// Whether a history file kept the two trailing spaces aider writes (some
/// editors and tools strip them). Only when it did can a `####` line without
/// them be told apart as a model's heading, and the end of a multi-line tool
/// output be found by them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Style {
    /// Some non-empty `####` line ends in two spaces: user lines carry the mark.
    pub user_marks: bool,
    /// At least as many `>` lines end in two spaces as do not (a multi-line
    /// output leaves its first line unmarked; files that were stripped only in
    /// part, such as an aider 0.50 file of the corpus, fall below).
    pub tool_marks: bool,
}

impl Style {
    /// The style of a file, from all its lines.
    pub(crate) fn of(lines: &[&str]) -> Style {
        let mut user_marks = false;
        let (mut marked, mut unmarked) = (0usize, 0usize);
        for line in lines {
            if let Some(body) = user_body(line) {
                user_marks |= has_mark(line) && !body.trim().is_empty();
            } else if tool_body(line).is_some() {
                if has_mark(line) {
                    marked += 1;
                } else {
                    unmarked += 1;
                }
            }
        }
        Style {
            user_marks,
            tool_marks: marked > 0 && marked >= unmarked,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn user_lines() {
        assert_eq!(user_body("#### fix it  "), Some("fix it  "));
        assert_eq!(user_body("####   "), Some("  "));
        assert_eq!(user_body("####"), Some(""));
        assert_eq!(user_body("##### heading"), None);
        assert_eq!(user_body("####x"), None);
        assert_eq!(user_body("# aider chat started at"), None);
    }

    #[test]
    fn tool_lines() {
        assert_eq!(
            tool_body("> Applied edit to a.py  "),
            Some("Applied edit to a.py  ")
        );
        assert_eq!(tool_body(">  "), Some(""));
        assert_eq!(tool_body(">"), Some(""));
        assert_eq!(tool_body(">>>>>>> REPLACE"), None);
        assert_eq!(tool_body(">x"), None);
    }

    #[test]
    fn marks_and_blanks() {
        assert!(has_mark("#### hi  "));
        assert!(!has_mark("#### hi "));
        assert!(is_blank("  \t"));
        assert!(!is_blank(" x"));
    }

    #[test]
    fn style_of_a_marked_file() {
        let style = Style::of(&["#### hi  ", "> out  ", "> first", "#### 1. Heading"]);
        assert_eq!(
            style,
            Style {
                user_marks: true,
                tool_marks: true
            }
        );
        assert!(is_aider_written("#### hi  ", style));
        assert!(!is_aider_written("#### 1. Heading", style));
    }

    #[test]
    fn style_of_a_stripped_file() {
        let style = Style::of(&["#### hi", "####   ", "> out", "> more", "> one  "]);
        assert_eq!(style, Style::default());
        assert!(!is_aider_written("#### hi  ", style));
    }
}
