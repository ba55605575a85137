//! Snippets: the part of a message around the first matched query word, on
//! one line, with the spans of matched words so a terminal can highlight them.

use deja_store::segment::is_cjk;

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

/// Byte spans in `flat` of what matches a term: whole words that match, and
/// inside a word of Chinese, Japanese or Korean characters (where no space
/// parts the words) every place a term of those characters stands, the
/// overlapping ones joined. In order, never overlapping.
fn matched(flat: &str, ws: &[(usize, usize)], terms: &[String]) -> Vec<(usize, usize)> {
    let cjk_terms: Vec<&str> = terms
        .iter()
        .map(String::as_str)
        .filter(|t| t.chars().any(is_cjk))
        .collect();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for &(s, e) in ws {
        let word = &flat[s..e];
        if terms.iter().any(|t| matches(word, t)) {
            spans.push((s, e));
        } else if word.chars().any(is_cjk) {
            for t in &cjk_terms {
                spans.extend(word.match_indices(t).map(|(i, m)| (s + i, s + i + m.len())));
            }
        }
    }
    spans.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (a, b) in spans {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Terminal columns a character takes: two for the wide characters of
/// Chinese, Japanese and Korean, one for the rest.
fn columns(c: char) -> usize {
    if is_cjk(c) || matches!(c as u32, 0x3000..=0x303F | 0xFF01..=0xFF60 | 0xFFE0..=0xFFE6) {
        2
    } else {
        1
    }
}

/// A one-line snippet of about `width` terminal columns around the first
/// match, and the byte spans of matched words within it.
pub fn snippet(text: &str, terms: &[String], width: usize) -> (String, Vec<(usize, usize)>) {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let ws = words(&flat);
    let found = matched(&flat, &ws, terms);
    let first = found.first().map(|(s, _)| *s).unwrap_or(0);
    // Start about a third of the width before the match, at the start of a
    // word, and end at the end of one.
    let chars: Vec<(usize, char)> = flat.char_indices().collect();
    let at = chars.iter().position(|(i, _)| *i >= first).unwrap_or(0);
    let mut from = at;
    let mut before = 0;
    while from > 0 && before + columns(chars[from - 1].1) <= width / 3 {
        from -= 1;
        before += columns(chars[from].1);
    }
    while from > 0 && from < at && !chars[from - 1].1.is_whitespace() && !is_cjk(chars[from].1) {
        from += 1;
    }
    let mut to = from;
    let mut used = 0;
    while to < chars.len() && used + columns(chars[to].1) <= width {
        used += columns(chars[to].1);
        to += 1;
    }
    let half = from + (to - from) / 2;
    while to < chars.len() && to > half && !chars[to].1.is_whitespace() && !is_cjk(chars[to].1) {
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
    let spans = found
        .iter()
        .filter(|(s, e)| *s >= start_byte && *e <= end_byte)
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
    fn chinese_japanese_and_korean_matches_are_marked_inside_their_runs() {
        let text = format!(
            "{} 修复了内存泄露的问题，然后重新运行测试。",
            "前文".repeat(40)
        );
        let terms = vec!["内存".to_string(), "存泄".to_string(), "泄露".to_string()];
        let out = highlighted(&text, &terms, 30, &|w| format!("[{w}]"));
        assert!(out.contains("修复了[内存泄露]的问题"), "{out}");
        // Thirty columns hold fifteen wide characters, give or take the cut.
        let wide = out.trim_matches('…').replace(['[', ']'], "");
        assert!(wide.chars().count() <= 16, "{out}");
        assert!(out.starts_with('…'), "{out}");
        let out = highlighted(
            "메모리 누수가 발생했습니다",
            &["누수".into()],
            40,
            &|w| format!("[{w}]"),
        );
        assert_eq!(out, "메모리 [누수]가 발생했습니다");
        let out = highlighted("テストが失敗した", &["失敗".into()], 40, &|w| {
            format!("[{w}]")
        });
        assert_eq!(out, "テストが[失敗]した");
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
