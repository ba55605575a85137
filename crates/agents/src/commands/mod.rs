//! The commands that wire deja into the agents and answer them, each with
//! its arguments (clap) next to the code that runs it.

pub mod aider;
pub mod context;
pub mod digest;
pub mod hook;
pub mod setup;
