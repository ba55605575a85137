//! How to reopen a session: the description's command template, with
//! `{native_id}`, `{id}`, `{project}` and `{source}` replaced, run in `cwd`
//! (by default the project folder); without a `[resume]` table the harness
//! cannot reopen sessions and deja says so.

use deja_plugin_api::{ROption, RStr, RString, ResumeAdvice, ResumeRequest};

use crate::description::Description;

/// The advice for `request`.
pub fn advise(d: &Description, request: &ResumeRequest<'_>) -> ResumeAdvice {
    let harness = &d.reader.harness.0;
    let Some(resume) = &d.resume else {
        return ResumeAdvice::Refused {
            message: format!(
                "the {harness} reader's description gives no command that reopens a session"
            )
            .into(),
        };
    };
    let project = optional(request.project_dir);
    let source = optional(request.source_path);
    let fill = |template: &str| -> Option<String> {
        let mut out = template
            .replace("{native_id}", request.native_id.as_str())
            .replace("{id}", request.id.as_str());
        if out.contains("{project}") {
            out = out.replace("{project}", project?);
        }
        if out.contains("{source}") {
            out = out.replace("{source}", source?);
        }
        Some(out)
    };
    let argv: Option<Vec<RString>> = resume
        .argv
        .iter()
        .map(|a| fill(a).map(RString::from))
        .collect();
    let Some(argv) = argv else {
        return ResumeAdvice::Refused {
            message: format!(
                "the {harness} resume command needs the session's project folder or file, which deja does not know"
            )
            .into(),
        };
    };
    let cwd = fill(resume.cwd.as_deref().unwrap_or("{project}"));
    let mut note = resume.note.clone().unwrap_or_default();
    if cwd.is_none() {
        if !note.is_empty() {
            note.push(' ');
        }
        note.push_str("The project directory of this session is unknown.");
    }
    ResumeAdvice::Command {
        argv: argv.into(),
        cwd: cwd.map(RString::from).into(),
        note: note.into(),
    }
}

fn optional<'a>(value: ROption<RStr<'a>>) -> Option<&'a str> {
    value
        .into_option()
        .map(|s| s.as_str())
        .filter(|s| !s.is_empty())
}
