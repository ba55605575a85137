//! aider: deja's file (a note saying that `deja aider` brings each project's
//! own digest; aider started directly reads it in every project) is added to
//! `read:` in `~/.aider.conf.yml`, a line-level edit that keeps every other
//! key and comment, in each form `read:` can have (absent, a block list, a
//! one-line flow list, a single value); forms it could not undo exactly are
//! refused. The file goes through [`edit`] as every agent's does (its YAML
//! edit is one kind of change there): `--undo` gives back the file as it was
//! without deja's entry, or, when the file changed since, takes back deja's
//! change alone (see [`edit::yaml_read`]), never an entry of the user's,
//! and refuses when it cannot tell. A record and backup an earlier deja kept
//! (`<data>/setup/aider.json`, `~/.aider.conf.yml.deja-backup`) are moved
//! into that record first.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::edit::yaml_read::Form;
use super::edit::{self, FileWiring, Kind};
use super::{Agent, Env, Provides};
use crate::app::App;

/// aider's per-user config file.
pub fn aider_conf(home: &Path) -> PathBuf {
    home.join(".aider.conf.yml")
}

/// Where an earlier deja kept its record of the aider change
/// (`<data>/setup/aider.json`), before aider went through [`edit`] as
/// every agent does.
fn old_record(app: &App) -> PathBuf {
    app.paths.data_dir.join("setup").join("aider.json")
}

/// Where an earlier deja kept the original of `~/.aider.conf.yml`.
fn old_backup(conf: &Path) -> PathBuf {
    conf.with_file_name(".aider.conf.yml.deja-backup")
}

/// What an earlier deja recorded to undo its aider change.
#[derive(Debug, Clone, serde::Deserialize)]
struct OldRecord {
    /// Whether setup created `~/.aider.conf.yml` (else it backed it up).
    #[serde(default)]
    created: bool,
    /// The SHA-256 of what setup wrote.
    #[serde(default)]
    written_sha256: String,
    /// deja's entry in `read:`.
    #[serde(default)]
    entry: Option<String>,
    /// How `read:` looked before.
    #[serde(default)]
    form: Option<Form>,
    /// The `read:` line as it was, for a flow list or a single value.
    #[serde(default)]
    original: Option<String>,
}

/// Moves an earlier deja's record and backup (the backup was kept in the
/// home folder) into the one record every agent's files have, so that undo
/// takes back exactly what that deja did.
fn migrate(env: &Env, conf: &Path, entry: &str) -> Result<()> {
    let old = old_record(env.app);
    let text = match std::fs::read_to_string(&old) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot read `{}`", old.display())),
    };
    let record: OldRecord = serde_json::from_str(&text)
        .with_context(|| format!("`{}` is not what setup wrote", old.display()))?;
    let backup = old_backup(conf);
    let bytes = match std::fs::read(&backup) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read `{}`", backup.display())),
    };
    edit::adopt_record(
        &env.state("aider"),
        conf,
        record.created,
        bytes.as_deref(),
        &record.written_sha256,
        record.form.map(|form| {
            let entry = record.entry.unwrap_or_else(|| entry.to_string());
            (entry, form, record.original)
        }),
    )?;
    if bytes.is_some() {
        std::fs::remove_file(&backup)
            .with_context(|| format!("cannot remove `{}`", backup.display()))?;
    }
    std::fs::remove_file(&old).with_context(|| format!("cannot remove `{}`", old.display()))?;
    Ok(())
}

/// deja's file in `read:`.
fn entry(env: &Env) -> String {
    crate::commands::aider::context_file(env.app)
        .to_string_lossy()
        .into_owned()
}

/// aider.
pub struct Aider;

impl Agent for Aider {
    fn name(&self) -> &'static str {
        "aider"
    }
    fn title(&self) -> &'static str {
        "aider"
    }
    fn provides(&self) -> Provides {
        Provides {
            mcp: false,
            session_start: Some("`deja aider` passes the project's digest; aider started directly reads deja's note (`read:`)"),
            failure_notes: false,
        }
    }
    fn found(&self, env: &Env) -> Option<String> {
        let conf = aider_conf(env.home());
        if conf.is_file() {
            return Some(conf.display().to_string());
        }
        super::on_path("aider").map(|p| format!("{} on PATH", p.display()))
    }
    fn files(&self, env: &Env) -> Result<Vec<FileWiring>> {
        Ok(vec![FileWiring {
            path: aider_conf(env.home()),
            kind: Kind::YamlRead { entry: entry(env) },
        }])
    }
    fn apply(&self, env: &Env, dry_run: bool) -> Result<Vec<String>> {
        let [file] = &self.files(env)?[..] else {
            return Ok(Vec::new());
        };
        if !dry_run {
            migrate(env, &file.path, &entry(env))?;
        }
        let changes = edit::apply(file, &env.state(self.name()), dry_run)?;
        if !dry_run {
            // The file aider will read exists from now on.
            crate::commands::aider::write_note(env.app)?;
        }
        Ok(changes)
    }
    fn undo(&self, env: &Env, dry_run: bool) -> Result<Vec<String>> {
        let [file] = &self.files(env)?[..] else {
            return Ok(Vec::new());
        };
        if !dry_run {
            migrate(env, &file.path, &entry(env))?;
        }
        edit::undo(file, &env.state(self.name()), dry_run)
    }
}
