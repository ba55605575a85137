//! Crash, concurrency and secret-redaction tests: `kill -9` at random points
//! (embedding included), recall while an index runs and two index runs at
//! once (held mid-run by a test reader, not timed by sleeps),
//! and fake secrets that must reach neither the store nor any output.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{gemini_session, install_plugin, lib_name, test_plugins, Sandbox};

fn corpus(sb: &mut Sandbox, sessions: u32, messages: usize) {
    let gemini = sb.home.join(".gemini");
    for i in 0..sessions {
        let id = format!("{i:08x}-1111-4222-8333-444455556666");
        let topic = [
            "cache eviction",
            "tenant scoping",
            "retry backoff",
            "log rotation",
            "schema migration",
        ][i as usize % 5];
        gemini_session(
            &gemini,
            &format!("p{}", i % 4),
            &id,
            i % 60,
            messages,
            topic,
        );
    }
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
}

fn doctor_vectors(sb: &Sandbox) -> serde_json::Value {
    let d = sb.run(&["doctor", "--json"]).json();
    d["store"].clone()
}

#[test]
fn killed_at_random_points_with_embeddings_the_next_index_completes() {
    let mut sb = Sandbox::new();
    sb.config_with_model("");
    corpus(&mut sb, 24, 8);
    let mut rng = 0x2545f4914f6cdd1du64;
    let mut killed = 0;
    for _ in 0..6 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let delay = 150 + rng % 3000;
        let mut child = sb
            .command()
            .arg("index")
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            killed += 1;
            child.wait().unwrap();
        } else if killed == 0 {
            // Faster than the delay: start over, so that a later run has
            // work to be killed in (whatever the machine's speed).
            std::fs::remove_dir_all(sb.data_dir()).unwrap();
        }
    }
    assert!(killed > 0, "no run was killed mid-way");
    let out = sb.ok(&["index"]);
    let store = doctor_vectors(&sb);
    assert_eq!(
        store["vectors"]["in_sync"], true,
        "{store:#}\n{}",
        out.stderr
    );
    assert_eq!(
        store["vectors"]["count"], store["embedding_units"],
        "{store:#}"
    );

    let mut clean = Sandbox::new();
    clean.config_with_model("");
    corpus(&mut clean, 24, 8);
    clean.ok(&["index"]);
    let expected = clean
        .dump()
        .replace(clean.home.to_str().unwrap(), sb.home.to_str().unwrap());
    assert_eq!(
        sb.dump(),
        expected,
        "the store after kills differs from a clean index"
    );
    // And semantic recall answers from it.
    let v = sb
        .ok(&[
            "recall",
            "--mode",
            "semantic",
            "--json",
            "evicting entries from a cache",
        ])
        .json();
    assert_eq!(v["mode"], "semantic");
    assert!(
        v["hits"][0]["text"]
            .as_str()
            .unwrap()
            .contains("cache eviction"),
        "{v:#}"
    );
}

/// Installs the test reader that blocks mid-index (see
/// `tests/plugins/gated`) and returns the config section that enables it.
fn gated(sb: &Sandbox) -> String {
    install_plugin(
        &test_plugins().join(lib_name("deja_plugin_test_gated")),
        &sb.plugin_dir(),
    );
    std::fs::create_dir_all(sb.home.join("gated")).unwrap();
    "[harness.gated]\nroots = [\"~/gated\"]\n".into()
}

/// Writes a gated transcript that holds the index run parsing it until
/// [`release`]; returns its path.
fn hold(sb: &Sandbox, text: &str) -> std::path::PathBuf {
    sb.write("gated/wait.gated", text)
}

/// Waits (bounded) until the run reading `held` is inside the reader.
fn wait_until_reached(held: &Path) {
    let reached = held.with_extension("gated.reached");
    let started = Instant::now();
    while !reached.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the index run never reached the gated transcript"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Lets the run reading `held` go on.
fn release(held: &Path) {
    std::fs::write(held.with_extension("gated.go"), b"").unwrap();
}

/// Whether another process holds the writer lock, seen through the file system.
fn writer_lock_held(sb: &Sandbox) -> bool {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(sb.data_dir().join("index.lock"))
        .unwrap();
    match file.try_lock() {
        Ok(()) => false,
        Err(std::fs::TryLockError::WouldBlock) => true,
        Err(std::fs::TryLockError::Error(e)) => panic!("{e}"),
    }
}

#[test]
fn recall_works_while_an_index_runs() {
    let mut sb = Sandbox::new();
    let section = gated(&sb);
    sb.config_with_model(&section);
    corpus(&mut sb, 10, 4);
    sb.ok(&["index"]);
    // More to index, and a transcript that holds the run until released.
    let gemini = sb.home.join(".gemini");
    for i in 100..110u32 {
        gemini_session(
            &gemini,
            "late",
            &format!("{i:08x}-1111-4222-8333-444455556666"),
            i % 60,
            4,
            "retry backoff",
        );
    }
    let held = hold(&sb, "a held transcript about retry backoff\n");
    let mut child = sb
        .command()
        .arg("index")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until_reached(&held);
    assert!(
        writer_lock_held(&sb),
        "the index run does not hold the lock"
    );
    for mode in ["lexical", "hybrid"] {
        let out = sb.run(&["recall", "--mode", mode, "--json", "tenant scoping"]);
        assert_eq!(
            out.code, 0,
            "recall failed during an index run: {}",
            out.stderr
        );
        let v = out.json();
        assert!(!v["hits"].as_array().unwrap().is_empty(), "{v:#}");
    }
    let out = sb.run(&["sessions", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(writer_lock_held(&sb), "the run ended before the reads");
    release(&held);
    assert!(child.wait().unwrap().success());
    let v = sb
        .ok(&["recall", "--json", "-n", "3", "retry backoff"])
        .json();
    assert_eq!(v["mode"], "hybrid");
    assert!(!v["hits"].as_array().unwrap().is_empty(), "{v:#}");
}

#[test]
fn two_index_runs_at_once_take_turns() {
    use std::io::BufRead;
    let build = |sb: &mut Sandbox| {
        let section = gated(sb);
        sb.config(&format!("[embed]\nenabled = false\n{section}"));
        corpus(sb, 30, 5);
        hold(sb, "held while another run waits\n")
    };
    let mut sb = Sandbox::new();
    let held = build(&mut sb);
    let a = sb
        .command()
        .arg("index")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_reached(&held);
    // The first run is inside the reader, holding the lock: the second waits.
    let mut b = sb
        .command()
        .arg("index")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut b_err = std::io::BufReader::new(b.stderr.take().unwrap());
    let mut told = String::new();
    while !told.contains("waiting for it to finish") {
        let mut line = String::new();
        assert!(
            b_err.read_line(&mut line).unwrap() > 0,
            "the second run ended without waiting: {told}"
        );
        told.push_str(&line);
    }
    assert!(
        b.try_wait().unwrap().is_none(),
        "the second run did not wait"
    );
    release(&held);
    let a = a.wait_with_output().unwrap();
    let b_status = b.wait().unwrap();
    assert!(
        a.status.success() && b_status.success(),
        "{}",
        String::from_utf8_lossy(&a.stderr)
    );

    let mut clean = Sandbox::new();
    let clean_held = build(&mut clean);
    release(&clean_held);
    clean.ok(&["index"]);
    let expected = clean
        .dump()
        .replace(clean.home.to_str().unwrap(), sb.home.to_str().unwrap());
    assert_eq!(sb.dump(), expected);
}

/// Fake secrets (shaped like real ones, valid for nothing).
const SECRETS: &[(&str, &str)] = &[
    ("sk-proj-FAKEfakeFAKEfake0123456789abcd", "openai-key"),
    ("sk-ant-api03-FAKEfakeFAKEfake0123456789", "anthropic-key"),
    ("AKIAFAKEFAKEFAKE1234", "aws-access-key"),
    ("ghp_FAKEfakeFAKEfakeFAKEfakeFAKEfake1234", "github-token"),
    (
        "github_pat_11FAKEFAKE0123456789_fakefakefakefake",
        "github-token",
    ),
    ("xoxb-000000000000-FAKEfakeFAKE", "slack-token"),
    ("AIzaFAKEfakeFAKEfakeFAKEfakeFAKEfake123", "google-api-key"),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlLXVzZXIifQ.ZmFrZS1zaWduYXR1cmUtZmFrZQ",
        "jwt",
    ),
    ("hunter2-fake-db-pass", "url-password"),
    ("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "private-key"),
    ("deepseekFAKE0123456789", "api-key"),
    ("FAKEbearer0123456789token", "bearer-token"),
    ("FAKEawsSecret0123456789/fakeFAKEfake+KEY", "aws-secret-key"),
    ("FAKE-dsn-pass-4711", "password"),
    ("sk_live_FAKEfakeFAKEfake01234567", "stripe-key"),
    ("rk_live_FAKEfakeFAKEfake76543210", "stripe-key"),
    ("sk_test_FAKEfakeFAKEfake01234567", "stripe-key"),
    ("glpat-FAKEfakeFAKEfake012345", "gitlab-token"),
    ("hf_FAKEfakeFAKEfakeFAKEfakeFAKEfake12", "huggingface-token"),
    ("npm_FAKEfakeFAKEfakeFAKEfakeFAKEfake1234", "npm-token"),
    (
        "pypi-AgEIcHlwaS5vcmcFAKEfakeFAKEfakeFAKEfakeFAKEfake0123",
        "pypi-token",
    ),
    ("FAKEenvApiKey0123", "secret-assignment"),
    ("FAKEenvSecret4567", "secret-assignment"),
    ("FAKEenvToken89ab", "secret-assignment"),
    ("FAKEjsonApiKey0123456", "quoted-secret"),
    ("FAKEjsonPassw0rd99", "quoted-secret"),
];

/// Ordinary text that shares words or prefixes with secrets: it must be
/// stored as written.
const NOT_SECRETS: &[&str] = &[
    "hf_hub_download",
    "TOKEN_LIMIT=4096",
    "the token is refreshed before it expires",
];

fn seeded(sb: &Sandbox) {
    let history = format!(
        "
# aider chat started at 2026-07-17 09:00:00

> aider --model deepseek --api-key deepseek={api}  
> Aider v0.86.2  

#### my key is {openai} and the anthropic one {anthropic}; why does auth fail?  
#### I started it with aider --api-key deepseek={api} as the docs say  

Do not paste keys. The AWS key {aws} and token {ghp} should be rotated.

#### /run curl -H \"Authorization: Bearer {bearer}\" https://api.example.org  

#### connect to postgres://app:{pw}@db.internal:5432/billing  

#### my .env has aws_secret_access_key = {aws_secret} and DB_PASSWORD={db_password}  

Your DSN holds a password; use a secret manager. Slack {slack}, Google {google}.

```
-----BEGIN OPENSSH PRIVATE KEY-----
{pem}
-----END OPENSSH PRIVATE KEY-----
```

#### charge with {stripe_live} or {stripe_rk}, test with {stripe_test}; clone with {glpat}  

#### hf login {hf}, npm token {npm}, upload with {pypi}  

#### my .env says API_KEY={env_api} SECRET={env_secret} TOKEN={env_token}  

#### and config.json has {{\"apiKey\": \"{json_key}\", \"password\": \"{json_pw}\"}}  

Call {not_1}() once; keep {not_2}; {not_3}.
",
        api = SECRETS[10].0,
        openai = SECRETS[0].0,
        anthropic = SECRETS[1].0,
        aws = SECRETS[2].0,
        ghp = SECRETS[3].0,
        bearer = SECRETS[11].0,
        pw = SECRETS[8].0,
        slack = SECRETS[5].0,
        google = SECRETS[6].0,
        pem = SECRETS[9].0,
        aws_secret = SECRETS[12].0,
        db_password = SECRETS[13].0,
        stripe_live = SECRETS[14].0,
        stripe_rk = SECRETS[15].0,
        stripe_test = SECRETS[16].0,
        glpat = SECRETS[17].0,
        hf = SECRETS[18].0,
        npm = SECRETS[19].0,
        pypi = SECRETS[20].0,
        env_api = SECRETS[21].0,
        env_secret = SECRETS[22].0,
        env_token = SECRETS[23].0,
        json_key = SECRETS[24].0,
        json_pw = SECRETS[25].0,
        not_1 = NOT_SECRETS[0],
        not_2 = NOT_SECRETS[1],
        not_3 = NOT_SECRETS[2],
    );
    sb.write("work/leaky/.aider.chat.history.md", history);
    sb.write(
        ".config/deja/aider-projects",
        format!("{}\n", sb.home.join("work/leaky").display()),
    );
    let chats = sb.home.join(".gemini/tmp/leaky/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let session = serde_json::json!({
        "sessionId": "12e731c6-4e5a-474c-b7c6-b88195fc5a10",
        "projectHash": "0".repeat(64),
        "startTime": "2026-07-18T10:00:00Z",
        "lastUpdated": "2026-07-18T10:00:00Z",
        // The title is redacted too.
        "summary": format!("token {} and {}", SECRETS[4].0, SECRETS[18].0),
        "messages": [
            {"id": "m1", "timestamp": "2026-07-18T10:00:00Z", "type": "user",
             "content": [{"text": format!("here is the JWT {} and PAT {}", SECRETS[7].0, SECRETS[4].0)}]},
            {"id": "m2", "timestamp": "2026-07-18T10:00:01Z", "type": "gemini",
             "content": "I will not repeat credentials.",
             "toolCalls": [{"id": "t1", "name": "run_shell_command", "status": "success",
                            "args": {"command": format!("export GITHUB_TOKEN={}", SECRETS[3].0)}}]}
        ]
    });
    std::fs::write(
        chats.join("session-2026-07-18T10-00-12e731c6.json"),
        session.to_string(),
    )
    .unwrap();
    seeded_new_readers(sb);
}

/// Secrets in a Claude Code session, a Codex rollout and a Qwen Code chat,
/// in message text and in tool inputs (which become command records).
fn seeded_new_readers(sb: &Sandbox) {
    let claude_id = "0000c1a0-aaaa-4bbb-8ccc-000000000001";
    let line = |v: serde_json::Value| format!("{v}\n");
    let claude = [
        serde_json::json!({"parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/home/dev/leaky",
            "sessionId": claude_id, "version": "2.1.97", "type": "user",
            "message": {"role": "user", "content": format!("deploy with key {}", SECRETS[0].0)},
            "uuid": "u1", "timestamp": "2026-07-19T09:00:01.000Z"}),
        serde_json::json!({"parentUuid": "u1", "isSidechain": false, "userType": "external", "cwd": "/home/dev/leaky",
            "sessionId": claude_id, "version": "2.1.97", "type": "assistant",
            "message": {"model": "claude-sonnet-4-6", "id": "msg_1", "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": format!("Rotate {} first.", SECRETS[1].0)},
                            {"type": "tool_use", "id": "t1", "name": "Bash",
                             "input": {"command": format!("curl -H 'Authorization: Bearer {}' https://x.example.org", SECRETS[11].0)}},
                            // A file path is redacted too.
                            {"type": "tool_use", "id": "t2", "name": "Write",
                             "input": {"file_path": format!("/home/dev/leaky/{}/notes.md", SECRETS[17].0), "content": "notes"}}],
                "stop_reason": null},
            "uuid": "a1", "timestamp": "2026-07-19T09:00:02.000Z"}),
    ]
    .map(line)
    .concat();
    sb.write(
        &format!(".claude/projects/-home-dev-leaky/{claude_id}.jsonl"),
        claude,
    );

    let codex_id = "019f0000-0000-7000-8000-00000000c0de";
    let codex = [
        // The project's folder (and so its name) is redacted too.
        serde_json::json!({"timestamp": "2026-07-19T10:00:00.000Z", "type": "session_meta",
            "payload": {"id": codex_id, "timestamp": "2026-07-19T10:00:00.000Z", "cwd": format!("/home/dev/{}", SECRETS[19].0),
                "originator": "codex_cli_rs", "cli_version": "0.128.0", "source": "cli"}}),
        serde_json::json!({"timestamp": "2026-07-19T10:00:01.000Z", "type": "response_item",
            "payload": {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": format!("the AWS key {} leaked", SECRETS[2].0)}]}}),
        serde_json::json!({"timestamp": "2026-07-19T10:00:02.000Z", "type": "response_item",
            "payload": {"type": "function_call", "name": "shell_command",
                "arguments": serde_json::json!({"command": format!("export SLACK_TOKEN={}", SECRETS[5].0), "workdir": "/home/dev/leaky"}).to_string(),
                "call_id": "call_1"}}),
        serde_json::json!({"timestamp": "2026-07-19T10:00:03.000Z", "type": "response_item",
            "payload": {"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": format!("Revoke {} now.", SECRETS[6].0)}]}}),
    ]
    .map(line)
    .concat();
    sb.write(
        &format!(".codex/sessions/2026/07/19/rollout-2026-07-19T10-00-00-{codex_id}.jsonl"),
        codex,
    );

    let qwen_id = "0000c0e0-aaaa-4bbb-8ccc-000000000001";
    let qwen = [
        serde_json::json!({"uuid": "q1", "parentUuid": null, "sessionId": qwen_id, "timestamp": "2026-07-19T11:00:01.000Z",
            "type": "user", "cwd": "/home/dev/leaky", "version": "0.14.0",
            "message": {"role": "user", "parts": [{"text": format!("my PAT is {}", SECRETS[4].0)}]}}),
        serde_json::json!({"uuid": "q2", "parentUuid": "q1", "sessionId": qwen_id, "timestamp": "2026-07-19T11:00:02.000Z",
            "type": "assistant", "cwd": "/home/dev/leaky", "version": "0.14.0", "model": "coder-model",
            "message": {"role": "model", "parts": [{"text": format!("That JWT {} must go.", SECRETS[7].0)},
                {"functionCall": {"id": "call_1", "name": "run_shell_command",
                    "args": {"command": format!("psql postgres://app:{}@db.internal/x", SECRETS[8].0)}}}]}}),
        serde_json::json!({"uuid": "q3", "parentUuid": "q2", "sessionId": qwen_id, "timestamp": "2026-07-19T11:00:03.000Z",
            "type": "tool_result", "cwd": "/home/dev/leaky", "version": "0.14.0",
            "message": {"role": "user", "parts": [{"functionResponse": {"id": "call_1", "name": "run_shell_command", "response": {"output": "ok"}}}]},
            "toolCallResult": {"callId": "call_1", "status": "success", "resultDisplay": "ok"}}),
    ]
    .map(line)
    .concat();
    sb.write(
        &format!(".qwen/projects/-home-dev-leaky/chats/{qwen_id}.jsonl"),
        qwen,
    );
}

fn assert_clean(what: &str, text: &str) {
    for (secret, _) in SECRETS {
        assert!(!text.contains(secret), "{what} leaks {secret}:\n{text}");
    }
}

/// Asserts that no file of the data folder holds a secret. Every file is
/// read (one that cannot be is a failure, not a pass), and the scan must have
/// covered the database and the vector file.
fn assert_clean_data_dir(dir: &Path) {
    let any_secret = regex::bytes::Regex::new(
        &SECRETS
            .iter()
            .map(|(secret, _)| regex::escape(secret))
            .collect::<Vec<_>>()
            .join("|"),
    )
    .unwrap();
    let mut scanned = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", folder.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("cannot scan {}: {e}", path.display()));
            if let Some(found) = any_secret.find(&bytes) {
                panic!(
                    "{} holds {}",
                    path.display(),
                    String::from_utf8_lossy(found.as_bytes())
                );
            }
            scanned.push(path);
        }
    }
    for file in ["index.sqlite", "vectors.usearch"] {
        assert!(
            scanned.contains(&dir.join(file)),
            "{file} was not scanned: {scanned:?}"
        );
    }
}

#[test]
fn fake_secrets_reach_no_store_and_no_output() {
    let mut sb = Sandbox::new();
    sb.config_with_model("");
    seeded(&sb);
    sb.env("GEMINI_CLI_HOME", sb.home.clone());

    let parsed = sb.ok(&[
        "parse",
        sb.home
            .join("work/leaky/.aider.chat.history.md")
            .to_str()
            .unwrap(),
        "--json",
    ]);
    assert_clean("deja parse", &parsed.stdout);
    for (_, kind) in SECRETS {
        let marker = format!("[REDACTED:{kind}]");
        let gemini_only = ["github-token", "jwt"].contains(kind);
        assert!(
            gemini_only || parsed.stdout.contains(&marker),
            "parse output lacks {marker}"
        );
    }
    for text in NOT_SECRETS {
        assert!(
            parsed.stdout.contains(text),
            "ordinary text `{text}` was redacted:\n{}",
            parsed.stdout
        );
    }

    let out = sb.ok(&["index"]);
    assert_clean("deja index", &out.stderr);
    // The database, its write-ahead log, the vector file and every other file.
    assert_clean_data_dir(&sb.data_dir());
    // The full-text index is queried for every secret: nothing matches.
    for (secret, _) in SECRETS {
        let out = sb.run(&["recall", "--mode", "lexical", "--json", secret]);
        // The query itself is what the user typed; the hits must not hold it.
        assert_clean("deja recall", &out.json()["hits"].to_string());
    }
    let list = sb.ok(&["sessions", "--json"]);
    assert_clean("deja sessions", &list.stdout);
    for harness in ["aider", "gemini", "claude", "codex", "qwen"] {
        assert!(
            list.json()["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["harness"] == harness),
            "no {harness} session indexed: {}",
            list.stdout
        );
    }
    for project in ["/home/dev/leaky", "leaky"] {
        assert_clean(
            "deja context",
            &sb.ok(&["context", "--project", project]).stdout,
        );
    }
    for s in list.json()["sessions"].as_array().unwrap() {
        let id = s["id"].as_str().unwrap();
        let shown = sb.ok(&["show", id, "--json"]);
        assert_clean("deja show --json", &shown.stdout);
        assert!(shown.stdout.contains("[REDACTED:"), "{}", shown.stdout);
        assert_clean("deja show", &sb.ok(&["show", id]).stdout);
    }
    for q in [
        "rotate the key",
        "auth fails",
        "password in the connection string",
        "credentials",
    ] {
        let out = sb.run(&["recall", "--json", q]);
        assert_clean("deja recall", &out.stdout);
    }

    // Turning redaction off is possible, and then the text is stored as written.
    let off = Sandbox::new();
    off.config("[embed]\nenabled = false\n[redact]\nenabled = false\n");
    seeded(&off);
    off.ok(&["index"]);
    let out = off.ok(&["recall", "--mode", "lexical", "--json", "rotated"]);
    assert!(out.stdout.contains(SECRETS[2].0));

    // User patterns add markers of their own.
    let custom = Sandbox::new();
    custom.config("[embed]\nenabled = false\n[redact]\npatterns = [{ name = \"db-host\", regex = \"db\\\\.internal\" }]\n");
    seeded(&custom);
    custom.ok(&["index"]);
    let out = custom.ok(&["recall", "--mode", "lexical", "--json", "postgres"]);
    assert!(
        out.stdout.contains("[REDACTED:db-host]") && !out.stdout.contains("db.internal"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_missing_or_corrupt_vector_file_is_detected_and_rebuilt() {
    let mut sb = Sandbox::new();
    sb.config_with_model("");
    corpus(&mut sb, 6, 4);
    sb.ok(&["index"]);
    let path = sb.data_dir().join("vectors.usearch");
    let query = [
        "recall",
        "--mode",
        "semantic",
        "--json",
        "evicting entries from a cache",
    ];
    let expected = sb.ok(&query).json()["hits"][0]["session_id"].clone();

    for damage in [None, Some(b"not an index at all".as_slice())] {
        match damage {
            None => std::fs::remove_file(&path).unwrap(),
            Some(bytes) => std::fs::write(&path, bytes).unwrap(),
        }
        // Recall still answers semantically, says why it is slower, and doctor sees it.
        let out = sb.ok(&query);
        assert!(
            out.stderr.contains("vector index is missing or unreadable"),
            "{}",
            out.stderr
        );
        assert_eq!(out.json()["hits"][0]["session_id"], expected);
        let d = sb.run(&["doctor", "--json"]).json();
        assert_eq!(d["store"]["vectors"]["in_sync"], false, "{d:#}");
        // The next index rebuilds it from the database.
        sb.ok(&["index"]);
        let d = sb.run(&["doctor", "--json"]).json();
        assert_eq!(d["store"]["vectors"]["in_sync"], true, "{d:#}");
        assert_eq!(
            d["store"]["vectors"]["count"],
            d["store"]["embedding_units"]
        );
        let out = sb.ok(&query);
        assert!(
            !out.stderr.contains("missing or unreadable"),
            "{}",
            out.stderr
        );
        assert_eq!(out.json()["hits"][0]["session_id"], expected);
    }
}
