//! Tool calls turned into deja's records: `Bash` runs a shell command;
//! `Edit`, `MultiEdit`, `Write` and `NotebookEdit` change a file; `Read`
//! (and the old `NotebookRead`) reads one. Other tools (search, web, MCP,
//! subagents) name no single file or command.
//!
//! A call whose result is an error did not happen: an edit whose string was
//! not found changed nothing, a rejected or denied call never ran. The one
//! exception is a shell command that ran and failed (`Exit code 1`, a
//! timeout): it ran. Only refusals, cancellations and validation errors mean
//! that a command did not run.

use deja_plugin_api::{join_edit_parts, CommandOutcome, FileAction};
use serde_json::Value;

/// What a tool call did, as far as deja cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// A shell command the agent ran.
    Shell(String),
    /// A file it edited or read (the path as written).
    File(String, FileAction),
}

/// The effect of calling tool `name` with `input`, if it has one deja records.
pub fn effect(name: &str, input: &Value) -> Option<Effect> {
    let arg = |keys: &[&str]| {
        keys.iter().find_map(|key| {
            input
                .get(*key)
                .and_then(Value::as_str)
                .filter(|value| !value.trim().is_empty())
                .map(String::from)
        })
    };
    let path = || arg(&["file_path", "notebook_path"]);
    match name {
        "Bash" => arg(&["command"]).map(Effect::Shell),
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => {
            path().map(|p| Effect::File(p, FileAction::Edit))
        }
        "Read" | "NotebookRead" => path().map(|p| Effect::File(p, FileAction::Read)),
        _ => None,
    }
}

/// What calling tool `name` with `input` wrote into its file: `Edit`'s
/// `new_string`, `MultiEdit`'s `new_string`s (one part each), `Write`'s
/// `content`, `NotebookEdit`'s `new_source`; none for other tools.
pub fn edit_text(name: &str, input: &Value) -> Option<String> {
    let field = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(String::from);
    match name {
        "Edit" => field(input, "new_string"),
        "Write" => field(input, "content"),
        "NotebookEdit" => field(input, "new_source"),
        "MultiEdit" => join_edit_parts(
            input
                .get("edits")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|e| field(e, "new_string")),
        ),
        _ => None,
    }
    .filter(|t| !t.trim().is_empty())
}

/// Error texts that mean a shell command never ran.
const NOT_RUN: &[&str] = &[
    "<tool_use_error>",
    "The user doesn't want to proceed",
    "Permission ",
    "User rejected",
    "Cancelled",
    "InputValidationError",
];

/// How a Bash call ended, from its result: an error result failed, with the
/// exit code its text begins with (`Exit code N`) where there is one; any
/// other result succeeded. Claude Code writes the exit code only of a
/// command that failed.
pub fn shell_outcome(is_error: bool, text: &str) -> CommandOutcome {
    if !is_error {
        return CommandOutcome::from_failed(false);
    }
    let code = text
        .trim_start()
        .strip_prefix("Exit code ")
        .and_then(|rest| {
            let digits: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            digits.parse::<i32>().ok()
        });
    match code {
        Some(code) => CommandOutcome::from_exit_code(code),
        None => CommandOutcome::from_failed(true),
    }
}

/// Whether a call with effect `effect`, whose result is an error reading
/// `text`, took place anyway.
pub fn happened_despite_error(effect: &Effect, text: &str) -> bool {
    match effect {
        Effect::Shell(_) => {
            let text = text.trim_start();
            !NOT_RUN.iter().any(|marker| text.starts_with(marker))
        }
        Effect::File(..) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_map_to_effects() {
        assert_eq!(
            effect("Bash", &json!({"command": "ls -la", "description": "List"})),
            Some(Effect::Shell("ls -la".into()))
        );
        for tool in ["Edit", "MultiEdit", "Write"] {
            assert_eq!(
                effect(tool, &json!({"file_path": "/p/a.rs"})),
                Some(Effect::File("/p/a.rs".into(), FileAction::Edit))
            );
        }
        assert_eq!(
            effect("NotebookEdit", &json!({"notebook_path": "/p/n.ipynb"})),
            Some(Effect::File("/p/n.ipynb".into(), FileAction::Edit))
        );
        assert_eq!(
            effect("Read", &json!({"file_path": "/p/a.rs", "limit": 80})),
            Some(Effect::File("/p/a.rs".into(), FileAction::Read))
        );
        for (tool, input) in [
            ("Glob", json!({"pattern": "*.rs"})),
            ("Grep", json!({"pattern": "x", "path": "/p/a.rs"})),
            ("Agent", json!({"prompt": "go"})),
            ("Bash", json!({"command": 5})),
            ("Bash", json!({"command": "  "})),
            ("Edit", json!("oops")),
        ] {
            assert_eq!(effect(tool, &input), None, "{tool}");
        }
    }

    #[test]
    fn edits_keep_what_they_wrote() {
        assert_eq!(
            edit_text(
                "Edit",
                &json!({"file_path": "a", "old_string": "x", "new_string": "y\nz"})
            ),
            Some("y\nz".into())
        );
        assert_eq!(
            edit_text("Write", &json!({"file_path": "a", "content": "whole\n"})),
            Some("whole\n".into())
        );
        assert_eq!(
            edit_text(
                "MultiEdit",
                &json!({"file_path": "a", "edits": [{"new_string": "one"}, {"new_string": ""}, {"new_string": "two"}]})
            ),
            Some("one\n\u{1e}\ntwo".into())
        );
        assert_eq!(edit_text("Edit", &json!({"new_string": "  "})), None);
        assert_eq!(edit_text("Read", &json!({"file_path": "a"})), None);
    }

    #[test]
    fn failed_commands_ran_refused_ones_did_not() {
        let shell = Effect::Shell("x".into());
        assert!(happened_despite_error(&shell, "Exit code 1\nboom"));
        assert!(happened_despite_error(&shell, "Command timed out after 2m"));
        for text in [
            "<tool_use_error>Cancelled: parallel tool call errored</tool_use_error>",
            "The user doesn't want to proceed with this tool use.",
            "Permission to use Bash with command curl has been denied.",
            "Permission for this tool use was denied.",
            "Cancelled: parallel tool call Bash(x) errored",
            "InputValidationError: [...]",
        ] {
            assert!(!happened_despite_error(&shell, text), "{text}");
        }
        let edit = Effect::File("a".into(), FileAction::Edit);
        assert!(!happened_despite_error(&edit, "Exit code 1"));
    }

    #[test]
    fn shell_outcome_reads_the_exit_code_of_an_error() {
        let failed = shell_outcome(true, "Exit code 128\nfatal: not a git repository");
        assert_eq!(failed, CommandOutcome::from_exit_code(128));
        assert_eq!(
            shell_outcome(true, "command timed out"),
            CommandOutcome::from_failed(true)
        );
        assert_eq!(
            shell_outcome(false, "ok"),
            CommandOutcome::from_failed(false)
        );
    }
}
