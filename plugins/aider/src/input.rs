//! What one user input (the text of consecutive `####` lines) means: a
//! message to the model, or one of aider's own commands and answers.
//!
//! aider sends every input that starts with `/` or `!` to its command runner,
//! never to the model: `!X` runs X; `/word` runs the command whose name `word`
//! is, or is the unique prefix of; anything else is rejected ("Invalid
//! command"). So every such input is dropped, except:
//! - `/run X`, `/test X` and `!X` ran X, and `/git X` ran `git X`: command records;
//! - `/ask Q`, `/code Q`, `/context Q` and `/architect Q` sent Q to the model,
//!   which aider logs again as its own `####` input right after: Q becomes the
//!   user message here, and the re-logged copy is skipped (see `build`).
//!   `/help Q` is alike, except that aider logs its help prompt
//!   (`# Question: Q`, then the documentation it found) instead of Q.
//!
//! aider also logs some confirmation answers as `####` lines
//! (`Add file to the chat? (Y)es/(N)o/... [Yes]: all`); they are dropped.

/// aider's command names, across versions (prefixes resolve against these).
const COMMANDS: &[&str] = &[
    "add",
    "architect",
    "ask",
    "chat-mode",
    "clear",
    "clipboard",
    "code",
    "commit",
    "context",
    "copy",
    "copy-context",
    "diff",
    "drop",
    "edit",
    "editor",
    "editor-model",
    "exit",
    "git",
    "help",
    "lint",
    "load",
    "ls",
    "map",
    "map-refresh",
    "model",
    "models",
    "multiline-mode",
    "paste",
    "quit",
    "read",
    "read-only",
    "reasoning-effort",
    "report",
    "reset",
    "run",
    "save",
    "settings",
    "test",
    "think-tokens",
    "tokens",
    "undo",
    "voice",
    "weak-model",
    "web",
];

/// The commands whose argument aider sends to the model as a new input.
const QUESTION_COMMANDS: &[&str] = &["ask", "code", "context", "architect", "help"];

/// How aider's help prompt starts.
const HELP_PROMPT: &str = "# Question: ";

/// What a user input means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    /// A message to the model.
    Message(String),
    /// A shell command the user ran through aider.
    Command(String),
    /// A question sent to the model by `/ask` and friends; aider logs it again next.
    Question(String),
    /// Anything else aider handled itself.
    Dropped,
}

/// Classifies the text of one user input.
pub(crate) fn classify(text: &str) -> Input {
    if is_confirmation(text) {
        return Input::Dropped;
    }
    if let Some(command) = text.strip_prefix('!') {
        return shell(command.trim().to_string());
    }
    let Some(call) = text.strip_prefix('/') else {
        return Input::Message(text.to_string());
    };
    let (word, args) = call.split_once(char::is_whitespace).unwrap_or((call, ""));
    let args = args.trim();
    match resolve(word) {
        Some("run" | "test") => shell(args.to_string()),
        Some("git") => shell(format!("git {args}").trim_end().to_string()),
        Some(name) if QUESTION_COMMANDS.contains(&name) && !args.is_empty() => {
            Input::Question(args.to_string())
        }
        _ => Input::Dropped,
    }
}

/// Whether `text` is the input aider logged itself for `question`: the
/// question again, or the help prompt built around it.
pub(crate) fn is_relog_of(text: &str, question: &str) -> bool {
    text == question
        || text
            .strip_prefix(HELP_PROMPT)
            .is_some_and(|rest| rest.starts_with(question))
}

fn shell(command: String) -> Input {
    if command.is_empty() {
        Input::Dropped
    } else {
        Input::Command(command)
    }
}

/// The command `word` names, as aider resolves it: an exact name, else the
/// only name it is a prefix of.
fn resolve(word: &str) -> Option<&'static str> {
    if let Some(exact) = COMMANDS.iter().find(|&&name| name == word) {
        return Some(exact);
    }
    let mut matches = COMMANDS.iter().filter(|name| name.starts_with(word));
    match (matches.next(), matches.next()) {
        (Some(only), None) if !word.is_empty() => Some(only),
        _ => None,
    }
}

/// Whether the input is one of aider's confirmation questions with its answer.
fn is_confirmation(text: &str) -> bool {
    !text.contains('\n')
        && text
            .split_once("(Y)es/(N)o")
            .is_some_and(|(_, rest)| rest.contains("]:"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn command(s: &str) -> Input {
        Input::Command(s.to_string())
    }

    #[test]
    fn messages() {
        assert_eq!(
            classify("fix the bug"),
            Input::Message("fix the bug".into())
        );
        assert_eq!(classify(" /add x"), Input::Message(" /add x".into()));
    }

    #[test]
    fn shell_commands() {
        assert_eq!(classify("/run cargo test"), command("cargo test"));
        assert_eq!(classify("!ls -la"), command("ls -la"));
        assert_eq!(classify("/test  pytest -x "), command("pytest -x"));
        assert_eq!(classify("/git status"), command("git status"));
        assert_eq!(classify("/ru make"), command("make"));
        assert_eq!(classify("/run"), Input::Dropped);
        assert_eq!(classify("!"), Input::Dropped);
    }

    #[test]
    fn dropped_commands() {
        for text in [
            "/add a.py\n  b.py",
            "/undo",
            "/clear",
            "/drop",
            "/model gpt-4o",
            "/help",
            "/settigns",
            "/a",
            "/",
            "/home/me/x.py is broken",
            "/ask",
        ] {
            assert_eq!(classify(text), Input::Dropped, "{text}");
        }
    }

    #[test]
    fn questions() {
        for cmd in [
            "/ask",
            "/code",
            "/context",
            "/architect",
            "/help",
            "/as",
            "/arch",
        ] {
            assert_eq!(
                classify(&format!("{cmd} why?")),
                Input::Question("why?".into())
            );
        }
        assert_eq!(classify("/ask a\nb"), Input::Question("a\nb".into()));
    }

    #[test]
    fn relogs() {
        assert!(is_relog_of("why?", "why?"));
        assert!(is_relog_of(
            "# Question: why?\n\n# Relevant docs:\n...",
            "why?"
        ));
        assert!(!is_relog_of("why not?", "why?"));
    }

    #[test]
    fn prefixes() {
        assert_eq!(resolve("map"), Some("map"));
        assert_eq!(resolve("mod"), None);
        assert_eq!(resolve("model"), Some("model"));
        assert_eq!(resolve("g"), Some("git"));
        assert_eq!(resolve("co"), None);
        assert_eq!(resolve("cod"), Some("code"));
        assert_eq!(resolve(""), None);
    }

    #[test]
    fn confirmations() {
        let answer =
            "Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all";
        assert_eq!(classify(answer), Input::Dropped);
        assert_eq!(
            classify("Run shell commands? (Y)es/(N)o/(S)kip all [Yes]: skip"),
            Input::Dropped
        );
        assert_eq!(
            classify("what does (Y)es/(N)o mean?"),
            Input::Message("what does (Y)es/(N)o mean?".into())
        );
    }
}
