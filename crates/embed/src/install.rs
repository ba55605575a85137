//! The command that installs the model and runtime, as this deja can name
//! it: the script in the source checkout a cargo build runs from, the copy
//! `scripts/install` puts beside an installation's readers
//! (`PREFIX/lib/deja/fetch-model`), or, for a deja installed some other
//! way, the script's name in deja's source.

use std::path::{Path, PathBuf};

/// The script's name below a source checkout.
const IN_SOURCE: &str = "scripts/fetch-model";
/// Its place in an installation, below the folder above the program's.
const INSTALLED: &str = "lib/deja/fetch-model";

/// The command that installs the model and runtime for the running deja,
/// ready to be shown after "run".
pub fn fetch_model_command() -> String {
    let exe = std::env::current_exe().ok();
    let exe = exe.as_deref().map(|e| e.canonicalize().unwrap_or(e.into()));
    command_for(exe.as_deref())
}

/// [`fetch_model_command`], asking for the multilingual model too when
/// `model_dir` is its folder.
pub fn fetch_model_command_for(model_dir: &Path) -> String {
    with_multilingual(fetch_model_command(), model_dir)
}

/// `command` with `--multilingual` when `model_dir` is the multilingual
/// model's folder.
fn with_multilingual(command: String, model_dir: &Path) -> String {
    if model_dir
        .file_name()
        .is_none_or(|n| n != crate::choice::MULTILINGUAL_MODEL)
    {
        return command;
    }
    const SOURCE: &str = " (from deja's source)";
    match command.strip_suffix(SOURCE) {
        Some(c) => format!("{c} --multilingual{SOURCE}"),
        None => format!("{command} --multilingual"),
    }
}

/// [`fetch_model_command`] for the program at `exe`.
pub fn command_for(exe: Option<&Path>) -> String {
    match exe.and_then(script_for) {
        Some(script) => script.display().to_string(),
        None => format!("{IN_SOURCE} (from deja's source)"),
    }
}

/// The script that exists for the program at `exe`: the installation's
/// copy, else the checkout's when `exe` is in a cargo build folder
/// (`target/release`, `target/<triple>/debug`).
fn script_for(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    let installed = dir.parent()?.join(INSTALLED);
    if installed.is_file() {
        return Some(installed);
    }
    dir.ancestors()
        .take(4)
        .find(|d| d.file_name().is_some_and(|n| n == "target"))
        .and_then(Path::parent)
        .map(|root| root.join(IN_SOURCE))
        .filter(|s| s.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_one_that_exists_for_this_program() {
        let dir = tempfile::tempdir().unwrap();
        let touch = |rel: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "").unwrap();
            p
        };
        // Installed: the copy beside the readers.
        let script = touch("prefix/lib/deja/fetch-model");
        let exe = touch("prefix/bin/deja");
        assert_eq!(command_for(Some(&exe)), script.display().to_string());
        // A cargo build: the checkout's script.
        let script = touch("src/scripts/fetch-model");
        for exe in [
            "src/target/release/deja",
            "src/target/x86_64-linux/debug/deja",
        ] {
            let exe = touch(exe);
            assert_eq!(command_for(Some(&exe)), script.display().to_string());
        }
        // Elsewhere: the script's name in the source.
        let exe = touch("opt/bin/deja");
        assert_eq!(
            command_for(Some(&exe)),
            "scripts/fetch-model (from deja's source)"
        );
        assert_eq!(
            command_for(None),
            "scripts/fetch-model (from deja's source)"
        );
    }

    #[test]
    fn the_multilingual_model_is_asked_for_by_its_flag() {
        let e5 = Path::new("/d/models/multilingual-e5-small-int8");
        let minilm = Path::new("/d/models/all-MiniLM-L6-v2-int8");
        assert_eq!(
            with_multilingual("scripts/fetch-model (from deja's source)".into(), e5),
            "scripts/fetch-model --multilingual (from deja's source)"
        );
        assert_eq!(
            with_multilingual("/p/lib/deja/fetch-model".into(), e5),
            "/p/lib/deja/fetch-model --multilingual"
        );
        assert_eq!(
            with_multilingual("/p/lib/deja/fetch-model".into(), minilm),
            "/p/lib/deja/fetch-model"
        );
    }
}
