//! Snippets: the part of a message around the first matched query word, on
//! one line, with the spans of matched words so a terminal can highlight them.

/// A word of the text matches a term when they share a stem-like prefix: the
/// whole term, or all but its last two letters when it is long.
fn matches(word: &str, term: &str) -> bool {
    let w = word.to_lowercase();
    let t = term.to_lowercase();
    if w == t {
        return true;
    }
    let n = t.chars().count();
    if n < 5 {
        return false;
    }
    let stem: String = t.chars().take(n - 2).collect();
    w.starts_with(&stem)
}

/// Words of `text` with their byte ranges.
fn words(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        let inside = c.is_alphanumeric() || c == '_';
        match (inside, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, text.len()));
    }
    out
}

/// A one-line snippet of about `width` characters around the first match, and
/// the byte spans of matched words within it.
pub fn snippet(text: &str, terms: &[String], width: usize) -> (String, Vec<(usize, usize)>) {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let ws = words(&flat);
    let first = ws
        .iter()
        .find(|(s, e)| terms.iter().any(|t| matches(&flat[*s..*e], t)))
        .map(|(s, _)| *s)
        .unwrap_or(0);
    // Start about a third of the width before the match, at the start of a
    // word, and end at the end of one.
    let chars: Vec<(usize, char)> = flat.char_indices().collect();
    let at = chars.iter().position(|(i, _)| *i >= first).unwrap_or(0);
    let mut from = at.saturating_sub(width / 3);
    while from > 0 && from < at && !chars[from - 1].1.is_whitespace() {
        from += 1;
    }
    let mut to = (from + width).min(chars.len());
    while to < chars.len() && to > from + width / 2 && !chars[to].1.is_whitespace() {
        to -= 1;
    }
    let start_byte = chars.get(from).map(|c| c.0).unwrap_or(0);
    let end_byte = chars.get(to).map(|c| c.0).unwrap_or(flat.len());
    let mut out = String::new();
    let prefix = if from > 0 { "…" } else { "" };
    out.push_str(prefix);
    out.push_str(&flat[start_byte..end_byte]);
    if to < chars.len() {
        out.push('…');
    }
    let shift = prefix.len() as isize - start_byte as isize;
    let spans = ws
        .iter()
        .filter(|(s, e)| *s >= start_byte && *e <= end_byte)
        .filter(|(s, e)| terms.iter().any(|t| matches(&flat[*s..*e], t)))
        .map(|(s, e)| {
            (
                (*s as isize + shift) as usize,
                (*e as isize + shift) as usize,
            )
        })
        .collect();
    (out, spans)
}

/// `snippet` with its spans wrapped by `mark`.
pub fn highlighted(
    text: &str,
    terms: &[String],
    width: usize,
    mark: &dyn Fn(&str) -> String,
) -> String {
    let (s, spans) = snippet(text, terms, width);
    let mut out = String::new();
    let mut last = 0;
    for (a, b) in spans {
        if a < last || b > s.len() {
            continue;
        }
        out.push_str(&s[last..a]);
        out.push_str(&mark(&s[a..b]));
        last = b;
    }
    out.push_str(&s[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centres_on_the_match_and_marks_it() {
        let text = format!(
            "{} The query misses the tenant predicate. {}",
            "x ".repeat(100),
            "y ".repeat(100)
        );
        let terms = vec!["tenant".to_string(), "predicates".to_string()];
        let out = highlighted(&text, &terms, 60, &|w| format!("[{w}]"));
        assert!(out.contains("[tenant] [predicate]"), "{out}");
        assert!(out.starts_with('…') && out.ends_with('…'), "{out}");
        // Whole words at both ends.
        let inner = out.trim_matches('…');
        let first = inner.split(' ').next().unwrap();
        let last = inner.rsplit(' ').next().unwrap();
        assert!(["x", "The", "query"].contains(&first), "{out}");
        assert_eq!(last, "y", "{out}");
        let cut = highlighted(
            "alpha beta gamma delta epsilon",
            &["delta".into()],
            12,
            &|w| w.to_string(),
        );
        assert!(!cut.contains("…ta") && !cut.contains("…amma"), "{cut}");
    }

    #[test]
    fn unicode_and_no_match_are_safe() {
        let out = highlighted("héllo wörld ünïcode", &["zzz".into()], 5, &|w| {
            w.to_string()
        });
        assert_eq!(out, "héllo…");
        assert_eq!(highlighted("", &[], 10, &|w| w.to_string()), "");
    }
}
