//! How to reopen a session: `codex resume <id>`, run in the session's
//! working directory. Codex finds the rollout by its UUID itself, but only
//! below `$CODEX_HOME/sessions/` (`find_thread_path_by_id_str` in codex-rs),
//! so the advice says when the rollout is archived, or lives in another
//! Codex home than the one `codex` will search, and refuses ids that are no
//! UUID (a file deja could only name by its file name).

use std::fs;
use std::path::{Path, PathBuf};

use deja_plugin_api::discover::expand_home;
use deja_plugin_api::{text, ROption, RStr, RString, ResumeAdvice, ResumeRequest};

use crate::discover::HOME_VAR;
use crate::home::{Location, SESSIONS};
use crate::ids;
use crate::session::{self, Summary};

/// Rollouts larger than this are not re-read for their directory.
const MAX_SOURCE_BYTES: u64 = 256 * 1024 * 1024;

/// The advice for `request`.
pub fn advise(request: &ResumeRequest<'_>) -> ResumeAdvice {
    let native_id = request.native_id.as_str();
    let source = optional(request.source_path).map(Path::new);
    if !ids::is_uuid(native_id) {
        let file = source.map_or(String::new(), |s| format!(" ({})", s.display()));
        return ResumeAdvice::Refused {
            message: format!(
                "Codex reopens a session by the UUID it gave the thread, and this rollout{file} \
                 names none (deja calls it `{native_id}`), so `codex resume` cannot find it. \
                 Its messages stay searchable in deja."
            )
            .into(),
        };
    }
    let summary = source.and_then(load).unwrap_or_default();
    let dir = optional(request.project_dir)
        .map(String::from)
        .or(summary.dir.clone());
    let mut notes: Vec<String> = Vec::new();
    if dir.is_none() {
        notes.push(format!(
            "The session's working directory is unknown; run `codex resume {native_id}` \
             in the project it worked on (Codex keeps the directory you start it in)."
        ));
    }
    if let Some(location) = source.and_then(Location::of) {
        if location.archived {
            notes.push(format!(
                "This session is archived (in `{}`): `codex resume` only looks in `{}`, \
                 so unarchive it in Codex first (or move the file back there).",
                location.home.join("archived_sessions").display(),
                location.home.join(SESSIONS).display()
            ));
        }
        let searched = codex_home(request);
        if !same_dir(&location.home, &searched) {
            notes.push(format!(
                "The rollout is in the Codex home `{}`, not `{}` where `codex` looks: \
                 run it with `CODEX_HOME={}`.",
                location.home.display(),
                searched.display(),
                location.home.display()
            ));
        }
    }
    if let Some(meta) = summary
        .meta
        .as_ref()
        .filter(|m| m.subagent || m.forked_from_id.is_some())
    {
        let parent = meta
            .forked_from_id
            .as_ref()
            .or(meta.parent_thread_id.as_ref());
        notes.push(match parent {
            Some(parent) if meta.subagent => format!(
                "This is a sub-agent's thread; the conversation that started it is `{parent}` \
                 (`codex resume {parent}`)."
            ),
            Some(parent) => format!("This thread was forked from `{parent}`."),
            None => "This is a sub-agent's thread (a review or helper Codex started), \
                     not a conversation you started."
                .to_string(),
        });
    }
    ResumeAdvice::Command {
        argv: ["codex", "resume", native_id]
            .map(RString::from)
            .to_vec()
            .into(),
        cwd: dir.map(RString::from).into(),
        note: notes.join(" ").into(),
    }
}

/// Where `codex` will look: `$CODEX_HOME`, else `~/.codex`.
fn codex_home(request: &ResumeRequest<'_>) -> PathBuf {
    let home = request.context.home();
    match request.context.env(HOME_VAR) {
        Some(value) => expand_home(value, home),
        None => home.join(".codex"),
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    let canonical = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canonical(a) == canonical(b)
}

fn load(path: &Path) -> Option<Summary> {
    if fs::metadata(path).ok()?.len() > MAX_SOURCE_BYTES {
        return None;
    }
    let bytes = fs::read(path).ok()?;
    Some(session::summary(&text::decode(&bytes).0))
}

/// A request field, `None` when absent or empty.
fn optional<'a>(value: ROption<RStr<'a>>) -> Option<&'a str> {
    value
        .into_option()
        .map(|s| s.as_str())
        .filter(|s| !s.is_empty())
}
