//! Fuzzes the Qwen Code reader: any bytes must parse without panicking,
//! parsing twice gives the same sessions, and detection never panics.
#![no_main]

use deja_plugin_api::{HostContext, ParseRequest, Reader};
use deja_plugin_qwen::QwenReader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let context = HostContext {
        home: "/home/fuzz".into(),
        env: Default::default(),
        config_json: "{}".into(),
    };
    let path = "/home/fuzz/.qwen/projects/fuzz-app/chats/0f18b3b3-7342-4d89-826c-b78fc1922f6c.jsonl";
    let request = ParseRequest {
        path: path.into(),
        bytes: data.into(),
        modified_ms: 1_767_225_600_000,
        context: &context,
    };
    let first = QwenReader::parse(&request);
    let second = QwenReader::parse(&request);
    assert_eq!(first, second, "parsing is not deterministic");
    let _ = QwenReader::detect(path, data);
});
