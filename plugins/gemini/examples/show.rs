//! Prints what the reader makes of Gemini chat files, one line per message
//! and record, to compare with the raw JSON by eye:
//! `cargo run -p deja-plugin-gemini --example show -- FILE...`

use deja_plugin_api::{HostContext, ParseRequest, Reader, Session};
use deja_plugin_gemini::GeminiReader;

fn main() {
    let context = HostContext::from_process("/nonexistent-home", "{}");
    for path in std::env::args().skip(1) {
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let request = ParseRequest {
            path: path.as_str().into(),
            bytes: bytes.as_slice().into(),
            modified_ms: 0,
            context: &context,
        };
        match <GeminiReader as Reader>::parse(&request) {
            Ok(output) => {
                println!("== {path}");
                println!(
                    "   skipped_empty={} warnings={:?}",
                    output.skipped_empty, output.warnings
                );
                output.sessions.iter().for_each(show);
            }
            Err(e) => eprintln!("{path}: {e}"),
        }
    }
}

fn show(s: &Session) {
    println!(
        "   id={} native={} precedence={}",
        s.id, s.native_id, s.precedence
    );
    println!(
        "   started={} updated={} title={:?} parent={:?}",
        stamp(s.started_at_ms),
        stamp(s.updated_at_ms),
        s.title,
        s.parent_id
    );
    println!("   project={:?}", s.project);
    for m in s.messages.iter() {
        let text: String = m.text.chars().take(140).collect();
        println!(
            "   [{:?} {}] {}",
            m.role,
            stamp(m.timestamp_ms),
            text.replace('\n', "⏎")
        );
    }
    for f in s.files.iter() {
        println!(
            "   file {} {} {}",
            f.action.as_str(),
            stamp(f.timestamp_ms),
            f.path
        );
    }
    for c in s.commands.iter() {
        let command: String = c.command.chars().take(140).collect();
        println!(
            "   cmd {} {}",
            stamp(c.timestamp_ms),
            command.replace('\n', "⏎")
        );
    }
}

fn stamp(ms: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_else(|| ms.to_string())
}
