//! Snapshot tests of what people read: the index summary, `sessions`,
//! `recall` grouped by session, `show --around`, `forget --dry-run` and
//! `forget --list`, a reader's refusal to resume; and what scripts and agents
//! read: `--json` of sessions, recall and show, and each MCP tool's text and
//! structured content. Paths, durations and
//! path-derived ids are masked, so the snapshots hold on any machine.

use crate::common::{gemini_session, Sandbox};

fn masked(text: &str, sb: &Sandbox) -> String {
    let text = text.replace(sb.home.to_str().unwrap(), "[HOME]");
    let ids = regex::Regex::new(r"aider-[0-9a-f]{12}-").unwrap();
    let text = ids.replace_all(&text, "aider-[PATH-HASH]-");
    let secs = regex::Regex::new(r"in \d+\.\d+ s").unwrap();
    let text = secs.replace_all(&text, "in [T] s");
    let now = regex::Regex::new(r"forgotten \d{4}-\d\d-\d\d \d\d:\d\d").unwrap();
    now.replace_all(&text, "forgotten [NOW]").into_owned()
}

fn sandbox() -> Sandbox {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let mut history = String::from("\n# aider chat started at 2026-07-17 09:00:00\n\n");
    for i in 0..6 {
        let topic = if i % 2 == 0 {
            "the wombat scheduler deadlock"
        } else {
            "routine chores"
        };
        history.push_str(&format!(
            "#### question {i} about {topic}  \n\nAnswer {i} about {topic}.\n\n"
        ));
    }
    sb.write(
        "work/scheduler-service-backend/.aider.chat.history.md",
        &history,
    );
    sb.write(
        ".config/deja/aider-projects",
        format!(
            "{}\n",
            sb.home.join("work/scheduler-service-backend").display()
        ),
    );
    gemini_session(
        &sb.home.join(".gemini"),
        "billing",
        "0f18b3b3-7342-4d89-826c-b78fc1922f6c",
        0,
        4,
        "wombat scheduler",
    );
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    sb
}

#[test]
fn what_people_read_is_stable() {
    let sb = sandbox();
    let index = sb.ok(&["index"]);
    insta::assert_snapshot!("index_summary", masked(&index.stderr, &sb));
    let again = sb.ok(&["index"]);
    insta::assert_snapshot!("index_summary_nothing_changed", masked(&again.stderr, &sb));
    insta::assert_snapshot!("sessions", masked(&sb.ok(&["sessions"]).stdout, &sb));
    let recall = sb.ok(&["recall", "--mode", "lexical", "wombat scheduler deadlock"]);
    insta::assert_snapshot!("recall_grouped", masked(&recall.stdout, &sb));
    let id = sb
        .ok(&[
            "recall",
            "--json",
            "--mode",
            "lexical",
            "wombat scheduler deadlock",
        ])
        .json()["hits"][0]["message_id"]
        .as_str()
        .unwrap()
        .to_string();
    let show = sb.ok(&["show", &id, "--before", "1", "--after", "1"]);
    insta::assert_snapshot!("show_around", masked(&show.stdout, &sb));
    let resume = sb.run(&["resume", &id[..id.find('#').unwrap()]]);
    insta::assert_snapshot!("resume_refused", masked(&resume.stderr, &sb));
    let dry = sb.ok(&["forget", "--dry-run", "--harness", "gemini"]);
    insta::assert_snapshot!(
        "forget_dry_run",
        masked(&format!("{}{}", dry.stdout, dry.stderr), &sb)
    );
    sb.ok(&["forget", "--harness", "gemini", "--yes"]);
    let list = sb.ok(&["forget", "--list"]);
    insta::assert_snapshot!(
        "forget_list",
        masked(&format!("{}{}", list.stdout, list.stderr), &sb)
    );
}

/// `value` with every `score` rounded to four places, so a snapshot does
/// not hang on the last bits of a float.
fn rounded(mut value: serde_json::Value) -> serde_json::Value {
    fn walk(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    if k == "score" {
                        if let Some(f) = x.as_f64() {
                            *x = serde_json::json!((f * 10_000.0).round() / 10_000.0);
                        }
                    } else {
                        walk(x);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut value);
    value
}

#[test]
fn what_scripts_and_agents_read_is_stable() {
    let sb = sandbox();
    // The MCP server's background index would race the answers' notes.
    sb.config("[embed]\nenabled = false\n[mcp]\nindex = false\n");
    sb.ok(&["index"]);
    let json = |args: &[&str]| {
        let text = serde_json::to_string_pretty(&rounded(sb.ok(args).json())).unwrap();
        masked(&text, &sb)
    };
    insta::assert_snapshot!("sessions_json", json(&["sessions", "--json"]));
    insta::assert_snapshot!(
        "recall_json",
        json(&[
            "recall",
            "--json",
            "--mode",
            "lexical",
            "wombat scheduler deadlock"
        ])
    );
    let gemini = "0f18b3b3-7342-4d89-826c-b78fc1922f6c-20260717T080000";
    insta::assert_snapshot!(
        "show_json",
        json(&["show", gemini, "--json", "--around", "1", "--after", "1"])
    );

    // The MCP tools, text and structured content (no model here: words only).
    let mut raw = crate::mcp::Raw::start(&sb);
    raw.initialize();
    let calls = [
        (
            "recall",
            serde_json::json!({"query": "wombat scheduler deadlock", "limit": 3}),
        ),
        (
            "session",
            serde_json::json!({"id": format!("{gemini}#1"), "before": 1, "after": 1}),
        ),
        ("sessions", serde_json::json!({"limit": 5})),
    ];
    for (n, (tool, arguments)) in calls.into_iter().enumerate() {
        raw.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": n + 2, "method": "tools/call",
                    "params": {"name": tool, "arguments": arguments}})
            .to_string(),
        );
        let answer = raw.receive();
        let result = &answer["result"];
        let text = result["content"][0]["text"].as_str().unwrap();
        insta::assert_snapshot!(format!("mcp_{tool}_text"), masked(text, &sb));
        let value =
            serde_json::to_string_pretty(&rounded(result["structuredContent"].clone())).unwrap();
        insta::assert_snapshot!(format!("mcp_{tool}_structured"), masked(&value, &sb));
    }
    let (status, stderr) = raw.finish();
    assert!(status.success(), "{stderr}");
}
