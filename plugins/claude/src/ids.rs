//! deja's session ids. A session is known by its Claude Code session id (a
//! UUID, the transcript's name), which is unique and what `claude --resume`
//! takes. A subagent repeats its parent's `sessionId` in every record, so it
//! is known by its parent's id and its own agent id:
//! `<parent sessionId>-agent-<agentId>`; a subagent whose parent is unknown
//! is `agent-<agentId>`.

/// What joins a parent's id and a subagent's.
const AGENT_INFIX: &str = "-agent-";

/// deja's id of a subagent.
pub fn subagent(parent: Option<&str>, agent_id: &str) -> String {
    match parent {
        Some(parent) => format!("{parent}{AGENT_INFIX}{agent_id}"),
        None => format!("agent-{agent_id}"),
    }
}

/// The parent id and agent id of a subagent's deja id; `None` for a session's.
pub fn split_subagent(id: &str) -> Option<(Option<&str>, &str)> {
    if let Some(agent) = id.strip_prefix("agent-") {
        return Some((None, agent));
    }
    let (parent, agent) = id.split_once(AGENT_INFIX)?;
    Some((Some(parent), agent))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subagent_ids_round_trip() {
        let id = subagent(
            Some("44ef5cbf-9cc3-4f7b-ac40-337a4d39713b"),
            "a71969c1296961234",
        );
        assert_eq!(
            id,
            "44ef5cbf-9cc3-4f7b-ac40-337a4d39713b-agent-a71969c1296961234"
        );
        assert_eq!(
            split_subagent(&id),
            Some((
                Some("44ef5cbf-9cc3-4f7b-ac40-337a4d39713b"),
                "a71969c1296961234"
            ))
        );
        assert_eq!(subagent(None, "a05b3d3"), "agent-a05b3d3");
        assert_eq!(split_subagent("agent-a05b3d3"), Some((None, "a05b3d3")));
        assert_eq!(split_subagent("0b903f4a-f843-4a76-90bb-df10400e0478"), None);
    }
}
