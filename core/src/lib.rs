//! The `deja` command line: a thin layer over deja's engine crates.
//!
//! The engine: `deja-host` loads the reader plugins, `deja-index` runs
//! transcripts through them and the redactor into `deja-store`, and embeds
//! them with `deja-embed`; `deja-recall` ranks what is stored. `deja-app`
//! resolves [`paths`] and the [`app`] state, holds the writer [`lock`],
//! prints through [`output`] and [`json`], and selects sessions
//! ([`select`]). `deja-agents` wires deja into the coding agents
//! ([`agents`]: setup, their hooks, the digest). `deja-cli` runs each
//! subcommand ([`commands`]), `deja-mcp` serves agents ([`mcp`]) and
//! `deja-ui` serves a local web page ([`ui`]). This crate parses the command
//! line ([`cli`]) and dispatches it.

pub mod cli;

pub use deja_agents::agents;
pub use deja_app::{app, dates, exit, indexing, json, lock, output, paths, select, ExitStatus};
pub use deja_cli as commands;
pub use deja_mcp as mcp;
pub use deja_ui as ui;

/// Runs a parsed command line.
pub fn run(cli: cli::Cli) -> anyhow::Result<ExitStatus> {
    use cli::Command;
    use commands::config::ConfigArgs;
    // Completions need no config, store or plugins.
    if let Command::Completions(args) = &cli.command {
        return commands::completions::run(
            args.shell,
            <cli::Cli as clap::CommandFactory>::command(),
        );
    }
    let app = app::App::diagnose()?;
    // The tools that diagnose a broken config still run; everything else
    // refuses it with the same message.
    match &cli.command {
        Command::Doctor(_) => {}
        Command::Config(ConfigArgs { default: true }) => {
            if let Some(e) = app.config_error() {
                output::warn(e);
            }
        }
        // Plugins are what harness sections are checked against: list them
        // while a section is wrong, with a warning.
        Command::Plugins(_) => match app.config_error() {
            Some(_) => app.check_config()?,
            None => {
                if let Err(e) = app.check_harness_sections() {
                    output::warn(&e.to_string());
                }
            }
        },
        _ => app.check_config()?,
    }
    match cli.command {
        Command::Index(args) => commands::index::run(&app, &args),
        Command::Recall(args) => commands::recall::run(&app, &args),
        Command::Sessions(args) => commands::sessions::run(&app, &args),
        Command::Blame(args) => commands::blame::run(&app, &args),
        Command::Recap(args) => commands::recap::run(&app, &args),
        Command::Show(args) => commands::show::run(
            &app,
            &args.id,
            commands::show::Window {
                around: args.around,
                before: args.before,
                after: args.after,
            },
            args.json,
        ),
        Command::Resume(args) => commands::resume::run(&app, &args),
        Command::Forget(args) => commands::forget::run(&app, &args),
        Command::Parse(args) => commands::parse::run(&app, &args),
        Command::Plugins(args) => commands::plugins::run(&app, args.json),
        Command::Doctor(args) => commands::doctor::run(&app, args.json),
        Command::Config(args) => commands::config::run(&app, args.default),
        Command::Aider(args) => commands::aider::run(&app, &args.args),
        Command::Mcp(args) => mcp::run(&app, args.structured),
        Command::Context(args) => commands::context::run(&app, &args),
        Command::Setup(args) => commands::setup::run(&app, &args),
        Command::Team(args) => commands::team::run(&app, &args),
        Command::Ui(args) => ui::run(&app, &args),
        Command::Completions(args) => {
            commands::completions::run(args.shell, <cli::Cli as clap::CommandFactory>::command())
        }
    }
}

/// Prints a warning naming the config file's problem, if it has one.
pub fn warn_config_error() {
    if let Ok(app) = app::App::diagnose() {
        if let Some(e) = app.config_error() {
            output::warn(e);
        }
    }
}
