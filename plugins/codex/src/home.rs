//! Where a rollout sits in a Codex home. Codex keeps live rollouts in
//! `$CODEX_HOME/sessions/YYYY/MM/DD/` and archived ones, flat, in
//! `$CODEX_HOME/archived_sessions/`; side files such as `session_index.jsonl`
//! sit in `$CODEX_HOME` itself.

use std::path::{Path, PathBuf};

/// The live sessions folder of a Codex home.
pub const SESSIONS: &str = "sessions";
/// The archived sessions folder of a Codex home.
pub const ARCHIVED: &str = "archived_sessions";

/// How many folders above a rollout its `sessions/` folder can be (`YYYY/MM/DD`, plus one for odd layouts).
const MAX_DEPTH: usize = 5;

/// A rollout's place in its Codex home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The Codex home (`~/.codex`).
    pub home: PathBuf,
    /// Whether the rollout is in `archived_sessions/`.
    pub archived: bool,
}

impl Location {
    /// The place of the rollout at `transcript`, if it is below a
    /// `sessions/` or `archived_sessions/` folder.
    pub fn of(transcript: &Path) -> Option<Location> {
        transcript
            .ancestors()
            .skip(1)
            .take(MAX_DEPTH)
            .find_map(|dir| {
                let name = dir.file_name()?.to_str()?;
                let archived = match name {
                    SESSIONS => false,
                    ARCHIVED => true,
                    _ => return None,
                };
                Some(Location {
                    home: dir.parent()?.to_path_buf(),
                    archived,
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_home_of_live_and_archived_rollouts() {
        let live = Location::of(Path::new("/h/.codex/sessions/2026/01/08/rollout-x.jsonl"));
        assert_eq!(
            live,
            Some(Location {
                home: PathBuf::from("/h/.codex"),
                archived: false
            })
        );
        let archived = Location::of(Path::new("/h/.codex/archived_sessions/rollout-x.jsonl"));
        assert_eq!(archived.map(|l| l.archived), Some(true));
        assert_eq!(Location::of(Path::new("/tmp/rollout-x.jsonl")), None);
        assert_eq!(Location::of(Path::new("rollout-x.jsonl")), None);
    }
}
