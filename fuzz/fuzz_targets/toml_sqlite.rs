//! Fuzzes the TOML reader's SQLite source with the Crush description: the
//! input is SQL run into an empty database (tables, views, triggers, rows:
//! a recursive view in place of `sessions` is one line of it), or, when it
//! starts with SQLite's magic, the database file itself. Reading must give
//! sessions or an error, never a panic, within the reader's deadline.
#![no_main]

use std::time::{Duration, Instant};

use deja_plugin_api::{EnvVar, HostContext, ParseRequest, Reader, DESCRIPTION_VAR};
use deja_plugin_toml::{TomlReader, BUILTIN};
use libfuzzer_sys::fuzz_target;
use rusqlite::Connection;

/// The database the input describes, as bytes.
fn database(data: &[u8]) -> Option<Vec<u8>> {
    if data.starts_with(b"SQLite format 3\0") {
        return Some(data.to_vec());
    }
    let sql = std::str::from_utf8(data).ok()?;
    let mut conn = Connection::open_in_memory().ok()?;
    // The input's own statements may not end either: they get 200 ms.
    let handle = conn.get_interrupt_handle();
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let watch = std::thread::spawn(move || {
        if stopped.recv_timeout(Duration::from_millis(200)).is_err() {
            handle.interrupt();
        }
    });
    let _ = conn.execute_batch(sql);
    drop(stop);
    let _ = watch.join();
    conn.serialize(rusqlite::MAIN_DB).ok().map(|d| d.to_vec())
}

fuzz_target!(|data: &[u8]| {
    let Some(bytes) = database(data) else {
        return;
    };
    let context = HostContext {
        home: "/home/fuzz".into(),
        env: vec![EnvVar {
            key: DESCRIPTION_VAR.into(),
            value: BUILTIN
                .iter()
                .find(|(name, _)| *name == "crush.toml")
                .map_or("", |(_, text)| text)
                .into(),
        }]
        .into(),
        config_json: "{}".into(),
    };
    let request = ParseRequest {
        path: "/nonexistent/fuzz/.crush/crush.db".into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 1_767_225_600_000,
        context: &context,
    };
    let started = Instant::now();
    let _ = TomlReader::parse(&request);
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "reading ran past its deadline"
    );
});
