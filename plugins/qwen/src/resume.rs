//! How to reopen a session: `qwen --resume <sessionId>` (`-r` for short), run
//! in the session's directory. qwen-code looks for
//! `<runtime dir>/projects/<encoded cwd>/chats/<sessionId>.jsonl` and accepts
//! it only when the file's first `cwd` is the directory it starts in, so from
//! anywhere else the id resolves to nothing.
//!
//! A transcript deja read from somewhere qwen-code does not look (a config
//! root, `DEJA_QWEN_ROOT`, a copy) is still resumable once it is back in that
//! folder; the note says so.

use std::fs;
use std::path::Path;

use deja_plugin_api::{text, ROption, RStr, RString, ResumeAdvice, ResumeRequest};

use crate::chain;
use crate::discover;
use crate::project;

/// The advice for `request`.
pub fn advise(request: &ResumeRequest<'_>) -> ResumeAdvice {
    let native_id = request.native_id.as_str();
    let source = optional(request.source_path);
    let dir = optional(request.project_dir)
        .map(String::from)
        .or_else(|| source.and_then(resolved_dir));
    let argv = ["qwen", "--resume", native_id].map(RString::from).to_vec();
    let mut notes = Vec::new();
    if dir.is_none() {
        notes.push(format!(
            "The project directory of this session is unknown. Qwen Code only finds a session \
             from its project's directory: start `qwen --resume {native_id}` there."
        ));
    }
    if let Some(source) = source {
        let (runtime, _) = discover::qwen_runtime_dir(request.context);
        let projects = runtime.join("projects");
        if !Path::new(source).starts_with(&projects) {
            notes.push(format!(
                "deja read this session from `{source}`, which is not in Qwen Code's own folder \
                 (`{}`): Qwen Code resumes it only from `<that folder>/<encoded project \
                 directory>/chats/{native_id}.jsonl`.",
                projects.display()
            ));
        }
    }
    ResumeAdvice::Command {
        argv: argv.into(),
        cwd: dir.map(RString::from).into(),
        note: notes.join(" ").into(),
    }
}

/// The project directory re-resolved from the transcript at `path`.
fn resolved_dir(path: &str) -> Option<String> {
    let bytes = fs::read(path).ok()?;
    let loaded = chain::load(&text::decode(&bytes).0);
    let cwd = loaded.records.iter().find_map(|r| r.cwd.as_deref());
    project::dir(&project::resolve(path, cwd)).map(String::from)
}

/// A request field, `None` when absent or empty.
fn optional<'a>(value: ROption<RStr<'a>>) -> Option<&'a str> {
    value
        .into_option()
        .map(|s| s.as_str())
        .filter(|s| !s.is_empty())
}
