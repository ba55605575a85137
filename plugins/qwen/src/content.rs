//! What a record says in words: who said it and the text.
//!
//! - `user` records are the person, except those qwen-code writes on its own
//!   under the user role (`notification`, `cron`, `goal_runtime` subtypes, or
//!   any `provenance` other than `real_user`). A record whose parts are only
//!   `functionResponse` (a tool result, as older versions wrote them) has no
//!   text and is no message.
//! - `assistant` records are the model; thought parts are reasoning, not text.
//! - `tool_result` and `system` records are never messages, nor is anything a
//!   subagent wrote (`isSidechain`).
//!
//! A user's text is what qwen-code itself shows for the record
//! (`projectUserTranscriptForDisplay`): the payload's `displayText` when it
//! pairs with hook context, otherwise the text parts without a trailing
//! `<qwen:user-prompt-submit-context>` part (hook output injected into the
//! prompt). The contents an `@path` reference pasted in (between
//! `--- Content from referenced files ---` and `--- End of content ---`) are
//! cut: the person typed the `@path`, the tool read the rest.

use deja_plugin_api::Role;

use crate::records::{Part, Record};

/// User-record subtypes that are the person.
const USER_SUBTYPES: &[&str] = &["mid_turn_user_message", "realtime_message"];
/// Hook context qwen-code appends to a prompt as its own part.
const HOOK_OPEN: &str = "<qwen:user-prompt-submit-context>";
const HOOK_CLOSE: &str = "</qwen:user-prompt-submit-context>";
/// The block an `@path` reference expands to.
const REFERENCED_OPEN: &str = "--- Content from referenced files ---";
const REFERENCED_CLOSE: &str = "--- End of content ---";

/// Who said `record`, and what, when it is a message.
pub fn message(record: &Record) -> Option<(Role, String)> {
    if record.is_sidechain {
        return None;
    }
    let (role, text) = match record.kind.as_str() {
        "user" if is_person(record) => (Role::User, user_text(record)),
        "assistant" => (Role::Assistant, text_parts(&record.parts)),
        _ => return None,
    };
    (!text.trim().is_empty()).then_some((role, text))
}

fn is_person(record: &Record) -> bool {
    let subtype_ok = record
        .subtype
        .as_deref()
        .is_none_or(|s| USER_SUBTYPES.contains(&s));
    let provenance_ok = record
        .provenance
        .as_deref()
        .is_none_or(|p| p == "real_user");
    subtype_ok && provenance_ok
}

/// The non-thought text parts, joined as written (parts carry their own line breaks).
fn text_parts(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|part| match part {
            Part::Text {
                text,
                thought: false,
            } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn user_text(record: &Record) -> String {
    let hook_part = match record.parts.as_slice() {
        [_, .., Part::Text { text, .. }] => is_hook_context(text),
        _ => false,
    };
    let display = record.prompt.as_ref().and_then(|prompt| {
        (prompt.has_hook_context || hook_part)
            .then(|| prompt.display_text.clone())
            .flatten()
    });
    let text = match display {
        Some(display) => display,
        None if hook_part && record.prompt.is_none() => {
            text_parts(record.parts.split_last().map_or(&[], |(_, rest)| rest))
        }
        None => text_parts(&record.parts),
    };
    without_referenced_content(text)
}

/// Whether `text` is exactly one hook-context block (qwen-code's
/// `isUserPromptSubmitContextPartText`; an empty block counts).
fn is_hook_context(text: &str) -> bool {
    let trimmed = text.trim();
    let prefix = format!("{HOOK_OPEN}\n");
    let suffix = format!("\n{HOOK_CLOSE}");
    if !trimmed.starts_with(&prefix) || !trimmed.ends_with(&suffix) {
        return false;
    }
    let body = trimmed
        .get(prefix.len()..trimmed.len().saturating_sub(suffix.len()))
        .unwrap_or_default();
    !body.contains(HOOK_OPEN) && !body.contains(HOOK_CLOSE)
}

/// `text` without the file contents `@path` references pasted into it.
fn without_referenced_content(text: String) -> String {
    let Some(open) = line_start(&text, REFERENCED_OPEN, 0) else {
        return text;
    };
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    let mut at = Some(open);
    while let Some(open) = at {
        out.push_str(&text[from..open]);
        from = match text[open..].find(REFERENCED_CLOSE) {
            Some(close) => open + close + REFERENCED_CLOSE.len(),
            None => text.len(),
        };
        at = line_start(&text, REFERENCED_OPEN, from);
    }
    out.push_str(&text[from..]);
    out.trim_end().to_string()
}

/// The byte index of the first `marker` at or after `from` that starts a line.
fn line_start(text: &str, marker: &str, from: usize) -> Option<usize> {
    let mut search = from;
    while let Some(found) = text.get(search..)?.find(marker) {
        let at = search + found;
        if at == 0 || text[..at].ends_with('\n') {
            return Some(at);
        }
        search = at + marker.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::Prompt;

    fn record(kind: &str, parts: Vec<Part>) -> Record {
        Record {
            uuid: "u".into(),
            parent_uuid: None,
            session_id: "s".into(),
            timestamp: None,
            kind: kind.into(),
            subtype: None,
            provenance: None,
            cwd: None,
            is_sidechain: false,
            parts,
            prompt: None,
            event: crate::records::SystemEvent::Other,
            tool_result: None,
        }
    }

    fn text(t: &str) -> Part {
        Part::Text {
            text: t.into(),
            thought: false,
        }
    }

    #[test]
    fn roles_by_record_type() {
        let said = |kind: &str| message(&record(kind, vec![text("hi")])).map(|m| m.0);
        assert_eq!(said("user"), Some(Role::User));
        assert_eq!(said("assistant"), Some(Role::Assistant));
        assert_eq!(said("tool_result"), None);
        assert_eq!(said("system"), None);
    }

    #[test]
    fn thoughts_and_calls_are_not_text() {
        let r = record(
            "assistant",
            vec![
                Part::Text {
                    text: "thinking".into(),
                    thought: true,
                },
                text("Done."),
                Part::Other,
            ],
        );
        assert_eq!(message(&r), Some((Role::Assistant, "Done.".into())));
        let only_thought = record(
            "assistant",
            vec![Part::Text {
                text: "x".into(),
                thought: true,
            }],
        );
        assert_eq!(message(&only_thought), None);
        let response = record(
            "user",
            vec![Part::Response {
                id: None,
                failed: false,
                outcome: None,
            }],
        );
        assert_eq!(message(&response), None);
    }

    #[test]
    fn injected_user_records_are_not_the_person() {
        for subtype in ["notification", "cron", "goal_runtime", "whatever"] {
            let mut r = record("user", vec![text("x")]);
            r.subtype = Some(subtype.into());
            assert_eq!(message(&r), None, "{subtype}");
        }
        let mut r = record("user", vec![text("x")]);
        r.subtype = Some("mid_turn_user_message".into());
        assert!(message(&r).is_some());
        r.provenance = Some("system".into());
        assert_eq!(message(&r), None);
        let mut r = record("assistant", vec![text("a subagent's answer")]);
        r.is_sidechain = true;
        assert_eq!(message(&r), None);
    }

    #[test]
    fn hook_context_is_projected_away() {
        let hook = text(
            "<qwen:user-prompt-submit-context>\nbranch: main\n</qwen:user-prompt-submit-context>",
        );
        let mut r = record("user", vec![text("expanded prompt"), hook.clone()]);
        r.prompt = Some(Prompt {
            display_text: Some("typed prompt".into()),
            has_hook_context: true,
        });
        assert_eq!(message(&r).map(|m| m.1).as_deref(), Some("typed prompt"));
        let r = record("user", vec![text("legacy prompt"), hook.clone()]);
        assert_eq!(message(&r).map(|m| m.1).as_deref(), Some("legacy prompt"));
        // A lone hook part is kept, as qwen-code keeps it.
        assert!(message(&record("user", vec![hook])).is_some());
        assert!(is_hook_context(
            "<qwen:user-prompt-submit-context>\n</qwen:user-prompt-submit-context>"
        ));
        assert!(!is_hook_context("<qwen:user-prompt-submit-context>\nx"));
    }

    #[test]
    fn referenced_file_contents_are_cut() {
        let r = record(
            "user",
            vec![
                text("@notes.md what is in it?"),
                text("\n--- Content from referenced files ---"),
                text("\nContent from @/p/notes.md:\n"),
                text("buy milk"),
                text("\n--- End of content ---"),
            ],
        );
        assert_eq!(
            message(&r).map(|m| m.1).as_deref(),
            Some("@notes.md what is in it?")
        );
        assert_eq!(
            without_referenced_content("a\n--- Content from referenced files ---\nx".into()),
            "a"
        );
        let inline = "quote --- Content from referenced files --- kept".to_string();
        assert_eq!(without_referenced_content(inline.clone()), inline);
    }
}
