//! `deja config`: the effective configuration with the source of every value,
//! or the documented default file.

use anyhow::Result;

use crate::app::App;
use crate::ExitStatus;

/// `deja config`.
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    /// Print the default configuration file (every key documented) instead.
    #[arg(long)]
    pub default: bool,
}

/// Runs the command.
pub fn run(app: &App, default: bool) -> Result<ExitStatus> {
    if default {
        print!("{}", deja_config::DEFAULT_TOML);
        return Ok(ExitStatus::Success);
    }
    let c = &app.config;
    eprintln!(
        "config file: {}{}",
        c.path.display(),
        if c.file_exists {
            ""
        } else {
            " (absent: defaults apply)"
        }
    );
    print!("{}", effective(app, &c.render_with_sources()));
    Ok(ExitStatus::Success)
}

/// The rendered config with what its empty defaults resolve to on this
/// machine (the model folder, the runtime, the store folder, the team name)
/// noted beside them, and a section for each loaded reader the file does not
/// name, since every reader takes the same `enabled`, `roots` and `exclude`.
fn effective(app: &App, rendered: &str) -> String {
    let settings = app.embed_settings();
    let env = |k: &str| std::env::var(k).ok();
    let resolved = |section: &str, key: &str| -> Option<String> {
        match (section, key) {
            ("embed", "model_dir") => Some(settings.model_dir.display().to_string()),
            ("embed", "runtime") => Some(match settings.runtime() {
                Ok(p) => p.display().to_string(),
                Err(_) => "none found".to_string(),
            }),
            ("store", "dir") => Some(app.paths.data_dir.display().to_string()),
            ("team", "name") => Some(deja_team::connect::default_origin(&env)),
            _ => None,
        }
    };
    let mut out = String::new();
    let mut section = String::new();
    let mut harnesses: Vec<String> = Vec::new();
    for line in rendered.lines() {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_string();
            if let Some(h) = name.strip_prefix("harness.") {
                harnesses.push(h.to_string());
            }
        }
        let key = line.split(" = ").next().unwrap_or("").trim();
        match resolved(&section, key) {
            Some(value) if line.starts_with(&format!("{key} = \"\"")) => {
                out.push_str(&format!("{line}, here {value}\n"));
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    for h in app.host().harnesses() {
        if !harnesses.iter().any(|n| *n == h) {
            out.push_str(&format!(
                "\n[harness.{h}]\nenabled = true  # default\nroots = []  # default\nexclude = []  # default\n"
            ));
        }
    }
    out
}
