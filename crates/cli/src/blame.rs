//! `deja blame FILE[:LINE]`: the sessions whose edit records touched a
//! file, newest first, each with the message that led to the edit and the
//! `deja show` command that opens it.

use std::ffi::OsString;
use std::fmt::Write as _;

use anyhow::{bail, Result};
use clap::Args;

use crate::app::App;
use crate::output::{self, one_line, Style};
use crate::{json, ExitStatus};
use deja_app::blame::{self, Entry, LineAnswer, Target};

/// `deja blame`.
#[derive(Debug, Args)]
pub struct BlameArgs {
    /// The file (relative to the current folder, or absolute), with
    /// `:LINE` to ask about one of its lines.
    #[arg(value_name = "FILE[:LINE]")]
    pub file: OsString,
    /// Also list the sessions that only read it.
    #[arg(long)]
    pub reads: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(app: &App, args: &BlameArgs) -> Result<ExitStatus> {
    let spec = blame::parse_spec(&args.file).map_err(anyhow::Error::msg)?;
    let cwd = std::env::current_dir()?;
    let target = Target::resolve(&spec.file, &cwd);
    let shown = deja_render::term::line(&target.abs.to_string_lossy());
    if target.abs.is_dir() {
        bail!("{shown} is a folder; deja blame takes a file");
    }
    let store = crate::select::open_read(app)?;
    let edits = blame::records(&store, &target, blame::EDITS)?;
    let reads = if args.reads {
        Some(blame::records(&store, &target, blame::READS)?)
    } else {
        None
    };
    let note = spec
        .line
        .map(|n| LineAnswer::of(&target.abs, n).sentence(&shown, n));
    if args.json {
        output::print_json(&json::blame::Blame {
            edits: edits.iter().map(json::blame::Record::from).collect(),
            file: target.abs.to_string_lossy().into_owned(),
            line: spec.line,
            line_note: if edits.is_empty() { None } else { note.clone() },
            reads: reads
                .as_ref()
                .map(|r| r.iter().map(json::blame::Record::from).collect()),
        })?;
    } else if !edits.is_empty() || reads.as_ref().is_some_and(|r| !r.is_empty()) {
        let mut out = String::new();
        if !edits.is_empty() {
            if let Some(note) = &note {
                let _ = writeln!(out, "{}", Style::stdout().dim(note));
                let _ = writeln!(out);
            }
        }
        write_group(&mut out, "edited", &shown, &edits);
        if let Some(reads) = &reads {
            if !out.is_empty() {
                let _ = writeln!(out);
            }
            write_group(&mut out, "read", &shown, reads);
        }
        output::page(&out)?;
    }
    if edits.is_empty() {
        eprintln!("no session edited {shown}");
        return Ok(ExitStatus::NoResults);
    }
    Ok(ExitStatus::Success)
}

/// The records of one kind, grouped by session in the order the newest
/// record of each comes: the session's line as `deja sessions` prints its
/// parts, then one line per record with its message and `deja show`.
fn write_group(out: &mut String, verb: &str, file: &str, entries: &[Entry]) {
    if entries.is_empty() {
        return;
    }
    let s = Style::stdout();
    let line = deja_render::term::line;
    let mut order: Vec<&str> = Vec::new();
    for e in entries {
        if !order.contains(&e.activity.session.id.as_str()) {
            order.push(&e.activity.session.id);
        }
    }
    let _ = writeln!(
        out,
        "{}",
        s.bold(&format!(
            "{} {verb} {file} ({})",
            output::plural(order.len(), "session", "sessions"),
            output::plural(entries.len(), "record", "records")
        ))
    );
    for id in order {
        let mine: Vec<&Entry> = entries
            .iter()
            .filter(|e| e.activity.session.id == id)
            .collect();
        let Some(first) = mine.first() else { continue };
        let r = &first.activity.session;
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{}  {}  {}  {}",
            s.cyan(&line(&r.id)),
            output::dated(r.started_at, r.date_approximate),
            line(&r.harness),
            line(&output::project_label(&r.project))
        );
        for e in mine {
            let a = &e.activity;
            let how = match e.matched {
                blame::Matched::Exact => String::new(),
                other => format!(" ({}: {})", other.as_str(), line(&a.path)),
            };
            let _ = writeln!(
                out,
                "  {} {}{how}",
                line(a.action),
                output::local_short(a.timestamp_ms)
            );
            if let Some((index, role, text)) = &a.message {
                let _ = writeln!(
                    out,
                    "    #{index} {}: {}",
                    role.as_str(),
                    one_line(text, 100)
                );
            }
            let _ = writeln!(out, "    {}", s.dim(&line(&e.pointer())));
        }
    }
}
