//! The `deja` binary: parses the command line and maps results to exit codes
//! (0 success, 1 no results, 2 error). Everything else lives in the library.

use clap::Parser;

fn main() {
    // Behave like other command-line tools when output is piped into `head`:
    // end quietly on a closed pipe instead of panicking.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    deja_core::output::trace("start");
    let cli = match deja_core::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            let help = matches!(
                e.kind(),
                ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            );
            let _ = e.print();
            if help {
                // Help works with a broken config, and says what is wrong with it.
                deja_core::warn_config_error();
            }
            deja_core::exit(e.exit_code());
        }
    };
    let code = match deja_core::run(cli) {
        Ok(status) => status.code(),
        Err(e) => {
            deja_core::output::error(&format!("{e:#}"));
            2
        }
    };
    deja_core::output::trace("done");
    deja_core::exit(code);
}
