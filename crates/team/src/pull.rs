//! `deja team pull`: brings the sessions other machines published into the
//! local store. The team store's list of sessions and content hashes is
//! compared with what this store pulled before; only new or changed sessions
//! are fetched (in consistent snapshots, batch by batch), and sessions whose
//! tombstone arrived, or that left the team store, are removed. A pulled
//! session never replaces this machine's own copy, and one forgotten here
//! stays forgotten.

use std::collections::{HashMap, HashSet};

use deja_model::Session;
use deja_store::ingest::{PullOutcome, Pulled};
use deja_store::Store;

use crate::{content, Key, Result, Team};

/// Adds one content row (a message, file or command) to its session.
type AddRow = fn(&mut Session, &postgres::Row);

/// Sessions fetched per snapshot.
const BATCH: usize = 200;

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
}

/// Compares the team store's sessions of other origins with `store`.
pub(crate) fn plan(team: &mut Team, store: &Store) -> Result<Plan> {
    let origin = team.settings.origin.clone();
    let remote = team
        .client
        .query(
            "SELECT origin, harness, session_id, content_hash, forgotten_at IS NOT NULL
             FROM deja.sessions WHERE origin <> $1",
            &[&origin],
        )
        .map_err(|e| team.fail(e))?;
    let pulled: HashMap<Key, (i64, String)> = store
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
        .collect();
    let forgotten: HashSet<(String, String)> = store
        .tombstones()?
        .into_iter()
        .map(|t| (t.harness, t.id))
        .collect();
    let mut plan = Plan {
        to_fetch: Vec::new(),
        to_remove: Vec::new(),
        forgotten_here: 0,
        kept_local: 0,
        unchanged: 0,
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
        match pulled.get(&key) {
            Some((_, h)) if *h == hash => plan.unchanged += 1,
            Some(_) => plan.to_fetch.push(key),
            None if forgotten.contains(&(key.harness.clone(), key.id.clone())) => {
                plan.forgotten_here += 1
            }
            None => match store.session_row(&key.harness, &key.id)? {
                // Its own copy (or one pulled from another origin first).
                Some(_) => plan.kept_local += 1,
                None => plan.to_fetch.push(key),
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
    let plan = plan(team, store)?;
    let mut report = PullReport {
        forgotten_here: plan.forgotten_here,
        kept_local: plan.kept_local,
        unchanged: plan.unchanged,
        ..PullReport::default()
    };
    let total = plan.to_fetch.len();
    progress(0, total);
    let mut done = 0;
    for keys in plan.to_fetch.chunks(BATCH) {
        let fetched = fetch(team, keys)?;
        let sessions: Vec<(String, String, Session)> = fetched
            .into_iter()
            .map(|(origin, hash, s)| (origin, hash, prepare(s)))
            .collect();
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
            }
        }
        done += keys.len();
        progress(done, total);
    }
    report.removed = store.remove_pulled(&plan.to_remove)?;
    Ok(report)
}

/// The sessions `keys` names as the team store holds them now, with their
/// origin and content hash, read in one snapshot (a session changed or
/// retracted since the list was read is skipped until the next pull).
fn fetch(team: &mut Team, keys: &[Key]) -> Result<Vec<(String, String, Session)>> {
    let origins: Vec<&str> = keys.iter().map(|k| k.origin.as_str()).collect();
    let harnesses: Vec<&str> = keys.iter().map(|k| k.harness.as_str()).collect();
    let ids: Vec<&str> = keys.iter().map(|k| k.id.as_str()).collect();
    let join = "JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(origin, harness, session_id)
        USING (origin, harness, session_id)";
    let result = (|| -> std::result::Result<Vec<(String, String, Session)>, postgres::Error> {
        let mut tx = team
            .client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?;
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
        tx.commit()?;
        let mut out: Vec<(String, String, Session)> = sessions
            .into_iter()
            .map(|((origin, _, _), (hash, s))| (origin, hash, s))
            .collect();
        out.sort_by(|a, b| (&a.0, &a.2.harness, &a.2.id).cmp(&(&b.0, &b.2.harness, &b.2.id)));
        Ok(out)
    })();
    result.map_err(|e| team.fail(e))
}
