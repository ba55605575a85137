//! The message rules of a description (`[[messages]]`, `[[tools]]`): which
//! records become messages, with what role, text parts and tool records.

use serde::de::{self, Deserializer};
use serde::Deserialize;

use std::fmt;

use super::Pattern;
use crate::pointer::{Condition, Pointer};

/// The message rules: each record yields one message for every rule it
/// matches, in the rules' order.
#[derive(Debug)]
pub struct MessageRules(pub Vec<MessageFields>);

impl std::ops::Deref for MessageRules {
    type Target = [MessageFields];
    fn deref(&self) -> &[MessageFields] {
        &self.0
    }
}

impl<'de> Deserialize<'de> for MessageRules {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Rules;
        impl<'de> de::Visitor<'de> for Rules {
            type Value = MessageRules;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a `[message]` table or `[[message]]` tables")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<MessageRules, A::Error> {
                MessageFields::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|m| MessageRules(vec![m]))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<MessageRules, A::Error> {
                let mut rules = Vec::new();
                while let Some(rule) = seq.next_element::<MessageFields>()? {
                    rules.push(rule);
                }
                if rules.is_empty() {
                    return Err(de::Error::custom("at least one message rule is needed"));
                }
                Ok(MessageRules(rules))
            }
        }
        d.deserialize_any(Rules)
    }
}

/// `[message]`: which records are messages.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageFields {
    /// Records are messages only when they match one of these (default: all).
    #[serde(default)]
    pub when: Vec<Condition>,
    /// Records that are never messages (tool output, injected context,
    /// reasoning), even when they match `when`.
    #[serde(default)]
    pub skip: Vec<Condition>,
    /// Who wrote it: a pointer to the harness's value (see `roles`), or
    /// `user` or `assistant` for every record the rule matches.
    pub role: RoleField,
    /// The harness's values for each role (default: `user` and `assistant`).
    #[serde(default)]
    pub roles: Roles,
    /// Its text: a string, or an array of content parts (see `parts`).
    pub text: Pointer,
    /// How an array of content parts is read.
    #[serde(default)]
    pub parts: Parts,
    /// Text the harness adds to a message itself (injected context, editor
    /// state), as regular expressions: every match is removed.
    #[serde(default)]
    pub strip: Vec<Pattern>,
    /// When it was written: a pointer, or a pattern's group in the string
    /// at a pointer (see [`super::TimeField`]).
    pub time: Option<super::TimeField>,
    /// The harness's message id; consecutive records with the same id are
    /// one message (their texts joined).
    pub id: Option<Pointer>,
    /// Only the first record of the session that the rule matches is its
    /// message, and the rules after it pass that record by: for a harness
    /// that writes the person's task as it writes the model's text (the
    /// first `text` record is the task, the others answers).
    #[serde(default)]
    pub first: bool,
}

/// Where a message's role comes from.
#[derive(Debug, Clone)]
pub enum RoleField {
    /// The harness's value at a pointer, mapped by `roles`.
    At(Pointer),
    /// The same role for every record the rule matches.
    Is(FixedRole),
}

/// A role named in the description itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixedRole {
    /// The person at the keyboard.
    User,
    /// The model.
    Assistant,
}

impl<'de> Deserialize<'de> for RoleField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        match s.as_str() {
            "user" => Ok(RoleField::Is(FixedRole::User)),
            "assistant" => Ok(RoleField::Is(FixedRole::Assistant)),
            _ => Pointer::parse(&s)
                .map(RoleField::At)
                .map_err(|e| de::Error::custom(format!("{e}, or is `user` or `assistant`"))),
        }
    }
}

/// Role values.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Roles {
    /// Values that mean the person at the keyboard.
    #[serde(default = "default_user")]
    pub user: OneOrMany,
    /// Values that mean the model.
    #[serde(default = "default_assistant")]
    pub assistant: OneOrMany,
}

impl Default for Roles {
    fn default() -> Self {
        Roles {
            user: default_user(),
            assistant: default_assistant(),
        }
    }
}

fn default_user() -> OneOrMany {
    OneOrMany(vec!["user".into()])
}

fn default_assistant() -> OneOrMany {
    OneOrMany(vec!["assistant".into()])
}

/// A string or a list of strings.
#[derive(Debug, Clone, Default)]
pub struct OneOrMany(pub Vec<String>);

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            One(String),
            Many(Vec<String>),
        }
        match Raw::deserialize(d) {
            Ok(Raw::One(s)) => Ok(OneOrMany(vec![s])),
            Ok(Raw::Many(v)) => Ok(OneOrMany(v)),
            Err(_) => Err(de::Error::custom("expected a string or a list of strings")),
        }
    }
}

/// How content parts are read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parts {
    /// The part's type, inside the part.
    #[serde(default = "default_part_type")]
    pub r#type: Pointer,
    /// Types whose text is kept (default `text`); a part without a type is
    /// kept when it is a string, or when `untyped` is set.
    #[serde(default = "default_keep")]
    pub keep: OneOrMany,
    /// Whether object parts without a type are kept too (as VS Code writes
    /// markdown: `{"value": "..."}`).
    #[serde(default)]
    pub untyped: bool,
    /// The part's text, inside the part: a pointer, or a list of pointers
    /// of which the first one present is read (parts of different types
    /// keep their text in different places).
    #[serde(default = "default_part_text")]
    pub text: Pointers,
    /// Parts whose text matches one of these regular expressions are not
    /// the message's (a tool's result the harness sends as a text part).
    #[serde(default)]
    pub drop: Vec<Pattern>,
    /// How kept parts are joined (default: a blank line).
    pub join: Option<String>,
}

impl Default for Parts {
    fn default() -> Self {
        Parts {
            r#type: default_part_type(),
            keep: default_keep(),
            untyped: false,
            text: default_part_text(),
            drop: Vec::new(),
            join: None,
        }
    }
}

fn default_part_type() -> Pointer {
    Pointer::literal("/type")
}

fn default_part_text() -> Pointers {
    Pointers(vec![Pointer::literal("/text")])
}

/// One pointer or a list of them, tried in order.
#[derive(Debug, Clone)]
pub struct Pointers(pub Vec<Pointer>);

impl Pointers {
    /// The string at the first pointer that has one.
    pub fn string(&self, record: &serde_json::Value) -> Option<String> {
        self.0.iter().find_map(|p| p.string(record))
    }
}

impl<'de> Deserialize<'de> for Pointers {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let OneOrMany(texts) = OneOrMany::deserialize(d)?;
        if texts.is_empty() {
            return Err(de::Error::custom("at least one JSON pointer is needed"));
        }
        texts
            .iter()
            .map(|t| Pointer::parse(t).map_err(de::Error::custom))
            .collect::<Result<Vec<_>, _>>()
            .map(Pointers)
    }
}

fn default_keep() -> OneOrMany {
    OneOrMany(vec!["text".into()])
}

/// `[[tools]]`: a tool call that becomes a command or file record.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    /// An array in the record whose every element is a tool call (the rest
    /// of the keys then point into the element); default: the record itself.
    pub each: Option<Pointer>,
    /// The records (or elements) it applies to.
    pub when: Condition,
    /// The command line it ran.
    pub command: Option<Pointer>,
    /// An array of command lines it ran.
    pub commands: Option<Pointer>,
    /// The one file it touched.
    pub file: Option<Pointer>,
    /// An array of files it touched.
    pub files: Option<Pointer>,
    /// What the edit wrote into its file (a tool's new text, or the whole
    /// content it wrote): the string here, kept with each file record of
    /// the call, for `deja blame FILE:LINE`.
    pub text: Option<Pointer>,
    /// In each element of the `commands` or `files` array, where the value
    /// is (default: the element is the string).
    pub item: Option<Pointer>,
    /// A regular expression with one group: the values are its matches in
    /// the strings found (file names inside a patch's text).
    pub pattern: Option<Pattern>,
    /// With a `pattern` whose group is JSON text (a tool call's arguments
    /// written inside a message), the value is the string at this pointer
    /// in it; a match that is not JSON gives none.
    pub in_match: Option<Pointer>,
    /// What happened to the file: `edit` (default), `read`, `add`, `read-only`.
    #[serde(default)]
    pub action: Action,
    /// Who ran the command: `agent` (a tool call, the default) or `user`
    /// (a command the person ran through the harness).
    #[serde(default)]
    pub origin: Origin,
    /// When (default: the message time).
    pub time: Option<Pointer>,
    /// The call's id, by which a `[[results]]` record gives its outcome.
    pub call_id: Option<Pointer>,
    /// Where the command's exit code is (0 succeeded, else failed).
    pub exit_code: Option<Pointer>,
    /// When the call meets this condition, the command failed.
    pub failed: Option<Condition>,
    /// When the call meets this condition, the command succeeded.
    pub succeeded: Option<Condition>,
}

impl Tool {
    /// Its outcome fields.
    pub fn outcome(&self) -> super::outcome::OutcomeFields<'_> {
        super::outcome::OutcomeFields {
            exit_code: self.exit_code.as_ref(),
            failed: self.failed.as_ref(),
            succeeded: self.succeeded.as_ref(),
        }
    }
}

/// A file action.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Edited or written.
    #[default]
    Edit,
    /// Read by the agent.
    Read,
    /// Added to the context as editable.
    Add,
    /// Added to the context read-only.
    ReadOnly,
}

/// Who ran a command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// The agent, as a tool call.
    #[default]
    Agent,
    /// The person, through the harness.
    User,
}
