//! Snapshot tests of what people read: the index summary, `sessions`,
//! `recall` grouped by session, `show --around`, `forget --dry-run` and
//! `forget --list`, and a reader's refusal to resume. Paths, durations and
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
