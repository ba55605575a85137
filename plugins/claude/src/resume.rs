//! How to reopen a session: `claude --resume <sessionId>`, run in the
//! session's working directory, because Claude Code looks a session up in
//! the project folder of the directory it starts in. Subagents cannot be
//! resumed (their transcripts are not sessions to Claude Code): the advice
//! names the parent session to resume instead.

use std::fs;
use std::path::Path;

use deja_plugin_api::{ROption, RStr, RString, ResumeAdvice, ResumeRequest, Session};

use crate::discover::CONFIG_VAR;
use crate::ids;
use crate::parse;
use crate::project;

/// The advice for `request`.
pub fn advise(request: &ResumeRequest<'_>) -> ResumeAdvice {
    let source = optional(request.source_path);
    let session = source.and_then(|path| reparse(path, request.id.as_str()));
    let parent = session
        .as_ref()
        .and_then(|s| s.parent_id.clone().into_option())
        .map(String::from)
        .or_else(|| {
            ids::split_subagent(request.id.as_str())
                .map(|(parent, _)| parent.unwrap_or_default().to_string())
        });
    if let Some(parent) = parent {
        return ResumeAdvice::Refused {
            message: subagent_message(&parent).into(),
        };
    }
    let native_id = request.native_id.as_str();
    let dir = optional(request.project_dir).map(String::from).or_else(|| {
        session
            .as_ref()
            .and_then(|s| project::dir(&s.project).map(String::from))
    });
    let mut notes = Vec::new();
    if dir.is_none() {
        notes.push(format!(
            "The working directory of this session is unknown. Claude Code only finds a \
             session from the directory it ran in: start `claude --resume {native_id}` there."
        ));
    }
    if let Some(note) = source.and_then(|path| elsewhere(path, request)) {
        notes.push(note);
    }
    ResumeAdvice::Command {
        argv: ["claude", "--resume", native_id]
            .map(RString::from)
            .to_vec()
            .into(),
        cwd: dir.map(RString::from).into(),
        note: notes.join(" ").into(),
    }
}

fn subagent_message(parent: &str) -> String {
    let base = "This is a Claude Code subagent's transcript, which Claude Code cannot resume \
                on its own.";
    if parent.is_empty() {
        format!("{base} Resume the session that started it instead.")
    } else {
        format!(
            "{base} It ran inside session `{parent}`: resume that one instead \
             (`deja resume {parent}`)."
        )
    }
}

/// A note when the transcript is not where Claude Code will look: below
/// neither `$CLAUDE_CONFIG_DIR/projects` nor `~/.claude/projects`.
fn elsewhere(path: &str, request: &ResumeRequest<'_>) -> Option<String> {
    let context = request.context;
    let config = context.env(CONFIG_VAR).map_or_else(
        || context.home().join(".claude"),
        |dir| Path::new(dir).to_path_buf(),
    );
    let projects = config.join("projects");
    let canonical = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if canonical(Path::new(path)).starts_with(canonical(&projects)) {
        return None;
    }
    let root = Path::new(path)
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "projects"))
        .and_then(Path::parent)?;
    Some(format!(
        "The transcript is in `{}`, not in `{}`: Claude Code finds it only when its \
         configuration folder is `{}` (`{CONFIG_VAR}`).",
        path,
        projects.display(),
        root.display()
    ))
}

/// The session `id` of the transcript at `path`, parsed again.
fn reparse(path: &str, id: &str) -> Option<Session> {
    let bytes = fs::read(path).ok()?;
    parse::parse(path, &bytes, 0)
        .output
        .sessions
        .into_iter()
        .find(|s| s.id.as_str() == id)
}

/// A request field, `None` when absent or empty.
fn optional<'a>(value: ROption<RStr<'a>>) -> Option<&'a str> {
    value
        .into_option()
        .map(|s| s.as_str())
        .filter(|s| !s.is_empty())
}
