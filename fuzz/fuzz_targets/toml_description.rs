//! Fuzzes reader descriptions: any text as a description must be read or
//! refused with an error naming the file, never panic.
#![no_main]

use deja_plugin_toml::description;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Err(e) = description::parse("fuzz.toml", &text) {
        assert!(e.to_string().starts_with("reader description `fuzz.toml`"));
    }
});
