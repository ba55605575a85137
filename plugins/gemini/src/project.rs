//! Which project a chat file belongs to. Gemini keeps a project's chats in
//! `<gemini dir>/tmp/<id>/chats/`, where `<id>` is a slug (v0.29+) or
//! `sha256(root)` (earlier, and still the `projectHash` field). The directory
//! comes from, in order:
//!
//! 1. `tmp/<id>/.project_root`, which holds it;
//! 2. `<gemini dir>/projects.json` (`{"projects": {"/abs/path": "slug"}}`);
//! 3. a hash match: the first root whose sha256 is the folder name or the
//!    file's `projectHash`, among the session's `directories`, the roots in
//!    `projects.json` and every `tmp/*/.project_root`.
//!
//! Otherwise the project is known by its id only. Gemini lower-cases Windows
//! paths in both side files, so the directory is written as they have it.

use std::fs;
use std::path::{Path, PathBuf};

use deja_plugin_api::{text, Project, ROption};
use serde::Deserialize;

use crate::ids::sha256_hex;
use crate::records::Metadata;
use deja_plugin_api::paths;

/// Where a chat file sits in a Gemini tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// `tmp/<id>`.
    pub project_temp: PathBuf,
    /// `<id>`.
    pub id: String,
}

impl Location {
    /// The `tmp/<id>` that holds `transcript` in its `chats/` folder (directly,
    /// or one level down for subagents).
    pub fn of(transcript: &Path) -> Option<Location> {
        let chats = transcript
            .ancestors()
            .skip(1)
            .take(2)
            .find(|dir| dir.file_name().is_some_and(|name| name == "chats"))?;
        let project_temp = chats.parent()?;
        Some(Location {
            project_temp: project_temp.to_path_buf(),
            id: project_temp.file_name()?.to_string_lossy().into_owned(),
        })
    }

    fn tmp(&self) -> Option<&Path> {
        self.project_temp.parent()
    }
}

/// What a session file says about its project.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clues<'a> {
    /// The `projectHash` field.
    pub project_hash: Option<&'a str>,
    /// The `directories` field.
    pub directories: &'a [String],
}

impl<'a> From<&'a Metadata> for Clues<'a> {
    fn from(metadata: &'a Metadata) -> Self {
        Clues {
            project_hash: metadata.project_hash.as_deref(),
            directories: &metadata.directories,
        }
    }
}

/// The project of the chat file at `transcript`.
pub fn resolve(transcript: &Path, clues: Clues<'_>) -> Project {
    let location = Location::of(transcript);
    let dir = find_dir(location.as_ref(), clues);
    let id = location
        .map(|l| l.id)
        .or(clues.project_hash.map(String::from));
    let name = dir
        .as_deref()
        .and_then(paths::basename)
        .map(String::from)
        .or_else(|| id.clone().filter(|id| !is_hash(id)));
    Project {
        dir: dir.map(Into::into).into(),
        name: name.map(Into::into).into(),
        id: id.map(Into::into).into(),
    }
}

/// The directory of a project, when known.
pub fn dir(project: &Project) -> Option<&str> {
    match &project.dir {
        ROption::RSome(dir) => Some(dir.as_str()),
        ROption::RNone => None,
    }
}

/// The project directory, from the side files in the order of the module doc.
fn find_dir(location: Option<&Location>, clues: Clues<'_>) -> Option<String> {
    if let Some(root) = location.and_then(|l| read_root(&l.project_temp.join(".project_root"))) {
        return Some(root);
    }
    let registry = location.map(registry).unwrap_or_default();
    let registered = location.and_then(|l| {
        registry
            .iter()
            .find(|(_, slug)| *slug == l.id)
            .map(|(root, _)| root.clone())
    });
    registered.or_else(|| hash_match(location, clues, registry))
}

/// The first known root whose sha256 is the hash-named folder or the `projectHash`.
fn hash_match(
    location: Option<&Location>,
    clues: Clues<'_>,
    registry: Vec<(String, String)>,
) -> Option<String> {
    let targets: Vec<&str> = location
        .map(|l| l.id.as_str())
        .filter(|id| is_hash(id))
        .into_iter()
        .chain(clues.project_hash)
        .collect();
    if targets.is_empty() {
        return None;
    }
    let mut candidates = clues.directories.to_vec();
    candidates.extend(registry.into_iter().map(|(root, _)| root));
    candidates.extend(location.map(all_own_roots).unwrap_or_default());
    candidates
        .into_iter()
        .find(|root| targets.contains(&sha256_hex(root).as_str()))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Registry {
    projects: serde_json::Map<String, serde_json::Value>,
}

/// `(root, slug)` pairs of `projects.json`, beside `tmp/`.
fn registry(location: &Location) -> Vec<(String, String)> {
    let Some(file) = location
        .tmp()
        .and_then(Path::parent)
        .map(|g| g.join("projects.json"))
    else {
        return Vec::new();
    };
    let Ok(bytes) = fs::read(file) else {
        return Vec::new();
    };
    let registry: Registry = serde_json::from_str(&text::decode(&bytes).0).unwrap_or_default();
    registry
        .projects
        .into_iter()
        .filter_map(|(root, slug)| Some((root, slug.as_str()?.to_string())))
        .collect()
}

/// The `.project_root` of every project folder beside this one.
fn all_own_roots(location: &Location) -> Vec<String> {
    let Some(Ok(entries)) = location.tmp().map(fs::read_dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    dirs.sort();
    dirs.iter()
        .filter_map(|dir| read_root(&dir.join(".project_root")))
        .collect()
}

fn read_root(file: &Path) -> Option<String> {
    let bytes = fs::read(file).ok()?;
    let root = text::decode(&bytes).0.trim().to_string();
    (!root.is_empty()).then_some(root)
}

fn is_hash(id: &str) -> bool {
    id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_main_and_subagent_files() {
        let main = Location::of(Path::new("/g/tmp/proj/chats/session-x.jsonl"));
        let sub = Location::of(Path::new("/g/tmp/proj/chats/parent/sub.jsonl"));
        let expected = Some(Location {
            project_temp: PathBuf::from("/g/tmp/proj"),
            id: "proj".into(),
        });
        assert_eq!(main, expected);
        assert_eq!(sub, expected);
        assert_eq!(Location::of(Path::new("/g/tmp/proj/checkpoint.json")), None);
        assert_eq!(Location::of(Path::new("session.json")), None);
    }

    #[test]
    fn unknown_project_keeps_its_id() {
        let p = resolve(
            Path::new("/nowhere/tmp/my-app/chats/s.json"),
            Clues::default(),
        );
        assert_eq!(p.dir, ROption::RNone);
        assert_eq!(p.id, ROption::RSome("my-app".into()));
        assert_eq!(p.name, ROption::RSome("my-app".into()));
        let hash = "a".repeat(64);
        let path = format!("/nowhere/tmp/{hash}/chats/s.json");
        let p = resolve(Path::new(&path), Clues::default());
        assert_eq!(p.id, ROption::RSome(hash.into()));
        assert_eq!(p.name, ROption::RNone);
    }

    #[test]
    fn matches_the_hash_of_the_sessions_directories() {
        let root = "C:\\Users\\me\\Vault".to_string();
        let hash = sha256_hex(&root);
        let clues = Clues {
            project_hash: Some(&hash),
            directories: std::slice::from_ref(&root),
        };
        let p = resolve(Path::new("/nowhere/s.json"), clues);
        assert_eq!(p.dir, ROption::RSome(root.clone().into()));
        assert_eq!(p.name, ROption::RSome("Vault".into()));
        assert_eq!(p.id, ROption::RSome(hash.into()));
    }
}
