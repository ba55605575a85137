//! Resuming: aider cannot reopen one session. `--restore-chat-history` loads
//! the whole history file, every session in it, into a new chat, so deja
//! refuses and says so, with where to run it for a user who wants exactly that.

use deja_plugin_api::{ResumeAdvice, ResumeRequest};

/// The advice for resuming the session `request` names.
pub(crate) fn advise(request: &ResumeRequest<'_>) -> ResumeAdvice {
    let dir = request
        .project_dir
        .map(|d| d.as_str().to_string())
        .into_option();
    let history = request
        .source_path
        .map(|p| p.as_str().to_string())
        .into_option();
    let place = match (&dir, &history) {
        (Some(dir), Some(history)) => format!("in `{dir}` (it reads `{history}`)"),
        (Some(dir), None) => format!("in `{dir}`"),
        (None, Some(history)) => format!("in the folder that holds `{history}`"),
        (None, None) => "in the project folder that holds `.aider.chat.history.md`".to_string(),
    };
    ResumeAdvice::Refused {
        message: format!(
            "aider cannot reopen a single session: it keeps no session ids. \
             `aider --restore-chat-history` loads the whole history file, every session \
             in it, into a new chat. If that is what you want, run \
             `aider --restore-chat-history` {place}."
        )
        .into(),
    }
}
