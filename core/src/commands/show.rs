//! `deja show ID`: one session in full: messages with roles and times, then
//! the files and commands it touched.

use anyhow::Result;

use crate::app::App;
use crate::output::{self, local_short, Style};
use crate::{json, ExitStatus};

/// Runs the command.
pub fn run(app: &App, id: &str, as_json: bool) -> Result<ExitStatus> {
    let store = super::open_read(app)?;
    let row = super::pick_session(&store, id)?;
    let session = store.load_session(&row)?;
    if as_json {
        let mut v = json::session(&session, row.source_path.as_deref());
        if let serde_json::Value::Object(m) = &mut v {
            m.insert("source_present".into(), row.has_source.into());
        }
        output::print_json(&v)?;
        return Ok(ExitStatus::Success);
    }
    let s = Style::stdout();
    println!("{} {}", s.bold("session"), s.cyan(&session.id));
    println!("harness   {} (id {})", session.harness, session.native_id);
    if let Some(dir) = session
        .project
        .dir
        .as_deref()
        .or(session.project.name.as_deref())
        .or(session.project.id.as_deref())
    {
        println!("project   {dir}");
    }
    println!("started   {}", local_short(session.started_at_ms));
    if let Some(t) = &session.title {
        println!("title     {t}");
    }
    if let Some(p) = &session.parent_id {
        println!("parent    {p}");
    }
    match (&row.source_path, row.has_source) {
        (Some(p), true) => println!("source    {p}"),
        (Some(p), false) => println!("source    {p} (gone; the session is kept)"),
        _ => {}
    }
    for m in &session.messages {
        println!();
        println!(
            "{} {}",
            s.bold(&format!("── {} ", m.role.as_str())),
            s.dim(&local_short(m.timestamp_ms))
        );
        println!("{}", m.text);
    }
    if !session.files.is_empty() {
        println!();
        println!("{}", s.bold("files"));
        for f in &session.files {
            println!("  {:<9} {}", f.action, f.path);
        }
    }
    if !session.commands.is_empty() {
        println!();
        println!("{}", s.bold("commands"));
        for c in &session.commands {
            println!("  {:<5} {}", c.origin, c.command);
        }
    }
    Ok(ExitStatus::Success)
}
