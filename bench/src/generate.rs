//! A generator of realistic transcripts for throughput runs: aider histories
//! with several sessions per file and Gemini CLI JSONL/JSON recordings, half
//! the messages each, with varied lengths, code blocks and identifiers.
//! Deterministic for a given size.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use serde_json::json;

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

const WORDS: &[&str] = &[
    "the",
    "query",
    "tenant",
    "handler",
    "request",
    "returns",
    "error",
    "when",
    "cache",
    "expires",
    "before",
    "retry",
    "the",
    "service",
    "config",
    "loads",
    "from",
    "environment",
    "and",
    "fails",
    "test",
    "flaky",
    "because",
    "timeout",
    "database",
    "migration",
    "adds",
    "column",
    "index",
    "slow",
    "scan",
    "table",
    "join",
    "missing",
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
    "state",
    "lock",
    "module",
    "variable",
    "output",
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
    "type",
    "struct",
    "enum",
    "trait",
    "interface",
    "function",
    "method",
    "closure",
    "async",
    "await",
    "thread",
    "mutex",
    "channel",
    "buffer",
    "stream",
    "file",
    "path",
    "directory",
    "permission",
    "socket",
    "port",
    "we",
    "should",
    "could",
    "need",
    "to",
    "check",
    "whether",
    "this",
    "is",
    "because",
    "so",
    "then",
    "also",
    "instead",
    "only",
    "every",
    "after",
    "fix",
    "change",
    "update",
    "remove",
    "add",
    "rename",
    "move",
    "split",
    "merge",
    "refactor",
    "simplify",
    "document",
    "explain",
];

const CODE: &[&str] = &[
    "fn load(path: &Path) -> Result<Config> {",
    "    let text = std::fs::read_to_string(path)?;",
    "    toml::from_str(&text).map_err(Error::from)",
    "}",
    "SELECT id, total FROM invoices WHERE tenant_id = $1 ORDER BY created_at DESC;",
    "const series = useMemo(() => build(points), [points]);",
    "if err != nil { return fmt.Errorf(\"load: %w\", err) }",
    "for item in items.iter().filter(|i| i.active) {",
    "    total += item.amount;",
    "resource \"aws_dynamodb_table\" \"lock\" { name = \"tf-lock\" }",
    "docker build --target runtime -t app:latest .",
    "def retry(fn, attempts=3):",
    "    for i in range(attempts):",
];

fn sentence(rng: &mut Rng, words: usize) -> String {
    let mut s = String::new();
    for i in 0..words {
        if i > 0 {
            s.push(' ');
        }
        if rng.range(0, 40) == 0 {
            // A unique-looking identifier now and then.
            let _ = write!(
                s,
                "{}_{}{}",
                rng.pick(WORDS),
                rng.pick(WORDS),
                rng.range(0, 1000)
            );
        } else {
            s.push_str(rng.pick(WORDS));
        }
    }
    s.push('.');
    s
}

/// A message body: users write a sentence or two, assistants paragraphs and
/// sometimes code.
pub fn message(rng: &mut Rng, user: bool) -> String {
    if user {
        let n = rng.range(5, 60);
        return sentence(rng, n);
    }
    let mut text = String::new();
    for p in 0..rng.range(1, 5) {
        if p > 0 {
            text.push_str("\n\n");
        }
        let n = rng.range(10, 120);
        text.push_str(&sentence(rng, n));
        if rng.range(0, 3) == 0 {
            text.push_str("\n\n```\n");
            for _ in 0..rng.range(2, 10) {
                text.push_str(rng.pick(CODE));
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
        minute += rng.range(5, 600) as i64;
        let f = &mut aider_files[p];
        let _ = write!(
            f,
            "\n# aider chat started at {}\n\n",
            t.format("%Y-%m-%d %H:%M:%S")
        );
        f.push_str("> aider --model sonnet  \n> Aider v0.86.2  \n> Main model: sonnet with diff edit format  \n\n");
        for _ in 0..rng.range(2, 20) {
            let q = message(&mut rng, true);
            let _ = write!(f, "#### {q}  \n\n");
            let a = message(&mut rng, false);
            let _ = write!(f, "{a}\n\n");
            if rng.range(0, 4) == 0 {
                let _ = write!(f, "> Applied edit to src/{}.rs  \n\n", rng.pick(WORDS));
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
        minute += rng.range(5, 600) as i64;
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
        for i in 0..rng.range(2, 20) {
            let user = i % 2 == 0;
            let text = message(&mut rng, user);
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

/// Appends one new session to the first aider history under `home`.
pub fn append_session(home: &Path, seed: u64) -> Result<()> {
    let mut rng = Rng::new(seed);
    let path = home.join("work/project-00/.aider.chat.history.md");
    let mut text = std::fs::read_to_string(&path)?;
    text.push_str("\n# aider chat started at 2030-01-01 09:00:00\n\n");
    for _ in 0..3 {
        let _ = write!(
            text,
            "#### {}  \n\n{}\n\n",
            message(&mut rng, true),
            message(&mut rng, false)
        );
    }
    std::fs::write(path, text)?;
    Ok(())
}
