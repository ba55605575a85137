//! Fuzzes the Claude Code reader, as a session's transcript and as a
//! subagent's: any bytes must parse without panicking, parsing twice gives
//! the same sessions, and what a prefix ending at a line end holds (Claude
//! Code appending while deja reads) is still there in the whole.
#![no_main]

use deja_plugin_api::{HostContext, ParseRequest, Reader};
use deja_plugin_claude::ClaudeReader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let context = HostContext {
        home: "/home/fuzz".into(),
        env: Default::default(),
        config_json: "{}".into(),
    };
    let path = if data.first().is_some_and(|b| b & 1 == 0) {
        "/home/fuzz/.claude/projects/-home-fuzz-app/11111111-2222-4333-8444-555555555555.jsonl"
    } else {
        "/home/fuzz/.claude/projects/-home-fuzz-app/11111111-2222-4333-8444-555555555555/subagents/agent-a1.jsonl"
    };
    let parse = |bytes: &[u8]| {
        ClaudeReader::parse(&ParseRequest {
            path: path.into(),
            bytes: bytes.into(),
            modified_ms: 1_767_225_600_000,
            context: &context,
        })
    };
    let first = parse(data);
    let second = parse(data);
    assert_eq!(first, second, "parsing is not deterministic");
    let _ = ClaudeReader::detect(path, data);
    // A prefix ending at a line end is what an earlier index saw, while
    // Claude Code was still appending: every session it found is still
    // there, with at least as many messages. (UTF-16 input is left out: a
    // cut at a `\n` byte need not be a character boundary there.)
    let utf16 = data.starts_with(&[0xFF, 0xFE]) || data.starts_with(&[0xFE, 0xFF]);
    if let (false, Some(cut)) = (utf16, data.iter().rposition(|&b| b == b'\n')) {
        if let (Ok(prefix), Ok(whole)) = (parse(&data[..cut + 1]), first) {
            for before in prefix.sessions.iter() {
                let after = whole.sessions.iter().find(|s| s.id == before.id);
                let after = after.unwrap_or_else(|| panic!("session {} vanished", before.id));
                assert!(after.messages.len() >= before.messages.len(), "messages vanished");
            }
        }
    }
});
