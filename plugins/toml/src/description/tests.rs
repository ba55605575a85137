//! Tests of reading descriptions: every check names the file, the line and
//! the key.

use super::*;

const MINIMAL: &str = r#"
[reader]
harness = "tiny"

[files]
roots = ["~/.tiny"]
glob = ["**/*.jsonl"]

[source]
kind = "jsonl"

[message]
role = "/role"
text = "/text"
"#;

#[test]
fn a_minimal_description_reads() {
    let d = parse("tiny.toml", MINIMAL).unwrap();
    assert_eq!(d.reader.harness.0, "tiny");
    assert_eq!(d.source.kind, Kind::Jsonl);
    assert_eq!(d.message[0].roles.user.0, vec!["user"]);
}

#[test]
fn a_bad_pointer_names_the_file_line_and_key() {
    let text = MINIMAL.replace("role = \"/role\"", "role = \"role\"");
    let e = parse("tiny.toml", &text).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("message.role"), "{e}");
    assert_eq!(e.line, Some(13), "{e}");
    assert!(
        e.to_string()
            .starts_with("reader description `tiny.toml`, line 13, key `message.role`: "),
        "{e}"
    );
    assert!(e.message.contains("starts with `/`"), "{e}");
}

#[test]
fn an_unknown_key_is_named() {
    let text = MINIMAL.replace("kind = \"jsonl\"", "kind = \"jsonl\"\nknd = 1");
    let e = parse("tiny.toml", &text).unwrap_err();
    assert!(e.message.contains("unknown field `knd`"), "{e}");
    assert_eq!(e.line, Some(11), "{e}");
}

#[test]
fn a_toml_syntax_error_has_its_line() {
    let text = MINIMAL.replace("[source]", "[source");
    let e = parse("tiny.toml", &text).unwrap_err();
    assert_eq!(e.line, Some(9), "{e}");
}

#[test]
fn keys_that_go_together_are_checked() {
    let text = MINIMAL.replace("kind = \"jsonl\"", "kind = \"sqlite\"");
    let e = parse("tiny.toml", &text).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("source.sessions"), "{e}");
    assert_eq!(e.line, Some(9), "{e}");
}

#[test]
fn a_bad_pattern_and_a_bad_harness_are_refused() {
    let text = MINIMAL.replace("harness = \"tiny\"", "harness = \"ti ny\"");
    assert!(parse("t", &text)
        .unwrap_err()
        .message
        .contains("invalid harness name"));
    let text = MINIMAL.replace("[source]", "[session]\ntitle_ignore = [\"(\"]\n\n[source]");
    let e = parse("t", &text).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("session.title_ignore[0]"), "{e}");
}

#[test]
fn session_times_read_from_records_paths_and_index_files() {
    let text = MINIMAL.replace(
        "[source]",
        "[session]\nstarted = [\"/created\", { file = \"sessions.json\", key = \"/sessionId\", at = \"/dateCreated\" }, { path = \"/(\\\\d+)\\\\.jsonl$\" }]\nupdated = { at = \"/text\", pattern = \"at (\\\\S+)\" }\n\n[source]",
    );
    let d = parse("t", &text).unwrap();
    assert!(matches!(&d.session.started, Some(TimeField::FirstOf(f)) if f.len() == 3));
    assert!(matches!(d.session.updated, Some(TimeField::Capture { .. })));
    // A pattern without a group, an absolute index file, a message time
    // that is a session's.
    for (bad, key) in [
        (
            "[session]\nstarted = { path = \"\\\\d+\" }",
            "session.started",
        ),
        (
            "[session]\nstarted = { file = \"/etc/x.json\", key = \"/id\", at = \"/t\" }",
            "session.started",
        ),
    ] {
        let text = MINIMAL.replace("[source]", &format!("{bad}\n\n[source]"));
        let e = parse("t", &text).unwrap_err();
        assert_eq!(e.key.as_deref(), Some(key), "{e}");
    }
    let text = MINIMAL.replace(
        "text = \"/text\"",
        "text = \"/text\"\ntime = { path = \"(\\\\d+)\" }",
    );
    let e = parse("t", &text).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("message[0].time"), "{e}");
    assert!(e.message.contains("session's time"), "{e}");
}

#[test]
fn in_match_needs_a_pattern() {
    let rule = "[[tools]]\nwhen = { \"/type\" = \"call\" }\ncommand = \"/text\"\nin_match = \"/command\"\n";
    let text = format!("{MINIMAL}\n{rule}");
    let e = parse("t", &text).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("tools[0].in_match"), "{e}");
    let text = format!("{MINIMAL}\n{rule}pattern = \"^@shell: (.*)$\"\n");
    assert!(parse("t", &text).is_ok());
}

#[test]
fn a_time_format_is_checked() {
    let with = |format: &str| {
        MINIMAL.replace(
            "[source]",
            &format!("[session]\nstarted = {{ path = \"__(.+)\\\\.json$\", format = \"{format}\" }}\n\n[source]"),
        )
    };
    assert!(parse("t", &with("%B_%d_%Y_%H-%M-%S")).is_ok());
    let e = parse("t", &with("%Q")).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("session.started"), "{e}");
}
