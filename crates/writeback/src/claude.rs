//! Claude Code: `${CLAUDE_CONFIG_DIR:-~/.claude}/projects/<folder>/<id>.jsonl`,
//! where `<folder>` is the directory with every UTF-16 unit that is not a
//! letter or digit turned into `-` (past 200 characters Claude Code cuts it
//! and adds a hash: then only an existing folder of the project is used).
//! One `user` or `assistant` record a message, chained by `parentUuid`.

use std::path::{Path, PathBuf};

use deja_model::Role;
use serde_json::json;

use crate::{ids, Checked, Error, Placement, Places, Writer};

/// Claude Code's writer.
pub struct Claude;

/// The longest folder name Claude Code writes whole.
const MAX_FOLDER: usize = 200;

/// `dir` as Claude Code (and Qwen Code) names its folder: each UTF-16 unit
/// that is not an ASCII letter or digit becomes `-`.
pub fn encode_dir(dir: &str) -> String {
    dir.chars()
        .flat_map(|c| {
            let keep = c.is_ascii_alphanumeric();
            std::iter::repeat_n(
                if keep { c } else { '-' },
                if keep { 1 } else { c.len_utf16() },
            )
        })
        .collect()
}

/// The project folder under `root` for `cwd`.
fn folder(root: &Path, cwd: &str) -> Result<PathBuf, Error> {
    let name = encode_dir(cwd);
    if name.len() <= MAX_FOLDER {
        return Ok(root.join(name));
    }
    // A cut name ends with a hash of Claude Code's own: use the folder the
    // project already has, if exactly one.
    let prefix = format!("{}-", &name[..MAX_FOLDER]);
    let found: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect();
    match <[PathBuf; 1]>::try_from(found) {
        Ok([one]) => Ok(one),
        Err(_) => Err(Error::Unsafe {
            what: "directory",
            value: cwd.escape_debug().to_string(),
            why: "its Claude Code folder name is longer than 200 characters, and no single folder of it exists yet (run Claude Code there once)",
        }),
    }
}

impl Writer for Claude {
    fn harness(&self) -> &'static str {
        "claude"
    }

    fn root(&self, places: &Places) -> PathBuf {
        places
            .dir_var("CLAUDE_CONFIG_DIR")
            .unwrap_or_else(|| places.home.join(".claude"))
            .join("projects")
    }

    fn place(&self, session: &Checked<'_>, root: &Path) -> Result<Placement, Error> {
        Ok(Placement {
            dir: folder(root, session.cwd)?,
            file_name: format!("{}.jsonl", session.id),
            markers: Vec::new(),
        })
    }

    fn encode(&self, session: &Checked<'_>) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        let mut parent: Option<String> = None;
        let mut given = ids::Given::default();
        for (i, m) in session.messages.iter().enumerate() {
            let generated = ids::record("claude", session.id, i);
            let native = m.native_id.as_deref();
            // deja's id of a user message is its record's `uuid`, of an
            // assistant message its `message.id`.
            let (uuid, message) = match m.role {
                Role::User => (
                    given.keep(native, ids::is_uuid, generated),
                    json!({"role": "user", "content": m.text}),
                ),
                Role::Assistant => {
                    let fallback = format!("msg_{}", generated.replace('-', ""));
                    let is_message_id = |n: &str| n.starts_with("msg_") && ids::is_plain(n);
                    let id = given.keep(native, is_message_id, fallback);
                    let message = json!({
                        "id": id,
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "text", "text": m.text}],
                    });
                    (generated, message)
                }
            };
            let record = json!({
                "parentUuid": parent,
                "isSidechain": false,
                "type": m.role.as_str(),
                "message": message,
                "uuid": uuid,
                "timestamp": ids::rfc3339(session.time_of(i)),
                "userType": "external",
                "cwd": session.cwd,
                "sessionId": session.id,
            });
            serde_json::to_writer(&mut out, &record)?;
            out.push(b'\n');
            parent = Some(uuid);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn folders_are_named_as_claude_code_names_them() {
        assert_eq!(encode_dir("/home/ann/my_app"), "-home-ann-my-app");
        assert_eq!(encode_dir("/tmp/é😀"), "-tmp----");
        assert_eq!(encode_dir("/a/../b"), "-a----b");
    }

    #[test]
    fn a_long_directory_uses_its_existing_folder_or_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let cwd = format!("/{}", "x".repeat(300));
        assert!(folder(root.path(), &cwd).is_err());
        let name = format!("{}-abc12", &encode_dir(&cwd)[..MAX_FOLDER]);
        std::fs::create_dir(root.path().join(&name)).unwrap();
        assert_eq!(folder(root.path(), &cwd).unwrap(), root.path().join(name));
    }
}
