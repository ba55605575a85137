//! `deja plugins`: every plugin file found, with its name, version, ABI
//! version, harness, path and status, and the reason for anything not loaded.

use anyhow::Result;

use crate::app::App;
use crate::output::{self, Style};
use crate::{json, ExitStatus};
use deja_host::Status;

/// `deja plugins`.
#[derive(Debug, clap::Args)]
pub struct PluginsArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(app: &App, as_json: bool) -> Result<ExitStatus> {
    let host = app.host();
    if as_json {
        output::print_json(&json::plugins::Plugins {
            abi: deja_host::HOST_ABI.to_string(),
            plugins: host
                .reports
                .iter()
                .map(|r| json::plugins::Plugin {
                    abi: r.abi.map(|a| a.to_string()),
                    enabled: r.harness.as_deref().map(|h| app.harness_enabled(h)),
                    harness: r.harness.as_deref(),
                    name: r.name.as_deref(),
                    note: r.note.as_deref(),
                    origin: r.folder.as_str(),
                    path: r.path.to_string_lossy(),
                    reason: r.status.reason(),
                    served_by: r.served_by.as_deref().map(|p| p.to_string_lossy()),
                    status: r.status.label(),
                    version: r.version.as_deref(),
                })
                .collect(),
        })?;
        return Ok(ExitStatus::Success);
    }

    let s = Style::stdout();
    if host.reports.is_empty() {
        output::warn("no plugins found");
        output::hint(&format!(
            "readers are loaded from `plugins.paths` in the config, `{}`, `../lib/deja/plugins` from the deja executable's folder, and that folder itself only when it is a cargo build folder (`target/debug`, `target/release`)",
            app.paths.plugin_dir().display()
        ));
    }
    for r in &host.reports {
        let status = match &r.status {
            Status::Loaded => {
                let enabled = r.harness.as_deref().is_none_or(|h| app.harness_enabled(h));
                if enabled {
                    s.green("loaded")
                } else {
                    s.yellow("loaded (disabled in config)")
                }
            }
            other => s.red(other.label()),
        };
        // A plugin that serves descriptions reads no harness of its own.
        let harness = match (&r.harness, &r.note) {
            (Some(h), _) => h.as_str(),
            (None, Some(_)) => "-",
            (None, None) => "?",
        };
        println!(
            "{:<10} {:<8} abi {:<5} harness {:<8} {}",
            s.bold(r.name.as_deref().unwrap_or("?")),
            r.version.as_deref().unwrap_or("?"),
            r.abi.map(|a| a.to_string()).unwrap_or_else(|| "?".into()),
            harness,
            status
        );
        println!("           {} ({})", r.path.display(), r.folder.as_str());
        if let Some(by) = &r.served_by {
            println!("           a reader description, read by {}", by.display());
        }
        if let Some(note) = &r.note {
            println!("           {note}");
        }
        if let Some(reason) = r.status.reason() {
            println!("           {reason}");
        }
    }
    Ok(ExitStatus::Success)
}
