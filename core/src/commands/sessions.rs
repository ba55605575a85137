//! `deja sessions`: indexed sessions, newest first, with filters.

use anyhow::Result;

use crate::app::App;
use crate::cli::SessionsArgs;
use crate::output::{self, local_short, one_line, Style};
use crate::{json, ExitStatus};

/// Runs the command.
pub fn run(app: &App, args: &SessionsArgs) -> Result<ExitStatus> {
    let store = super::open_read(app)?;
    let filter = super::session_filter(&args.filter)?;
    super::check_filters(
        app,
        &store,
        args.filter.harness.as_deref(),
        args.filter.project.as_deref(),
    )?;
    let rows = store.sessions(&filter, args.limit)?;
    if args.json {
        output::print_json(&json::sessions::Sessions {
            sessions: rows.iter().map(json::sessions::Session::from).collect(),
        })?;
        return Ok(ExitStatus::Success);
    }
    let s = Style::stdout();
    for r in &rows {
        let project = r
            .project
            .name
            .as_deref()
            .or(r.project.id.as_deref())
            .unwrap_or("-");
        let about = r.title.as_deref().or(r.first_user.as_deref()).unwrap_or("");
        let gone = if r.has_source {
            ""
        } else {
            " (transcript gone)"
        };
        println!(
            "{}  {}  {:<7} {:<16} {:>4} msgs  {}{}",
            s.cyan(&r.id),
            local_short(r.started_at),
            r.harness,
            one_line(project, 16),
            r.message_count,
            one_line(about, 60),
            s.dim(gone)
        );
    }
    if rows.is_empty() {
        eprintln!("no sessions match");
    }
    Ok(ExitStatus::Success)
}
