//! Fuzzes the VS Code change-log replay with key paths of any length, far
//! past libFuzzer's default input size: the first three bytes give the
//! length of an entry's path (up to 16 million keys, capped at 300,000, a
//! 300 KB line and more), the fourth its kind, the rest more lines of the
//! log. Reading must give the session or an error, never a crash (a path
//! as deep as the document could grow would overflow the stack on drop).
#![no_main]

use deja_plugin_api::{EnvVar, HostContext, ParseRequest, Reader, DESCRIPTION_VAR};
use deja_plugin_toml::{TomlReader, BUILTIN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<4>() else {
        return;
    };
    let keys = (usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]))
        .min(300_000);
    let kind = 1 + head[3] % 3;
    let path = vec!["\"x\""; keys].join(",");
    let mut log = String::from(
        "{\"kind\":0,\"v\":{\"version\":3,\"sessionId\":\"s\",\"initialLocation\":\"panel\",\"requests\":[]}}\n",
    );
    log.push_str(&format!("{{\"kind\":{kind},\"k\":[{path}],\"v\":[1]}}\n"));
    log.push_str(&String::from_utf8_lossy(rest));
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
    let request = ParseRequest {
        path: "/nonexistent/fuzz/chatSessions/s.jsonl".into(),
        bytes: log.as_bytes().into(),
        modified_ms: 1_767_225_600_000,
        context: &context,
    };
    let _ = TomlReader::parse(&request);
});
