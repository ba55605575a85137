//! The cost of recall's freshness pass (`recall.refresh`): cold lexical
//! `deja recall` processes on a generated corpus, with the pass skipped
//! (`--no-refresh`), with the pass and nothing changed, and with the pass and
//! one changed transcript (a session appended to an aider history before each
//! run). Lexical mode, so the figures are the pass's cost and not the model's.

use std::path::Path;

use anyhow::Result;

use crate::env::{percentiles, BenchEnv};
use crate::generate;
use crate::queries::QUERIES;

/// Cold latencies (p50, p95 ms) at one size.
#[derive(Debug, Clone, Copy)]
pub struct RefreshCost {
    /// Messages in the store.
    pub messages: usize,
    /// Transcripts.
    pub files: usize,
    /// `--no-refresh`.
    pub skipped: (f64, f64),
    /// The pass, nothing changed.
    pub unchanged: (f64, f64),
    /// The pass, one transcript changed.
    pub one_changed: (f64, f64),
}

fn timed(
    env: &BenchEnv,
    runs: usize,
    extra: &[&str],
    before: &mut dyn FnMut(usize) -> Result<()>,
) -> Result<(f64, f64)> {
    let mut times = Vec::new();
    for i in 0..runs {
        before(i)?;
        let mut args = vec![
            "recall",
            "--mode",
            "lexical",
            QUERIES[i % QUERIES.len()],
            "-n",
            "10",
        ];
        args.extend_from_slice(extra);
        times.push(env.run(&args)?.wall.as_secs_f64() * 1000.0);
    }
    Ok(percentiles(times))
}

/// Measures at `messages`.
pub fn run(deja: &Path, messages: usize, runs: usize) -> Result<RefreshCost> {
    let mut env = BenchEnv::new(deja, "enabled = false\n")?;
    let g = generate::corpus(&env.home, messages, 42 + messages as u64)?;
    env.set("GEMINI_CLI_HOME", env.home.clone());
    env.run(&["index"])?;
    let skipped = timed(&env, runs, &["--no-refresh"], &mut |_| Ok(()))?;
    let unchanged = timed(&env, runs, &[], &mut |_| Ok(()))?;
    let home = env.home.clone();
    let one_changed = timed(&env, runs, &[], &mut |i| {
        generate::append_session(&home, 1000 + i as u64)
    })?;
    Ok(RefreshCost {
        messages: g.messages,
        files: g.files,
        skipped,
        unchanged,
        one_changed,
    })
}

/// The Markdown table.
pub fn table(rows: &[RefreshCost]) -> String {
    use std::fmt::Write as _;
    let mut s = String::from("| messages | transcripts | `--no-refresh` p50 / p95 ms | refresh, nothing changed | refresh, one transcript changed |\n|---|---|---|---|---|\n");
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} / {:.0} | {:.0} / {:.0} | {:.0} / {:.0} |",
            r.messages,
            r.files,
            r.skipped.0,
            r.skipped.1,
            r.unchanged.0,
            r.unchanged.1,
            r.one_changed.0,
            r.one_changed.1
        );
    }
    s
}
