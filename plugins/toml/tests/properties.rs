//! Properties of every reader written in TOML that ships in-tree: any bytes
//! give sessions or an error and never a panic, and a JSONL transcript read
//! while it is still being written (cut at any line) gives a prefix of the
//! messages the whole file gives (a change log too).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{EnvVar, HostContext, ParseRequest, Reader, DESCRIPTION_VAR};
use deja_plugin_toml::{TomlReader, BUILTIN};
use proptest::prelude::*;

fn context(name: &str) -> HostContext {
    let text = BUILTIN.iter().find(|(n, _)| *n == name).unwrap().1;
    let mut c = testing::empty_context();
    c.env.push(EnvVar {
        key: DESCRIPTION_VAR.into(),
        value: text.into(),
    });
    c
}

fn texts(name: &str, path: &str, bytes: &[u8]) -> Vec<String> {
    let out = testing::parse_bytes::<TomlReader>(path, bytes, 0, &context(name));
    out.sessions
        .iter()
        .flat_map(|s| s.messages.iter().map(|m| m.text.to_string()))
        .collect()
}

#[test]
fn a_jsonl_transcript_cut_at_any_line_reads_as_a_prefix() {
    let cases = [
        (
            "copilot.toml",
            testing::fixtures("copilot").join("7c1e2f90-1b2c-4d5e-8f90-a1b2c3d4e5f6/events.jsonl"),
        ),
        (
            "pi.toml",
            testing::walk(&testing::fixtures("pi").join("rules")).remove(0),
        ),
        (
            "pi.toml",
            testing::walk(&testing::fixtures("pi").join("real-0.73.1")).remove(0),
        ),
        (
            "cursor.toml",
            testing::fixtures("cursor").join(
                "projects/Users-aidancunniffe-Desktop-testing-gitflows-git-ai/agent-transcripts/cursor-session-simple.jsonl",
            ),
        ),
        // A change log cut at a line is the document as it was then.
        (
            "copilot-chat.toml",
            testing::fixtures("copilot-chat").join(
                "User/workspaceStorage/5f3c9a/chatSessions/7de89a80-6d93-43e7-be0a-0a9afe980198.jsonl",
            ),
        ),
    ];
    for (name, file) in cases {
        let bytes = std::fs::read(&file).unwrap();
        let path = file.to_string_lossy().into_owned();
        let whole = texts(name, &path, &bytes);
        assert!(!whole.is_empty(), "{}", file.display());
        let cuts = bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i + 1);
        for cut in cuts {
            let part = texts(name, &path, &bytes[..cut]);
            assert!(
                whole.starts_with(&part),
                "{} cut at byte {cut}: {part:?} is not a prefix of {whole:?}",
                file.display()
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_bytes_never_panic_in_any_builtin_reader(bytes in proptest::collection::vec(any::<u8>(), 0..1024)) {
        for (name, _) in BUILTIN {
            let c = context(name);
            for path in ["/nowhere/a.jsonl", "/nowhere/s/s.messages.json", "/nowhere/x.db"] {
                let _ = TomlReader::parse(&ParseRequest {
                    path: path.into(),
                    bytes: bytes.as_slice().into(),
                    modified_ms: 0,
                    context: &c,
                });
                let _ = TomlReader::detect_in(&c, path, &bytes);
            }
        }
    }

    /// JSON documents shaped like the formats, with any values in them.
    #[test]
    fn any_json_values_never_panic(role in "[a-z]{0,10}", text in any::<String>(), n in any::<i64>()) {
        let docs = [
            serde_json::json!({"sessionId": text, "history": [{"message": {"role": role, "content": [{"type": "text", "text": n}]}, "toolCallStates": [{"parsedArgs": n}]}]}),
            serde_json::json!({"sessionId": n, "messages": [{"role": role, "content": text, "ts": text}], "system_prompt": n}),
            serde_json::json!({"type": "session", "id": n, "cwd": text, "parentSession": n, "timestamp": n}),
        ];
        for (name, _) in BUILTIN {
            let c = context(name);
            for doc in &docs {
                let bytes = doc.to_string();
                let _ = TomlReader::parse(&ParseRequest {
                    path: Path::new("/nowhere/x.json").to_str().unwrap().into(),
                    bytes: bytes.as_bytes().into(),
                    modified_ms: 0,
                    context: &c,
                });
            }
        }
    }
}
