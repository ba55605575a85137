//! deja in the coding agents: `deja setup` wires deja into each agent's
//! files and takes it back ([`agents`], [`commands::setup`]), the answers to
//! their hooks ([`commands::hook`]), a project's digest for a session's start
//! ([`commands::digest`], [`commands::context`]), and `deja aider`
//! ([`commands::aider`]). Built on `deja-app`, whose modules it names as its
//! own.

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
pub mod commands;

pub use deja_app::{app, exit, indexing, json, lock, output, ExitStatus};
