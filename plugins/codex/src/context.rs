//! What in a user message the person typed, and what Codex (or its IDE
//! extension) put there.
//!
//! Codex sends context to the model as user-role text: the AGENTS.md
//! instructions (`# AGENTS.md instructions for <dir>` / `<user_instructions>`),
//! `<environment_context>`, `<turn_aborted>`, `<user_shell_command>`,
//! `<subagent_notification>`, `<recommended_plugins>`, the review hand-off
//! `<user_action>`, the compaction summary, image tags and more. Codex itself
//! recognizes them by their opening and closing tags (its
//! `is_contextual_user_fragment`); so does deja, part by part, keeping the parts
//! the person wrote.
//!
//! The VS Code extension and the desktop app prefix what was typed with the
//! editor's state (`# Context from my IDE setup:`, `# Files mentioned by the
//! user:`) and a `## My request for Codex:` line; only the request is kept.

/// Tags of the context blocks Codex wraps in `<tag>...</tag>`.
const CONTEXT_TAGS: &[&str] = &[
    "environment_context",
    "user_instructions",
    "INSTRUCTIONS",
    "turn_aborted",
    "user_shell_command",
    "subagent_notification",
    "recommended_plugins",
    "user_action",
    "skill",
    "context_changes",
    "goal_context",
    "WORKSPACE_SNAPSHOT",
    "permissions instructions",
    "model_switch",
    "collaboration_mode",
    "multi_agent_mode",
    "skills_instructions",
    "plugins_instructions",
    "apps_instructions",
    "app-context",
    "personality_spec",
    "hook_prompt",
];

/// Plain-text openings of injected parts.
const CONTEXT_PREFIXES: &[&str] = &[
    "# AGENTS.md instructions",
    // The compaction summary Codex hands the model after compacting (templates/compact/summary_prefix.md).
    "Another language model started to solve this problem and produced a summary",
];

/// Headers of the editor state the IDE extension and desktop app put before a request.
const IDE_HEADERS: &[&str] = &[
    "# Context from my IDE setup:",
    "# Files mentioned by the user:",
];

/// The line after which the IDE extension puts what was typed.
const REQUEST_MARKER: &str = "## My request for Codex:";

/// The text the person typed among a user message's text parts, if any:
/// injected parts are dropped, IDE preambles stripped, the rest joined by a
/// blank line and trimmed.
pub fn typed_text<'a>(parts: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let kept: Vec<&str> = parts.into_iter().filter_map(typed_part).collect();
    let text = kept.join("\n\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// One part's typed text: `None` when it is injected or empty.
fn typed_part(part: &str) -> Option<&str> {
    let trimmed = part.trim();
    if trimmed.is_empty() || is_injected(trimmed) || is_image_tag(trimmed) {
        return None;
    }
    let request = strip_ide_preamble(trimmed)?.trim();
    (!request.is_empty()).then_some(request)
}

/// Whether `text` (trimmed) is context Codex injected rather than typed text.
pub fn is_injected(text: &str) -> bool {
    CONTEXT_PREFIXES.iter().any(|p| text.starts_with(p)) || is_wrapped_block(text)
}

/// `<tag ...>...</tag>` where `tag` is one of Codex's context tags, or a
/// snake_case tag (the form all of Codex's context tags take); HTML-like
/// text the person typed (`<div>...</div>`) is not caught.
fn is_wrapped_block(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('<') else {
        return false;
    };
    let Some(end) = rest.find('>') else {
        return false;
    };
    let opening = &rest[..end];
    let tag = CONTEXT_TAGS
        .iter()
        .find(|t| opening == **t || opening.starts_with(&format!("{t} ")))
        .map(|t| (*t).to_string())
        .or_else(|| {
            let name = opening.split_whitespace().next().unwrap_or_default();
            let snake = name.contains('_')
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            snake.then(|| name.to_string())
        });
    tag.is_some_and(|tag| text.ends_with(&format!("</{tag}>")))
}

/// The tags around an attached image (`<image name=[Image #1]>`, `</image>`,
/// `<local_image ...>`): the image itself is not text.
fn is_image_tag(text: &str) -> bool {
    let single_line = !text.contains('\n');
    let opening = ["<image", "<local_image"]
        .iter()
        .any(|t| text.starts_with(t) && text.ends_with('>'));
    let closing = text == "</image>" || text == "</local_image>";
    single_line && (opening || closing)
}

/// What follows `## My request for Codex:` in an IDE-prefixed part; the part
/// itself when it has no IDE header; `None` when it is editor state only.
fn strip_ide_preamble(text: &str) -> Option<&str> {
    if !IDE_HEADERS.iter().any(|h| text.starts_with(h)) {
        return Some(text);
    }
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        offset += line.len();
        if line.trim_end() == REQUEST_MARKER {
            return Some(&text[offset..]);
        }
    }
    None
}

/// The `<cwd>` of an `<environment_context>` block (where legacy rollouts keep
/// the working directory).
pub fn environment_cwd(text: &str) -> Option<String> {
    let trimmed = text.trim_start();
    if !trimmed.starts_with("<environment_context>") {
        return None;
    }
    let start = trimmed.find("<cwd>")? + "<cwd>".len();
    let end = start + trimmed[start..].find("</cwd>")?;
    let cwd = trimmed[start..end].trim();
    (!cwd.is_empty()).then(|| cwd.to_string())
}

/// The command of a `<user_shell_command>` block: what the person ran with `!`.
pub fn user_shell_command(text: &str) -> Option<String> {
    let body = text.trim().strip_prefix("<user_shell_command>")?;
    let start = body.find("<command>")? + "<command>".len();
    let end = start + body[start..].find("</command>")?;
    let command = body[start..end].trim();
    (!command.is_empty()).then(|| command.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(parts: &[&str]) -> Option<String> {
        typed_text(parts.iter().copied())
    }

    #[test]
    fn drops_codex_context_blocks() {
        for injected in [
            "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>",
            "<user_instructions>\n\n# Rules\n\n</user_instructions>",
            "# AGENTS.md instructions for /p\n\n<INSTRUCTIONS>\nx\n</INSTRUCTIONS>",
            "# AGENTS.md instructions\n\n<INSTRUCTIONS>\nx\n</INSTRUCTIONS>",
            "<turn_aborted>\nThe user interrupted the previous turn on purpose.\n</turn_aborted>",
            "<user_action>\n  <context>review</context>\n</user_action>",
            "<recommended_plugins>\nlist\n</recommended_plugins>",
            "<some_future_block attr=\"1\">\nx\n</some_future_block>",
            "Another language model started to solve this problem and produced a summary of its thinking process.",
            "<image name=[Image #1]>",
            "</image>",
        ] {
            assert_eq!(typed(&[injected]), None, "{injected}");
        }
    }

    #[test]
    fn keeps_what_the_person_typed() {
        assert_eq!(typed(&["  Fix the bug\n"]).as_deref(), Some("Fix the bug"));
        assert_eq!(typed(&["<div>hi</div>"]).as_deref(), Some("<div>hi</div>"));
        assert_eq!(
            typed(&[
                "<environment_context>x</environment_context>",
                "real",
                "also"
            ])
            .as_deref(),
            Some("real\n\nalso")
        );
        // A block that is not closed is not one of Codex's.
        assert_eq!(
            typed(&["<environment_context> is what I mean"]).as_deref(),
            Some("<environment_context> is what I mean")
        );
    }

    #[test]
    fn keeps_only_the_request_of_an_ide_message() {
        let ide = "# Context from my IDE setup:\n\n## Open tabs:\n- a.py: a.py\n## My request for Codex:\nfix it\n";
        assert_eq!(typed(&[ide]).as_deref(), Some("fix it"));
        let files = "# Files mentioned by the user:\n\n## a.png: /tmp/a.png\n\n## My request for Codex:\n\nlook\n";
        assert_eq!(typed(&[files]).as_deref(), Some("look"));
        assert_eq!(
            typed(&["# Context from my IDE setup:\n\n## Open tabs:\n- a.py\n"]),
            None
        );
    }

    #[test]
    fn finds_the_environment_cwd_and_user_commands() {
        let env =
            "<environment_context>\n  <cwd>C:\\Users\\me\\vault</cwd>\n</environment_context>";
        assert_eq!(
            environment_cwd(env).as_deref(),
            Some("C:\\Users\\me\\vault")
        );
        assert_eq!(environment_cwd("<cwd>/x</cwd>"), None);
        let shell = "<user_shell_command>\n<command>\nls -la\n</command>\n<result>\nExit code: 0\n</result>\n</user_shell_command>";
        assert_eq!(user_shell_command(shell).as_deref(), Some("ls -la"));
        assert_eq!(
            user_shell_command("<user_shell_command>\n</user_shell_command>"),
            None
        );
    }
}
