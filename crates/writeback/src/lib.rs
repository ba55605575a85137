//! Write-back: a session kept in deja's store recreated in its agent's own
//! on-disk format, at the place the agent looks for it, so that the agent's
//! own resume reopens it after its transcript is gone (deleted, or never on
//! this machine: pulled from the team store).
//!
//! One mechanism for every agent: [`plan`] checks the session ([`check`]),
//! asks the agent's [`Writer`] where the file goes and what it holds, and
//! refuses a target that exists; [`write`] creates the folders (private) and
//! the file atomically, never replacing one ([`atomic`]). Each agent only
//! encodes: [`claude`], [`qwen`], [`gemini`], [`codex`].

pub mod atomic;
pub mod check;
pub mod claude;
pub mod codex;
mod error;
pub mod gemini;
pub mod ids;
mod places;
pub mod qwen;

use std::path::{Path, PathBuf};

use deja_model::Session;

pub use check::Checked;
pub use error::Error;
pub use places::Places;

/// Where a session's file goes, inside its agent's folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The folder the file goes in (created when missing).
    pub dir: PathBuf,
    /// The file's name.
    pub file_name: String,
    /// Small files the agent needs beside it, created only when missing
    /// (Gemini CLI's `.project_root`): path and bytes.
    pub markers: Vec<(PathBuf, Vec<u8>)>,
}

/// One agent's encoder: where its sessions live and how they are written.
pub trait Writer: Sync {
    /// deja's name of the harness (`claude`, `qwen`, `gemini`).
    fn harness(&self) -> &'static str;
    /// The agent's folder of sessions: nothing is written outside it.
    fn root(&self, places: &Places) -> PathBuf;
    /// Where `session` goes under `root` (may read what is there).
    fn place(&self, session: &Checked<'_>, root: &Path) -> Result<Placement, Error>;
    /// The file's bytes.
    fn encode(&self, session: &Checked<'_>) -> Result<Vec<u8>, Error>;
    /// A file of the same session elsewhere under `root` (another name or
    /// folder than the placement's), which the agent would find too.
    fn existing(&self, _session: &Checked<'_>, _root: &Path) -> Option<PathBuf> {
        None
    }
}

/// Every agent deja can write back to.
static WRITERS: &[&dyn Writer] = &[&claude::Claude, &qwen::Qwen, &gemini::Gemini, &codex::Codex];

/// The writer of `harness`, if there is one.
pub fn writer(harness: &str) -> Option<&'static dyn Writer> {
    WRITERS.iter().copied().find(|w| w.harness() == harness)
}

/// The harnesses that can be written back, in order.
pub fn harnesses() -> Vec<&'static str> {
    WRITERS.iter().map(|w| w.harness()).collect()
}

/// What [`write`] will do: the file and what it holds.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The harness.
    pub harness: &'static str,
    /// The agent's folder of sessions.
    pub root: PathBuf,
    /// The file to create.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// How many messages it holds.
    pub messages: usize,
    /// Files created beside it when missing.
    pub markers: Vec<(PathBuf, Vec<u8>)>,
}

/// Plans the write-back of `session`: refuses a harness without a writer,
/// a session whose id or directory is unsafe or unknown, one without
/// messages, and a target that exists already.
pub fn plan(session: &Session, places: &Places) -> Result<Plan, Error> {
    let writer = writer(&session.harness).ok_or_else(|| Error::Unsupported {
        harness: session.harness.clone(),
        supported: harnesses().join(", "),
    })?;
    let checked = check::check(session)?;
    let root = writer.root(places);
    let placement = writer.place(&checked, &root)?;
    check::file_name(&placement.file_name)?;
    let path = placement.dir.join(&placement.file_name);
    for inside in std::iter::once(&path).chain(placement.markers.iter().map(|(p, _)| p)) {
        let plain = inside.strip_prefix(&root).is_ok_and(|rest| {
            rest.components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
        });
        if !plain {
            return Err(Error::Outside {
                path: inside.clone(),
                root,
            });
        }
    }
    if std::fs::symlink_metadata(&path).is_ok() {
        return Err(Error::Exists { path });
    }
    if let Some(path) = writer.existing(&checked, &root) {
        return Err(Error::Exists { path });
    }
    Ok(Plan {
        harness: writer.harness(),
        bytes: writer.encode(&checked)?,
        messages: checked.messages.len(),
        root,
        path,
        markers: placement.markers,
    })
}

/// Carries out `plan`: the folders (private to the user), the markers, then
/// the file, written atomically and never over an existing one.
pub fn write(plan: &Plan) -> Result<(), Error> {
    let dir = plan.path.parent().unwrap_or(&plan.root);
    atomic::create_dirs(dir)?;
    atomic::ensure_inside(dir, &plan.root)?;
    for (marker, bytes) in &plan.markers {
        atomic::create_marker(marker, bytes)?;
    }
    atomic::create_new(&plan.path, &plan.bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use deja_model::{Message, Project, Role};

    fn session(harness: &str, id: &str, dir: &str) -> Session {
        let message = |role, text: &str, t| Message {
            role,
            text: text.into(),
            timestamp_ms: t,
            native_id: None,
        };
        Session {
            harness: harness.into(),
            id: id.into(),
            native_id: id.into(),
            started_at_ms: 1_767_261_600_000,
            updated_at_ms: 1_767_261_660_000,
            date_approximate: false,
            project: Project {
                dir: Some(dir.into()),
                ..Project::default()
            },
            title: None,
            parent_id: None,
            precedence: 0,
            messages: vec![
                message(Role::User, "why \"x\"?\nsay ✓", 1_767_261_600_000),
                message(Role::Assistant, "because", 1_767_261_660_000),
            ],
            files: vec![],
            commands: vec![],
        }
    }

    fn places(home: &Path) -> Places {
        Places {
            home: home.to_path_buf(),
            env: Default::default(),
        }
    }

    #[test]
    fn each_writer_writes_once_under_its_root_and_then_refuses() {
        let home = tempfile::tempdir().unwrap();
        let p = places(home.path());
        for (harness, expect) in [
            ("claude", ".claude/projects/-home-ann-app/s-1.jsonl"),
            ("qwen", ".qwen/projects/-home-ann-app/chats/s-1.jsonl"),
            (
                "gemini",
                ".gemini/tmp/app/chats/session-2026-01-01T10-00-s-1.jsonl",
            ),
            (
                "codex",
                ".codex/sessions/2026/01/01/rollout-2026-01-01T10-00-00-s-1.jsonl",
            ),
        ] {
            let s = session(harness, "s-1", "/home/ann/app");
            let plan = plan(&s, &p).unwrap();
            assert_eq!(plan.path, home.path().join(expect));
            assert_eq!(plan.messages, 2);
            write(&plan).unwrap();
            let text = std::fs::read_to_string(&plan.path).unwrap();
            assert!(text.contains(r#"why \"x\"?\nsay ✓"#), "{text}");
            assert!(text.contains("\"s-1\""), "{text}");
            assert!(matches!(
                super::plan(&s, &p),
                Err(Error::Exists { path }) if path == plan.path
            ));
            assert!(matches!(write(&plan), Err(Error::Exists { .. })));
        }
        assert_eq!(
            std::fs::read_to_string(home.path().join(".gemini/tmp/app/.project_root")).unwrap(),
            "/home/ann/app"
        );
    }

    #[test]
    fn a_harness_without_a_writer_is_refused_naming_those_with_one() {
        let home = tempfile::tempdir().unwrap();
        let err = plan(&session("aider", "s", "/a"), &places(home.path())).unwrap_err();
        assert_eq!(
            err.to_string(),
            "deja cannot write back aider sessions; it can write back sessions of: claude, qwen, gemini, codex"
        );
    }

    #[test]
    fn the_variables_move_the_roots() {
        let home = tempfile::tempdir().unwrap();
        let mut p = places(home.path());
        p.env.insert("CLAUDE_CONFIG_DIR".into(), "~/cc".into());
        p.env.insert("QWEN_HOME".into(), "/q".into());
        p.env.insert("GEMINI_CLI_HOME".into(), "/g".into());
        p.env.insert("CODEX_HOME".into(), "/c".into());
        assert_eq!(codex::Codex.root(&p), Path::new("/c/sessions"));
        assert_eq!(claude::Claude.root(&p), home.path().join("cc/projects"));
        assert_eq!(qwen::Qwen.root(&p), Path::new("/q/projects"));
        assert_eq!(gemini::Gemini.root(&p), Path::new("/g/.gemini/tmp"));
        p.env.insert("QWEN_RUNTIME_DIR".into(), "/r".into());
        assert_eq!(qwen::Qwen.root(&p), Path::new("/r/projects"));
    }
}
