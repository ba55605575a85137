//! How soon a first `deja index` makes the newest sessions recallable by
//! meaning: a generated history spread over a year is indexed with real
//! embeddings while the store is watched, and the run is interrupted once
//! the last 30 days are embedded (the rest would take hours), then checked.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rusqlite::{Connection, OpenFlags};

use crate::env::BenchEnv;
use crate::generate;

const DAY_MS: i64 = 86_400_000;

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Newest {
    /// Messages stored.
    pub messages: i64,
    /// Days from the oldest session's start to the newest's.
    pub span_days: f64,
    /// Seconds from the start of `deja index` until every generated message
    /// was stored (searchable by words; embedding starts then).
    pub lexical_s: f64,
    /// For 1, 7 and 30 days: (messages of the sessions begun in the last N
    /// days before the newest session, seconds until all of them had units).
    pub marks: Vec<(i64, i64, f64)>,
    /// Seconds from SIGINT to the process's exit, and its exit status.
    pub stop_s: f64,
    /// The exit status of the interrupted run (`None`: killed by a signal).
    pub stop_status: Option<i32>,
    /// Messages still waiting for embeddings after the interruption.
    pub pending_after: i64,
    /// What `deja doctor --json` then says meaning covers.
    pub covers_after: Option<String>,
    /// Messages embedded per second, from the end of reading to the interruption.
    pub rate: f64,
}

/// Runs the measurement on `messages` generated messages spread over `days`.
pub fn run(deja: &std::path::Path, messages: usize, days: f64) -> Result<Newest> {
    let mut env = BenchEnv::new(deja, "")?;
    let generated =
        generate::corpus_spanning(&env.home, messages, 42 + messages as u64, Some(days))?;
    env.set("GEMINI_CLI_HOME", env.home.clone());
    let mut child = env
        .command()
        .arg("index")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .context("cannot start deja index")?;
    let started = Instant::now();
    let mut lexical_s = None;
    let mut marks: Vec<(i64, i64, f64)> = Vec::new();
    let wanted = [1_i64, 7, 30];
    let mut db: Option<Connection> = None;
    loop {
        std::thread::sleep(Duration::from_millis(250));
        if let Some(status) = child.try_wait()? {
            bail!("deja index ended ({status}) before the last 30 days were embedded");
        }
        if started.elapsed() > Duration::from_secs(4 * 3600) {
            let _ = child.kill();
            bail!("the last 30 days were not embedded within four hours");
        }
        if db.is_none() && env.database().is_file() {
            db = Connection::open_with_flags(
                env.database(),
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .ok();
            if let Some(c) = &db {
                c.busy_timeout(Duration::from_secs(5))?;
            }
        }
        let Some(c) = &db else { continue };
        let now = started.elapsed().as_secs_f64();
        if lexical_s.is_none() {
            let stored = c
                .query_row("SELECT count(*) FROM messages", [], |r| r.get::<_, i64>(0))
                .unwrap_or(0);
            if stored < generated.messages as i64 {
                continue;
            }
            lexical_s = Some(now);
        }
        for &days in &wanted {
            if marks.iter().any(|m| m.0 == days) {
                continue;
            }
            let (total, waiting) = recent(c, days)?;
            if waiting == 0 {
                marks.push((days, total, now));
            }
        }
        if marks.len() == wanted.len() {
            break;
        }
    }
    // Interrupt as Ctrl-C would.
    let stop = Instant::now();
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let status = child.wait()?;
    let stop_s = stop.elapsed().as_secs_f64();
    let stopped_at = started.elapsed().as_secs_f64() - stop_s;
    let c = db.context("the store was never created")?;
    let messages_stored: i64 = c.query_row("SELECT count(*) FROM messages", [], |r| r.get(0))?;
    let pending_after = deja_store::Store::open_read(&env.database())?.pending_count()?;
    let (oldest, newest): (i64, i64) = c.query_row(
        "SELECT min(started_at), max(started_at) FROM sessions",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    drop(c);
    let doctor = env
        .command()
        .args(["doctor", "--json"])
        .output()
        .context("cannot run deja doctor")?;
    let covers_after = serde_json::from_slice::<serde_json::Value>(&doctor.stdout)
        .ok()
        .and_then(|v| {
            v.pointer("/store/meaning_covers_after")
                .and_then(|c| c.as_str().map(str::to_string))
        });
    let lexical_s = lexical_s.unwrap_or_default();
    let embedded = messages_stored - pending_after;
    Ok(Newest {
        messages: messages_stored,
        span_days: (newest - oldest) as f64 / DAY_MS as f64,
        lexical_s,
        rate: embedded as f64 / (stopped_at - lexical_s).max(1e-9),
        marks,
        stop_s,
        stop_status: status.code(),
        pending_after,
        covers_after,
    })
}

/// Messages (not blank) of the sessions begun within `days` days before the
/// newest session's start: (all of them, those without units yet).
fn recent(c: &Connection, days: i64) -> Result<(i64, i64)> {
    Ok(c.query_row(
        "SELECT count(*),
                coalesce(sum(NOT EXISTS (SELECT 1 FROM chunks c WHERE c.message = m.id)), 0)
         FROM messages m JOIN sessions s ON s.id = m.session
         WHERE s.started_at >= (SELECT max(started_at) FROM sessions) - ?1
           AND length(trim(m.text, ' ' || char(9) || char(10) || char(13))) > 0",
        [days * DAY_MS],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// The result as Markdown.
pub fn table(n: &Newest) -> String {
    let mut s = format!(
        "{} messages over {:.0} days; every transcript read and stored (words searchable) after {:.1} s\n\n\
         | sessions begun in the last | messages | recallable by meaning after |\n|---|---|---|\n",
        n.messages, n.span_days, n.lexical_s
    );
    for (days, total, at) in &n.marks {
        s.push_str(&format!("| {days} days | {total} | {at:.1} s |\n"));
    }
    s.push_str(&format!(
        "\nEmbedding newest first at {:.1} messages/s. Interrupted (SIGINT) then: exited in {:.2} s with status {}; {} messages left for the next run; `deja doctor` says meaning covers the sessions begun after {}.\n",
        n.rate,
        n.stop_s,
        n.stop_status.map_or("none (signal)".to_string(), |c| c.to_string()),
        n.pending_after,
        n.covers_after.as_deref().unwrap_or("(nothing reported)")
    ));
    s
}
