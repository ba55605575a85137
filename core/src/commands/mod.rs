//! One module per subcommand, each with its arguments (clap) next to the
//! code that runs it; what several of them share is in [`crate::select`].

pub mod aider;
pub mod completions;
pub mod config;
pub mod context;
pub mod digest;
pub mod doctor;
pub mod forget;
pub mod hook;
pub mod index;
pub mod parse;
pub mod plugins;
pub mod recall;
pub mod refresh;
pub mod resume;
pub mod sessions;
pub mod setup;
pub mod show;
pub mod team;
