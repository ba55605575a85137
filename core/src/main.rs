//! The `deja` binary: parses the command line and maps results to exit codes
//! (0 success, 1 no results, 2 error). Everything else lives in the library.

use clap::Parser;

fn main() {
    let cli = deja_core::cli::Cli::parse();
    let code = match deja_core::run(cli) {
        Ok(status) => status.code(),
        Err(e) => {
            deja_core::output::error(&format!("{e:#}"));
            2
        }
    };
    std::process::exit(code);
}
