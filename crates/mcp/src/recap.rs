//! The `recap` tool: what happened in a period (by default the last seven
//! days), per project and per day, as `deja recap` reads it: the sessions
//! begun, the files changed most, the commands that failed, the sessions
//! forgotten. Framed as
//! untrusted memory, bounded like the other tools' answers, and without the
//! sessions the asking agent is not given (its own, code-folder sessions).

use deja_app::recap::{DayRecap, Period, ProjectRecap, Recap};
use deja_render::frame;
use deja_store::{SessionFilter, SessionRow, Store};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::json::recap::RecapJson;
use crate::output::{plural, rfc3339};
use crate::tools::{Answer, CallError, Limits};

/// Most bytes of a session's title or first request in the text.
const ABOUT_BYTES: usize = 200;
/// Room kept for the note under a cut answer.
const NOTE_ROOM: usize = 200;

/// The tool's definition (name, description, input schema).
pub fn definition() -> (&'static str, &'static str, Value) {
    let date =
        "A date: YYYY-MM-DD, RFC 3339, `today`, `yesterday`, `last week`, or an age such as `7d`, `12h`, `2w`.";
    (
        "recap",
        "What was done in a period (default: the last 7 days), per project and per day: the sessions \
         begun (id, harness, time, messages, title or first request), the files changed most, the \
         commands that failed (where the transcript records how a command ended), the sessions forgotten. Read a session with the `session` tool.",
        json!({
            "type": "object",
            "properties": {
                "since": {"type": "string", "description": format!("From this on (default: 7 days before `until`). {date}")},
                "until": {"type": "string", "description": format!("Up to this, not included (default: now). {date}")},
                "project": {"type": "string", "description": "Only this project: a directory, a folder name or a harness project id."}
            },
            "additionalProperties": false
        }),
    )
}

/// Arguments of `recap`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecapArgs {
    since: Option<String>,
    until: Option<String>,
    project: Option<String>,
}

/// Answers `recap`.
pub fn recap(store: &Store, args: RecapArgs, limits: &Limits) -> Result<Answer, CallError> {
    let bad = |m: String| CallError(m);
    let period = Period::parse_named(
        args.since.as_deref(),
        args.until.as_deref(),
        chrono::Utc::now(),
        ["`since`", "`until`"],
    )
    .map_err(bad)?;
    let scope = SessionFilter {
        project: args.project.filter(|p| !p.trim().is_empty()),
        exclude: limits.exclude.clone(),
        skip_code_folders: !limits.code_folders,
        ..SessionFilter::default()
    };
    let recap = Recap::gather_in(store, period, &scope).map_err(|e| bad(e.to_string()))?;
    if recap.is_empty() && scope.project.is_some() {
        // A project the index has never seen is a mistake, not a quiet period.
        crate::tools::check_scope(store, &scope)?;
    }
    let (body, shown) = render(&recap, limits.max_answer_bytes);
    let mut text = frame::wrap(&body);
    let left = recap.sessions().saturating_sub(listed(&shown));
    if left > 0 {
        text.push_str(&frame::field(&format!(
            "{left} more sessions were left out to keep this answer under {} bytes: ask for a shorter period or one `project`.",
            limits.max_answer_bytes
        )));
        text.push('\n');
    }
    let mut value = serde_json::to_value(RecapJson::from(&shown))
        .map_err(|e| bad(format!("the answer cannot be written: {e}")))?;
    if let Value::Object(m) = &mut value {
        m.insert("left_out".into(), left.into());
    }
    Ok(Answer {
        text: frame::cut(&text, limits.max_answer_bytes).to_string(),
        value: deja_render::structured::frame(value, limits.max_answer_bytes),
    })
}

/// Sessions a recap cut to what an answer shows lists.
fn listed(recap: &Recap) -> usize {
    recap.projects.iter().map(ProjectRecap::sessions).sum()
}

/// The text inside the frame, within `max_bytes` with the frame and a note
/// around it, and the part of `recap` it shows (whole days' counts kept).
fn render(recap: &Recap, max_bytes: usize) -> (String, Recap) {
    let room = max_bytes.saturating_sub(frame::open().len() + frame::close().len() + NOTE_ROOM);
    let mut body = String::new();
    let mut shown = Recap {
        period: recap.period,
        projects: Vec::new(),
        days: recap.days.clone(),
    };
    let mut counts = vec![
        plural(recap.sessions(), "session", "sessions"),
        plural(count(recap.messages()), "message", "messages"),
        plural(recap.projects.len(), "project", "projects"),
    ];
    if recap.failed() > 0 {
        counts.push(plural(recap.failed(), "failed command", "failed commands"));
    }
    if recap.forgotten() > 0 {
        counts.push(format!("{} forgotten", recap.forgotten()));
    }
    body.push_str(&format!(
        "From {} to {}: {}\n",
        rfc3339(recap.period.since),
        rfc3339(recap.period.until),
        counts.join(", ")
    ));
    if recap.is_empty() {
        body.push_str("Nothing was recorded in this period.\n");
    }
    let fits = |body: &str, line: &str| body.len() + line.len() <= room;
    'projects: for p in &recap.projects {
        let head = format!(
            "\nproject {} · {}, {}\n",
            frame::field(&p.label),
            plural(p.sessions(), "session", "sessions"),
            plural(count(p.messages()), "message", "messages")
        );
        if !fits(&body, &head) {
            break;
        }
        body.push_str(&head);
        shown.projects.push(ProjectRecap {
            days: Vec::new(),
            ..p.clone()
        });
        for d in &p.days {
            let day_line = format!("  {}\n", d.day.format("%Y-%m-%d %a"));
            if !fits(&body, &day_line) {
                break 'projects;
            }
            body.push_str(&day_line);
            let mut day = DayRecap {
                sessions: Vec::new(),
                files: Vec::new(),
                more_files: d.more_files,
                forgotten: Vec::new(),
                failed: Vec::new(),
                day: d.day,
            };
            let mut full = false;
            for s in &d.sessions {
                let line = session_line(s);
                if !fits(&body, &line) {
                    full = true;
                    break;
                }
                body.push_str(&line);
                day.sessions.push(s.clone());
            }
            for f in d.files.iter().take_while(|_| !full) {
                let mut how = plural(f.edits, "edit", "edits");
                if f.sessions > 1 {
                    how.push_str(&format!(" in {} sessions", f.sessions));
                }
                let line = format!("    changed {} · {how}\n", frame::field(&f.path));
                if !fits(&body, &line) {
                    full = true;
                    break;
                }
                body.push_str(&line);
                day.files.push(f.clone());
            }
            if d.more_files > 0 && !full {
                let line = format!("    and {} more\n", plural(d.more_files, "file", "files"));
                full = !fits(&body, &line);
                if !full {
                    body.push_str(&line);
                }
            }
            for c in d.failed.iter().take_while(|_| !full) {
                let code = c
                    .exit_code
                    .map(|code| format!(" · exit {code}"))
                    .unwrap_or_default();
                let line = format!(
                    "    failed {}{code} · in {}\n",
                    frame::field(crate::output::one_line(&c.command, ABOUT_BYTES).as_str()),
                    frame::field(&c.session)
                );
                if !fits(&body, &line) {
                    full = true;
                    break;
                }
                body.push_str(&line);
                day.failed.push(c.clone());
            }
            for t in d.forgotten.iter().take_while(|_| !full) {
                let line = format!(
                    "    forgotten {} · {}\n",
                    frame::field(&t.id),
                    frame::field(&t.harness)
                );
                if !fits(&body, &line) {
                    full = true;
                    break;
                }
                body.push_str(&line);
                day.forgotten.push(t.clone());
            }
            if let Some(last) = shown.projects.last_mut() {
                last.days.push(day);
            }
            if full {
                break 'projects;
            }
        }
    }
    (body, shown)
}

fn count(n: i64) -> usize {
    usize::try_from(n).unwrap_or(0)
}

/// One session of a day.
fn session_line(s: &SessionRow) -> String {
    let about = s.title.as_deref().or(s.first_user.as_deref()).unwrap_or("");
    format!(
        "    {} · {} · started {}{} · {} · {}\n",
        frame::field(&s.id),
        frame::field(&s.harness),
        if s.date_approximate { "about " } else { "" },
        rfc3339(s.started_at),
        plural(count(s.message_count), "message", "messages"),
        frame::field(crate::output::one_line(about, ABOUT_BYTES).as_str())
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn bad_dates_name_the_argument() {
        let now = chrono::Utc::now();
        let e =
            Period::parse_named(Some("someday"), None, now, ["`since`", "`until`"]).unwrap_err();
        assert!(e.starts_with("`since`: cannot read `someday`"), "{e}");
    }

    #[test]
    fn an_empty_period_is_framed_and_says_so() {
        let recap = Recap {
            period: Period { since: 0, until: 1 },
            projects: Vec::new(),
            days: Default::default(),
        };
        let (body, shown) = render(&recap, 10_000);
        assert!(body.contains("Nothing was recorded"), "{body}");
        assert_eq!(listed(&shown), 0);
    }
}
