//! A group of records turned into deja's session by the description's
//! fields: the session's id, parent, project, title and times; the records
//! that are messages, joined when they share a message id; the tool calls
//! that become command and file records, with each command's outcome where
//! its rule or a `[[results]]` record says it.

use std::collections::HashMap;

use deja_plugin_api::{
    paths, CommandOrigin, CommandOutcome, CommandRecord, FileAction, FileRecord, Message,
    ParseOutputV1_3, PluginError, Project, RString, Role, Session, SessionEdits, SessionOutcomes,
};
use serde_json::Value;

use crate::description::{
    Action, Description, Field, FixedRole, IdFallback, MessageFields, Origin, RoleField, TimeField,
    Tool,
};
use crate::linked;
use crate::place;
use crate::pointer::Pointer;
use crate::source::{self, Group};
use crate::time;

/// The parse result for the transcript at `path` (modified at
/// `modified_ms`), built one session at a time as the source reads them,
/// with its commands' outcomes and its edits' texts beside the sessions.
pub fn output(
    d: &Description,
    path: &str,
    bytes: &[u8],
    modified_ms: i64,
) -> Result<ParseOutputV1_3, PluginError> {
    let mut result = ParseOutputV1_3::default();
    let mut visit = |group: Group| match build(d, &group, path, modified_ms) {
        Some((s, outcomes, edits)) if !s.messages.is_empty() => {
            result.output.sessions.push(s);
            result.outcomes.push(SessionOutcomes {
                commands: outcomes.into(),
            });
            result.edits.push(SessionEdits::from_texts(edits));
        }
        _ => result.output.skipped_empty += 1,
    };
    let warnings = match d.source.linked.as_ref().filter(|l| l.applies(path)) {
        Some(l) => linked::load(l, path, bytes, &mut visit)?,
        None => source::load(d, path, bytes, &mut visit)?,
    };
    result.output.warnings = warnings.into_iter().map(RString::from).collect();
    Ok(result)
}

/// A command's outcome as its rule gave it, and the call id a result may
/// give it by.
struct Pending {
    outcome: Option<CommandOutcome>,
    call_id: Option<String>,
}

/// Where a field is read: the session's records, the transcript's path,
/// and the session's id once known (for an index file's entry).
struct At<'a> {
    group: &'a Group,
    path: &'a str,
    id: Option<&'a str>,
}

/// The first value of `field` in the group's row, else in its records
/// (or, for a field of the transcript's place, from `path`).
fn first(at: &At, field: &Option<Field>) -> Option<String> {
    field.as_ref().and_then(|f| value_of(at, f, false))
}

/// The last value of `field` (a title that was set again wins).
fn last(at: &At, field: &Option<Field>) -> Option<String> {
    field.as_ref().and_then(|f| value_of(at, f, true))
}

/// The value of `field`: the first of a list that has one; an index
/// file's; a place's; else the row's and the records' (the last record
/// first when `latest`, the row last).
fn value_of(at: &At, field: &Field, latest: bool) -> Option<String> {
    let (group, path) = (at.group, at.path);
    if let Field::FirstOf(fields) = field {
        return fields.iter().find_map(|f| value_of(at, f, latest));
    }
    if let Field::InIndex(index) = field {
        return crate::dated::string_in_index(index, path, at.id?);
    }
    if let Some(value) = place::of(field, path) {
        return value;
    }
    let in_row = || group.row.as_ref().and_then(|r| field.string(r));
    if latest {
        group
            .records
            .iter()
            .rev()
            .find_map(|r| field.string(r))
            .or_else(in_row)
    } else {
        in_row().or_else(|| group.records.iter().find_map(|r| field.string(r)))
    }
}

/// A session, its commands' outcomes and its edits' texts.
type Built = (Session, Vec<CommandOutcome>, Vec<Option<String>>);

fn build(d: &Description, group: &Group, path: &str, modified_ms: i64) -> Option<Built> {
    let s = &d.session;
    let unknown = At {
        group,
        path,
        id: None,
    };
    let id = first(&unknown, &s.id)
        .or_else(|| group.id.clone())
        .or_else(|| fallback_id(path, s.id_fallback))?;
    let at = At {
        id: Some(&id),
        ..unknown
    };
    let mut messages: Vec<Message> = Vec::new();
    // The rule and harness id of the last message, to join its parts.
    let mut last_message_id: Option<(usize, String)> = None;
    let mut files = Vec::new();
    let mut commands = Vec::new();
    let mut pending: Vec<Pending> = Vec::new();
    let mut results: HashMap<String, CommandOutcome> = HashMap::new();
    let mut times = Vec::new();
    let time_of = |field: &Option<TimeField>| {
        field
            .as_ref()
            .and_then(|f| crate::dated::of(f, group, path, &id))
    };
    let started_field = time_of(&s.started);
    let mut clock = started_field.unwrap_or(modified_ms);
    // The `first` rules that have had their record.
    let mut taken = vec![false; d.message.len()];
    for record in &group.records {
        if let Some(t) = d
            .message
            .iter()
            .find_map(|m| m.time.as_ref().and_then(|t| t.in_record(record)))
        {
            clock = t;
            times.push(t);
        }
        tool_records(d, record, clock, &mut commands, &mut pending, &mut files);
        for rule in &d.results {
            for (id, outcome) in rule.results(record) {
                results.entry(id).or_insert(outcome);
            }
        }
        for (rule, m) in d.message.iter().enumerate() {
            if m.skip.iter().any(|c| c.matches(record)) {
                continue;
            }
            if !m.when.is_empty() && !m.when.iter().any(|c| c.matches(record)) {
                continue;
            }
            if m.first {
                if taken.get(rule).copied().unwrap_or(true) {
                    continue;
                }
                if let Some(t) = taken.get_mut(rule) {
                    *t = true;
                }
            }
            // A `first` rule's record is no later rule's.
            let only = m.first;
            let (Some(role), Some(text)) = (role_of(m, record), text_of(m, record)) else {
                if only {
                    break;
                }
                continue;
            };
            // A rule's own time (an answer's, after its request's), else
            // the record's.
            let at = m
                .time
                .as_ref()
                .and_then(|t| t.in_record(record))
                .unwrap_or(clock);
            times.push(at);
            let native =
                m.id.as_ref()
                    .and_then(|p| p.string(record))
                    .map(|id| (rule, id));
            match messages.last_mut() {
                Some(prev)
                    if native.is_some() && native == last_message_id && prev.role == role =>
                {
                    let joined = format!("{}\n\n{}", prev.text, text);
                    prev.text = joined.into();
                }
                _ => {
                    let mut message = Message::new(role, text, at);
                    message.native_id = native.clone().map(|(_, id)| RString::from(id)).into();
                    messages.push(message);
                }
            }
            last_message_id = native;
            if only {
                break;
            }
        }
    }
    let started = started_field
        .or_else(|| times.iter().min().copied())
        .unwrap_or(modified_ms);
    let updated = time_of(&s.updated)
        .or_else(|| times.iter().max().copied())
        .unwrap_or(started)
        .max(started);

    let dir = first(&at, &s.project).map(|d| folder(&d));
    let project = Project {
        name: dir
            .as_deref()
            .and_then(paths::basename)
            .map(RString::from)
            .into(),
        id: first(&at, &s.project_id).map(RString::from).into(),
        dir: dir.clone().map(RString::from).into(),
    };
    let title = last(&at, &s.title)
        .filter(|t| !s.title_ignore.iter().any(|p| p.0.is_match(t)))
        .map(|t| t.trim().to_string());
    let parent = first(&at, &s.parent);
    let mut session = Session::new(id.clone(), id.clone(), started, updated);
    session.parent_id = parent.map(RString::from).into();
    session.title = title.map(RString::from).into();
    session.project = project;
    session.messages = messages.into();
    let mut edits = Vec::with_capacity(files.len());
    session.files = files
        .into_iter()
        .map(|(file, action, at, text)| {
            edits.push(text);
            FileRecord {
                path: resolve(dir.as_deref(), &folder(&file)).into(),
                action,
                timestamp_ms: at,
            }
        })
        .collect();
    session.commands = commands.into();
    let outcomes = pending
        .into_iter()
        .map(|p| {
            p.outcome
                .or_else(|| p.call_id.and_then(|id| results.get(&id).copied()))
                .unwrap_or_default()
        })
        .collect();
    Some((session, outcomes, edits))
}

/// The command and file records the description's tool rules find in
/// `record` (at `clock` unless a rule has its own time).
fn tool_records(
    d: &Description,
    record: &Value,
    clock: i64,
    commands: &mut Vec<CommandRecord>,
    pending: &mut Vec<Pending>,
    files: &mut Vec<(String, FileAction, i64, Option<String>)>,
) {
    for tool in &d.tools {
        let holder = tool.each.as_ref().and_then(|p| p.get(record));
        let calls: Vec<&Value> = match (&tool.each, holder.as_deref()) {
            (None, _) => vec![record],
            (Some(_), Some(Value::Array(items))) => items.iter().collect(),
            (Some(_), _) => Vec::new(),
        };
        for call in calls {
            if !tool.when.matches(call) {
                continue;
            }
            let at = tool
                .time
                .as_ref()
                .and_then(|p| p.get(call))
                .and_then(|v| time::ms(&v))
                .unwrap_or(clock);
            for command in values(tool, call, &tool.command, &tool.commands) {
                commands.push(CommandRecord {
                    command: command.into(),
                    origin: match tool.origin {
                        Origin::Agent => CommandOrigin::Agent,
                        Origin::User => CommandOrigin::User,
                    },
                    timestamp_ms: at,
                });
                pending.push(Pending {
                    outcome: tool.outcome().of(call),
                    call_id: tool.call_id.as_ref().and_then(|p| p.string(call)),
                });
            }
            let text = tool.text.as_ref().and_then(|p| p.string(call));
            for file in values(tool, call, &tool.file, &tool.files) {
                files.push((file, action(tool.action), at, text.clone()));
            }
        }
    }
}

/// The values a tool rule finds in `call`: the string at `one`, the
/// strings of the array at `many` (at `item` inside each element), or, with
/// a `pattern`, the first group of every match in those strings.
fn values(tool: &Tool, call: &Value, one: &Option<Pointer>, many: &Option<Pointer>) -> Vec<String> {
    let mut found: Vec<String> = one
        .as_ref()
        .and_then(|p| p.string(call))
        .into_iter()
        .collect();
    if let Some(Value::Array(items)) = many.as_ref().and_then(|p| p.get(call)).as_deref() {
        found.extend(items.iter().filter_map(|item| {
            match &tool.item {
                Some(p) => p.string(item),
                None => item
                    .as_str()
                    .filter(|s| !s.trim().is_empty())
                    .map(str::to_string),
            }
        }));
    }
    match &tool.pattern {
        None => found,
        Some(p) => found
            .iter()
            .flat_map(|s| {
                p.0.captures_iter(s)
                    .filter_map(|c| c.get(1).map(|m| m.as_str().trim().to_string()))
                    .filter_map(|m| match &tool.in_match {
                        None => Some(m),
                        Some(at) => serde_json::from_str::<Value>(&m)
                            .ok()
                            .and_then(|v| at.string(&v)),
                    })
                    .collect::<Vec<_>>()
            })
            .filter(|s| !s.is_empty())
            .collect(),
    }
}

/// The id from the file's name when no record holds one.
fn fallback_id(path: &str, fallback: Option<IdFallback>) -> Option<String> {
    let name = |p: &str| paths::basename(p).map(str::to_string);
    match fallback.unwrap_or(IdFallback::Stem) {
        IdFallback::Stem => {
            let base = name(path)?;
            Some(match base.rsplit_once('.') {
                Some((stem, _)) if !stem.is_empty() => stem.to_string(),
                _ => base,
            })
        }
        IdFallback::Folder => {
            let base = paths::basename(path)?;
            let dir = path.strip_suffix(base)?.trim_end_matches(['/', '\\']);
            name(dir)
        }
    }
    .filter(|s| !s.is_empty())
}

/// The role of the message `m` finds in `record`.
fn role_of(m: &MessageFields, record: &Value) -> Option<Role> {
    let value = match &m.role {
        RoleField::Is(FixedRole::User) => return Some(Role::User),
        RoleField::Is(FixedRole::Assistant) => return Some(Role::Assistant),
        RoleField::At(p) => p.string(record)?,
    };
    let r = &m.roles;
    if r.user.0.contains(&value) {
        Some(Role::User)
    } else if r.assistant.0.contains(&value) {
        Some(Role::Assistant)
    } else {
        None
    }
}

/// The record's text: a string, or the kept parts of an array, joined.
fn text_of(m: &MessageFields, record: &Value) -> Option<String> {
    let value = m.text.get(record)?;
    let text = match value.as_ref() {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            let kept: Vec<String> = parts
                .iter()
                .filter_map(|part| match part {
                    Value::String(s) => Some(s.clone()),
                    part => {
                        match m.parts.r#type.string(part) {
                            Some(kind) if m.parts.keep.0.contains(&kind) => {}
                            None if m.parts.untyped && part.is_object() => {}
                            _ => return None,
                        }
                        m.parts.text.string(part)
                    }
                })
                .filter(|s| !s.trim().is_empty())
                .filter(|s| !m.parts.drop.iter().any(|p| p.0.is_match(s)))
                .collect();
            kept.join(m.parts.join.as_deref().unwrap_or("\n\n"))
        }
        _ => return None,
    };
    let text = m
        .strip
        .iter()
        .fold(text, |t, p| p.0.replace_all(&t, "").into_owned());
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn action(a: Action) -> FileAction {
    match a {
        Action::Edit => FileAction::Edit,
        Action::Read => FileAction::Read,
        Action::Add => FileAction::Add,
        Action::ReadOnly => FileAction::ReadOnly,
    }
}

/// A folder or file as a path: a `file://` URI (as editors based on VS
/// Code write workspace folders and links) becomes the path it names.
fn folder(value: &str) -> String {
    let Some(rest) = value.strip_prefix("file://") else {
        return value.to_string();
    };
    // `file:///home/me` and `file://localhost/home/me`; `file:///c%3A/x` on Windows.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let decoded = percent_decode(rest);
    match decoded.get(1..3) {
        Some(drive) if decoded.starts_with('/') && drive.ends_with(':') => {
            decoded.get(1..).unwrap_or(&decoded).to_string()
        }
        _ => decoded,
    }
}

/// `%XX` escapes decoded (invalid ones kept as written).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = |j: usize| bytes.get(j).and_then(|c| (*c as char).to_digit(16));
        match (b, hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A file path resolved against the project folder when relative.
fn resolve(dir: Option<&str>, file: &str) -> String {
    match dir {
        Some(dir) if !paths::is_absolute(file) => paths::join(dir, file),
        _ => file.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_are_read_as_folders() {
        assert_eq!(folder("/home/me/app"), "/home/me/app");
        assert_eq!(folder("file:///home/me/my%20app"), "/home/me/my app");
        assert_eq!(folder("file://localhost/srv/x"), "/srv/x");
        assert_eq!(folder("file:///c%3A/Users/me"), "c:/Users/me");
        assert_eq!(folder("file:///bad%zz"), "/bad%zz");
    }
}
