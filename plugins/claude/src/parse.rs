//! A transcript file turned into deja's sessions.
//!
//! Lines that are not JSON objects (a torn last line while Claude Code is
//! writing) are skipped; the next index reads them whole. Records are read
//! one at a time and dropped once their session has taken what it keeps, so
//! memory follows what is said, not the size of tool outputs. A session file
//! gives its session, plus one session per subagent whose records older
//! versions wrote inline (`isSidechain: true`); a subagent's file gives the
//! subagent's session, without the records it copied from its parent. A
//! file with no conversation record (summaries, snapshots, mode lines) is no
//! session; one whose records say nothing is counted as skipped, as is a
//! subagent Claude Code ran only to warm its cache (`Warmup`).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use deja_plugin_api::{
    text, ParseOutputV1_3 as ParseOutput, RString, Session, SessionEdits, SessionOutcomes,
};

use crate::builder::{Builder, Built};
use crate::family;
use crate::ids;
use crate::layout::{self, Kind, Location};
use crate::records::Record;

/// The prompt of the cache warm-up Claude Code sends to subagents (2.0.x–2.1.x).
const WARMUP: &str = "Warmup";

/// Parses the transcript at `path` holding `bytes`, modified at `modified_ms`;
/// the commands' outcomes and the edits' texts come beside the sessions.
pub fn parse(path: &str, bytes: &[u8], modified_ms: i64) -> ParseOutput {
    let (text, _) = text::decode(bytes);
    let mut records = text::lines(&text).filter_map(Record::parse).peekable();
    let mut output = ParseOutput::default();
    if records.peek().is_none() {
        if text.contains('\n') && !text.trim().is_empty() {
            output.output.warnings.push(
                format!("`{path}` holds no JSON record (not a Claude Code transcript?); skipped")
                    .into(),
            );
        }
        return output;
    }
    let location = Location::of(path);
    let file = File {
        path,
        location: &location,
        modified_ms,
    };
    match &location.kind {
        Kind::Session => file.session(records, &mut output),
        Kind::Subagent {
            agent_id,
            parent_folder,
        } => file.subagent(records, agent_id, parent_folder.as_deref(), &mut output),
    }
    output
}

/// The transcript being parsed.
struct File<'a> {
    path: &'a str,
    location: &'a Location,
    modified_ms: i64,
}

/// A session's identity: deja's id, Claude Code's, its parent, a fallback title.
struct Identity {
    id: String,
    native_id: String,
    parent_id: Option<String>,
    title: Option<String>,
}

/// The subagents written inline in a session file, each with its records.
#[derive(Default)]
struct Sidechains {
    groups: Vec<(String, Builder)>,
    group_of: HashMap<String, usize>,
}

impl Sidechains {
    /// Routes a sidechain record to its subagent: by `agentId`, else by the
    /// group of its parent record, else it starts a new one keyed by its uuid.
    fn add(&mut self, record: &Record, fallback_ms: i64) {
        let known = record
            .agent_id
            .as_deref()
            .and_then(|agent| self.groups.iter().position(|(key, _)| key == agent))
            .or_else(|| {
                record
                    .parent_uuid
                    .as_deref()
                    .and_then(|p| self.group_of.get(p).copied())
            });
        let group = known.unwrap_or_else(|| {
            let key = record
                .agent_id
                .clone()
                .or_else(|| record.uuid.clone())
                .unwrap_or_else(|| format!("sidechain{}", self.groups.len() + 1));
            self.groups.push((key, Builder::default()));
            self.groups.len() - 1
        });
        if let Some(uuid) = &record.uuid {
            self.group_of.insert(uuid.clone(), group);
        }
        if let Some((_, builder)) = self.groups.get_mut(group) {
            builder.add(record, fallback_ms);
        }
    }
}

impl File<'_> {
    /// A session file, and the subagents written inline in it.
    fn session(&self, records: impl Iterator<Item = Record>, output: &mut ParseOutput) {
        let mut main = Builder::default();
        let mut sidechains = Sidechains::default();
        let mut first_session_id: Option<String> = None;
        for record in records {
            if first_session_id.is_none() {
                first_session_id = record.session_id.clone().filter(|s| !s.is_empty());
            }
            if record.is_sidechain {
                sidechains.add(&record, self.modified_ms);
            } else {
                main.add(&record, self.modified_ms);
            }
        }
        let native_id = self.native_session_id(first_session_id);
        self.emit(
            main.finish(self.folder()),
            Identity {
                id: native_id.clone(),
                native_id: native_id.clone(),
                parent_id: None,
                title: None,
            },
            output,
        );
        for (agent, builder) in sidechains.groups {
            let built = builder.finish(self.folder());
            if is_warmup(&built) {
                output.output.skipped_empty += 1;
                continue;
            }
            let identity = Identity {
                id: ids::subagent(Some(&native_id), &agent),
                native_id: agent,
                parent_id: Some(native_id.clone()),
                title: None,
            };
            self.emit(built, identity, output);
        }
    }

    /// A subagent's own transcript.
    fn subagent(
        &self,
        records: impl Iterator<Item = Record>,
        agent_id: &str,
        parent_folder: Option<&str>,
        output: &mut ParseOutput,
    ) {
        let file = Path::new(self.path);
        let inherited_from = |parent: &str| {
            layout::parent_transcript(file, parent)
                .map(|p| family::uuids(&p))
                .unwrap_or_default()
        };
        let mut parent = parent_folder
            .filter(|folder| !folder.is_empty())
            .map(String::from);
        let mut inherited: Option<HashSet<String>> = parent.as_deref().map(inherited_from);
        let mut builder = Builder::default();
        for record in records {
            // Older layouts name the parent in their records only.
            if inherited.is_none() {
                if let Some(session) = record.session_id.as_deref().filter(|s| !s.is_empty()) {
                    inherited = Some(inherited_from(session));
                    parent = Some(session.to_string());
                }
            }
            let copied = record.uuid.as_deref().is_some_and(|uuid| {
                inherited
                    .as_ref()
                    .is_some_and(|inherited| inherited.contains(uuid))
            });
            if !copied {
                builder.add(&record, self.modified_ms);
            }
        }
        let built = builder.finish(self.folder());
        if is_warmup(&built) {
            output.output.skipped_empty += 1;
            return;
        }
        let identity = Identity {
            id: ids::subagent(parent.as_deref(), agent_id),
            native_id: agent_id.to_string(),
            parent_id: parent,
            title: layout::meta_file(file).and_then(|meta| family::description(&meta)),
        };
        self.emit(built, identity, output);
    }

    fn folder(&self) -> Option<&str> {
        self.location.project_folder.as_deref()
    }

    /// The session id `claude --resume` takes: the file's name when it is a
    /// session id, else the records' `sessionId`, else the name as it is.
    fn native_session_id(&self, first_session_id: Option<String>) -> String {
        let stem = &self.location.stem;
        if layout::is_uuid(stem) {
            return stem.clone();
        }
        first_session_id.unwrap_or_else(|| stem.clone())
    }

    /// Adds the session `built` describes, or counts it as skipped.
    fn emit(&self, built: Built, identity: Identity, output: &mut ParseOutput) {
        if !built.conversation {
            return;
        }
        if built.messages.is_empty() {
            output.output.skipped_empty += 1;
            return;
        }
        let (started, updated) = built.span.unwrap_or((self.modified_ms, self.modified_ms));
        let mut session = Session::new(identity.id, identity.native_id, started, updated);
        session.project = built.project;
        session.title = built.title.or(identity.title).map(RString::from).into();
        session.parent_id = identity.parent_id.map(RString::from).into();
        session.messages = built.messages.into();
        session.files = built.files.into();
        session.commands = built.commands.into();
        output.output.sessions.push(session);
        output.outcomes.push(SessionOutcomes {
            commands: built.outcomes.into(),
        });
        output.edits.push(SessionEdits::from_texts(built.edits));
    }
}

/// A subagent Claude Code ran to warm its prompt cache, not to do work.
fn is_warmup(built: &Built) -> bool {
    built.first_user.as_deref() == Some(WARMUP)
}
