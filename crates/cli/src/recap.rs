//! `deja recap`: what happened in a period (by default the last seven
//! days), per project and per day: the sessions begun, the files changed
//! most, the commands that failed, the sessions forgotten. Read from the
//! store alone.

use std::fmt::Write as _;

use anyhow::Result;
use clap::Args;

use crate::app::App;
use crate::output::{self, local_short, one_line, plural, Style};
use crate::{json, ExitStatus};
use deja_app::recap::{DayRecap, Period, ProjectRecap, Recap};

/// Failed commands listed for one project on one day; `--json` lists all.
pub const SHOWN_FAILED: usize = 10;

/// `deja recap`.
#[derive(Debug, Args)]
pub struct RecapArgs {
    /// From DATE on (as `recall --since` reads it: YYYY-MM-DD, 7d, "last week", ...; default: 7 days before --until).
    #[arg(long, value_name = "DATE", allow_hyphen_values = true)]
    pub since: Option<String>,
    /// Up to DATE, not included (default: now).
    #[arg(long, value_name = "DATE", allow_hyphen_values = true)]
    pub until: Option<String>,
    /// Only this project: a directory, a folder name or a project id.
    #[arg(long, value_name = "PROJECT")]
    pub project: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(app: &App, args: &RecapArgs) -> Result<ExitStatus> {
    let period = Period::parse(
        args.since.as_deref(),
        args.until.as_deref(),
        chrono::Utc::now(),
    )
    .map_err(anyhow::Error::msg)?;
    let store = crate::select::open_read(app)?;
    let recap = Recap::gather(&store, period, args.project.as_deref())?;
    if recap.is_empty() && args.project.is_some() {
        // A project the index has never seen is a mistake, not a quiet period.
        crate::select::check_filters(app, &store, None, args.project.as_deref())?;
    }
    if args.json {
        output::print_json(&json::recap::RecapJson::from(&recap))?;
    } else if !recap.is_empty() {
        output::page(&text(&recap))?;
    }
    if recap.is_empty() {
        eprintln!(
            "nothing recorded between {} and {}",
            local_short(period.since),
            local_short(period.until)
        );
        return Ok(ExitStatus::NoResults);
    }
    Ok(ExitStatus::Success)
}

/// The recap as people read it: a line for the period, then each project
/// with its days.
pub fn text(recap: &Recap) -> String {
    let s = Style::stdout();
    let mut out = String::new();
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
    let _ = writeln!(
        out,
        "{}",
        s.bold(&format!(
            "From {} to {}: {}",
            local_short(recap.period.since),
            local_short(recap.period.until),
            counts.join(", ")
        ))
    );
    for p in &recap.projects {
        write_project(&mut out, p);
    }
    out
}

fn count(n: i64) -> usize {
    usize::try_from(n).unwrap_or(0)
}

fn write_project(out: &mut String, p: &ProjectRecap) {
    let s = Style::stdout();
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{}  {}",
        s.bold(&deja_render::term::line(&p.label)),
        s.dim(&format!(
            "{}, {}",
            plural(p.sessions(), "session", "sessions"),
            plural(count(p.messages()), "message", "messages")
        ))
    );
    for day in &p.days {
        write_day(out, day);
    }
}

fn write_day(out: &mut String, d: &DayRecap) {
    let s = Style::stdout();
    let line = deja_render::term::line;
    let _ = writeln!(out, "  {}", d.day.format("%Y-%m-%d %a"));
    let times: Vec<String> = d
        .sessions
        .iter()
        .map(|r| {
            let time = output::local_short(r.started_at);
            let time = time.rsplit(' ').next().unwrap_or(&time).to_string();
            if r.date_approximate {
                format!("about {time}")
            } else {
                time
            }
        })
        .collect();
    let time_width = times.iter().map(|t| t.chars().count()).max().unwrap_or(5);
    let id_width = d
        .sessions
        .iter()
        .map(|r| r.id.chars().count())
        .max()
        .unwrap_or(0);
    let harness_width = d
        .sessions
        .iter()
        .map(|r| r.harness.chars().count())
        .max()
        .unwrap_or(0);
    let room = match output::terminal_size() {
        Some((columns, _)) => columns
            .saturating_sub(4 + time_width + 2 + id_width + 2 + harness_width + 2 + 10)
            .max(20),
        None => 60,
    };
    for (r, time) in d.sessions.iter().zip(&times) {
        let about = r.title.as_deref().or(r.first_user.as_deref()).unwrap_or("");
        let _ = writeln!(
            out,
            "    {time:>time_width$}  {}  {:<harness_width$}  {:>4} {}  {}",
            s.cyan(&format!("{:<id_width$}", line(&r.id))),
            line(&r.harness),
            r.message_count,
            if r.message_count == 1 { "msg " } else { "msgs" },
            one_line(about, room)
        );
    }
    for f in &d.files {
        let how = if f.sessions > 1 {
            format!(
                "{} in {}",
                plural(f.edits, "edit", "edits"),
                plural(f.sessions, "session", "sessions")
            )
        } else {
            plural(f.edits, "edit", "edits")
        };
        let _ = writeln!(out, "    changed {}  {}", line(&f.path), s.dim(&how));
    }
    if d.more_files > 0 {
        let _ = writeln!(
            out,
            "    {}",
            s.dim(&format!(
                "and {} more",
                plural(d.more_files, "file", "files")
            ))
        );
    }
    for c in d.failed.iter().take(SHOWN_FAILED) {
        let how = match c.exit_code {
            Some(code) => format!("exit {code}, {}", short_id(&c.session)),
            None => short_id(&c.session).to_string(),
        };
        let _ = writeln!(
            out,
            "    failed  {}  {}",
            s.red(&one_line(&c.command, room + 20)),
            s.dim(&how)
        );
    }
    if d.failed.len() > SHOWN_FAILED {
        let _ = writeln!(
            out,
            "    {}",
            s.dim(&format!(
                "and {} more (deja recap --json lists them all)",
                plural(
                    d.failed.len() - SHOWN_FAILED,
                    "failed command",
                    "failed commands"
                )
            ))
        );
    }
    for t in &d.forgotten {
        let started = t
            .started_at
            .map(|ms| format!(", started {}", local_short(ms)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    forgotten {}  {}{}",
            s.cyan(&line(&t.id)),
            line(&t.harness),
            s.dim(&started)
        );
    }
}

/// A session id as the failed commands' lines show it: its first 8 characters.
fn short_id(id: &str) -> &str {
    id.char_indices().nth(8).map_or(id, |(i, _)| &id[..i])
}
