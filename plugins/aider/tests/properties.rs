//! Properties of the aider reader over generated input: any bytes parse
//! without panicking, parsing is deterministic, and appending sessions to a
//! history never changes the ids or messages of the sessions already in it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use deja_plugin_aider::AiderReader;
use deja_plugin_api::{HostContext, ParseOutput, ParseRequest, Reader};
use proptest::prelude::*;

const PATH: &str = "/home/dev/project/.aider.chat.history.md";

fn parse(bytes: &[u8]) -> ParseOutput {
    let context = HostContext {
        home: "/home/dev".into(),
        env: Vec::new().into(),
        config_json: r#"{"timezone":"Europe/Berlin"}"#.into(),
    };
    let request = ParseRequest {
        path: PATH.into(),
        bytes: bytes.into(),
        modified_ms: 1_767_225_600_000,
        context: &context,
    };
    AiderReader::parse(&request).expect("parse never fails on content")
}

/// A line of a session's body, in aider's shapes.
fn line() -> impl Strategy<Value = String> {
    let words = "[a-zA-Z0-9_ .,:;!?/(){}<>=+-]{0,40}";
    prop_oneof![
        words.prop_map(|w| format!("#### {w}  ")),
        words.prop_map(|w| format!("> {w}  ")),
        words.prop_map(|w| format!("> {w}")),
        words.prop_map(|w| w.to_string()),
        Just(String::new()),
        Just("```".to_string()),
        Just("````python".to_string()),
        words.prop_map(|w| format!("#### /run {w}  ")),
        words.prop_map(|w| format!("#### /add {w}  ")),
        words.prop_map(|w| format!("> Applied edit to {w}  ")),
        Just("#### <blank>  ".to_string()),
        Just("####   ".to_string()),
    ]
}

/// One launch: a header (valid or not) and a body.
fn session() -> impl Strategy<Value = String> {
    let header = prop_oneof![
        (
            2020u32..2030,
            1u32..13,
            1u32..29,
            0u32..24,
            0u32..60,
            0u32..60
        )
            .prop_map(|(y, mo, d, h, mi, s)| format!(
                "# aider chat started at {y}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}"
            )),
        Just("# aider chat started at not a date".to_string()),
    ];
    (header, prop::collection::vec(line(), 0..25)).prop_map(|(h, body)| {
        let mut s = format!("\n{h}\n\n");
        for l in body {
            s.push_str(&l);
            s.push('\n');
        }
        s
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn any_bytes_parse_and_parsing_is_deterministic(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        let first = parse(&bytes);
        let second = parse(&bytes);
        prop_assert_eq!(first, second);
    }

    #[test]
    fn generated_histories_parse_deterministically(sessions in prop::collection::vec(session(), 1..6)) {
        let text: String = sessions.concat();
        prop_assert_eq!(parse(text.as_bytes()), parse(text.as_bytes()));
    }

    #[test]
    fn appending_sessions_never_changes_those_already_there(
        before in prop::collection::vec(session(), 1..5),
        after in prop::collection::vec(session(), 1..4),
        crlf in any::<bool>(),
    ) {
        let eol = |s: String| if crlf { s.replace('\n', "\r\n") } else { s };
        let old = eol(before.concat());
        let grown = format!("{old}{}", eol(after.concat()));
        let old_sessions = parse(old.as_bytes()).sessions;
        let new_sessions = parse(grown.as_bytes()).sessions;
        for s in old_sessions.iter() {
            let same = new_sessions.iter().find(|n| n.id == s.id);
            prop_assert!(same.is_some(), "session {} disappeared", s.id);
            let same = same.unwrap();
            prop_assert_eq!(&same.messages, &s.messages, "messages of {} changed", s.id);
            prop_assert_eq!(same.started_at_ms, s.started_at_ms);
        }
    }
}

/// The append property above compares what the shorter file read with what
/// the longer one reads: it proves something only for generated histories that
/// hold a session with messages. At least a quarter of them must.
#[test]
fn generated_histories_often_hold_a_session_the_append_property_can_check() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let strategy = prop::collection::vec(session(), 1..5);
    let mut runner = TestRunner::deterministic();
    let mut with_messages = 0;
    for _ in 0..200 {
        let generated = strategy.new_tree(&mut runner).unwrap().current();
        let output = parse(generated.concat().as_bytes());
        if output.sessions.iter().any(|s| !s.messages.is_empty()) {
            with_messages += 1;
        }
    }
    println!("{with_messages} of 200 generated histories hold a session with messages");
    assert!(
        with_messages >= 50,
        "only {with_messages} of 200 generated histories hold a session with messages"
    );
}
