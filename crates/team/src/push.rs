//! `deja team push`: publishes the sessions of the shared projects. Only
//! sessions whose content hash differs from what the team store holds for
//! this machine are sent, each replaced whole (upsert of the session row,
//! its messages and records rewritten) in transactions of a bounded size,
//! in key order, so that a push cut short by a crash or a dropped
//! connection is finished by the next one without duplicates. Sessions this
//! machine published and has since forgotten or stopped sharing are
//! retracted: their rows lose their content and keep a tombstone.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use deja_model::Session;
use deja_store::{Origin, SessionFilter, SessionRow, Store};

use crate::{content, Key, Result, Team, TeamError};

/// Most messages sent in one transaction.
const BATCH_MESSAGES: usize = 2000;
/// Most sessions sent in one transaction.
const BATCH_SESSIONS: usize = 200;

/// How to push.
#[derive(Debug, Clone, Copy, Default)]
pub struct PushOptions {
    /// Whether this machine redacts secrets (`[redact] enabled`).
    pub redaction_on: bool,
    /// Push even with redaction off.
    pub force: bool,
    /// Say what would be pushed, changing nothing.
    pub dry_run: bool,
}

/// What a push did (or, dry, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushReport {
    /// Sessions of the shared projects on this machine.
    pub shared: usize,
    /// Sessions sent (new or changed).
    pub pushed: usize,
    /// Their messages.
    pub messages: usize,
    /// Sessions the team store already had as they are.
    pub unchanged: usize,
    /// Sessions retracted (forgotten or no longer shared here).
    pub retracted: usize,
}

/// What this machine's side of the team store needs.
pub(crate) struct Plan {
    /// Sessions of the shared projects, with their content and hash.
    pub shared: Vec<(Session, String)>,
    /// Indexes into `shared` of the sessions to send.
    pub to_push: Vec<usize>,
    /// Published sessions to retract.
    pub to_retract: Vec<Key>,
}

/// The sessions of `store` in the projects `share` names (this machine's
/// own, never pulled ones), each once.
pub(crate) fn shared_rows(store: &Store, share: &[String]) -> Result<Vec<SessionRow>> {
    let mut rows: BTreeMap<i64, SessionRow> = BTreeMap::new();
    for project in share {
        let filter = SessionFilter {
            project: Some(project.clone()),
            origin: Some(Origin::Mine),
            ..SessionFilter::default()
        };
        for r in store.sessions(&filter, None)? {
            rows.insert(r.row, r);
        }
    }
    Ok(rows.into_values().collect())
}

/// Compares the shared sessions of `store` with what the team store holds
/// for this machine.
pub(crate) fn plan(team: &mut Team, store: &Store) -> Result<Plan> {
    let origin = team.settings.origin.clone();
    let rows = shared_rows(store, &team.settings.share)?;
    let mut shared = Vec::with_capacity(rows.len());
    for r in &rows {
        let s = store.load_session(r)?;
        let h = content::hash(&s);
        shared.push((s, h));
    }
    shared.sort_by(|a, b| (&a.0.harness, &a.0.id).cmp(&(&b.0.harness, &b.0.id)));
    let remote: HashMap<(String, String), (String, bool)> = team
        .client
        .query(
            "SELECT harness, session_id, content_hash, forgotten_at IS NOT NULL
             FROM deja.sessions WHERE origin = $1",
            &[&origin],
        )
        .map_err(|e| team.fail(e))?
        .into_iter()
        .map(|r| ((r.get(0), r.get(1)), (r.get(2), r.get(3))))
        .collect();
    let to_push = shared
        .iter()
        .enumerate()
        .filter(|(_, (s, h))| {
            remote
                .get(&(s.harness.clone(), s.id.clone()))
                .is_none_or(|(theirs, forgotten)| *forgotten || theirs != h)
        })
        .map(|(i, _)| i)
        .collect();
    let here: std::collections::HashSet<(&str, &str)> = shared
        .iter()
        .map(|(s, _)| (s.harness.as_str(), s.id.as_str()))
        .collect();
    let mut to_retract: Vec<Key> = remote
        .iter()
        .filter(|((h, id), (_, forgotten))| {
            !forgotten && !here.contains(&(h.as_str(), id.as_str()))
        })
        .map(|((h, id), _)| Key {
            origin: origin.clone(),
            harness: h.clone(),
            id: id.clone(),
        })
        .collect();
    to_retract.sort();
    Ok(Plan {
        shared,
        to_push,
        to_retract,
    })
}

/// Publishes the shared sessions of `store` that the team store lacks or
/// holds in another version, and retracts those this machine no longer
/// shares. `progress` hears (sessions done, sessions to send).
pub fn push(
    team: &mut Team,
    store: &Store,
    options: PushOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<PushReport> {
    if !options.redaction_on && !options.force {
        return Err(TeamError::Unredacted);
    }
    let plan = plan(team, store)?;
    let report = PushReport {
        shared: plan.shared.len(),
        pushed: plan.to_push.len(),
        messages: plan
            .to_push
            .iter()
            .filter_map(|&i| plan.shared.get(i))
            .map(|(s, _)| s.messages.len())
            .sum(),
        unchanged: plan.shared.len() - plan.to_push.len(),
        retracted: plan.to_retract.len(),
    };
    if options.dry_run {
        return Ok(report);
    }
    let total = plan.to_push.len();
    progress(0, total);
    let mut done = 0;
    let mut batch: Vec<&(Session, String)> = Vec::new();
    let mut batch_messages = 0;
    for &i in &plan.to_push {
        let Some(item) = plan.shared.get(i) else {
            continue;
        };
        batch_messages += item.0.messages.len();
        batch.push(item);
        if batch.len() >= BATCH_SESSIONS || batch_messages >= BATCH_MESSAGES {
            send(team, &batch)?;
            done += batch.len();
            progress(done, total);
            batch.clear();
            batch_messages = 0;
        }
    }
    if !batch.is_empty() {
        send(team, &batch)?;
        done += batch.len();
        progress(done, total);
    }
    if !plan.to_retract.is_empty() {
        retract(team, &plan.to_retract)?;
    }
    Ok(report)
}

/// PostgreSQL text cannot hold NUL: it becomes U+FFFD.
fn pg(text: &str) -> Cow<'_, str> {
    if text.contains('\0') {
        Cow::Owned(text.replace('\0', "\u{fffd}"))
    } else {
        Cow::Borrowed(text)
    }
}

fn pg_opt(text: &Option<String>) -> Option<Cow<'_, str>> {
    text.as_deref().map(pg)
}

const UPSERT_SESSION: &str = "
INSERT INTO deja.sessions (origin, harness, session_id, native_id, started_at, updated_at,
    project_dir, project_name, project_id, title, parent_id, precedence, message_count,
    content_hash, forgotten_at, pushed_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, NULL, $15)
ON CONFLICT (origin, harness, session_id) DO UPDATE SET
    native_id = excluded.native_id, started_at = excluded.started_at,
    updated_at = excluded.updated_at, project_dir = excluded.project_dir,
    project_name = excluded.project_name, project_id = excluded.project_id,
    title = excluded.title, parent_id = excluded.parent_id, precedence = excluded.precedence,
    message_count = excluded.message_count, content_hash = excluded.content_hash,
    forgotten_at = NULL, pushed_at = excluded.pushed_at";

const INSERT_MESSAGES: &str = "
INSERT INTO deja.messages (origin, harness, session_id, position, role, text, at, native_id)
SELECT $1, $2, $3, m.* FROM unnest($4::int4[], $5::text[], $6::text[], $7::int8[], $8::text[]) AS m";

const INSERT_FILES: &str = "
INSERT INTO deja.files (origin, harness, session_id, position, path, action, at)
SELECT $1, $2, $3, f.* FROM unnest($4::int4[], $5::text[], $6::text[], $7::int8[]) AS f";

const INSERT_COMMANDS: &str = "
INSERT INTO deja.commands (origin, harness, session_id, position, command, ran_by, at)
SELECT $1, $2, $3, c.* FROM unnest($4::int4[], $5::text[], $6::text[], $7::int8[]) AS c";

/// Clears a session's content rows (messages and records).
const CLEAR: [&str; 3] = [
    "DELETE FROM deja.messages WHERE origin = $1 AND harness = $2 AND session_id = $3",
    "DELETE FROM deja.files WHERE origin = $1 AND harness = $2 AND session_id = $3",
    "DELETE FROM deja.commands WHERE origin = $1 AND harness = $2 AND session_id = $3",
];

/// Sends `batch` in one transaction.
fn send(team: &mut Team, batch: &[&(Session, String)]) -> Result<()> {
    let origin = team.settings.origin.clone();
    let now = chrono::Utc::now().timestamp_millis();
    let result = (|| -> std::result::Result<(), postgres::Error> {
        let mut tx = team.client.transaction()?;
        for (s, hash) in batch {
            let key: [&(dyn postgres::types::ToSql + Sync); 3] = [&origin, &s.harness, &s.id];
            tx.execute(
                UPSERT_SESSION,
                &[
                    &origin,
                    &s.harness,
                    &s.id,
                    &pg(&s.native_id),
                    &s.started_at_ms,
                    &s.updated_at_ms,
                    &pg_opt(&s.project.dir),
                    &pg_opt(&s.project.name),
                    &pg_opt(&s.project.id),
                    &pg_opt(&s.title),
                    &pg_opt(&s.parent_id),
                    &s.precedence,
                    &(s.messages.len() as i32),
                    hash,
                    &now,
                ],
            )?;
            for sql in CLEAR {
                tx.execute(sql, &key)?;
            }
            if !s.messages.is_empty() {
                let positions: Vec<i32> = (0..s.messages.len() as i32).collect();
                let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
                let texts: Vec<Cow<'_, str>> = s.messages.iter().map(|m| pg(&m.text)).collect();
                let times: Vec<i64> = s.messages.iter().map(|m| m.timestamp_ms).collect();
                let ids: Vec<Option<Cow<'_, str>>> =
                    s.messages.iter().map(|m| pg_opt(&m.native_id)).collect();
                tx.execute(
                    INSERT_MESSAGES,
                    &[
                        key[0], key[1], key[2], &positions, &roles, &texts, &times, &ids,
                    ],
                )?;
            }
            if !s.files.is_empty() {
                let positions: Vec<i32> = (0..s.files.len() as i32).collect();
                let paths: Vec<Cow<'_, str>> = s.files.iter().map(|f| pg(&f.path)).collect();
                let actions: Vec<&str> = s.files.iter().map(|f| f.action).collect();
                let times: Vec<i64> = s.files.iter().map(|f| f.timestamp_ms).collect();
                tx.execute(
                    INSERT_FILES,
                    &[key[0], key[1], key[2], &positions, &paths, &actions, &times],
                )?;
            }
            if !s.commands.is_empty() {
                let positions: Vec<i32> = (0..s.commands.len() as i32).collect();
                let commands: Vec<Cow<'_, str>> =
                    s.commands.iter().map(|c| pg(&c.command)).collect();
                let by: Vec<&str> = s.commands.iter().map(|c| c.origin).collect();
                let times: Vec<i64> = s.commands.iter().map(|c| c.timestamp_ms).collect();
                tx.execute(
                    INSERT_COMMANDS,
                    &[key[0], key[1], key[2], &positions, &commands, &by, &times],
                )?;
            }
        }
        tx.commit()
    })();
    result.map_err(|e| team.fail(e))
}

/// Retracts `keys` in one transaction: content gone, tombstone kept.
fn retract(team: &mut Team, keys: &[Key]) -> Result<()> {
    let now = chrono::Utc::now().timestamp_millis();
    let result = (|| -> std::result::Result<(), postgres::Error> {
        let mut tx = team.client.transaction()?;
        for k in keys {
            tx.execute(
                "UPDATE deja.sessions SET forgotten_at = $4, pushed_at = $4, content_hash = '',
                    project_dir = NULL, project_name = NULL, project_id = NULL, title = NULL,
                    parent_id = NULL, message_count = 0
                 WHERE origin = $1 AND harness = $2 AND session_id = $3",
                &[&k.origin, &k.harness, &k.id, &now],
            )?;
            for sql in CLEAR {
                tx.execute(sql, &[&k.origin, &k.harness, &k.id])?;
            }
        }
        tx.commit()
    })();
    result.map_err(|e| team.fail(e))
}
