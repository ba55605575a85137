//! Fuzzes the Gemini CLI reader, as JSONL and as legacy JSON: any bytes must
//! parse without panicking, and parsing twice gives the same sessions.
#![no_main]

use deja_plugin_api::{HostContext, ParseRequest, Reader};
use deja_plugin_gemini::GeminiReader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let context = HostContext {
        home: "/home/fuzz".into(),
        env: Default::default(),
        config_json: "{}".into(),
    };
    let path = if data.first().is_some_and(|b| b & 1 == 0) {
        "/home/fuzz/.gemini/tmp/app/chats/session-2026-07-17T09-00-0f18b3b3.jsonl"
    } else {
        "/home/fuzz/.gemini/tmp/app/chats/session-2026-07-17T09-00-0f18b3b3.json"
    };
    let request = ParseRequest {
        path: path.into(),
        bytes: data.into(),
        modified_ms: 1_767_225_600_000,
        context: &context,
    };
    let first = GeminiReader::parse(&request);
    let second = GeminiReader::parse(&request);
    assert_eq!(first, second, "parsing is not deterministic");
    let _ = GeminiReader::detect(path, data);
});
