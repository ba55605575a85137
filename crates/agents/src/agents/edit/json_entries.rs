//! deja's entries in a JSON settings file: keys it owns, items in a list of
//! the user's, hook commands in the agent's hook groups; added and taken out
//! by splicing the file's text.

use std::path::Path;

use anyhow::{bail, Result};
use serde_json::Value;

use super::record::Wrote;
use super::Entry;
use crate::agents::json_text::{self, Doc, NodeKind};

pub(super) fn parse_json<'a>(path: &Path, text: &'a str) -> Result<Doc<'a>> {
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
pub(super) fn json_with(
    file: &Path,
    text: &str,
    entries: &[Entry],
) -> Result<(String, Vec<Wrote>)> {
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
pub(super) fn json_without(
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
pub(super) fn json_leftovers(file: &Path, text: &str, entries: &[Entry]) -> Result<Vec<String>> {
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
