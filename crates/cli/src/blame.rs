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
    let answer = spec
        .line
        .filter(|_| !edits.is_empty())
        .map(|n| (n, LineAnswer::of(&target.abs, n, &edits)));
    let note = answer
        .as_ref()
        .map(|(n, a)| deja_render::term::line(&a.sentence(&shown, *n, &edits)));
    let wrote = answer.as_ref().and_then(|(_, a)| a.wrote());
    if args.json {
        let line_answer = answer.as_ref().map(|(_, a)| a);
        output::print_json(&json::blame::Blame {
            edits: edits
                .iter()
                .enumerate()
                .map(|(i, e)| json::blame::Record::of_edit(e, i, line_answer))
                .collect(),
            file: target.abs.to_string_lossy().into_owned(),
            line: spec.line,
            line_edit: wrote.and_then(|i| {
                edits
                    .get(i)
                    .map(|e| json::blame::Record::of_edit(e, i, line_answer))
            }),
            line_note: if wrote.is_some() { None } else { note.clone() },
            reads: reads
                .as_ref()
                .map(|r| r.iter().map(json::blame::Record::from).collect()),
        })?;
    } else if !edits.is_empty() || reads.as_ref().is_some_and(|r| !r.is_empty()) {
        let mut out = String::new();
        if let Some(note) = &note {
            let s = Style::stdout();
            let _ = writeln!(
                out,
                "{}",
                if wrote.is_some() {
                    s.bold(note)
                } else {
                    s.dim(note)
                }
            );
            let _ = writeln!(out);
        }
        let line = answer.as_ref().map(|(n, a)| (*n, a));
        write_group(&mut out, "edited", &shown, &edits, line);
        if let Some(reads) = &reads {
            if !out.is_empty() {
                let _ = writeln!(out);
            }
            write_group(&mut out, "read", &shown, reads, None);
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
/// parts, then one line per record with its message and `deja show`; with
/// the answer about a line, each edit says how its text stands against it.
fn write_group(
    out: &mut String,
    verb: &str,
    file: &str,
    entries: &[Entry],
    asked: Option<(usize, &LineAnswer)>,
) {
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
        let mine: Vec<(usize, &Entry)> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.activity.session.id == id)
            .collect();
        let Some((_, first)) = mine.first() else {
            continue;
        };
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
        for (i, e) in mine {
            let a = &e.activity;
            let how = match e.matched {
                blame::Matched::Exact => String::new(),
                other => format!(" ({}: {})", other.as_str(), line(&a.path)),
            };
            let stands = match asked.and_then(|(n, answer)| Some((n, answer.edit(i)?))) {
                Some((n, m)) => format!("  [{}]", text_stands(n, m)),
                None => String::new(),
            };
            let _ = writeln!(
                out,
                "  {} {}{how}{stands}",
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

/// How an edit's text stands against line `n` of the file today.
fn text_stands(n: usize, m: &blame::line::EditMatch) -> String {
    use blame::line::TextMatch;
    if m.covers {
        return format!("its text covers line {n}");
    }
    match m.found {
        TextMatch::NoText => "kept no text".into(),
        TextMatch::Absent => "its text is not in the file today".into(),
        TextMatch::Ambiguous if m.maybe => {
            format!("its text is in several places, line {n} among them")
        }
        TextMatch::Ambiguous => "its text is in several places".into(),
        TextMatch::Located { .. } if m.maybe => {
            format!("its text is in the file; part of it in several places, line {n} among them")
        }
        TextMatch::Located { .. } => format!("its text is in the file, not at line {n}"),
    }
}
