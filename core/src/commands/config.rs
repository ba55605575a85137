//! `deja config`: the effective configuration with the source of every value,
//! or the documented default file.

use anyhow::Result;

use crate::app::App;
use crate::ExitStatus;

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
    print!("{}", c.render_with_sources());
    Ok(ExitStatus::Success)
}
