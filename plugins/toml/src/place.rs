//! Values taken from where a transcript is rather than from what it holds:
//! the folder some levels above it, a value in a JSON file beside it, a
//! pattern's group in its path, and a
//! folder's path written as a slug (`Users-me-my-app` for
//! `/Users/me/my.app`, as Cursor names its project folders) found again on
//! this machine.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use deja_plugin_api::paths;

use crate::description::Field;
use crate::pointer::Pointer;

/// The value of `field` for the transcript at `path`: `Some(value)` when
/// the field is one of the place's (the value may be none), `None` when
/// the field is in the records.
pub fn of(field: &Field, path: &str) -> Option<Option<String>> {
    match field {
        Field::FolderOfFile(n) => Some(folder_above(path, *n)),
        Field::InPath { pattern, slug } => {
            let unified = path.replace('\\', "/");
            let group = pattern
                .0
                .captures(&unified)
                .and_then(|c| c.get(1))
                .map(|m| m.as_str().to_string())
                .filter(|g| !g.is_empty());
            Some(match (group, slug) {
                (Some(g), true) => unslug(&g),
                (g, _) => g,
            })
        }
        Field::InFile { file, at } => Some(in_file(path, file, at)),
        Field::At(_) | Field::Capture { .. } | Field::FirstOf(_) => None,
    }
}

/// The most bytes of a file beside a transcript that are read.
const MAX_BESIDE: u64 = 1 << 20;

/// The string at `at` in the JSON file `file` relative to the folder of
/// the transcript at `path`.
fn in_file(path: &str, file: &str, at: &Pointer) -> Option<String> {
    let transcript = Path::new(path);
    let name = transcript.file_name()?.to_string_lossy();
    let name = name.split('.').next().unwrap_or(&name);
    let beside = transcript.parent()?.join(file.replace("{name}", name));
    if std::fs::metadata(&beside).ok()?.len() > MAX_BESIDE {
        return None;
    }
    let bytes = std::fs::read(&beside).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    at.string(&value)
}

/// The folder `n` levels above the file at `path` (1: its own folder).
pub fn folder_above(path: &str, n: usize) -> Option<String> {
    let mut dir = path;
    for _ in 0..n {
        let base = paths::basename(dir)?;
        dir = dir.strip_suffix(base)?.trim_end_matches(['/', '\\']);
    }
    (!dir.is_empty()).then(|| dir.to_string())
}

/// The most folders a slug's search lists.
const MAX_LISTINGS: usize = 256;

/// The folder on this machine whose path, written as a slug, is `slug`;
/// none when no folder is. Answers are kept for the process: a reader
/// meets the same few project slugs in every file.
pub fn unslug(slug: &str) -> Option<String> {
    static FOUND: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    let cache = FOUND.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(found) = cache.lock().ok().and_then(|c| c.get(slug).cloned()) {
        return found;
    }
    let (root, rest) = root_of(slug);
    let mut budget = MAX_LISTINGS;
    let found = find(&root, &normal(rest), &mut budget).map(|p| p.to_string_lossy().into_owned());
    if let Ok(mut c) = cache.lock() {
        c.insert(slug.to_string(), found.clone());
    }
    found
}

/// Where a slug's path starts: `/`, or a drive (`C-Users-me` on Windows).
fn root_of(slug: &str) -> (PathBuf, &str) {
    if cfg!(windows) {
        if let Some((drive, rest)) = slug.split_once('-') {
            if drive.len() == 1 && drive.chars().all(|c| c.is_ascii_alphabetic()) {
                return (PathBuf::from(format!("{drive}:\\")), rest);
            }
        }
    }
    (PathBuf::from("/"), slug.trim_start_matches('-'))
}

/// A name as a slug writes it: every character that is not a letter or a
/// digit becomes `-` (harnesses differ in which ones they replace).
fn normal(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect()
}

/// The folder below `dir` that `rest` names: the longest child whose
/// normal name is all of `rest`, or its start followed by `-`, first.
fn find(dir: &Path, rest: &str, budget: &mut usize) -> Option<PathBuf> {
    if rest.is_empty() {
        return Some(dir.to_path_buf());
    }
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let mut children: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let name = normal(&e.file_name().to_string_lossy());
            let fits = rest == name
                || rest
                    .strip_prefix(name.as_str())
                    .is_some_and(|r| r.starts_with('-'));
            (fits && !name.is_empty()).then(|| (name, e.path()))
        })
        .collect();
    children.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.1.cmp(&b.1)));
    children.into_iter().find_map(|(name, path)| {
        let after = rest.get(name.len()..).unwrap_or("");
        find(&path, after.strip_prefix('-').unwrap_or(after), budget)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_above_a_file() {
        assert_eq!(
            folder_above("/w/app/.crush/crush.db", 1).as_deref(),
            Some("/w/app/.crush")
        );
        assert_eq!(
            folder_above("/w/app/.crush/crush.db", 2).as_deref(),
            Some("/w/app")
        );
        assert_eq!(
            folder_above("C:\\w\\app\\.crush\\crush.db", 2).as_deref(),
            Some("C:\\w\\app")
        );
        assert_eq!(folder_above("/crush.db", 1), None);
        assert_eq!(folder_above("crush.db", 3), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_slug_is_found_again_as_the_folder_it_names() {
        let base = tempfile::tempdir().unwrap();
        let base = base.path().canonicalize().unwrap();
        // `my-app` and `my/app` both slug to `my-app`: the longer name wins.
        for dir in ["work/my.app/src", "work/my-app", "work/my/app", "work/x"] {
            std::fs::create_dir_all(base.join(dir)).unwrap();
        }
        let slug = |p: &Path| {
            normal(&p.to_string_lossy())
                .trim_start_matches('-')
                .to_string()
        };
        let found = |p: &Path| unslug(&slug(p)).map(PathBuf::from);
        assert_eq!(
            found(&base.join("work/my.app/src")),
            Some(base.join("work/my.app/src"))
        );
        assert_eq!(found(&base.join("work/x")), Some(base.join("work/x")));
        let gone = base.join("work/gone");
        assert_eq!(found(&gone), None);
        let mine = found(&base.join("work/my-app")).unwrap();
        assert!(
            mine == base.join("work/my-app") || mine == base.join("work/my.app"),
            "{mine:?}"
        );
    }
}
