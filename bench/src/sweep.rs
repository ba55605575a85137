//! Embedding batch size and thread count: the real `deja index` of one
//! generated corpus, once per setting in a fresh HOME, timed and measured.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

use crate::env::{mb, BenchEnv, Cost};
use crate::generate;

/// One setting's run.
pub struct Row {
    /// `embed.batch_tokens`.
    pub batch_tokens: usize,
    /// `embed.threads` (0: one per core).
    pub threads: usize,
    /// Messages stored.
    pub messages: i64,
    /// What the index cost.
    pub cost: Cost,
}

/// Indexes the same `messages`-message corpus once per setting.
pub fn run(
    deja: &Path,
    messages: usize,
    batch_tokens: &[usize],
    threads: &[usize],
) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for &t in threads {
        for &b in batch_tokens {
            eprintln!("deja-bench: batch_tokens = {b}, threads = {t}");
            let mut env = BenchEnv::new(deja, &format!("batch_tokens = {b}\nthreads = {t}\n"))?;
            generate::corpus(&env.home, messages, 42 + messages as u64)?;
            env.set("GEMINI_CLI_HOME", env.home.clone());
            let cost = env.run(&["index"])?;
            let stored = deja_store::Store::open_read(&env.database())?
                .counts()?
                .messages;
            rows.push(Row {
                batch_tokens: b,
                threads: t,
                messages: stored,
                cost,
            });
        }
    }
    Ok(rows)
}

/// The sweep as a Markdown table.
pub fn table(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| embed.batch_tokens | embed.threads | messages | index s | msg/s | index peak RSS MB |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for r in rows {
        let secs = r.cost.wall.as_secs_f64();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.1} | {:.1} | {:.0} |",
            r.batch_tokens,
            if r.threads == 0 {
                "0 (one per core)".to_string()
            } else {
                r.threads.to_string()
            },
            r.messages,
            secs,
            r.messages as f64 / secs,
            mb(r.cost.peak_rss)
        );
    }
    s
}
