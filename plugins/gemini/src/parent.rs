//! The parent of a subagent chat. Since v0.36 Gemini nests a subagent's file
//! as `chats/<parent>/<id>.jsonl`, where `<parent>` is the parent's sanitized
//! `sessionId` (or a `skill-extraction-<8hex>` id of the memory service, which
//! is no session). The parent's own file sits in the same `chats/` folder and
//! its name ends in `-<first 8 characters of its sessionId>.json(l)`.
//!
//! The parent id is that file's deja id, computed as [`crate::ids`] does for
//! it, when a file there starts with a `sessionId` that sanitizes to
//! `<parent>`. Otherwise it is the folder name as is, so the relation is still
//! recorded, and still matches the parent's native id in the usual case of a
//! UUID, which sanitizing leaves unchanged.

use std::fs;
use std::path::{Path, PathBuf};

use deja_plugin_api::text;

use crate::ids;
use crate::replay;

/// The parent of a nested subagent file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parent {
    /// The folder name: the parent's sanitized `sessionId`.
    pub folder: String,
    /// The parent's deja id, or the folder name when its file is not found.
    pub id: String,
    /// The parent's `sessionId` (what `gemini --resume` takes), when found.
    pub native_id: Option<String>,
}

/// The parent of `transcript` when it is nested below a parent chat folder.
pub fn of(transcript: &Path) -> Option<Parent> {
    let folder_dir = transcript.parent()?;
    let chats = folder_dir.parent()?;
    if chats.file_name()? != "chats" {
        return None;
    }
    let folder = folder_dir.file_name()?.to_string_lossy().into_owned();
    let found = candidates(chats, &folder)
        .into_iter()
        .find_map(|file| identify(&file, &folder));
    Some(match found {
        Some((id, native_id)) => Parent {
            folder,
            id,
            native_id: Some(native_id),
        },
        None => Parent {
            id: folder.clone(),
            folder,
            native_id: None,
        },
    })
}

/// `chats/session-*-<first 8 of folder>.json(l)`, JSONL first.
fn candidates(chats: &Path, folder: &str) -> Vec<PathBuf> {
    let short: String = folder.chars().take(8).collect();
    let Ok(entries) = fs::read_dir(chats) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            name.is_some_and(|name| {
                name.starts_with("session-")
                    && (name.ends_with(&format!("-{short}.jsonl"))
                        || name.ends_with(&format!("-{short}.json")))
            })
        })
        .collect();
    files.sort_by_key(|path| (path.extension().is_some_and(|e| e == "json"), path.clone()));
    files
}

/// `(deja id, sessionId)` of `file` when its session is the one `folder` names.
fn identify(file: &Path, folder: &str) -> Option<(String, String)> {
    let bytes = fs::read(file).ok()?;
    let identity = replay::identity(&text::decode(&bytes).0)?;
    if ids::sanitize(&identity.session_id) != folder {
        return None;
    }
    let name = file.file_name()?.to_string_lossy();
    Some((
        ids::session_id(&identity, &name),
        identity.session_id.clone(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_directly_in_chats_have_no_parent() {
        assert_eq!(of(Path::new("/g/tmp/p/chats/session-x.jsonl")), None);
        assert_eq!(of(Path::new("x.jsonl")), None);
    }

    #[test]
    fn an_unresolvable_parent_is_its_folder_name() {
        let parent = of(Path::new(
            "/nowhere/chats/skill-extraction-67084600/mrp1k5.json",
        ));
        assert_eq!(
            parent,
            Some(Parent {
                folder: "skill-extraction-67084600".into(),
                id: "skill-extraction-67084600".into(),
                native_id: None,
            })
        );
    }
}
