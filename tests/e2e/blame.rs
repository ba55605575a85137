//! `deja blame`: the sessions that edited a file, through the real binary,
//! for paths recorded absolute, relative to the project and under another
//! home.

use std::path::Path;

use crate::common::{Output, Sandbox};

/// One Claude Code session in `cwd`: a user request, then an assistant
/// reply calling `tool` on `path`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn claude(
    sb: &Sandbox,
    n: u32,
    day: u32,
    cwd: &str,
    ask: &str,
    reply: &str,
    tool: &str,
    path: &str,
) {
    let id = format!("0000b1a0-aaaa-4bbb-8ccc-00000000000{n}");
    let line = |v: serde_json::Value| format!("{v}\n");
    let text = [
        serde_json::json!({"parentUuid": null, "isSidechain": false, "userType": "external", "cwd": cwd,
            "sessionId": id, "version": "2.1.97", "type": "user",
            "message": {"role": "user", "content": ask},
            "uuid": format!("u{n}"), "timestamp": format!("2026-07-{day:02}T09:00:01.000Z")}),
        serde_json::json!({"parentUuid": format!("u{n}"), "isSidechain": false, "userType": "external", "cwd": cwd,
            "sessionId": id, "version": "2.1.97", "type": "assistant",
            "message": {"model": "claude-sonnet-4-6", "id": format!("msg_{n}"), "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": reply},
                            {"type": "tool_use", "id": format!("t{n}"), "name": tool,
                             "input": {"file_path": path, "old_string": "a", "new_string": "b", "content": "b"}}],
                "stop_reason": null},
            "uuid": format!("a{n}"), "timestamp": format!("2026-07-{day:02}T09:00:02.000Z")}),
    ]
    .map(line)
    .concat();
    let folder = cwd.replace('/', "-");
    sb.write(&format!(".claude/projects/{folder}/{id}.jsonl"), text);
}

/// A project `src/app` (a git repository) in HOME with `src/x.rs`, and four
/// sessions: two of this home (absolute and relative paths), a teammate's
/// (the same project under `/home/alice`), and one that edits another
/// project's `src/x.rs` and reads this one.
pub(crate) fn project() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("src/app/.git/HEAD", "ref: refs/heads/main\n");
    sb.write("src/app/src/x.rs", "one\ntwo\nthree\n");
    let app = sb.home.join("src/app");
    let app = app.to_str().unwrap();
    let file = format!("{app}/src/x.rs");
    claude(
        &sb,
        1,
        10,
        app,
        "write the parser",
        "Writing the parser skeleton.",
        "Write",
        &file,
    );
    claude(
        &sb,
        2,
        12,
        app,
        "fix the off-by-one in x",
        "Fixing the loop bound.",
        "Edit",
        "src/x.rs",
    );
    claude(
        &sb,
        3,
        14,
        "/home/alice/src/app",
        "tidy x",
        "Teammate <b>change</b>.",
        "Edit",
        "/home/alice/src/app/src/x.rs",
    );
    claude(
        &sb,
        4,
        15,
        "/home/alice/src/other",
        "other x",
        "Another project.",
        "Edit",
        "/home/alice/src/other/src/x.rs",
    );
    claude(&sb, 5, 16, app, "look at x", "Reading it.", "Read", &file);
    sb.ok(&["index"]);
    sb
}

fn blame(sb: &Sandbox, dir: &Path, args: &[&str]) -> Output {
    let out = sb
        .command()
        .current_dir(dir)
        .arg("blame")
        .args(args)
        .output()
        .unwrap();
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub(crate) fn id(n: u32) -> String {
    format!("0000b1a0-aaaa-4bbb-8ccc-00000000000{n}")
}

#[test]
fn blame_lists_the_sessions_that_edited_a_file_newest_first() {
    let sb = project();
    let app = sb.home.join("src/app");
    let out = blame(&sb, &app, &["src/x.rs"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let at = |n: u32| out.stdout.find(&id(n));
    let (a, b, c) = (at(1).unwrap(), at(2).unwrap(), at(3).unwrap());
    assert!(c < b && b < a, "newest first:\n{}", out.stdout);
    assert!(at(4).is_none() && at(5).is_none(), "{}", out.stdout);
    assert!(
        out.stdout.contains(&format!(
            "3 sessions edited {} (3 records)",
            app.join("src/x.rs").display()
        )),
        "{}",
        out.stdout
    );
    insta::assert_snapshot!(
        "blame_text",
        out.stdout.replace(sb.home.to_str().unwrap(), "[HOME]")
    );
    assert!(
        out.stdout.contains(&format!("deja show {}#1", id(2))),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("#1 assistant: Fixing the loop bound."),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("(elsewhere: /home/alice/src/app/src/x.rs)"),
        "{}",
        out.stdout
    );

    // The same from elsewhere, by absolute path, and as JSON.
    let abs = app.join("src/x.rs");
    let json = blame(&sb, &sb.home, &[abs.to_str().unwrap(), "--json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let v = json.json();
    assert_eq!(v["file"], abs.to_str().unwrap());
    assert!(v["line"].is_null() && v["line_note"].is_null() && v.get("reads").is_none());
    let edits = v["edits"].as_array().unwrap();
    let got: Vec<(&str, &str)> = edits
        .iter()
        .map(|e| {
            (
                e["session"]["id"].as_str().unwrap(),
                e["matched"].as_str().unwrap(),
            )
        })
        .collect();
    let want = [(id(3), "elsewhere"), (id(2), "exact"), (id(1), "exact")];
    let want: Vec<(&str, &str)> = want.iter().map(|(i, m)| (i.as_str(), *m)).collect();
    assert_eq!(got, want);
    assert_eq!(edits[1]["message"]["index"], 1);
    assert_eq!(edits[1]["message"]["role"], "assistant");
    assert_eq!(edits[1]["message"]["snippet"], "Fixing the loop bound.");
    assert_eq!(edits[1]["show"], format!("deja show {}#1", id(2)));
    assert_eq!(edits[1]["action"], "edit");
    assert_eq!(edits[0]["session"]["date_approximate"], false);

    // Reads only when asked.
    let v = blame(&sb, &app, &["src/x.rs", "--reads", "--json"]).json();
    let reads = v["reads"].as_array().unwrap();
    assert_eq!(reads.len(), 1);
    assert_eq!(reads[0]["session"]["id"], id(5));
    assert_eq!(reads[0]["action"], "read");
}

#[test]
fn blame_with_a_line_says_what_cannot_be_told() {
    let sb = project();
    let app = sb.home.join("src/app");
    let out = blame(&sb, &app, &["src/x.rs:2"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("which edit wrote line 2 cannot be told: no edit's text is at line 2 today"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains(&id(1)) && out.stdout.contains(&id(3)));
    let v = blame(&sb, &app, &["src/x.rs:9", "--json"]).json();
    assert_eq!(v["line"], 9);
    assert!(
        v["line_note"]
            .as_str()
            .unwrap()
            .contains("has 3 lines today"),
        "{v}"
    );
    std::fs::remove_file(app.join("src/x.rs")).unwrap();
    let out = blame(&sb, &app, &["src/x.rs:2"]);
    assert_eq!(
        out.code, 0,
        "a deleted file keeps its history: {}",
        out.stderr
    );
    assert!(out.stdout.contains("is not there today"), "{}", out.stdout);
}

#[test]
fn blame_without_edits_exits_1_and_bad_input_names_the_file() {
    let sb = project();
    let app = sb.home.join("src/app");
    let out = blame(&sb, &app, &["src/none.rs"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.contains(&format!(
            "no session edited {}",
            app.join("src/none.rs").display()
        )),
        "{}",
        out.stderr
    );
    let json = blame(&sb, &app, &["src/none.rs", "--json"]);
    assert_eq!(json.code, 1);
    assert_eq!(json.json()["edits"], serde_json::json!([]));

    let out = blame(&sb, &app, &["src/x.rs:0"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("src/x.rs:0: lines are counted from 1"),
        "{}",
        out.stderr
    );
    let out = blame(&sb, &app, &["src"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("src/app/src is a folder"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_mcp_blame_tool_answers_as_untrusted_memory() {
    let sb = project();
    let file = sb.home.join("src/app/src/x.rs");
    let mut raw = crate::mcp::Raw::start(&sb);
    raw.initialize();
    let call = |id: u32, args: serde_json::Value| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "blame", "arguments": args}})
        .to_string()
    };
    raw.send(&call(
        7,
        serde_json::json!({"file": format!("{}:2", file.display())}),
    ));
    let answer = raw.receive();
    raw.send(&call(8, serde_json::json!({"file": "/nowhere/none.rs"})));
    let none = raw.receive();
    raw.send(&call(9, serde_json::json!({"file": "x.rs", "limit": 0})));
    let bad = raw.receive();
    let (status, stderr) = raw.finish();
    assert!(status.success(), "exit {status:?}\n{stderr}");

    let result = &answer["result"];
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("<recalled-memory"), "{text}");
    let (c, b, a) = (text.find(&id(3)), text.find(&id(2)), text.find(&id(1)));
    assert!(c.unwrap() < b.unwrap() && b.unwrap() < a.unwrap(), "{text}");
    assert!(!text.contains(&id(4)) && !text.contains(&id(5)), "{text}");
    assert!(
        text.contains("#1 assistant: Fixing the loop bound."),
        "{text}"
    );
    assert!(text.contains("no edit's text is at line 2 today"), "{text}");
    let edits = result["structuredContent"]["edits"].as_array().unwrap();
    assert_eq!(edits.len(), 3, "{result:#}");
    assert_eq!(edits[0]["matched"], "elsewhere");
    assert_eq!(result["structuredContent"]["line"], 2);

    let text = none["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("No session edited /nowhere/none.rs."),
        "{text}"
    );
    let message = bad.to_string();
    assert!(message.contains("`limit` must be 1 to 100"), "{message}");
}
