//! A session's title, where Claude Code records one: the last `custom-title`
//! (`/rename`), else the last `agent-name`, else the last `ai-title`, else the
//! latest `summary` that belongs to the session, i.e. whose `leafUuid` is one
//! of its records. (Claude Code writes summaries of earlier sessions into the
//! file of the session that is starting, so most summaries in a file are
//! about other files; a file of summaries alone is no session.)

/// The title records of one session, as they come.
#[derive(Debug, Default, Clone)]
pub struct Titles {
    custom: Option<String>,
    agent_name: Option<String>,
    ai: Option<String>,
    summaries: Vec<(String, String)>,
}

impl Titles {
    /// A `custom-title` record.
    pub fn custom(&mut self, title: Option<&str>) {
        set(&mut self.custom, title);
    }

    /// An `agent-name` record.
    pub fn agent_name(&mut self, name: Option<&str>) {
        set(&mut self.agent_name, name);
    }

    /// An `ai-title` record.
    pub fn ai(&mut self, title: Option<&str>) {
        set(&mut self.ai, title);
    }

    /// A `summary` record of the conversation ending at `leaf`.
    pub fn summary(&mut self, summary: Option<&str>, leaf: Option<&str>) {
        if let (Some(summary), Some(leaf)) = (clean(summary), leaf) {
            self.summaries.push((leaf.to_string(), summary));
        }
    }

    /// The title, given which uuids are the session's own.
    pub fn pick(self, owns: impl Fn(&str) -> bool) -> Option<String> {
        self.custom.or(self.agent_name).or(self.ai).or_else(|| {
            self.summaries
                .into_iter()
                .rev()
                .find(|(leaf, _)| owns(leaf))
                .map(|(_, summary)| summary)
        })
    }
}

fn clean(value: Option<&str>) -> Option<String> {
    value
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(String::from)
}

fn set(slot: &mut Option<String>, value: Option<&str>) {
    if let Some(value) = clean(value) {
        *slot = Some(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_beats_agent_name_beats_ai_beats_summary() {
        let mut t = Titles::default();
        t.summary(Some("Sum"), Some("leaf"));
        assert_eq!(t.clone().pick(|_| true).as_deref(), Some("Sum"));
        t.ai(Some("AI one"));
        t.ai(Some("AI two"));
        assert_eq!(t.clone().pick(|_| true).as_deref(), Some("AI two"));
        t.agent_name(Some("named"));
        assert_eq!(t.clone().pick(|_| true).as_deref(), Some("named"));
        t.custom(Some("Mine"));
        t.custom(Some("  "));
        assert_eq!(t.pick(|_| true).as_deref(), Some("Mine"));
    }

    #[test]
    fn only_own_summaries_count_the_latest_first() {
        let mut t = Titles::default();
        t.summary(Some("Old"), Some("a"));
        t.summary(Some("Other session"), Some("x"));
        t.summary(Some("New"), Some("b"));
        t.summary(Some("No leaf"), None);
        assert_eq!(
            t.clone().pick(|leaf| leaf == "a" || leaf == "b").as_deref(),
            Some("New")
        );
        assert_eq!(t.clone().pick(|leaf| leaf == "a").as_deref(), Some("Old"));
        assert_eq!(t.pick(|_| false), None);
    }
}
