//! Gemini CLI: `<gemini>/tmp/<slug>/chats/session-<time>-<id8>.jsonl`, the
//! folder being `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`. The project's
//! slug is the one `projects.json` gives the directory, else the one whose
//! `.project_root` names it, else a new one claimed as Gemini CLI claims
//! them (its folder's name, lower-cased, `-` for the rest, `-1`, `-2` ...
//! when taken), with its `.project_root` written: Gemini CLI then finds it
//! and records it in `projects.json` itself. The file: a metadata line
//! (`sessionId`, `projectHash`, `startTime`, `lastUpdated`, `kind`), then
//! one line a message (`type` `user` with text parts, or `gemini` with the
//! text).

use std::path::{Path, PathBuf};

use deja_model::Role;
use serde_json::{json, Value};

use crate::{ids, Checked, Error, Placement, Places, Writer};

/// Gemini CLI's writer.
pub struct Gemini;

/// Each project folder's marker naming its directory.
const MARKER: &str = ".project_root";

/// Gemini CLI's slug of a folder name.
fn slugify(name: &str) -> String {
    let mut slug = String::new();
    for c in name.to_lowercase().chars() {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && slug.ends_with('-')) {
            slug.push(c);
        }
    }
    let slug = slug.trim_matches('-');
    if slug.is_empty() {
        "project".to_string()
    } else {
        slug.to_string()
    }
}

/// Whether `slug` is one Gemini CLI accepts in `projects.json`.
fn valid_slug(slug: &str) -> bool {
    !slug.is_empty()
        && slug
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The directory the marker in `folder` names, if any.
fn owner(folder: &Path) -> Option<String> {
    std::fs::read_to_string(folder.join(MARKER))
        .ok()
        .map(|s| s.trim().to_string())
}

/// `projects.json`'s map from directories to slugs (empty when unreadable).
fn registry(gemini: &Path) -> serde_json::Map<String, Value> {
    std::fs::read_to_string(gemini.join("projects.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|v| v.get("projects").and_then(Value::as_object).cloned())
        .unwrap_or_default()
}

/// The slug of `cwd` under `root` (`<gemini>/tmp`), and whether it is new.
fn slug_for(root: &Path, cwd: &str) -> (String, bool) {
    let gemini = root.parent().unwrap_or(root);
    let projects = registry(gemini);
    let owned_by_cwd = |slug: &str| owner(&root.join(slug)).is_none_or(|o| o == cwd);
    if let Some(slug) = projects.get(cwd).and_then(Value::as_str) {
        if valid_slug(slug) && owned_by_cwd(slug) {
            return (slug.to_string(), false);
        }
    }
    let marked = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| valid_slug(name))
        .find(|name| owner(&root.join(name)).as_deref() == Some(cwd));
    if let Some(slug) = marked {
        return (slug, false);
    }
    let base = slugify(
        Path::new(cwd)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(""),
    );
    let taken: Vec<&str> = projects.values().filter_map(Value::as_str).collect();
    let history = gemini.join("history");
    let mut n = 0usize;
    loop {
        let candidate = if n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        n += 1;
        let free = !taken.contains(&candidate.as_str())
            && std::fs::symlink_metadata(root.join(&candidate)).is_err()
            && owner(&history.join(&candidate)).is_none_or(|o| o == cwd);
        if free {
            return (candidate, true);
        }
    }
}

/// The `sessionId` on the first line of the recording at `path`.
fn session_id_of(path: &Path) -> Option<String> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).ok()?;
    let mut first = String::new();
    std::io::BufReader::new(file).read_line(&mut first).ok()?;
    let head: Value = serde_json::from_str(&first).ok()?;
    head.get("sessionId")?.as_str().map(str::to_string)
}

impl Writer for Gemini {
    fn harness(&self) -> &'static str {
        "gemini"
    }

    fn root(&self, places: &Places) -> PathBuf {
        places
            .dir_var("GEMINI_CLI_HOME")
            .map(|h| h.join(".gemini"))
            .unwrap_or_else(|| places.home.join(".gemini"))
            .join("tmp")
    }

    fn place(&self, session: &Checked<'_>, root: &Path) -> Result<Placement, Error> {
        let (slug, new) = slug_for(root, session.cwd);
        let project = root.join(&slug);
        let markers = if new {
            vec![(project.join(MARKER), session.cwd.as_bytes().to_vec())]
        } else {
            Vec::new()
        };
        let time: String = ids::rfc3339(session.started_ms)
            .chars()
            .take(16)
            .map(|c| if c == ':' { '-' } else { c })
            .collect();
        let short: String = session.id.chars().take(8).collect();
        Ok(Placement {
            dir: project.join("chats"),
            file_name: format!("session-{time}-{short}.jsonl"),
            markers,
        })
    }

    fn existing(&self, session: &Checked<'_>, root: &Path) -> Option<PathBuf> {
        let (slug, _) = slug_for(root, session.cwd);
        let short: String = session.id.chars().take(8).collect();
        let suffix = format!("-{short}.jsonl");
        std::fs::read_dir(root.join(slug).join("chats"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("session-") && n.ends_with(&suffix))
            })
            .find(|p| session_id_of(p).as_deref() == Some(session.id))
    }

    fn encode(&self, session: &Checked<'_>) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        let last = (0..session.messages.len())
            .map(|i| session.time_of(i))
            .max()
            .unwrap_or(session.updated_ms)
            .max(session.updated_ms);
        let head = json!({
            "sessionId": session.id,
            "projectHash": deja_model::sha256_hex(session.cwd.as_bytes()),
            "startTime": ids::rfc3339(session.started_ms),
            "lastUpdated": ids::rfc3339(last),
            "kind": "main",
        });
        serde_json::to_writer(&mut out, &head)?;
        out.push(b'\n');
        let mut given = ids::Given::default();
        for (i, m) in session.messages.iter().enumerate() {
            let (kind, content) = match m.role {
                Role::User => ("user", json!([{"text": m.text}])),
                Role::Assistant => ("gemini", json!(m.text)),
            };
            // deja's id of a message is its record's `id`.
            let id = given.keep(
                m.native_id.as_deref(),
                ids::is_plain,
                ids::record("gemini", session.id, i),
            );
            let record = json!({
                "id": id,
                "timestamp": ids::rfc3339(session.time_of(i)),
                "type": kind,
                "content": content,
            });
            serde_json::to_writer(&mut out, &record)?;
            out.push(b'\n');
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn slugs_follow_gemini_cli() {
        assert_eq!(slugify("My App_2"), "my-app-2");
        assert_eq!(slugify("--x--"), "x");
        assert_eq!(slugify("ü"), "project");
    }

    #[test]
    fn the_projects_slug_is_reused_and_a_taken_one_skipped() {
        let gemini = tempfile::tempdir().unwrap();
        let root = gemini.path().join("tmp");
        std::fs::create_dir_all(root.join("app")).unwrap();
        std::fs::write(root.join("app").join(MARKER), "/other/app").unwrap();
        // Taken by another directory: the next one.
        assert_eq!(
            slug_for(&root, "/home/ann/app"),
            ("app-1".to_string(), true)
        );
        // Named by projects.json.
        std::fs::write(
            gemini.path().join("projects.json"),
            r#"{"projects": {"/home/ann/app": "ann-app"}}"#,
        )
        .unwrap();
        assert_eq!(
            slug_for(&root, "/home/ann/app"),
            ("ann-app".to_string(), false)
        );
        // Found by its marker.
        assert_eq!(slug_for(&root, "/other/app"), ("app".to_string(), false));
    }

    #[test]
    fn a_recording_of_the_same_session_under_another_name_counts_as_existing() {
        let gemini = tempfile::tempdir().unwrap();
        let root = gemini.path().join("tmp");
        let chats = root.join("app/chats");
        std::fs::create_dir_all(&chats).unwrap();
        std::fs::write(root.join("app").join(MARKER), "/home/ann/app").unwrap();
        let other = chats.join("session-2025-01-01T08-00-abcd1234.jsonl");
        std::fs::write(&other, "{\"sessionId\":\"abcd1234-0000\"}\n").unwrap();
        let messages = [];
        let session = |id| Checked {
            id,
            cwd: "/home/ann/app",
            messages: &messages,
            started_ms: 0,
            updated_ms: 0,
        };
        assert_eq!(
            Gemini.existing(&session("abcd1234-0000"), &root),
            Some(other)
        );
        assert_eq!(Gemini.existing(&session("abcd1234-9999"), &root), None);
    }
}
