//! Tool activity turned into deja's records: shell tools become commands the
//! agent ran; tools that write, edit or read a file become files records.
//!
//! - The model's `functionCall` parts on the conversation's `assistant`
//!   records, at their record's time. A call whose result (`toolCallResult`
//!   or the `functionResponse`, matched by call id) is `error` or `cancelled`
//!   is left out: it was refused, failed before doing anything or was
//!   stopped, and nobody would say that command ran or that file was written.
//! - `@path` references (`at_command` records): the files they read.
//! - A subagent's tool calls: qwen-code writes no transcript of a subagent's
//!   turns, only telemetry events in the session's file; those whose
//!   `prompt_id` names an agent (`<session>#<agent>-<id>#<n>`) and that
//!   succeeded are its calls. The main agent's own telemetry
//!   (`<session>########<n>`) repeats its `functionCall`s and is not counted.
//!
//! Tool names are qwen-code's (`tools/tool-names.ts`) and those of earlier
//! versions: `run_shell_command`; `write_file`, `edit` (`replace` before);
//! `read_file`, `read_many_files`.

use std::collections::{HashMap, HashSet};

use deja_plugin_api::{
    CommandOrigin, CommandOutcome, CommandRecord, FileAction, FileRecord, RString,
};
use serde_json::Value;

use crate::paths;
use crate::records::{Part, Record, SystemEvent};
use crate::time;

/// What a tool does, as far as deja cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Shell,
    Edit,
    Read,
}

fn kind(name: &str) -> Option<Kind> {
    match name {
        "run_shell_command" | "shell" => Some(Kind::Shell),
        "write_file" | "edit" | "replace" => Some(Kind::Edit),
        "read_file" | "read_many_files" => Some(Kind::Read),
        _ => None,
    }
}

/// The files and commands of a session.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Activity {
    /// Files edited or read, in order.
    pub files: Vec<FileRecord>,
    /// Shell commands run, in order.
    pub commands: Vec<CommandRecord>,
    /// How each command ended, in the same order: what the shell tool's
    /// output says (`Exit Code: N`), else unknown.
    pub outcomes: Vec<CommandOutcome>,
    /// What each file record's call wrote, in the order of `files`:
    /// `edit`'s (`replace`'s) `new_string`, `write_file`'s `content`; none
    /// for a read.
    pub edits: Vec<Option<String>>,
}

/// The activity of the conversation `chain`, given every record of the file
/// (`all`, where tool results are looked up). Relative paths are resolved
/// against `project_dir`; a record without a time takes `fallback_ms`.
pub fn activity<'a>(
    chain: impl Iterator<Item = &'a Record>,
    all: &[Record],
    project_dir: Option<&str>,
    fallback_ms: i64,
) -> Activity {
    let failed = failed_calls(all);
    let results = outcomes(all);
    let mut activity = Activity::default();
    for record in chain {
        let at = time::parse_ms(record.timestamp.as_deref()).unwrap_or(fallback_ms);
        if record.kind == "assistant" {
            for part in &record.parts {
                if let Part::Call(call) = part {
                    let refused = call
                        .id
                        .as_ref()
                        .is_some_and(|id| failed.contains(id.as_str()));
                    if !refused {
                        let before = activity.commands.len();
                        activity.add(&call.name, &call.args, project_dir, at);
                        if activity.commands.len() > before {
                            let outcome = call.id.as_deref().and_then(|id| results.get(id));
                            activity.outcomes.push(outcome.copied().unwrap_or_default());
                        }
                    }
                }
            }
        }
        match &record.event {
            SystemEvent::AtCommand { files, ok: true } => {
                for file in files.iter().filter(|f| !f.trim().is_empty()) {
                    activity.file(file, FileAction::Read, project_dir, at);
                }
            }
            SystemEvent::ToolTelemetry {
                prompt_id,
                name,
                args,
                ok: true,
            } if is_subagent(prompt_id) => activity.add(name, args, project_dir, at),
            _ => {}
        }
        activity
            .outcomes
            .resize(activity.commands.len(), CommandOutcome::default());
    }
    activity
}

/// The outcome each call's response gives, by call id.
fn outcomes(all: &[Record]) -> HashMap<&str, CommandOutcome> {
    all.iter()
        .flat_map(|record| &record.parts)
        .filter_map(|part| match part {
            Part::Response {
                id: Some(id),
                outcome: Some(outcome),
                ..
            } => Some((id.as_str(), *outcome)),
            _ => None,
        })
        .collect()
}

/// Call ids whose result says `error` or `cancelled`.
fn failed_calls(all: &[Record]) -> HashSet<&str> {
    let mut failed = HashSet::new();
    for record in all {
        if let Some((Some(id), Some(status))) = &record.tool_result {
            if matches!(status.as_str(), "error" | "cancelled") {
                failed.insert(id.as_str());
            }
            continue;
        }
        for part in &record.parts {
            if let Part::Response {
                id: Some(id),
                failed: true,
                ..
            } = part
            {
                failed.insert(id.as_str());
            }
        }
    }
    failed
}

/// Whether a telemetry `prompt_id` is a subagent's: its second `#` field names one.
fn is_subagent(prompt_id: &str) -> bool {
    prompt_id
        .split('#')
        .nth(1)
        .is_some_and(|agent| !agent.is_empty())
}

impl Activity {
    fn add(&mut self, name: &str, args: &Value, project_dir: Option<&str>, at: i64) {
        match kind(name) {
            Some(Kind::Shell) => {
                if let Some(command) = string_arg(args, "command") {
                    self.commands.push(CommandRecord {
                        command: RString::from(command),
                        origin: CommandOrigin::Agent,
                        timestamp_ms: at,
                    });
                }
            }
            Some(kind @ (Kind::Edit | Kind::Read)) => {
                let action = if kind == Kind::Edit {
                    FileAction::Edit
                } else {
                    FileAction::Read
                };
                let text = (kind == Kind::Edit)
                    .then(|| {
                        string_arg(args, "new_string")
                            .or_else(|| string_arg(args, "content"))
                            .map(String::from)
                    })
                    .flatten();
                for path in file_args(args) {
                    self.file(path, action, project_dir, at);
                    if let Some(slot) = self.edits.last_mut() {
                        slot.clone_from(&text);
                    }
                }
            }
            None => {}
        }
    }

    fn file(&mut self, path: &str, action: FileAction, project_dir: Option<&str>, at: i64) {
        let path = match project_dir {
            Some(dir) => paths::join(dir, path),
            None => path.to_string(),
        };
        self.files.push(FileRecord {
            path: RString::from(path),
            action,
            timestamp_ms: at,
        });
        self.edits.push(None);
    }
}

/// A non-blank string argument.
fn string_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .filter(|value| !value.trim().is_empty())
}

/// The paths a file tool names: `file_path` (current), `absolute_path` and
/// `path` (earlier versions), and the `paths` list of `read_many_files`,
/// without glob patterns, which name no one file.
fn file_args(args: &Value) -> Vec<&str> {
    let single = ["file_path", "absolute_path", "path"]
        .into_iter()
        .find_map(|key| string_arg(args, key));
    let listed = args
        .get("paths")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|path| !path.trim().is_empty() && !path.contains(['*', '?', '[', '{']));
    single.into_iter().chain(listed).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::Call;
    use serde_json::json;

    fn call(id: &str, name: &str, args: Value) -> Part {
        Part::Call(Call {
            id: Some(id.into()),
            name: name.into(),
            args,
        })
    }

    fn record(kind: &str, parts: Vec<Part>) -> Record {
        Record {
            uuid: "u".into(),
            parent_uuid: None,
            session_id: "s".into(),
            timestamp: Some("1970-01-01T00:00:01Z".into()),
            kind: kind.into(),
            subtype: None,
            provenance: None,
            cwd: None,
            is_sidechain: false,
            parts,
            prompt: None,
            event: SystemEvent::Other,
            tool_result: None,
        }
    }

    #[test]
    fn calls_become_records_and_failed_ones_do_not() {
        let calls = record(
            "assistant",
            vec![
                call("1", "run_shell_command", json!({"command": "cargo test"})),
                call(
                    "2",
                    "write_file",
                    json!({"file_path": "src/a.rs", "content": "x"}),
                ),
                call("3", "edit", json!({"file_path": "/abs/b.rs"})),
                call(
                    "4",
                    "read_many_files",
                    json!({"paths": ["c.md", "src/**/*.rs"]}),
                ),
                call("5", "run_shell_command", json!({"command": "rm -rf /"})),
                call("6", "list_directory", json!({"path": "."})),
                call("7", "read_file", json!({"absolute_path": "/abs/d.rs"})),
            ],
        );
        let mut refused = record("tool_result", vec![]);
        refused.tool_result = Some((Some("5".into()), Some("cancelled".into())));
        let legacy = record(
            "user",
            vec![Part::Response {
                id: Some("7".into()),
                failed: true,
                outcome: None,
            }],
        );
        let all = vec![calls, refused, legacy];
        let a = activity(all.iter().take(1), &all, Some("/p"), 0);
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
                ("/p/c.md", FileAction::Read),
            ]
        );
        let commands: Vec<&str> = a.commands.iter().map(|c| c.command.as_str()).collect();
        assert_eq!(commands, ["cargo test"]);
        assert!(a.files.iter().all(|f| f.timestamp_ms == 1000));
    }

    #[test]
    fn subagent_telemetry_counts_and_the_main_agents_does_not() {
        assert!(is_subagent("s#debugger-mjmpeo#0"));
        assert!(!is_subagent("s########0"));
        assert!(!is_subagent("s"));
        let mut sub = record("system", vec![]);
        sub.event = SystemEvent::ToolTelemetry {
            prompt_id: "s#debugger-x#1".into(),
            name: "read_file".into(),
            args: json!({"file_path": "README.md"}),
            ok: true,
        };
        let mut main = sub.clone();
        main.event = SystemEvent::ToolTelemetry {
            prompt_id: "s########1".into(),
            name: "read_file".into(),
            args: json!({"file_path": "main.rs"}),
            ok: true,
        };
        let all = vec![sub, main];
        let a = activity(all.iter(), &all, None, 0);
        assert_eq!(a.files.len(), 1);
        assert_eq!(a.files[0].path.as_str(), "README.md");
    }

    #[test]
    fn a_shell_calls_response_gives_its_outcome() {
        let calls = record(
            "assistant",
            vec![
                call("1", "run_shell_command", json!({"command": "make"})),
                call("2", "run_shell_command", json!({"command": "pwd"})),
            ],
        );
        let response = record(
            "user",
            vec![Part::Response {
                id: Some("1".into()),
                failed: false,
                outcome: Some(CommandOutcome::from_exit_code(2)),
            }],
        );
        let all = vec![calls, response];
        let a = activity(all.iter().take(1), &all, Some("/p"), 0);
        assert_eq!(
            a.outcomes,
            [CommandOutcome::from_exit_code(2), CommandOutcome::default()]
        );
    }
}
