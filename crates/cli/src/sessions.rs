//! `deja sessions`: indexed sessions, newest first, with filters.

use anyhow::Result;
use clap::Args;

use crate::app::App;
use crate::output::{self, one_line, Style};
use crate::select::FilterArgs;
use crate::{json, ExitStatus};

/// `deja sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Filters.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// At most this many sessions, 1 to 1000000 (default: all).
    #[arg(short = 'n', long, value_name = "N", value_parser = sessions_limit)]
    pub limit: Option<usize>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Most sessions `deja sessions -n` lists.
pub const SESSIONS_MAX_LIMIT: usize = 1_000_000;

/// `deja sessions -n`: 1 to [`SESSIONS_MAX_LIMIT`].
fn sessions_limit(text: &str) -> Result<usize, String> {
    crate::select::bounded(text, 1, SESSIONS_MAX_LIMIT)
}

/// Runs the command.
pub fn run(app: &App, args: &SessionsArgs) -> Result<ExitStatus> {
    let store = crate::select::open_read(app)?;
    let filter = crate::select::session_filter(&args.filter)?;
    crate::select::check_filters(
        app,
        &store,
        args.filter.harness.as_deref(),
        args.filter.project.as_deref(),
    )?;
    crate::select::check_origin(&store, filter.origin.as_ref())?;
    let rows = store.sessions(&filter, args.limit)?;
    if args.json {
        output::print_json(&json::sessions::Sessions {
            sessions: rows.iter().map(json::sessions::Session::from).collect(),
        })?;
        return Ok(ExitStatus::Success);
    }
    print_rows(&rows);
    if rows.is_empty() {
        eprintln!("no sessions match");
    }
    Ok(ExitStatus::Success)
}

/// Sessions as `deja sessions` lists them, one line each: id, start,
/// harness, project, messages, title or first request. Columns line up
/// across harnesses; on a terminal the project column takes what the line
/// has room for (up to 40), piped output cuts nothing but the first request.
pub fn print_rows(rows: &[deja_store::SessionRow]) {
    let s = Style::stdout();
    let labels: Vec<String> = rows
        .iter()
        .map(|r| output::project_label(&r.project))
        .collect();
    let harness_width = rows
        .iter()
        .map(|r| r.harness.chars().count())
        .max()
        .unwrap_or(0);
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(1);
    let id_width = rows.iter().map(|r| r.id.chars().count()).max().unwrap_or(0);
    // A date that is only the file's time reads `about 2026-12-05 04:17`.
    let dates: Vec<String> = rows
        .iter()
        .map(|r| output::dated(r.started_at, r.date_approximate))
        .collect();
    let date_width = dates.iter().map(|d| d.chars().count()).max().unwrap_or(16);
    let terminal = output::terminal_size();
    let project_width = match terminal {
        Some((columns, _)) => {
            // id, date, harness, counts (9), separators, and 30 for the request.
            let fixed = id_width + 2 + date_width + 2 + harness_width + 1 + 1 + 9 + 2 + 30;
            longest.min(columns.saturating_sub(fixed).clamp(16, 40))
        }
        None => longest,
    };
    for ((r, label), date) in rows.iter().zip(&labels).zip(&dates) {
        let about = r.title.as_deref().or(r.first_user.as_deref()).unwrap_or("");
        let mut gone = match (&r.origin, r.has_source) {
            (Some(origin), _) => format!(" (from {})", deja_render::term::line(origin)),
            (None, true) => String::new(),
            (None, false) => " (transcript gone)".to_string(),
        };
        if r.in_code_folder {
            gone.push_str(" (found in a code folder)");
        }
        if let Some(parent) = &r.parent_id {
            gone.push_str(&format!(
                " (sub-agent of {})",
                deja_render::term::line(parent)
            ));
        }
        let room = match terminal {
            Some((columns, _)) => columns
                .saturating_sub(
                    id_width + 2 + date_width + 2 + harness_width + 1 + project_width + 1 + 9 + 2,
                )
                .max(20),
            None => 60,
        };
        println!(
            "{}  {:>date_width$}  {:<harness_width$} {:<project_width$} {:>4} {}  {}{}",
            s.cyan(&format!("{:<id_width$}", deja_render::term::line(&r.id))),
            date,
            deja_render::term::line(&r.harness),
            one_line(label, project_width),
            r.message_count,
            if r.message_count == 1 { "msg " } else { "msgs" },
            one_line(about, room),
            s.dim(&gone)
        );
    }
}
