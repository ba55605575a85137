//! The one mechanism by which `deja setup` changes an agent's settings file,
//! and takes the change back.
//!
//! A [`FileWiring`] says what deja adds to one file: keys it owns in a JSON
//! file (`mcpServers.deja`), items of its own in a list of the user's
//! (`hooks.SessionStart`), or a table appended to a TOML file. Applying it
//! first keeps the original bytes in deja's data folder and records the hash
//! of what it wrote; undoing it gives the original back byte for byte when
//! the file is as setup left it, and otherwise takes out deja's entries alone
//! (a key the user had before gets its old value back), never anything else.
//! Every write is atomic and keeps the file's mode.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::json_doc::Json;

/// What deja adds to one settings file.
#[derive(Debug, Clone)]
pub struct FileWiring {
    /// The file.
    pub path: PathBuf,
    /// What goes in it.
    pub kind: Kind,
}

/// The shape of a settings file and deja's part in it.
#[derive(Debug, Clone)]
pub enum Kind {
    /// A JSON file and deja's entries in it.
    Json(Vec<Entry>),
    /// A TOML file, and a block of tables deja appends to it (whole lines,
    /// its first line a comment that names deja); `table` is the first
    /// table's dotted name, which must not be in the file already.
    TomlBlock {
        /// The dotted name of the block's first table (`mcp_servers.deja`).
        table: Vec<&'static str>,
        /// The block's text, ending with a newline.
        text: String,
    },
    /// A file deja owns whole (a plugin file of the agent's), its first line
    /// the `marker` that says deja wrote it.
    Owned {
        /// The first line of every version deja writes.
        marker: &'static str,
        /// The file's text.
        text: String,
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
}

/// What setup keeps to undo its change to one file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    /// The file.
    path: PathBuf,
    /// Whether setup created it.
    created: bool,
    /// Where the original bytes are kept (absent when setup created it).
    backup: Option<PathBuf>,
    /// SHA-256 of the bytes setup last wrote.
    written_sha256: String,
    /// The folders setup created for the file, deepest first.
    #[serde(default)]
    created_dirs: Vec<PathBuf>,
}

/// Where an agent's undo records and originals live: `<data>/setup/<agent>/`.
pub fn state_dir(data_dir: &Path, agent: &str) -> PathBuf {
    data_dir.join("setup").join(agent)
}

fn record_path(state: &Path, file: &Path) -> PathBuf {
    state.join(format!("{}.json", key_of(file)))
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

fn read_record(state: &Path, file: &Path) -> Result<Option<Record>> {
    let p = record_path(state, file);
    match std::fs::read(&p) {
        Ok(b) => Ok(Some(serde_json::from_slice(&b).with_context(|| {
            format!("`{}` is not a record deja can read", p.display())
        })?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read `{}`", p.display())),
    }
}

fn read_file(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read `{}`", path.display())),
    }
}

fn text_of<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str> {
    std::str::from_utf8(bytes).map_err(|_| {
        anyhow::anyhow!(
            "`{}` is not UTF-8 text; setup leaves it alone",
            path.display()
        )
    })
}

fn parse_json(path: &Path, text: &str) -> Result<Json> {
    let j = Json::parse(text).map_err(|e| {
        anyhow::anyhow!(
            "`{}` is not JSON setup can edit ({e}); setup leaves it alone\nhint: a file with comments is edited by hand: see the README, \"Wiring agents\"",
            path.display()
        )
    })?;
    if !matches!(j, Json::Object(_)) {
        bail!(
            "`{}` does not hold a JSON object; setup leaves it alone",
            path.display()
        );
    }
    Ok(j)
}

/// The object at `path`, created (as empty objects) where missing.
fn object_at<'a>(file: &Path, root: &'a mut Json, path: &[&str]) -> Result<&'a mut Json> {
    let mut v = root;
    for (i, k) in path.iter().enumerate() {
        if v.get(k).is_none() {
            v.set(k, Json::Object(Vec::new()));
        }
        v = match v.get_mut(k) {
            Some(next) => next,
            None => bail!(
                "`{}`: cannot add `{}`",
                file.display(),
                path[..=i].join(".")
            ),
        };
        if !matches!(v, Json::Object(_)) {
            bail!(
                "`{}`: `{}` is not an object; setup leaves the file alone",
                file.display(),
                path[..=i].join(".")
            );
        }
    }
    Ok(v)
}

/// The file's text with deja's entries in it.
fn json_with(file: &Path, text: &str, entries: &[Entry]) -> Result<String> {
    let mut root = parse_json(file, text)?;
    for e in entries {
        match e {
            Entry::Key { path, value } => {
                let (last, parents) = path.split_last().context("empty key path")?;
                let obj = object_at(file, &mut root, parents)?;
                let want = Json::from_value(value);
                if obj.get(last).map(Json::to_value).as_ref() != Some(value) {
                    obj.set(last, want);
                }
            }
            Entry::Item { path, value, ours } => {
                let (last, parents) = path.split_last().context("empty key path")?;
                let obj = object_at(file, &mut root, parents)?;
                if obj.get(last).is_none() {
                    obj.set(last, Json::Array(Vec::new()));
                }
                let Some(Json::Array(items)) = obj.get_mut(last) else {
                    bail!(
                        "`{}`: `{}` is not a list; setup leaves the file alone",
                        file.display(),
                        path.join(".")
                    );
                };
                let present = items.iter().any(|i| &i.to_value() == value);
                // An earlier deja's item (another path, older flags) goes.
                items.retain(|i| {
                    let v = i.to_value();
                    &v == value || !ours(&v)
                });
                if !present {
                    items.push(Json::from_value(value));
                }
            }
        }
    }
    Ok(root.to_text())
}

/// Removes the value at `path`, then the objects above it that are left
/// empty and were not in the original.
fn remove_at(root: &mut Json, path: &[&str], original: Option<&Json>) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    if let Some(obj) = root.at_mut(parents) {
        obj.remove(last);
    }
    prune(root, parents, original);
}

/// Drops the empty containers along `path`, deepest first, that the
/// original did not have.
fn prune(root: &mut Json, path: &[&str], original: Option<&Json>) {
    for depth in (1..=path.len()).rev() {
        let here = &path[..depth];
        let empty = root.at(here).is_some_and(Json::is_empty_container);
        let had = original.and_then(|o| o.at(here)).is_some();
        if !empty || had {
            return;
        }
        let (last, parents) = here.split_last().unwrap_or((&"", &[]));
        if let Some(obj) = root.at_mut(parents) {
            obj.remove(last);
        }
    }
}

/// The file's text with deja's entries taken out; `original` is the file
/// before setup, when known, whose values come back where deja replaced one.
fn json_without(
    file: &Path,
    text: &str,
    entries: &[Entry],
    original: Option<&Json>,
) -> Result<String> {
    let mut root = parse_json(file, text)?;
    for e in entries {
        match e {
            Entry::Key { path, value } => {
                let before = original.and_then(|o| o.at(path)).cloned();
                let now = root.at(path).map(Json::to_value);
                match (before, now) {
                    // Not there, or changed since by someone else: left as is.
                    (_, None) => {}
                    (_, Some(now)) if &now != value => {}
                    (Some(before), Some(_)) => {
                        if let Some((last, parents)) = path.split_last() {
                            if let Some(obj) = root.at_mut(parents) {
                                obj.set(last, before);
                            }
                        }
                    }
                    (None, Some(_)) => remove_at(&mut root, path, original),
                }
            }
            Entry::Item { path, ours, .. } => {
                // An item the user had before setup is the user's.
                let before: Vec<Value> = match original.and_then(|o| o.at(path)) {
                    Some(Json::Array(items)) => items.iter().map(Json::to_value).collect(),
                    _ => Vec::new(),
                };
                if let Some(Json::Array(items)) = root.at_mut(path) {
                    items.retain(|i| {
                        let v = i.to_value();
                        !ours(&v) || before.contains(&v)
                    });
                }
                prune(&mut root, path, original);
            }
        }
    }
    Ok(root.to_text())
}

/// The TOML file's text with deja's block appended; `None` when it is there.
fn toml_with(file: &Path, text: &str, table: &[&str], block: &str) -> Result<Option<String>> {
    if text.contains(block) {
        return Ok(None);
    }
    // An earlier deja's block (another path, other variables) is replaced.
    if let Some((start, end)) = block_span(text, block) {
        let out = format!("{}{block}{}", &text[..start], &text[end..]);
        toml::from_str::<toml::Table>(&out).map_err(|e| {
            anyhow::anyhow!(
                "`{}`: replacing deja's `[{}]` would make it invalid TOML ({}); setup leaves it alone",
                file.display(),
                table.join("."),
                e.message()
            )
        })?;
        return Ok(Some(out));
    }
    let parsed: toml::Table = toml::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "`{}` is not TOML setup can read ({}); setup leaves it alone",
            file.display(),
            e.message()
        )
    })?;
    let mut at = Some(&parsed);
    let mut found = false;
    for (i, k) in table.iter().enumerate() {
        match at.and_then(|t| t.get(*k)) {
            Some(toml::Value::Table(t)) => {
                at = Some(t);
                found = i + 1 == table.len();
            }
            Some(_) if i + 1 == table.len() => found = true,
            _ => break,
        }
    }
    if found {
        bail!(
            "`{}` already has `[{}]`, not written by this deja setup; setup leaves it alone\nhint: remove that table (or the line deja would replace), then run setup again",
            file.display(),
            table.join(".")
        );
    }
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(block);
    toml::from_str::<toml::Table>(&out).map_err(|e| {
        anyhow::anyhow!(
            "`{}`: adding `[{}]` would make it invalid TOML ({}); setup leaves it alone",
            file.display(),
            table.join("."),
            e.message()
        )
    })?;
    Ok(Some(out))
}

/// Where a block that starts with `block`'s first line (the comment naming
/// deja) is in `text`: from that line to the next blank line, the next
/// table that is not the block's own, or the end.
fn block_span(text: &str, block: &str) -> Option<(usize, usize)> {
    let marker = block.lines().next()?;
    let mut offset = 0;
    let mut start = None;
    let mut seen_header = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        match start {
            None if bare == marker => start = Some(offset),
            None => {}
            Some(s) => {
                let header = bare.trim_start().starts_with('[');
                if bare.trim().is_empty() || (header && seen_header) {
                    return Some((s, offset));
                }
                seen_header |= header;
            }
        }
        offset += line.len();
    }
    start.map(|s| (s, text.len()))
}

/// The TOML file's text without deja's block (and the blank line before it).
fn toml_without(text: &str, block: &str) -> Option<String> {
    let (at, end) = match text.find(block) {
        Some(at) => (at, at + block.len()),
        None => block_span(text, block)?,
    };
    let mut start = at;
    if text[..start].ends_with("\n\n") {
        start -= 1;
    }
    Some(format!("{}{}", &text[..start], &text[end..]))
}

/// The new text of a file deja owns whole; `None` when it is as deja writes it.
fn owned_with(
    file: &Path,
    current: Option<&str>,
    marker: &str,
    text: &str,
) -> Result<Option<String>> {
    match current {
        Some(c) if c == text => Ok(None),
        Some(c) if c.lines().next() != Some(marker) => bail!(
            "`{}` exists and was not written by deja; setup leaves it alone (move it away, then run setup again)",
            file.display()
        ),
        _ => Ok(Some(text.to_string())),
    }
}

/// Whether deja's entries are in the file as setup writes them.
pub fn is_wired(w: &FileWiring) -> Result<bool> {
    Ok(wired_text(w)?.is_none())
}

/// The file's new text when setup would change it; `None` when it is wired.
fn wired_text(w: &FileWiring) -> Result<Option<String>> {
    let bytes = read_file(&w.path)?.unwrap_or_default();
    let text = text_of(&w.path, &bytes)?;
    match &w.kind {
        Kind::Json(entries) => {
            let new = json_with(&w.path, text, entries)?;
            // An unchanged tree is no change, however the file is formatted.
            let same = !text.trim().is_empty()
                && parse_json(&w.path, text)?.to_value() == parse_json(&w.path, &new)?.to_value();
            Ok((!same).then_some(new))
        }
        Kind::TomlBlock { table, text: block } => toml_with(&w.path, text, table, block),
        Kind::Owned { marker, text: own } => {
            let current = (!bytes.is_empty() || w.path.exists()).then_some(text);
            owned_with(&w.path, current, marker, own)
        }
    }
}

/// Adds deja's entries to the file; returns what changed (nothing when it
/// was wired). With `dry_run`, only says.
pub fn apply(w: &FileWiring, state: &Path, dry_run: bool) -> Result<Vec<String>> {
    let Some(new) = wired_text(w)? else {
        return Ok(Vec::new());
    };
    let current = read_file(&w.path)?;
    let what = match (&w.kind, &current) {
        (_, None) => format!("create {}", w.path.display()),
        (Kind::Json(entries), Some(_)) => format!(
            "add {} to {}",
            entries
                .iter()
                .map(|e| match e {
                    Entry::Key { path, .. } => format!("`{}`", path.join(".")),
                    Entry::Item { path, .. } => format!("an item of `{}`", path.join(".")),
                })
                .collect::<Vec<_>>()
                .join(", "),
            w.path.display()
        ),
        (Kind::TomlBlock { table, .. }, Some(_)) => {
            format!("add `[{}]` to {}", table.join("."), w.path.display())
        }
        (Kind::Owned { .. }, Some(_)) => format!("write {}", w.path.display()),
    };
    if dry_run {
        return Ok(vec![what]);
    }
    deja_store::create_private_dir(state)?;
    let record = match read_record(state, &w.path)? {
        // The original from the first setup stays the original.
        Some(r) => Record {
            written_sha256: deja_model::sha256_hex(new.as_bytes()),
            ..r
        },
        None => {
            let backup = match &current {
                Some(b) => {
                    let p = state.join(format!("{}.orig", key_of(&w.path)));
                    deja_fs::atomic_write(&p, b)?;
                    Some(p)
                }
                None => None,
            };
            let mut created_dirs = Vec::new();
            let mut dir = w.path.parent();
            while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
                created_dirs.push(d.to_path_buf());
                dir = d.parent();
            }
            Record {
                path: w.path.clone(),
                created: current.is_none(),
                backup,
                written_sha256: deja_model::sha256_hex(new.as_bytes()),
                created_dirs,
            }
        }
    };
    // The record first: a setup cut short after it is still undone.
    deja_fs::atomic_write(
        &record_path(state, &w.path),
        format!("{}\n", serde_json::to_string_pretty(&record)?).as_bytes(),
    )?;
    if let Some(dir) = w.path.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    let mode = deja_fs::mode(&w.path).unwrap_or(0o600);
    deja_fs::atomic_write_with_mode(&w.path, new.as_bytes(), mode)?;
    Ok(vec![what])
}

/// Takes deja's entries out of the file; returns what changed. With
/// `dry_run`, only says.
pub fn undo(w: &FileWiring, state: &Path, dry_run: bool) -> Result<Vec<String>> {
    let record = read_record(state, &w.path)?;
    let current = read_file(&w.path)?;
    let forget = |dry: bool| -> Result<()> {
        if dry {
            return Ok(());
        }
        let p = record_path(state, &w.path);
        if p.exists() {
            std::fs::remove_file(&p).with_context(|| format!("cannot remove `{}`", p.display()))?;
        }
        if let Some(b) = record.as_ref().and_then(|r| r.backup.as_ref()) {
            let _ = std::fs::remove_file(b);
        }
        let _ = std::fs::remove_dir(state);
        Ok(())
    };
    let Some(current) = current else {
        forget(dry_run)?;
        return Ok(Vec::new());
    };
    let original = match record.as_ref().and_then(|r| r.backup.as_ref()) {
        Some(b) => Some(std::fs::read(b).with_context(|| {
            format!(
                "cannot read `{}`, the original of `{}`",
                b.display(),
                w.path.display()
            )
        })?),
        None => None,
    };
    // As setup left it: the original comes back byte for byte.
    if let Some(r) = &record {
        if deja_model::sha256_hex(&current) == r.written_sha256 {
            let what = if r.created {
                format!("remove {} (setup created it)", w.path.display())
            } else {
                format!("restore {} as it was before setup", w.path.display())
            };
            if !dry_run {
                match &original {
                    Some(o) => {
                        let mode = deja_fs::mode(&w.path).unwrap_or(0o600);
                        deja_fs::atomic_write_with_mode(&w.path, o, mode)?;
                    }
                    None => {
                        std::fs::remove_file(&w.path)
                            .with_context(|| format!("cannot remove `{}`", w.path.display()))?;
                        // The folders setup made for it, when nothing else is there.
                        for d in &r.created_dirs {
                            if std::fs::remove_dir(d).is_err() {
                                break;
                            }
                        }
                    }
                }
            }
            forget(dry_run)?;
            return Ok(vec![what]);
        }
    }
    // Changed since: deja's entries alone come out.
    let text = text_of(&w.path, &current)?;
    let new = match &w.kind {
        Kind::Json(entries) => {
            let orig = match &original {
                Some(o) => Some(parse_json(&w.path, text_of(&w.path, o)?)?),
                None => None,
            };
            let new = json_without(&w.path, text, entries, orig.as_ref())?;
            let same =
                parse_json(&w.path, text)?.to_value() == parse_json(&w.path, &new)?.to_value();
            (!same).then_some(new)
        }
        Kind::TomlBlock { text: block, .. } => toml_without(text, block),
        Kind::Owned { marker, .. } => {
            if text.lines().next() == Some(*marker) {
                let what = format!("remove {}", w.path.display());
                if !dry_run {
                    std::fs::remove_file(&w.path)
                        .with_context(|| format!("cannot remove `{}`", w.path.display()))?;
                }
                forget(dry_run)?;
                return Ok(vec![what]);
            }
            None
        }
    };
    let Some(new) = new else {
        forget(dry_run)?;
        return Ok(Vec::new());
    };
    let what = format!("take deja's entries out of {}", w.path.display());
    if !dry_run {
        let mode = deja_fs::mode(&w.path).unwrap_or(0o600);
        deja_fs::atomic_write_with_mode(&w.path, new.as_bytes(), mode)?;
    }
    forget(dry_run)?;
    Ok(vec![what])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn is_deja_hook(v: &Value) -> bool {
        v.to_string().contains("deja context")
    }

    fn wiring(path: PathBuf, exe: &str) -> FileWiring {
        FileWiring {
            path,
            kind: Kind::Json(vec![
                Entry::Key {
                    path: vec!["mcpServers", "deja"],
                    value: json!({"command": exe, "args": ["mcp"]}),
                },
                Entry::Item {
                    path: vec!["hooks", "SessionStart"],
                    value: json!({"hooks": [{"type": "command", "command": format!("{exe} context --hook claude")}]}),
                    ours: is_deja_hook,
                },
            ]),
        }
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
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            original,
            "dry run wrote"
        );
        apply(&w, &state, false).unwrap();
        let wired = std::fs::read_to_string(&file).unwrap();
        let v: Value = serde_json::from_str(&wired).unwrap();
        assert_eq!(v["mcpServers"]["deja"]["command"], "/bin/deja");
        assert_eq!(v["hooks"]["SessionStart"].as_array().unwrap().len(), 2);
        assert!(wired.find("zeta").unwrap() < wired.find("alpha").unwrap());
        assert!(is_wired(&w).unwrap());
        assert!(
            apply(&w, &state, false).unwrap().is_empty(),
            "not idempotent"
        );
        undo(&w, &state, false).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
        assert!(!state.exists(), "state left behind");
    }

    #[test]
    fn undo_after_the_user_edited_takes_out_deja_alone() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".claude.json");
        let state = dir.path().join("state");
        std::fs::write(
            &file,
            r#"{"mcpServers": {"deja": {"command": "old"}, "other": {}}}"#,
        )
        .unwrap();
        let w = wiring(file.clone(), "/bin/deja");
        apply(&w, &state, false).unwrap();
        // The agent rewrites its file and adds a key of its own.
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        v["numStartups"] = json!(3);
        std::fs::write(&file, serde_json::to_string(&v).unwrap()).unwrap();
        undo(&w, &state, false).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            v,
            json!({"mcpServers": {"deja": {"command": "old"}, "other": {}}, "numStartups": 3}),
            "the user's own `deja` entry comes back, the agent's key stays, deja's hook and the `hooks` it created go"
        );
    }

    #[test]
    fn an_earlier_dejas_hook_is_replaced_not_doubled() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("agent/conf/settings.json");
        let state = dir.path().join("state");
        apply(&wiring(file.clone(), "/old/deja"), &state, false).unwrap();
        apply(&wiring(file.clone(), "/new/deja"), &state, false).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let hooks = v["hooks"]["SessionStart"].as_array().unwrap();
        assert_eq!(hooks.len(), 1);
        assert!(hooks[0].to_string().contains("/new/deja"));
        undo(&wiring(file.clone(), "/new/deja"), &state, false).unwrap();
        assert!(!file.exists(), "setup created the file, undo removes it");
        assert!(
            !dir.path().join("agent").exists(),
            "the folders setup created stay"
        );
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
        let block = "# added by deja setup codex\n[mcp_servers.deja]\ncommand = \"/bin/deja\"\nargs = [\"mcp\"]\n";
        let w = FileWiring {
            path: file.clone(),
            kind: Kind::TomlBlock {
                table: vec!["mcp_servers", "deja"],
                text: block.into(),
            },
        };
        apply(&w, &state, false).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text, format!("{original}\n{block}"));
        assert!(apply(&w, &state, false).unwrap().is_empty());
        // Edited since: the block alone comes out.
        std::fs::write(&file, format!("{text}\n[profiles.x]\nmodel = \"y\"\n")).unwrap();
        undo(&w, &state, false).unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            format!("{original}\n[profiles.x]\nmodel = \"y\"\n")
        );
        std::fs::write(&file, "[mcp_servers.deja]\ncommand = \"mine\"\n").unwrap();
        let err = apply(&w, &state, false).unwrap_err().to_string();
        assert!(err.contains("already has `[mcp_servers.deja]`"), "{err}");
    }
}
