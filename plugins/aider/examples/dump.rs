//! Prints what the aider reader makes of history files, for reading by eye:
//! `cargo run -p deja-plugin-aider --example dump -- FILE...`.

use deja_plugin_aider::AiderReader;
use deja_plugin_api::{HostContext, ParseRequest, Reader, Role};

fn main() {
    let context = HostContext {
        home: "/nonexistent".into(),
        env: Vec::new().into(),
        config_json: r#"{"timezone":"UTC"}"#.into(),
    };
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
        match AiderReader::parse(&request) {
            Ok(output) => print_output(&path, &output),
            Err(e) => eprintln!("{path}: {e}"),
        }
    }
}

fn print_output(path: &str, output: &deja_plugin_api::ParseOutput) {
    println!(
        "=== {path}: {} sessions, {} skipped, warnings {:?}",
        output.sessions.len(),
        output.skipped_empty,
        output.warnings
    );
    for session in &output.sessions {
        println!(
            "--- session {} ({} messages)",
            session.id,
            session.messages.len()
        );
        for m in &session.messages {
            let who = match m.role {
                Role::User => "USER",
                Role::Assistant => "ASSISTANT",
            };
            println!("[{who}]\n{}\n", m.text);
        }
        for f in &session.files {
            println!("[FILE {}] {}", f.action.as_str(), f.path);
        }
        for c in &session.commands {
            println!("[COMMAND {}] {}", c.origin.as_str(), c.command);
        }
    }
}
