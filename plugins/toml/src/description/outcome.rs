//! How a command rule says the command ended, and `[[results]]`: records
//! that give the outcome of a call made in another record, matched by the
//! call's id.
//!
//! In a `[[tools]]` rule or a `[[results]]` rule:
//! - `exit_code`: a pointer to the exit code (a number, or a string that is
//!   one); 0 succeeded, anything else failed;
//! - `failed`: a condition that, when the call (or result) meets it, says it
//!   failed (`{ "/is_error" = true }`, `{ "/state/status" = "error" }`);
//! - `succeeded`: a condition that says it succeeded.
//!
//! An exit code wins over the conditions, `failed` over `succeeded`; with
//! none of them met the outcome is unknown. A `[[tools]]` rule's own outcome
//! wins over a result's.

use deja_plugin_api::CommandOutcome;
use serde::Deserialize;
use serde_json::Value;

use crate::pointer::{Condition, Pointer};

/// The outcome fields of a rule, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct OutcomeFields<'a> {
    /// Where the exit code is.
    pub exit_code: Option<&'a Pointer>,
    /// When the command failed.
    pub failed: Option<&'a Condition>,
    /// When it succeeded.
    pub succeeded: Option<&'a Condition>,
}

impl OutcomeFields<'_> {
    /// The outcome `record` gives; `None` when it gives none.
    pub fn of(&self, record: &Value) -> Option<CommandOutcome> {
        if let Some(code) = self
            .exit_code
            .and_then(|p| p.get(record))
            .and_then(|v| exit_code(&v))
        {
            return Some(CommandOutcome::from_exit_code(code));
        }
        if self.failed.is_some_and(|c| c.matches(record)) {
            return Some(CommandOutcome::from_failed(true));
        }
        if self.succeeded.is_some_and(|c| c.matches(record)) {
            return Some(CommandOutcome::from_failed(false));
        }
        None
    }
}

/// An exit code: an integer, or a string holding one.
fn exit_code(value: &Value) -> Option<i32> {
    match value {
        Value::Number(n) => n.as_i64().and_then(|n| i32::try_from(n).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `[[results]]`: records (or elements of an array in them) that give the
/// outcome of the call whose id is at `call_id`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultRule {
    /// An array in the record whose every element is a result.
    pub each: Option<Pointer>,
    /// The records (or elements) it applies to.
    pub when: Condition,
    /// The id of the call it answers (a `[[tools]]` rule's `call_id`).
    pub call_id: Pointer,
    /// Where the exit code is.
    pub exit_code: Option<Pointer>,
    /// When the call failed.
    pub failed: Option<Condition>,
    /// When it succeeded.
    pub succeeded: Option<Condition>,
}

impl ResultRule {
    /// Its outcome fields.
    pub fn outcome(&self) -> OutcomeFields<'_> {
        OutcomeFields {
            exit_code: self.exit_code.as_ref(),
            failed: self.failed.as_ref(),
            succeeded: self.succeeded.as_ref(),
        }
    }

    /// The (call id, outcome) pairs `record` gives.
    pub fn results(&self, record: &Value) -> Vec<(String, CommandOutcome)> {
        let holder = self.each.as_ref().and_then(|p| p.get(record));
        let items: Vec<&Value> = match (&self.each, holder.as_deref()) {
            (None, _) => vec![record],
            (Some(_), Some(Value::Array(items))) => items.iter().collect(),
            (Some(_), _) => Vec::new(),
        };
        items
            .into_iter()
            .filter(|item| self.when.matches(item))
            .filter_map(|item| Some((self.call_id.string(item)?, self.outcome().of(item)?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deja_plugin_api::CommandStatus;
    use serde_json::json;

    #[test]
    fn exit_codes_win_then_failed_then_succeeded() {
        let rule: ResultRule = toml::from_str(
            "when = { \"/type\" = \"end\" }\ncall_id = \"/id\"\nexit_code = \"/meta/exit\"\nfailed = { \"/status\" = \"error\" }\nsucceeded = { \"/status\" = \"completed\" }\n",
        )
        .unwrap();
        let of = |v: Value| rule.outcome().of(&v);
        assert_eq!(
            of(json!({"meta": {"exit": 2}, "status": "completed"})),
            Some(CommandOutcome::from_exit_code(2))
        );
        assert_eq!(
            of(json!({"meta": {"exit": "0"}})),
            Some(CommandOutcome::from_exit_code(0))
        );
        assert_eq!(
            of(json!({"status": "error"})).map(|o| o.status),
            Some(CommandStatus::Failed)
        );
        assert_eq!(
            of(json!({"status": "completed"})).map(|o| o.status),
            Some(CommandStatus::Succeeded)
        );
        assert_eq!(of(json!({"status": "running"})), None);
    }

    #[test]
    fn results_name_their_call() {
        let rule: ResultRule = toml::from_str(
            "each = \"/content\"\nwhen = { \"/type\" = \"tool_result\" }\ncall_id = \"/tool_use_id\"\nfailed = { \"/is_error\" = true }\nsucceeded = { \"/is_error\" = false }\n",
        )
        .unwrap();
        let record = json!({"content": [
            {"type": "tool_result", "tool_use_id": "a", "is_error": true},
            {"type": "tool_result", "tool_use_id": "b", "is_error": false},
            {"type": "text", "text": "x"}]});
        let found = rule.results(&record);
        assert_eq!(
            found,
            [
                ("a".to_string(), CommandOutcome::from_failed(true)),
                ("b".to_string(), CommandOutcome::from_failed(false)),
            ]
        );
    }
}
