//! `deja team push|pull|status`: team memory through a shared PostgreSQL
//! database. Each command connects (and checks, or migrates, the team
//! store's schema) before it touches anything here, so a wrong password, a
//! server that is down or a schema from a newer deja changes nothing
//! locally. This machine's id (`team-machine-id` in the data folder) is made
//! by the first push or pull; status only reads it.

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
    /// Publish the sessions of the projects in `team.share` (only what changed; retracts what was forgotten here).
    Push {
        /// Push even though redaction is off.
        #[arg(long)]
        force: bool,
        /// Say what would be pushed and retracted; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Retract as well the sessions this machine published that this store has no trace of (a new data folder); with --dry-run, list them.
        #[arg(long)]
        retract_missing: bool,
        /// Retract as well the sessions this machine published that are still here but in projects `team.share` no longer names (an entry removed or changed); with --dry-run, list them.
        #[arg(long)]
        retract_unshared: bool,
        /// Push under `team.name` although another machine pushes under it, making this machine its publisher (for this machine after its data folder was wiped).
        #[arg(long)]
        take_over_name: bool,
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
    let mut settings = Settings::from_config(
        &app.config,
        &|k: &str| std::env::var(k).ok(),
        &app.paths.home,
    )?;
    match &args.command {
        TeamCommand::Push {
            force,
            dry_run,
            retract_missing,
            retract_unshared,
            take_over_name,
            json,
        } => {
            let options = PushOptions {
                redaction_on: app.config.config.redact.enabled,
                force: *force,
                dry_run: *dry_run,
                retract_missing: *retract_missing,
                retract_unshared: *retract_unshared,
                take_over_name: *take_over_name,
            };
            push(app, &mut settings, options, *json)
        }
        TeamCommand::Pull { no_embed, json } => pull(app, &mut settings, *no_embed, *json),
        TeamCommand::Status { json } => {
            settings.machine_id = deja_team::machine::load(&app.paths.data_dir)?;
            status(app, &settings, *json)
        }
    }
}

/// A name or id from the team store, which may hold anything: as it is when
/// made of the characters ids are made of, else quoted with control
/// characters escaped; cut to 80 characters.
fn quoted(text: &str) -> String {
    let cut: String = text.chars().take(80).collect();
    let plain = !cut.is_empty()
        && cut
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._:@+-/=~".contains(c));
    if plain {
        cut
    } else {
        format!("{cut:?}")
    }
}

/// This machine's id, made now if it has none.
fn machine_id(app: &App) -> Result<String> {
    deja_store::create_private_dir(&app.paths.data_dir)?;
    Ok(deja_team::machine::load_or_create(&app.paths.data_dir)?)
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
    settings: &mut Settings,
    options: PushOptions,
    as_json: bool,
) -> Result<ExitStatus> {
    let started = Instant::now();
    if settings.share.is_empty() {
        output::warn("`team.share` lists no project: this machine publishes nothing (a push retracts only what it forgot, unless asked to retract more)");
    }
    let store = crate::select::open_read(app)?;
    settings.machine_id = Some(machine_id(app)?);
    let mut team = deja_team::connect(settings)?;
    let mut report_progress = progress("pushed");
    let report = deja_team::push(&mut team, &store, options, &mut report_progress)?;
    let server = team.server();
    let dry_run = options.dry_run;
    if dry_run {
        for (k, why) in &report.retractions {
            println!(
                "would retract {} {} ({})",
                quoted(&k.harness),
                quoted(&k.id),
                why.as_str()
            );
        }
    }
    if !report.unshared.is_empty() {
        warn_unshared(&report, team.origin());
    }
    if !report.missing.is_empty() {
        output::warn(&format!(
            "{} published as {} {} not in this store (a new data folder?): left published",
            crate::output::plural(report.missing.len(), "session", "sessions"),
            team.origin(),
            if report.missing.len() == 1 {
                "is"
            } else {
                "are"
            }
        ));
        output::hint(
            "`deja team push --retract-missing --dry-run` lists them; without --dry-run it retracts them",
        );
    }
    if report.took_over {
        output::warn(&format!(
            "this machine {} `{}` over from the machine that pushed under it before",
            if dry_run { "would take" } else { "took" },
            team.origin()
        ));
    }
    if as_json {
        output::print_json(&json::team::Push {
            dry_run,
            messages: report.messages,
            missing: report.missing.len(),
            origin: team.origin(),
            pushed: report.pushed,
            retracted: report.retracted,
            retractions: report
                .retractions
                .iter()
                .map(|(k, why)| json::team::Retraction {
                    harness: &k.harness,
                    session_id: &k.id,
                    why: why.as_str(),
                })
                .collect(),
            seconds: started.elapsed().as_secs_f64(),
            server: &server,
            shared: report.shared,
            took_over: report.took_over,
            unchanged: report.unchanged,
            unshared: report.unshared_sessions(),
            vectors: report.vectors,
        })?;
        return Ok(ExitStatus::Success);
    }
    let verb = if dry_run { "would push" } else { "pushed" };
    eprintln!(
        "{verb} {} ({}) to {server} as {}; {} unchanged; {} {}{}{}",
        crate::output::plural(report.pushed, "session", "sessions"),
        crate::output::plural(report.messages, "message", "messages"),
        team.origin(),
        report.unchanged,
        report.retracted,
        if dry_run { "to retract" } else { "retracted" },
        if report.vectors > 0 {
            format!(
                "; {} published",
                crate::output::plural(report.vectors, "vector", "vectors")
            )
        } else {
            String::new()
        },
        if dry_run {
            " (dry run: nothing changed)"
        } else {
            ""
        }
    );
    Ok(ExitStatus::Success)
}

/// Names on stderr the projects whose published sessions `team.share` no
/// longer matches, left published, and how to retract them.
fn warn_unshared(report: &deja_team::PushReport, origin: &str) {
    let n = report.unshared_sessions();
    output::warn(&format!(
        "{} published as {origin} {} in {} `team.share` no longer names (an entry removed, mistyped or changed?): left published",
        crate::output::plural(n, "session", "sessions"),
        if n == 1 { "is" } else { "are" },
        if report.unshared.len() == 1 {
            "a project"
        } else {
            "projects"
        }
    ));
    for u in &report.unshared {
        // This machine's own folder names: whole, with control characters escaped.
        let project = if u.project.is_empty() {
            "(no project)".to_string()
        } else if u.project.chars().any(char::is_control) {
            format!("{:?}", u.project)
        } else {
            u.project.clone()
        };
        eprintln!(
            "  {project}: {}",
            crate::output::plural(u.sessions.len(), "session", "sessions")
        );
    }
    output::hint(
        "if `team.share` is right, `deja team push --retract-unshared` retracts them (with --dry-run it lists them); otherwise correct `team.share`",
    );
}

fn pull(app: &App, settings: &mut Settings, no_embed: bool, as_json: bool) -> Result<ExitStatus> {
    let started = Instant::now();
    settings.machine_id = Some(machine_id(app)?);
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
    if !no_embed && store.model_stamp().is_none() {
        // A store never embedded learns its model first, so that it can
        // take the vectors teammates published with what it pulls (an
        // error here is the embedding pass's, reported after the pull).
        let _ = crate::indexing::embed(
            app,
            &mut store,
            std::time::Instant::now(),
            &mut super::index::Bar::new(),
        );
    }
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
        let embedded = crate::indexing::embed(
            app,
            &mut store,
            std::time::Instant::now(),
            &mut super::index::Bar::new(),
        )?;
        store.prune_embeddings()?;
        embedded.into_result()
    };
    crate::indexing::erase_vectors(app, &store)?;
    let server = team.server();
    let embedding_error = embedded.as_ref().err().map(String::as_str);
    let pass = embedded.as_ref().ok().and_then(|p| p.as_ref());
    let embedded_messages = pass.map(|p| p.messages).unwrap_or(0);
    let embedded_by_model = pass.map(|p| p.embedded).unwrap_or(0);
    let from_team = pass.map(|p| p.team).unwrap_or(0);
    let refused_vectors = pass.map(|p| p.refused).unwrap_or(0);
    if refused_vectors > 0 {
        output::warn(&format!(
            "the vectors published with {} disagreed with this machine's model and were left out; those sessions were embedded here",
            crate::output::plural(refused_vectors, "pulled session", "pulled sessions")
        ));
    }
    if let Some(e) = embedding_error {
        output::warn(&format!(
            "pulled sessions are searchable by words only until they are embedded: {e}"
        ));
    }
    if let Some(name) = &report.name_collision {
        output::warn(&format!(
            "another machine pushes under this machine's `team.name` ({name}): its sessions were pulled as that machine's, and this machine cannot push under the name"
        ));
        output::hint("give each machine its own `team.name` (user@machine)");
    }
    for s in &report.skipped {
        output::warn(&format!(
            "skipped {} session {} from {}: {}",
            quoted(&s.key.harness),
            quoted(&s.key.id),
            quoted(&s.key.origin),
            s.reason
        ));
    }
    if as_json {
        output::print_json(&json::team::Pull {
            added: report.added,
            embedding_error,
            embedded_messages,
            embedded_by_model,
            forgotten_here: report.forgotten_here,
            from_team,
            kept_local: report.kept_local,
            messages: report.messages,
            name_collision: report.name_collision.as_deref(),
            origin: team.origin(),
            refused_vectors,
            removed: report.removed,
            seconds: started.elapsed().as_secs_f64(),
            server: &server,
            skipped: report
                .skipped
                .iter()
                .map(|s| json::team::Skipped {
                    harness: &s.key.harness,
                    origin: &s.key.origin,
                    reason: &s.reason,
                    session_id: &s.key.id,
                })
                .collect(),
            unchanged: report.unchanged,
            updated: report.updated,
            vectors: report.vectors,
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
        crate::output::plural(report.messages, "message", "messages"),
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
    if !report.skipped.is_empty() {
        line.push_str(&format!("; {} skipped", report.skipped.len()));
    }
    if from_team > 0 {
        line.push_str(&format!(
            "; {} taken from teammates' vectors, the model run on {} (checks included)",
            crate::output::plural(from_team, "embedding", "embeddings"),
            crate::output::plural(embedded_by_model, "text", "texts")
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
    // A fresh home (nothing indexed or pulled yet) is an empty store here.
    let store = if app.paths.database().exists() {
        Some(crate::select::open_read(app)?)
    } else {
        None
    };
    let st = deja_team::status(&mut team, store.as_ref())?;
    if as_json {
        output::print_json(&json::team::Status {
            local_store: store.is_some(),
            missing: st.missing,
            name_taken: st.name_taken,
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
            unshared: st.unshared,
        })?;
        return Ok(ExitStatus::Success);
    }
    println!(
        "team store    {} (schema version {})",
        st.server, st.schema_version
    );
    if st.name_taken {
        println!(
            "this machine  {} (another machine pushes under this name: pushes are refused; set `team.name`)",
            st.origin
        );
    } else {
        println!("this machine  {}", st.origin);
    }
    if store.is_none() {
        println!("local store   none yet (nothing indexed or pulled here): counted as empty");
    }
    if st.share.is_empty() {
        println!("shares        nothing (`team.share` is empty)");
    } else {
        println!("shares        {}", st.share.join(", "));
    }
    let mut missing = String::new();
    if st.unshared > 0 {
        missing.push_str(&format!(
            "; {} published but in projects `team.share` no longer names (kept; `deja team push --retract-unshared` retracts them)",
            st.unshared
        ));
    }
    if st.missing > 0 {
        missing.push_str(&format!(
            "; {} published but not in this store (kept; `deja team push --retract-missing` retracts them)",
            st.missing
        ));
    }
    println!(
        "push          {} shared here; {} to push, {} to retract{missing}",
        crate::output::plural(st.shared, "session", "sessions"),
        st.to_push,
        st.to_retract
    );
    println!(
        "pull          {} pulled here; {} to pull, {} to remove",
        crate::output::plural(st.pulled, "session", "sessions"),
        st.to_pull,
        st.to_remove
    );
    if st.publishers.is_empty() {
        println!("publishers    none yet");
    } else {
        println!("publishers");
        for p in &st.publishers {
            let me = if p.origin == st.origin && !st.name_taken {
                " (this machine)"
            } else {
                ""
            };
            println!(
                "  {}{me}: {}, {}, {} retracted; last push {}",
                quoted(&p.origin),
                crate::output::plural(p.sessions as usize, "session", "sessions"),
                crate::output::plural(p.messages as usize, "message", "messages"),
                p.retracted,
                p.last_push_ms
                    .map(output::local_short)
                    .unwrap_or_else(|| "never".to_string())
            );
        }
    }
    Ok(ExitStatus::Success)
}
