//! `deja recall QUERY`: finds the past messages that match a query by meaning
//! and by words. Falls back to lexical search, with one warning, when the
//! model or runtime is missing. Exit status 0 with hits, 1 without.

use anyhow::Result;
use clap::{Args, ValueEnum};
use deja_config::Mode;
use deja_recall::engine::{Answer, Engine, Query};
use deja_recall::{lexical, snippet, Candidates, Hit, Tuning};

use crate::app::App;
use crate::output::{self, local_short, Style};
use crate::select::FilterArgs;
use crate::{json, ExitStatus};
use deja_index::redact::Redactor;

/// `deja recall`.
#[derive(Debug, Args)]
pub struct RecallArgs {
    /// What to look for, in your own words.
    #[arg(required = true, num_args = 1..)]
    pub query: Vec<String>,
    /// Number of hits, 1 to 1000 (default: `recall.limit`).
    #[arg(short = 'n', long, value_name = "N", value_parser = recall_limit)]
    pub limit: Option<usize>,
    /// Filters.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Only messages by this role.
    #[arg(long)]
    pub role: Option<RoleArg>,
    /// Ranking (default: `recall.mode`).
    #[arg(long)]
    pub mode: Option<ModeArg>,
    /// At most N hits from one session (default `recall.per_session`, 2; 0: no cap); the others are counted.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub per_session: Option<u16>,
    /// Do not read transcripts that changed since the last index first (`recall.refresh`).
    #[arg(long)]
    pub no_refresh: bool,
    /// Show the Nth session of the list in context, at its best message (as `deja show ID --around I`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub open: Option<u16>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `deja recall -n`: 1 to [`deja_config::RECALL_MAX_LIMIT`], like `recall.limit`.
fn recall_limit(text: &str) -> Result<usize, String> {
    crate::select::bounded(text, 1, deja_config::RECALL_MAX_LIMIT)
}

/// Ranking modes.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModeArg {
    /// Semantic and lexical, fused.
    Hybrid,
    /// By meaning only.
    Semantic,
    /// By words only.
    Lexical,
}

impl From<ModeArg> for deja_config::Mode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Hybrid => deja_config::Mode::Hybrid,
            ModeArg::Semantic => deja_config::Mode::Semantic,
            ModeArg::Lexical => deja_config::Mode::Lexical,
        }
    }
}

/// Message roles.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RoleArg {
    /// What you wrote.
    User,
    /// What the model wrote.
    Assistant,
}

impl From<RoleArg> for deja_model::Role {
    fn from(r: RoleArg) -> Self {
        match r {
            RoleArg::User => deja_model::Role::User,
            RoleArg::Assistant => deja_model::Role::Assistant,
        }
    }
}

/// Runs the command.
pub fn run(app: &App, args: &RecallArgs) -> Result<ExitStatus> {
    output::trace("config loaded");
    // The arguments are checked before the freshness pass writes anything.
    let query = args.query.join(" ");
    if query.trim().is_empty() {
        anyhow::bail!("the query is empty");
    }
    let filter = crate::select::session_filter(&args.filter)?;
    let recall_config = &app.config.config.recall;
    if recall_config.refresh && !args.no_refresh {
        let budget = std::time::Duration::from_millis(recall_config.refresh_ms);
        match super::refresh::run(app, budget) {
            Ok(Ok(done)) if done.left > 0 => output::warn(&format!(
                "{} not checked for changes within `recall.refresh_ms` ({} ms); `deja index` reads them",
                crate::output::plural(done.left, "transcript", "transcripts"),
                recall_config.refresh_ms
            )),
            Ok(_) => {}
            Err(e) => output::warn(&format!(
                "could not read changed transcripts first: {e:#}; answering from the index as it is"
            )),
        }
        output::trace("refreshed");
    }
    let store = crate::select::open_read(app)?;
    output::trace("store opened");
    if !args.json && store.count_sessions(&deja_store::SessionFilter::default())? == 0 {
        // Nothing to search: say so, rather than warn about a vector index
        // that an empty store never has.
        output::error("the index holds no session yet");
        output::hint("`deja index` reads the transcripts of every harness `deja plugins` lists, from where each keeps them; `deja doctor` lists where it looked");
        return Ok(ExitStatus::NoResults);
    }
    let mode = args
        .mode
        .map(Mode::from)
        .unwrap_or(app.config.config.recall.mode);
    let limit = args.limit.unwrap_or(app.config.config.recall.limit);
    crate::select::check_filters(
        app,
        &store,
        args.filter.harness.as_deref(),
        args.filter.project.as_deref(),
    )?;
    crate::select::check_origin(&store, filter.origin.as_ref())?;
    let candidates = Candidates {
        filter,
        role: args.role.map(deja_model::Role::from),
    };
    let mut engine =
        Engine::open(store, &app.paths.vectors(), Some(app.embed_settings())).one_shot();
    let answer = engine.recall(&Query {
        text: &query,
        mode,
        scope: &candidates,
        limit,
        tuning: Tuning {
            min_similarity: app.config.config.recall.min_similarity,
            min_score: app.config.config.recall.min_score,
            ..Tuning::default()
        },
        per_session: match args.per_session {
            Some(0) => None,
            Some(n) => Some(usize::from(n)),
            None => app.config.config.recall.per_session_cap(),
        },
    })?;
    let warning = unavailable_warning(&answer);
    // Every warning, on stderr and in `--json`.
    let warnings = warnings(&answer, engine.store());
    for w in &warnings {
        output::warn(w);
    }
    let missing_half = answer.missing_half();
    let withheld = answer.withheld;
    let hits = answer.hits;
    let rows: Vec<i64> = hits.iter().map(|h| h.session_row).collect();
    let in_code_folders = engine.store().in_code_folders(&rows)?;
    let approximate = engine.store().dated_by_file_time(&rows)?;
    let parents = engine.store().parents_of(&rows)?;
    // The process ends right after this command, without running library
    // destructors (see `deja_core::exit`); tearing the loaded model down here
    // would cost tens of milliseconds of a cold recall.
    std::mem::forget(engine);

    if let Some(n) = args.open {
        let groups = by_session(&hits);
        let Some(group) = groups.get(usize::from(n) - 1) else {
            anyhow::bail!(
                "--open {n}: the answer lists {}",
                crate::output::plural(groups.len(), "session", "sessions")
            );
        };
        let best = group[0];
        return super::show::run(
            app,
            &format!("{}#{}", best.session_id, best.message_index),
            super::show::Window::default(),
            args.json,
        );
    }
    if args.json {
        output::print_json(&json::recall::Recall {
            hits: hits
                .iter()
                .map(|h| {
                    json::recall::Hit::of(
                        h,
                        approximate.contains(&h.session_row),
                        parents.get(&h.session_row).map(String::as_str),
                    )
                })
                .collect(),
            missing_half,
            mode: answer.mode.as_str(),
            // The echo is redacted too: a pasted secret never comes back out.
            query: Redactor::from_config(&app.config.config.redact)?.text(&query),
            warning: warning.as_deref(),
            warnings: &warnings,
            withheld,
        })?;
    } else {
        let labels = Labels {
            in_code_folders: &in_code_folders,
            approximate: &approximate,
            parents: &parents,
        };
        print_hits(&hits, &query, &labels);
    }
    Ok(if hits.is_empty() {
        if !args.json {
            eprintln!("no matches");
            if withheld > 0 {
                output::hint(&format!(
                    "{} ranked, none near enough to answer the query (`recall.min_score`); `--mode lexical` lists every match of its words",
                    crate::output::plural(withheld, "message", "messages")
                ));
            }
        }
        ExitStatus::NoResults
    } else {
        ExitStatus::Success
    })
}

/// The warning that semantic recall could not run, if it could not.
fn unavailable_warning(answer: &Answer) -> Option<String> {
    answer
        .semantic_unavailable
        .as_ref()
        .map(|w| format!("semantic recall unavailable: {w}; answering lexically"))
}

/// Every warning of an answer, in the order they are shown: semantic recall
/// unavailable, the engine's notices, then how much of the history meaning
/// covers (as the last index run recorded it: counting walks every message
/// still waiting).
pub fn warnings(answer: &Answer, store: &deja_store::Store) -> Vec<String> {
    let coverage = (answer.mode != Mode::Lexical && answer.semantic_unavailable.is_none())
        .then(|| store.current_coverage().ok())
        .flatten()
        .and_then(|c| crate::indexing::coverage_note(&c));
    unavailable_warning(answer)
        .into_iter()
        .chain(answer.notices.iter().cloned())
        .chain(coverage)
        .collect()
}

/// The hits grouped by session, in the order their sessions first rank:
/// one line per session, its best messages below it.
pub fn by_session(hits: &[Hit]) -> Vec<Vec<&Hit>> {
    let mut groups: Vec<Vec<&Hit>> = Vec::new();
    for h in hits {
        match groups
            .iter_mut()
            .find(|g| g[0].session_row == h.session_row)
        {
            Some(g) => g.push(h),
            None => groups.push(vec![h]),
        }
    }
    groups
}

/// What the store says of the hits' sessions, by session row, for their labels.
struct Labels<'a> {
    /// Found in a code folder.
    in_code_folders: &'a std::collections::HashSet<i64>,
    /// Dated only by the transcript's time: the date follows `about`.
    approximate: &'a std::collections::HashSet<i64>,
    /// Sub-agent work, with the deja id of the session that started it.
    parents: &'a std::collections::HashMap<i64, String>,
}

/// Prints the hits, each session labelled as `labels` says.
fn print_hits(hits: &[Hit], query: &str, labels: &Labels) {
    let s = Style::stdout();
    let terms = lexical::terms(query);
    for (n, group) in by_session(hits).iter().enumerate() {
        let first = group[0];
        let project = output::project_label(&first.project);
        let mut origin = match &first.origin {
            Some(o) => format!(" · from {}", deja_render::term::line(o)),
            None => String::new(),
        };
        if labels.in_code_folders.contains(&first.session_row) {
            origin.push_str(" · found in a code folder");
        }
        if let Some(parent) = labels.parents.get(&first.session_row) {
            origin.push_str(&format!(
                " · sub-agent of {}",
                deja_render::term::line(parent)
            ));
        }
        // The session's best message decides: a weak one may not answer.
        if first.weak {
            origin.push_str(" · weak match");
        }
        println!(
            "{:>2}. {}  {} · {} · {}{}",
            n + 1,
            s.cyan(&deja_render::term::line(&first.session_id)),
            deja_render::term::line(&first.harness),
            deja_render::term::line(&project),
            output::dated(
                first.started_at,
                labels.approximate.contains(&first.session_row)
            ),
            origin,
        );
        for h in group {
            // Stored text is cleaned before deja's own highlight styles are added.
            let snip = snippet::highlighted(&deja_render::clean(&h.text), &terms, 160, &|w| {
                s.highlight(w)
            });
            println!(
                "    {} {}",
                s.dim(&format!(
                    "#{} {} {}:",
                    h.message_index,
                    h.role,
                    local_short(h.timestamp)
                )),
                snip
            );
            if !h.duplicates.is_empty() {
                println!(
                    "      {}",
                    s.dim(&format!(
                        "(the same text is in {} too)",
                        crate::output::plural(
                            h.duplicates.len(),
                            "other session",
                            "other sessions"
                        )
                    ))
                );
            }
        }
        if first.more_in_session > 0 {
            println!(
                "    {}",
                s.dim(&format!(
                    "({} in this session: deja show {} --around {})",
                    crate::output::plural(
                        first.more_in_session,
                        "more matching message",
                        "more matching messages"
                    ),
                    first.session_id,
                    first.message_index
                ))
            );
        }
    }
}
