//! Session headers: the line aider writes once per launch,
//! `# aider chat started at YYYY-MM-DD HH:MM:SS` (local time, no zone).
//!
//! aider before 2023-05-17 spelled it `# Aider chat started at`, and before
//! 2023-05-12 `# New session started at`; those sessions also used the legacy
//! conventions (`#### > ` user lines, `---` before each turn, `_italic_` tool
//! lines), so the header says which conventions its session follows.

use chrono::NaiveDateTime;

/// The header of every aider since 2023-05-17.
const CURRENT: &str = "# aider chat started at";
/// The headers of aider before 2023-05-17.
const LEGACY: [&str; 2] = ["# Aider chat started at", "# New session started at"];
/// The layout of the header's local time.
const TIME_FORMAT: &str = "%Y-%m-%d %H:%M:%S";

/// A parsed session header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    /// The local start time, or `None` when the text after the prefix is not one.
    pub time: Option<NaiveDateTime>,
    /// Whether the session follows aider's pre-2023-05-17 conventions.
    pub legacy: bool,
}

/// The header on `line`, if it is one (whether or not its time parses).
pub(crate) fn parse(line: &str) -> Option<Header> {
    let (rest, legacy) = match line.strip_prefix(CURRENT) {
        Some(rest) => (rest, false),
        None => (LEGACY.iter().find_map(|p| line.strip_prefix(p))?, true),
    };
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let time = NaiveDateTime::parse_from_str(rest.trim(), TIME_FORMAT).ok();
    Some(Header { time, legacy })
}

/// Whether `line` is a session header.
pub(crate) fn is_header(line: &str) -> bool {
    parse(line).is_some()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn current_header() {
        let h = parse("# aider chat started at 2026-07-17 09:00:00").unwrap();
        assert!(!h.legacy);
        assert_eq!(h.time.unwrap().to_string(), "2026-07-17 09:00:00");
    }

    #[test]
    fn legacy_headers() {
        for line in [
            "# Aider chat started at 2023-05-12 15:23:26",
            "# New session started at 2023-05-10 10:00:00",
        ] {
            let h = parse(line).unwrap();
            assert!(h.legacy);
            assert!(h.time.is_some());
        }
    }

    #[test]
    fn unparseable_time_is_still_a_header() {
        let h = parse("# aider chat started at yesterday").unwrap();
        assert_eq!(h.time, None);
        assert_eq!(parse("# aider chat started at").unwrap().time, None);
    }

    #[test]
    fn not_headers() {
        assert!(!is_header("## aider chat started at 2026-07-17 09:00:00"));
        assert!(!is_header("# aider chat started attached"));
        assert!(!is_header("#### aider chat started at 2026-07-17 09:00:00"));
    }
}
