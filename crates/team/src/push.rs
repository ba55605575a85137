//! `deja team push`: publishes the sessions of the shared projects. Only
//! sessions whose content hash differs from what the team store holds for
//! this machine are sent, each replaced whole (upsert of the session row,
//! its messages and records rewritten) in transactions of a bounded size,
//! in key order, so that a push cut short by a crash or a dropped
//! connection is finished by the next one without duplicates.
//!
//! A push retracts on its own only what was forgotten here (a tombstone in
//! this store). Two other kinds of published session stay published unless
//! the caller asks for them to go: one still in this store whose project
//! `share` no longer matches (a `share` entry removed, mistyped or changed,
//! or a project folder renamed: [`PushOptions::retract_unshared`], reported
//! by project in [`PushReport::unshared`]) and one this store has no trace
//! of (a new data folder: [`PushOptions::retract_missing`]). Before
//! anything changes, the push claims its origin for this machine's id
//! ([`crate::machine`]): an origin another machine pushes under is refused
//! unless taken over.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

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
    /// Retract as well the published sessions this store has no trace of.
    pub retract_missing: bool,
    /// Retract as well the published sessions still in this store whose
    /// project `share` no longer matches.
    pub retract_unshared: bool,
    /// Push under `team.name` even though another machine pushes under it,
    /// making this machine its publisher.
    pub take_over_name: bool,
}

/// Why a published session is retracted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Forgotten here (`deja forget`: a tombstone in this store).
    Forgotten,
    /// Still here, in a project no longer shared (retracted only when
    /// asked to).
    Unshared,
    /// Not in this store at all (retracted only when asked to).
    Missing,
}

impl Why {
    /// A word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Why::Forgotten => "forgotten",
            Why::Unshared => "unshared",
            Why::Missing => "missing",
        }
    }
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
    /// Sessions retracted (forgotten here; no longer shared with
    /// [`PushOptions::retract_unshared`]; missing with
    /// [`PushOptions::retract_missing`]).
    pub retracted: usize,
    /// The sessions retracted (or, dry, that would be), and why.
    pub retractions: Vec<(Key, Why)>,
    /// Published sessions of this origin this store has no trace of, left
    /// published (without [`PushOptions::retract_missing`]).
    pub missing: Vec<Key>,
    /// Published sessions of this origin still in this store whose project
    /// `share` no longer matches, by project, left published (without
    /// [`PushOptions::retract_unshared`]).
    pub unshared: Vec<Unshared>,
    /// Whether this push took the name over from another machine.
    pub took_over: bool,
    /// Embedding vectors published with the sessions (those the team
    /// store held another number of).
    pub vectors: usize,
}

/// The published sessions of one project of this store that `share` no
/// longer matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unshared {
    /// The project as this store knows it: its directory, else its name,
    /// else the harness's project id (empty when it has none).
    pub project: String,
    /// The sessions, in key order.
    pub sessions: Vec<Key>,
}

impl PushReport {
    /// How many sessions [`PushReport::unshared`] holds.
    pub fn unshared_sessions(&self) -> usize {
        self.unshared.iter().map(|u| u.sessions.len()).sum()
    }
}

/// What this machine's side of the team store needs.
pub(crate) struct Plan {
    /// Sessions of the shared projects, with the hash of their content
    /// (their content is read again when they are sent: a history of a
    /// million messages is not held at once).
    pub shared: Vec<Shared>,
    /// Indexes into `shared` of the sessions to send.
    pub to_push: Vec<usize>,
    /// Published sessions to retract, and why.
    pub to_retract: Vec<(Key, Why)>,
    /// Published sessions this store has no trace of, kept.
    pub missing: Vec<Key>,
    /// Published sessions still here in projects no longer shared, kept.
    pub unshared: Vec<Unshared>,
}

/// A session of the shared projects, as a push plans it.
pub(crate) struct Shared {
    /// Its row in the store.
    pub row: SessionRow,
    /// Its harness and deja id.
    pub harness: String,
    pub id: String,
    /// The hash of its content as PostgreSQL will hold it.
    pub hash: String,
    /// How many messages it has.
    pub messages: usize,
}

/// A shared session's content as PostgreSQL will hold it, and its hash:
/// hashed so, a pull reading it back computes the same hash.
fn content_of(store: &Store, row: &SessionRow) -> Result<(Session, String)> {
    let s = content::for_postgres(store.load_session(row)?);
    let h = content::hash(&s);
    Ok((s, h))
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

/// How a session's project is named in [`Unshared::project`].
fn project_label(project: &deja_model::Project) -> String {
    project
        .dir
        .as_ref()
        .or(project.name.as_ref())
        .or(project.id.as_ref())
        .cloned()
        .unwrap_or_default()
}

/// Compares the shared sessions of `store` (none without a store) with what
/// the team store holds for this machine. Published sessions missing here
/// are retracted only with `retract_missing` of `options`, and those still
/// here but no longer shared only with `retract_unshared`.
pub(crate) fn plan(team: &mut Team, store: Option<&Store>, options: &PushOptions) -> Result<Plan> {
    let origin = team.settings.origin.clone();
    let rows = match store {
        Some(store) => shared_rows(store, &team.settings.share)?,
        None => Vec::new(),
    };
    let mut shared = Vec::with_capacity(rows.len());
    if let Some(store) = store {
        for row in rows {
            // One session's content at a time.
            let (s, hash) = content_of(store, &row)?;
            shared.push(Shared {
                harness: s.harness,
                id: s.id,
                hash,
                messages: s.messages.len(),
                row,
            });
        }
    }
    shared.sort_by(|a, b| (&a.harness, &a.id).cmp(&(&b.harness, &b.id)));
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
        .filter(|(_, s)| {
            remote
                .get(&(s.harness.clone(), s.id.clone()))
                .is_none_or(|(theirs, forgotten)| *forgotten || *theirs != s.hash)
        })
        .map(|(i, _)| i)
        .collect();
    let here: HashSet<(&str, &str)> = shared
        .iter()
        .map(|s| (s.harness.as_str(), s.id.as_str()))
        .collect();
    let forgotten: HashSet<(String, String)> = match store {
        Some(store) => store
            .tombstones()?
            .into_iter()
            .map(|t| (t.harness, t.id))
            .collect(),
        None => HashSet::new(),
    };
    let mut to_retract = Vec::new();
    let mut missing = Vec::new();
    let mut unshared: BTreeMap<String, Vec<Key>> = BTreeMap::new();
    let mut gone: Vec<&(String, String)> = remote
        .iter()
        .filter(|((h, id), (_, forgotten))| {
            !forgotten && !here.contains(&(h.as_str(), id.as_str()))
        })
        .map(|(k, _)| k)
        .collect();
    gone.sort();
    for (h, id) in gone {
        let key = Key {
            origin: origin.clone(),
            harness: h.clone(),
            id: id.clone(),
        };
        if forgotten.contains(&(h.clone(), id.clone())) {
            to_retract.push((key, Why::Forgotten));
            continue;
        }
        let own = match store {
            Some(store) => store.session_row(h, id)?.filter(|r| r.origin.is_none()),
            None => None,
        };
        match own {
            Some(_) if options.retract_unshared => to_retract.push((key, Why::Unshared)),
            Some(row) => unshared
                .entry(project_label(&row.project))
                .or_default()
                .push(key),
            None if options.retract_missing => to_retract.push((key, Why::Missing)),
            None => missing.push(key),
        }
    }
    Ok(Plan {
        shared,
        to_push,
        to_retract,
        missing,
        unshared: unshared
            .into_iter()
            .map(|(project, sessions)| Unshared { project, sessions })
            .collect(),
    })
}

/// Who holds an origin in the team store: the machine id that last pushed
/// under it and when (ms).
pub(crate) fn holder(team: &mut Team, origin: &str) -> Result<Option<(String, i64)>> {
    let row = team
        .client
        .query_opt(
            "SELECT machine_id, pushed_at FROM deja.publishers WHERE origin = $1",
            &[&origin],
        )
        .map_err(|e| team.fail(e))?;
    Ok(row.map(|r| (r.get(0), r.get(1))))
}

/// The refusal of a push under a name another machine holds.
fn name_taken(team: &Team, pushed_at: i64) -> TeamError {
    let origin = team.settings.origin.clone();
    TeamError::NameTaken {
        suggestion: format!("{origin}-2"),
        server: team.server(),
        last_push: chrono::DateTime::from_timestamp_millis(pushed_at)
            .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
            .unwrap_or_else(|| pushed_at.to_string()),
        origin,
    }
}

/// Makes this machine the publisher of its origin (taking it over from
/// another only with `take_over`); refused, changing nothing, when another
/// machine holds it. Returns whether it was taken over.
fn claim(team: &mut Team, machine_id: &str, take_over: bool) -> Result<bool> {
    let origin = team.settings.origin.clone();
    let now = chrono::Utc::now().timestamp_millis();
    let before = holder(team, &origin)?;
    let changed = team
        .client
        .execute(
            "INSERT INTO deja.publishers (origin, machine_id, claimed_at, pushed_at)
             VALUES ($1, $2, $3, $3)
             ON CONFLICT (origin) DO UPDATE SET
                 claimed_at = CASE WHEN deja.publishers.machine_id = excluded.machine_id
                     THEN deja.publishers.claimed_at ELSE excluded.claimed_at END,
                 machine_id = excluded.machine_id, pushed_at = excluded.pushed_at
             WHERE deja.publishers.machine_id = excluded.machine_id OR $4",
            &[&origin, &machine_id, &now, &take_over],
        )
        .map_err(|e| team.fail(e))?;
    if changed == 0 {
        // Another machine claimed it since it was read.
        let at = holder(team, &origin)?.map(|(_, at)| at).unwrap_or(now);
        return Err(name_taken(team, at));
    }
    Ok(before.is_some_and(|(id, _)| id != machine_id))
}

/// Publishes the shared sessions of `store` that the team store lacks or
/// holds in another version, and retracts those this machine forgot (and,
/// with [`PushOptions::retract_unshared`], those it no longer shares; with
/// [`PushOptions::retract_missing`], those it has no trace of). Refused before anything changes when another machine
/// pushes under this origin (unless [`PushOptions::take_over_name`]).
/// `progress` hears (sessions done, sessions to send).
pub fn push(
    team: &mut Team,
    store: &Store,
    options: PushOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<PushReport> {
    if !options.redaction_on && !options.force {
        return Err(TeamError::Unredacted);
    }
    let machine_id = team
        .settings
        .machine_id
        .clone()
        .ok_or(TeamError::NoMachineId)?;
    let origin = team.settings.origin.clone();
    let held = holder(team, &origin)?;
    let taking_over = match &held {
        Some((id, at)) if *id != machine_id => {
            if !options.take_over_name {
                return Err(name_taken(team, *at));
            }
            true
        }
        _ => false,
    };
    let plan = plan(team, Some(store), &options)?;
    let mut report = PushReport {
        shared: plan.shared.len(),
        pushed: plan.to_push.len(),
        messages: plan
            .to_push
            .iter()
            .filter_map(|&i| plan.shared.get(i))
            .map(|s| s.messages)
            .sum(),
        unchanged: plan.shared.len() - plan.to_push.len(),
        retracted: plan.to_retract.len(),
        retractions: plan.to_retract.clone(),
        missing: plan.missing.clone(),
        unshared: plan.unshared.clone(),
        took_over: taking_over,
        vectors: 0,
    };
    if options.dry_run {
        return Ok(report);
    }
    report.took_over = claim(team, &machine_id, options.take_over_name)?;
    let total = plan.to_push.len();
    progress(0, total);
    let mut done = 0;
    // Read again a batch at a time, so that what is held is one batch.
    let mut batch: Vec<(Session, String)> = Vec::new();
    let mut batch_messages = 0;
    for &i in &plan.to_push {
        let Some(planned) = plan.shared.get(i) else {
            continue;
        };
        let item = content_of(store, &planned.row)?;
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
        let keys: Vec<Key> = plan.to_retract.iter().map(|(k, _)| k.clone()).collect();
        retract(team, &keys)?;
    }
    if let Some(stamp) = store.model_stamp() {
        let rows: Vec<(Key, i64)> = shared_rows(store, &team.settings.share)?
            .into_iter()
            .map(|r| {
                let key = Key {
                    origin: origin.clone(),
                    harness: r.harness,
                    id: r.id,
                };
                (key, r.row)
            })
            .collect();
        report.vectors = crate::vectors::publish(team, store, &stamp.id, &rows)?;
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
    content_hash, forgotten_at, pushed_at, date_approximate)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, NULL, $15, $16)
ON CONFLICT (origin, harness, session_id) DO UPDATE SET
    native_id = excluded.native_id, started_at = excluded.started_at,
    updated_at = excluded.updated_at, project_dir = excluded.project_dir,
    project_name = excluded.project_name, project_id = excluded.project_id,
    title = excluded.title, parent_id = excluded.parent_id, precedence = excluded.precedence,
    message_count = excluded.message_count, content_hash = excluded.content_hash,
    forgotten_at = NULL, pushed_at = excluded.pushed_at,
    date_approximate = excluded.date_approximate";

const INSERT_MESSAGES: &str = "
INSERT INTO deja.messages (origin, harness, session_id, position, role, text, at, native_id)
SELECT $1, $2, $3, m.* FROM unnest($4::int4[], $5::text[], $6::text[], $7::int8[], $8::text[]) AS m";

const INSERT_FILES: &str = "
INSERT INTO deja.files (origin, harness, session_id, position, path, action, at)
SELECT $1, $2, $3, f.* FROM unnest($4::int4[], $5::text[], $6::text[], $7::int8[]) AS f";

const INSERT_COMMANDS: &str = "
INSERT INTO deja.commands (origin, harness, session_id, position, command, ran_by, at)
SELECT $1, $2, $3, c.* FROM unnest($4::int4[], $5::text[], $6::text[], $7::int8[]) AS c";

/// Clears a session's content rows (messages, records and vectors).
const CLEAR: [&str; 4] = [
    "DELETE FROM deja.messages WHERE origin = $1 AND harness = $2 AND session_id = $3",
    "DELETE FROM deja.vectors WHERE origin = $1 AND harness = $2 AND session_id = $3",
    "DELETE FROM deja.files WHERE origin = $1 AND harness = $2 AND session_id = $3",
    "DELETE FROM deja.commands WHERE origin = $1 AND harness = $2 AND session_id = $3",
];

/// Sends `batch` in one transaction.
fn send(team: &mut Team, batch: &[(Session, String)]) -> Result<()> {
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
                    &s.date_approximate,
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
