//! `deja recap --json`.

use std::path::Path;

use serde::Serialize;

use super::forget::Tombstone;
use super::Project;
use crate::output::rfc3339;
use crate::recap::{self, Recap};

/// What happened between `since` and `until`.
#[derive(Debug, Clone, Serialize)]
pub struct RecapJson<'a> {
    /// Sessions and messages per local day, oldest first; days without
    /// sessions left out.
    pub days: Vec<DayCount>,
    /// The projects with anything in the period, most sessions first.
    pub projects: Vec<ProjectJson<'a>>,
    /// The period's first instant.
    pub since: String,
    /// Counts over the whole period.
    pub totals: Totals,
    /// The instant after the period.
    pub until: String,
}

/// One day's counts.
#[derive(Debug, Clone, Serialize)]
pub struct DayCount {
    /// The local day, `YYYY-MM-DD`.
    pub date: String,
    /// The messages of the sessions begun that day.
    pub messages: i64,
    /// Sessions begun that day.
    pub sessions: usize,
}

/// Counts over the period.
#[derive(Debug, Clone, Serialize)]
pub struct Totals {
    /// Commands that failed in it.
    pub failed_commands: usize,
    /// Sessions forgotten in it.
    pub forgotten: usize,
    /// Messages of its sessions.
    pub messages: i64,
    /// Projects with anything in it.
    pub projects: usize,
    /// Sessions begun in it.
    pub sessions: usize,
}

/// One project's part of the period.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectJson<'a> {
    /// Its days with anything in them, oldest first.
    pub days: Vec<DayJson<'a>>,
    /// How lists show it.
    pub label: &'a str,
    /// Messages of its sessions in the period.
    pub messages: i64,
    /// The project.
    pub project: Project<'a>,
    /// Its sessions in the period.
    pub sessions: usize,
}

/// One project's day.
#[derive(Debug, Clone, Serialize)]
pub struct DayJson<'a> {
    /// The local day, `YYYY-MM-DD`.
    pub date: String,
    /// The commands of the day's sessions that failed, in the order the
    /// sessions began and then the order they ran.
    pub failed_commands: Vec<FailedJson<'a>>,
    /// The files the day's sessions changed most, most edit records first.
    pub files: Vec<FileJson<'a>>,
    /// The sessions forgotten that day, as `deja forget --list --json`
    /// shows them.
    pub forgotten: Vec<Tombstone<'a>>,
    /// How many other files the day's sessions changed.
    pub more_files: usize,
    /// The sessions begun that day, in the order they began.
    pub sessions: Vec<SessionJson<'a>>,
}

/// A file changed on a day.
#[derive(Debug, Clone, Serialize)]
pub struct FileJson<'a> {
    /// Its edit records (edits and additions).
    pub edits: usize,
    /// The path, relative to the project's folder when inside it.
    pub path: &'a str,
    /// The sessions that made them.
    pub sessions: usize,
}

/// A command that failed.
#[derive(Debug, Clone, Serialize)]
pub struct FailedJson<'a> {
    /// The command line.
    pub command: &'a str,
    /// Its exit code, when the transcript gave one.
    pub exit_code: Option<i64>,
    /// The harness of the session that ran it.
    pub harness: &'a str,
    /// `user` or `agent`.
    pub origin: &'a str,
    /// deja's id of the session that ran it.
    pub session: &'a str,
    /// When it ran.
    pub timestamp: String,
}

/// A session begun on a day.
#[derive(Debug, Clone, Serialize)]
pub struct SessionJson<'a> {
    /// Whether `started_at` is only its transcript's modification time
    /// (it counts on that day all the same).
    pub date_approximate: bool,
    /// The first line of its first user message.
    pub first_user_line: Option<&'a str>,
    /// The harness that wrote it.
    pub harness: &'a str,
    /// deja's id of the session.
    pub id: &'a str,
    /// How many messages it has.
    pub message_count: i64,
    /// When it started.
    pub started_at: String,
    /// Its title, when the harness keeps one.
    pub title: Option<&'a str>,
}

impl<'a> From<&'a Recap> for RecapJson<'a> {
    fn from(r: &'a Recap) -> Self {
        RecapJson {
            days: r
                .days
                .iter()
                .map(|(day, c)| DayCount {
                    date: day.to_string(),
                    messages: c.messages,
                    sessions: c.sessions,
                })
                .collect(),
            projects: r.projects.iter().map(ProjectJson::from).collect(),
            since: rfc3339(r.period.since),
            totals: Totals {
                failed_commands: r.failed(),
                forgotten: r.forgotten(),
                messages: r.messages(),
                projects: r.projects.len(),
                sessions: r.sessions(),
            },
            until: rfc3339(r.period.until),
        }
    }
}

impl<'a> From<&'a recap::ProjectRecap> for ProjectJson<'a> {
    fn from(p: &'a recap::ProjectRecap) -> Self {
        ProjectJson {
            days: p.days.iter().map(DayJson::from).collect(),
            label: &p.label,
            messages: p.messages(),
            project: Project::from(&p.project),
            sessions: p.sessions(),
        }
    }
}

impl<'a> From<&'a recap::DayRecap> for DayJson<'a> {
    fn from(d: &'a recap::DayRecap) -> Self {
        DayJson {
            date: d.day.to_string(),
            failed_commands: d
                .failed
                .iter()
                .map(|c| FailedJson {
                    command: &c.command,
                    exit_code: c.exit_code,
                    harness: &c.harness,
                    origin: &c.origin,
                    session: &c.session,
                    timestamp: rfc3339(c.timestamp_ms),
                })
                .collect(),
            files: d
                .files
                .iter()
                .map(|f| FileJson {
                    edits: f.edits,
                    path: &f.path,
                    sessions: f.sessions,
                })
                .collect(),
            forgotten: d
                .forgotten
                .iter()
                .map(|t| {
                    let present = t.source_path.as_deref().map(|p| Path::new(p).exists());
                    Tombstone::new(t, present)
                })
                .collect(),
            more_files: d.more_files,
            sessions: d
                .sessions
                .iter()
                .map(|s| SessionJson {
                    date_approximate: s.date_approximate,
                    first_user_line: s.first_user.as_deref(),
                    harness: &s.harness,
                    id: &s.id,
                    message_count: s.message_count,
                    started_at: rfc3339(s.started_at),
                    title: s.title.as_deref(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::keys;
    use crate::recap::Period;

    #[test]
    fn field_names() {
        let r = Recap {
            period: Period { since: 0, until: 1 },
            projects: Vec::new(),
            days: Default::default(),
        };
        let out = RecapJson::from(&r);
        assert_eq!(keys(&out), ["days", "projects", "since", "totals", "until"]);
        assert_eq!(
            keys(&out.totals),
            [
                "failed_commands",
                "forgotten",
                "messages",
                "projects",
                "sessions"
            ]
        );
    }
}
