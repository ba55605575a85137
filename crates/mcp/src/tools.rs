//! The server's tools (recall, session, sessions; blame and recap in modules of their own), independent of the protocol: their argument
//! types (validated, with errors that name the argument), and what each one
//! answers, as bounded text in the untrusted-data frame plus a structured
//! value with the same facts. Every stored string reaches the answer through
//! `deja_render`: each block of text is made untrusted before it is measured,
//! the frame's body is made untrusted again as a whole, and the structured
//! value is framed string by string with the trust marker.

use deja_config::Mode;
use deja_model::{message_id, Role};
use deja_recall::engine::{Engine, Query};
use deja_recall::{lexical, snippet, Candidates, Hit, Tuning};
use deja_store::{SessionFilter, SessionRow, Store};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::json::{self, mcp as out};
use crate::output::rfc3339;
use deja_render::frame;

/// Characters of a hit's text shown around its first match.
const SNIPPET_CHARS: usize = 320;
/// Room kept for the note under a cut message.
const CUT_NOTE: usize = 48;
/// Messages shown before and after `around` unless asked otherwise.
const DEFAULT_CONTEXT: usize = 3;
/// Most messages one `session` call may ask for on either side of `around`.
const MAX_CONTEXT: usize = 50;
/// Most bytes of a session's title in an answer.
const TITLE_BYTES: usize = 300;
/// Sessions a `sessions` call lists unless it asks for `limit`.
const DEFAULT_SESSIONS: usize = 10;
/// Most sessions one `sessions` call may ask for.
const MAX_SESSIONS: usize = 50;

/// A tool call that cannot be answered: the caller's mistake (told back to
/// the model as a tool error it can act on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError(pub String);

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn bad(message: impl Into<String>) -> CallError {
    CallError(message.into())
}

/// An answer's structured content, from its output struct: every string
/// made untrusted and bounded, with the trust marker (`deja_render::structured`).
fn structured(value: &impl Serialize, max_bytes: usize) -> Result<Value, CallError> {
    let value = serde_json::to_value(value)
        .map_err(|e| bad(format!("the answer cannot be written: {e}")))?;
    Ok(deja_render::structured::frame(value, max_bytes))
}

/// Deja's own notes after the frame, which may name stored ids: each line
/// untrusted, so nothing after the frame's end reads as its tag.
fn notes_after(text: &mut String, notes: &[String]) {
    for n in notes {
        text.push_str(&frame::field(n));
        text.push('\n');
    }
}

/// A project as one field: its directory, name or id.
fn project_field(p: &deja_model::Project) -> String {
    frame::field(
        p.dir
            .as_deref()
            .or(p.name.as_deref())
            .or(p.id.as_deref())
            .unwrap_or("-"),
    )
}

/// A tool's answer: readable text and the same facts as a value.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Text for the model, within the byte bound.
    pub text: String,
    /// The structured content (one of the structs of [`crate::json::mcp`]).
    pub value: Value,
}

/// The server's settings that shape answers.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Hits of a `recall` call without `limit`.
    pub limit: usize,
    /// Messages per session among a `recall` answer's hits.
    pub per_session: usize,
    /// Most bytes of text in one answer.
    pub max_answer_bytes: usize,
    /// The relevance floor (`recall.min_similarity`).
    pub min_similarity: f64,
    /// The relevance bar of an answer (`recall.min_score`).
    pub min_score: f64,
    /// Sessions never answered with (the asking agent's live session).
    pub exclude: Vec<String>,
    /// Whether sessions found in a code folder (which a cloned repository
    /// may have brought) are answered with (`context.code_folder_sessions`).
    pub code_folders: bool,
}

/// The tools' JSON Schemas (tool name, description, input schema).
pub fn definitions() -> Vec<(&'static str, &'static str, Value)> {
    let date =
        "A date: YYYY-MM-DD, RFC 3339, `today`, `yesterday`, or an age such as `7d`, `12h`, `2w`.";
    vec![
        (
            "recall",
            "Search the memory of past coding-agent sessions (Claude Code, Codex, Gemini CLI, aider, OpenCode, Cursor \
             and every other harness deja reads) \
             by meaning and by words. Returns hits from several sessions: session id, harness, project, date, \
             role, message id and index, and a snippet. Read a hit's surroundings with the `session` tool.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for, in your own words, an error message, a file or function name."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": deja_config::MCP_MAX_LIMIT, "description": "Most hits (default from the server's config, 5)."},
                    "per_session": {"type": "integer", "minimum": 1, "maximum": deja_config::MCP_MAX_LIMIT, "description": "Most hits from one session (default 2)."},
                    "harness": {"type": "string", "description": "Only this harness: aider, gemini, claude, codex, qwen, opencode, or any other loaded reader."},
                    "project": {"type": "string", "description": "Only this project: a directory, a folder name or a harness project id."},
                    "since": {"type": "string", "description": format!("Only sessions started at or after this. {date}")},
                    "origin": {"type": "string", "description": "Only sessions of this origin: `mine` (this machine's own), or who published them in the team store (`user@machine`, or `user` for all of that user's machines)."},
                    "until": {"type": "string", "description": format!("Only sessions started before this. {date}")},
                    "role": {"type": "string", "enum": ["user", "assistant"], "description": "Only messages by the person (user) or the agent (assistant)."}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        ),
        (
            "session",
            "Read messages of one past session: all of it page by page, or the messages around one \
             message (a hit's message index). Accepts a session id (deja's or the harness's, or a unique \
             prefix) or a hit's message id.",
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "A session id, a unique prefix of one, or a hit's message id (`<session>#<index>`)."},
                    "around": {"type": "integer", "minimum": 0, "description": "Show the messages around this message index."},
                    "before": {"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT, "description": "Messages before `around` (default 3)."},
                    "after": {"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT, "description": "Messages after `around` (default 3)."},
                    "cursor": {"type": "string", "description": "The `next_cursor` of a previous answer, to read on."}
                },
                "required": ["id"],
                "additionalProperties": false
            }),
        ),
        (
            "sessions",
            "List recent past sessions, newest first, with their titles or first requests and dates.",
            json!({
                "type": "object",
                "properties": {
                    "project": {"type": "string", "description": "Only this project: a directory, a folder name or a harness project id."},
                    "harness": {"type": "string", "description": "Only this harness."},
                    "since": {"type": "string", "description": format!("Only sessions started at or after this. {date}")},
                    "origin": {"type": "string", "description": "Only sessions of this origin: `mine` (this machine's own), or who published them in the team store (`user@machine`, or `user` for all of that user's machines)."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SESSIONS, "description": "Most sessions (default 10)."}
                },
                "additionalProperties": false
            }),
        ),
    ]
}

/// Arguments of `recall`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecallArgs {
    query: String,
    limit: Option<u64>,
    per_session: Option<u64>,
    harness: Option<String>,
    project: Option<String>,
    since: Option<String>,
    until: Option<String>,
    role: Option<String>,
    origin: Option<String>,
}

/// Arguments of `session`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    id: String,
    around: Option<u64>,
    before: Option<u64>,
    after: Option<u64>,
    cursor: Option<String>,
}

/// Arguments of `sessions`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionsArgs {
    project: Option<String>,
    harness: Option<String>,
    since: Option<String>,
    limit: Option<u64>,
    origin: Option<String>,
}

fn bounded(
    value: Option<u64>,
    name: &str,
    min: u64,
    max: u64,
    default: usize,
) -> Result<usize, CallError> {
    match value {
        None => Ok(default),
        Some(v) if (min..=max).contains(&v) => Ok(v as usize),
        Some(v) => Err(bad(format!(
            "`{name}` is {v}; it must be between {min} and {max}"
        ))),
    }
}

fn date(value: &Option<String>, name: &str) -> Result<Option<i64>, CallError> {
    value
        .as_deref()
        .map(|t| {
            crate::dates::parse(t, chrono::Utc::now()).map_err(|e| bad(format!("`{name}`: {e}")))
        })
        .transpose()
}

/// An unknown `harness` or a `project` no session belongs to is the
/// caller's mistake: the error names what exists, so the model can retry.
pub(crate) fn check_scope(store: &Store, filter: &SessionFilter) -> Result<(), CallError> {
    let fail = |e: deja_store::StoreError| bad(e.to_string());
    if let Some(h) = &filter.harness {
        let indexed = store.harness_counts().map_err(fail)?;
        if !indexed.iter().any(|(name, _)| name == h) {
            let known = indexed
                .iter()
                .map(|(name, n)| format!("`{}` ({n} sessions)", frame::field(name)))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(bad(format!(
                "no session of harness `{}`; the index holds {}",
                frame::field(h),
                if known.is_empty() {
                    "no sessions".to_string()
                } else {
                    known
                }
            )));
        }
    }
    if let Some(p) = &filter.project {
        let only = SessionFilter {
            project: Some(p.clone()),
            ..SessionFilter::default()
        };
        if store.count_sessions(&only).map_err(fail)? == 0 {
            let (projects, total) = store.project_counts(10).map_err(fail)?;
            let names = projects
                .iter()
                .filter_map(|c| {
                    let pr = &c.project;
                    pr.dir
                        .as_deref()
                        .or(pr.name.as_deref())
                        .or(pr.id.as_deref())
                })
                .map(|n| format!("`{}`", frame::field(n)))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(bad(format!(
                "no session of project `{}`; projects with sessions ({total} in all) include {names}",
                frame::field(p)
            )));
        }
    }
    Ok(())
}

fn nonempty(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

/// The origin filter an `origin` argument names: `mine`, or a publisher.
fn origin(value: Option<String>) -> Result<Option<deja_store::Origin>, CallError> {
    Ok(nonempty(value).map(|v| crate::select::origin_filter(v.trim(), false)))
}

/// Answers `recall`.
pub fn recall(engine: &mut Engine, args: RecallArgs, limits: &Limits) -> Result<Answer, CallError> {
    let query = args.query.trim().to_string();
    if query.is_empty() {
        return Err(bad("the query is empty: say what to look for"));
    }
    let max = deja_config::MCP_MAX_LIMIT as u64;
    let limit = bounded(args.limit, "limit", 1, max, limits.limit)?;
    let per_session = bounded(args.per_session, "per_session", 1, max, limits.per_session)?;
    let role = match args.role.as_deref() {
        None => None,
        Some("user") => Some(Role::User),
        Some("assistant") => Some(Role::Assistant),
        Some(other) => {
            return Err(bad(format!(
                "`role` is `{other}`; use `user` or `assistant`"
            )));
        }
    };
    let range = (date(&args.since, "since")?, date(&args.until, "until")?);
    crate::dates::check_range(range.0, range.1, "`since`", "`until`").map_err(bad)?;
    let scope = Candidates {
        filter: SessionFilter {
            harness: nonempty(args.harness),
            project: nonempty(args.project),
            since: range.0,
            until: range.1,
            origin: origin(args.origin)?,
            exclude: limits.exclude.clone(),
            skip_code_folders: !limits.code_folders,
        },
        role,
    };
    check_scope(engine.store(), &scope.filter)?;
    let answer = engine
        .recall(&Query {
            text: &query,
            mode: Mode::Hybrid,
            scope: &scope,
            limit,
            tuning: Tuning {
                min_similarity: limits.min_similarity,
                min_score: limits.min_score,
                ..Tuning::default()
            },
            per_session: Some(per_session),
        })
        .map_err(|e| bad(format!("recall failed: {e}")))?;
    // Meaning over part of the history says which part.
    let coverage = answer
        .semantic_unavailable
        .is_none()
        .then(|| engine.store().current_coverage().ok())
        .flatten()
        .and_then(|c| crate::indexing::coverage_note(&c));
    let warnings: Vec<String> = answer
        .semantic_unavailable
        .as_ref()
        .map(|w| format!("semantic recall unavailable ({w}); these hits are ranked by words only"))
        .into_iter()
        .chain(answer.notices.iter().cloned())
        .chain(coverage)
        .collect();
    let rows: Vec<i64> = answer.hits.iter().map(|h| h.session_row).collect();
    let store = engine.store();
    let labels = Labels {
        approximate: store
            .dated_by_file_time(&rows)
            .map_err(|e| bad(format!("recall failed: {e}")))?,
        parents: store
            .parents_of(&rows)
            .map_err(|e| bad(format!("recall failed: {e}")))?,
    };
    render_hits(
        &query,
        answer.mode,
        (warnings, answer.missing_half()),
        (&answer.hits, answer.withheld),
        &labels,
        limits.max_answer_bytes,
    )
}

/// What a hit's session is, beyond the hit: dated only by its transcript's
/// modification time, or sub-agent work (by session row).
struct Labels {
    approximate: std::collections::HashSet<i64>,
    parents: std::collections::HashMap<i64, String>,
}

/// The text and value of a `recall` answer, within `max_bytes` of text.
fn render_hits(
    query: &str,
    mode: Mode,
    (warnings, missing_half): (Vec<String>, Option<&str>),
    (hits, withheld): (&[Hit], usize),
    labels: &Labels,
    max_bytes: usize,
) -> Result<Answer, CallError> {
    let terms = lexical::terms(query);
    let mut shown: Vec<out::Hit> = Vec::new();
    let close = frame::close();
    let open = frame::open();
    let mut body = String::new();
    let mut left_out = 0;
    for h in hits {
        let (snip, _) = snippet::snippet(&h.text, &terms, SNIPPET_CHARS);
        let snip = frame::untrusted(&snip);
        let more = if h.more_in_session > 0 {
            format!(
                " ({} more matching messages in this session)",
                h.more_in_session
            )
        } else {
            String::new()
        };
        let mut origin = match &h.origin {
            Some(o) => format!(" · from {}", frame::field(o)),
            None => String::new(),
        };
        let parent = labels.parents.get(&h.session_row);
        if let Some(p) = parent {
            origin.push_str(&format!(" · sub-agent of {}", frame::field(p)));
        }
        if h.weak {
            origin.push_str(" · weak match");
        }
        let approximate = labels.approximate.contains(&h.session_row);
        let block = format!(
            "[{}] session {} · {} · {} · started {}{}{origin} · {} message {} (index {}){more}\n    {}\n",
            h.rank,
            frame::field(&h.session_id),
            frame::field(&h.harness),
            project_field(&h.project),
            rfc3339(h.started_at),
            if approximate {
                " (approximate: the transcript's modification time)"
            } else {
                ""
            },
            h.role,
            frame::field(&h.message_id),
            h.message_index,
            snip
        );
        let used = open.len() + body.len() + close.len() + 200;
        if used + block.len() > max_bytes && !shown.is_empty() {
            left_out = hits.len() - shown.len();
            break;
        }
        let block = frame::cut(&block, max_bytes.saturating_sub(used));
        body.push_str(block);
        if !block.ends_with('\n') {
            body.push_str("…\n");
        }
        shown.push(out::Hit {
            date_approximate: approximate,
            duplicates: &h.duplicates,
            harness: &h.harness,
            message_id: &h.message_id,
            message_index: h.message_index,
            more_in_session: h.more_in_session,
            native_session_id: &h.native_session_id,
            origin: h.origin.as_deref(),
            parent_id: parent.map(String::as_str),
            project: json::Project::from(&h.project),
            rank: h.rank,
            role: &h.role,
            score: h.score,
            session_id: &h.session_id,
            source_path: h.source_path.as_deref(),
            started_at: rfc3339(h.started_at),
            text: snip,
            timestamp: rfc3339(h.timestamp),
            weak: h.weak,
        });
    }
    if hits.is_empty() && withheld > 0 {
        body.push_str("No past message answers this query: the nearest ones are too far from it to count as memory.\n");
    } else if hits.is_empty() {
        body.push_str("No past message matches this query.\n");
    }
    let mut text = frame::wrap(&body);
    let mut notes = warnings.clone();
    if left_out > 0 {
        notes.push(format!(
            "{left_out} more hits were left out to keep this answer under {max_bytes} bytes; ask with a smaller `limit` or read a session with the `session` tool"
        ));
    }
    if shown.iter().any(|h| h.weak) {
        notes.push("Hits marked `weak match` are the nearest past messages, not sure answers: the history may not hold one.".to_string());
    }
    notes.push("Cite what you use by session id (and message id).".to_string());
    notes_after(&mut text, &notes);
    let text = frame::cut(&text, max_bytes).to_string();
    let value = structured(
        &out::Recall {
            hits: shown,
            left_out,
            missing_half,
            mode: mode.as_str(),
            query,
            warning: warnings.first().map(String::as_str),
            warnings: &warnings,
            withheld,
        },
        max_bytes,
    )?;
    Ok(Answer { text, value })
}

/// Where a `session` call starts reading: the cursor, else `around` minus
/// `before`, else the start.
fn window(
    args: &SessionArgs,
    around_from_id: Option<usize>,
    total: usize,
) -> Result<(usize, usize), CallError> {
    let before = bounded(
        args.before,
        "before",
        0,
        MAX_CONTEXT as u64,
        DEFAULT_CONTEXT,
    )?;
    let after = bounded(args.after, "after", 0, MAX_CONTEXT as u64, DEFAULT_CONTEXT)?;
    if let Some(cursor) = &args.cursor {
        let (from, to) = cursor
            .split_once('-')
            .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
            .ok_or_else(|| {
                bad(format!(
                    "`cursor` `{cursor}` is not a cursor this server gave"
                ))
            })?;
        return Ok((from.min(total), to.min(total).max(from.min(total))));
    }
    let around = match (args.around, around_from_id) {
        (Some(a), _) => Some(usize::try_from(a).unwrap_or(usize::MAX)),
        (None, a) => a,
    };
    match around {
        Some(a) if a >= total => Err(bad(format!(
            "`around` is {a}, but the session has {total} messages (indexes 0 to {})",
            total.saturating_sub(1)
        ))),
        Some(a) => Ok((a.saturating_sub(before), (a + after + 1).min(total))),
        None => Ok((0, total)),
    }
}

/// Splits a hit's message id `<session>#<index>` into its parts.
fn split_message_id(id: &str) -> Option<(&str, usize)> {
    let (session, index) = id.rsplit_once('#')?;
    Some((session, index.parse().ok()?))
}

/// The one session `id` names, or an error listing what it could mean.
fn pick(store: &Store, id: &str) -> Result<SessionRow, CallError> {
    let mut found = store
        .find_sessions(id, 10)
        .map_err(|e| bad(e.to_string()))?;
    match found.total {
        0 => Err(bad(format!(
            "no session `{}` in the index; `sessions` lists them",
            frame::field(id)
        ))),
        1 if !found.rows.is_empty() => Ok(found.rows.remove(0)),
        n if crate::select::family_head(&found.rows, n).is_some() => {
            let head = crate::select::family_head(&found.rows, n).unwrap_or(0);
            Ok(found.rows.swap_remove(head))
        }
        n => {
            let more = n.saturating_sub(found.rows.len());
            Err(bad(format!(
                "`{}` matches {n} sessions; use one of: {}{}",
                frame::field(id),
                found
                    .rows
                    .iter()
                    .map(|r| frame::field(&r.id))
                    .collect::<Vec<_>>()
                    .join(", "),
                if more > 0 {
                    format!(" (and {more} more)")
                } else {
                    String::new()
                }
            )))
        }
    }
}

/// Answers `session`.
pub fn session(store: &Store, args: SessionArgs, limits: &Limits) -> Result<Answer, CallError> {
    let id = args.id.trim();
    if id.is_empty() {
        return Err(bad(
            "`id` is empty: give a session id or a hit's message id",
        ));
    }
    let (row, around) = resolve(store, id)?;
    // The asking agent's own session is never answered with, whichever id
    // (a message's included) leads to it.
    if limits
        .exclude
        .iter()
        .any(|e| *e == row.id || *e == row.native_id)
    {
        return Err(bad(format!(
            "`{}` leads to this conversation's own session, which deja never answers with",
            frame::field(id)
        )));
    }
    let s = store.load_session(&row).map_err(|e| bad(e.to_string()))?;
    let total = s.messages.len();
    let (from, to) = window(&args, around, total)?;
    // Around a message, every message of the window gets a share of the
    // answer, so the neighbours are seen (cut) rather than pushed to a later
    // page by one long message.
    let focused = args.cursor.is_none() && (args.around.is_some() || around.is_some());
    let open = frame::open();
    let mut body = format!(
        "session {} · {} (id {}) · {} · started {}{}\n",
        frame::field(&s.id),
        frame::field(&s.harness),
        frame::field(&s.native_id),
        project_field(&s.project),
        rfc3339(s.started_at_ms),
        s.title
            .as_deref()
            .map(|t| format!(" · {}", frame::field(frame::cut(t, TITLE_BYTES))))
            .unwrap_or_default()
    );
    body.push_str(&format!(
        "messages {from} to {} of {total}\n",
        to.saturating_sub(1)
    ));
    let close = frame::close();
    let reserve = open.len() + close.len() + 300;
    // Each message's share, with room for its "cut" note.
    let share = focused.then(|| {
        (limits.max_answer_bytes.saturating_sub(body.len() + reserve) / (to - from).max(1))
            .saturating_sub(CUT_NOTE)
    });
    let mut messages = Vec::new();
    let mut next = to;
    for (index, m) in s.messages.iter().enumerate().take(to).skip(from) {
        let shown_id = match &m.native_id {
            Some(id) => frame::field(id),
            None => message_id(&s.id, index),
        };
        let head = format!(
            "\n── #{index} {} {} ({})\n",
            m.role.as_str(),
            rfc3339(m.timestamp_ms),
            frame::field(&shown_id)
        );
        let text = frame::untrusted(&m.text);
        let room = limits.max_answer_bytes.saturating_sub(body.len() + reserve);
        if head.len() + 40 > room && !messages.is_empty() {
            next = index;
            break;
        }
        let room = share.map_or(room, |s| room.min(s.max(head.len() + 16)));
        let shown = frame::cut(&text, room.saturating_sub(head.len()));
        body.push_str(&head);
        body.push_str(shown);
        body.push('\n');
        let cut = shown.len() < text.len();
        if cut {
            body.push_str(&format!(
                "[message cut: {} of {} bytes shown]\n",
                shown.len(),
                text.len()
            ));
        }
        messages.push(out::Message {
            cut,
            index,
            message_id: shown_id.into(),
            role: m.role.as_str(),
            text: shown.to_string(),
            timestamp: rfc3339(m.timestamp_ms),
        });
        if cut && share.is_none() {
            next = index + 1;
            break;
        }
    }
    let mut text = frame::wrap(&body);
    let next_cursor = (next < to).then(|| format!("{next}-{to}"));
    if let Some(c) = &next_cursor {
        notes_after(
            &mut text,
            &[format!(
                "More messages follow: call `session` with id `{}` and cursor `{c}`.",
                s.id
            )],
        );
    }
    Ok(Answer {
        text: frame::cut(&text, limits.max_answer_bytes).to_string(),
        value: structured(
            &out::Session {
                harness: &s.harness,
                message_count: total,
                messages,
                native_id: &s.native_id,
                next_cursor,
                origin: row.origin.as_deref(),
                project: json::Project::from(&s.project),
                session_id: &s.id,
                started_at: rfc3339(s.started_at_ms),
                title: s.title.as_deref().map(|t| frame::cut(t, TITLE_BYTES)),
            },
            limits.max_answer_bytes,
        )?,
    })
}

/// The session `id` names and the message it points at: a session id or a
/// unique prefix, a hit's `<session>#<index>`, or a harness's own message id
/// (as `recall` hands out for Claude Code, Gemini CLI and Qwen Code hits).
fn resolve(store: &Store, id: &str) -> Result<(SessionRow, Option<usize>), CallError> {
    let e = match pick(store, id) {
        Ok(row) => return Ok((row, None)),
        Err(e) => e,
    };
    if let Some((session, index)) = split_message_id(id) {
        return Ok((pick(store, session).map_err(|_| e)?, Some(index)));
    }
    let found = store.find_message(id, 6).map_err(|e| bad(e.to_string()))?;
    match found.as_slice() {
        [] => Err(e),
        [(session, index)] => Ok((pick(store, session)?, Some(*index))),
        many => Err(bad(format!(
            "message id `{}` is in {} sessions; use one of: {}",
            frame::field(id),
            many.len(),
            many.iter()
                .take(5)
                .map(|(s, i)| message_id(&frame::field(s), *i))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Answers `sessions`.
pub fn sessions(store: &Store, args: SessionsArgs, limits: &Limits) -> Result<Answer, CallError> {
    let limit = bounded(
        args.limit,
        "limit",
        1,
        MAX_SESSIONS as u64,
        DEFAULT_SESSIONS,
    )?;
    let filter = SessionFilter {
        harness: nonempty(args.harness),
        project: nonempty(args.project),
        since: date(&args.since, "since")?,
        until: None,
        origin: origin(args.origin)?,
        exclude: limits.exclude.clone(),
        skip_code_folders: !limits.code_folders,
    };
    check_scope(store, &filter)?;
    let rows = store
        .sessions(&filter, Some(limit))
        .map_err(|e| bad(e.to_string()))?;
    let open = frame::open();
    let mut body = String::new();
    if rows.is_empty() {
        body.push_str("No session matches.\n");
    }
    let close = frame::close();
    let mut listed = Vec::new();
    for r in &rows {
        let about = r.title.as_deref().or(r.first_user.as_deref()).unwrap_or("");
        let line = format!(
            "{} · {} · {} · started {} · {} messages{} · {}\n",
            frame::field(&r.id),
            frame::field(&r.harness),
            project_field(&r.project),
            rfc3339(r.started_at),
            r.message_count,
            r.origin
                .as_deref()
                .map(|o| format!(" · from {}", frame::field(o)))
                .unwrap_or_default(),
            frame::field(frame::cut(about, TITLE_BYTES))
        );
        if open.len() + body.len() + line.len() + close.len() + 100 > limits.max_answer_bytes {
            break;
        }
        body.push_str(&line);
        listed.push(out::ListedSession {
            first_user_line: r.first_user.as_deref().map(|t| frame::cut(t, TITLE_BYTES)),
            harness: &r.harness,
            id: &r.id,
            message_count: r.message_count,
            native_id: &r.native_id,
            origin: r.origin.as_deref(),
            project: json::Project::from(&r.project),
            started_at: rfc3339(r.started_at),
            title: r.title.as_deref().map(|t| frame::cut(t, TITLE_BYTES)),
            updated_at: rfc3339(r.updated_at),
        });
    }
    let mut text = frame::wrap(&body);
    if listed.len() < rows.len() {
        notes_after(
            &mut text,
            &[format!(
                "{} more sessions were left out to keep this answer under {} bytes.",
                rows.len() - listed.len(),
                limits.max_answer_bytes
            )],
        );
    }
    Ok(Answer {
        text: frame::cut(&text, limits.max_answer_bytes).to_string(),
        value: structured(
            &out::Sessions {
                left_out: rows.len() - listed.len(),
                sessions: listed,
            },
            limits.max_answer_bytes,
        )?,
    })
}

/// Parses a tool's arguments, naming the tool and the problem.
pub fn parse<T: serde::de::DeserializeOwned>(
    tool: &str,
    arguments: Option<serde_json::Map<String, Value>>,
) -> Result<T, String> {
    let value = Value::Object(arguments.unwrap_or_default());
    serde_json::from_value(value).map_err(|e| format!("invalid arguments for `{tool}`: {e}"))
}

/// For tests: the definitions by name.
#[cfg(test)]
pub fn definition_names() -> std::collections::HashMap<&'static str, Value> {
    definitions().into_iter().map(|(n, _, s)| (n, s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_ids_split() {
        assert_eq!(
            split_message_id("aider-abc-1#12"),
            Some(("aider-abc-1", 12))
        );
        assert_eq!(split_message_id("plain"), None);
        assert_eq!(split_message_id("a#b"), None);
    }

    #[test]
    fn bounds_name_the_argument() {
        assert_eq!(bounded(None, "limit", 1, 20, 5), Ok(5));
        assert_eq!(bounded(Some(20), "limit", 1, 20, 5), Ok(20));
        let e = bounded(Some(10_000_000_000), "limit", 1, 20, 5).unwrap_err();
        assert!(
            e.0.contains("`limit`") && e.0.contains("between 1 and 20"),
            "{e}"
        );
    }

    #[test]
    fn schemas_require_what_they_must() {
        let d = definition_names();
        assert_eq!(d["recall"]["required"], json!(["query"]));
        assert_eq!(d["session"]["required"], json!(["id"]));
        assert!(d["sessions"].get("required").is_none());
    }
}
