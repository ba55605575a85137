//! How to reopen a session: `gemini --resume <sessionId>`, run from the
//! project's directory, because Gemini only looks for sessions of the
//! directory it starts in. Subagent sessions cannot be resumed (Gemini's
//! session list skips them), nor can a2a-server ones (they all share one id).

use std::fs;
use std::path::Path;

use deja_plugin_api::{text, ROption, RStr, RString, ResumeAdvice, ResumeRequest};

use crate::parent::{self, Parent};
use crate::project::{self, Clues};
use crate::replay::{self, Conversation};

/// The id every a2a-server session is recorded under.
const A2A_SERVER_ID: &str = "a2a-server";

/// The advice for `request`.
pub fn advise(request: &ResumeRequest<'_>) -> ResumeAdvice {
    let native_id = request.native_id.as_str();
    if native_id == A2A_SERVER_ID {
        return refuse(format!(
            "This session was recorded by Gemini CLI's a2a server, which records every \
             session under the same id `{A2A_SERVER_ID}`, so `gemini --resume` cannot tell \
             it from the others and cannot reopen it. Its messages stay searchable in deja."
        ));
    }
    let source = optional(request.source_path).map(Path::new);
    if let Some(parent) = source.and_then(parent::of) {
        return refuse(subagent_message(Some(&parent)));
    }
    let conversation = source.and_then(load);
    if conversation
        .as_ref()
        .and_then(|c| c.metadata.kind.as_deref())
        == Some("subagent")
    {
        return refuse(subagent_message(None));
    }
    let dir = optional(request.project_dir)
        .map(String::from)
        .or_else(|| source.and_then(|path| resolved_dir(path, conversation.as_ref())));
    let argv = ["gemini", "--resume", native_id]
        .map(RString::from)
        .to_vec();
    let note = match dir {
        Some(_) => String::new(),
        None => format!(
            "The project directory of this session is unknown. Gemini only finds a session \
             from its project's directory: start `gemini --resume {native_id}` there."
        ),
    };
    ResumeAdvice::Command {
        argv: argv.into(),
        cwd: dir.map(RString::from).into(),
        note: note.into(),
    }
}

fn refuse(message: String) -> ResumeAdvice {
    ResumeAdvice::Refused {
        message: message.into(),
    }
}

fn subagent_message(parent: Option<&Parent>) -> String {
    let base = "This is a subagent session, which Gemini CLI cannot resume \
                (its session list skips subagents).";
    match parent {
        Some(Parent {
            native_id: Some(native),
            id,
            ..
        }) => format!(
            "{base} It ran inside Gemini session `{native}` (deja id `{id}`): resume that one instead."
        ),
        Some(parent) => format!(
            "{base} It ran inside `{}`, whose session file was not found.",
            parent.folder
        ),
        None => format!("{base} Resume the session that started it instead."),
    }
}

fn load(path: &Path) -> Option<Conversation> {
    let bytes = fs::read(path).ok()?;
    Some(replay::load(&text::decode(&bytes).0))
}

/// The project directory re-resolved from the transcript.
fn resolved_dir(path: &Path, conversation: Option<&Conversation>) -> Option<String> {
    let clues = conversation.map_or_else(Clues::default, |c| Clues::from(&c.metadata));
    project::dir(&project::resolve(path, clues)).map(String::from)
}

/// A request field, `None` when absent or empty.
fn optional<'a>(value: ROption<RStr<'a>>) -> Option<&'a str> {
    value
        .into_option()
        .map(|s| s.as_str())
        .filter(|s| !s.is_empty())
}
