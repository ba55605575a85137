//! The day-zero history: generated sessions written as real Claude Code
//! transcripts (`~/.claude/projects/<project>/<uuid>.jsonl`) and Codex CLI
//! rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), spread over
//! months, with one planted episode per question in exactly one session.
//!
//! The records have the shape of the real files (`../shared/specs/`): Claude
//! Code's user and assistant records with `parentUuid` chains, tool calls
//! whose output comes back under the user role, snapshots; Codex's
//! `session_meta`, developer and environment messages, `turn_context`,
//! response items doubled by `event_msg` events, tool calls and token counts.
//! The text of the ordinary sessions is [`generate`]'s; each also names one
//! of the services the questions ask about, so a service's name alone does
//! not find an answer. Most questions say what their episode says in other
//! words (meaning matters); a fifth quote an identifier from it (keywords).
//! Everything follows from the seed: the questions (and their answer
//! sessions' ids and dates) do not depend on the number of sessions.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::generate::{message_on, Rng, Topic};

/// The seed of the published run (and of the committed questions).
pub const SEED: u64 = 20_261_205;

/// The newest session's start; the history runs back `days` from here.
const NEWEST: &str = "2026-11-30T18:00:00Z";

/// Answer sessions of every fifth question begin in these last days.
pub const NEWEST_DAYS: f64 = 7.0;

/// The services the history talks about (and the questions ask about).
const SERVICES: &[&str] = &[
    "billing",
    "checkout",
    "inventory",
    "payments",
    "notifications",
    "search",
    "analytics",
    "onboarding",
    "shipping",
    "ledger",
    "catalog",
    "reporting",
    "scheduler",
    "gateway",
    "identity",
    "messaging",
    "pricing",
    "recommendations",
    "storefront",
    "telemetry",
];

const PEOPLE: &[&str] = &[
    "Priya",
    "Tomasz",
    "Aiko",
    "Mateo",
    "Fatima",
    "Lars",
    "Chen",
    "Oluwaseun",
    "Ingrid",
    "Rafael",
    "Noor",
    "Dmitri",
];

const PROJECTS: &[&str] = &[
    "shop-api",
    "web-frontend",
    "infra",
    "data-pipeline",
    "mobile-app",
    "platform",
    "admin-console",
    "etl-jobs",
    "docs-site",
    "auth-service",
    "warehouse",
    "ml-models",
];

/// One kind of episode: what the user says, what the assistant answers, and
/// the question that finds it. `{s}` is a service, `{S}` the same in
/// capitals, `{p}` a person, `{n}` a number, `{h}` a commit hash.
struct Template {
    user: &'static str,
    reply: &'static str,
    question: &'static str,
    keyword: bool,
}

const fn t(
    user: &'static str,
    reply: &'static str,
    question: &'static str,
    keyword: bool,
) -> Template {
    Template {
        user,
        reply,
        question,
        keyword,
    }
}

/// 20 episodes asked in other words, then 5 asked by an identifier they hold.
const TEMPLATES: &[Template] = &[
    t("the {s} pods keep getting OOM-killed in prod, bump the memory limit to {n}Mi in the helm values",
      "Raised resources.limits.memory for {s} to {n}Mi in values-prod.yaml and kept the request at half of it.",
      "how much RAM did we give the {s} containers after they crashed for running out of memory", false),
    t("we keep losing acked messages from the {s} queue whenever rabbit fails over, let's move it to NATS JetStream",
      "Moved the {s} consumers to JetStream with durable consumers and explicit ack; the RabbitMQ exchange is gone.",
      "which message broker replaced the old one for {s} after messages disappeared when a node went down", false),
    t("{p} from security asked us to rotate the {s} signing keys every {n} days instead of once a year",
      "Added a rotation job for the {s} keys on a {n}-day period and a runbook entry for {p}.",
      "how often must the {s} credentials be renewed, per the security team's request", false),
    t("the {s} nightly export is slow because postgres does a sequential scan, add a composite index on (tenant_id, created_at)",
      "Created the index concurrently in a migration; the {s} export plan now uses an index scan and finishes in minutes.",
      "what fixed the sluggish overnight {s} dump", false),
    t("the flaky {s} integration test was a timezone bug: CI runs in UTC but the fixture assumed America/Chicago",
      "Pinned the fixture to UTC and built the expected dates from the same clock, so the {s} test no longer depends on where it runs.",
      "why did the {s} end-to-end check fail intermittently on the build server", false),
    t("we're dropping python 3.8 for {s}; the minimum is now 3.11 because we import tomllib",
      "Set requires-python to >=3.11 in the {s} pyproject and removed the 3.8 to 3.10 jobs from the matrix.",
      "what's the oldest interpreter version the {s} package still supports", false),
    t("p99 on {s} jumped to {n} ms after the deploy; it's an N+1 in the new serializer loading each customer separately",
      "Added select_related for the customer in the {s} serializer: one query per page instead of one per row.",
      "what caused the {s} slowdown in tail response times after the release", false),
    t("{p} wants the {s} dashboard colours changed for colour-blind users, use the viridis palette",
      "Switched every {s} chart to viridis and added patterns to the stacked bars.",
      "which colour scheme did we pick for accessibility on the {s} graphs", false),
    t("the {s} cron ran twice on the night the clocks changed, move it to {n}:30 UTC",
      "The {s} schedule is now `30 {n} * * *` in UTC, which daylight saving never repeats.",
      "when does the {s} scheduled task run now after the clock change problem", false),
    t("the {s} docker image is 2.3GB, switch to a distroless base with a multi-stage build",
      "The {s} Dockerfile now builds in a golang stage and copies only the binary into gcr.io/distroless/static: 38 MB.",
      "how did we shrink the huge {s} container", false),
    t("free plan customers of {s} get rate limited at {n} requests per minute from now on",
      "Added a token bucket of {n} per minute keyed by account for the {s} free tier; paid plans are unchanged.",
      "what's the throttling threshold for non-paying {s} users", false),
    t("we store {s} passwords with bcrypt cost 10, move them to argon2id with 64MB of memory",
      "New {s} hashes use argon2id (m=65536, t=3, p=1); old bcrypt hashes are upgraded at the next successful login.",
      "which hashing algorithm did we adopt for {s} credentials", false),
    t("the {s} terraform state got locked after a cancelled apply and {p} force-unlocked it with the lock id",
      "Noted in the {s} runbook that {p} ran terraform force-unlock after checking that no apply was still running.",
      "who cleared the stuck infrastructure state for {s}", false),
    t("pagination on the {s} api skips rows when items are inserted, switch from offset to keyset cursors on id",
      "The {s} list endpoint now takes `after=<id>` and orders by id, so inserts no longer shift the pages.",
      "why were records missing between pages of {s} listings and what did we change", false),
    t("a migration ran DROP TABLE on the {s} staging database, restore it from the snapshot taken at {n}:00",
      "Restored {s} staging from the {n}:00 snapshot and made the migration runner refuse destructive statements there.",
      "which backup did we recover the {s} pre-production data from", false),
    t("{p} is the on-call owner for {s} alerts starting next sprint",
      "Updated the {s} escalation policy so pages go to {p} first from the next rotation.",
      "who gets paged when {s} breaks", false),
    t("the {s} websocket disconnects every 60 seconds because of the load balancer idle timeout, raise it to {n} seconds",
      "Set the idle timeout on the {s} load balancer to {n} s and added a ping frame every 30 s.",
      "why did {s} realtime connections keep dropping each minute", false),
    t("log the {s} errors as structured JSON and ship them to Loki instead of Elasticsearch, it costs too much",
      "The {s} logger writes JSON lines now and promtail ships them to Loki; the Elasticsearch index is scheduled for deletion.",
      "where do {s} logs go now that we abandoned the pricey search cluster", false),
    t("{s} feature flags are moving from env vars to LaunchDarkly so product can toggle them without a redeploy",
      "Wrapped the {s} flags in a LaunchDarkly client with the env vars as fallbacks.",
      "how can non-engineers switch {s} features on without shipping code", false),
    t("the {s} CSV import chokes on a BOM at the start of Excel files, strip \\ufeff before parsing",
      "The {s} importer now strips a leading byte order mark before handing the text to the CSV reader.",
      "why did spreadsheets exported from Microsoft fail to load into {s}", false),
    t("{s} crashes with error code DZ{n}Q when the upstream returns 429",
      "DZ{n}Q is raised when the retry budget of the {s} client runs out; it now backs off with jitter.",
      "error DZ{n}Q in {s}", true),
    t("rename reconcile_{s}_ledger_v{n} to settle_{s}_accounts everywhere",
      "Renamed reconcile_{s}_ledger_v{n} and its callers; the old name stays as a deprecated alias for one release.",
      "reconcile_{s}_ledger_v{n}", true),
    t("the {s} build broke on commit {h}, revert it",
      "Reverted {h} on main; the {s} build is green again.",
      "{s} commit {h}", true),
    t("set {S}_MAX_INFLIGHT={n} on the {s} workers",
      "Added {S}_MAX_INFLIGHT={n} to the {s} worker deployment env.",
      "{S}_MAX_INFLIGHT", true),
    t("ticket {S}-{n} is the regression in {s} totals after the currency change",
      "Linked {S}-{n} to the fix: totals in {s} were rounded before the currency conversion.",
      "{S}-{n} regression", true),
];

/// A question and where its answer is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// 0 to 99.
    pub id: usize,
    /// What is asked.
    pub question: String,
    /// `meaning` (other words than the episode's) or `keyword` (an identifier it holds).
    pub kind: String,
    /// The service the question is about.
    pub service: String,
    /// `claude` or `codex`: which harness's file holds the answer.
    pub harness: String,
    /// The answer session's id (the file's uuid).
    pub session: String,
    /// How long before the newest session the answer session began, in days.
    pub days_before_newest: f64,
    /// What the user said in the episode.
    pub planted: String,
    /// What the assistant answered.
    pub reply: String,
}

/// Counts of what was written.
#[derive(Debug, Default, Clone)]
pub struct Written {
    /// Sessions (one file each).
    pub sessions: usize,
    /// Messages the readers should find (user and assistant).
    pub messages: usize,
    /// Claude Code sessions.
    pub claude: usize,
    /// Messages of the Claude Code sessions.
    pub claude_messages: usize,
    /// Codex sessions.
    pub codex: usize,
    /// The answer sessions' files, by question id.
    pub answers: Vec<PathBuf>,
}

fn uuid(rng: &mut Rng) -> String {
    let a = rng.next();
    let b = rng.next();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        (a >> 32) as u32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | ((b >> 48) & 0x3fff),
        b & 0xffff_ffff_ffff
    )
}

fn fill(text: &str, service: &str, person: &str, n: usize, hash: &str) -> String {
    text.replace("{s}", service)
        .replace("{S}", &service.to_uppercase())
        .replace("{p}", person)
        .replace("{n}", &n.to_string())
        .replace("{h}", hash)
}

/// The 100 questions of `seed` over a history of `days` days.
pub fn questions(seed: u64, days: f64) -> Vec<Question> {
    let mut rng = Rng::new(seed ^ 0x9e37_79b9_7f4a_7c15);
    let per = 100 / TEMPLATES.len();
    (0..100)
        .map(|id| {
            let (template, round) = (id % TEMPLATES.len(), id / TEMPLATES.len() % per);
            let tp = &TEMPLATES[template];
            let service = SERVICES[(template * 3 + round * 5) % SERVICES.len()];
            let person = PEOPLE[rng.range(0, PEOPLE.len())];
            // Hours for the schedules, numbers elsewhere.
            let n = if tp.user.contains("{n}:") {
                rng.range(1, 6)
            } else if tp.user.contains("{n} days") {
                rng.range(30, 181)
            } else {
                rng.range(20, 5000)
            };
            let hash = format!("{:07x}", rng.next() & 0xfff_ffff);
            let harness = if rng.range(0, 5) < 3 {
                "claude"
            } else {
                "codex"
            };
            let session = uuid(&mut rng);
            let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
            // Every fifth answer begins in the newest days, the rest anywhere before.
            let days_before_newest = if id % 5 == 0 {
                0.05 + u * (NEWEST_DAYS - 0.1)
            } else {
                NEWEST_DAYS + u * (days - NEWEST_DAYS - 0.5).max(0.1)
            };
            Question {
                id,
                question: fill(tp.question, service, person, n, &hash),
                kind: if tp.keyword { "keyword" } else { "meaning" }.to_string(),
                service: service.to_string(),
                harness: harness.to_string(),
                session,
                days_before_newest: (days_before_newest * 1000.0).round() / 1000.0,
                planted: fill(tp.user, service, person, n, &hash),
                reply: fill(tp.reply, service, person, n, &hash),
            }
        })
        .collect()
}

/// The questions as JSON lines.
pub fn questions_jsonl(questions: &[Question]) -> Result<String> {
    let mut out = String::new();
    for q in questions {
        out.push_str(&serde_json::to_string(q)?);
        out.push('\n');
    }
    Ok(out)
}

/// One message to write: who, what, and a shell command run before it
/// (assistant messages only).
struct Turn {
    user: bool,
    text: String,
    command: Option<(String, String)>,
}

const COMMANDS: &[(&str, &str)] = &[
    ("cargo test --workspace", "test result: ok. 48 passed; 0 failed; 0 ignored"),
    ("git status --short", " M src/lib.rs\n?? notes.md"),
    ("npm run lint", "✔ No ESLint warnings or errors"),
    ("pytest -q", "........................ [100%]\n24 passed in 3.41s"),
    ("kubectl get pods -n staging", "NAME                     READY   STATUS    RESTARTS\napi-7d9f8b6c5d-x2k4q     1/1     Running   0"),
    ("go build ./...", ""),
    ("docker compose ps", "NAME   IMAGE   STATUS\ndb     postgres:16   Up 3 hours"),
    ("rg -n TODO src", "src/handler.rs:42: // TODO: retry on timeout"),
];

/// The turns of one session: `messages` messages on a topic about `service`,
/// with the episode (user, reply) in the middle when given.
fn turns(
    rng: &mut Rng,
    service: &'static str,
    messages: usize,
    episode: Option<(&str, &str)>,
) -> Vec<Turn> {
    let topic = Topic::new(rng).with(service);
    let pairs = messages.div_ceil(2).max(1);
    let at = episode.map(|_| rng.range(0, pairs));
    let mut out = Vec::new();
    for i in 0..pairs {
        let (user, reply) = match (at == Some(i), episode) {
            (true, Some((u, r))) => (u.to_string(), r.to_string()),
            _ => {
                let mut u = message_on(rng, &topic, true);
                if i == 0 {
                    u = format!("in {service}: {u}");
                }
                (u, message_on(rng, &topic, false))
            }
        };
        out.push(Turn {
            user: true,
            text: user,
            command: None,
        });
        let command = (rng.range(0, 3) == 0).then(|| {
            let (c, o) = COMMANDS[rng.range(0, COMMANDS.len())];
            (c.to_string(), o.to_string())
        });
        out.push(Turn {
            user: false,
            text: reply,
            command,
        });
    }
    out
}

fn stamp(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

fn lines(records: &[Value]) -> String {
    records.iter().fold(String::new(), |mut s, r| {
        let _ = writeln!(s, "{r}");
        s
    })
}

/// Writes one Claude Code session file; returns its path.
fn write_claude(
    home: &Path,
    rng: &mut Rng,
    id: &str,
    project: &str,
    start: chrono::DateTime<chrono::Utc>,
    turns: &[Turn],
) -> Result<PathBuf> {
    let cwd = format!("/home/dev/src/{project}");
    let encoded: String = cwd
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = home.join(".claude/projects").join(encoded);
    std::fs::create_dir_all(&dir)?;
    let mut t = start;
    let mut records = vec![json!({
        "type": "file-history-snapshot", "messageId": uuid(rng),
        "snapshot": {"messageId": uuid(rng), "trackedFileBackups": {}, "timestamp": stamp(t)},
        "isSnapshotUpdate": false
    })];
    let mut parent: Value = Value::Null;
    let common = |parent: &Value, uuid: &str, t: chrono::DateTime<chrono::Utc>| {
        json!({
            "parentUuid": parent, "isSidechain": false, "userType": "external",
            "cwd": cwd, "sessionId": id, "version": "2.1.81", "gitBranch": "main",
            "entrypoint": "cli", "uuid": uuid, "timestamp": stamp(t)
        })
    };
    for turn in turns {
        t += chrono::Duration::seconds(rng.range(4, 90) as i64);
        if turn.user {
            let u = uuid(rng);
            let mut r = common(&parent, &u, t);
            r["type"] = json!("user");
            r["message"] = json!({"role": "user", "content": turn.text});
            records.push(r);
            parent = json!(u);
            continue;
        }
        let message_id = format!("msg_01{:022x}", rng.next() as u128 * 7919);
        let request = format!("req_011C{:020x}", rng.next());
        let assistant = |content: Value, parent: &Value, u: &str, t| {
            let mut r = common(parent, u, t);
            r["type"] = json!("assistant");
            r["requestId"] = json!(request);
            r["message"] = json!({
                "model": "claude-sonnet-4-5-20250929", "id": message_id, "type": "message",
                "role": "assistant", "content": content, "stop_reason": null,
                "stop_sequence": null,
                "usage": {"input_tokens": 4, "cache_read_input_tokens": 21_000, "output_tokens": 180}
            });
            r
        };
        let u = uuid(rng);
        records.push(assistant(
            json!([{"type": "text", "text": turn.text}]),
            &parent,
            &u,
            t,
        ));
        parent = json!(u);
        if let Some((command, output)) = &turn.command {
            let tool = format!("toolu_01{:022x}", rng.next());
            let u = uuid(rng);
            records.push(assistant(
                json!([{"type": "tool_use", "id": tool, "name": "Bash",
                        "input": {"command": command, "description": "Run it"}}]),
                &parent,
                &u,
                t,
            ));
            parent = json!(u);
            t += chrono::Duration::seconds(rng.range(1, 20) as i64);
            let u = uuid(rng);
            let mut r = common(&parent, &u, t);
            r["type"] = json!("user");
            r["message"] = json!({"role": "user", "content": [
                {"tool_use_id": tool, "type": "tool_result", "content": output, "is_error": false}
            ]});
            r["toolUseResult"] = json!({"stdout": output, "stderr": "", "interrupted": false});
            records.push(r);
            parent = json!(u);
        }
    }
    let path = dir.join(format!("{id}.jsonl"));
    std::fs::write(&path, lines(&records))?;
    Ok(path)
}

/// Writes one Codex CLI rollout; returns its path.
fn write_codex(
    home: &Path,
    rng: &mut Rng,
    id: &str,
    project: &str,
    start: chrono::DateTime<chrono::Utc>,
    turns: &[Turn],
) -> Result<PathBuf> {
    let cwd = format!("/home/dev/src/{project}");
    let dir = home
        .join(".codex/sessions")
        .join(start.format("%Y/%m/%d").to_string());
    std::fs::create_dir_all(&dir)?;
    let mut t = start;
    let line = |t, kind: &str, payload: Value| json!({"timestamp": stamp(t), "type": kind, "payload": payload});
    let mut records = vec![
        line(
            t,
            "session_meta",
            json!({
                "id": id, "timestamp": stamp(t), "cwd": cwd, "originator": "codex_cli_rs",
                "cli_version": "0.118.0", "source": "cli", "model_provider": "openai",
                "base_instructions": {"text": "You are Codex, a coding agent based on GPT-5."},
                "git": {"commit_hash": format!("{:040x}", rng.next() as u128 * 0x1_0000_0001), "branch": "main"}
            }),
        ),
        line(
            t,
            "response_item",
            json!({"type": "message", "role": "developer", "content": [
                {"type": "input_text", "text": "<permissions instructions>\nsandbox_mode is workspace-write.\n</permissions instructions>"}
            ]}),
        ),
        line(
            t,
            "response_item",
            json!({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": format!("<environment_context>\n  <cwd>{cwd}</cwd>\n  <shell>bash</shell>\n</environment_context>")}
            ]}),
        ),
    ];
    for turn in turns {
        t += chrono::Duration::seconds(rng.range(4, 90) as i64);
        if turn.user {
            let turn_id = uuid(rng);
            records.push(line(t, "event_msg", json!({"type": "task_started", "turn_id": turn_id, "model_context_window": 258_400})));
            records.push(line(
                t,
                "turn_context",
                json!({
                    "turn_id": turn_id, "cwd": cwd, "approval_policy": "on-request",
                    "sandbox_policy": {"type": "workspace-write", "network_access": false},
                    "model": "gpt-5.1-codex", "summary": "auto"
                }),
            ));
            records.push(line(
                t,
                "response_item",
                json!({"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": turn.text}
                ]}),
            ));
            records.push(line(
                t,
                "event_msg",
                json!({"type": "user_message", "message": turn.text, "images": []}),
            ));
            continue;
        }
        records.push(line(
            t,
            "response_item",
            json!({"type": "reasoning", "summary": [], "content": null,
            "encrypted_content": "gAAAAABo"}),
        ));
        if let Some((command, output)) = &turn.command {
            let call = format!("call_{:024x}", rng.next() as u128 * 31);
            records.push(line(
                t,
                "response_item",
                json!({"type": "function_call", "name": "exec_command",
                "arguments": json!({"cmd": command, "workdir": cwd}).to_string(), "call_id": call}),
            ));
            t += chrono::Duration::seconds(rng.range(1, 20) as i64);
            records.push(line(
                t,
                "response_item",
                json!({"type": "function_call_output", "call_id": call,
                "output": format!("Process exited with code 0\nOutput:\n{output}")}),
            ));
        }
        records.push(line(
            t,
            "response_item",
            json!({"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": turn.text}
            ]}),
        ));
        records.push(line(
            t,
            "event_msg",
            json!({"type": "agent_message", "message": turn.text}),
        ));
        records.push(line(
            t,
            "event_msg",
            json!({"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 12_000, "output_tokens": 400}}}),
        ));
        records.push(line(
            t,
            "event_msg",
            json!({"type": "task_complete", "last_agent_message": turn.text}),
        ));
    }
    let name = format!("rollout-{}-{id}.jsonl", start.format("%Y-%m-%dT%H-%M-%S"));
    let path = dir.join(name);
    std::fs::write(&path, lines(&records))?;
    Ok(path)
}

/// Writes `sessions` sessions (the answer sessions of `questions` among
/// them) spread over `days` days ending at the newest, under `home`; the
/// ordinary sessions hold `min_messages..=max_messages` messages.
pub fn write(
    home: &Path,
    sessions: usize,
    days: f64,
    messages: (usize, usize),
    questions: &[Question],
    seed: u64,
) -> Result<Written> {
    let newest = chrono::DateTime::parse_from_rfc3339(NEWEST)?.to_utc();
    let span_ms = (days * 86_400_000.0) as i64;
    let mut rng = Rng::new(seed);
    let mut out = Written::default();
    let (lo, hi) = (messages.0.max(2), messages.1.max(messages.0.max(2)));
    for q in questions {
        let service = SERVICES
            .iter()
            .copied()
            .find(|s| *s == q.service)
            .unwrap_or(SERVICES[0]);
        let start =
            newest - chrono::Duration::milliseconds((q.days_before_newest * 86_400_000.0) as i64);
        let n = rng.range(lo, hi + 1);
        let turns = turns(&mut rng, service, n, Some((&q.planted, &q.reply)));
        let project = PROJECTS[rng.range(0, PROJECTS.len())];
        let path = if q.harness == "claude" {
            out.claude += 1;
            out.claude_messages += turns.len();
            write_claude(home, &mut rng, &q.session, project, start, &turns)?
        } else {
            out.codex += 1;
            write_codex(home, &mut rng, &q.session, project, start, &turns)?
        };
        out.messages += turns.len();
        out.sessions += 1;
        out.answers.push(path);
    }
    // The newest session begins at `newest`, the rest anywhere in the span.
    for i in 0..sessions.saturating_sub(questions.len()) {
        let back = if i == 0 {
            0
        } else {
            (rng.next() % span_ms.max(1) as u64) as i64
        };
        let start = newest - chrono::Duration::milliseconds(back);
        let service = SERVICES[rng.range(0, SERVICES.len())];
        let n = rng.range(lo, hi + 1);
        let turns = turns(&mut rng, service, n, None);
        let project = PROJECTS[rng.range(0, PROJECTS.len())];
        let id = uuid(&mut rng);
        if rng.range(0, 5) < 3 {
            out.claude += 1;
            out.claude_messages += turns.len();
            write_claude(home, &mut rng, &id, project, start, &turns)?;
        } else {
            out.codex += 1;
            write_codex(home, &mut rng, &id, project, start, &turns)?;
        }
        out.messages += turns.len();
        out.sessions += 1;
    }
    Ok(out)
}

/// The committed questions of the published run, beside this generator.
#[cfg(test)]
fn committed_questions_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("dayzero-questions.jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_questions_are_reproducible_and_committed() {
        let qs = questions(SEED, 180.0);
        assert_eq!(qs, questions(SEED, 180.0));
        assert_eq!(qs.len(), 100);
        let ids: std::collections::HashSet<_> = qs.iter().map(|q| &q.session).collect();
        assert_eq!(ids.len(), 100);
        let asked: std::collections::HashSet<_> = qs.iter().map(|q| &q.question).collect();
        assert_eq!(asked.len(), 100, "every question is different");
        assert_eq!(qs.iter().filter(|q| q.kind == "keyword").count(), 20);
        assert_eq!(
            qs.iter()
                .filter(|q| q.days_before_newest < NEWEST_DAYS)
                .count(),
            20
        );
        let committed = std::fs::read_to_string(committed_questions_path()).unwrap();
        assert_eq!(
            committed,
            questions_jsonl(&qs).unwrap(),
            "regenerate with `deja-bench dayzero --write-questions`"
        );
    }
}
