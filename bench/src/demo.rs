//! The demo paraphrases (`fixtures/demo/queries.tsv`) as a second quality
//! check beside LoCoMo: queries that share no word with their session, which
//! a lexical-heavy tuning tuned on LoCoMo alone would lose.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result};
use deja_config::Mode;
use deja_recall::{Candidates, Signals, Tuning};
use deja_store::SessionFilter;

use crate::engine::engine;
use crate::env::BenchEnv;

/// One query row for one mode.
pub struct Row {
    /// The query.
    pub query: String,
    /// The mode.
    pub mode: Mode,
    /// `aider:<folder>:<time>` or `gemini:<sessionId>`.
    pub expected: String,
}

/// The indexed demo with its queries' signals.
pub struct DemoSet {
    /// Rows.
    pub rows: Vec<Row>,
    signals: Vec<Signals>,
    /// Session row → (harness, deja id, project name).
    sessions: HashMap<i64, (String, String, String)>,
    _env: BenchEnv,
}

fn parse_mode(m: &str) -> Result<Mode> {
    Ok(match m {
        "semantic" => Mode::Semantic,
        "hybrid" => Mode::Hybrid,
        "lexical" => Mode::Lexical,
        other => anyhow::bail!("unknown mode `{other}` in queries.tsv"),
    })
}

/// Indexes the demo fixtures and gathers every row's signals.
pub fn prepare(deja: &Path, repo: &Path) -> Result<DemoSet> {
    let mut env = BenchEnv::new(deja, "")?;
    env.set("DEJA_AIDER_ROOTS", repo.join("fixtures/demo/aider"));
    env.set("DEJA_GEMINI_ROOT", repo.join("fixtures/demo/gemini"));
    env.run(&["index"])?;
    let table = std::fs::read_to_string(repo.join("fixtures/demo/queries.tsv"))
        .context("reading fixtures/demo/queries.tsv")?;
    let mut rows = Vec::new();
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        anyhow::ensure!(cols.len() >= 3, "bad queries.tsv line: {line}");
        for m in cols[0].split('+') {
            rows.push(Row {
                query: cols[1].to_string(),
                mode: parse_mode(m)?,
                expected: cols[2].to_string(),
            });
        }
    }
    let mut e = engine(&env.database(), &env.vectors())?;
    let mut signals = Vec::new();
    for r in &rows {
        let qv = e.embedder.embed_query(&r.query)?;
        signals.push(deja_recall::gather(
            &e.store,
            &r.query,
            r.mode,
            &Candidates::default(),
            Some((&e.vectors(), qv.as_slice())),
            100,
        )?);
    }
    let sessions = e
        .store
        .sessions(&SessionFilter::default(), None)?
        .into_iter()
        .map(|s| (s.row, (s.harness, s.id, s.project.name.unwrap_or_default())))
        .collect();
    Ok(DemoSet {
        rows,
        signals,
        sessions,
        _env: env,
    })
}

impl DemoSet {
    /// Each row with the evidence its query was ranked with.
    pub fn evidence(&self) -> impl Iterator<Item = (&Row, &Signals)> {
        self.rows.iter().zip(&self.signals)
    }

    fn is_expected(&self, session: i64, expected: &str) -> bool {
        let Some((harness, id, project)) = self.sessions.get(&session) else {
            return false;
        };
        match expected.split_once(':') {
            Some(("gemini", sid)) => harness == "gemini" && id.starts_with(sid),
            Some(("aider", rest)) => {
                let Some((folder, time)) = rest.split_once(':') else {
                    return false;
                };
                let digits: String = time.chars().filter(|c| c.is_ascii_digit()).collect();
                let (date, clock) = digits.split_at(digits.len().min(8));
                harness == "aider" && project == folder && id.ends_with(&format!("{date}T{clock}"))
            }
            _ => false,
        }
    }

    /// Rows whose first hit is the expected session under `tuning`.
    pub fn passed(&self, tuning: &Tuning) -> (usize, usize, Vec<String>) {
        let mut ok = 0;
        let mut failed = Vec::new();
        for (row, s) in self.rows.iter().zip(&self.signals) {
            let ranked = deja_recall::rank(s, tuning);
            let first = ranked.first().and_then(|(id, _)| s.session_of.get(id));
            if first.is_some_and(|x| self.is_expected(*x, &row.expected)) {
                ok += 1;
            } else {
                failed.push(format!("{} `{}`", row.mode.as_str(), row.query));
            }
        }
        (ok, self.rows.len(), failed)
    }
}
