//! Opening the page in the user's browser without its code on a command
//! line, where other local users could read it (`ps`, `/proc/*/cmdline`):
//! the address goes into a private file (0600, in deja's private data
//! folder) that forwards the browser to it, and the browser is given that
//! file's `file://` address.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result};
use maud::{html, DOCTYPE};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use crate::output;

/// The forwarding file's name in the data folder (replaced by each run).
const FILE: &str = "ui-open.html";

/// What a path keeps unencoded in a `file://` address.
const PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Opens `address` (with its one-time code) through a forwarding file in
/// `data_dir`, in `$BROWSER` or else the desktop's opener; warns when that
/// cannot be done (the printed address still opens the page).
pub fn open(data_dir: &Path, address: &str) {
    let file = match write_forwarder(data_dir, address) {
        Ok(f) => f,
        Err(e) => {
            output::warn(&format!(
                "{e:#}; open the address above in a browser instead"
            ));
            return;
        }
    };
    let url = format!(
        "file://{}",
        utf8_percent_encode(&file.to_string_lossy(), PATH)
    );
    let browser = std::env::var("BROWSER").ok();
    for argv in commands(browser.as_deref(), &url, default_opener()) {
        let Some((program, args)) = argv.split_first() else {
            continue;
        };
        let started = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        if started.is_ok() {
            return;
        }
    }
    output::warn(&format!(
        "could not start {} to open the page; open the address above in a browser",
        match browser.as_deref().map(str::trim) {
            Some(b) if !b.is_empty() => format!("any of `$BROWSER` (`{b}`)"),
            _ => format!("`{}`", default_opener()),
        }
    ));
}

/// The desktop's opener of addresses.
fn default_opener() -> &'static str {
    if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    }
}

/// Writes the file that forwards the browser to `address`: private (0600)
/// in the private folder `data_dir`.
fn write_forwarder(data_dir: &Path, address: &str) -> Result<PathBuf> {
    deja_store::create_private_dir(data_dir)?;
    let path = data_dir.join(FILE);
    // A new file, so that it gets the private mode whatever was there.
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("cannot replace `{}`", path.display()))
        }
        _ => {}
    }
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="refresh" content=(format!("0; url={address}"));
                title { "deja" }
            }
            body { p { a href=(address) { "Open deja's page" } } }
        }
    };
    deja_fs::atomic_write_with_mode(&path, page.into_string().as_bytes(), deja_fs::PRIVATE)?;
    Ok(path)
}

/// The commands to try, in order, to open `url`. `$BROWSER` (`browser`) is
/// a colon-separated list of commands; in each, `%s` stands for the address
/// (`%%` for a `%`), which otherwise goes last. Without it: `opener`.
fn commands(browser: Option<&str>, url: &str, opener: &str) -> Vec<Vec<String>> {
    let listed: Vec<Vec<String>> = browser
        .unwrap_or("")
        .split(':')
        .map(|command| {
            let words: Vec<&str> = command.split_whitespace().collect();
            let placed = words.iter().any(|w| w.contains("%s"));
            let mut argv: Vec<String> = words.iter().map(|w| fill(w, url)).collect();
            if !placed && !argv.is_empty() {
                argv.push(url.to_string());
            }
            argv
        })
        .filter(|argv| !argv.is_empty())
        .collect();
    if listed.is_empty() {
        vec![vec![opener.to_string(), url.to_string()]]
    } else {
        listed
    }
}

/// `word` with `%s` replaced by `url` and `%%` by `%`.
fn fill(word: &str, url: &str) -> String {
    let mut out = String::new();
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('%', Some('s')) => {
                chars.next();
                out.push_str(url);
            }
            ('%', Some('%')) => {
                chars.next();
                out.push('%');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argvs(browser: Option<&str>) -> Vec<Vec<String>> {
        commands(browser, "file:///d/ui-open.html", "xdg-open")
    }

    #[test]
    fn browser_takes_a_placeholder_a_list_or_a_plain_program() {
        let u = "file:///d/ui-open.html";
        assert_eq!(argvs(None), [["xdg-open", u]]);
        assert_eq!(argvs(Some(" ")), [["xdg-open", u]]);
        assert_eq!(argvs(Some("firefox")), [["firefox", u]]);
        assert_eq!(
            argvs(Some("firefox --new-tab %s")),
            [["firefox", "--new-tab", u]]
        );
        assert_eq!(
            argvs(Some("nobrowser:chromium %s:w3m")),
            vec![vec!["nobrowser", u], vec!["chromium", u], vec!["w3m", u]]
        );
        assert_eq!(
            argvs(Some("b --x=%%s%s")),
            [["b", format!("--x=%s{u}").as_str()]]
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_forwarding_file_is_private_and_names_the_address() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let old = data.join(FILE);
        std::fs::create_dir(&data).unwrap();
        std::fs::write(&old, "old").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
        let file = write_forwarder(&data, "http://127.1.2.3:9/?token=abc").unwrap();
        assert_eq!(deja_fs::mode(&file).map(|m| m & 0o777), Some(0o600));
        assert_eq!(deja_fs::mode(&data).map(|m| m & 0o777), Some(0o700));
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains("content=\"0; url=http://127.1.2.3:9/?token=abc\""),
            "{text}"
        );
    }
}
