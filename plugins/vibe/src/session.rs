//! A session's history entries (see [`crate::store`]) turned into deja's
//! [`Session`]:
//!
//! - a `message` entry of the `user` whose `source` is `turn_start` or
//!   `turn_steer` is what the person typed; one whose source is `harness` is
//!   text Vibe wrote in the person's place and is left out, as Vibe's own
//!   "last user prompt" leaves it out;
//! - a `message` of the `assistant` is an answer, unless Vibe discarded it
//!   (`outcome.type = "discarded"`); `system` messages and `reasoning`
//!   entries are not;
//! - an `effect` entry of a tool call (`detail.kind = "tool"`) is a command
//!   (`bash`, its exit code from the result) or a file record (`write_file`,
//!   `edit`, `read_file`); the tool's name is the part of `detail.toolName`
//!   after its group (`file_system.bash`).
//!
//! The session's id, parent (a sub-agent's session), working directory,
//! title and times come from `meta.json`.

use deja_plugin_api::{
    paths, CommandOrigin, CommandOutcome, CommandRecord, FileAction, FileRecord, Message,
    ParseOutputV1_2, Project, RString, Role, Session, SessionOutcomes,
};
use serde_json::Value;

use crate::store::Loaded;
use crate::time;

/// The parse result for the session read from the `CURRENT` at `path`
/// (modified at `modified_ms`); `folder` is the session's folder's name.
pub fn output(loaded: Loaded, folder: &str, modified_ms: i64) -> ParseOutputV1_2 {
    let mut result = ParseOutputV1_2::default();
    let Loaded {
        meta,
        entries,
        warnings,
    } = loaded;
    result
        .output
        .warnings
        .extend(warnings.into_iter().map(RString::from));
    let meta = meta.unwrap_or(Value::Null);
    let text_of = |at: &str| {
        meta.pointer(at)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let native_id = text_of("/session_id").unwrap_or(folder).to_string();
    let dir = text_of("/environment/working_directory")
        .or_else(|| text_of("/origin_directory"))
        .map(str::to_string);

    let first_time = entries.iter().find_map(created_ms);
    let last_time = entries.iter().rev().find_map(updated_ms);
    let started = time::parse_ms(text_of("/start_time"))
        .or(first_time)
        .unwrap_or(modified_ms);
    let updated = time::parse_ms(text_of("/end_time"))
        .or(last_time)
        .unwrap_or(started)
        .max(started);

    let mut messages = Vec::new();
    let mut commands = Vec::new();
    let mut outcomes = Vec::new();
    let mut files = Vec::new();
    for entry in &entries {
        let at = created_ms(entry).unwrap_or(started);
        match entry.get("type").and_then(Value::as_str) {
            Some("message") => messages.extend(message(entry, at)),
            Some("effect") => tool(
                entry,
                at,
                dir.as_deref(),
                &mut commands,
                &mut outcomes,
                &mut files,
            ),
            _ => {}
        }
    }
    if messages.is_empty() {
        result.output.skipped_empty = 1;
        return result;
    }
    let mut session = Session::new(native_id.clone(), native_id, started, updated);
    session.project = Project {
        name: dir
            .as_deref()
            .and_then(paths::basename)
            .map(RString::from)
            .into(),
        dir: dir.map(RString::from).into(),
        id: None.into(),
    };
    session.title = text_of("/title").map(RString::from).into();
    session.parent_id = text_of("/parent_session_id").map(RString::from).into();
    session.messages = messages.into();
    session.commands = commands.into();
    session.files = files.into();
    result.output.sessions.push(session);
    result.outcomes.push(SessionOutcomes {
        commands: outcomes.into(),
    });
    result
}

/// A message of the person or the model, with its text.
fn message(entry: &Value, at: i64) -> Option<Message> {
    let source = entry.get("source").and_then(Value::as_str);
    let role = match entry.get("role").and_then(Value::as_str)? {
        "user" if source != Some("harness") => Role::User,
        "assistant"
            if entry.pointer("/outcome/type").and_then(Value::as_str) != Some("discarded") =>
        {
            Role::Assistant
        }
        _ => return None,
    };
    let text: Vec<&str> = entry
        .get("content")
        .and_then(Value::as_array)?
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    let text = text.join("\n\n");
    if text.trim().is_empty() {
        return None;
    }
    let mut message = Message::new(role, text, at);
    message.native_id = entry
        .get("id")
        .and_then(Value::as_str)
        .map(RString::from)
        .into();
    Some(message)
}

/// A tool call's command or file record.
fn tool(
    entry: &Value,
    at: i64,
    dir: Option<&str>,
    commands: &mut Vec<CommandRecord>,
    outcomes: &mut Vec<CommandOutcome>,
    files: &mut Vec<FileRecord>,
) {
    if entry.pointer("/detail/kind").and_then(Value::as_str) != Some("tool") {
        return;
    }
    let Some(full) = entry.pointer("/detail/toolName").and_then(Value::as_str) else {
        return;
    };
    let name = full.rsplit('.').next().unwrap_or(full);
    let input = |key: &str| {
        entry
            .pointer("/detail/input")
            .and_then(|i| i.get(key))
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    };
    let file = |path: &str, action: FileAction| FileRecord {
        path: match dir {
            Some(dir) if !paths::is_absolute(path) => paths::join(dir, path),
            _ => path.to_string(),
        }
        .into(),
        action,
        timestamp_ms: at,
    };
    match name {
        "bash" => {
            if let Some(command) = input("command") {
                commands.push(CommandRecord {
                    command: command.into(),
                    origin: CommandOrigin::Agent,
                    timestamp_ms: at,
                });
                outcomes.push(outcome(entry));
            }
        }
        "write_file" => files.extend(input("path").map(|p| file(p, FileAction::Edit))),
        "edit" => files.extend(input("file_path").map(|p| file(p, FileAction::Edit))),
        "read_file" => files.extend(input("path").map(|p| file(p, FileAction::Read))),
        _ => {}
    }
}

/// How a command ended: the exit code bash's result keeps, else whether
/// the call failed.
fn outcome(entry: &Value) -> CommandOutcome {
    let code = entry
        .pointer("/state/output/structured_content/returncode")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok());
    if let Some(code) = code {
        return CommandOutcome::from_exit_code(code);
    }
    match entry.pointer("/state/status").and_then(Value::as_str) {
        Some("failed" | "error") => CommandOutcome::from_failed(true),
        _ => CommandOutcome::default(),
    }
}

/// When an entry was created (ms).
fn created_ms(entry: &Value) -> Option<i64> {
    entry.get("createdAt").and_then(Value::as_i64)
}

/// When an entry was last changed (ms).
fn updated_ms(entry: &Value) -> Option<i64> {
    entry
        .get("updatedAt")
        .and_then(Value::as_i64)
        .or_else(|| created_ms(entry))
}
