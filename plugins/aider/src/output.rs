//! What one tool-output line tells about the session: `Applied edit to X`,
//! `Added X to the chat` (`.` and ` (read-only)` optional) and `Added X to
//! read-only files` touch file X; `Running X` runs shell command X.

use deja_plugin_api::FileAction;

/// A fact taken from tool output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect<'a> {
    /// A file, as aider wrote its path, and what happened to it.
    File(&'a str, FileAction),
    /// A shell command the agent ran.
    Command(&'a str),
}

/// The effect a tool-output line (prefix removed) records, if any.
pub(crate) fn effect(text: &str) -> Option<Effect<'_>> {
    let text = text.trim();
    if let Some(path) = text.strip_prefix("Applied edit to ") {
        return file(path, FileAction::Edit);
    }
    if let Some(command) = text.strip_prefix("Running ") {
        let command = command.trim();
        return (!command.is_empty()).then_some(Effect::Command(command));
    }
    let added = text.strip_prefix("Added ")?;
    let added = added.strip_suffix('.').unwrap_or(added);
    if let Some(path) = added.strip_suffix(" to the chat (read-only)") {
        file(path, FileAction::ReadOnly)
    } else if let Some(path) = added.strip_suffix(" to read-only files") {
        if is_count(path, " files from directory ") {
            None
        } else {
            file(path, FileAction::ReadOnly)
        }
    } else if let Some(path) = added.strip_suffix(" to the chat") {
        if is_count(path, " of output") {
            None
        } else {
            file(path, FileAction::Add)
        }
    } else {
        None
    }
}

fn file(path: &str, action: FileAction) -> Option<Effect<'_>> {
    let path = path.trim();
    (!path.is_empty()).then_some(Effect::File(path, action))
}

/// Whether `text` is one of aider's counts (`8 lines of output`, `3 files from directory x`).
fn is_count(text: &str, marker: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_digit()) && text.contains(marker)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use FileAction::{Add, Edit, ReadOnly};

    #[test]
    fn files() {
        assert_eq!(
            effect("Applied edit to src/a.rs"),
            Some(Effect::File("src/a.rs", Edit))
        );
        assert_eq!(
            effect("Added a.py to the chat"),
            Some(Effect::File("a.py", Add))
        );
        assert_eq!(
            effect("Added a.py to the chat."),
            Some(Effect::File("a.py", Add))
        );
        assert_eq!(
            effect("Added b.md to the chat (read-only)."),
            Some(Effect::File("b.md", ReadOnly))
        );
        assert_eq!(
            effect("Added CONVENTIONS.md to read-only files."),
            Some(Effect::File("CONVENTIONS.md", ReadOnly))
        );
    }

    #[test]
    fn counts_are_not_files() {
        assert_eq!(effect("Added 8 lines of output to the chat."), None);
        assert_eq!(effect("Added 1 line of output to the chat."), None);
        assert_eq!(
            effect("Added 3 files from directory docs to read-only files."),
            None
        );
        assert_eq!(effect("Added .aider* to .gitignore"), None);
    }

    #[test]
    fn commands() {
        assert_eq!(
            effect("Running npm test"),
            Some(Effect::Command("npm test"))
        );
        assert_eq!(effect("Running "), None);
        assert_eq!(effect("Tokens: 3.9k sent"), None);
    }
}
