//! Fuzzes the TOML reader with the OpenCode description: any bytes handed
//! over as a database must give sessions or an error, never a panic, and
//! the same answer twice.
#![no_main]

use deja_plugin_api::{EnvVar, HostContext, ParseRequest, Reader, DESCRIPTION_VAR};
use deja_plugin_toml::{TomlReader, BUILTIN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let context = HostContext {
        home: "/home/fuzz".into(),
        env: vec![EnvVar {
            key: DESCRIPTION_VAR.into(),
            value: BUILTIN[0].1.into(),
        }]
        .into(),
        config_json: "{}".into(),
    };
    // No file at this path: the bytes are the database.
    let path = "/nonexistent/fuzz/opencode.db";
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
