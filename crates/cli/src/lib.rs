//! deja's commands: one module per subcommand, each with its arguments
//! (clap) next to the code that runs it; what several of them share is in
//! `deja-app` ([`select`], [`indexing`]), whose modules it names as its own.
//! The commands that wire deja into the agents come from `deja-agents`.

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

pub mod blame;
pub mod completions;
pub mod config;
pub mod doctor;
pub mod forget;
pub mod index;
pub mod parse;
pub mod plugins;
pub mod recall;
pub mod recap;
pub mod refresh;
pub mod resume;
pub mod sessions;
pub mod show;
pub mod team;
pub mod writeback;

pub use deja_agents::commands::{aider, context, digest, hook, setup};
pub use deja_app::{app, dates, exit, indexing, json, lock, output, paths, select, ExitStatus};
