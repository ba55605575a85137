//! `deja blame`: which sessions wrote a file. The file as the user names it
//! (`FILE` or `FILE:LINE`), the sessions whose records mean it
//! ([`paths::Target::matches`]), newest first, and what can be said about a
//! line.

pub mod line;
pub mod paths;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use deja_store::activity::FileActivity;
use deja_store::Store;
pub use paths::{Matched, Target};

/// The actions that write a file.
pub const EDITS: &[&str] = &["edit", "add"];
/// The actions that only read one.
pub const READS: &[&str] = &["read", "read-only"];

/// What the user asked about: a file and perhaps one of its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// The file as given.
    pub file: PathBuf,
    /// The line, counted from 1.
    pub line: Option<usize>,
}

/// `FILE` or `FILE:LINE`. A name that exists as given is a file even when it
/// ends in `:digits`.
pub fn parse_spec(text: &OsStr) -> Result<Spec, String> {
    let whole = Path::new(text);
    if text.is_empty() {
        return Err("no file given".into());
    }
    let shown = text.to_string_lossy();
    if !whole.exists() {
        if let Some((file, line)) = shown.rsplit_once(':') {
            if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) {
                let n: usize = line
                    .parse()
                    .map_err(|_| format!("{shown}: line {line} is out of range"))?;
                if n == 0 {
                    return Err(format!("{shown}: lines are counted from 1"));
                }
                if file.is_empty() {
                    return Err(format!("{shown}: no file before the line"));
                }
                return Ok(Spec {
                    file: before_line(text, line.len() + 1, file),
                    line: Some(n),
                });
            }
        }
    }
    Ok(Spec {
        file: whole.to_path_buf(),
        line: None,
    })
}

/// `text` without its last `cut` bytes (an ASCII `:LINE`), keeping a name
/// that is not UTF-8 as it was where the platform allows.
fn before_line(text: &OsStr, cut: usize, lossy: &str) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = text.as_bytes();
        let _ = lossy;
        PathBuf::from(OsStr::from_bytes(
            bytes
                .get(..bytes.len().saturating_sub(cut))
                .unwrap_or_default(),
        ))
    }
    #[cfg(not(unix))]
    {
        let _ = (text, cut);
        PathBuf::from(lossy)
    }
}

/// One record that means the file.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The record, its session and message.
    pub activity: FileActivity,
    /// How its path means the file.
    pub matched: Matched,
}

impl Entry {
    /// What to paste to read the message: `deja show ID#INDEX`, or the
    /// session alone when no message comes before the record.
    pub fn pointer(&self) -> String {
        match &self.activity.message {
            Some((index, _, _)) => format!("deja show {}#{index}", self.activity.session.id),
            None => format!("deja show {}", self.activity.session.id),
        }
    }
}

/// The records with one of `actions` that mean `target`, newest first.
pub fn records(store: &Store, target: &Target, actions: &[&str]) -> deja_store::Result<Vec<Entry>> {
    let found = store.file_activity(&target.name(), actions)?;
    Ok(found
        .into_iter()
        .filter_map(|activity| {
            let s = &activity.session;
            let matched = target.matches(
                &activity.path,
                s.project.dir.as_deref(),
                s.project.name.as_deref(),
            )?;
            Some(Entry { activity, matched })
        })
        .collect())
}

/// What can be said about which edit wrote a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineAnswer {
    /// The file is not there (or cannot be read).
    Missing,
    /// The file has fewer lines.
    PastEnd(usize),
    /// Each edit's text was looked for in the file: where it is (one per
    /// edit, in the order given) and what that tells.
    Judged {
        /// Per edit, in order.
        matches: Vec<line::EditMatch>,
        /// What it tells.
        verdict: line::Verdict,
    },
}

impl LineAnswer {
    /// The answer for `line` of the file at `path` today, from `edits`
    /// (newest first).
    pub fn of(path: &Path, line: usize, edits: &[Entry]) -> LineAnswer {
        match std::fs::read(path) {
            Err(_) => LineAnswer::Missing,
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let contents = line::Contents::new(&text);
                let lines = contents.lines();
                if line > lines {
                    return LineAnswer::PastEnd(lines);
                }
                let (matches, verdict) = line::judge(
                    &contents,
                    edits.iter().map(|e| e.activity.text.as_deref()),
                    line,
                );
                LineAnswer::Judged { matches, verdict }
            }
        }
    }

    /// The index (in the edits given) of the edit that wrote the line.
    pub fn wrote(&self) -> Option<usize> {
        match self {
            LineAnswer::Judged {
                verdict: line::Verdict::Wrote(i),
                ..
            } => Some(*i),
            _ => None,
        }
    }

    /// How edit `i`'s text stands: where it is, and whether it covers the
    /// line; `None` when the file was not read.
    pub fn edit(&self, i: usize) -> Option<&line::EditMatch> {
        match self {
            LineAnswer::Judged { matches, .. } => matches.get(i),
            _ => None,
        }
    }

    /// The sentence for it, about `file` (already cleaned for display),
    /// naming the edit that wrote the line where one did.
    pub fn sentence(&self, file: &str, line: usize, edits: &[Entry]) -> String {
        let what = |i: usize| match edits.get(i) {
            Some(e) => {
                let at = crate::output::local_short(e.activity.timestamp_ms);
                let msg = match &e.activity.message {
                    Some((index, _, _)) => format!(", message #{index}"),
                    None => String::new(),
                };
                format!(
                    "the edit of {at} in session {}{msg} ({})",
                    e.activity.session.id,
                    e.pointer()
                )
            }
            None => "an edit".to_string(),
        };
        let why = match self {
            LineAnswer::Missing => format!("{file} is not there today"),
            LineAnswer::PastEnd(n) => format!(
                "{file} has {n} line{} today",
                if *n == 1 { "" } else { "s" }
            ),
            LineAnswer::Judged { verdict, .. } => match verdict {
                line::Verdict::Wrote(i) => return format!("{} wrote line {line}", what(*i)),
                line::Verdict::Ambiguous(i) => format!(
                    "the text {} wrote is in several places of the file, line {line} among them",
                    what(*i)
                ),
                line::Verdict::NotFound { without_text } => {
                    let mut why = format!(
                        "no edit's text is at line {line} today (it was changed after them, or by hand)"
                    );
                    if *without_text > 0 {
                        why.push_str(&format!(
                            "; {without_text} of the edits kept no text (read by a reader that does not keep it, or from a transcript that does not)"
                        ));
                    }
                    why
                }
                line::Verdict::NoText => "none of the edits kept the text it wrote (read by a reader that does not keep it, or from a transcript that does not)".to_string(),
            },
        };
        format!(
            "which edit wrote line {line} cannot be told: {why}; every edit of the file is listed"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trailing_line_number_is_split_off() {
        let s = parse_spec(OsStr::new("/nowhere/src/x.rs:12")).unwrap();
        assert_eq!(s.file, PathBuf::from("/nowhere/src/x.rs"));
        assert_eq!(s.line, Some(12));
        let s = parse_spec(OsStr::new("/nowhere/src/x.rs")).unwrap();
        assert_eq!(s.line, None);
        // Not digits: part of the name.
        assert_eq!(parse_spec(OsStr::new("/nowhere/a:b")).unwrap().line, None);
        assert!(parse_spec(OsStr::new("/nowhere/x.rs:0"))
            .unwrap_err()
            .contains("counted from 1"));
        assert!(parse_spec(OsStr::new(":3")).is_err());
        assert!(parse_spec(OsStr::new("")).is_err());
        assert!(
            parse_spec(OsStr::new("/nowhere/x.rs:99999999999999999999999"))
                .unwrap_err()
                .contains("out of range")
        );
    }

    #[test]
    fn an_existing_name_ending_in_digits_is_a_file() {
        let dir = std::env::temp_dir().join(format!("deja-spec-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let file = dir.join("notes:3");
        std::fs::write(&file, "a\n").unwrap();
        let s = parse_spec(file.as_os_str()).unwrap();
        assert_eq!((s.file, s.line), (file.clone(), None));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_line_is_judged_against_the_file_today() {
        let dir = std::env::temp_dir().join(format!("deja-line-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let file = dir.join("x.rs");
        std::fs::write(&file, "one\ntwo\n").unwrap();
        let no_text = LineAnswer::of(&file, 2, &[]);
        assert_eq!(
            no_text,
            LineAnswer::Judged {
                matches: vec![],
                verdict: line::Verdict::NoText
            }
        );
        assert!(no_text.sentence("x.rs", 2, &[]).contains(
            "which edit wrote line 2 cannot be told: none of the edits kept the text it wrote"
        ));
        assert_eq!(LineAnswer::of(&file, 3, &[]), LineAnswer::PastEnd(2));
        assert_eq!(
            LineAnswer::of(&dir.join("gone.rs"), 1, &[]),
            LineAnswer::Missing
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
