//! Fuzzes the TOML reader with the VS Code Copilot Chat description: any
//! bytes read as a change log (or the document before it) must give
//! sessions or an error, never a panic, and the same answer twice.
#![no_main]

use deja_plugin_api::{EnvVar, HostContext, ParseRequest, Reader, DESCRIPTION_VAR};
use deja_plugin_toml::{TomlReader, BUILTIN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let context = HostContext {
        home: "/home/fuzz".into(),
        env: vec![EnvVar {
            key: DESCRIPTION_VAR.into(),
            value: BUILTIN
                .iter()
                .find(|(name, _)| *name == "copilot-chat.toml")
                .map_or("", |(_, text)| text)
                .into(),
        }]
        .into(),
        config_json: "{}".into(),
    };
    let path = "/nonexistent/fuzz/chatSessions/s.jsonl";
    let request = ParseRequest {
        path: path.into(),
        bytes: data.into(),
        modified_ms: 1_767_225_600_000,
        context: &context,
    };
    let first = TomlReader::parse(&request);
    let second = TomlReader::parse(&request);
    assert_eq!(first.is_ok(), second.is_ok(), "parsing is not deterministic");
    if let (Ok(a), Ok(b)) = (first, second) {
        assert_eq!(a, b, "parsing is not deterministic");
    }
    let _ = TomlReader::detect_in(&context, path, data);
});
