//! Tool calls turned into deja's records: shell tools become commands the
//! agent ran, file tools become files it edited or read.
//!
//! Calls whose `status` is `error` or `cancelled` are left out: in real files
//! those are calls "denied by policy", declined by the user or that failed
//! before doing anything (`File not found`), and a person would not agree
//! that such a command ran or such a file was written.

use deja_plugin_api::{
    CommandOrigin, CommandOutcome, CommandRecord, FileAction, FileRecord, RString,
};
use serde_json::Value;

use crate::records::{MessageRecord, ToolCallRecord};
use crate::time;
use deja_plugin_api::paths;

/// What a tool does, as far as deja cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ToolKind {
    Shell,
    Edit,
    Read,
}

/// The kind of a tool, by the names gemini-cli has given it
/// (`tools/tool-names.ts`: `run_shell_command`, `write_file`, `replace`,
/// `read_file`, `read_many_files`; `shell` and `edit` in early versions and forks).
fn kind(name: &str) -> Option<ToolKind> {
    match name {
        "run_shell_command" | "shell" => Some(ToolKind::Shell),
        "write_file" | "replace" | "edit" => Some(ToolKind::Edit),
        "read_file" | "read_many_files" => Some(ToolKind::Read),
        _ => None,
    }
}

/// The files and commands of a session.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Activity {
    /// Files edited or read, in call order.
    pub files: Vec<FileRecord>,
    /// Shell commands run, in call order.
    pub commands: Vec<CommandRecord>,
    /// How each command ended, in the same order: what its result's
    /// `Exit Code: N` says, else unknown.
    pub outcomes: Vec<CommandOutcome>,
    /// What each file record's call wrote, in the order of `files`:
    /// `replace`'s `new_string`, `write_file`'s `content`; none for a read.
    pub edits: Vec<Option<String>>,
}

/// The activity of `messages`. Relative paths are resolved against
/// `project_dir` when it is known; a call without a timestamp takes its
/// message's, and a message without one takes `fallback_ms`.
pub fn activity(
    messages: &[MessageRecord],
    project_dir: Option<&str>,
    fallback_ms: i64,
) -> Activity {
    let mut activity = Activity::default();
    for message in messages {
        let message_ms = time::parse_ms(message.timestamp.as_deref()).unwrap_or(fallback_ms);
        for call in message.tool_calls.iter().filter(|call| took_place(call)) {
            let at = time::parse_ms(call.timestamp.as_deref()).unwrap_or(message_ms);
            activity.add(call, project_dir, at);
        }
    }
    activity
}

fn took_place(call: &ToolCallRecord) -> bool {
    !matches!(call.status.as_deref(), Some("error" | "cancelled"))
}

impl Activity {
    fn add(&mut self, call: &ToolCallRecord, project_dir: Option<&str>, at: i64) {
        let Some(kind) = call.name.as_deref().and_then(kind) else {
            return;
        };
        match kind {
            ToolKind::Shell => {
                if let Some(command) = string_arg(&call.args, "command") {
                    self.commands.push(CommandRecord {
                        command: RString::from(command),
                        origin: CommandOrigin::Agent,
                        timestamp_ms: at,
                    });
                    self.outcomes.push(call.outcome.unwrap_or_default());
                }
            }
            ToolKind::Edit | ToolKind::Read => {
                let action = if kind == ToolKind::Edit {
                    FileAction::Edit
                } else {
                    FileAction::Read
                };
                let text = (kind == ToolKind::Edit)
                    .then(|| written(&call.args))
                    .flatten();
                for path in file_args(&call.args) {
                    let path = match project_dir {
                        Some(dir) => paths::join(dir, path),
                        None => path.to_string(),
                    };
                    self.files.push(FileRecord {
                        path: RString::from(path),
                        action,
                        timestamp_ms: at,
                    });
                    self.edits.push(text.clone());
                }
            }
        }
    }
}

/// What an edit call wrote: `new_string` (`replace`, `edit`) or `content`
/// (`write_file`).
fn written(args: &Value) -> Option<String> {
    string_arg(args, "new_string")
        .or_else(|| string_arg(args, "content"))
        .map(String::from)
}

/// A non-blank string argument.
fn string_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .filter(|value| !value.trim().is_empty())
}

/// The paths a file tool names: `file_path` (current), `absolute_path` and
/// `path` (early versions), and the `paths`/`include` lists of
/// `read_many_files`, leaving out glob patterns, which name no one file.
fn file_args(args: &Value) -> Vec<&str> {
    let single = ["file_path", "absolute_path", "path"]
        .into_iter()
        .find_map(|key| string_arg(args, key));
    let listed = ["paths", "include"]
        .into_iter()
        .filter_map(|key| args.get(key).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .filter(|path| !path.trim().is_empty() && !path.contains(['*', '?', '[', '{']));
    single.into_iter().chain(listed).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::read;
    use serde_json::json;

    fn run(message: Value, dir: Option<&str>) -> Activity {
        activity(&[read(message)], dir, 7)
    }

    #[test]
    fn shell_calls_become_agent_commands() {
        let a = run(
            json!({"timestamp": "1970-01-01T00:00:01Z", "toolCalls": [
                {"name": "run_shell_command", "args": {"command": "git status"}, "status": "success",
                 "timestamp": "1970-01-01T00:00:02Z"},
                {"name": "shell", "args": {"command": "ls"}}
            ]}),
            None,
        );
        let commands: Vec<(&str, i64)> = a
            .commands
            .iter()
            .map(|c| (c.command.as_str(), c.timestamp_ms))
            .collect();
        assert_eq!(commands, [("git status", 2000), ("ls", 1000)]);
        assert!(a.commands.iter().all(|c| c.origin == CommandOrigin::Agent));
    }

    #[test]
    fn file_calls_become_file_records() {
        let a = run(
            json!({"toolCalls": [
                {"name": "write_file", "args": {"file_path": "src/a.rs", "content": "x"}},
                {"name": "replace", "args": {"file_path": "/abs/b.rs"}},
                {"name": "read_file", "args": {"absolute_path": "/abs/c.rs"}},
                {"name": "read_many_files", "args": {"paths": ["d.md", "src/**/*.rs"]}},
                {"name": "glob", "args": {"pattern": "*.rs"}}
            ]}),
            Some("/p"),
        );
        let files: Vec<(&str, FileAction)> = a
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.action))
            .collect();
        assert_eq!(
            files,
            [
                ("/p/src/a.rs", FileAction::Edit),
                ("/abs/b.rs", FileAction::Edit),
                ("/abs/c.rs", FileAction::Read),
                ("/p/d.md", FileAction::Read),
            ]
        );
        assert!(a.files.iter().all(|f| f.timestamp_ms == 7));
    }

    #[test]
    fn failed_and_cancelled_calls_did_not_happen() {
        let a = run(
            json!({"toolCalls": [
                {"name": "run_shell_command", "args": {"command": "rm -rf x"}, "status": "error"},
                {"name": "write_file", "args": {"file_path": "a"}, "status": "cancelled"},
                {"name": "read_file", "args": {"file_path": "b"}, "status": "executing"}
            ]}),
            None,
        );
        assert!(a.commands.is_empty());
        assert_eq!(a.files.len(), 1);
        assert_eq!(a.files[0].path.as_str(), "b");
    }

    #[test]
    fn malformed_arguments_are_skipped() {
        let a = run(
            json!({"toolCalls": [
                {"name": "run_shell_command", "args": {"command": 5}},
                {"name": "read_file", "args": "oops"},
                {"name": "write_file"}
            ]}),
            None,
        );
        assert_eq!(a, Activity::default());
    }

    #[test]
    fn a_shell_calls_result_gives_its_exit_code() {
        let response = |code: &str| {
            json!([{"functionResponse": {"name": "run_shell_command",
                "response": {"output": format!("Output: x\nError: (none)\nExit Code: {code}\nSignal: (none)")}}}])
        };
        let a = run(
            json!({"toolCalls": [
                {"name": "run_shell_command", "args": {"command": "npm test"}, "status": "success",
                 "result": response("1")},
                {"name": "run_shell_command", "args": {"command": "ls"}, "status": "success",
                 "result": response("0")},
                {"name": "run_shell_command", "args": {"command": "pwd"}, "status": "success"}
            ]}),
            None,
        );
        assert_eq!(
            a.outcomes,
            [
                CommandOutcome::from_exit_code(1),
                CommandOutcome::from_exit_code(0),
                CommandOutcome::default()
            ]
        );
    }
}
