//! Fuzzes the Codex CLI reader, as a live rollout and as a file of another
//! name: any bytes must parse without panicking, parsing twice gives the same
//! sessions, and a prefix cut at a line end reads as a prefix of the whole
//! (what a rollout Codex is still writing looks like).
#![no_main]

use deja_plugin_api::{HostContext, ParseRequest, Reader};
use deja_plugin_codex::CodexReader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let context = HostContext {
        home: "/home/fuzz".into(),
        env: Default::default(),
        config_json: "{}".into(),
    };
    let path = if data.first().is_some_and(|b| b & 1 == 0) {
        "/home/fuzz/.codex/sessions/2026/07/17/rollout-2026-07-17T11-00-00-019f0000-0000-7000-8000-000000000001.jsonl"
    } else {
        "/home/fuzz/copy.jsonl"
    };
    let parse = |bytes: &[u8]| {
        CodexReader::parse(&ParseRequest {
            path: path.into(),
            bytes: bytes.into(),
            modified_ms: 1_767_225_600_000,
            context: &context,
        })
    };
    let first = parse(data);
    let second = parse(data);
    assert_eq!(first, second, "parsing is not deterministic");
    let _ = CodexReader::detect(path, data);

    // The prefix ending at the middle line end reads as a prefix of the whole
    // (for UTF-8: in UTF-16, which Codex never writes, a 0x0A byte ends no line).
    if data.starts_with(&[0xFF, 0xFE]) || data.starts_with(&[0xFE, 0xFF]) {
        return;
    }
    let ends: Vec<usize> = data
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    if let (Some(&end), Ok(whole)) = (ends.get(ends.len() / 2), first) {
        if let Ok(part) = parse(&data[..end]) {
            if let (Some(p), Some(w)) = (part.sessions.first(), whole.sessions.first()) {
                assert_eq!(p.id, w.id);
                assert!(p.messages.len() <= w.messages.len());
                assert_eq!(&w.messages.as_slice()[..p.messages.len()], p.messages.as_slice());
            }
        }
    }
});
