//! What every surface of deja starts from: resolved [`paths`], the [`app`]
//! state (configuration, plugin host), the writer [`lock`], printing through
//! [`output`] and the JSON shapes of [`json`], [`dates`] as the user writes
//! them, the sessions a command means ([`select`]), and a period's
//! [`recap`]. The command line, the MCP server, the web page and the
//! agents' wiring all build on it.

// Everything this crate prints for people goes through `deja_render`'s
// terminal filter: this shadows the standard macro in every module below,
// so a stored string that reaches `eprintln!` without its own cleaning still
// cannot act on the terminal (only deja's own styles pass).
macro_rules! eprintln {
    () => {
        $crate::output::err_text("\n")
    };
    ($($arg:tt)*) => {
        $crate::output::err_text(&format!("{}\n", format_args!($($arg)*)))
    };
}

pub mod app;
pub mod blame;
pub mod dates;
pub mod indexing;
pub mod json;
pub mod lock;
pub mod output;
pub mod paths;
pub mod recap;
pub mod select;

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
