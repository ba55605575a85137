//! Correctness and trust: a broken config never locks the user out of the
//! tools that diagnose it, and names the file, line and key; filters,
//! limits and dates that name nothing, or nonsense, are errors that say what
//! exists; `--project` matches exactly; ids resolve by any unique prefix.

use serde_json::Value;

use crate::common::{gemini_session, install_plugin, lib_name, test_plugins, Output, Sandbox};

/// The first line of stderr after `error: `.
fn error_line(out: &Output) -> String {
    out.stderr
        .lines()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or_else(|| panic!("no error line in:\n{}", out.stderr))
        .to_string()
}

fn ids(v: &Value) -> Vec<String> {
    let mut ids: Vec<String> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[test]
fn a_broken_config_leaves_the_diagnostic_tools_working() {
    for (toml, line, key) in [
        // Invalid TOML.
        (
            "[recall]\nmode = \"lexical\"\n[embed\nenabled = false\n",
            3,
            "not valid TOML",
        ),
        // An unknown key.
        (
            "# mine\n[recall]\nmode = \"lexical\"\nlimt = 3\n",
            4,
            "`recall.limt`",
        ),
    ] {
        let sb = Sandbox::new();
        sb.config(toml);
        let path = sb.config_path().display().to_string();
        let says_it = |text: &str| {
            assert!(
                text.contains(&path)
                    && text.contains(&format!("line {line}"))
                    && text.contains(key),
                "{toml:?}: does not name `{path}`, line {line} and {key}:\n{text}"
            )
        };

        // `deja config --default` prints the documented defaults, and warns.
        let out = sb.run(&["config", "--default"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stdout.contains("max_file_bytes = 268435456"));
        says_it(&out.stderr);

        // `deja doctor` reports it as a problem with its fix, and goes on.
        let out = sb.run(&["doctor", "--json"]);
        assert_eq!(out.code, 1, "{}", out.stderr);
        let d = out.json();
        says_it(&d["problems"].to_string());
        says_it(d["config"]["error"].as_str().unwrap());
        assert!(d["readers"].as_array().unwrap().len() >= 5, "{d:#}");
        let text = sb.run(&["doctor"]).stdout;
        says_it(&text);
        assert!(text.contains("broken"), "{text}");

        // `deja --help` works and says what is wrong.
        let out = sb.run(&["--help"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stdout.contains("Usage"), "{}", out.stdout);
        says_it(&out.stderr);

        // Every other command refuses, with the same message.
        let mut first: Option<String> = None;
        for args in [
            vec!["config"],
            vec!["sessions"],
            vec!["recall", "tenant"],
            vec!["index"],
            vec!["show", "x"],
            vec!["plugins"],
            vec!["context"],
        ] {
            let out = sb.run(&args);
            assert_eq!(out.code, 2, "{args:?}: {}{}", out.stdout, out.stderr);
            let line = error_line(&out);
            says_it(&line);
            assert!(out.stderr.contains("deja doctor"), "{}", out.stderr);
            match &first {
                Some(f) => assert_eq!(&line, f, "{args:?}"),
                None => first = Some(line),
            }
        }
    }
}

#[test]
fn deja_config_must_name_a_file_that_exists() {
    let mut sb = Sandbox::new();
    let missing = sb.home.join("nowhere/deja.toml");
    sb.env("DEJA_CONFIG", &missing);
    for args in [vec!["config"], vec!["sessions"], vec!["index"]] {
        let out = sb.run(&args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        let line = error_line(&out);
        assert!(
            line.contains(missing.to_str().unwrap())
                && line.contains("does not exist")
                && line.contains("DEJA_CONFIG"),
            "{line}"
        );
    }
    // doctor says so too.
    let out = sb.run(&["doctor", "--json"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("does not exist"), "{}", out.stdout);
    // Without DEJA_CONFIG, an absent file means the defaults.
    let sb = Sandbox::new();
    let out = sb.ok(&["config"]);
    assert!(
        out.stderr.contains("absent: defaults apply"),
        "{}",
        out.stderr
    );
}

#[test]
fn config_errors_name_the_line_and_the_full_key() {
    let sb = Sandbox::new();
    for (toml, line, says) in [
        (
            "[recall]\nlimit = \"ten\"\n",
            2,
            "`recall.limit` must be an integer, not a string",
        ),
        (
            "[index]\nmax_file_bytes = 1024\n\n[recall]\nlimit = 0\n",
            5,
            "`recall.limit` must be between 1 and 1000, not 0",
        ),
        (
            "[mcp]\nindex_interval_secs = -5\n",
            2,
            "`mcp.index_interval_secs` must be between 0 and 604800, not -5",
        ),
        (
            "[embed]\nthreads = 2\nbatchsize = 8\n",
            3,
            "unknown key `embed.batchsize`",
        ),
        ("[recal]\nlimit = 3\n", 1, "unknown section `[recal]`"),
        (
            "[harness.aider]\nenabled = \"no\"\n",
            2,
            "`harness.aider.enabled` must be true or false, not a string",
        ),
    ] {
        sb.config(toml);
        let out = sb.run(&["config"]);
        assert_eq!(out.code, 2, "{toml:?}");
        let e = error_line(&out);
        assert!(
            e.contains(sb.config_path().to_str().unwrap())
                && e.contains(&format!("line {line}"))
                && e.contains(says),
            "{toml:?}: {e}"
        );
    }
}

#[test]
fn harness_sections_are_checked_the_same_by_every_command() {
    let sb = Sandbox::new();
    // A key the aider reader does not accept: every command refuses it.
    sb.config("[embed]\nenabled = false\n\n[harness.aider]\ntimezon = \"UTC\"\n");
    let mut first: Option<String> = None;
    for args in [
        vec!["config"],
        vec!["recall", "tenant"],
        vec!["sessions"],
        vec!["index"],
        vec!["context"],
    ] {
        let out = sb.run(&args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        let e = error_line(&out);
        assert!(
            e.contains("`harness.aider.timezon`")
                && e.contains("`timezone`")
                && e.contains("line 5"),
            "{args:?}: {e}"
        );
        match &first {
            Some(f) => assert_eq!(&e, f, "{args:?}"),
            None => first = Some(e),
        }
    }
    // A section for a harness no plugin reads: named, with the known ones
    // (every loaded reader, as `deja plugins` lists them, in name order).
    let mut loaded: Vec<String> = Sandbox::new().ok(&["plugins", "--json"]).json()["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "loaded")
        .filter_map(|p| p["harness"].as_str().map(str::to_string))
        .collect();
    loaded.sort();
    let known = loaded
        .iter()
        .map(|h| format!("`{h}`"))
        .collect::<Vec<_>>()
        .join(", ");
    assert!(
        known.contains("`aider`") && known.contains("`gemini`"),
        "{known}"
    );
    sb.config("[embed]\nenabled = false\n\n[harness.gemni]\nroots = [\"~/g\"]\n");
    for args in [vec!["index"], vec!["config"], vec!["sessions"]] {
        let out = sb.run(&args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        let e = error_line(&out);
        assert!(
            e.contains("`[harness.gemni]`")
                && e.contains("line 4")
                && e.contains("did you mean `[harness.gemini]`")
                && e.contains(&known),
            "{args:?}: {e}"
        );
    }
    // doctor reports it; plugins lists the readers, with a warning.
    let out = sb.run(&["doctor", "--json"]);
    assert_eq!(out.code, 1);
    assert!(out.json()["problems"].to_string().contains("harness.gemni"));
    let out = sb.ok(&["plugins"]);
    assert!(out.stderr.contains("harness.gemni"), "{}", out.stderr);
    // Valid sections pass everywhere.
    sb.config("[embed]\nenabled = false\n\n[harness.aider]\ntimezone = \"UTC\"\n[harness.codex]\nenabled = false\n");
    sb.ok(&["config"]);
    sb.ok(&["index"]);
    sb.ok(&["sessions"]);
}

/// A sandbox with one aider project (`work/billing`) and one Gemini session
/// (project id `billing`), indexed, embeddings off.
fn indexed() -> Sandbox {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    sb.write(
        "work/billing/.aider.chat.history.md",
        "\n# aider chat started at 2026-07-17 09:00:00\n\n#### Show me the failing query  \n\nThe query misses the tenant predicate.\n",
    );
    sb.write(
        ".config/deja/aider-projects",
        format!("{}\n", sb.home.join("work/billing").display()),
    );
    gemini_session(
        &sb.home.join(".gemini"),
        "billing",
        "0f18b3b3-7342-4d89-826c-b78fc1922f6c",
        0,
        4,
        "invoice export",
    );
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    sb.index();
    sb
}

#[test]
fn unknown_harnesses_and_projects_are_errors_that_name_what_exists() {
    let sb = indexed();
    for args in [
        vec!["sessions", "--harness", "gemni"],
        vec!["recall", "tenant", "--harness", "gemni"],
        vec!["forget", "--harness", "gemni", "--yes"],
    ] {
        let out = sb.run(&args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stdout);
        let e = error_line(&out);
        assert!(
            e.contains("unknown harness `gemni`")
                && e.contains("`gemini`")
                && e.contains("`codex`")
                && e.contains("`aider` (1)"),
            "{args:?}: {e}"
        );
    }
    for args in [
        vec!["sessions", "--project", "biling"],
        vec!["recall", "tenant", "--project", "biling"],
        vec!["forget", "--project", "biling", "--yes"],
    ] {
        let out = sb.run(&args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stdout);
        assert!(
            out.stderr.contains("no session of project `biling`") && out.stderr.contains("billing"),
            "{args:?}: {}",
            out.stderr
        );
    }
    assert_eq!(
        ids(&sb.ok(&["sessions", "--json"]).json()).len(),
        2,
        "nothing forgotten"
    );
    // A harness a reader reads, with nothing indexed yet, is no error.
    let out = sb.ok(&["sessions", "--harness", "codex", "--json"]);
    assert!(ids(&out.json()).is_empty());
    let out = sb.run(&["recall", "tenant", "--harness", "codex"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
}

#[test]
fn limits_are_bounded_the_same_in_every_command() {
    let sb = indexed();
    for args in [
        vec!["sessions", "-n", "0"],
        vec!["sessions", "--limit", "0"],
        vec!["recall", "tenant", "-n", "0"],
        vec!["recall", "tenant", "--limit", "0"],
        vec!["recall", "tenant", "-n", "1001"],
        vec!["recall", "tenant", "--limit=-3"],
        vec!["sessions", "-n", "1000001"],
        vec!["sessions", "-n", "many"],
    ] {
        let out = sb.run(&args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stdout);
        assert!(
            out.stderr.contains("must be a whole number from 1 to"),
            "{args:?}: {}",
            out.stderr
        );
    }
    assert_eq!(
        ids(&sb.ok(&["sessions", "-n", "1", "--json"]).json()).len(),
        1
    );
    sb.ok(&["sessions", "-n", "1000000"]);
    sb.ok(&["recall", "tenant", "-n", "1000"]);
}

#[test]
fn signed_and_absurd_dates_are_errors() {
    let sb = indexed();
    for (args, says) in [
        (vec!["sessions", "--since", "-7d"], "no sign"),
        (vec!["recall", "tenant", "--until", "+2w"], "no sign"),
        (
            vec!["sessions", "--since", "99999999999d"],
            "too long an age",
        ),
        (vec!["sessions", "--until", "300000-01-01"], "out of range"),
        (vec!["forget", "--before", "-1d", "--yes"], "no sign"),
        (vec!["sessions", "--since=-7d"], "no sign"),
    ] {
        let out = sb.run(&args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stdout);
        let e = error_line(&out);
        assert!(e.contains(says), "{args:?}: {e}");
        assert!(e.starts_with("--"), "names the flag: {e}");
    }
    assert_eq!(ids(&sb.ok(&["sessions", "--json"]).json()).len(), 2);
    assert_eq!(
        ids(&sb.ok(&["sessions", "--since", "36500d", "--json"]).json()).len(),
        2
    );
}

/// A sandbox with the guide's `hello` reader and `.hello` transcripts in
/// folders named `folders` (one session each, named after the folder, `a_b`
/// → `hello-a_b`), and `many` sessions `s01`... in `notes/many`, indexed.
fn hello(folders: &[&str], many: usize) -> Sandbox {
    let sb = Sandbox::new();
    install_plugin(
        &test_plugins().join(lib_name("deja_plugin_hello")),
        &sb.plugin_dir(),
    );
    sb.config("[embed]\nenabled = false\n[harness.hello]\nroots = [\"~/notes\"]\n");
    for f in folders {
        sb.write(
            &format!("notes/{f}/{f}.hello"),
            format!("user: what is in {f}?\nassistant: notes about {f}\n"),
        );
    }
    for i in 1..=many {
        sb.write(
            &format!("notes/many/s{i:02}.hello"),
            "user: one of many\nassistant: yes\n",
        );
    }
    sb.index();
    sb
}

#[test]
fn project_folder_names_match_exactly() {
    let sb = hello(
        &["a_b", "axb", "50%", "500", "Billing", "billing", "x\\y"],
        0,
    );
    let dir = sb.home.join("notes");
    for (project, want) in [
        ("a_b", vec!["hello-a_b"]),
        ("axb", vec!["hello-axb"]),
        ("50%", vec!["hello-50%"]),
        ("500", vec!["hello-500"]),
        ("billing", vec!["hello-billing"]),
        ("Billing", vec!["hello-Billing"]),
        ("x\\y", vec!["hello-x\\y"]),
    ] {
        let got = ids(&sb.ok(&["sessions", "--project", project, "--json"]).json());
        assert_eq!(got, want, "--project {project}");
        // A directory, with or without a trailing slash.
        let full = dir.join(project);
        for p in [
            full.to_str().unwrap().to_string(),
            format!("{}/", full.display()),
        ] {
            let got = ids(&sb.ok(&["sessions", "--project", &p, "--json"]).json());
            assert_eq!(got, want, "--project {p}");
        }
    }
    // The last components of a directory match too, exactly.
    let got = ids(&sb
        .ok(&["sessions", "--project", "notes/a_b", "--json"])
        .json());
    assert_eq!(got, vec!["hello-a_b"]);
    for project in ["BILLING", "a%", "_xb", "%", "otes/a_b", "a_"] {
        let out = sb.run(&["sessions", "--project", project]);
        assert_eq!(out.code, 2, "--project {project}: {}", out.stdout);
        assert!(out.stderr.contains("case-sensitive"), "{}", out.stderr);
    }
}

#[test]
fn ids_resolve_by_any_unique_prefix_of_either_id() {
    let sb = hello(&["three", "thirty"], 12);
    // deja's id is `hello-<stem>`, the harness's id `<stem>`.
    for id in ["hello-three", "three", "hello-thre", "thre", "hello-thr"] {
        let shown = sb.ok(&["show", id, "--json"]).json();
        assert_eq!(shown["id"], "hello-three", "{id}");
    }
    // resume finds it by the harness's prefix too (the reader then refuses).
    let out = sb.run(&["resume", "thre"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("cannot be reopened"), "{}", out.stderr);

    // Ambiguous: every match is listed, up to ten, then how many more.
    let out = sb.run(&["show", "th"]);
    assert_eq!(out.code, 2);
    let e = &out.stderr;
    assert!(e.contains("`th` matches 2 sessions"), "{e}");
    assert!(
        e.contains("hello-three") && e.contains("hello-thirty"),
        "{e}"
    );
    assert!(!e.contains("... and"), "{e}");
    let out = sb.run(&["show", "s"]);
    assert_eq!(out.code, 2);
    let e = &out.stderr;
    assert!(e.contains("`s` matches 12 sessions"), "{e}");
    assert_eq!(e.matches("hello-s").count(), 10, "{e}");
    assert!(e.contains("... and 2 more"), "{e}");
    let out = sb.run(&["show", "hello-"]);
    assert!(out.stderr.contains("matches 14 sessions") && out.stderr.contains("and 4 more"));
    let out = sb.run(&["show", ""]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("empty"), "{}", out.stderr);

    // forget takes the harness's prefix as well.
    let out = sb.ok(&["forget", "s12"]);
    assert!(out.stderr.contains("forgot 1 session;"), "{}", out.stderr);
    let out = sb.run(&["forget", "s0"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("matches 9 sessions"), "{}", out.stderr);
    sb.ok(&["forget", "thir"]);
    let left = ids(&sb.ok(&["sessions", "--json"]).json());
    assert!(!left.contains(&"hello-thirty".to_string()), "{left:?}");
    assert_eq!(left.len(), 12, "{left:?}");
}
