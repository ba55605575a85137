//! Where a transcript sits below `projects/`, and what that says about it:
//!
//! - `<project>/<sessionId>.jsonl`: a session;
//! - `<project>/<sessionId>/subagents/agent-<agentId>.jsonl`: a subagent of
//!   that session (2.1.2+), with `agent-<agentId>.meta.json` beside it (2.1.81+);
//! - `<project>/agent-<agentId>.jsonl`: a subagent, before the `subagents/`
//!   folder existed (2.0.65–2.1.1); its records name the parent session.
//!
//! `<project>` is the encoded working directory (see [`crate::project`]).
//! Paths are split on both separators, so a tree copied from Windows reads
//! the same.

use std::path::{Path, PathBuf};

/// The folder that holds a session's subagent transcripts.
pub const SUBAGENTS: &str = "subagents";
/// The file-name prefix of subagent transcripts.
pub const AGENT_PREFIX: &str = "agent-";
/// The transcript extension.
pub const EXTENSION: &str = ".jsonl";

/// What a transcript's path says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file name without `.jsonl`.
    pub stem: String,
    /// The encoded project folder's name, when the path has one.
    pub project_folder: Option<String>,
    /// Whether it is a session or a subagent's transcript.
    pub kind: Kind,
}

/// A session or a subagent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A session of its own.
    Session,
    /// A subagent's transcript.
    Subagent {
        /// The agent id from the file name (`agent-<id>.jsonl`).
        agent_id: String,
        /// The parent session's id, from the `<sessionId>/subagents/` folder
        /// (older layouts name it in their records only).
        parent_folder: Option<String>,
    },
}

impl Location {
    /// Reads `path`.
    pub fn of(path: &str) -> Location {
        let mut parts = path.rsplit(['/', '\\']);
        let name = parts.next().unwrap_or_default();
        let stem = name.strip_suffix(EXTENSION).unwrap_or(name).to_string();
        let parent = parts.next().filter(|p| !p.is_empty());
        let Some(agent_id) = stem.strip_prefix(AGENT_PREFIX).map(String::from) else {
            return Location {
                stem,
                project_folder: parent.map(String::from),
                kind: Kind::Session,
            };
        };
        let (parent_folder, project_folder) = if parent == Some(SUBAGENTS) {
            let session = parts.next().filter(|p| !p.is_empty()).map(String::from);
            (
                session,
                parts.next().filter(|p| !p.is_empty()).map(String::from),
            )
        } else {
            (None, parent.map(String::from))
        };
        Location {
            stem,
            project_folder,
            kind: Kind::Subagent {
                agent_id,
                parent_folder,
            },
        }
    }

    /// Whether it is a subagent's transcript.
    pub fn is_subagent(&self) -> bool {
        matches!(self.kind, Kind::Subagent { .. })
    }
}

/// The parent session's transcript of the subagent transcript at `path`,
/// once the parent's id is known: `<project>/<parent>.jsonl`.
pub fn parent_transcript(path: &Path, parent_session: &str) -> Option<PathBuf> {
    let dir = path.parent()?;
    let project = if dir.file_name().is_some_and(|n| n == SUBAGENTS) {
        dir.parent()?.parent()?
    } else {
        dir
    };
    Some(project.join(format!("{parent_session}{EXTENSION}")))
}

/// The `.meta.json` beside a subagent transcript.
pub fn meta_file(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(EXTENSION)?;
    Some(path.with_file_name(format!("{stem}.meta.json")))
}

/// Whether `name` looks like a session id Claude Code gives (a UUID).
pub fn is_uuid(name: &str) -> bool {
    let groups: Vec<&str> = name.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, len)| g.len() == len && g.chars().all(|c| c.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_and_both_subagent_layouts() {
        let s = Location::of(
            "/h/.claude/projects/-home-a-app/0b903f4a-f843-4a76-90bb-df10400e0478.jsonl",
        );
        assert_eq!(s.stem, "0b903f4a-f843-4a76-90bb-df10400e0478");
        assert_eq!(s.project_folder.as_deref(), Some("-home-a-app"));
        assert_eq!(s.kind, Kind::Session);

        let n =
            Location::of("C:\\p\\projects\\C--x\\44ef\\subagents\\agent-a71969c1296961234.jsonl");
        assert_eq!(n.project_folder.as_deref(), Some("C--x"));
        assert_eq!(
            n.kind,
            Kind::Subagent {
                agent_id: "a71969c1296961234".into(),
                parent_folder: Some("44ef".into())
            }
        );
        assert!(n.is_subagent());

        let o = Location::of("/p/-Users-b-ev/agent-a05b3d3.jsonl");
        assert_eq!(o.project_folder.as_deref(), Some("-Users-b-ev"));
        assert_eq!(
            o.kind,
            Kind::Subagent {
                agent_id: "a05b3d3".into(),
                parent_folder: None
            }
        );
        assert_eq!(Location::of("x.jsonl").project_folder, None);
    }

    #[test]
    fn parent_and_meta_files() {
        let nested = Path::new("/p/proj/S/subagents/agent-a1.jsonl");
        assert_eq!(
            parent_transcript(nested, "S"),
            Some(PathBuf::from("/p/proj/S.jsonl"))
        );
        assert_eq!(
            meta_file(nested),
            Some(PathBuf::from("/p/proj/S/subagents/agent-a1.meta.json"))
        );
        let old = Path::new("/p/proj/agent-a1.jsonl");
        assert_eq!(
            parent_transcript(old, "S"),
            Some(PathBuf::from("/p/proj/S.jsonl"))
        );
    }

    #[test]
    fn uuids() {
        assert!(is_uuid("0b903f4a-f843-4a76-90bb-df10400e0478"));
        assert!(!is_uuid("agent-a05b3d3"));
        assert!(!is_uuid("0b903f4a-f843-4a76-90bb-df10400e047"));
        assert!(!is_uuid("0b903f4a-f843-4a76-90bb-df10400e047g"));
    }
}
