//! `deja aider [ARGS...]`: records the project (its git root, else the current
//! directory) in `~/.config/deja/aider-projects`, where the aider reader looks
//! for histories, writes the project's own digest (`deja context`) to a file
//! of that project alone, which aider loads read-only (`--read`), runs aider
//! with ARGS unchanged, and when aider exits indexes what it wrote, so the
//! session that just ended is recallable at once. aider's exit status is
//! deja's; a signal that ended aider ends deja the same way. While aider runs,
//! deja ignores the terminal's interrupt and quit keys (they are aider's).
//!
//! Every project has its digest file (`<data>/context/aider/<hash>.md`), so an
//! aider started in one project never reads another's memory, even when two
//! start at once. The one file `deja setup aider` names in `~/.aider.conf.yml`
//! (`<data>/context/aider.md`) cannot know the project aider runs in, so it
//! holds no project's memory, only a note saying where that memory comes from.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::app::App;
use crate::ExitStatus;

/// `deja aider`.
#[derive(Debug, clap::Args)]
pub struct AiderArgs {
    /// Arguments passed to aider unchanged.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<std::ffi::OsString>,
}

/// The projects file the aider reader reads (the spec names this path).
pub fn projects_file(home: &Path) -> PathBuf {
    home.join(".config/deja/aider-projects")
}

/// The git root above `dir`, else `dir`.
pub fn project_dir(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(dir)
        .to_path_buf()
}

/// Adds `project` to the projects file unless it is listed. The read, the
/// check and the atomic write happen under an exclusive lock on a file
/// beside it, so two `deja aider` starting at once both get recorded.
pub fn record_project(file: &Path, project: &Path) -> Result<bool> {
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let _held = deja_fs::lock_exclusive(&dir.join(format!(".{name}.lock")))?;
    let existing = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read `{}`", file.display())),
    };
    let entry = project.to_string_lossy();
    if existing.lines().any(|l| l.trim() == entry) {
        return Ok(false);
    }
    let mut text = existing;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&entry);
    text.push('\n');
    deja_fs::atomic_write(file, text.as_bytes())?;
    Ok(true)
}

/// The file `deja setup aider` lists in `~/.aider.conf.yml`: aider started
/// directly reads it in whatever project it runs, so it holds no project's
/// memory (see [`write_note`]).
pub fn context_file(app: &App) -> PathBuf {
    app.paths.data_dir.join("context").join("aider.md")
}

/// The digest file of `project` alone, which `deja aider` hands aider with
/// `--read`: `<data>/context/aider/<16 hex of sha256 of the project dir>.md`.
pub fn project_context_file(app: &App, project: &Path) -> PathBuf {
    let hash = deja_model::sha256_hex(project.to_string_lossy().as_bytes());
    app.paths
        .data_dir
        .join("context")
        .join("aider")
        .join(format!("{}.md", &hash[..16]))
}

/// What [`context_file`] says.
const NOTE: &str = "## Memory of past sessions (from deja)\n\n\
deja keeps one digest per project. `deja aider` passes the digest of the project it starts in \
as its own read-only file; this file, read by every aider, holds no project's memory. \
Start aider with `deja aider` to load this project's memory, or search it with `deja recall QUERY`.\n";

/// Writes the note to [`context_file`] (private, renamed into place) unless
/// it is there already; an older deja kept a project's digest in that file.
pub fn write_note(app: &App) -> Result<PathBuf> {
    let file = context_file(app);
    if std::fs::read_to_string(&file).ok().as_deref() == Some(NOTE) {
        return Ok(file);
    }
    write_private(app, &file, NOTE)?;
    Ok(file)
}

/// Writes `text` to `file` under the data folder: folders private, the file
/// `0600`, renamed into place.
fn write_private(app: &App, file: &Path, text: &str) -> Result<()> {
    deja_store::create_private_dir(&app.paths.data_dir)?;
    let mut dirs: Vec<&Path> = file
        .ancestors()
        .skip(1)
        .take_while(|d| *d != app.paths.data_dir.as_path())
        .collect();
    dirs.reverse();
    for dir in dirs {
        deja_store::create_private_dir(dir)?;
    }
    deja_fs::atomic_write_with_mode(file, text.as_bytes(), deja_fs::PRIVATE)?;
    deja_store::make_private(file)?;
    Ok(())
}

/// Writes `project`'s digest to its [`project_context_file`] (private to the
/// user, renamed into place) and returns its path.
pub fn write_context(app: &App, project: &Path) -> Result<PathBuf> {
    let file = project_context_file(app, project);
    let digest = super::digest::digest_for(
        app,
        &project.to_string_lossy(),
        app.config.config.context.max_bytes,
    )?;
    write_private(app, &file, &digest.text)?;
    Ok(file)
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Runs the command.
pub fn run(app: &App, args: &[OsString]) -> Result<ExitStatus> {
    let program = if cfg!(windows) { "aider.exe" } else { "aider" };
    let Some(aider) = find_on_path(program) else {
        bail!("`aider` was not found on PATH\nhint: install it (for example `python -m pip install aider-install && aider-install`), then run `deja aider` again");
    };
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let project = project_dir(&cwd);
    record_project(&projects_file(&app.paths.home), &project)?;

    let mut cmd = std::process::Command::new(&aider);
    if app.config.config.context.aider {
        // Every aider session starts with its project's memory.
        let file = write_context(app, &project)?;
        cmd.arg("--read").arg(file);
    }
    if context_file(app).exists() {
        // Wired by `deja setup aider`: that file must not hold a project's digest.
        write_note(app)?;
    }
    cmd.args(args);
    let status =
        run_child(&mut cmd).with_context(|| format!("cannot start `{}`", aider.display()))?;
    index_after(app);
    finish_like(status)
}

/// Runs aider in the foreground: Ctrl-C and Ctrl-\ reach it (the whole
/// terminal group gets them) and not deja, which waits to index afterwards.
#[cfg(unix)]
fn run_child(cmd: &mut std::process::Command) -> std::io::Result<std::process::ExitStatus> {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls, in the child between fork and exec:
    // aider gets the default dispositions back.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    // SAFETY: ignoring two signals in this process; no handler runs.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGQUIT, libc::SIG_IGN);
    }
    let status = child.wait();
    // SAFETY: restoring the default dispositions.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGQUIT, libc::SIG_DFL);
    }
    status
}

#[cfg(not(unix))]
fn run_child(cmd: &mut std::process::Command) -> std::io::Result<std::process::ExitStatus> {
    cmd.status()
}

/// Indexes what aider wrote, with a one-line account on stderr. A running
/// index may already have passed aider's file, so this one waits for it
/// (up to `index.lock_wait_secs`) and then reads the file itself; a failure
/// is said, never fatal.
fn index_after(app: &App) {
    let wait = crate::lock::Wait::Up(std::time::Duration::from_secs(
        app.config.config.index.lock_wait_secs,
    ));
    match crate::indexing::index_all(app, wait, &mut deja_index::Quiet) {
        Ok(outcome) => {
            let added = outcome.report.applied.messages_added;
            if added > 0 {
                eprintln!(
                    "deja: indexed {} from this session",
                    crate::output::plural(added, "new message", "new messages")
                );
            }
        }
        Err(e) => crate::output::warn(&format!(
            "this aider session is not indexed yet: {e:#}\nhint: `deja index` reads it"
        )),
    }
}

/// deja's exit as aider's: its code, or the signal that ended it.
fn finish_like(status: std::process::ExitStatus) -> Result<ExitStatus> {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            // SAFETY: default disposition, then the same signal to ourselves.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
                libc::raise(signal);
            }
        }
    }
    crate::exit(status.code().unwrap_or(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_once_and_keeps_others() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cfg/aider-projects");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "# mine\n/a").unwrap();
        assert!(record_project(&file, Path::new("/b")).unwrap());
        assert!(!record_project(&file, Path::new("/b")).unwrap());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "# mine\n/a\n/b\n");
    }

    #[test]
    fn projects_recorded_at_once_are_all_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cfg/aider-projects");
        let threads: Vec<_> = (0..12)
            .map(|i| {
                let file = file.clone();
                std::thread::spawn(move || {
                    record_project(&file, Path::new(&format!("/p/{i}"))).unwrap()
                })
            })
            .collect();
        for t in threads {
            assert!(t.join().unwrap());
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort();
        let mut want: Vec<String> = (0..12).map(|i| format!("/p/{i}")).collect();
        want.sort();
        assert_eq!(lines, want);
    }

    #[test]
    fn project_is_the_git_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("repo/.git")).unwrap();
        std::fs::create_dir_all(dir.path().join("repo/src/deep")).unwrap();
        assert_eq!(
            project_dir(&dir.path().join("repo/src/deep")),
            dir.path().join("repo")
        );
        assert_eq!(
            project_dir(&dir.path().join("repo")),
            dir.path().join("repo")
        );
    }
}
