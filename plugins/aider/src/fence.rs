//! Markdown code fences in assistant text. Backtick fences only, as aider and
//! the models it drives write them (```` ``` ```` and longer); an opening fence
//! may carry an info string, a closing one must be at least as long as its
//! opening one and carry nothing else. Indentation is allowed, since models
//! indent fences inside list items.

/// The length of the fence `line` opens, if it can open one.
pub(crate) fn opening(line: &str) -> Option<usize> {
    let (len, info) = backticks(line)?;
    (!info.contains('`')).then_some(len)
}

/// Whether `line` closes a fence opened with `open_len` backticks.
pub(crate) fn closes(line: &str, open_len: usize) -> bool {
    backticks(line).is_some_and(|(len, info)| len >= open_len && info.trim().is_empty())
}

/// The run of at least three backticks that starts the (indented) line, and what follows it.
fn backticks(line: &str) -> Option<(usize, &str)> {
    let text = line.trim_start();
    let len = text.bytes().take_while(|&b| b == b'`').count();
    if len < 3 {
        return None;
    }
    Some((len, text.get(len..).unwrap_or_default()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn openings() {
        assert_eq!(opening("```"), Some(3));
        assert_eq!(opening("```python"), Some(3));
        assert_eq!(opening("````markdown"), Some(4));
        assert_eq!(opening("   ```rust"), Some(3));
        assert_eq!(opening("``not"), None);
        assert_eq!(opening("```inline``` code"), None);
        assert_eq!(opening("text ```"), None);
    }

    #[test]
    fn closings() {
        assert!(closes("```", 3));
        assert!(closes("````  ", 3));
        assert!(closes("````", 4));
        assert!(!closes("```", 4));
        assert!(!closes("```python", 3));
        assert!(!closes("x", 3));
    }
}
