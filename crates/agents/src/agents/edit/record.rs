//! The record `deja setup` keeps of its change to one file: what it wrote,
//! entry by entry, the file as it is without deja's entries, and where both
//! live in deja's data folder.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::yaml_read::Form;

/// What setup wrote for one entry, as the record keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(super) enum Wrote {
    /// A key set to `value`; `before` is the user's value it replaced.
    Key {
        path: Vec<String>,
        value: Value,
        before: Option<Value>,
        made: usize,
    },
    /// An item; `added` says whether setup added it (else the user had it).
    Item {
        path: Vec<String>,
        value: Value,
        added: bool,
        made: usize,
    },
    /// A hook group.
    Hook {
        path: Vec<String>,
        group: Value,
        made: usize,
    },
    /// A TOML block's text.
    Toml { text: String },
    /// aider's `read:` entry and how the key looked before.
    Yaml {
        entry: String,
        form: Form,
        original: Option<String>,
    },
}

/// What setup keeps to undo its change to one file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    /// The file.
    pub(crate) path: PathBuf,
    /// Whether setup created it (and the user has put nothing in it since).
    pub(crate) created: bool,
    /// The file without deja's entries as of the last write (absent when
    /// setup created it). Records of version 1 kept the file before the
    /// first setup instead.
    pub(crate) backup: Option<PathBuf>,
    /// SHA-256 of the bytes setup last wrote.
    pub(crate) written_sha256: String,
    /// The folders setup created for the file, deepest first.
    #[serde(default)]
    pub(crate) created_dirs: Vec<PathBuf>,
    /// 2 for records that keep what they wrote; absent in older ones.
    #[serde(default)]
    pub(crate) version: u32,
    /// What setup wrote, entry by entry.
    #[serde(default)]
    pub(super) wrote: Vec<Wrote>,
}

/// Where an agent's undo records and originals live: `<data>/setup/<agent>/`.
pub fn state_dir(data_dir: &Path, agent: &str) -> PathBuf {
    data_dir.join("setup").join(agent)
}

pub(super) fn record_path(state: &Path, file: &Path) -> PathBuf {
    state.join(format!("{}.json", key_of(file)))
}

pub(super) fn backup_path(state: &Path, file: &Path) -> PathBuf {
    state.join(format!("{}.orig", key_of(file)))
}

/// A file's name in the state folder: its name and a short hash of its path.
fn key_of(file: &Path) -> String {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().trim_start_matches('.').to_string())
        .unwrap_or_default();
    let hash = deja_model::sha256_hex(file.to_string_lossy().as_bytes());
    format!("{name}-{}", &hash[..12])
}

pub(super) fn read_record(state: &Path, file: &Path) -> Result<Option<Record>> {
    let p = record_path(state, file);
    match std::fs::read(&p) {
        Ok(b) => Ok(Some(serde_json::from_slice(&b).with_context(|| {
            format!("`{}` is not a record deja can read", p.display())
        })?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read `{}`", p.display())),
    }
}

/// Writes the record of `file` (the record first: a setup cut short after
/// it is still undone).
pub(crate) fn write_record(state: &Path, record: &Record) -> Result<()> {
    deja_store::create_private_dir(state)?;
    deja_fs::atomic_write(
        &record_path(state, &record.path),
        format!("{}\n", serde_json::to_string_pretty(record)?).as_bytes(),
    )?;
    Ok(())
}

/// A version-1 record of a file an earlier deja changed and recorded in a
/// place of its own (aider's): `backup` is the original it kept, copied
/// into `state`; `yaml` is its `read:` entry, how the key looked before and
/// the line it rewrote.
pub(crate) fn adopt_record(
    state: &Path,
    file: &Path,
    created: bool,
    backup: Option<&[u8]>,
    written_sha256: &str,
    yaml: Option<(String, Form, Option<String>)>,
) -> Result<()> {
    let backup = match backup {
        Some(b) => {
            deja_store::create_private_dir(state)?;
            let p = backup_path(state, file);
            deja_fs::atomic_write(&p, b)?;
            Some(p)
        }
        None => None,
    };
    let wrote = yaml
        .map(|(entry, form, original)| Wrote::Yaml {
            entry,
            form,
            original,
        })
        .into_iter()
        .collect();
    write_record(
        state,
        &Record {
            path: file.to_path_buf(),
            created,
            backup,
            written_sha256: written_sha256.to_string(),
            created_dirs: Vec::new(),
            version: 1,
            wrote,
        },
    )
}

/// Forgets the record of `file` (and its backup).
pub(super) fn forget(state: &Path, file: &Path, record: Option<&Record>) -> Result<()> {
    let p = record_path(state, file);
    if p.exists() {
        std::fs::remove_file(&p).with_context(|| format!("cannot remove `{}`", p.display()))?;
    }
    if let Some(b) = record.and_then(|r| r.backup.as_ref()) {
        let _ = std::fs::remove_file(b);
    }
    let _ = std::fs::remove_dir(state);
    Ok(())
}

/// The folders setup created for the file, when nothing else is there.
pub(super) fn remove_dirs(record: Option<&Record>) {
    for d in record.map_or(&[][..], |r| &r.created_dirs[..]) {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
    }
}
