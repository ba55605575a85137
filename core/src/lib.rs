//! The `deja` command line: a thin layer over deja's engine crates.
//!
//! The engine: `deja-host` loads the reader plugins, `deja-index` runs
//! transcripts through them and the redactor into `deja-store`, and embeds
//! them with `deja-embed`; `deja-recall` ranks what is stored. This crate
//! parses the command line ([`cli`]), resolves [`paths`] and the [`app`]
//! state, holds the writer [`lock`], and drives each subcommand
//! ([`commands`]), printing through [`output`] and [`json`]; [`mcp`] serves
//! agents and [`ui`] serves a local web page.

// Everything this crate prints for people goes through `deja_render`'s
// terminal filter: these shadow the standard macros in every module below,
// so a stored string that reaches `println!` without its own cleaning still
// cannot act on the terminal (only deja's own styles pass).
macro_rules! println {
    () => {
        $crate::output::out_text("\n")
    };
    ($($arg:tt)*) => {
        $crate::output::out_text(&format!("{}\n", format_args!($($arg)*)))
    };
}
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::output::out_text(&format!($($arg)*))
    };
}
macro_rules! eprintln {
    () => {
        $crate::output::err_text("\n")
    };
    ($($arg:tt)*) => {
        $crate::output::err_text(&format!("{}\n", format_args!($($arg)*)))
    };
}

pub mod agents;
pub mod app;
pub mod cli;
pub mod commands;
pub mod dates;
pub mod json;
pub mod lock;
pub mod mcp;
pub mod output;
pub mod paths;
pub mod select;
pub mod ui;

/// How a command ended, mapped to the process exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: done (with results, for searches).
    Success,
    /// 1: a search found nothing (or `doctor` found a problem).
    NoResults,
    /// 2: something failed.
    Error,
    /// 3: done, with problems the messages name (`index`: a reader could
    /// not look for transcripts, or embedding failed for a reason other than
    /// a missing model; `index` and `forget`: a scrub left pending).
    Incomplete,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::NoResults => 1,
            ExitStatus::Error => 2,
            ExitStatus::Incomplete => 3,
        }
    }
}

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
        Command::Resume(args) => commands::resume::run(&app, &args.id, args.run, args.json),
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

/// Ends the process with `code` once stdout and stderr are flushed, without
/// running the destructors of loaded libraries: ONNX Runtime's take tens of
/// milliseconds, and a cold `deja recall` has no time to spare. Everything
/// deja writes is committed (SQLite) or renamed into place before this point.
pub fn exit(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(unix)]
    // SAFETY: _exit ends the process immediately; buffers were flushed above.
    unsafe {
        libc::_exit(code)
    }
    #[cfg(not(unix))]
    std::process::exit(code)
}
