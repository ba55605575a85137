//! The pseudo-XML Claude Code wraps around text it injects into the user's
//! turn: `<system-reminder>` and IDE context (`<ide_opened_file>`,
//! `<ide_selection>`) are added to what the person typed; slash commands,
//! their output and bash-mode lines (`<command-name>`, `<local-command-stdout>`,
//! `<bash-input>`, ...) are whole records of their own. These helpers find and
//! remove such elements; they never fail on unbalanced or odd markup.

/// Elements Claude Code inserts into a typed message: removed wherever they are.
pub const INJECTED: &[&str] = &[
    "system-reminder",
    "ide_opened_file",
    "ide_selection",
    "ide_diagnostics",
    "user-prompt-submit-hook",
];

/// Elements that make a whole text Claude Code's, not the person's:
/// slash-command wrappers and output, bash-mode output, notifications.
pub const WRAPPERS: &[&str] = &[
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "local-command-caveat",
    "local-command-stdout",
    "local-command-stderr",
    "bash-stdout",
    "bash-stderr",
    "task-notification",
];

/// The bash-mode input element (`!cmd` typed at the prompt).
pub const BASH_INPUT: &str = "bash-input";

/// `text` without every `<tag>…</tag>` element of `tags`. An element that is
/// opened but never closed runs to the end of the text.
pub fn strip(text: &str, tags: &[&str]) -> String {
    let mut out = text.to_string();
    for tag in tags {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        while let Some(start) = out.find(&open) {
            let end = out[start + open.len()..]
                .find(&close)
                .map_or(out.len(), |i| start + open.len() + i + close.len());
            out.replace_range(start..end, "");
        }
    }
    out
}

/// The name of the element `text` starts with (after leading whitespace), if any.
pub fn leading_tag(text: &str) -> Option<&str> {
    let rest = text.trim_start().strip_prefix('<')?;
    let end = rest.find('>')?;
    let name = &rest[..end];
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    valid.then_some(name)
}

/// The inner text of the first `<tag>…</tag>` of `text` (to the end when unclosed).
pub fn inner<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let start = text.find(&open)? + open.len();
    let rest = &text[start..];
    Some(
        rest.find(&format!("</{tag}>"))
            .map_or(rest, |end| &rest[..end]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_elements_anywhere_and_unclosed_ones_to_the_end() {
        assert_eq!(
            strip(
                "<ide_selection>x</ide_selection>hi <system-reminder>r</system-reminder>!",
                INJECTED
            ),
            "hi !"
        );
        assert_eq!(strip("a<system-reminder>b", INJECTED), "a");
        assert_eq!(
            strip("a</system-reminder>b", INJECTED),
            "a</system-reminder>b"
        );
        assert_eq!(
            strip(
                "<system-reminder>1</system-reminder><system-reminder>2</system-reminder>ok",
                INJECTED
            ),
            "ok"
        );
    }

    #[test]
    fn finds_the_leading_tag() {
        assert_eq!(
            leading_tag("  <command-name>/exit</command-name>"),
            Some("command-name")
        );
        assert_eq!(
            leading_tag("<bash-input>ls</bash-input>"),
            Some("bash-input")
        );
        assert_eq!(leading_tag("a <b>"), None);
        assert_eq!(leading_tag("<>"), None);
        assert_eq!(leading_tag("<a b>"), None);
        assert_eq!(leading_tag("<"), None);
    }

    #[test]
    fn inner_text() {
        assert_eq!(
            inner("<bash-input> ls -l</bash-input>", BASH_INPUT),
            Some(" ls -l")
        );
        assert_eq!(inner("<bash-input>ls", BASH_INPUT), Some("ls"));
        assert_eq!(inner("ls", BASH_INPUT), None);
    }
}
