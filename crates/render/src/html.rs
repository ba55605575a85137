//! Text for a web page: every stored string is cleaned as for a terminal
//! ([`crate::term::clean`]: control characters and bidirectional controls
//! become visible stand-ins) and then escaped for HTML, so a transcript
//! holding `<script>`, an `onerror=` attribute or an entity shows as the
//! text it is and never as markup. The functions here return HTML that is
//! safe to place between tags or inside a quoted attribute value.
//!
//! [`message`] renders a whole message: prose as paragraphs with inline
//! code and bold, fenced code blocks highlighted, long blocks folded (a `<details>`
//! element, which needs no script).

use std::fmt::Write as _;

/// Code blocks longer than this many lines are folded.
pub const FOLD_LINES: usize = 12;

/// `text`, cleaned and escaped: safe as element content and as a quoted
/// attribute value.
pub fn text(text: &str) -> String {
    let clean = crate::term::clean(text);
    let mut out = String::with_capacity(clean.len() + 16);
    push_escaped(&mut out, &clean);
    out
}

/// Appends `s` escaped (the five characters that HTML gives meaning to).
fn push_escaped(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// `snippet` escaped, with the byte ranges of `spans` (matched words, in
/// order, on character boundaries) inside `<mark>` elements. Spans that do
/// not fit are ignored.
pub fn marked(snippet: &str, spans: &[(usize, usize)]) -> String {
    let mut out = String::with_capacity(snippet.len() + 32);
    let mut last = 0;
    for &(a, b) in spans {
        if a < last || b > snippet.len() || a >= b {
            continue;
        }
        let (Some(before), Some(word)) = (snippet.get(last..a), snippet.get(a..b)) else {
            continue;
        };
        out.push_str(&text(before));
        out.push_str("<mark>");
        out.push_str(&text(word));
        out.push_str("</mark>");
        last = b;
    }
    out.push_str(&text(snippet.get(last..).unwrap_or_default()));
    out
}

/// One part of a message.
#[derive(Debug, PartialEq, Eq)]
enum Part<'a> {
    /// Prose.
    Prose(&'a str),
    /// A fenced code block: its language tag (maybe empty) and its lines.
    Code(&'a str, Vec<&'a str>),
}

/// Splits a message into prose and fenced code blocks (```` ``` ```` or
/// `~~~`); an unclosed fence runs to the end of the message.
fn parts(text: &str) -> Vec<Part<'_>> {
    let mut out = Vec::new();
    let mut prose_start = 0;
    let mut offset = 0;
    let mut code: Option<(&str, &str, Vec<&str>)> = None;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let bare = line.trim_end_matches(['\n', '\r']);
        let trimmed = bare.trim_start();
        match &mut code {
            Some((fence, lang, lines)) => {
                if trimmed.starts_with(*fence) && trimmed.trim_start_matches(['`', '~']).is_empty()
                {
                    out.push(Part::Code(lang, std::mem::take(lines)));
                    code = None;
                    prose_start = offset;
                } else {
                    lines.push(bare);
                }
            }
            None => {
                let fence = if trimmed.starts_with("```") {
                    Some("```")
                } else if trimmed.starts_with("~~~") {
                    Some("~~~")
                } else {
                    None
                };
                if let Some(fence) = fence {
                    if let Some(prose) = text.get(prose_start..start) {
                        if !prose.trim().is_empty() {
                            out.push(Part::Prose(prose));
                        }
                    }
                    let lang = trimmed.trim_start_matches(['`', '~']).trim();
                    let lang = lang.split_whitespace().next().unwrap_or("");
                    code = Some((fence, lang, Vec::new()));
                }
            }
        }
    }
    match code {
        Some((_, lang, lines)) => out.push(Part::Code(lang, lines)),
        None => {
            if let Some(prose) = text.get(prose_start..) {
                if !prose.trim().is_empty() {
                    out.push(Part::Prose(prose));
                }
            }
        }
    }
    out
}

/// A whole message as HTML: paragraphs (blank lines separate them, line
/// breaks kept) with `inline code`, and code blocks highlighted; a block of
/// more than [`FOLD_LINES`] lines is folded, its summary naming its
/// language and length.
pub fn message(body: &str) -> String {
    let mut out = String::with_capacity(body.len() + body.len() / 4 + 64);
    for part in parts(body) {
        match part {
            Part::Prose(p) => {
                for para in p.split("\n\n").filter(|s| !s.trim().is_empty()) {
                    out.push_str("<p>");
                    let lines: Vec<&str> = para.trim_matches('\n').lines().collect();
                    for (i, l) in lines.iter().enumerate() {
                        if i > 0 {
                            out.push_str("<br>");
                        }
                        inline(&mut out, l);
                    }
                    out.push_str("</p>");
                }
            }
            Part::Code(lang, lines) => {
                let block = code_block(lang, &lines);
                if lines.len() > FOLD_LINES {
                    let label = if lang.is_empty() { "text" } else { lang };
                    let _ = write!(
                        out,
                        "<details class=\"fold\"><summary>{} · {} lines</summary>{block}</details>",
                        text(label),
                        lines.len()
                    );
                } else {
                    out.push_str(&block);
                }
            }
        }
    }
    out
}

/// One prose line with `` `code` `` spans.
fn inline(out: &mut String, line: &str) {
    let mut rest = line;
    while let Some(a) = rest.find('`') {
        let Some(len) = rest[a + 1..].find('`') else {
            break;
        };
        strong(out, &rest[..a]);
        out.push_str("<code>");
        out.push_str(&text(&rest[a + 1..a + 1 + len]));
        out.push_str("</code>");
        rest = &rest[a + 1 + len + 1..];
    }
    strong(out, rest);
}

/// Prose with `**bold**` spans (a `**` without its pair stays as it is).
fn strong(out: &mut String, prose: &str) {
    let mut rest = prose;
    while let Some(a) = rest.find("**") {
        let Some(len) = rest[a + 2..].find("**").filter(|&l| l > 0) else {
            break;
        };
        out.push_str(&text(&rest[..a]));
        out.push_str("<strong>");
        out.push_str(&text(&rest[a + 2..a + 2 + len]));
        out.push_str("</strong>");
        rest = &rest[a + 2 + len + 2..];
    }
    out.push_str(&text(rest));
}

/// A code block, highlighted by [`highlight`].
fn code_block(lang: &str, lines: &[&str]) -> String {
    let mut out = String::from("<pre class=\"code\"");
    if !lang.is_empty() {
        let _ = write!(out, " data-lang=\"{}\"", text(lang));
    }
    out.push_str("><code>");
    let syntax = Syntax::of(lang);
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        highlight(&mut out, l, &syntax);
    }
    out.push_str("</code></pre>");
    out
}

/// What the highlighter knows of a language: its line comment and words.
struct Syntax {
    diff: bool,
    comment: &'static [&'static str],
    keywords: &'static [&'static str],
}

const C_LIKE: &[&str] = &[
    "fn",
    "let",
    "mut",
    "const",
    "static",
    "pub",
    "impl",
    "struct",
    "enum",
    "trait",
    "use",
    "mod",
    "match",
    "if",
    "else",
    "for",
    "while",
    "loop",
    "return",
    "break",
    "continue",
    "async",
    "await",
    "function",
    "var",
    "class",
    "interface",
    "type",
    "import",
    "export",
    "from",
    "new",
    "this",
    "self",
    "Self",
    "true",
    "false",
    "null",
    "None",
    "nil",
    "where",
    "in",
    "as",
    "def",
    "elif",
    "try",
    "catch",
    "except",
    "finally",
    "raise",
    "throw",
    "with",
    "yield",
    "lambda",
    "package",
    "func",
    "go",
    "defer",
    "struct",
    "select",
    "case",
    "switch",
    "default",
    "do",
    "not",
    "and",
    "or",
    "is",
    "pass",
    "True",
    "False",
    "public",
    "private",
    "protected",
    "void",
    "int",
    "string",
];
const SQL: &[&str] = &[
    "select", "from", "where", "and", "or", "not", "join", "left", "inner", "on", "group", "by",
    "order", "insert", "into", "values", "update", "set", "delete", "create", "table", "index",
    "null", "as", "limit", "SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "JOIN", "LEFT", "INNER",
    "ON", "GROUP", "BY", "ORDER", "INSERT", "INTO", "VALUES", "UPDATE", "SET", "DELETE", "CREATE",
    "TABLE", "INDEX", "NULL", "AS", "LIMIT",
];
const SHELL: &[&str] = &[
    "if", "then", "else", "fi", "for", "do", "done", "while", "case", "esac", "function", "export",
    "local", "return", "in", "cd", "echo", "exit",
];

impl Syntax {
    fn of(lang: &str) -> Syntax {
        let lang = lang.to_ascii_lowercase();
        match lang.as_str() {
            "diff" | "patch" => Syntax {
                diff: true,
                comment: &[],
                keywords: &[],
            },
            "sql" => Syntax {
                diff: false,
                comment: &["--"],
                keywords: SQL,
            },
            "sh" | "bash" | "shell" | "zsh" | "console" => Syntax {
                diff: false,
                comment: &["#"],
                keywords: SHELL,
            },
            "py" | "python" | "rb" | "ruby" | "toml" | "yaml" | "yml" | "ini" => Syntax {
                diff: false,
                comment: &["#"],
                keywords: C_LIKE,
            },
            "" | "text" | "txt" | "log" | "output" => Syntax {
                diff: false,
                comment: &[],
                keywords: &[],
            },
            _ => Syntax {
                diff: false,
                comment: &["//"],
                keywords: C_LIKE,
            },
        }
    }
}

/// One line of code, escaped, with keywords, strings, numbers and comments
/// in `<span>`s of classes `k`, `s`, `n` and `c` (diff lines: `add`, `del`).
fn highlight(out: &mut String, line: &str, syntax: &Syntax) {
    if syntax.diff {
        let class = match line.chars().next() {
            Some('+') if !line.starts_with("+++") => Some("add"),
            Some('-') if !line.starts_with("---") => Some("del"),
            Some('@') => Some("k"),
            _ => None,
        };
        match class {
            Some(c) => {
                let _ = write!(out, "<span class=\"{c}\">{}</span>", text(line));
            }
            None => out.push_str(&text(line)),
        }
        return;
    }
    let mut rest = line;
    while !rest.is_empty() {
        if syntax.comment.iter().any(|c| rest.starts_with(c)) {
            let _ = write!(out, "<span class=\"c\">{}</span>", text(rest));
            return;
        }
        let Some(first) = rest.chars().next() else {
            break;
        };
        if first == '"' || first == '\'' {
            let end = rest[1..]
                .char_indices()
                .scan(false, |escaped, (i, c)| {
                    let done = !*escaped && c == first;
                    *escaped = !*escaped && c == '\\';
                    Some((i, done))
                })
                .find(|(_, done)| *done)
                .map_or(rest.len(), |(i, _)| 1 + i + first.len_utf8());
            let _ = write!(out, "<span class=\"s\">{}</span>", text(&rest[..end]));
            rest = &rest[end..];
            continue;
        }
        if first.is_alphanumeric() || first == '_' {
            let end = rest
                .char_indices()
                .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
                .map_or(rest.len(), |(i, _)| i);
            let word = &rest[..end];
            if first.is_ascii_digit() {
                let _ = write!(out, "<span class=\"n\">{}</span>", text(word));
            } else if syntax.keywords.contains(&word) {
                let _ = write!(out, "<span class=\"k\">{}</span>", text(word));
            } else {
                out.push_str(&text(word));
            }
            rest = &rest[end..];
            continue;
        }
        let len = first.len_utf8();
        out.push_str(&text(&rest[..len]));
        rest = &rest[len..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tags of an HTML fragment, by name.
    fn tags(html: &str) -> Vec<String> {
        html.split('<')
            .skip(1)
            .map(|t| {
                t.trim_start_matches('/')
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn markup_in_stored_text_is_shown_as_text() {
        let evil =
            "<script>alert(1)</script><img src=x onerror=\"alert(2)\"> &amp; 'q'\u{1b}]0;t\u{7}";
        let out = text(evil);
        assert_eq!(
            out,
            "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&quot;alert(2)&quot;&gt; &amp;amp; &#39;q&#39;␛]0;t␇"
        );
        assert!(!out.contains('<') && !out.contains('>') && !out.contains('"'));
    }

    #[test]
    fn a_message_has_only_its_own_tags() {
        let evil = "Look: <b onmouseover=x>hi</b> `<script>`\n\n```html\n<script>alert(1)</script>\n\"<iframe>\"\n```\n";
        let out = message(evil);
        for t in tags(&out) {
            assert!(
                ["p", "br", "code", "strong", "pre", "span", "details", "summary"]
                    .contains(&t.as_str()),
                "{t} in {out}"
            );
        }
        assert!(out.contains("&lt;script&gt;"), "{out}");
    }

    #[test]
    fn marks_matched_words_and_escapes_the_rest() {
        let s = "a <tenant> predicate";
        let out = marked(s, &[(3, 9), (11, 20)]);
        assert_eq!(out, "a &lt;<mark>tenant</mark>&gt; <mark>predicate</mark>");
        // Spans that overlap or run past the end are ignored.
        assert_eq!(marked("ab", &[(0, 1), (0, 1), (1, 9)]), "<mark>a</mark>b");
    }

    #[test]
    fn splits_prose_and_fenced_blocks() {
        let p = parts("intro\n```rust\nfn x() {}\n```\nafter\n~~~\nopen");
        assert_eq!(
            p,
            vec![
                Part::Prose("intro\n"),
                Part::Code("rust", vec!["fn x() {}"]),
                Part::Prose("after\n"),
                Part::Code("", vec!["open"]),
            ]
        );
    }

    #[test]
    fn long_blocks_fold_short_ones_do_not() {
        let long = format!("```log\n{}```\n", "line\n".repeat(FOLD_LINES + 1));
        let out = message(&long);
        assert!(
            out.starts_with("<details class=\"fold\"><summary>log · 13 lines</summary>"),
            "{out}"
        );
        let short = message("```\nx\n```");
        assert!(!short.contains("<details"), "{short}");
    }

    #[test]
    fn highlights_words_strings_numbers_comments_and_diffs() {
        let out = message("```rust\nlet x = \"a\\\"b\" + 42; // done\n```");
        assert!(out.contains("<span class=\"k\">let</span>"), "{out}");
        assert!(
            out.contains("<span class=\"s\">&quot;a\\&quot;b&quot;</span>"),
            "{out}"
        );
        assert!(out.contains("<span class=\"n\">42</span>"), "{out}");
        assert!(out.contains("<span class=\"c\">// done</span>"), "{out}");
        let diff = message("```diff\n- old\n+ new\n ctx\n```");
        assert!(diff.contains("<span class=\"del\">- old</span>"), "{diff}");
        assert!(diff.contains("<span class=\"add\">+ new</span>"), "{diff}");
    }

    #[test]
    fn inline_code_and_line_breaks() {
        assert_eq!(
            message("use `a<b>` here\nnext\n\nsecond"),
            "<p>use <code>a&lt;b&gt;</code> here<br>next</p><p>second</p>"
        );
        assert_eq!(
            message("**1. first** and ** alone `**not**`"),
            "<p><strong>1. first</strong> and ** alone <code>**not**</code></p>"
        );
    }

    proptest::proptest! {
        #[test]
        fn no_stored_text_makes_a_tag(s in "\\PC*|[<>\"'&`~\n a-z]*") {
            for t in tags(&message(&s)) {
                proptest::prop_assert!(
                    ["p", "br", "code", "strong", "pre", "span", "details", "summary"].contains(&t.as_str()),
                    "{} from {:?}", t, s
                );
            }
            let escaped = text(&s);
            proptest::prop_assert!(!escaped.contains('<') && !escaped.contains('"'));
        }
    }
}
