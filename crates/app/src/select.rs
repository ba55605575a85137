//! Which sessions a command means: the filters the command line and the web
//! page share (`--harness`, `--project`, `--since`, `--until`, `--origin`,
//! `--mine`) and their checks against what is indexed, opening the index for
//! reading, and resolving a session id the user typed. The commands, the MCP
//! server and the web page all select through here.

use anyhow::{bail, Result};

use clap::Args;
use deja_store::query::SessionRow;
use deja_store::{SessionFilter, Store, StoreError};

use crate::app::App;
use crate::output::plural;

/// Filters shared by listing and searching.
#[derive(Debug, Args, Clone, Default)]
pub struct FilterArgs {
    /// Only this harness (e.g. aider, gemini).
    #[arg(long, value_name = "NAME")]
    pub harness: Option<String>,
    /// Only this project: a directory, a folder name or a project id.
    #[arg(long, value_name = "PROJECT")]
    pub project: Option<String>,
    /// Only sessions started at or after DATE (YYYY-MM-DD, RFC 3339, today, 7d, "3 days ago", "June 2024", ...).
    #[arg(long, value_name = "DATE", allow_hyphen_values = true)]
    pub since: Option<String>,
    /// Only sessions started before DATE.
    #[arg(long, value_name = "DATE", allow_hyphen_values = true)]
    pub until: Option<String>,
    /// Only sessions pulled from this origin of the team store (user@machine, or user for all their machines).
    #[arg(long, value_name = "WHO", conflicts_with = "mine")]
    pub origin: Option<String>,
    /// Only this machine's own sessions (none pulled from the team store).
    #[arg(long)]
    pub mine: bool,
}

/// A count between `least` and `most`, or the error clap prints.
pub fn bounded(text: &str, least: usize, most: usize) -> Result<usize, String> {
    let wrong = || format!("must be a whole number from {least} to {most}");
    let n: usize = text.trim().parse().map_err(|_| wrong())?;
    if (least..=most).contains(&n) {
        Ok(n)
    } else {
        Err(wrong())
    }
}

/// The store filter the command line's filters name (dates relative to now).
pub fn session_filter(args: &FilterArgs) -> Result<SessionFilter> {
    let now = chrono::Utc::now();
    let date = |d: &Option<String>, flag: &str| -> Result<Option<i64>> {
        d.as_deref()
            .map(|t| crate::dates::parse(t, now).map_err(|e| anyhow::anyhow!("{flag}: {e}")))
            .transpose()
    };
    let since = date(&args.since, "--since")?;
    let until = date(&args.until, "--until")?;
    crate::dates::check_range(since, until, "--since", "--until").map_err(anyhow::Error::msg)?;
    Ok(SessionFilter {
        harness: args.harness.clone(),
        project: args.project.clone(),
        since,
        until,
        origin: match &args.origin {
            Some(o) => Some(origin_filter(o.trim(), false)),
            None if args.mine => Some(origin_filter("", true)),
            None => None,
        },
        exclude: Vec::new(),
        skip_code_folders: false,
    })
}

/// The origin filter `--origin NAME` or `--mine` names; `mine` as a name
/// means this machine too.
pub fn origin_filter(name: &str, mine: bool) -> deja_store::Origin {
    if mine || name == "mine" {
        deja_store::Origin::Mine
    } else {
        deja_store::Origin::Named(name.to_string())
    }
}

/// Opens the index for reading, with a hint when there is none yet.
pub fn open_read(app: &App) -> Result<Store> {
    match Store::open_read(&app.paths.database()) {
        Ok(s) => Ok(s),
        Err(StoreError::Missing(p)) => {
            bail!(
                "no index at `{}` yet\nhint: run `deja index` first",
                p.display()
            )
        }
        Err(e) => Err(e.into()),
    }
}

/// Matches an ambiguous id lists before saying how many more there are.
const LISTED: usize = 10;

/// When every session a prefix matches is one session and its subagents
/// (whose ids are the parent's id followed by `-…`, as Claude Code's are),
/// the parent's position: a parent's natural prefix names the parent.
pub fn family_head(rows: &[SessionRow], total: usize) -> Option<usize> {
    if total != rows.len() || rows.len() < 2 {
        return None;
    }
    let (head, shortest) = rows.iter().enumerate().min_by_key(|(_, r)| r.id.len())?;
    let parent = format!("{}-", shortest.id);
    rows.iter()
        .enumerate()
        .all(|(i, r)| i == head || r.id.starts_with(&parent))
        .then_some(head)
}

/// The one session `id` names: a deja id, a harness id, or a unique prefix
/// of either (a prefix of a session and its subagents names the session).
/// An ambiguous id is an error listing the sessions it matches.
pub fn pick_session(store: &Store, id: &str) -> Result<SessionRow> {
    let id = id.trim();
    if id.is_empty() {
        bail!("the session id is empty\nhint: `deja sessions` lists them");
    }
    let mut found = store.find_sessions(id, LISTED)?;
    match found.total {
        0 => bail!("no session `{id}` in the index\nhint: `deja sessions` lists them"),
        1 if !found.rows.is_empty() => Ok(found.rows.remove(0)),
        n if family_head(&found.rows, n).is_some() => {
            let head = family_head(&found.rows, n).unwrap_or(0);
            Ok(found.rows.swap_remove(head))
        }
        n => {
            let mut list = found
                .rows
                .iter()
                .map(|r| {
                    format!(
                        "  {}  {} id {}  {}",
                        r.id,
                        r.harness,
                        r.native_id,
                        crate::output::local_short(r.started_at)
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            if n > found.rows.len() {
                list.push_str(&format!("\n  ... and {} more", n - found.rows.len()));
            }
            bail!("`{id}` matches {n} sessions; give more of the id:\n{list}")
        }
    }
}

/// Checks that `--harness` and `--project` name something that exists: a
/// harness that a loaded reader reads or that indexed sessions come from, and
/// a project that some indexed session belongs to. Otherwise the error names
/// what exists.
pub fn check_filters(
    app: &App,
    store: &Store,
    harness: Option<&str>,
    project: Option<&str>,
) -> Result<()> {
    if let Some(h) = harness {
        let indexed = store.harness_counts()?;
        if !indexed.iter().any(|(name, _)| name == h) {
            let readers = app.host().harnesses();
            if !readers.contains(&h) {
                let readers = if readers.is_empty() {
                    "no reader plugin is loaded (see `deja plugins`)".to_string()
                } else {
                    format!("the readers are {}", backticked(readers.iter().copied()))
                };
                let indexed = if indexed.is_empty() {
                    "the index holds no sessions".to_string()
                } else {
                    format!(
                        "the index holds sessions of {}",
                        indexed
                            .iter()
                            .map(|(name, n)| format!("`{name}` ({n})"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                bail!("unknown harness `{h}`: {readers}; {indexed}");
            }
        }
    }
    if let Some(p) = project {
        let filter = SessionFilter {
            project: Some(p.to_string()),
            ..SessionFilter::default()
        };
        if store.count_sessions(&filter)? == 0 {
            let (projects, total) = store.project_counts(LISTED)?;
            if total == 0 {
                bail!("no session of project `{p}`: the index holds no sessions\nhint: run `deja index`");
            }
            let mut list = projects
                .iter()
                .map(|c| {
                    let pr = &c.project;
                    let name = pr
                        .name
                        .as_deref()
                        .or(pr.id.as_deref())
                        .or(pr.dir.as_deref())
                        .unwrap_or("(no project)");
                    let dir = match (&pr.dir, pr.name.is_some() || pr.id.is_some()) {
                        (Some(d), true) => format!(" {d}"),
                        _ => String::new(),
                    };
                    let n = c.sessions;
                    format!(
                        "  {name}{dir} ({n} session{})",
                        if n == 1 { "" } else { "s" }
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            if total > projects.len() as i64 {
                list.push_str(&format!(
                    "\n  ... and {} more",
                    total - projects.len() as i64
                ));
            }
            bail!(
                "no session of project `{p}`; the indexed projects are:\n{list}\n\
                 hint: --project takes a directory, a folder name (exact, case-sensitive) or a harness project id"
            );
        }
    }
    Ok(())
}

/// A `--origin` that names no pulled session is an error listing the
/// origins there are.
pub fn check_origin(store: &Store, origin: Option<&deja_store::Origin>) -> Result<()> {
    let Some(deja_store::Origin::Named(name)) = origin else {
        return Ok(());
    };
    let filter = SessionFilter {
        origin: origin.cloned(),
        ..SessionFilter::default()
    };
    if store.count_sessions(&filter)? > 0 {
        return Ok(());
    }
    let origins = store.origin_counts()?;
    if origins.is_empty() {
        bail!(
            "no session from `{name}`: the index holds no sessions pulled from the team store\n\
             hint: `deja team pull` brings them; `--mine` keeps this machine's own"
        );
    }
    let list = origins
        .iter()
        .map(|(o, n)| format!("  {o} ({})", plural(*n as usize, "session", "sessions")))
        .collect::<Vec<_>>()
        .join("\n");
    bail!(
        "no session from `{name}`; the origins of pulled sessions are:\n{list}\n\
         hint: --origin takes user@machine, or user for all of that user's machines"
    )
}

fn backticked<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::family_head;
    use crate::json::testing::session_row;

    fn rows(ids: &[&str]) -> Vec<deja_store::SessionRow> {
        ids.iter()
            .map(|id| deja_store::SessionRow {
                id: (*id).into(),
                ..session_row()
            })
            .collect()
    }

    #[test]
    fn a_prefix_of_a_session_and_its_subagents_names_the_session() {
        let parent = "44ef5cbf-9cc3-4f7b-ac40-337a4d39713b";
        let agent = format!("{parent}-agent-a71969c1296961234");
        let found = rows(&[&agent, parent]);
        assert_eq!(family_head(&found, 2), Some(1));
        // Two unrelated sessions stay ambiguous, and so does a partial list.
        assert_eq!(family_head(&rows(&["44ef5cbf-a", "44ef5cbf-b"]), 2), None);
        assert_eq!(family_head(&found, 11), None);
        assert_eq!(family_head(&rows(&[parent]), 1), None);
    }
}
