//! Fuzzes the aider reader: any bytes must parse without panicking, and
//! parsing twice gives the same sessions.
#![no_main]

use deja_plugin_aider::AiderReader;
use deja_plugin_api::{HostContext, ParseRequest, Reader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let context = HostContext {
        home: "/home/fuzz".into(),
        env: Default::default(),
        config_json: r#"{"timezone":"Europe/Berlin"}"#.into(),
    };
    let request = ParseRequest {
        path: "/home/fuzz/project/.aider.chat.history.md".into(),
        bytes: data.into(),
        modified_ms: 1_767_225_600_000,
        context: &context,
    };
    let first = AiderReader::parse(&request);
    let second = AiderReader::parse(&request);
    assert_eq!(first, second, "parsing is not deterministic");
    let _ = AiderReader::detect(request.path.as_str(), data);
});
