//! `deja team push|pull|status`: team memory through a shared PostgreSQL
//! database. Each command connects (and checks the team store's schema)
//! before it touches anything here, so a wrong password, a server that is
//! down or a schema from a newer deja changes nothing locally.

use std::time::Instant;

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::app::App;
use crate::lock::{self, Wait};
use crate::output::{self, rfc3339};
use crate::{json, ExitStatus};
use deja_index::redact::Redactor;
use deja_store::Store;
use deja_team::{PushOptions, Settings};

/// `deja team`.
#[derive(Debug, Args)]
pub struct TeamArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: TeamCommand,
}

/// The team commands.
#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Publish the sessions of the projects in `team.share` (only what changed; retracts what was forgotten or unshared).
    Push {
        /// Push even though redaction is off.
        #[arg(long)]
        force: bool,
        /// Say what would be pushed; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print a JSON summary.
        #[arg(long)]
        json: bool,
    },
    /// Bring in the sessions others published, and embed them (removing those retracted).
    Pull {
        /// Leave embedding to the next `deja index`.
        #[arg(long)]
        no_embed: bool,
        /// Print a JSON summary.
        #[arg(long)]
        json: bool,
    },
    /// Show what is shared, pushed, pulled and pending, and the team store's schema version.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs the command.
pub fn run(app: &App, args: &TeamArgs) -> Result<ExitStatus> {
    let settings = Settings::from_config(
        &app.config,
        &|k: &str| std::env::var(k).ok(),
        &app.paths.home,
    )?;
    match &args.command {
        TeamCommand::Push {
            force,
            dry_run,
            json,
        } => push(app, &settings, *force, *dry_run, *json),
        TeamCommand::Pull { no_embed, json } => pull(app, &settings, *no_embed, *json),
        TeamCommand::Status { json } => status(app, &settings, *json),
    }
}

/// Reports progress on stderr every tenth of the work, on a terminal.
fn progress(verb: &'static str) -> impl FnMut(usize, usize) {
    use std::io::IsTerminal;
    let terminal = std::io::stderr().is_terminal();
    let mut last = 0;
    move |done, total| {
        if total == 0 || !terminal {
            return;
        }
        let tenth = done * 10 / total;
        if done == 0 || (tenth > last && done < total) {
            eprintln!("{verb} {done}/{total} sessions");
        }
        last = tenth;
    }
}

fn push(
    app: &App,
    settings: &Settings,
    force: bool,
    dry_run: bool,
    as_json: bool,
) -> Result<ExitStatus> {
    let started = Instant::now();
    if settings.share.is_empty() {
        output::warn("`team.share` lists no project: this machine publishes nothing (a push retracts what it published before)");
    }
    let mut team = deja_team::connect(settings)?;
    let store = super::open_read(app)?;
    let options = PushOptions {
        redaction_on: app.config.config.redact.enabled,
        force,
        dry_run,
    };
    let mut report_progress = progress("pushed");
    let report = deja_team::push(&mut team, &store, options, &mut report_progress)?;
    let server = team.server();
    if as_json {
        output::print_json(&json::team::Push {
            dry_run,
            messages: report.messages,
            origin: team.origin(),
            pushed: report.pushed,
            retracted: report.retracted,
            seconds: started.elapsed().as_secs_f64(),
            server: &server,
            shared: report.shared,
            unchanged: report.unchanged,
        })?;
        return Ok(ExitStatus::Success);
    }
    let verb = if dry_run { "would push" } else { "pushed" };
    eprintln!(
        "{verb} {} ({}) to {server} as {}; {} unchanged; {} retracted{}",
        super::plural(report.pushed, "session", "sessions"),
        super::plural(report.messages, "message", "messages"),
        team.origin(),
        report.unchanged,
        report.retracted,
        if dry_run {
            " (dry run: nothing changed)"
        } else {
            ""
        }
    );
    Ok(ExitStatus::Success)
}

fn pull(app: &App, settings: &Settings, no_embed: bool, as_json: bool) -> Result<ExitStatus> {
    let started = Instant::now();
    let mut team = deja_team::connect(settings)?;
    let redactor = Redactor::from_config(&app.config.config.redact)?;
    deja_store::create_private_dir(&app.paths.data_dir)?;
    let _lock = lock::acquire(
        &app.paths.lock_file(),
        Wait::Up(std::time::Duration::from_secs(
            app.config.config.index.lock_wait_secs,
        )),
        &mut |m| output::warn(m),
    )?;
    let mut store = Store::open(&app.paths.database())?;
    let mut report_progress = progress("pulled");
    let report = deja_team::pull(
        &mut team,
        &mut store,
        &|s| redactor.session(s),
        &mut report_progress,
    )?;
    let embedded = if no_embed {
        Ok(None)
    } else {
        let embedded = super::index::embed(app, &mut store, &mut super::index::Bar::new())?;
        store.prune_embeddings()?;
        embedded.into_result()
    };
    super::index::erase_vectors(app, &store)?;
    let server = team.server();
    let embedding_error = embedded.as_ref().err().map(String::as_str);
    let embedded_messages = embedded
        .as_ref()
        .ok()
        .and_then(|p| p.as_ref())
        .map(|p| p.messages)
        .unwrap_or(0);
    if let Some(e) = embedding_error {
        output::warn(&format!(
            "pulled sessions are searchable by words only until they are embedded: {e}"
        ));
    }
    if as_json {
        output::print_json(&json::team::Pull {
            added: report.added,
            embedding_error,
            embedded_messages,
            forgotten_here: report.forgotten_here,
            kept_local: report.kept_local,
            messages: report.messages,
            origin: team.origin(),
            removed: report.removed,
            seconds: started.elapsed().as_secs_f64(),
            server: &server,
            unchanged: report.unchanged,
            updated: report.updated,
        })?;
        return Ok(ExitStatus::Success);
    }
    let mut line = format!(
        "pulled {} new and {} changed {} ({}) from {server}; {} removed; {} unchanged",
        report.added,
        report.updated,
        if report.added + report.updated == 1 {
            "session"
        } else {
            "sessions"
        },
        super::plural(report.messages, "message", "messages"),
        report.removed,
        report.unchanged
    );
    if report.forgotten_here > 0 {
        line.push_str(&format!(
            "; {} forgotten here, left out",
            report.forgotten_here
        ));
    }
    if report.kept_local > 0 {
        line.push_str(&format!(
            "; {} kept as this machine's own copy",
            report.kept_local
        ));
    }
    if no_embed && report.messages > 0 {
        line.push_str("; run `deja index` to embed them");
    }
    eprintln!("{line}");
    Ok(ExitStatus::Success)
}

fn status(app: &App, settings: &Settings, as_json: bool) -> Result<ExitStatus> {
    let mut team = deja_team::connect(settings)?;
    let store = super::open_read(app)?;
    let st = deja_team::status(&mut team, &store)?;
    if as_json {
        output::print_json(&json::team::Status {
            origin: &st.origin,
            pulled: st.pulled,
            publishers: st
                .publishers
                .iter()
                .map(|p| json::team::Publisher {
                    last_push: p.last_push_ms.map(rfc3339),
                    messages: p.messages,
                    origin: &p.origin,
                    retracted: p.retracted,
                    sessions: p.sessions,
                })
                .collect(),
            schema_known: deja_team::schema::current_version(),
            schema_version: st.schema_version,
            server: &st.server,
            share: &st.share,
            shared: st.shared,
            to_pull: st.to_pull,
            to_push: st.to_push,
            to_remove: st.to_remove,
            to_retract: st.to_retract,
        })?;
        return Ok(ExitStatus::Success);
    }
    println!(
        "team store  {} (schema version {})",
        st.server, st.schema_version
    );
    println!("this machine  {}", st.origin);
    if st.share.is_empty() {
        println!("shares        nothing (`team.share` is empty)");
    } else {
        println!("shares        {}", st.share.join(", "));
    }
    println!(
        "push          {} shared here; {} to push, {} to retract",
        super::plural(st.shared, "session", "sessions"),
        st.to_push,
        st.to_retract
    );
    println!(
        "pull          {} pulled here; {} to pull, {} to remove",
        super::plural(st.pulled, "session", "sessions"),
        st.to_pull,
        st.to_remove
    );
    if st.publishers.is_empty() {
        println!("publishers    none yet");
    } else {
        println!("publishers");
        for p in &st.publishers {
            let me = if p.origin == st.origin {
                " (this machine)"
            } else {
                ""
            };
            println!(
                "  {}{me}: {}, {}, {} retracted; last push {}",
                p.origin,
                super::plural(p.sessions as usize, "session", "sessions"),
                super::plural(p.messages as usize, "message", "messages"),
                p.retracted,
                p.last_push_ms
                    .map(output::local_short)
                    .unwrap_or_else(|| "never".to_string())
            );
        }
    }
    Ok(ExitStatus::Success)
}
