//! The one mechanism by which `deja setup` changes an agent's files, and
//! takes the change back.
//!
//! A [`FileWiring`] says what deja adds to one file: keys it owns in a JSON
//! file (`mcpServers.deja`), items of its own in a list of the user's
//! (`permissions.allow`), hook commands in the agent's hook groups, a block
//! of tables appended to a TOML file, an entry in aider's YAML `read:` list,
//! or a whole file of its own. Every change is spliced into the file's text,
//! so what deja does not touch keeps its bytes.
//!
//! Applying it keeps a record in deja's data folder: the exact values it
//! wrote (and a key's value it replaced), the containers it created, the
//! hash of what it wrote, and the file as it is without deja's entries.
//! Setting up again first takes the earlier entries out of the file as it is
//! now, so the record always describes the last setup and the user's edits
//! in between stay. Undoing gives back that file byte for byte when the file
//! is as setup left it, and otherwise takes out deja's entries alone: those
//! equal to what it wrote, or of deja's shape (an earlier deja at another
//! path or with other variables), never anything else. When an entry of
//! deja's cannot be taken out, undo says so and keeps its record.
//!
//! Every write is atomic, keeps the file's mode, and happens only when the
//! file is still as it was read (an agent that rewrites its own settings
//! while setup runs makes setup read the file again).

mod file;
mod json_entries;
mod record;
mod toml_block;
pub mod yaml_read;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use self::file::{read_file, text_of, write_checked};
use self::json_entries::{json_leftovers, json_with, json_without};
pub(crate) use self::record::adopt_record;
pub use self::record::state_dir;
use self::record::{backup_path, forget, read_record, remove_dirs, write_record, Record, Wrote};
use self::toml_block::{toml_with, toml_without};
use super::json_text::Doc;

/// What deja adds to one file.
#[derive(Debug, Clone)]
pub struct FileWiring {
    /// The file.
    pub path: PathBuf,
    /// What goes in it.
    pub kind: Kind,
}

/// The shape of a file and deja's part in it.
#[derive(Debug, Clone)]
pub enum Kind {
    /// A JSON file and deja's entries in it.
    Json(Vec<Entry>),
    /// A TOML file, and a block of tables deja appends to it (whole lines,
    /// its first line a comment that names deja); `table` is the first
    /// table's dotted name, which must not be in the file already, and every
    /// table of the block is it or below it.
    TomlBlock {
        /// The dotted name of the block's first table (`mcp_servers.deja`).
        table: Vec<&'static str>,
        /// The block's text, ending with a newline.
        text: String,
    },
    /// aider's YAML config and deja's file in its top-level `read:` list.
    YamlRead {
        /// deja's entry in `read:`.
        entry: String,
    },
    /// A file deja owns whole (a plugin or extension file of the agent's).
    Owned {
        /// The first line of every version deja writes, where the format
        /// has comments; without one, a file is deja's when it is as deja
        /// wrote it (or `legacy` says so).
        marker: Option<&'static str>,
        /// The file's text.
        text: String,
        /// A file beside it whose presence says an earlier deja wrote this
        /// one (kept from versions that marked a folder that way).
        legacy: Option<PathBuf>,
    },
}

/// One of deja's entries in a JSON settings file.
#[derive(Debug, Clone)]
pub enum Entry {
    /// A key deja owns, set to a value.
    Key {
        /// Object keys from the top.
        path: Vec<&'static str>,
        /// deja's value.
        value: Value,
        /// Whether a value has deja's shape (any deja's, wherever it is).
        ours: fn(&Value) -> bool,
    },
    /// deja's item in a list the user may have items in.
    Item {
        /// Object keys from the top to the list.
        path: Vec<&'static str>,
        /// deja's item.
        value: Value,
        /// Whether an item is deja's (this version's or an earlier one's).
        ours: fn(&Value) -> bool,
    },
    /// deja's hook group in a list of hook groups in the Claude Code form
    /// (`{"matcher": …, "hooks": [{"type": "command", "command": …}]}`):
    /// deja's commands are told by their program, inside any group, and a
    /// group of the user's that holds one keeps the user's hooks.
    Hook {
        /// Object keys from the top to the list of groups.
        path: Vec<&'static str>,
        /// deja's group.
        group: Value,
        /// Whether a hook command is deja's.
        ours: fn(&str) -> bool,
    },
}

/// Whether an owned file `current` is deja's: it carries the marker, is as
/// this deja writes it, is what setup last wrote (`written`), or sits beside
/// an earlier deja's marker file.
fn owned_is_ours(
    current: &[u8],
    marker: Option<&str>,
    text: &str,
    legacy: Option<&Path>,
    written: Option<&str>,
) -> bool {
    let first = std::str::from_utf8(current)
        .ok()
        .and_then(|t| t.lines().next());
    marker.is_some_and(|m| first == Some(m))
        || current == text.as_bytes()
        || written.is_some_and(|w| deja_model::sha256_hex(current) == w)
        || legacy.is_some_and(Path::exists)
}

/// The file's text with deja's part in it (`text` when it is there), and
/// what was written. `exists`: whether the file is there.
fn with(
    w: &FileWiring,
    text: &str,
    exists: bool,
    record: Option<&Record>,
) -> Result<(String, Vec<Wrote>)> {
    match &w.kind {
        Kind::Json(entries) => json_with(&w.path, text, entries),
        Kind::TomlBlock { table, text: block } => {
            let new = toml_with(&w.path, text, table, block)?.unwrap_or_else(|| text.to_string());
            Ok((
                new,
                vec![Wrote::Toml {
                    text: block.clone(),
                }],
            ))
        }
        Kind::YamlRead { entry } => {
            let edit = yaml_read::aider_conf_with(text, entry).map_err(|why| {
                anyhow::anyhow!(
                    "`{}`: {why}; setup leaves it alone (it could not undo the change exactly)\nhint: make `read:` a plain list (`read:` then `  - FILE` lines), or add `{entry}` to it by hand",
                    w.path.display()
                )
            })?;
            Ok(match edit {
                None => (text.to_string(), Vec::new()),
                Some(e) => (
                    e.text,
                    vec![Wrote::Yaml {
                        entry: entry.clone(),
                        form: e.form,
                        original: e.original,
                    }],
                ),
            })
        }
        Kind::Owned {
            marker,
            text: own,
            legacy,
        } => {
            let mine = record.is_some()
                || owned_is_ours(text.as_bytes(), *marker, own, legacy.as_deref(), None);
            if exists && !mine {
                bail!(
                    "`{}` exists and was not written by deja; setup leaves it alone (move it away, then run setup again)",
                    w.path.display()
                );
            }
            Ok((own.clone(), Vec::new()))
        }
    }
}

/// The file's text without deja's part; `None`: the file goes (deja's own).
fn without(
    w: &FileWiring,
    text: &str,
    record: Option<&Record>,
    original: Option<&str>,
) -> Result<Option<String>> {
    let wrote = record.map_or(&[][..], |r| &r.wrote[..]);
    match &w.kind {
        Kind::Json(entries) => json_without(&w.path, text, entries, wrote, original).map(Some),
        Kind::TomlBlock { table, text: block } => {
            let recorded = wrote.iter().find_map(|x| match x {
                Wrote::Toml { text } => Some(text.as_str()),
                _ => None,
            });
            let out = recorded
                .and_then(|r| toml_without(text, r, table))
                .or_else(|| toml_without(text, block, table));
            Ok(Some(out.unwrap_or_else(|| text.to_string())))
        }
        Kind::YamlRead { entry } => {
            let (entry, form, was) = wrote
                .iter()
                .find_map(|x| match x {
                    Wrote::Yaml {
                        entry,
                        form,
                        original,
                    } => Some((entry.as_str(), Some(*form), original.as_deref())),
                    _ => None,
                })
                .unwrap_or((entry.as_str(), None, None));
            yaml_read::aider_conf_without(text, entry, form, was)
                .map(Some)
                .map_err(|why| {
                    anyhow::anyhow!(
                        "cannot undo `deja setup` in `{}` safely: {why}; the file is left as it is\nhint: remove `{entry}` from `read:` by hand, then run the undo again",
                        w.path.display()
                    )
                })
        }
        Kind::Owned {
            marker,
            text: own,
            legacy,
        } => {
            let written = record.map(|r| r.written_sha256.as_str());
            if owned_is_ours(text.as_bytes(), *marker, own, legacy.as_deref(), written) {
                return Ok(None);
            }
            if record.is_some() {
                bail!(
                    "`{}` was changed since deja wrote it; it is left as it is\nhint: remove it by hand if it is no longer wanted, then run the undo again",
                    w.path.display()
                );
            }
            bail!(
                "`{}` was not written by deja setup; it is left alone",
                w.path.display()
            )
        }
    }
}

/// What of deja's is still in `text`, for undo to report.
fn leftovers(w: &FileWiring, text: &str) -> Result<Vec<String>> {
    match &w.kind {
        Kind::Json(entries) => json_leftovers(&w.path, text, entries),
        Kind::TomlBlock { table, .. } => {
            let Ok(parsed) = toml::from_str::<toml::Table>(text) else {
                return Ok(Vec::new());
            };
            let mut at = Some(&parsed);
            for k in table {
                at = at.and_then(|t| t.get(*k)).and_then(toml::Value::as_table);
            }
            let deja = at.is_some_and(|t| {
                let args = t.get("args").and_then(toml::Value::as_array);
                let command = t.get("command").and_then(toml::Value::as_str);
                args.is_some_and(|a| a.len() == 1 && a[0].as_str() == Some("mcp"))
                    && command.is_some_and(super::is_deja_program)
            });
            Ok(if deja {
                vec![format!("`[{}]`", table.join("."))]
            } else {
                Vec::new()
            })
        }
        Kind::YamlRead { entry } => Ok(if text.contains(entry.as_str()) {
            vec![format!("`{entry}` in `read:`")]
        } else {
            Vec::new()
        }),
        Kind::Owned { .. } => Ok(Vec::new()),
    }
}

/// Whether `text` holds nothing of the user's (a file setup created).
fn trivial(w: &FileWiring, text: &str) -> bool {
    match &w.kind {
        Kind::Json(_) => Doc::parse(text)
            .ok()
            .and_then(|d| d.to_value())
            .is_some_and(|v| v.as_object().is_some_and(|o| o.is_empty())),
        _ => text.trim().is_empty(),
    }
}

/// How often a file that changes under setup is read again.
const TRIES: usize = 5;

fn kept_changing(path: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "`{}` kept changing while setup ran; it is left as it was\nhint: quit the agent (it rewrites its settings while it runs), then run setup again",
        path.display()
    )
}

/// Whether deja's part is in the file as this setup writes it.
pub fn is_wired(w: &FileWiring) -> Result<bool> {
    let current = read_file(&w.path)?;
    let Some(bytes) = &current else {
        return Ok(false);
    };
    if let Kind::Owned { text, .. } = &w.kind {
        return Ok(bytes == text.as_bytes());
    }
    let text = text_of(&w.path, bytes)?;
    let (new, _) = with(w, text, true, None)?;
    Ok(new == text)
}

fn describe(w: &FileWiring, exists: bool) -> String {
    match (&w.kind, exists) {
        (Kind::Owned { .. }, _) => format!("write {}", w.path.display()),
        (_, false) => format!("create {}", w.path.display()),
        (Kind::Json(entries), true) => format!(
            "add {} to {}",
            entries
                .iter()
                .map(|e| match e {
                    Entry::Key { path, .. } => format!("`{}`", path.join(".")),
                    Entry::Item { path, value, .. } => format!("{value} to `{}`", path.join(".")),
                    Entry::Hook { path, .. } => format!("a hook to `{}`", path.join(".")),
                })
                .collect::<Vec<_>>()
                .join(", "),
            w.path.display()
        ),
        (Kind::TomlBlock { table, .. }, true) => {
            format!("add `[{}]` to {}", table.join("."), w.path.display())
        }
        (Kind::YamlRead { entry }, true) => {
            format!("add `{entry}` to `read:` in {}", w.path.display())
        }
    }
}

/// The record's original, for records of version 1 (the file before the
/// first setup).
fn v1_original(w: &FileWiring, record: Option<&Record>) -> Result<Option<String>> {
    let Some(b) = record
        .filter(|r| r.version < 2)
        .and_then(|r| r.backup.as_ref())
    else {
        return Ok(None);
    };
    let bytes = std::fs::read(b).with_context(|| {
        format!(
            "cannot read `{}`, the original of `{}`",
            b.display(),
            w.path.display()
        )
    })?;
    Ok(String::from_utf8(bytes).ok())
}

/// Adds deja's part to the file; returns what changed (nothing when it was
/// wired). With `dry_run`, only says.
pub fn apply(w: &FileWiring, state: &Path, dry_run: bool) -> Result<Vec<String>> {
    for _ in 0..TRIES {
        let record = read_record(state, &w.path)?;
        let current = read_file(&w.path)?;
        let text = match &current {
            Some(b) => text_of(&w.path, b)?,
            None => "",
        };
        // deja's entries come out first (the last setup's, and any of an
        // earlier deja's): what the user changed since stays, and the record
        // describes this setup alone.
        let base = match &current {
            None => String::new(),
            Some(_) if record.is_none() && matches!(w.kind, Kind::Owned { .. }) => text.to_string(),
            Some(_) => {
                let original = v1_original(w, record.as_ref())?;
                without(w, text, record.as_ref(), original.as_deref())?.unwrap_or_default()
            }
        };
        let (new, wrote) = with(w, &base, current.is_some(), record.as_ref())?;
        if current.is_some() && new == text {
            return Ok(Vec::new());
        }
        let what = describe(w, current.is_some());
        if dry_run {
            return Ok(vec![what]);
        }
        let created = current.is_none()
            || record
                .as_ref()
                .is_some_and(|r| r.created && trivial(w, &base));
        deja_store::create_private_dir(state)?;
        let backup = if created {
            None
        } else {
            let p = backup_path(state, &w.path);
            deja_fs::atomic_write(&p, base.as_bytes())?;
            Some(p)
        };
        let created_dirs = match &record {
            Some(r) => r.created_dirs.clone(),
            None => {
                let mut dirs = Vec::new();
                let mut dir = w.path.parent();
                while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
                    dirs.push(d.to_path_buf());
                    dir = d.parent();
                }
                dirs
            }
        };
        write_record(
            state,
            &Record {
                path: w.path.clone(),
                created,
                backup,
                written_sha256: deja_model::sha256_hex(new.as_bytes()),
                created_dirs,
                version: 2,
                wrote,
            },
        )?;
        if write_checked(&w.path, current.as_deref(), Some(new.as_bytes()))? {
            return Ok(vec![what]);
        }
    }
    Err(kept_changing(&w.path))
}

/// Takes deja's part out of the file; returns what changed. With
/// `dry_run`, only says. When something of deja's cannot be taken out,
/// says so (an error) and keeps the record.
pub fn undo(w: &FileWiring, state: &Path, dry_run: bool) -> Result<Vec<String>> {
    for _ in 0..TRIES {
        let record = read_record(state, &w.path)?;
        let current = read_file(&w.path)?;
        let Some(cur) = current.as_deref() else {
            if !dry_run {
                forget(state, &w.path, record.as_ref())?;
                remove_dirs(record.as_ref());
            }
            return Ok(Vec::new());
        };
        // As setup left it: the file as it was without deja comes back.
        // (Records of version 1 kept the file before the first setup, which
        // may predate edits made between two setups: their entries are
        // taken out instead.)
        if let Some(r) = record
            .as_ref()
            .filter(|r| r.version >= 2 && deja_model::sha256_hex(cur) == r.written_sha256)
        {
            let (what, new) = if r.created {
                (
                    format!("remove {} (setup created it)", w.path.display()),
                    None,
                )
            } else {
                let b = r.backup.as_ref().context("the record names no backup")?;
                let bytes = std::fs::read(b).with_context(|| {
                    format!(
                        "cannot read `{}`, the original of `{}`",
                        b.display(),
                        w.path.display()
                    )
                })?;
                (
                    format!(
                        "restore {} as it was without deja's entries",
                        w.path.display()
                    ),
                    Some(bytes),
                )
            };
            if dry_run {
                return Ok(vec![what]);
            }
            if !write_checked(&w.path, Some(cur), new.as_deref())? {
                continue;
            }
            if new.is_none() {
                remove_dirs(Some(r));
            }
            forget(state, &w.path, Some(r))?;
            return Ok(vec![what]);
        }
        // Changed since: deja's part alone comes out.
        let text = text_of(&w.path, cur)?;
        let original = v1_original(w, record.as_ref())?;
        let new = without(w, text, record.as_ref(), original.as_deref())?;
        let new = new.filter(|n| !(record.as_ref().is_some_and(|r| r.created) && trivial(w, n)));
        let left = match &new {
            Some(n) => leftovers(w, n)?,
            None => Vec::new(),
        };
        let changed = new.as_deref() != Some(text);
        let what = match &new {
            None => format!("remove {}", w.path.display()),
            Some(_) => format!(
                "take deja's entries out of {} (edited since setup; the rest is kept)",
                w.path.display()
            ),
        };
        if dry_run {
            return Ok(if changed { vec![what] } else { Vec::new() });
        }
        if changed && !write_checked(&w.path, Some(cur), new.as_deref().map(str::as_bytes))? {
            continue;
        }
        if !left.is_empty() {
            bail!(
                "`{}` still holds {} of deja's, which undo could not take out; deja keeps its record of the file\nhint: remove {} by hand, then run the undo again",
                w.path.display(),
                left.join(", "),
                if left.len() == 1 { "it" } else { "them" }
            );
        }
        if new.is_none() {
            remove_dirs(record.as_ref());
        }
        forget(state, &w.path, record.as_ref())?;
        return Ok(if changed { vec![what] } else { Vec::new() });
    }
    Err(kept_changing(&w.path))
}

#[cfg(test)]
mod tests {
    use super::record::record_path;
    use super::*;
    use serde_json::json;

    fn ours_command(c: &str) -> bool {
        super::super::is_deja_command(c)
    }

    fn wiring(path: PathBuf, exe: &str) -> FileWiring {
        FileWiring {
            path,
            kind: Kind::Json(vec![
                Entry::Key {
                    path: vec!["mcpServers", "deja"],
                    value: json!({"command": exe, "args": ["mcp"]}),
                    ours: super::super::is_deja_server,
                },
                Entry::Item {
                    path: vec!["permissions", "allow"],
                    value: json!("mcp__deja__recall"),
                    ours: |v| v == "mcp__deja" || v == "mcp__deja__recall",
                },
                Entry::Hook {
                    path: vec!["hooks", "SessionStart"],
                    group: json!({"hooks": [{"type": "command", "command": format!("{exe} context --hook claude")}]}),
                    ours: ours_command,
                },
            ]),
        }
    }

    fn read(p: &Path) -> String {
        std::fs::read_to_string(p).unwrap()
    }

    fn value(p: &Path) -> Value {
        serde_json::from_str(&read(p)).unwrap()
    }

    #[test]
    fn apply_then_undo_gives_the_file_back_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        let state = dir.path().join("state");
        let original = "{\n    \"zeta\": 1,\n    \"hooks\": {\"SessionStart\": [{\"hooks\": []}]},\n    \"alpha\": \"x\"\n}";
        std::fs::write(&file, original).unwrap();
        let w = wiring(file.clone(), "/bin/deja");
        assert!(!is_wired(&w).unwrap());
        assert_eq!(apply(&w, &state, true).unwrap().len(), 1);
        assert_eq!(read(&file), original, "dry run wrote");
        apply(&w, &state, false).unwrap();
        let wired = read(&file);
        let v = value(&file);
        assert_eq!(v["mcpServers"]["deja"]["command"], "/bin/deja");
        assert_eq!(v["hooks"]["SessionStart"].as_array().unwrap().len(), 2);
        assert!(wired.starts_with(
            "{\n    \"zeta\": 1,\n    \"hooks\": {\"SessionStart\": [{\"hooks\": []}, "
        ));
        assert!(is_wired(&w).unwrap());
        assert!(
            apply(&w, &state, false).unwrap().is_empty(),
            "not idempotent"
        );
        undo(&w, &state, false).unwrap();
        assert_eq!(read(&file), original);
        assert!(!state.exists(), "state left behind");
    }

    #[test]
    fn a_second_setup_after_an_edit_then_undo_keeps_the_edit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        let state = dir.path().join("state");
        std::fs::write(&file, "{\"permissions\": {\"allow\": [\"Bash(ls)\"]}}\n").unwrap();
        apply(&wiring(file.clone(), "/one/deja"), &state, false).unwrap();
        // The user edits, then a deja at another path sets up again.
        let edited = read(&file).replace("\"Bash(ls)\"", "\"Bash(ls)\", \"Bash(make test)\"");
        std::fs::write(&file, edited.replacen('{', "{\"model\": \"opus\", ", 1)).unwrap();
        apply(&wiring(file.clone(), "/two/deja"), &state, false).unwrap();
        assert_eq!(value(&file)["mcpServers"]["deja"]["command"], "/two/deja");
        undo(&wiring(file.clone(), "/two/deja"), &state, false).unwrap();
        assert_eq!(
            read(&file),
            "{\"model\": \"opus\", \"permissions\": {\"allow\": [\"Bash(ls)\", \"Bash(make test)\"]}}\n"
        );
        // A file setup created, edited, set up again: undo keeps the edit.
        let created = dir.path().join("new/settings.json");
        apply(&wiring(created.clone(), "/one/deja"), &state, false).unwrap();
        let text = read(&created).replacen('{', "{\n  \"mine\": true,", 1);
        std::fs::write(&created, text).unwrap();
        apply(&wiring(created.clone(), "/two/deja"), &state, false).unwrap();
        undo(&wiring(created.clone(), "/two/deja"), &state, false).unwrap();
        assert_eq!(value(&created), json!({"mine": true}));
    }

    #[test]
    fn undo_after_deja_moved_takes_its_entries_out_and_says_when_it_cannot() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".claude.json");
        let state = dir.path().join("state");
        std::fs::write(&file, "{\"numStartups\": 1}").unwrap();
        apply(&wiring(file.clone(), "/one/deja"), &state, false).unwrap();
        // The agent rewrites its file; deja is now elsewhere.
        std::fs::write(
            &file,
            read(&file).replace("\"numStartups\": 1", "\"numStartups\": 2"),
        )
        .unwrap();
        undo(&wiring(file.clone(), "/two/deja"), &state, false).unwrap();
        assert_eq!(read(&file), "{\"numStartups\": 2}");
        assert!(!state.exists());
        // Without a record (an earlier deja's), deja's shape is enough.
        std::fs::write(
            &file,
            "{\"mcpServers\": {\"deja\": {\"command\": \"/gone/deja\", \"args\": [\"mcp\"], \"env\": {\"DEJA_HOME\": \"/x\"}}, \"other\": {}}}",
        )
        .unwrap();
        undo(&wiring(file.clone(), "/two/deja"), &state, false).unwrap();
        assert_eq!(read(&file), "{\"mcpServers\": {\"other\": {}}}");
        // An entry undo cannot take out (a repeated key) is named, and the
        // record stays.
        std::fs::write(&file, "{}").unwrap();
        apply(&wiring(file.clone(), "/one/deja"), &state, false).unwrap();
        let twice = read(&file).replace(
            "\"mcpServers\": {",
            "\"mcpServers\": {\"deja\": {\"command\": \"/a/deja\", \"args\": [\"mcp\"]},",
        );
        std::fs::write(&file, &twice).unwrap();
        let err = undo(&wiring(file.clone(), "/one/deja"), &state, false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("still holds `mcpServers.deja`"), "{err}");
        assert!(record_path(&state, &file).exists(), "the record went");
    }

    #[test]
    fn a_hook_group_shared_with_the_users_hooks_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        let state = dir.path().join("state");
        let original = r#"{"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "~/bin/notify-start"}, {"type": "command", "command": "DEJA_HOME='/o' '/opt/old/deja' context --hook claude"}]}, {"hooks": [{"type": "command", "command": "echo ' context --hook '"}]}]}}"#;
        std::fs::write(&file, original).unwrap();
        let w = wiring(file.clone(), "/bin/deja");
        apply(&w, &state, false).unwrap();
        let v = value(&file);
        let groups = v["hooks"]["SessionStart"].as_array().unwrap();
        assert_eq!(groups.len(), 3, "{v:#}");
        assert_eq!(
            groups[0],
            json!({"matcher": "startup", "hooks": [{"type": "command", "command": "~/bin/notify-start"}]})
        );
        assert_eq!(groups[1]["hooks"][0]["command"], "echo ' context --hook '");
        assert!(groups[2].to_string().contains("/bin/deja"));
        undo(&w, &state, false).unwrap();
        let v = value(&file);
        let groups = v["hooks"]["SessionStart"].as_array().unwrap();
        assert_eq!(groups.len(), 2, "{v:#}");
        assert_eq!(groups[0]["hooks"][0]["command"], "~/bin/notify-start");
        assert_eq!(groups[1]["hooks"][0]["command"], "echo ' context --hook '");
        // A group of the user's (its own matcher) that held deja's command
        // alone stays, emptied; deja's own group goes.
        std::fs::write(
            &file,
            r#"{"hooks": {"SessionStart": [{"matcher": "resume", "hooks": [{"type": "command", "command": "/old/deja context --hook claude"}]}, {"hooks": [{"type": "command", "command": "/old/deja context --hook claude"}]}]}}"#,
        )
        .unwrap();
        apply(&w, &state, false).unwrap();
        undo(&w, &state, false).unwrap();
        assert_eq!(
            value(&file),
            json!({"hooks": {"SessionStart": [{"matcher": "resume", "hooks": []}]}})
        );
    }

    #[test]
    fn an_earlier_dejas_record_is_undone_by_its_original() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        let state = dir.path().join("state");
        // What an earlier deja left: its record (no values) and the original.
        let original = "{\"mcpServers\": {\"deja\": {\"command\": \"mine\"}}}";
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(backup_path(&state, &file), original).unwrap();
        let wired = "{\"mcpServers\": {\"deja\": {\"command\": \"/old/deja\", \"args\": [\"mcp\"]}}, \"hooks\": {\"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"/old/deja context --hook claude\"}]}]}, \"permissions\": {\"allow\": [\"mcp__deja\"]}}";
        std::fs::write(&file, wired.replacen('{', "{\"mine\": 1, ", 1)).unwrap();
        let record = json!({
            "path": file,
            "created": false,
            "backup": backup_path(&state, &file),
            "written_sha256": deja_model::sha256_hex(wired.as_bytes()),
            "created_dirs": [],
        });
        std::fs::write(record_path(&state, &file), record.to_string()).unwrap();
        undo(&wiring(file.clone(), "/new/deja"), &state, false).unwrap();
        assert_eq!(
            value(&file),
            json!({"mine": 1, "mcpServers": {"deja": {"command": "mine"}}})
        );
        assert!(!state.exists());
    }

    #[test]
    fn numbers_and_formatting_outside_dejas_entries_keep_their_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        let state = dir.path().join("state");
        let original = "{\n\t\"big\": 123456789012345678901234567890,\n\t\"f\": 1.50,\n\t\"dup\": 1, \"dup\": 2,\n\t\"permissions\": { \"allow\": [ \"Read\" ] }\n}\n";
        std::fs::write(&file, original).unwrap();
        let w = wiring(file.clone(), "/bin/deja");
        apply(&w, &state, false).unwrap();
        let wired = read(&file);
        assert!(
            wired.starts_with("{\n\t\"big\": 123456789012345678901234567890,\n\t\"f\": 1.50,\n\t\"dup\": 1, \"dup\": 2,\n\t\"permissions\": { \"allow\": [ \"Read\", \"mcp__deja__recall\" ] },\n\t\"mcpServers\": {\n\t\t\"deja\": {\n"),
            "{wired}"
        );
        // Edited since (the sha path is not taken): still byte for byte.
        std::fs::write(&file, wired.replace("\"f\": 1.50", "\"f\": 1.75")).unwrap();
        undo(&w, &state, false).unwrap();
        assert_eq!(read(&file), original.replace("\"f\": 1.50", "\"f\": 1.75"));
    }

    #[test]
    fn json_setup_cannot_read_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(&file, "{ // mine\n}").unwrap();
        let err = apply(
            &wiring(file.clone(), "/bin/deja"),
            &dir.path().join("s"),
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("settings.json") && err.contains("leaves it alone"),
            "{err}"
        );
        std::fs::write(&file, r#"{"hooks": []}"#).unwrap();
        let err = apply(
            &wiring(file.clone(), "/bin/deja"),
            &dir.path().join("s"),
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("`hooks` is not an object"), "{err}");
    }

    #[test]
    fn a_toml_block_is_appended_and_taken_back() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        let state = dir.path().join("state");
        let original = "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        std::fs::write(&file, original).unwrap();
        let block = |exe: &str| {
            format!("# added by deja setup codex\n[mcp_servers.deja]\ncommand = \"{exe}\"\nargs = [\"mcp\"]\n[mcp_servers.deja.tools.recall]\napproval_mode = \"approve\"\n")
        };
        let w = |exe: &str| FileWiring {
            path: file.clone(),
            kind: Kind::TomlBlock {
                table: vec!["mcp_servers", "deja"],
                text: block(exe),
            },
        };
        apply(&w("/bin/deja"), &state, false).unwrap();
        let text = read(&file);
        assert_eq!(text, format!("{original}\n{}", block("/bin/deja")));
        assert!(apply(&w("/bin/deja"), &state, false).unwrap().is_empty());
        // Edited since, and deja moved: the block alone comes out.
        std::fs::write(&file, format!("{text}\n[profiles.x]\nmodel = \"y\"\n")).unwrap();
        apply(&w("/new/deja"), &state, false).unwrap();
        undo(&w("/newer/deja"), &state, false).unwrap();
        assert_eq!(
            read(&file),
            format!("{original}\n[profiles.x]\nmodel = \"y\"\n")
        );
        std::fs::write(&file, "[mcp_servers.deja]\ncommand = \"mine\"\n").unwrap();
        let err = apply(&w("/bin/deja"), &state, false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("already has `[mcp_servers.deja]`"), "{err}");
    }

    #[test]
    fn a_file_changed_while_setup_runs_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(&file, "{\"a\": 1}").unwrap();
        // The check before the rename sees the agent's write and says no.
        assert!(!write_checked(&file, Some(b"{\"a\": 0}"), Some(b"{}")).unwrap());
        assert_eq!(read(&file), "{\"a\": 1}");
        assert!(write_checked(&file, Some(b"{\"a\": 1}"), Some(b"{}")).unwrap());
        assert_eq!(read(&file), "{}");
    }
}
