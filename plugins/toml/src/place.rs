//! Values taken from where a transcript is rather than from what it holds:
//! the folder some levels above it, a value in a JSON file beside it, a
//! pattern's group in its path, and a
//! folder's path written as a slug (`Users-me-my-app` for
//! `/Users/me/my.app`, as Cursor names its project folders) found again on
//! this machine.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

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
        Field::InFileText { file, pattern } => Some(in_file_text(path, file, pattern)),
        Field::At(_) | Field::Capture { .. } | Field::InIndex(_) | Field::FirstOf(_) => None,
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
    let bytes = read_small(&beside, MAX_BESIDE)?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    at.string(&value)
}

/// The first group of `pattern` in the first [`MAX_BESIDE`] bytes of the
/// file `file` relative to the folder of the transcript at `path`.
fn in_file_text(path: &str, file: &str, pattern: &crate::description::Pattern) -> Option<String> {
    let beside = Path::new(path).parent()?.join(file);
    let bytes = read_head(&beside, MAX_BESIDE)?;
    let text = String::from_utf8_lossy(&bytes);
    let value = pattern
        .0
        .captures(&text)?
        .get(1)?
        .as_str()
        .trim()
        .to_string();
    (!value.is_empty()).then_some(value)
}

/// The first `max` bytes of the regular file at `path` (all of a smaller
/// one), checked as [`read_small`] checks.
pub(crate) fn read_head(path: &Path, max: u64) -> Option<Vec<u8>> {
    read_checked(path, max, true)
}

/// The bytes of the regular file at `path` when it holds at most `max`;
/// none for anything else: a FIFO (whose open would wait for a writer) or
/// a device is refused before it is opened, and the open handle is checked
/// again (the path may have changed in between) and read through a bound.
pub(crate) fn read_small(path: &Path, max: u64) -> Option<Vec<u8>> {
    read_checked(path, max, false)
}

/// A regular file's bytes up to `max`: its first `max` when `head`, else
/// none for a larger file.
fn read_checked(path: &Path, max: u64, head: bool) -> Option<Vec<u8>> {
    use std::io::Read;
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO swapped in after the check returns at once.
        options.custom_flags(NONBLOCK);
    }
    let file = options.open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || (!head && meta.len() > max) {
        return None;
    }
    let mut bytes = Vec::new();
    let limit = if head { max } else { max.saturating_add(1) };
    file.take(limit).read_to_end(&mut bytes).ok()?;
    (u64::try_from(bytes.len()).ok()? <= max).then_some(bytes)
}

/// `O_NONBLOCK`, by platform (a regular file reads the same with it).
#[cfg(any(target_os = "linux", target_os = "android"))]
const NONBLOCK: i32 = 0o4000;
#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
const NONBLOCK: i32 = 0x0004;

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

/// How long an answer of [`unslug`] is kept: a long-running server sees
/// a folder made (or removed) since within this time.
const KEPT_FOR: Duration = Duration::from_secs(60);

/// The folder on this machine whose path, written as a slug, is `slug`;
/// none when no folder is, or when more than one is (`my-app`, `my.app`
/// and `my/app` all write `my-app`: a guess could give one project's
/// sessions to another). Answers are kept for [`KEPT_FOR`]: a reader meets
/// the same few project slugs in every file.
pub fn unslug(slug: &str) -> Option<String> {
    static FOUND: OnceLock<Mutex<Kept>> = OnceLock::new();
    let cache = FOUND.get_or_init(|| Mutex::new(Kept::default()));
    let now = Instant::now();
    if let Some(found) = cache.lock().ok().and_then(|c| c.get(slug, now)) {
        return found;
    }
    let found = search(slug);
    if let Ok(mut c) = cache.lock() {
        c.put(slug, found.clone(), now);
    }
    found
}

/// Answers of [`unslug`], each with when it was found.
#[derive(Default)]
struct Kept(HashMap<String, (Instant, Option<String>)>);

impl Kept {
    /// The answer for `slug` found less than [`KEPT_FOR`] before `now`.
    fn get(&self, slug: &str, now: Instant) -> Option<Option<String>> {
        let (at, found) = self.0.get(slug)?;
        (now.saturating_duration_since(*at) < KEPT_FOR).then(|| found.clone())
    }

    fn put(&mut self, slug: &str, found: Option<String>, now: Instant) {
        self.0
            .retain(|_, (at, _)| now.saturating_duration_since(*at) < KEPT_FOR);
        self.0.insert(slug.to_string(), (now, found));
    }
}

/// The one folder whose slug is `slug`, looked for on disk.
fn search(slug: &str) -> Option<String> {
    let (root, rest) = root_of(slug);
    let mut search = Search {
        budget: MAX_LISTINGS,
        cut: false,
        found: Vec::new(),
    };
    search.find(&root, &normal(rest));
    // A search cut short may have missed a second folder.
    if search.cut || search.found.len() != 1 {
        return None;
    }
    search.found.pop().map(|p| p.to_string_lossy().into_owned())
}

/// A slug's search: the listings it may still make, whether it ran out of
/// them, and the folders found so far.
struct Search {
    budget: usize,
    cut: bool,
    found: Vec<PathBuf>,
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

impl Search {
    /// Adds the folders below `dir` that `rest` names: a child whose
    /// normal name is all of `rest`, or its start followed by `-` and the
    /// rest found below it; stops at two (one is the answer, two are
    /// ambiguous) or when the listings are spent.
    fn find(&mut self, dir: &Path, rest: &str) {
        if rest.is_empty() {
            self.found.push(dir.to_path_buf());
            return;
        }
        if self.budget == 0 {
            self.cut = true;
            return;
        }
        self.budget -= 1;
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut children: Vec<(String, PathBuf)> = entries
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
        for (name, path) in children {
            if self.found.len() > 1 || self.cut {
                return;
            }
            let after = rest.get(name.len()..).unwrap_or("");
            self.find(&path, after.strip_prefix('-').unwrap_or(after));
        }
    }
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
        // `my-app`, `my.app` and `my/app` all slug to `my-app`: no guess.
        assert_eq!(found(&base.join("work/my-app")), None);
        std::fs::create_dir_all(base.join("work/only.one")).unwrap();
        assert_eq!(
            found(&base.join("work/only.one")),
            Some(base.join("work/only.one"))
        );
    }

    #[test]
    fn an_answer_is_kept_only_for_a_while() {
        let start = Instant::now();
        let mut kept = Kept::default();
        kept.put("home-me-later", None, start);
        assert_eq!(kept.get("home-me-later", start), Some(None));
        let later = start + KEPT_FOR;
        assert_eq!(kept.get("home-me-later", later), None);
        kept.put("home-me-x", Some("/home/me/x".into()), later);
        assert_eq!(kept.0.len(), 1, "the old answer is dropped");
    }

    #[test]
    fn a_pattern_is_found_in_the_head_of_a_large_side_file() {
        let dir = tempfile::tempdir().unwrap();
        let transcript = dir.path().join("ui.json");
        let transcript = transcript.to_str().unwrap();
        let pattern = crate::description::Pattern::grouped(r"Directory \((.+?)\)", "x").unwrap();
        let mut text = b"[{\"text\":\"Directory (/w/app) Files\"}".to_vec();
        text.extend(vec![b' '; (MAX_BESIDE as usize) + 10]);
        text.extend(b"Directory (/w/late)]");
        std::fs::write(dir.path().join("api.json"), &text).unwrap();
        assert_eq!(
            in_file_text(transcript, "api.json", &pattern).as_deref(),
            Some("/w/app")
        );
        // Only the head is read: a match after it is not found.
        std::fs::write(dir.path().join("late.json"), &text[40..]).unwrap();
        assert_eq!(in_file_text(transcript, "late.json", &pattern), None);
        assert_eq!(in_file_text(transcript, "gone.json", &pattern), None);
        // A device is no side file, whatever is read of it.
        assert_eq!(read_head(Path::new("/dev/zero"), 4), None);
        assert_eq!(
            read_head(&dir.path().join("api.json"), 4).as_deref(),
            Some(&b"[{\"t"[..])
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_side_file_is_read_only_when_it_is_a_small_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // A FIFO with no writer: reading it would wait forever.
        assert_eq!(read_small(&fifo, MAX_BESIDE), None);
        assert_eq!(read_small(Path::new("/dev/zero"), MAX_BESIDE), None);
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert_eq!(read_small(&zero, MAX_BESIDE), None);
        let big = dir.path().join("big.json");
        std::fs::write(&big, vec![b' '; 1025]).unwrap();
        assert_eq!(read_small(&big, 1024), None);
        std::fs::write(&big, b"{}").unwrap();
        assert_eq!(read_small(&big, 1024), Some(b"{}".to_vec()));
        assert_eq!(read_small(dir.path(), 1024), None);
    }
}
