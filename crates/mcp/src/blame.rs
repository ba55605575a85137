//! The `blame` tool: which past sessions edited a file, newest first, each
//! with the message behind the edit, framed as untrusted memory and bounded
//! like the other tools' answers.

use deja_app::blame::{self, Entry, LineAnswer, Target};
use deja_render::frame;
use deja_store::Store;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::json::blame as out;
use crate::output::{one_line, rfc3339};
use crate::tools::{Answer, CallError, Limits};

/// Records a `blame` call lists unless it asks for `limit`.
const DEFAULT_RECORDS: usize = 20;
/// Most records one `blame` call may ask for.
const MAX_RECORDS: u64 = 100;
/// Characters of the message behind an edit.
const SNIPPET_CHARS: usize = 200;

/// The tool's definition (name, description, input schema).
pub fn definition() -> (&'static str, &'static str, Value) {
    (
        "blame",
        "Which past sessions edited a file, newest first: session id, harness, project, date, and the \
         message (index and snippet) behind each edit. With `FILE:LINE`, the edit that wrote that line where it \
         can be told (its text found once in the file today, covering the line). Read it with the `session` tool (`ID#INDEX`).",
        json!({
            "type": "object",
            "properties": {
                "file": {"type": "string", "description": "The file: absolute, or relative to the folder deja mcp runs in; `FILE:LINE` asks about a line."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RECORDS, "description": "Most edits listed (default 20)."}
            },
            "required": ["file"],
            "additionalProperties": false
        }),
    )
}

/// Arguments of `blame`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlameArgs {
    file: String,
    limit: Option<u64>,
}

/// Answers `blame`.
pub fn blame(store: &Store, args: BlameArgs, limits: &Limits) -> Result<Answer, CallError> {
    let bad = |m: String| CallError(m);
    let limit = match args.limit {
        None => DEFAULT_RECORDS,
        Some(n) if (1..=MAX_RECORDS).contains(&n) => usize::try_from(n).unwrap_or(DEFAULT_RECORDS),
        Some(n) => return Err(bad(format!("`limit` must be 1 to {MAX_RECORDS}, not {n}"))),
    };
    let spec = blame::parse_spec(std::ffi::OsStr::new(&args.file))
        .map_err(|e| bad(format!("`file`: {e}")))?;
    let cwd = std::env::current_dir()
        .map_err(|e| bad(format!("the current folder cannot be read: {e}")))?;
    let target = Target::resolve(&spec.file, &cwd);
    let file = target.abs.to_string_lossy().into_owned();
    if target.abs.is_dir() {
        return Err(bad(format!(
            "`file`: {} is a folder, not a file",
            frame::field(&file)
        )));
    }
    let mut entries: Vec<Entry> = blame::records(store, &target, blame::EDITS)
        .map_err(|e| bad(e.to_string()))?
        .into_iter()
        .filter(|e| {
            let s = &e.activity.session;
            !limits.exclude.contains(&s.id) && (limits.code_folders || !s.in_code_folder)
        })
        .collect();
    let total = entries.len();
    entries.truncate(limit);
    let mut notes = Vec::new();
    let answer = spec
        .line
        .filter(|_| !entries.is_empty())
        .map(|n| LineAnswer::of(&target.abs, n, &entries));
    let wrote = answer.as_ref().and_then(LineAnswer::wrote);
    if let (Some(n), Some(a)) = (spec.line, &answer) {
        notes.push(a.sentence(&file, n, &entries));
    }
    let open = frame::open();
    let close = frame::close();
    let mut body = String::new();
    if entries.is_empty() {
        body.push_str(&format!("No session edited {}.\n", frame::field(&file)));
    }
    let mut listed = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let a = &e.activity;
        let s = &a.session;
        let message = match &a.message {
            Some((index, role, text)) => format!(
                " · #{index} {}: {}",
                role.as_str(),
                frame::field(&one_line(text, SNIPPET_CHARS))
            ),
            None => String::new(),
        };
        let stands = match (spec.line, answer.as_ref().and_then(|a| a.edit(i))) {
            (Some(n), Some(m)) if m.covers => format!(" · wrote line {n}"),
            (Some(_), Some(m)) => format!(" · text {}", m.found.as_str()),
            _ => String::new(),
        };
        let line = format!(
            "{} · {} · {} · started {}{} · {} {} ({}: {}){}{stands}\n",
            frame::field(&s.id),
            frame::field(&s.harness),
            frame::field(&deja_app::output::project_label(&s.project)),
            if s.date_approximate { "about " } else { "" },
            rfc3339(s.started_at),
            a.action,
            rfc3339(a.timestamp_ms),
            e.matched.as_str(),
            frame::field(&a.path),
            message
        );
        if open.len() + body.len() + line.len() + close.len() + 200 > limits.max_answer_bytes {
            break;
        }
        body.push_str(&line);
        listed.push((i, e));
    }
    let left = total - listed.len();
    if left > 0 {
        notes.push(format!("{left} more edits were left out (ask with a larger `limit`, or within the answer's {} bytes).", limits.max_answer_bytes));
    }
    let mut text = frame::wrap(&body);
    for n in &notes {
        text.push_str(&frame::field(n));
        text.push('\n');
    }
    let value = out::Blame {
        edits: listed
            .iter()
            .map(|&(i, e)| out::Record::of_edit(e, i, answer.as_ref()))
            .collect(),
        file,
        line: spec.line,
        line_edit: wrote.and_then(|i| {
            entries
                .get(i)
                .map(|e| out::Record::of_edit(e, i, answer.as_ref()))
        }),
        line_note: notes
            .first()
            .filter(|_| spec.line.is_some() && wrote.is_none())
            .cloned(),
        reads: None,
    };
    let value = serde_json::to_value(&value)
        .map_err(|e| bad(format!("the answer cannot be written: {e}")))?;
    Ok(Answer {
        text: frame::cut(&text, limits.max_answer_bytes).to_string(),
        value: deja_render::structured::frame(value, limits.max_answer_bytes),
    })
}
