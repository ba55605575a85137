//! Which edit wrote a line of a file: each edit's new text (what it wrote,
//! in parts when it changed several places) is looked for in the file as it
//! is today, as an exact block of text; the newest edit whose block is found
//! once and covers the line wrote it. A part found in several places cannot
//! be placed (a short or common text), and says so rather than guess.

use deja_model::EDIT_PARTS_SEPARATOR;

/// Where one edit's text is in today's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextMatch {
    /// The edit kept no text (its reader does not hand it over, or the
    /// transcript does not keep it).
    NoText,
    /// None of its parts is in the file today.
    Absent,
    /// Some part is there, but in more than one place, and no part is
    /// there once.
    Ambiguous,
    /// Parts found once, at these lines (first and last, from 1, inclusive);
    /// `ambiguous` holds the places of the parts found more than once.
    Located {
        /// The line ranges of the parts found once.
        ranges: Vec<(usize, usize)>,
        /// The line ranges where parts found more than once are.
        ambiguous: Vec<(usize, usize)>,
    },
}

impl TextMatch {
    /// The name used in `--json` (`text_match`).
    pub fn as_str(&self) -> &'static str {
        match self {
            TextMatch::NoText => "no-text",
            TextMatch::Absent => "absent",
            TextMatch::Ambiguous => "ambiguous",
            TextMatch::Located { .. } => "located",
        }
    }

    /// Whether a part found once covers `line`.
    pub fn covers(&self, line: usize) -> bool {
        match self {
            TextMatch::Located { ranges, .. } => {
                ranges.iter().any(|&(a, b)| a <= line && line <= b)
            }
            _ => false,
        }
    }
}

/// Most places of one part counted before it is called ambiguous anyway.
const MOST_PLACES: usize = 1_000;

/// A file's contents as the matching reads them, with where its lines start.
pub struct Contents<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Contents<'a> {
    /// `text`, the whole file.
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        if text.ends_with('\n') {
            starts.pop();
        }
        Contents { text, starts }
    }

    /// How many lines it has.
    pub fn lines(&self) -> usize {
        if self.text.is_empty() {
            0
        } else {
            self.starts.len()
        }
    }

    /// The line (from 1) that byte `at` is on.
    fn line_of(&self, at: usize) -> usize {
        self.starts.partition_point(|&s| s <= at).max(1)
    }

    /// Where the edit text `text` is (`None`: it kept none).
    pub fn locate(&self, text: Option<&str>) -> (TextMatch, Vec<(usize, usize)>) {
        let Some(text) = text else {
            return (TextMatch::NoText, Vec::new());
        };
        let mut ranges = Vec::new();
        let mut ambiguous = Vec::new();
        let mut any_part = false;
        for part in text.split(EDIT_PARTS_SEPARATOR) {
            let part = part.trim_matches(['\n', '\r']);
            if part.trim().is_empty() {
                continue;
            }
            any_part = true;
            let places: Vec<(usize, usize)> = self
                .text
                .match_indices(part)
                .take(MOST_PLACES)
                .map(|(at, found)| (self.line_of(at), self.line_of(at + found.len() - 1)))
                .collect();
            match places.len() {
                0 => {}
                1 => ranges.extend(places),
                _ => ambiguous.extend(places),
            }
        }
        let found = if !any_part {
            TextMatch::NoText
        } else if !ranges.is_empty() {
            TextMatch::Located {
                ranges,
                ambiguous: ambiguous.clone(),
            }
        } else if !ambiguous.is_empty() {
            TextMatch::Ambiguous
        } else {
            TextMatch::Absent
        };
        (found, ambiguous)
    }
}

/// One edit's standing for the line asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditMatch {
    /// Where its text is.
    pub found: TextMatch,
    /// Whether a part found once covers the line.
    pub covers: bool,
    /// Whether a part found in several places has one at the line.
    pub maybe: bool,
}

/// What can be told about who wrote line `line`, from the edits' matches,
/// newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The edit at this index (of the list given) wrote it.
    Wrote(usize),
    /// The edit at this index has text at the line, but its text is in
    /// several places: which one it wrote cannot be told, nor whether an
    /// older edit wrote the line.
    Ambiguous(usize),
    /// Some edits kept text, but none of it covers the line today: the line
    /// was changed after them, or by hand. `without_text` edits kept none.
    NotFound {
        /// How many of the edits kept no text.
        without_text: usize,
    },
    /// No edit kept text.
    NoText,
}

/// Matches every edit's text (newest first) against `contents` for `line`.
pub fn judge<'t>(
    contents: &Contents<'_>,
    texts: impl IntoIterator<Item = Option<&'t str>>,
    line: usize,
) -> (Vec<EditMatch>, Verdict) {
    let mut matches = Vec::new();
    let mut verdict = None;
    for (i, text) in texts.into_iter().enumerate() {
        let (found, ambiguous) = contents.locate(text);
        let covers = found.covers(line);
        let maybe = ambiguous.iter().any(|&(a, b)| a <= line && line <= b);
        if verdict.is_none() {
            if covers {
                verdict = Some(Verdict::Wrote(i));
            } else if maybe {
                verdict = Some(Verdict::Ambiguous(i));
            }
        }
        matches.push(EditMatch {
            found,
            covers,
            maybe,
        });
    }
    let verdict = verdict.unwrap_or_else(|| {
        let without_text = matches
            .iter()
            .filter(|m| m.found == TextMatch::NoText)
            .count();
        if without_text == matches.len() {
            Verdict::NoText
        } else {
            Verdict::NotFound { without_text }
        }
    });
    (matches, verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str =
        "fn main() {\n    let a = 1;\n    let b = 2;\n    println!(\"{a}{b}\");\n}\n";

    fn found(text: &str) -> TextMatch {
        Contents::new(FILE).locate(Some(text)).0
    }

    #[test]
    fn a_block_found_once_covers_its_lines() {
        assert_eq!(
            found("    let a = 1;\n    let b = 2;\n"),
            TextMatch::Located {
                ranges: vec![(2, 3)],
                ambiguous: vec![]
            }
        );
        // Part of a line covers that line.
        assert_eq!(
            found("println!"),
            TextMatch::Located {
                ranges: vec![(4, 4)],
                ambiguous: vec![]
            }
        );
        // A whole-file write covers every line, its trailing newline aside.
        assert!(matches!(found(FILE), TextMatch::Located { ranges, .. } if ranges == [(1, 5)]));
    }

    #[test]
    fn a_text_in_several_places_is_ambiguous_and_one_not_there_absent() {
        assert_eq!(found("    let "), TextMatch::Ambiguous);
        assert_eq!(found("let c = 3;"), TextMatch::Absent);
        assert_eq!(Contents::new(FILE).locate(None).0, TextMatch::NoText);
        assert_eq!(found("\n \n"), TextMatch::NoText);
    }

    #[test]
    fn parts_are_located_each_on_their_own() {
        let text = format!("let a = 1;{EDIT_PARTS_SEPARATOR}}}{EDIT_PARTS_SEPARATOR}gone");
        // `}` is in three places (twice on line 4, once on line 5).
        let (m, ambiguous) = Contents::new(FILE).locate(Some(&text));
        assert_eq!(
            m,
            TextMatch::Located {
                ranges: vec![(2, 2)],
                ambiguous: vec![(4, 4), (4, 4), (5, 5)]
            }
        );
        assert_eq!(ambiguous.len(), 3);
    }

    #[test]
    fn the_newest_edit_whose_text_covers_the_line_wrote_it() {
        let c = Contents::new(FILE);
        // Newest first: an edit whose text is gone, then one covering line 3,
        // then an older one covering lines 2-3.
        let texts = [
            Some("let z = 9;"),
            Some("    let b = 2;"),
            Some("    let a = 1;\n    let b = 2;"),
        ];
        let (m, v) = judge(&c, texts, 3);
        assert_eq!(v, Verdict::Wrote(1));
        assert_eq!(
            m.iter().map(|m| m.covers).collect::<Vec<_>>(),
            [false, true, true]
        );
        assert_eq!(judge(&c, texts, 2).1, Verdict::Wrote(2));
        assert_eq!(judge(&c, texts, 1).1, Verdict::NotFound { without_text: 0 });
        assert_eq!(judge(&c, [None, None], 1).1, Verdict::NoText);
        assert_eq!(
            judge(&c, [None, Some("x = 9")], 1).1,
            Verdict::NotFound { without_text: 1 }
        );
    }

    #[test]
    fn an_ambiguous_newer_edit_at_the_line_stops_the_answer() {
        let c = Contents::new(FILE);
        let (_, v) = judge(&c, [Some("    let "), Some("    let a = 1;")], 2);
        assert_eq!(v, Verdict::Ambiguous(0));
    }

    #[test]
    fn lines_are_counted_as_an_editor_counts_them() {
        assert_eq!(Contents::new("").lines(), 0);
        assert_eq!(Contents::new("a").lines(), 1);
        assert_eq!(Contents::new("a\n").lines(), 1);
        assert_eq!(Contents::new("a\n\nb").lines(), 3);
        let c = Contents::new("a\nb\n");
        assert_eq!((c.line_of(0), c.line_of(2), c.line_of(3)), (1, 2, 2));
    }
}
