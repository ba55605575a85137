//! The readers' ABI values turned into deja's own types, once, at the
//! boundary: nothing past the host touches FFI types.

use deja_model::{
    CommandRecord, FileRecord, Message, Outcome, OutcomeStatus, Project, Role, Session,
};
use deja_plugin_api as api;

fn opt(v: api::ROption<api::RString>) -> Option<String> {
    v.into_option()
        .map(|s| s.into_string())
        .filter(|s| !s.is_empty())
}

/// Converts a plugin's session (read by the reader of `harness` from a
/// transcript modified at `modified_ms`). A start that is exactly the
/// transcript's modification time is what a reader gives when nothing
/// dates the session: the date is approximate. `outcomes` are its
/// commands' outcomes, in order (missing ones: unknown), and `edits` the
/// texts its file records wrote, in order (missing ones: none), each cut to
/// [`api::EDIT_TEXT_MAX_BYTES`] whatever the plugin handed over.
pub fn session(
    harness: &str,
    s: api::Session,
    outcomes: &[api::CommandOutcome],
    edits: &[api::ROption<api::RString>],
    modified_ms: i64,
) -> Session {
    Session {
        harness: harness.to_string(),
        id: s.id.into_string(),
        native_id: s.native_id.into_string(),
        started_at_ms: s.started_at_ms,
        updated_at_ms: s.updated_at_ms.max(s.started_at_ms),
        date_approximate: s.started_at_ms == modified_ms,
        project: Project {
            dir: opt(s.project.dir),
            name: opt(s.project.name),
            id: opt(s.project.id),
        },
        title: opt(s.title),
        parent_id: opt(s.parent_id),
        precedence: s.precedence,
        messages: s
            .messages
            .into_iter()
            .map(|m| Message {
                role: match m.role {
                    api::Role::User => Role::User,
                    api::Role::Assistant => Role::Assistant,
                },
                text: m.text.into_string(),
                timestamp_ms: m.timestamp_ms,
                native_id: opt(m.native_id),
            })
            .collect(),
        files: s
            .files
            .into_iter()
            .enumerate()
            .map(|(i, f)| FileRecord {
                path: f.path.into_string(),
                action: f.action.as_str(),
                timestamp_ms: f.timestamp_ms,
                text: edits
                    .get(i)
                    .and_then(|t| t.as_ref().into_option())
                    .filter(|t| !t.is_empty())
                    .map(|t| api::cap_edit_text(t).to_string()),
            })
            .collect(),
        commands: s
            .commands
            .into_iter()
            .enumerate()
            .map(|(i, c)| CommandRecord {
                command: c.command.into_string(),
                origin: c.origin.as_str(),
                timestamp_ms: c.timestamp_ms,
                outcome: outcomes.get(i).map(outcome).unwrap_or_default(),
            })
            .collect(),
    }
}

/// A plugin's outcome of a command in deja's terms.
pub fn outcome(o: &api::CommandOutcome) -> Outcome {
    Outcome {
        status: match o.status {
            api::CommandStatus::Unknown => OutcomeStatus::Unknown,
            api::CommandStatus::Succeeded => OutcomeStatus::Succeeded,
            api::CommandStatus::Failed => OutcomeStatus::Failed,
        },
        exit_code: o.exit_code.into_option().map(i64::from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_texts_are_kept_in_order_and_capped() {
        let mut s = api::Session::new("s", "s", 0, 0);
        let file = |path: &str| api::FileRecord {
            path: path.into(),
            action: api::FileAction::Edit,
            timestamp_ms: 0,
        };
        s.files = vec![file("a"), file("b"), file("c")].into();
        let long = "x\n".repeat(api::EDIT_TEXT_MAX_BYTES);
        let edits = [
            api::ROption::RSome(api::RString::from("new text")),
            api::ROption::RSome(api::RString::from(long.as_str())),
        ];
        let out = session("h", s, &[], &edits, 1);
        let texts: Vec<Option<usize>> = out
            .files
            .iter()
            .map(|f| f.text.as_ref().map(String::len))
            .collect();
        assert_eq!(texts, [Some(8), Some(api::EDIT_TEXT_MAX_BYTES), None]);
        assert_eq!(out.files[0].text.as_deref(), Some("new text"));
        assert_eq!(deja_model::EDIT_PARTS_SEPARATOR, api::EDIT_PARTS_SEPARATOR);
    }
}
