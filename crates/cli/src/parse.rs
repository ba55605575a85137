//! `deja parse PATH`: runs the reader(s) on one transcript or a folder and
//! prints the normalized sessions, indexing nothing. For plugin authors and
//! bug reports.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;

use crate::app::App;
use crate::output::{self, local_short, one_line, Style};
use crate::{json, ExitStatus};
use deja_host::transcripts;
use deja_host::Plugin;
use deja_index::redact::Redactor;
use deja_model::Session;

/// `deja parse`.
#[derive(Debug, Args)]
pub struct ParseArgs {
    /// A transcript file or a folder holding transcripts.
    pub path: PathBuf,
    /// Use this harness's reader instead of detecting it.
    #[arg(long, value_name = "NAME")]
    pub harness: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(app: &App, args: &ParseArgs) -> Result<ExitStatus> {
    if !args.path.exists() {
        bail!("`{}` does not exist", args.path.display());
    }
    // Readers see the same absolute path as `deja index` gives them, so ids
    // derived from it (aider's) agree.
    let path = &std::fs::canonicalize(&args.path)
        .with_context(|| format!("cannot resolve `{}`", args.path.display()))?;
    let forced = match &args.harness {
        Some(h) => match app.host().get(h) {
            Some(p) => Some(p),
            None => bail!(
                "no loaded reader for harness `{h}`; loaded: {}",
                app.host().harnesses().join(", ")
            ),
        },
        None => None,
    };
    let (files, mut warnings) = if path.is_dir() {
        transcripts::files_under(path)
    } else {
        (vec![path.clone()], Vec::new())
    };

    let limit = app.config.config.index.max_file_bytes;
    let redactor = Redactor::from_config(&app.config.config.redact)?;
    let mut sessions: Vec<(Session, PathBuf)> = Vec::new();
    let mut errors: Vec<(PathBuf, String)> = Vec::new();
    let mut skipped_empty = 0u32;
    let mut parsed_files = Vec::new();
    for file in files {
        let Some(plugin) = choose(app, forced, &file, path.is_dir()) else {
            if !path.is_dir() {
                errors.push((
                    file.clone(),
                    "no reader recognizes this file (hint: pass --harness NAME)".into(),
                ));
            }
            continue;
        };
        match parse_one(app, plugin, &file, limit) {
            Ok(parsed) => {
                skipped_empty += parsed.skipped_empty;
                warnings.extend(
                    parsed
                        .warnings
                        .iter()
                        .map(|w| format!("{}: {w}", file.display())),
                );
                parsed_files.push(json::parse::File {
                    harness: &plugin.harness,
                    path: file.to_string_lossy().into_owned(),
                    sessions: parsed.sessions.len(),
                    skipped_empty: parsed.skipped_empty,
                });
                sessions.extend(
                    parsed
                        .sessions
                        .into_iter()
                        .map(|s| (redactor.session(s), file.clone())),
                );
            }
            Err(e) => errors.push((file.clone(), e)),
        }
    }
    let mut sessions = transcripts::dedup(sessions);
    sessions.sort_by(|a, b| {
        (a.0.started_at_ms, &a.0.harness, &a.0.id).cmp(&(b.0.started_at_ms, &b.0.harness, &b.0.id))
    });

    for w in &warnings {
        output::warn(w);
    }
    for (file, e) in &errors {
        output::error(&format!("`{}`: {e}", file.display()));
    }
    if args.json {
        output::print_json(&json::parse::Parse {
            errors: errors
                .iter()
                .map(|(p, e)| json::parse::Error {
                    error: e,
                    path: p.to_string_lossy(),
                })
                .collect(),
            files: parsed_files,
            sessions: sessions
                .iter()
                .map(|(s, src)| json::Session::new(s, Some(src.to_string_lossy())))
                .collect(),
            skipped_empty,
            warnings: &warnings,
        })?;
    } else {
        print_text(&sessions, skipped_empty);
    }
    Ok(if errors.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Error
    })
}

fn choose<'a>(
    app: &'a App,
    forced: Option<&'a Plugin>,
    file: &Path,
    walking: bool,
) -> Option<&'a Plugin> {
    let head = transcripts::head(file);
    match forced {
        Some(p) if !walking || p.detect(file, &head) > 0 => Some(p),
        Some(_) => None,
        None => app.host().detect(file, &head),
    }
}

fn parse_one(
    app: &App,
    plugin: &Plugin,
    file: &Path,
    limit: u64,
) -> Result<deja_host::Parsed, String> {
    let t = transcripts::read(file, limit).map_err(|e| e.to_string())?;
    let context = app
        .context_for(&plugin.harness)
        .map_err(|e| e.to_string())?;
    plugin
        .parse(file, &t.bytes, t.modified_ms, &context)
        .map_err(|e| e.to_string())
}

fn print_text(sessions: &[(Session, PathBuf)], skipped_empty: u32) {
    let s = Style::stdout();
    for (session, source) in sessions {
        let project = session
            .project
            .name
            .as_deref()
            .or(session.project.id.as_deref())
            .unwrap_or("-");
        println!(
            "{}  {}  {}  {}  {} messages",
            s.cyan(&session.id),
            session.harness,
            project,
            local_short(session.started_at_ms),
            session.messages.len()
        );
        println!("  {}", s.dim(&format!("from {}", source.display())));
        for m in &session.messages {
            println!("  {:<9}  {}", m.role.as_str(), one_line(&m.text, 100));
        }
        for f in &session.files {
            println!("  {:<9}  {} {}", "file", f.action, f.path);
        }
        for c in &session.commands {
            println!("  {:<9}  {}", "command", one_line(&c.command, 100));
        }
        println!();
    }
    eprintln!(
        "{} sessions{}",
        sessions.len(),
        if skipped_empty > 0 {
            format!(", {skipped_empty} without messages skipped")
        } else {
            String::new()
        }
    );
}
