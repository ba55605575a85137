//! The day-zero run: a history of generated Claude Code and Codex CLI
//! sessions ([`dayzero_corpus`]) in a fresh HOME, the first `deja index` a
//! user runs on it (newest first, with the default model), and `deja recall`
//! as a user runs it for 100 questions with one answer session each.
//!
//! Measured: when every transcript is stored (searchable by words); when
//! the sessions of the newest days are searchable by meaning; the time to a
//! first answer (from the start of `deja index` until a recall of a question
//! answered in the newest days lists its answer session in the top 5, asked
//! once a second while the index runs); how much was embedded when the
//! embedding pass was interrupted (SIGINT, as Ctrl-C) after a fixed time,
//! and at what rate, from which the time to embed everything is
//! extrapolated; then, per mode, cold `deja recall` processes: p50 latency,
//! hit@1, hit@5 and found@50 (the answer session among the first 50
//! sessions listed).

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags};

use crate::dayzero_corpus::{self, Question, Written};
use crate::env::{self, BenchEnv};

const DAY_MS: i64 = 86_400_000;

/// Which questions (by position) a row of the table counts.
type Keep<'a> = Box<dyn Fn(usize, &Question) -> bool + 'a>;

/// The run's size.
#[derive(Debug, Clone)]
pub struct Options {
    /// Sessions written.
    pub sessions: usize,
    /// Days the history spans.
    pub days: f64,
    /// Fewest and most messages of a session.
    pub messages: (usize, usize),
    /// Seconds the embedding pass may run after every transcript is stored.
    pub embed_secs: f64,
    /// Questions asked (the first N of the 100).
    pub questions: usize,
}

impl Options {
    /// The published size: 20,000 sessions over 180 days.
    pub fn full() -> Options {
        Options {
            sessions: 20_000,
            days: 180.0,
            messages: (4, 16),
            embed_secs: 600.0,
            questions: 100,
        }
    }

    /// Seconds, for CI.
    pub fn smoke() -> Options {
        Options {
            sessions: 40,
            days: 30.0,
            messages: (2, 4),
            embed_secs: 3.0,
            questions: 10,
        }
    }
}

/// One mode's scores over a set of questions.
#[derive(Debug, Clone, Default)]
pub struct Scores {
    /// Questions.
    pub n: usize,
    /// Answer session first.
    pub hit1: usize,
    /// In the first five sessions.
    pub hit5: usize,
    /// In the first fifty sessions.
    pub found50: usize,
    /// Cold `deja recall` wall times, ms.
    pub latencies: Vec<f64>,
}

impl Scores {
    fn add(&mut self, rank: Option<usize>, ms: f64) {
        self.n += 1;
        self.latencies.push(ms);
        if let Some(r) = rank {
            self.hit1 += usize::from(r == 0);
            self.hit5 += usize::from(r < 5);
            self.found50 += usize::from(r < 50);
        }
    }
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct DayZero {
    /// What was written.
    pub written: Written,
    /// Options of the run.
    pub options: Options,
    /// Seconds to write the files.
    pub generate_s: f64,
    /// Seconds from the start of `deja index` until every message was stored.
    pub lexical_s: Option<f64>,
    /// Messages of the sessions begun in the newest days, and seconds until
    /// all had embeddings.
    pub newest: (i64, Option<f64>),
    /// Seconds to the first answer, the question, and that recall's time (ms).
    pub first_answer: Option<(f64, usize, f64)>,
    /// Recalls asked before the first answer.
    pub probes: usize,
    /// Seconds from the start of `deja index` to the interruption (or its end).
    pub stopped_s: f64,
    /// Whether `deja index` finished by itself (everything embedded).
    pub finished: bool,
    /// Messages stored, and those embedded when the run stopped.
    pub stored: i64,
    /// Messages with embeddings when the run stopped.
    pub embedded: i64,
    /// Peak RSS of `deja index`, bytes (`VmHWM`).
    pub index_peak: u64,
    /// Per mode and question set: scores.
    pub scores: Vec<(String, String, Scores)>,
}

impl DayZero {
    /// Messages embedded per second, from the end of reading to the stop.
    pub fn rate(&self) -> f64 {
        let from = self.lexical_s.unwrap_or(0.0);
        self.embedded as f64 / (self.stopped_s - from).max(1e-9)
    }
}

/// Whether a recall's JSON lists the answer, and at which session rank.
fn rank(stdout: &[u8], answer: &str) -> Option<usize> {
    let v: serde_json::Value = serde_json::from_slice(stdout).ok()?;
    let mut sessions: Vec<&str> = Vec::new();
    for hit in v.get("hits")?.as_array()? {
        let id = hit.get("session_id").and_then(|s| s.as_str()).unwrap_or("");
        let path = hit
            .get("source_path")
            .and_then(|s| s.as_str())
            .unwrap_or("");
        let key = if path.is_empty() { id } else { path };
        if !sessions.contains(&key) {
            sessions.push(key);
        }
        if path.ends_with(&format!("{answer}.jsonl")) || id.contains(answer) {
            return sessions.len().checked_sub(1);
        }
    }
    None
}

/// Runs `deja recall` for `q` and returns (answer rank, wall ms).
fn recall(
    env: &BenchEnv,
    q: &Question,
    limit: &str,
    mode: Option<&str>,
) -> Result<(Option<usize>, f64)> {
    let mut cmd = env.command();
    cmd.args([
        "recall",
        &q.question,
        "--json",
        "-n",
        limit,
        "--per-session",
        "1",
    ]);
    if let Some(m) = mode {
        cmd.args(["--mode", m]);
    }
    let started = Instant::now();
    let out = cmd.output().context("cannot run deja recall")?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok((rank(&out.stdout, &q.session), ms))
}

/// Messages (not blank) of sessions begun in the last `days` before the
/// newest: (all, without embeddings yet).
fn recent(c: &Connection, days: f64) -> rusqlite::Result<(i64, i64)> {
    c.query_row(
        "SELECT count(*),
                coalesce(sum(NOT EXISTS (SELECT 1 FROM chunks c WHERE c.message = m.id)), 0)
         FROM messages m JOIN sessions s ON s.id = m.session
         WHERE s.started_at >= (SELECT max(started_at) FROM sessions) - ?1
           AND length(trim(m.text, ' ' || char(9) || char(10) || char(13))) > 0",
        [(days * DAY_MS as f64) as i64],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Whether every message of the session `native` has embeddings.
fn embedded(c: &Connection, native: &str) -> Result<bool> {
    let (messages, waiting): (i64, i64) = c.query_row(
        "SELECT count(*),
                coalesce(sum(NOT EXISTS (SELECT 1 FROM chunks c WHERE c.message = m.id)), 0)
         FROM messages m JOIN sessions s ON s.id = m.session
         WHERE s.native_id = ?1
           AND length(trim(m.text, ' ' || char(9) || char(10) || char(13))) > 0",
        [native],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(messages > 0 && waiting == 0)
}

fn peak_rss(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// Runs the day-zero measurement.
pub fn run(deja: &Path, options: &Options) -> Result<DayZero> {
    let env = BenchEnv::new(deja, "")?;
    let mut questions = dayzero_corpus::questions(dayzero_corpus::SEED, options.days);
    questions.truncate(options.questions);
    let started = Instant::now();
    let written = dayzero_corpus::write(
        &env.home,
        options.sessions,
        options.days,
        options.messages,
        &questions,
        dayzero_corpus::SEED,
    )?;
    let generate_s = started.elapsed().as_secs_f64();
    eprintln!(
        "deja-bench: wrote {} sessions ({} Claude Code, {} Codex), {} messages in {generate_s:.1} s",
        written.sessions, written.claude, written.codex, written.messages
    );
    let newest_questions: Vec<&Question> = questions
        .iter()
        .filter(|q| q.days_before_newest < dayzero_corpus::NEWEST_DAYS)
        .collect();

    let mut cmd = env.command();
    cmd.arg("index")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // A benchmark started in the background by a shell has SIGINT ignored,
    // and its children would inherit that: deja index would never stop.
    // SAFETY: only an async-signal-safe call between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = cmd.spawn().context("cannot start deja index")?;
    let pid = child.id();
    let started = Instant::now();
    let mut lexical_s = None;
    let mut newest = (0, None);
    let mut first_answer = None;
    let mut probes = 0;
    let mut last_probe = Instant::now() - Duration::from_secs(10);
    let mut last_check = last_probe;
    let mut index_peak = 0;
    let mut db: Option<Connection> = None;
    let finished = loop {
        std::thread::sleep(Duration::from_millis(200));
        index_peak = index_peak.max(peak_rss(pid));
        if child.try_wait()?.is_some() {
            break true;
        }
        let now = started.elapsed().as_secs_f64();
        if let Some(l) = lexical_s {
            if now - l >= options.embed_secs {
                break false;
            }
        }
        if first_answer.is_none()
            && !newest_questions.is_empty()
            && last_probe.elapsed().as_secs_f64() >= 1.0
        {
            let q = newest_questions[probes % newest_questions.len()];
            probes += 1;
            let (r, ms) = recall(&env, q, "5", None)?;
            last_probe = Instant::now();
            if r.is_some_and(|r| r < 5) {
                first_answer = Some((started.elapsed().as_secs_f64(), q.id, ms));
                eprintln!(
                    "deja-bench: first answer after {:.1} s (question {})",
                    started.elapsed().as_secs_f64(),
                    q.id
                );
            }
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
        if lexical_s.is_none() {
            let stored = c
                .query_row("SELECT count(*) FROM messages", [], |r| r.get::<_, i64>(0))
                .unwrap_or(0);
            if stored >= written.messages as i64 {
                lexical_s = Some(started.elapsed().as_secs_f64());
                eprintln!(
                    "deja-bench: every message stored after {:.1} s",
                    started.elapsed().as_secs_f64()
                );
            }
            continue;
        }
        if newest.1.is_none() && last_check.elapsed() >= Duration::from_secs(2) {
            last_check = Instant::now();
            if let Ok((total, waiting)) = recent(c, dayzero_corpus::NEWEST_DAYS) {
                newest.0 = total;
                if waiting == 0 {
                    newest.1 = Some(started.elapsed().as_secs_f64());
                    eprintln!(
                        "deja-bench: the newest {} days searchable by meaning after {:.1} s",
                        dayzero_corpus::NEWEST_DAYS,
                        started.elapsed().as_secs_f64()
                    );
                }
            }
        }
    };
    let stopped_s = started.elapsed().as_secs_f64();
    if !finished {
        // SAFETY: signalling our own child process.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGINT);
        }
    }
    child.wait()?;
    drop(db);
    let c = Connection::open_with_flags(env.database(), OpenFlags::SQLITE_OPEN_READ_ONLY)
        .context("the store was never created")?;
    let stored: i64 = c.query_row("SELECT count(*) FROM messages", [], |r| r.get(0))?;
    let pending = deja_store::Store::open_read(&env.database())?.pending_count()?;
    if newest.1.is_none() {
        if let Ok((total, waiting)) = recent(&c, dayzero_corpus::NEWEST_DAYS) {
            newest.0 = total;
            if waiting == 0 {
                newest.1 = Some(stopped_s);
            }
        }
    }
    let lexical_s = lexical_s.or(finished.then_some(stopped_s));
    let mut answered_embedded = Vec::new();
    for q in &questions {
        answered_embedded.push(embedded(&c, &q.session)?);
    }
    drop(c);

    // Cold recalls, as a user runs them.
    let sets: [(&str, Keep); 4] = [
        ("all", Box::new(|_, _| true)),
        ("asked in other words", Box::new(|_, q| q.kind == "meaning")),
        (
            "asked by an identifier",
            Box::new(|_, q| q.kind == "keyword"),
        ),
        (
            "answer session embedded",
            Box::new(|i, _| answered_embedded[i]),
        ),
    ];
    let mut scores = Vec::new();
    for mode in ["lexical", "hybrid"] {
        eprintln!("deja-bench: {} cold recalls, {mode}", questions.len());
        let mut per: Vec<Scores> = vec![Scores::default(); sets.len()];
        for (i, q) in questions.iter().enumerate() {
            let (r, ms) = recall(&env, q, "50", Some(mode))?;
            for (k, (_, keep)) in sets.iter().enumerate() {
                if keep(i, q) {
                    per[k].add(r, ms);
                }
            }
        }
        for ((name, _), s) in sets.iter().zip(per) {
            scores.push((mode.to_string(), name.to_string(), s));
        }
    }
    Ok(DayZero {
        written,
        options: options.clone(),
        generate_s,
        lexical_s,
        newest,
        first_answer,
        probes,
        stopped_s,
        finished,
        stored,
        embedded: stored - pending,
        index_peak,
        scores,
    })
}

fn duration(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.1} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

fn pct(k: usize, n: usize) -> String {
    if n == 0 {
        return "–".into();
    }
    format!("{:.0}", 100.0 * k as f64 / n as f64)
}

/// The result as Markdown.
pub fn table(d: &DayZero) -> String {
    let w = &d.written;
    let mut s = format!(
        "{} sessions ({} Claude Code, {} Codex CLI) with {} messages over {:.0} days, written in {:.1} s; {} questions, one answer session each.\n\n\
         | build (first `deja index`, newest first) | measured |\n|---|---|\n",
        w.sessions, w.claude, w.codex, w.messages, d.options.days, d.generate_s,
        d.options.questions.min(100)
    );
    let lexical = d.lexical_s.map_or("not reached".to_string(), duration);
    s.push_str(&format!(
        "| every transcript stored: searchable by words | {lexical} |\n"
    ));
    s.push_str(&format!(
        "| sessions of the last {:.0} days ({} messages) searchable by meaning | {} |\n",
        dayzero_corpus::NEWEST_DAYS,
        d.newest.0,
        d.newest
            .1
            .map_or("not within the run".to_string(), duration)
    ));
    match d.first_answer {
        Some((at, q, ms)) => s.push_str(&format!(
            "| first answer: a recall lists its answer session in the top 5 | {} (question {q}, recall {ms:.0} ms; {} recalls asked, one a second from the start) |\n",
            duration(at),
            d.probes
        )),
        None => s.push_str(&format!(
            "| first answer | none within the run ({} recalls asked) |\n",
            d.probes
        )),
    }
    let rate = d.rate();
    let share = 100.0 * d.embedded as f64 / d.stored.max(1) as f64;
    if d.finished {
        s.push_str(&format!(
            "| everything searchable by meaning (`deja index` ended) | {} ({rate:.1} messages/s) |\n",
            duration(d.stopped_s)
        ));
    } else {
        let all = d.lexical_s.unwrap_or(0.0) + d.stored as f64 / rate.max(1e-9);
        s.push_str(&format!(
            "| embedding interrupted (SIGINT) after {} of embedding | {} of {} messages embedded ({share:.1}%) at {rate:.1} messages/s |\n\
             | everything searchable by meaning (extrapolated at that rate) | about {} |\n",
            duration(d.stopped_s - d.lexical_s.unwrap_or(0.0)),
            d.embedded,
            d.stored,
            duration(all)
        ));
    }
    s.push_str(&format!(
        "| `deja index` peak RSS | {:.0} MB |\n",
        env::mb(d.index_peak)
    ));
    s.push_str(
        "\n| mode | questions | n | hit@1 % | hit@5 % | found@50 % | cold `deja recall` p50 ms |\n|---|---|---|---|---|---|---|\n",
    );
    for (mode, set, sc) in &d.scores {
        let (p50, _) = env::percentiles(sc.latencies.clone());
        s.push_str(&format!(
            "| {mode} | {set} | {} | {} | {} | {} | {p50:.0} |\n",
            sc.n,
            pct(sc.hit1, sc.n),
            pct(sc.hit5, sc.n),
            pct(sc.found50, sc.n)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::rank;

    #[test]
    fn rank_counts_sessions_not_hits() {
        let json = br#"{"hits":[
            {"session_id":"a","source_path":"/h/.claude/projects/p/x.jsonl"},
            {"session_id":"a","source_path":"/h/.claude/projects/p/x.jsonl"},
            {"session_id":"b","source_path":"/h/.codex/sessions/2026/11/30/rollout-2026-11-30T18-00-00-y.jsonl"}
        ]}"#;
        assert_eq!(rank(json, "x"), Some(0));
        assert_eq!(rank(json, "y"), Some(1));
        assert_eq!(rank(json, "z"), None);
        assert_eq!(rank(b"no matches", "x"), None);
    }
}
