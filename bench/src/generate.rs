//! A generator of realistic transcripts for throughput runs: aider histories
//! with several sessions per file and Gemini CLI JSONL/JSON recordings, half
//! the messages each, with varied lengths, code blocks and identifiers. Words
//! follow natural frequencies: everyday words by Zipf's law, and each session
//! keeps to a topic of a few technical words out of several hundred, so a
//! technical word appears in a few percent of the messages, as in a real
//! history, not in every other one. Deterministic for a given size.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use serde_json::json;

/// An error line the generated corpus holds (its Go snippets).
pub const CORPUS_ERROR: &str =
    "exit status 1\nerror: if err != nil { return fmt.Errorf(\"load config: %w\", err) }";

/// A small deterministic PRNG (xorshift64*).
pub struct Rng(u64);

impl Rng {
    /// Seeded generator.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// Next value.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `lo..hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo).max(1) as u64) as usize
    }

    /// A random element.
    pub fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
        items[self.range(0, items.len())]
    }
}

/// Everyday words of developer talk, most frequent first (drawn with Zipf weights).
const GENERAL: &[&str] = &[
    "the", "to", "and", "a", "of", "is", "in", "it", "that", "this", "we", "for", "you", "on",
    "be", "with", "should", "not", "can", "so", "but", "if", "then", "now", "also", "need", "use",
    "add", "fix", "change", "check", "make", "run", "see", "when", "from", "instead", "only",
    "after", "before", "because", "just", "still", "again", "every", "new", "same", "other",
    "first", "last", "all", "some", "way", "case", "here", "there", "works", "fails", "missing",
    "returns", "calls", "looks", "seems", "happens", "wrong", "right", "better", "simple", "small",
    "large", "slow", "fast", "update", "remove", "rename", "move", "split", "merge", "refactor",
    "simplify", "document", "explain", "bug", "issue", "problem", "error", "value", "result",
    "code", "line", "file", "test", "function", "call", "version", "step", "part", "thing", "time",
    "place", "order", "list", "name", "type", "data", "output", "input",
];

/// Technical words; each session is about a handful of them (its topic).
const DOMAIN: &[&str] = &[
    "query",
    "tenant",
    "handler",
    "request",
    "response",
    "cache",
    "expires",
    "retry",
    "service",
    "config",
    "loads",
    "environment",
    "flaky",
    "timeout",
    "database",
    "migration",
    "column",
    "index",
    "scan",
    "table",
    "join",
    "predicate",
    "invoice",
    "customer",
    "report",
    "dashboard",
    "chart",
    "render",
    "memo",
    "state",
    "hook",
    "component",
    "props",
    "effect",
    "docker",
    "image",
    "build",
    "stage",
    "layer",
    "terraform",
    "lock",
    "module",
    "variable",
    "pipeline",
    "deploy",
    "staging",
    "production",
    "rollback",
    "log",
    "metric",
    "alert",
    "latency",
    "p99",
    "queue",
    "worker",
    "batch",
    "job",
    "schedule",
    "cron",
    "token",
    "session",
    "cookie",
    "auth",
    "login",
    "password",
    "hash",
    "salt",
    "user",
    "role",
    "permission",
    "api",
    "endpoint",
    "pagination",
    "cursor",
    "offset",
    "limit",
    "sort",
    "filter",
    "parser",
    "format",
    "json",
    "yaml",
    "schema",
    "validate",
    "field",
    "struct",
    "enum",
    "trait",
    "interface",
    "method",
    "closure",
    "async",
    "await",
    "thread",
    "mutex",
    "channel",
    "buffer",
    "stream",
    "directory",
    "socket",
    "port",
    "webhook",
    "payload",
    "signature",
    "stripe",
    "refund",
    "subscription",
    "plan",
    "billing",
    "currency",
    "rounding",
    "decimal",
    "locale",
    "timezone",
    "calendar",
    "invite",
    "email",
    "template",
    "smtp",
    "bounce",
    "unsubscribe",
    "newsletter",
    "upload",
    "bucket",
    "s3",
    "presigned",
    "thumbnail",
    "resize",
    "codec",
    "video",
    "transcode",
    "playlist",
    "subtitle",
    "search",
    "ranking",
    "embedding",
    "vector",
    "tokenizer",
    "stemming",
    "synonym",
    "typo",
    "autocomplete",
    "suggestion",
    "graphql",
    "resolver",
    "mutation",
    "fragment",
    "apollo",
    "relay",
    "websocket",
    "reconnect",
    "heartbeat",
    "backoff",
    "jitter",
    "circuit",
    "breaker",
    "bulkhead",
    "sidecar",
    "envoy",
    "ingress",
    "egress",
    "certificate",
    "tls",
    "renewal",
    "acme",
    "dns",
    "record",
    "cname",
    "ttl",
    "propagation",
    "cdn",
    "purge",
    "edge",
    "origin",
    "shield",
    "kubernetes",
    "pod",
    "deployment",
    "replica",
    "autoscaler",
    "helm",
    "namespace",
    "secret",
    "configmap",
    "volume",
    "persistent",
    "claim",
    "snapshot",
    "backup",
    "restore",
    "wal",
    "vacuum",
    "autovacuum",
    "bloat",
    "deadlock",
    "isolation",
    "serializable",
    "transaction",
    "savepoint",
    "trigger",
    "sequence",
    "uuid",
    "ulid",
    "snowflake",
    "shard",
    "partition",
    "leader",
    "follower",
    "raft",
    "consensus",
    "election",
    "quorum",
    "gossip",
    "membership",
    "kafka",
    "consumer",
    "producer",
    "lag",
    "rebalance",
    "topic",
    "retention",
    "compaction",
    "avro",
    "protobuf",
    "grpc",
    "stub",
    "codegen",
    "linter",
    "formatter",
    "prettier",
    "eslint",
    "clippy",
    "rustfmt",
    "mypy",
    "pytest",
    "fixture",
    "mock",
    "spy",
    "coverage",
    "benchmark",
    "profiler",
    "flamegraph",
    "allocation",
    "leak",
    "heap",
    "stack",
    "overflow",
    "recursion",
    "iterator",
    "generator",
    "coroutine",
    "promise",
    "future",
    "executor",
    "runtime",
    "tokio",
    "actor",
    "supervisor",
    "mailbox",
    "scheduler",
    "quota",
    "throttle",
    "ratelimit",
    "captcha",
    "spam",
    "abuse",
    "moderation",
    "flag",
    "audit",
    "compliance",
    "gdpr",
    "anonymize",
    "encryption",
    "kms",
    "rotation",
    "keychain",
    "oauth",
    "oidc",
    "saml",
    "sso",
    "scim",
    "provisioning",
    "tenancy",
    "workspace",
    "org",
    "seat",
    "license",
    "trial",
    "onboarding",
    "wizard",
    "tooltip",
    "modal",
    "drawer",
    "sidebar",
    "navbar",
    "breadcrumb",
    "accessibility",
    "aria",
    "contrast",
    "keyboard",
    "focus",
    "screenreader",
    "i18n",
    "translation",
    "plural",
    "rtl",
    "font",
    "icon",
    "svg",
    "canvas",
    "webgl",
    "shader",
    "texture",
    "sprite",
    "animation",
    "easing",
    "transition",
    "layout",
    "flexbox",
    "grid",
    "viewport",
    "responsive",
    "breakpoint",
    "hydration",
    "ssr",
    "prefetch",
    "bundle",
    "chunk",
    "treeshaking",
    "minify",
    "sourcemap",
    "monorepo",
    "lockfile",
    "semver",
    "changelog",
    "release",
    "tag",
    "hotfix",
    "cherry",
    "bisect",
    "rebase",
    "squash",
];

/// Words of one topic.
const TOPIC_WORDS: usize = 8;

/// Code lines; `{a}`, `{b}` and `{A}` become the session's topic words (`{A}`
/// capitalized), so code carries its project's names as real code does.
const CODE: &[&str] = &[
    "fn load_{a}(path: &Path) -> Result<{A}> {",
    "    let text = std::fs::read_to_string(path)?;",
    "    toml::from_str(&text).map_err(Error::from)",
    "}",
    "SELECT id, {a} FROM {b}s WHERE {a}_id = $1 ORDER BY created_at DESC;",
    "const {a} = useMemo(() => build_{b}(points), [points]);",
    "if err != nil { return fmt.Errorf(\"{a}: %w\", err) }",
    "for item in {a}s.iter().filter(|i| i.{b}) {",
    "    total += item.{a};",
    "resource \"aws_{a}\" \"{b}\" { name = \"{a}-{b}\" }",
    "class {A}{B}:",
    "def {a}_{b}(self, attempts=3):",
    "    for i in range(attempts):",
    "        return self.{a}.{b}()",
    "export function use{A}({b}: {B}) {",
    "  const [{a}, set{A}] = useState(null);",
    "#[derive(Debug, Clone)]",
    "pub struct {A}{B} { {a}: String, {b}: u64 }",
];

/// A code line with the topic's words filled in.
fn code_line(rng: &mut Rng, topic: &Topic) -> String {
    let (a, b) = (topic.word(rng), topic.word(rng));
    let cap = |w: &str| {
        let mut c = w.chars();
        c.next()
            .map(|f| f.to_uppercase().chain(c).collect::<String>())
            .unwrap_or_default()
    };
    rng.pick(CODE)
        .replace("{a}", a)
        .replace("{b}", b)
        .replace("{A}", &cap(a))
        .replace("{B}", &cap(b))
}

/// What a session is about: a few technical words it keeps coming back to.
#[derive(Debug, Clone)]
pub struct Topic(Vec<&'static str>);

impl Topic {
    /// A random topic.
    pub fn new(rng: &mut Rng) -> Topic {
        Topic((0..TOPIC_WORDS).map(|_| rng.pick(DOMAIN)).collect())
    }

    /// This topic, with `word` among its words too.
    pub fn with(mut self, word: &'static str) -> Topic {
        self.0.push(word);
        self
    }

    fn word(&self, rng: &mut Rng) -> &'static str {
        self.0[rng.range(0, self.0.len())]
    }
}

/// An everyday word, frequent ones far more often (log-uniform rank, i.e.
/// Zipf's law).
fn general(rng: &mut Rng) -> &'static str {
    let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    let rank = ((GENERAL.len() + 1) as f64).powf(u) as usize;
    GENERAL[rank.saturating_sub(1).min(GENERAL.len() - 1)]
}

fn sentence(rng: &mut Rng, topic: &Topic, words: usize) -> String {
    let mut s = String::new();
    for i in 0..words {
        if i > 0 {
            s.push(' ');
        }
        match rng.range(0, 40) {
            // A unique-looking identifier now and then.
            0 => {
                let _ = write!(
                    s,
                    "{}_{}{}",
                    topic.word(rng),
                    topic.word(rng),
                    rng.range(0, 1000)
                );
            }
            // Another technical word in passing.
            1 => s.push_str(rng.pick(DOMAIN)),
            2..=13 => s.push_str(topic.word(rng)),
            _ => s.push_str(general(rng)),
        }
    }
    s.push('.');
    s
}

/// A message body on a random topic.
pub fn message(rng: &mut Rng, user: bool) -> String {
    let topic = Topic::new(rng);
    message_on(rng, &topic, user)
}

/// A message body about `topic`: users write a sentence or two, assistants
/// paragraphs and sometimes code.
pub fn message_on(rng: &mut Rng, topic: &Topic, user: bool) -> String {
    if user {
        let n = rng.range(5, 60);
        return sentence(rng, topic, n);
    }
    let mut text = String::new();
    for p in 0..rng.range(1, 5) {
        if p > 0 {
            text.push_str("\n\n");
        }
        let n = rng.range(10, 120);
        text.push_str(&sentence(rng, topic, n));
        if rng.range(0, 3) == 0 {
            text.push_str("\n\n```\n");
            for _ in 0..rng.range(2, 10) {
                text.push_str(&code_line(rng, topic));
                text.push('\n');
            }
            text.push_str("```");
        }
    }
    text
}

/// Counts of what was written.
#[derive(Debug, Default, Clone, Copy)]
pub struct Generated {
    /// Messages.
    pub messages: usize,
    /// Sessions.
    pub sessions: usize,
    /// Files.
    pub files: usize,
}

/// Writes about `messages` messages of transcripts under `home`, and the
/// aider-projects list that lets deja find the aider histories.
pub fn corpus(home: &Path, messages: usize, seed: u64) -> Result<Generated> {
    corpus_spanning(home, messages, seed, None)
}

/// [`corpus`], its sessions spread over about `days` days when given (else
/// 5 to 600 minutes apart, about four years at 100k messages): a session
/// starts every `span / sessions` minutes on average, for the same texts.
pub fn corpus_spanning(
    home: &Path,
    messages: usize,
    seed: u64,
    days: Option<f64>,
) -> Result<Generated> {
    // Sessions average 20 aider or 10 Gemini CLI messages, half the messages
    // each: 0.075 sessions per message, 302.5 minutes apart by default.
    let scale = days.map_or(1.0, |d| d * 1440.0 / (messages as f64 * 0.075 * 302.5));
    let gap = |m: usize| ((m as f64 * scale).round() as i64).max(1);
    let mut rng = Rng::new(seed);
    let mut out = Generated::default();
    let projects = (messages / 2000).clamp(2, 50);
    let mut listed = String::new();
    let mut minute: i64 = 0;
    let start = chrono::DateTime::parse_from_rfc3339("2025-01-01T08:00:00Z")?.to_utc();
    // aider: about half the messages.
    let mut aider_files: Vec<String> = (0..projects).map(|_| String::new()).collect();
    while out.messages < messages / 2 {
        let p = rng.range(0, projects);
        let t = start + chrono::Duration::minutes(minute);
        minute += gap(rng.range(5, 600));
        let f = &mut aider_files[p];
        let _ = write!(
            f,
            "\n# aider chat started at {}\n\n",
            t.format("%Y-%m-%d %H:%M:%S")
        );
        f.push_str("> aider --model sonnet  \n> Aider v0.86.2  \n> Main model: sonnet with diff edit format  \n\n");
        let topic = Topic::new(&mut rng);
        for _ in 0..rng.range(2, 20) {
            let q = message_on(&mut rng, &topic, true);
            let _ = write!(f, "#### {q}  \n\n");
            let a = message_on(&mut rng, &topic, false);
            let _ = write!(f, "{a}\n\n");
            if rng.range(0, 4) == 0 {
                let _ = write!(f, "> Applied edit to src/{}.rs  \n\n", topic.word(&mut rng));
            }
            let _ = write!(f, "> Tokens: 1.2k sent, 300 received.  \n\n");
            out.messages += 2;
        }
        out.sessions += 1;
    }
    for (p, text) in aider_files.iter().enumerate() {
        if text.is_empty() {
            continue;
        }
        let dir = home.join(format!("work/project-{p:02}"));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(".aider.chat.history.md"), text)?;
        let _ = writeln!(listed, "{}", dir.display());
        out.files += 1;
    }
    std::fs::create_dir_all(home.join(".config/deja"))?;
    std::fs::write(home.join(".config/deja/aider-projects"), listed)?;

    // Gemini: the other half, one file per session.
    let mut n = 0u64;
    while out.messages < messages {
        let p = rng.range(0, projects);
        let chats = home.join(format!(".gemini/tmp/project-{p:02}/chats"));
        std::fs::create_dir_all(&chats)?;
        let t = start + chrono::Duration::minutes(minute);
        minute += gap(rng.range(5, 600));
        n += 1;
        let id = format!(
            "{:08x}-{:04x}-4000-8000-{:012x}",
            rng.next() as u32,
            n & 0xffff,
            n
        );
        let stamp = t.format("%Y-%m-%dT%H:%M:%S.000Z").to_string();
        let mut records = vec![json!({
            "sessionId": id, "projectHash": format!("{:064x}", p), "startTime": stamp,
            "lastUpdated": stamp, "kind": "main"
        })];
        let topic = Topic::new(&mut rng);
        for i in 0..rng.range(2, 20) {
            let user = i % 2 == 0;
            let text = message_on(&mut rng, &topic, user);
            let content = if user {
                json!([{ "text": text }])
            } else {
                json!(text)
            };
            records.push(json!({
                "id": format!("{id}-{i}"), "timestamp": stamp,
                "type": if user { "user" } else { "gemini" }, "content": content
            }));
            records.push(json!({"$set": {"lastUpdated": stamp}}));
            out.messages += 1;
        }
        let name = format!("session-{}-{}.jsonl", t.format("%Y-%m-%dT%H-%M"), &id[..8]);
        let body: String = records.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(chats.join(name), body)?;
        out.sessions += 1;
        out.files += 1;
    }
    Ok(out)
}

/// Appends one long session of `turns` exchanges (two messages each) to
/// the first aider history under `home`, dated after every generated one:
/// a session as long as the longest real ones, for the page that shows it.
pub fn append_long_session(home: &Path, turns: usize, seed: u64) -> Result<()> {
    append_aider_session(home, "2031-06-01 09:00:00", turns, seed)
}

/// Appends one new session to the first aider history under `home`.
pub fn append_session(home: &Path, seed: u64) -> Result<()> {
    append_aider_session(home, "2030-01-01 09:00:00", 3, seed)
}

/// Appends a session started at `started` of `turns` exchanges on one topic
/// to the first aider history under `home`.
fn append_aider_session(home: &Path, started: &str, turns: usize, seed: u64) -> Result<()> {
    let mut rng = Rng::new(seed);
    let path = home.join("work/project-00/.aider.chat.history.md");
    let mut text = std::fs::read_to_string(&path)?;
    let _ = write!(text, "\n# aider chat started at {started}\n\n");
    let topic = Topic::new(&mut rng);
    for _ in 0..turns {
        let _ = write!(
            text,
            "#### {}  \n\n{}\n\n",
            message_on(&mut rng, &topic, true),
            message_on(&mut rng, &topic, false)
        );
    }
    std::fs::write(path, text)?;
    Ok(())
}
