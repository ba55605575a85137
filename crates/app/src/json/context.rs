//! `deja context --json`, and the answer of `deja context --hook gemini`.

use serde::Serialize;

/// A project's digest.
#[derive(Debug, Clone, Serialize)]
pub struct Context<'a> {
    /// The project it is the digest of.
    pub project: &'a str,
    /// deja ids of the sessions it lists, newest first.
    pub sessions: &'a [String],
    /// The Markdown digest.
    pub text: &'a str,
}

/// The answer to Gemini CLI's SessionStart hook: `{}` when there is no
/// digest to add.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hook<'a> {
    /// The context to add to the session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_specific_output: Option<HookOutput<'a>>,
}

/// What the hook adds to the session.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookOutput<'a> {
    /// The digest, for the model to read.
    pub additional_context: &'a str,
    /// The hook's event: `SessionStart`.
    pub hook_event_name: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::keys;

    #[test]
    fn field_names() {
        let out = Context {
            project: "/p",
            sessions: &[],
            text: "t",
        };
        assert_eq!(keys(&out), ["project", "sessions", "text"]);
        let hook = Hook {
            hook_specific_output: Some(HookOutput {
                additional_context: "t",
                hook_event_name: "SessionStart",
            }),
        };
        assert_eq!(keys(&hook), ["hookSpecificOutput"]);
        assert_eq!(
            keys(&hook.hook_specific_output),
            ["additionalContext", "hookEventName"]
        );
        let none = Hook {
            hook_specific_output: None,
        };
        assert_eq!(serde_json::to_string(&none).unwrap(), "{}");
    }
}
