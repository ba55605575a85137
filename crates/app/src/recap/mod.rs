//! `deja recap`: what happened in a period, read from the store alone (no
//! model): per project and per local day, the sessions begun that day, the
//! files their edit records changed most, the commands that failed, and the
//! sessions forgotten that day; and each day's counts of sessions and
//! messages, for a calendar.
//!
//! A session counts on the day it began (a date that is only its
//! transcript's modification time too: the session is marked, not left
//! out), with all its edit records and all its failed commands. A command
//! failed when its transcript says so (a non-zero exit code, or a result the
//! harness marks an error); commands whose outcome the transcript does not
//! give are never listed as failed.

pub mod period;

use std::collections::BTreeMap;

use chrono::NaiveDate;

use deja_model::Project;
use deja_store::forget::Tombstone;
use deja_store::{SessionFilter, SessionRow, Store};
pub use period::{local_day, Period};

/// Most changed files listed for one project on one day.
pub const TOP_FILES: usize = 5;

/// What a period holds.
#[derive(Debug, Clone)]
pub struct Recap {
    /// The period.
    pub period: Period,
    /// The projects with anything in it, most sessions first (then by
    /// label); the forgotten sessions' projects among them.
    pub projects: Vec<ProjectRecap>,
    /// Sessions and messages per local day, over every project shown.
    pub days: BTreeMap<NaiveDate, DayCount>,
}

/// Sessions and messages of one day.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DayCount {
    /// Sessions begun that day.
    pub sessions: usize,
    /// Their messages.
    pub messages: i64,
}

/// One project's part of a period.
#[derive(Debug, Clone)]
pub struct ProjectRecap {
    /// How lists show it ([`crate::output::project_label`]).
    pub label: String,
    /// The project as its first session names it (a forgotten session
    /// knows its folder only).
    pub project: Project,
    /// Its days with anything in them, oldest first.
    pub days: Vec<DayRecap>,
}

impl ProjectRecap {
    /// Its sessions in the period.
    pub fn sessions(&self) -> usize {
        self.days.iter().map(|d| d.sessions.len()).sum()
    }

    /// Their messages.
    pub fn messages(&self) -> i64 {
        self.days
            .iter()
            .flat_map(|d| &d.sessions)
            .map(|s| s.message_count)
            .sum()
    }
}

/// One project's day.
#[derive(Debug, Clone)]
pub struct DayRecap {
    /// The local day.
    pub day: NaiveDate,
    /// The sessions begun that day, in the order they began.
    pub sessions: Vec<SessionRow>,
    /// The files their edit records changed most (at most [`TOP_FILES`]).
    pub files: Vec<FileCount>,
    /// How many other files they changed.
    pub more_files: usize,
    /// The sessions forgotten that day, in the order they were.
    pub forgotten: Vec<Tombstone>,
    /// The commands of the day's sessions that failed, in the order the
    /// sessions began and then the order they ran.
    pub failed: Vec<FailedCommand>,
}

/// A command that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedCommand {
    /// The command line.
    pub command: String,
    /// deja's id of the session that ran it.
    pub session: String,
    /// That session's harness.
    pub harness: String,
    /// `user` or `agent`.
    pub origin: String,
    /// When it ran, ms.
    pub timestamp_ms: i64,
    /// Its exit code, when the transcript gave one.
    pub exit_code: Option<i64>,
}

/// A file changed on a day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCount {
    /// The path, relative to the project's folder when it lies inside it,
    /// else as recorded.
    pub path: String,
    /// Edit records (edits and additions) of it.
    pub edits: usize,
    /// Sessions that made them.
    pub sessions: usize,
}

impl Recap {
    /// Whether nothing happened in it.
    pub fn is_empty(&self) -> bool {
        self.projects.is_empty()
    }

    /// Sessions in it.
    pub fn sessions(&self) -> usize {
        self.days.values().map(|d| d.sessions).sum()
    }

    /// Their messages.
    pub fn messages(&self) -> i64 {
        self.days.values().map(|d| d.messages).sum()
    }

    /// Commands that failed in it.
    pub fn failed(&self) -> usize {
        self.projects
            .iter()
            .flat_map(|p| &p.days)
            .map(|d| d.failed.len())
            .sum()
    }

    /// Sessions forgotten in it.
    pub fn forgotten(&self) -> usize {
        self.projects
            .iter()
            .flat_map(|p| &p.days)
            .map(|d| d.forgotten.len())
            .sum()
    }

    /// The period's record in `store`, of `project` only when given (as
    /// `--project` names one: a folder, a folder name or a project id).
    pub fn gather(
        store: &Store,
        period: Period,
        project: Option<&str>,
    ) -> deja_store::Result<Recap> {
        let scope = SessionFilter {
            project: project.map(str::to_string),
            ..SessionFilter::default()
        };
        Recap::gather_in(store, period, &scope)
    }

    /// The period's record of the sessions `scope` keeps (its project,
    /// harness, origin, exclusions; its dates are the period's), and the
    /// sessions forgotten in it of `scope`'s project.
    pub fn gather_in(
        store: &Store,
        period: Period,
        scope: &SessionFilter,
    ) -> deja_store::Result<Recap> {
        let filter = SessionFilter {
            since: Some(period.since),
            until: Some(period.until),
            ..scope.clone()
        };
        let project = scope.project.as_deref();
        let mut rows = store.sessions(&filter, None)?;
        rows.sort_by(|a, b| (a.started_at, &a.id).cmp(&(b.started_at, &b.id)));
        let mut edits: BTreeMap<i64, Vec<String>> = BTreeMap::new();
        for f in store.session_files(&filter, crate::blame::EDITS)? {
            edits.entry(f.session).or_default().push(f.path);
        }
        let mut failed: BTreeMap<i64, Vec<deja_store::failed::FailedCommand>> = BTreeMap::new();
        for c in store.failed_commands(&filter)? {
            failed.entry(c.session).or_default().push(c);
        }
        let forgotten: Vec<Tombstone> = store
            .tombstones()?
            .into_iter()
            .filter(|t| period.holds(t.forgotten_at))
            .filter(|t| project.is_none_or(|p| folder_is(t.project_dir.as_deref(), p)))
            .collect();

        let mut groups: BTreeMap<String, Group> = BTreeMap::new();
        let mut days: BTreeMap<NaiveDate, DayCount> = BTreeMap::new();
        for row in rows {
            let Some(day) = local_day(row.started_at) else {
                continue;
            };
            let count = days.entry(day).or_default();
            count.sessions += 1;
            count.messages += row.message_count;
            let group = groups
                .entry(key(&row.project))
                .or_insert_with(|| Group::new(row.project.clone()));
            let paths = edits.remove(&row.row).unwrap_or_default();
            let entry = group.days.entry(day).or_default();
            entry.files.add(&row.project, paths);
            for c in failed.remove(&row.row).unwrap_or_default() {
                entry.failed.push(FailedCommand {
                    command: c.command,
                    session: row.id.clone(),
                    harness: row.harness.clone(),
                    origin: c.origin,
                    timestamp_ms: c.timestamp_ms,
                    exit_code: c.exit_code,
                });
            }
            entry.sessions.push(row);
        }
        let mut forgotten = forgotten;
        forgotten.sort_by(|a, b| (a.forgotten_at, &a.id).cmp(&(b.forgotten_at, &b.id)));
        for t in forgotten {
            let Some(day) = local_day(t.forgotten_at) else {
                continue;
            };
            let project = Project {
                dir: t.project_dir.clone(),
                ..Project::default()
            };
            groups
                .entry(key(&project))
                .or_insert_with(|| Group::new(project))
                .days
                .entry(day)
                .or_default()
                .forgotten
                .push(t);
        }
        let mut projects: Vec<ProjectRecap> = groups.into_values().map(Group::finish).collect();
        projects.sort_by(|a, b| {
            b.sessions()
                .cmp(&a.sessions())
                .then_with(|| a.label.cmp(&b.label))
                .then_with(|| a.project.dir.cmp(&b.project.dir))
        });
        Ok(Recap {
            period,
            projects,
            days,
        })
    }
}

/// What sessions and tombstones of one project are grouped by: its folder,
/// else how it is shown.
fn key(project: &Project) -> String {
    match project.dir.as_deref() {
        Some(dir) => format!("dir:{}", dir.trim_end_matches('/')),
        None => format!("label:{}", crate::output::project_label(project)),
    }
}

/// Whether a forgotten session's folder is the project `--project` names:
/// the folder itself or its last component (a tombstone keeps no project
/// name or id).
fn folder_is(dir: Option<&str>, project: &str) -> bool {
    let Some(dir) = dir else { return false };
    let (dir, project) = (dir.trim_end_matches('/'), project.trim_end_matches('/'));
    dir == project || dir.rsplit('/').next() == Some(project)
}

/// A project's days while they are gathered.
struct Group {
    project: Project,
    days: BTreeMap<NaiveDate, Gathering>,
}

/// One day while it is gathered.
#[derive(Default)]
struct Gathering {
    sessions: Vec<SessionRow>,
    files: Files,
    forgotten: Vec<Tombstone>,
    failed: Vec<FailedCommand>,
}

/// Each changed file's edit records and sessions, in first-seen order.
#[derive(Default)]
struct Files {
    counts: Vec<FileCount>,
}

impl Files {
    /// Counts one session's edit records.
    fn add(&mut self, project: &Project, paths: Vec<String>) {
        let mut seen: Vec<String> = Vec::new();
        for path in paths {
            let shown = relative(&path, project.dir.as_deref());
            let first = !seen.contains(&shown);
            match self.counts.iter_mut().find(|c| c.path == shown) {
                Some(c) => {
                    c.edits += 1;
                    c.sessions += usize::from(first);
                }
                None => self.counts.push(FileCount {
                    path: shown.clone(),
                    edits: 1,
                    sessions: 1,
                }),
            }
            if first {
                seen.push(shown);
            }
        }
    }
}

impl Group {
    fn new(project: Project) -> Group {
        Group {
            project,
            days: BTreeMap::new(),
        }
    }

    fn finish(self) -> ProjectRecap {
        let days = self
            .days
            .into_iter()
            .map(|(day, g)| {
                let mut files = g.files.counts;
                // Most edits first, then most sessions, then by path; the
                // sort is stable, so ties keep no hidden order.
                files.sort_by(|a, b| {
                    b.edits
                        .cmp(&a.edits)
                        .then_with(|| b.sessions.cmp(&a.sessions))
                        .then_with(|| a.path.cmp(&b.path))
                });
                let more_files = files.len().saturating_sub(TOP_FILES);
                files.truncate(TOP_FILES);
                DayRecap {
                    day,
                    sessions: g.sessions,
                    files,
                    more_files,
                    forgotten: g.forgotten,
                    failed: g.failed,
                }
            })
            .collect();
        ProjectRecap {
            label: crate::output::project_label(&self.project),
            project: self.project,
            days,
        }
    }
}

/// `path` relative to `dir` when it lies inside it.
fn relative(path: &str, dir: Option<&str>) -> String {
    if let Some(dir) = dir
        .map(|d| d.trim_end_matches('/'))
        .filter(|d| !d.is_empty())
    {
        if let Some(rest) = path.strip_prefix(dir).and_then(|r| r.strip_prefix('/')) {
            if !rest.is_empty() {
                return rest.to_string();
            }
        }
    }
    path.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_counted_by_edits_then_sessions_relative_to_the_project() {
        let project = Project {
            dir: Some("/w/app".into()),
            ..Project::default()
        };
        let mut files = Files::default();
        let p = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        files.add(&project, p(&["/w/app/a.rs", "a.rs", "/w/app/b.rs"]));
        files.add(&project, p(&["b.rs", "/elsewhere/c.rs"]));
        let counts: Vec<(&str, usize, usize)> = files
            .counts
            .iter()
            .map(|c| (c.path.as_str(), c.edits, c.sessions))
            .collect();
        assert_eq!(
            counts,
            [("a.rs", 2, 1), ("b.rs", 2, 2), ("/elsewhere/c.rs", 1, 1)]
        );
        assert_eq!(relative("/w/app", Some("/w/app/")), "/w/app");
        assert_eq!(relative("/w/apple/x", Some("/w/app")), "/w/apple/x");
    }

    #[test]
    fn a_tombstone_belongs_to_its_folder_or_its_folder_name() {
        assert!(folder_is(Some("/w/app/"), "/w/app"));
        assert!(folder_is(Some("/w/app"), "app"));
        assert!(!folder_is(Some("/w/apple"), "app"));
        assert!(!folder_is(None, "app"));
    }
}
