//! A `text` source, read by a description of its own: a plain text log in
//! which marker lines begin the records, the header's fields as the
//! session's, `strip` leaving blocks out of a message's text, times in the
//! marker, text outside any record, and the checks that name a mistake's
//! key.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::Path;

use deja_plugin_api::{testing, EnvVar, HostContext, ParseOutput, ParseRequest, Reader, Role};
use deja_plugin_toml::TomlReader;

/// A journal: `Title: ...` and `Where: ...` lines, then turns that each
/// begin with `== me ==` or `== bot @ <time> ==`; `[[aside]] ... [[/aside]]`
/// blocks are notes the journal adds itself.
const JOURNAL: &str = r#"
[reader]
harness = "journal"

[files]
roots = ["~/.journal"]
glob = ["*.log"]

[source]
kind = "text"
marker = '^== (?P<who>me|bot)(?: @ (?P<at>[0-9T:Z-]+))? ==$'
header = ['^Title: (?P<title>.+)$', '^Where: (?P<dir>.+)$', '^Title: (?P<second>.+)$']

[session]
title = "/title"
project = "/dir"

[message]
role = "/who"
roles = { user = "me", assistant = "bot" }
text = "/text"
time = "/at"
strip = ['(?s)\[\[aside\]\].*?\[\[/aside\]\]\n*']
"#;

const LOG: &str = "\
Title: Otters and rivers
Where: /home/me/otters
Title: a second title, not read
Some text before any turn.

== me ==
Do otters hold hands?

== bot @ 2026-01-02T03:04:05Z ==
[[aside]]
looked it up
== me ==
(inside an aside: not a turn of its own? it is: markers win)
[[/aside]]
They do, while they sleep.

== me ==


== bot ==
Sea otters, mostly.
";

fn context(text: &str) -> HostContext {
    let mut c = testing::context(Path::new("/nonexistent"), &[], "{}");
    c.env.push(EnvVar {
        key: deja_plugin_api::DESCRIPTION_VAR.into(),
        value: text.into(),
    });
    c
}

fn parse(text: &str, log: &str) -> ParseOutput {
    TomlReader::parse(&ParseRequest {
        path: "/home/me/.journal/otters.log".into(),
        bytes: log.as_bytes().into(),
        modified_ms: 1_000,
        context: &context(text),
    })
    .unwrap()
}

#[test]
fn marker_lines_begin_records_and_the_header_gives_the_session() {
    let log = LOG.replace(
        "[[aside]]\nlooked it up\n== me ==\n(inside an aside: not a turn of its own? it is: markers win)\n[[/aside]]\n",
        "[[aside]]\nlooked it up\n[[/aside]]\n",
    );
    let out = parse(JOURNAL, &log);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.native_id.as_str(), "otters");
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        deja_plugin_api::ROption::RSome("Otters and rivers")
    );
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        deja_plugin_api::ROption::RSome("/home/me/otters")
    );
    let said: Vec<(Role, &str)> = s
        .messages
        .iter()
        .map(|m| (m.role, m.text.as_str()))
        .collect();
    // The empty turn is no message; the aside is left out.
    assert_eq!(
        said,
        [
            (Role::User, "Do otters hold hands?"),
            (Role::Assistant, "They do, while they sleep."),
            (Role::Assistant, "Sea otters, mostly."),
        ]
    );
    let at = s.messages[1].timestamp_ms;
    assert_eq!(at, 1_767_323_045_000);
    assert_eq!(s.updated_at_ms, at);
}

#[test]
fn a_marker_line_always_begins_a_record() {
    // A marker inside a block still begins a record: the block is cut in
    // two and `strip`, which reads one record's text, finds no whole block.
    let out = parse(JOURNAL, LOG);
    let s = &out.sessions[0];
    let roles: Vec<Role> = s.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::User, Role::Assistant]
    );
    assert_eq!(s.messages[1].text.as_str(), "[[aside]]\nlooked it up");
}

#[test]
fn a_file_without_markers_has_no_messages() {
    let out = parse(JOURNAL, "Title: nothing said\n\njust notes\n");
    assert!(out.sessions.is_empty());
    assert_eq!(out.skipped_empty, 1);
}

#[test]
fn mistakes_name_their_key() {
    let cases = [
        (
            JOURNAL.replace("marker = '", "# marker = '"),
            "source.marker",
        ),
        (
            JOURNAL.replace(
                "'^== (?P<who>me|bot)(?: @ (?P<at>[0-9T:Z-]+))? ==$'",
                "'^== (me|bot) ==$'",
            ),
            "source.marker",
        ),
        (
            JOURNAL.replace("'^== (?P<who>", "'^== (?P<who"),
            "source.marker",
        ),
        (
            JOURNAL.replace("kind = \"text\"", "kind = \"jsonl\""),
            "source.marker",
        ),
        (
            JOURNAL
                .replace("kind = \"text\"", "kind = \"jsonl\"")
                .replace("marker = '", "# marker = '"),
            "source.header",
        ),
        (
            JOURNAL.replace("kind = \"text\"", "kind = \"text\"\nrecords_at = \"/x\""),
            "source.records_at",
        ),
    ];
    for (text, key) in cases {
        let error = match deja_plugin_toml::description::parse("journal.toml", &text) {
            Ok(_) => panic!("{key}: the mistake was not found"),
            Err(e) => e.to_string(),
        };
        assert!(error.contains(&format!("key `{key}`")), "{key}: {error}");
    }
    assert!(deja_plugin_toml::description::parse("journal.toml", JOURNAL).is_ok());
}
