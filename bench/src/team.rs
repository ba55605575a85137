//! Team memory's throughput against a real PostgreSQL server (a durable
//! throwaway cluster on a Unix socket, fsync on): `deja team push` of a
//! generated corpus into an empty team store, a second push with nothing
//! changed, and `deja team pull` into an empty home, without the embedding
//! pass (`--no-embed`) and, where asked, with it; and, where asked, the same
//! corpus published by a home that embedded it (its vectors travel with it)
//! and pulled with the embedding pass into an empty home with the same
//! model, which takes those vectors instead of running the model. Messages
//! per second count the messages each command reports it moved.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::env::BenchEnv;
use crate::generate;
use deja_team::scratch::ScratchServer;

const PASSWORD: &str = "bench";

/// Figures at one size.
#[derive(Debug, Clone)]
pub struct TeamCost {
    /// Messages pushed (and pulled).
    pub messages: u64,
    /// Sessions pushed.
    pub sessions: u64,
    /// First push, seconds.
    pub push_s: f64,
    /// Its peak memory, bytes.
    pub push_rss: u64,
    /// A push with nothing changed, seconds.
    pub noop_push_s: f64,
    /// The team store's database on the server after the push, bytes.
    pub server_bytes: u64,
    /// Pull into an empty home without embedding, seconds.
    pub pull_s: f64,
    /// Its peak memory, bytes.
    pub pull_rss: u64,
    /// Pull with embedding into another empty home, seconds (when measured).
    pub pull_embed_s: Option<f64>,
    /// With vectors (when measured).
    pub vectors: Option<VectorCost>,
}

/// The same corpus published with its vectors and pulled with embedding.
#[derive(Debug, Clone)]
pub struct VectorCost {
    /// The publishing home's `deja index` with embeddings, seconds.
    pub index_s: f64,
    /// Its first push (sessions and vectors), seconds.
    pub push_s: f64,
    /// Vectors published.
    pub vectors: u64,
    /// On-disk size of the team store's vectors table (with its index), bytes.
    pub table_bytes: u64,
    /// Pull with embedding into an empty home with the same model, seconds.
    pub pull_s: f64,
    /// Texts that home's model embedded (one check per session).
    pub model_texts: u64,
    /// Units that took a published vector.
    pub from_team: u64,
}

fn json_of(env: &BenchEnv, args: &[&str]) -> Result<(serde_json::Value, f64)> {
    let (v, cost) = measured_json(env, args)?;
    Ok((v, cost.wall.as_secs_f64()))
}

/// [`json_of`], with the command's peak memory.
fn measured_json(env: &BenchEnv, args: &[&str]) -> Result<(serde_json::Value, crate::env::Cost)> {
    let (out, cost) = env.output(args)?;
    if !out.status.success() {
        bail!(
            "deja {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v = serde_json::from_slice(&out.stdout).context("deja printed no JSON")?;
    Ok((v, cost))
}

/// Every project of the indexed sessions, as `team.share` names them.
fn projects(env: &BenchEnv) -> Result<Vec<String>> {
    let (list, _) = json_of(env, &["sessions", "--json"])?;
    let mut out: Vec<String> = list["sessions"]
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or(&[])
        .iter()
        .filter_map(|s| {
            let p = &s["project"];
            p["dir"].as_str().or(p["id"].as_str()).map(str::to_string)
        })
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

fn team_config(
    server: &ScratchServer,
    db: &str,
    user: &str,
    share: &[String],
    embed: bool,
) -> String {
    format!(
        "enabled = {embed}\n[team]\nurl = \"{}\"\nname = \"{user}@bench\"\ntls = \"disable\"\nshare = {share:?}\n",
        server.url(user, db)
    )
}

/// Measures at `messages`; the pull with embeddings only when `embed`.
pub fn run(deja: &Path, server: &ScratchServer, messages: usize, embed: bool) -> Result<TeamCost> {
    let db = format!("team_{messages}");
    server.create_database(&db)?;

    let mut a = BenchEnv::new(deja, "enabled = false\n")?;
    generate::corpus(&a.home, messages, 42 + messages as u64)?;
    a.set("GEMINI_CLI_HOME", a.home.clone());
    a.set("DEJA_TEAM_PASSWORD", PASSWORD);
    a.run(&["index"])?;
    let share = projects(&a)?;
    a.configure(&team_config(server, &db, "ana", &share, false))?;
    let (first, push) = measured_json(&a, &["team", "push", "--json"])?;
    let push_s = push.wall.as_secs_f64();
    let (_, noop_push_s) = json_of(&a, &["team", "push", "--json"])?;
    let server_bytes = server
        .psql(&db, "SELECT pg_database_size(current_database())")?
        .trim()
        .parse()
        .context("the size of the team database")?;
    let pushed = first["messages"].as_u64().unwrap_or(0);
    let sessions = first["pushed"].as_u64().unwrap_or(0);

    let mut b = BenchEnv::new(deja, "")?;
    b.set("DEJA_TEAM_PASSWORD", PASSWORD);
    b.configure(&team_config(server, &db, "ben", &[], false))?;
    let (pulled, pull) = measured_json(&b, &["team", "pull", "--no-embed", "--json"])?;
    let pull_s = pull.wall.as_secs_f64();
    if pulled["messages"].as_u64() != Some(pushed) {
        bail!("pulled {} messages of {pushed}", pulled["messages"]);
    }
    let pull_embed_s = if embed {
        let mut c = BenchEnv::new(deja, "")?;
        c.set("DEJA_TEAM_PASSWORD", PASSWORD);
        c.configure(&team_config(server, &db, "cat", &[], true))?;
        let (got, secs) = json_of(&c, &["team", "pull", "--json"])?;
        if got["embedded_messages"].as_u64() != Some(pushed) {
            bail!("embedded {} messages of {pushed}", got["embedded_messages"]);
        }
        Some(secs)
    } else {
        None
    };
    let vectors = if embed {
        Some(with_vectors(deja, server, messages, pushed)?)
    } else {
        None
    };
    Ok(TeamCost {
        messages: pushed,
        sessions,
        push_s,
        push_rss: push.peak_rss,
        noop_push_s,
        server_bytes,
        pull_s,
        pull_rss: pull.peak_rss,
        pull_embed_s,
        vectors,
    })
}

/// The corpus of [`run`] at `messages` published by a home that embedded it,
/// then pulled with embedding into an empty home with the same model.
fn with_vectors(
    deja: &Path,
    server: &ScratchServer,
    messages: usize,
    pushed: u64,
) -> Result<VectorCost> {
    let db = format!("team_{messages}_vectors");
    server.create_database(&db)?;
    let mut a = BenchEnv::new(deja, "")?;
    generate::corpus(&a.home, messages, 42 + messages as u64)?;
    a.set("GEMINI_CLI_HOME", a.home.clone());
    a.set("DEJA_TEAM_PASSWORD", PASSWORD);
    let started = Instant::now();
    a.run(&["index"])?;
    let index_s = started.elapsed().as_secs_f64();
    let share = projects(&a)?;
    a.configure(&team_config(server, &db, "dan", &share, true))?;
    let (first, push_s) = json_of(&a, &["team", "push", "--json"])?;
    if first["messages"].as_u64() != Some(pushed) {
        bail!("pushed {} messages of {pushed}", first["messages"]);
    }
    let table_bytes = server
        .psql(&db, "SELECT pg_total_relation_size('deja.vectors')")?
        .trim()
        .parse()
        .context("the size of deja.vectors")?;
    let mut e = BenchEnv::new(deja, "")?;
    e.set("DEJA_TEAM_PASSWORD", PASSWORD);
    e.configure(&team_config(server, &db, "eve", &[], true))?;
    let (got, pull_s) = json_of(&e, &["team", "pull", "--json"])?;
    if got["embedded_messages"].as_u64() != Some(pushed) {
        bail!("embedded {} messages of {pushed}", got["embedded_messages"]);
    }
    Ok(VectorCost {
        index_s,
        push_s,
        vectors: first["vectors"].as_u64().unwrap_or(0),
        table_bytes,
        pull_s,
        model_texts: got["embedded_by_model"].as_u64().unwrap_or(0),
        from_team: got["from_team"].as_u64().unwrap_or(0),
    })
}

/// A durable scratch server with the team roles.
pub fn server() -> Result<ScratchServer> {
    let server = ScratchServer::start(true)?;
    server.create_roles(&["ana", "ben", "cat", "dan", "eve"], PASSWORD)?;
    Ok(server)
}

/// The Markdown table.
pub fn table(rows: &[TeamCost]) -> String {
    use std::fmt::Write as _;
    let mut s = String::from(
        "| messages | sessions | push s (msg/s) | push, nothing changed, s | pull without embedding s (msg/s) | pull with embedding s (msg/s) | peak RSS push / pull MB | team database MB (bytes a message) |\n|---|---|---|---|---|---|---|---|\n",
    );
    let rate = |n: u64, secs: f64| n as f64 / secs.max(1e-9);
    for r in rows {
        let embed = match r.pull_embed_s {
            Some(t) => format!("{t:.1} ({:.0})", rate(r.messages, t)),
            None => "not measured".to_string(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {:.1} ({:.0}) | {:.2} | {:.1} ({:.0}) | {embed} | {:.0} / {:.0} | {:.0} ({:.0}) |",
            r.messages,
            r.sessions,
            r.push_s,
            rate(r.messages, r.push_s),
            r.noop_push_s,
            r.pull_s,
            rate(r.messages, r.pull_s),
            crate::env::mb(r.push_rss),
            crate::env::mb(r.pull_rss),
            crate::env::mb(r.server_bytes),
            r.server_bytes as f64 / r.messages.max(1) as f64,
        );
    }
    let with: Vec<(&TeamCost, &VectorCost)> = rows
        .iter()
        .filter_map(|r| r.vectors.as_ref().map(|v| (r, v)))
        .collect();
    if !with.is_empty() {
        s.push_str(
            "\n| messages | publisher's index with embeddings s | push with vectors s | vectors (bytes each in the team store) | pull with embedding s (msg/s) | texts the puller's model embedded | embeddings taken from the team |\n|---|---|---|---|---|---|---|\n",
        );
        for (r, v) in with {
            let _ = writeln!(
                s,
                "| {} | {:.1} | {:.1} | {} ({:.0}) | {:.1} ({:.0}) | {} | {} |",
                r.messages,
                v.index_s,
                v.push_s,
                v.vectors,
                v.table_bytes as f64 / v.vectors.max(1) as f64,
                v.pull_s,
                rate(r.messages, v.pull_s),
                v.model_texts,
                v.from_team,
            );
        }
    }
    s
}
