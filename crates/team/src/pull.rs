//! `deja team pull`: brings the sessions other machines published into the
//! local store. The team store's list of sessions and content hashes is
//! compared with what this store pulled before; only new or changed sessions
//! are fetched (in consistent snapshots, batch by batch), and sessions whose
//! tombstone arrived, or that left the team store, are removed. A pulled
//! session never replaces this machine's own copy, and one forgotten here
//! stays forgotten.
//!
//! Nothing from the team store is trusted as it comes: a session over the
//! bounds ([`PullLimits`]) is skipped before its content is read, one whose
//! origin, harness or ids fall outside a conservative character set, or
//! whose content does not match its content hash (recomputed here), is
//! skipped too, each with a report; dates later than the pull are set to
//! the time of the pull. Which origins are this machine's own is decided by
//! its machine id ([`crate::machine`]), not by its name alone.

use std::collections::{HashMap, HashSet};

use deja_model::Session;
use deja_store::pulled::{PullOutcome, Pulled};
use deja_store::Store;

use crate::{content, Key, Result, Team};

/// Adds one content row (a message, file or command) to its session.
type AddRow = fn(&mut Session, &postgres::Row);

/// Sessions whose sizes are read per snapshot.
const BATCH: usize = 200;
/// Most bytes of text read from the team store at once (the sessions of a
/// batch are read in groups of at most this much).
const READ_BYTES: i64 = 64 << 20;

/// The bounds on one pulled session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PullLimits {
    /// Most messages (and most files records, and most commands records).
    pub max_messages: u64,
    /// Most bytes of one message's text.
    pub max_message_bytes: u64,
    /// Most bytes of the session's text: header, messages and records.
    pub max_session_bytes: u64,
}

impl Default for PullLimits {
    fn default() -> Self {
        PullLimits {
            max_messages: 20_000,
            max_message_bytes: 1 << 20,
            max_session_bytes: 16 << 20,
        }
    }
}

/// A published session a pull left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Its key as the team store gives it.
    pub key: Key,
    /// Why it was left out.
    pub reason: String,
}

/// What a pull did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PullReport {
    /// Sessions new to this store.
    pub added: usize,
    /// Sessions whose content changed.
    pub updated: usize,
    /// Messages fetched.
    pub messages: usize,
    /// Sessions removed (forgotten or unshared by their publisher).
    pub removed: usize,
    /// Sessions left out because this machine forgot them.
    pub forgotten_here: usize,
    /// Sessions left out because this store has its own copy.
    pub kept_local: usize,
    /// Sessions already as the team store has them.
    pub unchanged: usize,
    /// Embedding vectors taken with the sessions pulled (published by a
    /// machine with this store's model), for the embedding pass to use
    /// instead of running the model.
    pub vectors: usize,
    /// Sessions left out because they are over the bounds, or fail the
    /// checks on names, ids and content hash.
    pub skipped: Vec<Skipped>,
    /// This machine's `team.name`, where another machine pushes under it
    /// (its sessions are pulled as that machine's).
    pub name_collision: Option<String>,
}

/// What this store lacks of the team store.
pub(crate) struct Plan {
    /// Published sessions to fetch.
    pub to_fetch: Vec<Key>,
    /// Local rows of pulled sessions to remove.
    pub to_remove: Vec<i64>,
    /// Published sessions this store forgot.
    pub forgotten_here: usize,
    /// Published sessions this store has its own copy of.
    pub kept_local: usize,
    /// Published sessions already here as they are.
    pub unchanged: usize,
    /// Published sessions left out by their key (an origin outside the set).
    pub skipped: Vec<Skipped>,
    /// This machine's name, where another machine holds it.
    pub name_collision: Option<String>,
}

/// Whether another machine than this one (`settings.machine_id`; none:
/// this machine never pushed) holds this machine's origin.
pub(crate) fn collides(team: &mut Team) -> Result<bool> {
    let origin = team.settings.origin.clone();
    let held = crate::push::holder(team, &origin)?;
    Ok(match (held, &team.settings.machine_id) {
        (Some((theirs, _)), Some(mine)) => theirs != *mine,
        (Some(_), None) => true,
        (None, _) => false,
    })
}

/// Compares the team store's sessions of other machines with `store` (an
/// empty one when there is none yet). This machine's own origins are the
/// ones its machine id pushed under, and its `team.name` unless another
/// machine holds that name.
pub(crate) fn plan(team: &mut Team, store: Option<&Store>) -> Result<Plan> {
    let origin = team.settings.origin.clone();
    let machine = team.settings.machine_id.clone();
    let collision = collides(team)?;
    let remote = team
        .client
        .query(
            "SELECT origin, harness, session_id, content_hash, forgotten_at IS NOT NULL
             FROM deja.sessions
             WHERE (origin <> $1 OR $3)
               AND origin NOT IN (SELECT origin FROM deja.publishers WHERE machine_id = $2)",
            &[&origin, &machine, &collision],
        )
        .map_err(|e| team.fail(e))?;
    let pulled: HashMap<Key, (i64, String)> = match store {
        Some(store) => store
            .pulled()?
            .into_iter()
            .map(|p| {
                (
                    Key {
                        origin: p.origin,
                        harness: p.harness,
                        id: p.id,
                    },
                    (p.row, p.hash),
                )
            })
            .collect(),
        None => HashMap::new(),
    };
    let forgotten: HashSet<(String, String)> = match store {
        Some(store) => store
            .tombstones()?
            .into_iter()
            .map(|t| (t.harness, t.id))
            .collect(),
        None => HashSet::new(),
    };
    let mut plan = Plan {
        to_fetch: Vec::new(),
        to_remove: Vec::new(),
        forgotten_here: 0,
        kept_local: 0,
        unchanged: 0,
        skipped: Vec::new(),
        name_collision: collision.then(|| origin.clone()),
    };
    let mut live: HashSet<Key> = HashSet::new();
    for r in remote {
        let key = Key {
            origin: r.get(0),
            harness: r.get(1),
            id: r.get(2),
        };
        let hash: String = r.get(3);
        let gone: bool = r.get(4);
        if gone {
            continue;
        }
        live.insert(key.clone());
        if let Err(reason) = content::check_origin(&key.origin) {
            plan.skipped.push(Skipped { key, reason });
            continue;
        }
        match pulled.get(&key) {
            Some((_, h)) if *h == hash => plan.unchanged += 1,
            Some(_) => plan.to_fetch.push(key),
            None if forgotten.contains(&(key.harness.clone(), key.id.clone())) => {
                plan.forgotten_here += 1
            }
            None => match store
                .map(|s| s.session_row(&key.harness, &key.id))
                .transpose()?
            {
                // Its own copy (or one pulled from another origin first).
                Some(Some(_)) => plan.kept_local += 1,
                _ => plan.to_fetch.push(key),
            },
        }
    }
    plan.to_remove = pulled
        .iter()
        .filter(|(k, _)| !live.contains(*k))
        .map(|(_, (row, _))| *row)
        .collect();
    plan.to_remove.sort_unstable();
    plan.to_fetch.sort();
    plan.skipped.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(plan)
}

/// Pulls what `store` lacks of the team store, passing each session through
/// `prepare` (this machine's redaction) before storing it. `progress` hears
/// (sessions done, sessions to fetch).
pub fn pull(
    team: &mut Team,
    store: &mut Store,
    prepare: &dyn Fn(Session) -> Session,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<PullReport> {
    let plan = plan(team, Some(store))?;
    let mut report = PullReport {
        forgotten_here: plan.forgotten_here,
        kept_local: plan.kept_local,
        unchanged: plan.unchanged,
        skipped: plan.skipped,
        name_collision: plan.name_collision,
        ..PullReport::default()
    };
    let limits = team.settings.limits;
    // Vectors published by a machine with this store's model are taken
    // with their sessions; a store not embedded yet takes none.
    let model = store.model_stamp();
    let mut stored: Vec<Key> = Vec::new();
    let total = plan.to_fetch.len();
    progress(0, total);
    let mut done = 0;
    for keys in plan.to_fetch.chunks(BATCH) {
        let now = chrono::Utc::now().timestamp_millis();
        let mut store_them = |fetched: Vec<(String, String, Session)>| -> Result<()> {
            let mut sessions: Vec<(String, String, Session)> = Vec::with_capacity(fetched.len());
            for (origin, claimed, s) in fetched {
                let key = Key {
                    origin: origin.clone(),
                    harness: s.harness.clone(),
                    id: s.id.clone(),
                };
                if let Err(reason) = content::check_names(&s) {
                    report.skipped.push(Skipped { key, reason });
                    continue;
                }
                let hash = content::hash(&s);
                if hash != claimed {
                    report.skipped.push(Skipped {
                        key,
                        reason: "its content does not match its content hash (changed in the team store after it was pushed)".into(),
                    });
                    continue;
                }
                sessions.push((origin, hash, prepare(content::clamp_dates(s, now))));
            }
            let pulled: Vec<Pulled<'_>> = sessions
                .iter()
                .map(|(origin, hash, session)| Pulled {
                    origin,
                    hash,
                    session,
                })
                .collect();
            for (outcome, p) in store.apply_pulled(&pulled)?.into_iter().zip(&pulled) {
                match outcome {
                    PullOutcome::Added => report.added += 1,
                    PullOutcome::Updated => report.updated += 1,
                    PullOutcome::Forgotten => report.forgotten_here += 1,
                    PullOutcome::Kept => report.kept_local += 1,
                }
                if matches!(outcome, PullOutcome::Added | PullOutcome::Updated) {
                    report.messages += p.session.messages.len();
                    stored.push(Key {
                        origin: p.origin.to_string(),
                        harness: p.session.harness.clone(),
                        id: p.session.id.clone(),
                    });
                }
            }
            Ok(())
        };
        let over = fetch(team, keys, limits, &mut store_them)?;
        report.skipped.extend(over);
        if let Some(stamp) = &model {
            let mut sessions = Vec::with_capacity(stored.len());
            for key in stored.drain(..) {
                if let Some(r) = store
                    .session_row(&key.harness, &key.id)?
                    .filter(|r| r.origin.as_deref() == Some(key.origin.as_str()))
                {
                    sessions.push((key, r.row, r.message_count.max(0) as usize));
                }
            }
            report.vectors += crate::vectors::take(team, store, &stamp.id, stamp.dims, &sessions)?;
        }
        done += keys.len();
        progress(done, total);
    }
    report.removed = store.remove_pulled(&plan.to_remove)?;
    report.skipped.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(report)
}

/// The sizes of one published session, read before its content.
struct Sizes {
    key: Key,
    messages: i64,
    longest: i64,
    records: i64,
    bytes: i64,
}

impl Sizes {
    /// Why the session is over `limits`, if it is.
    fn over(&self, limits: PullLimits) -> Option<String> {
        let most = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        if self.messages > most(limits.max_messages) {
            Some(format!(
                "it has {} messages (at most {}: `team.pull_max_messages`)",
                self.messages, limits.max_messages
            ))
        } else if self.records > most(limits.max_messages) {
            Some(format!(
                "it has {} files or commands records (at most {}: `team.pull_max_messages`)",
                self.records, limits.max_messages
            ))
        } else if self.longest > most(limits.max_message_bytes) {
            Some(format!(
                "a message of it holds {} bytes (at most {}: `team.pull_max_message_bytes`)",
                self.longest, limits.max_message_bytes
            ))
        } else if self.bytes > most(limits.max_session_bytes) {
            Some(format!(
                "it holds {} bytes of text (at most {}: `team.pull_max_session_bytes`)",
                self.bytes, limits.max_session_bytes
            ))
        } else {
            None
        }
    }
}

/// The sessions `keys` names as the team store holds them now, with their
/// origin and claimed content hash, read in one snapshot (a session changed
/// or retracted since the list was read is skipped until the next pull) and
/// handed to `take` in groups of at most [`READ_BYTES`]. Sessions over
/// `limits` are measured in the team store and never read: they are
/// returned, with why.
fn fetch(
    team: &mut Team,
    keys: &[Key],
    limits: PullLimits,
    take: &mut dyn FnMut(Vec<(String, String, Session)>) -> Result<()>,
) -> Result<Vec<Skipped>> {
    let origins: Vec<&str> = keys.iter().map(|k| k.origin.as_str()).collect();
    let harnesses: Vec<&str> = keys.iter().map(|k| k.harness.as_str()).collect();
    let ids: Vec<&str> = keys.iter().map(|k| k.id.as_str()).collect();
    let join = "JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(origin, harness, session_id)
        USING (origin, harness, session_id)";
    let same = "t.origin = s.origin AND t.harness = s.harness AND t.session_id = s.session_id";
    let sizes_sql = format!(
        "SELECT s.origin, s.harness, s.session_id, m.n, m.longest, f.n + c.n,
            (octet_length(s.native_id) + coalesce(octet_length(s.title), 0)
             + coalesce(octet_length(s.project_dir), 0) + coalesce(octet_length(s.project_name), 0)
             + coalesce(octet_length(s.project_id), 0) + coalesce(octet_length(s.parent_id), 0))::bigint
             + m.bytes + f.bytes + c.bytes
         FROM deja.sessions s {join}
         CROSS JOIN LATERAL (SELECT count(*) AS n,
             coalesce(max(octet_length(t.text)), 0)::bigint AS longest,
             coalesce(sum(octet_length(t.text) + coalesce(octet_length(t.native_id), 0)), 0)::bigint AS bytes
             FROM deja.messages t WHERE {same}) m
         CROSS JOIN LATERAL (SELECT count(*) AS n, coalesce(sum(octet_length(t.path)), 0)::bigint AS bytes
             FROM deja.files t WHERE {same}) f
         CROSS JOIN LATERAL (SELECT count(*) AS n, coalesce(sum(octet_length(t.command)), 0)::bigint AS bytes
             FROM deja.commands t WHERE {same}) c
         WHERE s.forgotten_at IS NULL
         ORDER BY s.origin, s.harness, s.session_id"
    );
    let mut over = Vec::new();
    let result = (|| -> std::result::Result<Result<()>, postgres::Error> {
        let mut tx = team
            .client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?;
        let params: [&(dyn postgres::types::ToSql + Sync); 3] = [&origins, &harnesses, &ids];
        let mut groups: Vec<Vec<Key>> = Vec::new();
        let mut group_bytes = 0;
        for r in tx.query(&sizes_sql, &params)? {
            let sizes = Sizes {
                key: Key {
                    origin: r.get(0),
                    harness: r.get(1),
                    id: r.get(2),
                },
                messages: r.get(3),
                longest: r.get(4),
                records: r.get(5),
                bytes: r.get(6),
            };
            if let Some(reason) = sizes.over(limits) {
                over.push(Skipped {
                    key: sizes.key,
                    reason,
                });
                continue;
            }
            match groups.last_mut() {
                Some(g) if group_bytes + sizes.bytes <= READ_BYTES => g.push(sizes.key),
                _ => {
                    groups.push(vec![sizes.key]);
                    group_bytes = 0;
                }
            }
            group_bytes += sizes.bytes;
        }
        for group in groups {
            let sessions = read(&mut tx, &group)?;
            if let Err(e) = take(sessions) {
                return Ok(Err(e));
            }
        }
        tx.commit()?;
        Ok(Ok(()))
    })();
    match result {
        Ok(Ok(())) => Ok(over),
        Ok(Err(e)) => Err(e),
        Err(e) => Err(team.fail(e)),
    }
}

/// The sessions `keys` names, whole, read in the open transaction `tx`.
fn read(
    tx: &mut postgres::Transaction<'_>,
    keys: &[Key],
) -> std::result::Result<Vec<(String, String, Session)>, postgres::Error> {
    let origins: Vec<&str> = keys.iter().map(|k| k.origin.as_str()).collect();
    let harnesses: Vec<&str> = keys.iter().map(|k| k.harness.as_str()).collect();
    let ids: Vec<&str> = keys.iter().map(|k| k.id.as_str()).collect();
    let join = "JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(origin, harness, session_id)
        USING (origin, harness, session_id)";
    let params: [&(dyn postgres::types::ToSql + Sync); 3] = [&origins, &harnesses, &ids];
    let mut sessions: HashMap<(String, String, String), (String, Session)> = HashMap::new();
    for r in tx.query(
        &format!("SELECT s.* FROM deja.sessions s {join} WHERE s.forgotten_at IS NULL"),
        &params,
    )? {
        let origin: String = r.get("origin");
        let hash: String = r.get("content_hash");
        let s = content::session_from_row(&r);
        sessions.insert((origin, s.harness.clone(), s.id.clone()), (hash, s));
    }
    // Each session's content rows, in order, table by table.
    let parts: [(&str, AddRow); 3] = [
        ("messages", |s, r| {
            s.messages.push(content::message_from_row(r))
        }),
        ("files", |s, r| s.files.push(content::file_from_row(r))),
        ("commands", |s, r| {
            s.commands.push(content::command_from_row(r))
        }),
    ];
    for (table, add) in parts {
        let sql = format!(
            "SELECT t.* FROM deja.{table} t {join}
             ORDER BY t.origin, t.harness, t.session_id, t.position"
        );
        for r in tx.query(&sql, &params)? {
            let key = (r.get("origin"), r.get("harness"), r.get("session_id"));
            if let Some((_, s)) = sessions.get_mut(&key) {
                add(s, &r);
            }
        }
    }
    let mut out: Vec<(String, String, Session)> = sessions
        .into_iter()
        .map(|((origin, _, _), (hash, s))| (origin, hash, s))
        .collect();
    out.sort_by(|a, b| (&a.0, &a.2.harness, &a.2.id).cmp(&(&b.0, &b.2.harness, &b.2.id)));
    Ok(out)
}
