//! Output conventions: stdout is data, stderr is messages; colour only on a
//! terminal and never with `NO_COLOR`; timestamps in RFC 3339 for machines and
//! local short form for people.

use std::io::IsTerminal;

use chrono::{DateTime, Local, SecondsFormat, TimeZone, Utc};

/// ANSI styling for one stream, enabled only where it makes sense.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    enabled: bool,
}

impl Style {
    /// Styling for stdout.
    pub fn stdout() -> Style {
        Style {
            enabled: color_allowed() && std::io::stdout().is_terminal(),
        }
    }

    /// Styling for stderr.
    pub fn stderr() -> Style {
        Style {
            enabled: color_allowed() && std::io::stderr().is_terminal(),
        }
    }

    /// Whether colour is on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    fn wrap(&self, code: &str, text: &str) -> String {
        if self.enabled {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// Bold.
    pub fn bold(&self, text: &str) -> String {
        self.wrap("1", text)
    }

    /// Dimmed.
    pub fn dim(&self, text: &str) -> String {
        self.wrap("2", text)
    }

    /// Green (success).
    pub fn green(&self, text: &str) -> String {
        self.wrap("32", text)
    }

    /// Yellow (warning).
    pub fn yellow(&self, text: &str) -> String {
        self.wrap("33", text)
    }

    /// Red (error).
    pub fn red(&self, text: &str) -> String {
        self.wrap("31", text)
    }

    /// Cyan (identifiers).
    pub fn cyan(&self, text: &str) -> String {
        self.wrap("36", text)
    }

    /// Highlight for matched words.
    pub fn highlight(&self, text: &str) -> String {
        self.wrap("1;33", text)
    }
}

fn color_allowed() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Writes `text` to stdout for people, through the terminal filter
/// ([`deja_render::term::screen`]): control characters and escape sequences
/// of stored text are replaced, deja's own styles pass when colour is on.
/// A closed pipe ends the process (SIGPIPE), so write errors are not reported.
pub fn out_text(text: &str) {
    use std::io::Write;
    // Whether colour is on is decided once per process, not once per line.
    static STYLES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let styles = *STYLES.get_or_init(|| Style::stdout().enabled());
    let shown = deja_render::term::screen(text, styles);
    let _ = std::io::stdout().lock().write_all(shown.as_bytes());
}

/// Writes `text` to stderr through the same filter as [`out_text`].
pub fn err_text(text: &str) {
    use std::io::Write;
    static STYLES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let styles = *STYLES.get_or_init(|| Style::stderr().enabled());
    let shown = deja_render::term::screen(text, styles);
    let _ = std::io::stderr().lock().write_all(shown.as_bytes());
}

/// Prints a warning line to stderr.
pub fn warn(message: &str) {
    let s = Style::stderr();
    eprintln!("{} {message}", s.yellow("warning:"));
}

/// Prints an error line to stderr.
pub fn error(message: &str) {
    let s = Style::stderr();
    eprintln!("{} {message}", s.red("error:"));
}

/// Prints a hint line to stderr.
pub fn hint(message: &str) {
    let s = Style::stderr();
    eprintln!("{} {message}", s.cyan("hint:"));
}

/// RFC 3339 in UTC, with milliseconds only when they are not zero.
pub fn rfc3339(ms: i64) -> String {
    match Utc.timestamp_millis_opt(ms).single() {
        Some(t) => t.to_rfc3339_opts(SecondsFormat::AutoSi, true),
        None => ms.to_string(),
    }
}

/// `YYYY-MM-DD HH:MM` in local time, for people.
pub fn local_short(ms: i64) -> String {
    match Utc.timestamp_millis_opt(ms).single() {
        Some(t) => DateTime::<Local>::from(t)
            .format("%Y-%m-%d %H:%M")
            .to_string(),
        None => "?".to_string(),
    }
}

/// A session's date as [`local_short`] writes it, after `about` when it is
/// only its transcript's modification time.
pub fn dated(ms: i64, approximate: bool) -> String {
    if approximate {
        format!("about {}", local_short(ms))
    } else {
        local_short(ms)
    }
}

/// Writes `value` to stdout as pretty JSON, followed by a newline.
pub fn print_json<T: serde::Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// How a project is shown in lists: its name, else its directory's last
/// component, else its id, a long hash id (Gemini CLI's folders) cut to 12
/// hex digits (which `--project` accepts as a prefix).
pub fn project_label(project: &deja_model::Project) -> String {
    if let Some(name) = project.name.as_deref().filter(|n| !n.is_empty()) {
        return name.to_string();
    }
    if let Some(dir) = project.dir.as_deref() {
        let last = dir.trim_end_matches('/').rsplit('/').next().unwrap_or(dir);
        if !last.is_empty() {
            return last.to_string();
        }
    }
    match project.id.as_deref() {
        Some(id) if id.len() > 16 && id.chars().all(|c| c.is_ascii_hexdigit()) => {
            id[..12].to_string()
        }
        Some(id) => id.to_string(),
        None => "-".to_string(),
    }
}

/// The terminal's size (columns, rows) when stdout is one.
pub fn terminal_size() -> Option<(usize, usize)> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    #[cfg(unix)]
    {
        // SAFETY: TIOCGWINSZ fills the zeroed `winsize` we pass; nothing else is touched.
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
        if ok && size.ws_col > 0 && size.ws_row > 0 {
            return Some((usize::from(size.ws_col), usize::from(size.ws_row)));
        }
    }
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<usize>().ok());
    Some((env("COLUMNS").unwrap_or(80), env("LINES").unwrap_or(24)))
}

/// Prints `text` to stdout, through the pager (`$PAGER`, else `less -FRX`)
/// when stdout is a terminal and the text is taller than it; piped output
/// is printed as it is. A pager that cannot start is skipped.
pub fn page(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let text: &str = &deja_render::term::screen(text, Style::stdout().enabled());
    if let Some((_, rows)) = terminal_size() {
        if text.lines().count() >= rows {
            let pager = std::env::var("PAGER")
                .ok()
                .filter(|p| !p.trim().is_empty())
                .unwrap_or_else(|| "less -FRX".to_string());
            let child = std::process::Command::new("sh")
                .arg("-c")
                .arg(&pager)
                .env(
                    "LESS",
                    std::env::var("LESS").unwrap_or_else(|_| "FRX".into()),
                )
                .stdin(std::process::Stdio::piped())
                .spawn();
            if let Ok(mut child) = child {
                if let Some(mut stdin) = child.stdin.take() {
                    // A pager quit early closes the pipe: not an error.
                    let _ = stdin.write_all(text.as_bytes());
                }
                let _ = child.wait();
                return Ok(());
            }
        }
    }
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// Stored text shortened to one line of at most `max` characters, its
/// control characters replaced ([`deja_render::term::clean`]).
pub fn one_line(text: &str, max: usize) -> String {
    deja_model::one_line(&deja_render::clean(text), max)
}
pub use deja_model::trace::trace;

/// `n` and the noun that goes with it ("1 session", "2 sessions").
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_drops_zero_millis() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_500), "1970-01-01T00:00:01.500Z");
    }
}
