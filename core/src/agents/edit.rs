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

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::json_text::{self, Doc, NodeKind};

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

/// What setup wrote for one entry, as the record keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Wrote {
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
        form: super::aider::Form,
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
    wrote: Vec<Wrote>,
}

/// Where an agent's undo records and originals live: `<data>/setup/<agent>/`.
pub fn state_dir(data_dir: &Path, agent: &str) -> PathBuf {
    data_dir.join("setup").join(agent)
}

fn record_path(state: &Path, file: &Path) -> PathBuf {
    state.join(format!("{}.json", key_of(file)))
}

fn backup_path(state: &Path, file: &Path) -> PathBuf {
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
    yaml: Option<(String, super::aider::Form, Option<String>)>,
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

fn parse_json<'a>(path: &Path, text: &'a str) -> Result<Doc<'a>> {
    let doc = Doc::parse(text).map_err(|e| {
        anyhow::anyhow!(
            "`{}` is not JSON setup can edit ({e}); setup leaves it alone\nhint: a file with comments is edited by hand: see the README, \"Wiring agents\"",
            path.display()
        )
    })?;
    if !matches!(doc.root.kind, NodeKind::Object(_)) {
        bail!(
            "`{}` does not hold a JSON object; setup leaves it alone",
            path.display()
        );
    }
    Ok(doc)
}

fn edit_err(file: &Path, e: json_text::EditError) -> anyhow::Error {
    anyhow::anyhow!("`{}`: {e}; setup leaves the file alone", file.display())
}

fn strings(path: &[&str]) -> Vec<String> {
    path.iter().map(|s| s.to_string()).collect()
}

/// Drops the empty containers along `path` that setup created: the prefixes
/// of `path` from `len` keys down to `path.len() - made + 1`.
fn prune(file: &Path, text: String, path: &[&str], len: usize, made: usize) -> Result<String> {
    let mut text = text;
    if made == 0 {
        return Ok(text);
    }
    let lowest = (path.len() + 1).saturating_sub(made).max(1);
    for depth in (lowest..=len).rev() {
        let doc = parse_json(file, &text)?;
        let empty = match doc.at(&path[..depth]).map(|n| &n.kind) {
            Some(NodeKind::Object(m)) => m.is_empty(),
            Some(NodeKind::Array(a)) => a.is_empty(),
            _ => false,
        };
        if !empty {
            break;
        }
        text = json_text::remove(&doc, &path[..depth]);
    }
    Ok(text)
}

/// How many keys of `path` an earlier deja's original lacked (what its
/// setup created), for records that did not keep it.
fn made_in(original: Option<&str>, path: &[&str]) -> usize {
    let Some(doc) = original.and_then(|o| Doc::parse(o).ok()) else {
        return 0;
    };
    let have = (0..=path.len())
        .rev()
        .find(|d| doc.at(&path[..*d]).is_some())
        .unwrap_or(0);
    path.len() - have
}

/// The JSON text with deja's entries added; what was written, entry by entry.
fn json_with(file: &Path, text: &str, entries: &[Entry]) -> Result<(String, Vec<Wrote>)> {
    let mut text = text.to_string();
    let mut wrote = Vec::new();
    // This setup's items, by list: the others of deja's shape are an
    // earlier deja's.
    let this_setups = |list: &[&str]| -> Vec<&Value> {
        entries
            .iter()
            .filter_map(|e| match e {
                Entry::Item { path, value, .. } if path == list => Some(value),
                _ => None,
            })
            .collect()
    };
    for e in entries {
        match e {
            Entry::Key { path, value, ours } => {
                let doc = parse_json(file, &text)?;
                let now = doc.value_at(path);
                if now.as_ref() == Some(value) {
                    wrote.push(Wrote::Key {
                        path: strings(path),
                        value: value.clone(),
                        before: None,
                        made: 0,
                    });
                    continue;
                }
                let (new, made) =
                    json_text::set(&doc, path, value).map_err(|e| edit_err(file, e))?;
                wrote.push(Wrote::Key {
                    path: strings(path),
                    value: value.clone(),
                    before: now.filter(|v| !ours(v)),
                    made,
                });
                text = new;
            }
            Entry::Item { path, value, ours } => {
                // An earlier deja's item (another name, older flags) goes.
                let keep = this_setups(path);
                loop {
                    let doc = parse_json(file, &text)?;
                    let old = json_text::items(&doc, path)
                        .iter()
                        .position(|i| i.as_ref().is_some_and(|i| ours(i) && !keep.contains(&i)));
                    match old {
                        Some(i) => text = json_text::remove_item(&doc, path, i),
                        None => break,
                    }
                }
                let doc = parse_json(file, &text)?;
                let present = json_text::items(&doc, path)
                    .iter()
                    .any(|i| i.as_ref() == Some(value));
                if present {
                    wrote.push(Wrote::Item {
                        path: strings(path),
                        value: value.clone(),
                        added: false,
                        made: 0,
                    });
                    continue;
                }
                let (new, made) =
                    json_text::push(&doc, path, value).map_err(|e| edit_err(file, e))?;
                wrote.push(Wrote::Item {
                    path: strings(path),
                    value: value.clone(),
                    added: true,
                    made,
                });
                text = new;
            }
            Entry::Hook { path, group, ours } => {
                let doc = parse_json(file, &text)?;
                let present = json_text::items(&doc, path)
                    .iter()
                    .any(|g| g.as_ref() == Some(group));
                // An earlier deja's commands go, wherever they are.
                text = without_hooks(file, text, path, ours, group, present.then_some(group))?;
                if present {
                    wrote.push(Wrote::Hook {
                        path: strings(path),
                        group: group.clone(),
                        made: 0,
                    });
                    continue;
                }
                let doc = parse_json(file, &text)?;
                let (new, made) =
                    json_text::push(&doc, path, group).map_err(|e| edit_err(file, e))?;
                wrote.push(Wrote::Hook {
                    path: strings(path),
                    group: group.clone(),
                    made,
                });
                text = new;
            }
        }
    }
    Ok((text, wrote))
}

/// The command of a hook object.
fn command_of(hook: &Value) -> Option<&str> {
    hook.get("command").and_then(Value::as_str)
}

/// Whether two hook groups are alike but for their hooks (the same
/// `matcher`, nothing else of the user's).
fn same_group(a: &Value, b: &Value) -> bool {
    let rest = |v: &Value| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("hooks");
        }
        v
    };
    rest(a) == rest(b)
}

/// `text` without deja's hook commands in the list of groups at `path`:
/// from each group deja's commands go, and a group left empty goes when it
/// is one deja writes (`deja_group` but for its hooks); a group with the
/// user's hooks, or a matcher of the user's, stays. With `keep`, a group
/// equal to it stays (the one this setup writes).
fn without_hooks(
    file: &Path,
    text: String,
    path: &[&str],
    ours: &fn(&str) -> bool,
    deja_group: &Value,
    keep: Option<&Value>,
) -> Result<String> {
    let mut text = text;
    loop {
        let doc = parse_json(file, &text)?;
        let Some(list) = doc.at(path) else {
            return Ok(text);
        };
        let NodeKind::Array(groups) = &list.kind else {
            bail!(
                "`{}`: `{}` is not a list; setup leaves the file alone",
                file.display(),
                path.join(".")
            );
        };
        let mut cut: Option<(usize, usize)> = None;
        'groups: for (gi, g) in groups.iter().enumerate() {
            let value = doc.value(g);
            if keep.is_some() && value.as_ref() == keep {
                continue;
            }
            let Some(hooks) = json_text::member_node(g, "hooks") else {
                continue;
            };
            let NodeKind::Array(hs) = &hooks.kind else {
                continue;
            };
            let is_ours: Vec<bool> = hs
                .iter()
                .map(|h| {
                    doc.value(h)
                        .as_ref()
                        .and_then(command_of)
                        .is_some_and(*ours)
                })
                .collect();
            if is_ours.is_empty() || !is_ours.iter().any(|x| *x) {
                continue;
            }
            let deja_made = value.as_ref().is_some_and(|v| same_group(v, deja_group));
            if is_ours.iter().all(|x| *x) && deja_made {
                cut = Some(json_text::cut_span(list, &spans(groups), gi));
                break 'groups;
            }
            if let Some(hi) = is_ours.iter().position(|x| *x) {
                cut = Some(json_text::cut_span(hooks, &spans(hs), hi));
                break 'groups;
            }
        }
        match cut {
            Some((a, b)) => text = format!("{}{}", &text[..a], &text[b..]),
            None => return Ok(text),
        }
    }
}

fn spans(nodes: &[json_text::Node]) -> Vec<(usize, usize)> {
    nodes.iter().map(|n| (n.start, n.end)).collect()
}

/// The JSON text with deja's entries taken out: those `record` says it
/// wrote, and any of deja's shape. Entries go in the reverse order of
/// setup's, so each change is undone on the text it made.
fn json_without(
    file: &Path,
    text: &str,
    entries: &[Entry],
    wrote: &[Wrote],
    original: Option<&str>,
) -> Result<String> {
    let mut text = text.to_string();
    for e in entries.iter().rev() {
        match e {
            Entry::Key { path, value, ours } => {
                let rec = wrote.iter().find_map(|w| match w {
                    Wrote::Key {
                        path: p,
                        value,
                        before,
                        made,
                    } if *p == strings(path) => Some((value, before, *made)),
                    _ => None,
                });
                let doc = parse_json(file, &text)?;
                let Some(now) = doc.value_at(path) else {
                    continue;
                };
                let deja = &now == value || ours(&now) || rec.is_some_and(|r| r.0 == &now);
                if !deja {
                    continue;
                }
                let before = match rec {
                    Some((_, before, _)) => before.clone(),
                    None => original
                        .and_then(|o| Doc::parse(o).ok().and_then(|d| d.value_at(path)))
                        .filter(|v| !ours(v)),
                };
                text = match before {
                    Some(b) => {
                        json_text::set(&doc, path, &b)
                            .map_err(|e| edit_err(file, e))?
                            .0
                    }
                    None => {
                        let made = rec.map_or_else(|| made_in(original, path), |r| r.2);
                        let removed = json_text::remove(&doc, path);
                        prune(file, removed, path, path.len() - 1, made)?
                    }
                };
            }
            Entry::Item { path, value, ours } => {
                let rec = wrote.iter().find_map(|w| match w {
                    Wrote::Item {
                        path: p,
                        value,
                        added,
                        made,
                    } if *p == strings(path) => Some((value, *added, *made)),
                    _ => None,
                });
                // The item the user had before setup stays theirs.
                let users = rec.filter(|r| !r.1).map(|r| r.0.clone());
                let users = users.or_else(|| {
                    let doc = Doc::parse(original?).ok()?;
                    json_text::items(&doc, path)
                        .into_iter()
                        .flatten()
                        .find(|i| i == value)
                });
                loop {
                    let doc = parse_json(file, &text)?;
                    let at = json_text::items(&doc, path).iter().position(|i| {
                        i.as_ref().is_some_and(|i| {
                            (i == value || ours(i) || rec.is_some_and(|r| r.0 == i))
                                && users.as_ref() != Some(i)
                        })
                    });
                    match at {
                        Some(i) => text = json_text::remove_item(&doc, path, i),
                        None => break,
                    }
                }
                let made = rec.map_or_else(|| made_in(original, path), |r| r.2);
                text = prune(file, text, path, path.len(), made)?;
            }
            Entry::Hook { path, ours, group } => {
                let made = wrote
                    .iter()
                    .find_map(|w| match w {
                        Wrote::Hook { path: p, made, .. } if *p == strings(path) => Some(*made),
                        _ => None,
                    })
                    .unwrap_or_else(|| made_in(original, path));
                text = without_hooks(file, text, path, ours, group, None)?;
                text = prune(file, text, path, path.len(), made)?;
            }
        }
    }
    Ok(text)
}

/// What of deja's is still in the JSON text (for undo to say).
fn json_leftovers(file: &Path, text: &str, entries: &[Entry]) -> Result<Vec<String>> {
    let doc = parse_json(file, text)?;
    let mut left = Vec::new();
    for e in entries {
        match e {
            Entry::Key { path, value, ours } => {
                if doc.value_at(path).is_some_and(|v| &v == value || ours(&v)) {
                    left.push(format!("`{}`", path.join(".")));
                }
            }
            Entry::Item { .. } => {}
            Entry::Hook { path, ours, .. } => {
                let any = json_text::items(&doc, path).iter().flatten().any(|g| {
                    g.get("hooks")
                        .and_then(Value::as_array)
                        .is_some_and(|hs| hs.iter().filter_map(command_of).any(*ours))
                });
                if any {
                    left.push(format!("a hook in `{}`", path.join(".")));
                }
            }
        }
    }
    Ok(left)
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
            let edit = super::aider::aider_conf_with(text, entry).map_err(|why| {
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
            super::aider::aider_conf_without(text, entry, form, was)
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

/// Writes `new` to `path` (or removes it with `None`) when the file is
/// still `expected`; `false` when it changed since it was read.
fn write_checked(path: &Path, expected: Option<&[u8]>, new: Option<&[u8]>) -> Result<bool> {
    if read_file(path)?.as_deref() != expected {
        return Ok(false);
    }
    match new {
        Some(bytes) => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create `{}`", dir.display()))?;
            }
            let mode = deja_fs::mode(path).unwrap_or(0o600);
            deja_fs::atomic_write_with_mode(path, bytes, mode)?;
        }
        None => {
            if expected.is_some() {
                std::fs::remove_file(path)
                    .with_context(|| format!("cannot remove `{}`", path.display()))?;
            }
        }
    }
    Ok(true)
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

/// Forgets the record of `file` (and its backup).
fn forget(state: &Path, file: &Path, record: Option<&Record>) -> Result<()> {
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
fn remove_dirs(record: Option<&Record>) {
    for d in record.map_or(&[][..], |r| &r.created_dirs[..]) {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
    }
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

/// The TOML file's text with deja's block appended; `None` when it is there.
fn toml_with(file: &Path, text: &str, table: &[&str], block: &str) -> Result<Option<String>> {
    if text.contains(block) {
        return Ok(None);
    }
    // An earlier deja's block (another path, other variables) is replaced.
    if let Some((start, end)) = block_span(text, block, table) {
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
/// table that is not `table` or below it, or the end.
fn block_span(text: &str, block: &str, table: &[&str]) -> Option<(usize, usize)> {
    let marker = block.lines().next()?;
    let name = table.join(".");
    let mut offset = 0;
    let mut start = None;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        match start {
            None if bare == marker => start = Some(offset),
            None => {}
            Some(s) => {
                let header = bare.trim_start().starts_with('[');
                let own = bare
                    .trim_start()
                    .trim_start_matches('[')
                    .trim_end_matches(']');
                let own = own == name || own.starts_with(&format!("{name}."));
                if bare.trim().is_empty() || (header && !own) {
                    return Some((s, offset));
                }
            }
        }
        offset += line.len();
    }
    start.map(|s| (s, text.len()))
}

/// The TOML file's text without deja's block (and the blank line before it).
fn toml_without(text: &str, block: &str, table: &[&str]) -> Option<String> {
    let (at, end) = match text.find(block) {
        Some(at) => (at, at + block.len()),
        None => block_span(text, block, table)?,
    };
    let mut start = at;
    if text[..start].ends_with("\n\n") {
        start -= 1;
    }
    Some(format!("{}{}", &text[..start], &text[end..]))
}

#[cfg(test)]
mod tests {
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
