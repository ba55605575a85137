//! One module per subcommand.

pub mod config;
pub mod parse;
pub mod plugins;
