//! Whatever the bytes of a `CURRENT` file, and whatever cut of the real
//! session's journal is on disk, the reader never panics, and a cut journal
//! reads as a prefix of the session.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;

use deja_plugin_api::testing;
use deja_plugin_vibe::VibeReader;
use proptest::prelude::*;

const ID: &str = "6dcfcba8-ee51-aed8-cfeb-812cb6151a2a";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let context = testing::empty_context();
        let _ = testing::parse_bytes::<VibeReader>("/nowhere/unified/s/CURRENT", &bytes, 0, &context);
    }

    #[test]
    fn a_cut_journal_reads_as_a_prefix(cut in 0usize..75_711) {
        let real = testing::fixtures("vibe").join("real-3.0.2/unified").join(ID);
        let base = std::env::temp_dir().join(format!("deja-vibe-prop-{}-{cut}", std::process::id()));
        let dir = base.join(ID);
        for file in testing::walk(&real) {
            let to = dir.join(file.strip_prefix(&real).unwrap());
            fs::create_dir_all(to.parent().unwrap()).unwrap();
            fs::copy(&file, &to).unwrap();
        }
        // As before the second snapshot, with the journal cut at `cut`.
        let current = dir.join("CURRENT");
        let text = fs::read_to_string(&current).unwrap()
            .replace("0000000000000042", "0000000000000021")
            .replace("\"snapshot_sequence\":42", "\"snapshot_sequence\":21");
        fs::write(&current, text).unwrap();
        let journal = dir.join("journal/0000000000000022.jsonl");
        let bytes = fs::read(&journal).unwrap();
        fs::write(&journal, &bytes[..cut.min(bytes.len())]).unwrap();

        let context = testing::empty_context();
        let whole = testing::parse_file::<VibeReader>(&real.join("CURRENT"), &context);
        let cut_out = testing::parse_file::<VibeReader>(&current, &context);
        let whole: Vec<String> = whole.sessions[0].messages.iter().map(|m| m.text.to_string()).collect();
        let got: Vec<String> = cut_out.sessions[0].messages.iter().map(|m| m.text.to_string()).collect();
        prop_assert!(got.len() >= 3 && whole.starts_with(&got), "{got:?}");
        fs::remove_dir_all(base).unwrap();
    }
}
