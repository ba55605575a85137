//! The live sessions of the agents running on this machine, as their
//! SessionStart hooks report them: one small file per agent process and
//! session in `<data>/live/`, naming the agent's process (its id and, where
//! the system tells, its start time), the session's id and folder, and when
//! it was recorded. deja's MCP server, started by the same agent process,
//! leaves out every session its agent recorded, which follows `/clear` and
//! `/resume` within one agent. Records of agents no longer running are
//! removed whenever a record is written.
//!
//! The agent is the nearest ancestor process that is not a shell: agents run
//! hook commands through `sh -c`, and their MCP servers directly.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The shells an agent may run a hook or server through.
const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox", "csh", "tcsh",
];
/// Most ancestors walked past looking for the agent.
const MAX_DEPTH: usize = 8;

/// A process: its id and, where known, when it started (clock ticks since
/// boot on Linux), so that a reused id is not taken for the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agent {
    /// Process id.
    pub pid: u32,
    /// Start time, where the system tells.
    pub started: Option<u64>,
}

/// One live session.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    agent: Agent,
    /// The agent's name (`claude`, `codex`, ...).
    harness: String,
    session_id: String,
    cwd: Option<PathBuf>,
    /// When recorded (ms since the epoch).
    time_ms: i64,
}

/// A process's parent and name.
struct Proc {
    parent: u32,
    name: String,
    started: Option<u64>,
}

/// What the system says of process `pid`.
#[cfg(target_os = "linux")]
fn proc_info(pid: u32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (name) state ppid ...`: the name may hold spaces and parentheses.
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    // Fields 4 (ppid) and 22 (starttime), counted from 1 with pid as 1.
    let parent = fields.get(1)?.parse().ok()?;
    let started = fields.get(19).and_then(|s| s.parse().ok());
    Some(Proc {
        parent,
        name,
        started,
    })
}

/// What the system says of process `pid` (`ps`, where there is no /proc).
#[cfg(all(unix, not(target_os = "linux")))]
fn proc_info(pid: u32) -> Option<Proc> {
    let out = std::process::Command::new("ps")
        .args(["-o", "ppid=", "-o", "comm=", "-p", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let (parent, name) = text.trim().split_once(char::is_whitespace)?;
    let name = name.trim();
    Some(Proc {
        parent: parent.trim().parse().ok()?,
        name: name.rsplit('/').next().unwrap_or(name).to_string(),
        started: None,
    })
}

#[cfg(not(unix))]
fn proc_info(_pid: u32) -> Option<Proc> {
    None
}

/// This process's agent: the nearest ancestor that is not a shell.
pub fn agent() -> Option<Agent> {
    #[cfg(unix)]
    let mut pid = std::os::unix::process::parent_id();
    #[cfg(not(unix))]
    let mut pid: u32 = 0;
    for _ in 0..MAX_DEPTH {
        if pid <= 1 {
            return None;
        }
        let info = proc_info(pid)?;
        let name = info.name.trim_start_matches('-');
        if !SHELLS.contains(&name) {
            return Some(Agent {
                pid,
                started: info.started,
            });
        }
        pid = info.parent;
    }
    None
}

/// Whether `agent` still runs (unknown counts as running).
fn running(agent: &Agent) -> bool {
    #[cfg(target_os = "linux")]
    {
        match proc_info(agent.pid) {
            Some(p) => agent.started.is_none() || p.started == agent.started,
            None => false,
        }
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        let Ok(pid) = libc::pid_t::try_from(agent.pid) else {
            return true;
        };
        // SAFETY: signal 0 only checks that the process exists; nothing is sent.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        alive || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = agent;
        true
    }
}

/// The folder of the records under deja's data folder.
fn folder(data_dir: &Path) -> PathBuf {
    data_dir.join("live")
}

/// The start of the file names of `agent`'s records.
fn prefix(agent: &Agent) -> String {
    format!("{}-{}-", agent.pid, agent.started.unwrap_or(0))
}

/// Records `session_id` (in `cwd`) as a live session of `agent`, and
/// removes the records of agents no longer running.
pub fn record(
    data_dir: &Path,
    agent: &Agent,
    harness: &str,
    session_id: &str,
    cwd: Option<&Path>,
) -> anyhow::Result<()> {
    let dir = folder(data_dir);
    deja_store::create_private_dir(&dir)?;
    remove_stale(&dir);
    let key = deja_model::sha256_hex(format!("{harness}\0{session_id}").as_bytes());
    let path = dir.join(format!("{}{}.json", prefix(agent), &key[..16]));
    let record = Record {
        agent: *agent,
        harness: harness.to_string(),
        session_id: session_id.to_string(),
        cwd: cwd.map(Path::to_path_buf),
        time_ms: chrono::Utc::now().timestamp_millis(),
    };
    deja_fs::atomic_write(&path, &serde_json::to_vec(&record)?)?;
    Ok(())
}

/// Removes the records of agents no longer running.
fn remove_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let stale = read(&e.path()).is_none_or(|r| !running(&r.agent));
        if stale && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The record in `path`, if it is one.
fn read(path: &Path) -> Option<Record> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_string(&mut text)
        .ok()?;
    serde_json::from_str(&text).ok()
}

/// The session ids `agent` recorded as live.
pub fn sessions_of(data_dir: &Path, agent: &Agent) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(folder(data_dir)) else {
        return Vec::new();
    };
    let prefix = prefix(agent);
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .filter_map(|e| read(&e.path()))
        .filter(|r| r.agent == *agent)
        .map(|r| r.session_id)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agents_sessions_are_its_own_and_dead_agents_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let me = Agent {
            pid: std::process::id(),
            started: proc_info(std::process::id()).and_then(|p| p.started),
        };
        record(dir.path(), &me, "claude", "s-1", None).unwrap();
        record(dir.path(), &me, "claude", "s-2", Some(Path::new("/w"))).unwrap();
        let mut mine = sessions_of(dir.path(), &me);
        mine.sort();
        assert_eq!(mine, ["s-1", "s-2"]);
        // An agent that no longer runs: its record goes at the next write.
        let gone = Agent {
            pid: u32::MAX - 7,
            started: Some(1),
        };
        record(dir.path(), &gone, "claude", "old", None).unwrap();
        assert_eq!(sessions_of(dir.path(), &gone), ["old"]);
        record(dir.path(), &me, "claude", "s-3", None).unwrap();
        assert!(sessions_of(dir.path(), &gone).is_empty());
        assert_eq!(sessions_of(dir.path(), &me).len(), 3);
    }
}
