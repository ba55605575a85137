//! Tool calls turned into deja's records: shell calls become commands,
//! `apply_patch` becomes the files it writes, simple reads become files read.
//!
//! The shapes, by tool (all `response_item`s, legacy bare items alike):
//! - `function_call` `shell` / `container.exec` / `local_shell`: `command` argv;
//!   `shell_command`: `command` string; `exec_command`: `cmd` string;
//!   `unified_exec`: `input` argv (or a `cmd` string), unless it types into a
//!   running process (`session_id`); each with an optional `workdir`.
//! - `local_shell_call`: `action.command` argv, `action.working_directory`.
//! - `custom_tool_call` `apply_patch` (or `function_call` with `input`): the patch.
//! - `custom_tool_call` `exec` (code mode): commands written as literals.
//! - `function_call` `read_file` (`file_path`) and `view_image` (`path`): reads.
//!
//! A call is recorded when the agent makes it: Codex writes the call before
//! its outcome, and a record must not change as the file grows. A command
//! the person ran with `!` is recorded from its `<user_shell_command>` block.

use deja_plugin_api::{CommandOrigin, CommandRecord, FileAction, FileRecord, RString};
use serde_json::Value;

use crate::codemode;
use crate::patch;
use crate::paths;
use crate::reads;
use crate::record::{strings, Item};
use crate::shell;

/// The files and commands of a session, in call order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Activity {
    /// Files written or read.
    pub files: Vec<FileRecord>,
    /// What each of them was written with (the lines a patch added), in the
    /// order of `files`; none for a read.
    pub edits: Vec<Option<String>>,
    /// Commands run.
    pub commands: Vec<CommandRecord>,
}

impl Activity {
    /// Records what `item` did at `at`, with relative paths resolved against
    /// the call's working directory, else `cwd` (the turn's).
    pub fn item(&mut self, item: &Item, cwd: Option<&str>, at: i64) {
        match item {
            Item::FunctionCall { name, arguments } => self.function(name, arguments, cwd, at),
            Item::CustomToolCall { name, input } => match name.as_str() {
                "apply_patch" => self.patch(input, cwd, at),
                "exec" => {
                    for command in codemode::commands(input) {
                        self.shell(&command, cwd, at);
                    }
                }
                _ => {}
            },
            Item::LocalShellCall { command, workdir } => {
                let dir = workdir_in(workdir.as_deref(), cwd);
                self.argv(command, dir.as_deref(), at);
            }
            Item::Message { .. } | Item::Other => {}
        }
    }

    /// Records a command the person ran (`!cmd` in the TUI).
    pub fn user_command(&mut self, command: String, at: i64) {
        self.commands.push(CommandRecord {
            command: RString::from(command),
            origin: CommandOrigin::User,
            timestamp_ms: at,
        });
    }

    fn function(&mut self, name: &str, args: &Value, cwd: Option<&str>, at: i64) {
        let dir = workdir_in(string_arg(args, "workdir"), cwd);
        let dir = dir.as_deref();
        match name {
            "shell" | "container.exec" | "local_shell" => {
                self.argv(
                    &args.get("command").map(strings).unwrap_or_default(),
                    dir,
                    at,
                );
            }
            // With a `session_id`, `input` is what is typed into a running process.
            "unified_exec" if args.get("session_id").is_none_or(Value::is_null) => {
                match string_arg(args, "cmd").or_else(|| string_arg(args, "input")) {
                    Some(line) => self.shell(line, dir, at),
                    None => self.argv(&args.get("input").map(strings).unwrap_or_default(), dir, at),
                }
            }
            "shell_command" | "exec_command" => {
                let line = string_arg(args, "cmd")
                    .or_else(|| string_arg(args, "command"))
                    .map(String::from)
                    .or_else(|| {
                        args.get("command")
                            .map(strings)
                            .and_then(|a| shell::command_line(&a))
                    });
                if let Some(line) = line {
                    self.shell(&line, dir, at);
                }
            }
            "apply_patch" => {
                if let Some(input) = string_arg(args, "input").or_else(|| string_arg(args, "patch"))
                {
                    self.patch(input, dir, at);
                }
            }
            "read_file" | "view_image" => {
                if let Some(path) =
                    string_arg(args, "file_path").or_else(|| string_arg(args, "path"))
                {
                    self.file(paths::join(dir, path), FileAction::Read, at);
                }
            }
            _ => {}
        }
    }

    /// An argv: `apply_patch <patch>` itself, or the command line it runs.
    fn argv(&mut self, argv: &[String], dir: Option<&str>, at: i64) {
        match argv {
            [program, patch, ..]
                if matches!(
                    shell::program_name(program).as_str(),
                    "apply_patch" | "applypatch"
                ) =>
            {
                self.patch(patch, dir, at);
            }
            _ => {
                if let Some(line) = shell::command_line(argv) {
                    self.shell(&line, dir, at);
                }
            }
        }
    }

    /// A shell command line: a patch it applies, or a command (and the file it reads).
    fn shell(&mut self, line: &str, dir: Option<&str>, at: i64) {
        let (cd, rest) = match shell::leading_cd(line) {
            Some((cd, rest)) => (Some(paths::join(dir, &cd)), rest),
            None => (None, line),
        };
        if let Some(patch) = patch::in_command(rest) {
            self.patch(patch, cd.as_deref().or(dir), at);
            return;
        }
        self.commands.push(CommandRecord {
            command: RString::from(line.trim()),
            origin: CommandOrigin::Agent,
            timestamp_ms: at,
        });
        if let Some((cd, path)) = reads::read_path(line) {
            let base = cd.map(|cd| paths::join(dir, &cd));
            let base = base.as_deref().or(dir);
            self.file(paths::join(base, &path), FileAction::Read, at);
        }
    }

    fn patch(&mut self, patch: &str, dir: Option<&str>, at: i64) {
        for (path, text) in patch::written(patch) {
            self.file(paths::join(dir, &path), FileAction::Edit, at);
            if let Some(slot) = self.edits.last_mut() {
                *slot = text;
            }
        }
    }

    fn file(&mut self, path: String, action: FileAction, at: i64) {
        self.files.push(FileRecord {
            path: RString::from(path),
            action,
            timestamp_ms: at,
        });
        self.edits.push(None);
    }
}

/// A call's `workdir`, resolved against the turn's directory when relative.
fn workdir_in(workdir: Option<&str>, cwd: Option<&str>) -> Option<String> {
    match workdir.filter(|w| !w.trim().is_empty()) {
        Some(workdir) => Some(paths::join(cwd, workdir)),
        None => cwd.map(String::from),
    }
}

/// A non-blank string argument.
fn string_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .filter(|value| !value.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(items: &[Item], cwd: Option<&str>) -> Activity {
        let mut a = Activity::default();
        for item in items {
            a.item(item, cwd, 7);
        }
        a
    }

    fn call(name: &str, arguments: Value) -> Item {
        Item::FunctionCall {
            name: name.into(),
            arguments,
        }
    }

    fn commands(a: &Activity) -> Vec<&str> {
        a.commands.iter().map(|c| c.command.as_str()).collect()
    }

    fn files(a: &Activity) -> Vec<(&str, FileAction)> {
        a.files
            .iter()
            .map(|f| (f.path.as_str(), f.action))
            .collect()
    }

    #[test]
    fn every_shell_tool_gives_its_command() {
        let a = run(
            &[
                call(
                    "shell",
                    json!({"command": ["bash", "-lc", "cargo test"], "workdir": "/p"}),
                ),
                call("shell_command", json!({"command": "git status"})),
                call("exec_command", json!({"cmd": "ls -la", "workdir": "/p"})),
                call("write_stdin", json!({"session_id": 1, "chars": "y\n"})),
                call("unified_exec", json!({"input": ["bash", "-lc", "make"]})),
                call("unified_exec", json!({"input": ["q"], "session_id": "3"})),
                call("unified_exec", json!({"cmd": "make check"})),
                Item::LocalShellCall {
                    command: vec!["ls".into(), "src".into()],
                    workdir: Some("/p".into()),
                },
            ],
            Some("/p"),
        );
        assert_eq!(
            commands(&a),
            [
                "cargo test",
                "git status",
                "ls -la",
                "make",
                "make check",
                "ls src"
            ]
        );
        assert!(a
            .commands
            .iter()
            .all(|c| c.origin == CommandOrigin::Agent && c.timestamp_ms == 7));
    }

    #[test]
    fn patches_become_edited_files() {
        let patch = "*** Begin Patch\n*** Add File: docs/a.md\n+x\n*** Update File: /abs/b.rs\n*** End Patch";
        let a = run(
            &[
                Item::CustomToolCall {
                    name: "apply_patch".into(),
                    input: patch.into(),
                },
                call("shell", json!({"command": ["apply_patch", patch]})),
            ],
            Some("/p"),
        );
        assert!(a.commands.is_empty());
        assert_eq!(
            files(&a),
            [
                ("/p/docs/a.md", FileAction::Edit),
                ("/abs/b.rs", FileAction::Edit),
                ("/p/docs/a.md", FileAction::Edit),
                ("/abs/b.rs", FileAction::Edit),
            ]
        );
    }

    #[test]
    fn reads_resolve_against_the_call_directory() {
        let a = run(
            &[
                call(
                    "shell_command",
                    json!({"command": "cd /home/me/app && nl -ba src/x.py | sed -n '1,20p'"}),
                ),
                call(
                    "exec_command",
                    json!({"cmd": "sed -n '1,240p' main.py", "workdir": "sub"}),
                ),
                call("view_image", json!({"path": "shot.png"})),
            ],
            Some("/p"),
        );
        assert_eq!(
            files(&a),
            [
                ("/home/me/app/src/x.py", FileAction::Read),
                ("/p/sub/main.py", FileAction::Read),
                ("/p/shot.png", FileAction::Read),
            ]
        );
        assert_eq!(a.commands.len(), 2);
    }

    #[test]
    fn malformed_calls_are_skipped() {
        let a = run(
            &[
                call("shell", json!({"command": "not an argv"})),
                call("shell_command", json!({"command": 5})),
                call("exec_command", Value::Null),
                call("apply_patch", json!({})),
                Item::CustomToolCall {
                    name: "exec".into(),
                    input: "no tools here".into(),
                },
            ],
            None,
        );
        assert_eq!(a, Activity::default());
    }
}
