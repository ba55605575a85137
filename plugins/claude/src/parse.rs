//! A transcript file turned into deja's sessions.
//!
//! Lines that are not JSON objects (a torn last line while Claude Code is
//! writing) are skipped; the next index reads them whole. A session file
//! gives its session, plus one session per subagent whose records older
//! versions wrote inline (`isSidechain: true`); a subagent's file gives the
//! subagent's session, without the records it copied from its parent. A
//! file with no conversation record (summaries, snapshots, mode lines) is no
//! session; one whose records say nothing is counted as skipped, as is a
//! subagent Claude Code ran only to warm its cache (`Warmup`).

use std::collections::HashMap;
use std::path::Path;

use deja_plugin_api::{text, ParseOutput, RString, Session};

use crate::builder::{Builder, Built};
use crate::family;
use crate::ids;
use crate::layout::{self, Kind, Location};
use crate::records::Record;

/// The prompt of the cache warm-up Claude Code sends to subagents (2.0.x–2.1.x).
const WARMUP: &str = "Warmup";

/// Parses the transcript at `path` holding `bytes`, modified at `modified_ms`.
pub fn parse(path: &str, bytes: &[u8], modified_ms: i64) -> ParseOutput {
    let (text, _) = text::decode(bytes);
    let records: Vec<Record> = text::lines(&text).filter_map(Record::parse).collect();
    let mut output = ParseOutput::default();
    if records.is_empty() && text.contains('\n') && !text.trim().is_empty() {
        output.warnings.push(
            format!("`{path}` holds no JSON record (not a Claude Code transcript?); skipped")
                .into(),
        );
        return output;
    }
    let location = Location::of(path);
    let file = File {
        path,
        location: &location,
        modified_ms,
    };
    match &location.kind {
        Kind::Session => file.session(&records, &mut output),
        Kind::Subagent {
            agent_id,
            parent_folder,
        } => file.subagent(&records, agent_id, parent_folder.as_deref(), &mut output),
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

impl File<'_> {
    /// A session file, and the subagents written inline in it.
    fn session(&self, records: &[Record], output: &mut ParseOutput) {
        let native_id = self.native_session_id(records);
        let mut main = Builder::default();
        let mut sidechains: Vec<(String, Builder)> = Vec::new();
        let mut group_of: HashMap<String, usize> = HashMap::new();
        for record in records {
            if !record.is_sidechain {
                main.add(record, self.modified_ms);
                continue;
            }
            let group = record
                .agent_id
                .as_deref()
                .and_then(|agent| sidechains.iter().position(|(key, _)| key == agent))
                .or_else(|| {
                    record
                        .parent_uuid
                        .as_deref()
                        .and_then(|p| group_of.get(p).copied())
                });
            let group = group.unwrap_or_else(|| {
                let key = record
                    .agent_id
                    .clone()
                    .or_else(|| record.uuid.clone())
                    .unwrap_or_else(|| format!("sidechain{}", sidechains.len() + 1));
                sidechains.push((key, Builder::default()));
                sidechains.len() - 1
            });
            if let Some(uuid) = &record.uuid {
                group_of.insert(uuid.clone(), group);
            }
            if let Some((_, builder)) = sidechains.get_mut(group) {
                builder.add(record, self.modified_ms);
            }
        }
        self.emit(
            main.finish(self.location.project_folder.as_deref()),
            Identity {
                id: native_id.clone(),
                native_id: native_id.clone(),
                parent_id: None,
                title: None,
            },
            output,
        );
        for (agent, builder) in sidechains {
            let built = builder.finish(self.location.project_folder.as_deref());
            if is_warmup(&built) {
                output.skipped_empty += 1;
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
        records: &[Record],
        agent_id: &str,
        parent_folder: Option<&str>,
        output: &mut ParseOutput,
    ) {
        let parent = parent_folder
            .filter(|folder| !folder.is_empty())
            .map(String::from)
            .or_else(|| records.iter().find_map(|r| r.session_id.clone()));
        let file = Path::new(self.path);
        let inherited = parent
            .as_deref()
            .and_then(|p| layout::parent_transcript(file, p))
            .map(|p| family::uuids(&p))
            .unwrap_or_default();
        let mut builder = Builder::default();
        for record in records {
            let copied = record
                .uuid
                .as_deref()
                .is_some_and(|uuid| inherited.contains(uuid));
            if !copied {
                builder.add(record, self.modified_ms);
            }
        }
        let built = builder.finish(self.location.project_folder.as_deref());
        if is_warmup(&built) {
            output.skipped_empty += 1;
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

    /// The session id `claude --resume` takes: the file's name when it is a
    /// session id, else the records' `sessionId`, else the name as it is.
    fn native_session_id(&self, records: &[Record]) -> String {
        let stem = &self.location.stem;
        if layout::is_uuid(stem) {
            return stem.clone();
        }
        records
            .iter()
            .find_map(|r| r.session_id.clone().filter(|s| !s.is_empty()))
            .unwrap_or_else(|| stem.clone())
    }

    /// Adds the session `built` describes, or counts it as skipped.
    fn emit(&self, built: Built, identity: Identity, output: &mut ParseOutput) {
        if !built.conversation {
            return;
        }
        if built.messages.is_empty() {
            output.skipped_empty += 1;
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
        output.sessions.push(session);
    }
}

/// A subagent Claude Code ran to warm its prompt cache, not to do work.
fn is_warmup(built: &Built) -> bool {
    built.first_user.as_deref() == Some(WARMUP)
}
