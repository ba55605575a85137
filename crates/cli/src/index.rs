//! `deja index`: takes the writer lock, runs the ingest pipeline and the
//! embedding pass with a progress bar on a terminal, and ends with a summary.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use deja_index::embedding::{Pass, PassProgress};
use deja_index::Progress;

use crate::app::App;
use crate::indexing::{index_all, Outcome, RunProgress, SCRUB_PENDING};
use crate::lock::Wait;
use crate::output::{self, Style};
use crate::{json, ExitStatus};

/// `deja index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Exit at once if another index is running, instead of waiting.
    #[arg(long)]
    pub no_wait: bool,
    /// Print a JSON summary.
    #[arg(long)]
    pub json: bool,
}

/// The progress bar of an index run (drawn on a terminal only).
pub(crate) struct Bar {
    bar: ProgressBar,
    /// Whether the second embedding pass is running.
    rest: bool,
}

impl Bar {
    /// A bar on stderr.
    pub(crate) fn new() -> Bar {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        // The rate and the time left are taken over the whole run so far, not
        // the last few steps: texts vary in length, so a recent rate swings.
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} {msg:12} [{bar:30}] {pos}/{len} {elapsed} ({rate}, about {left} left)",
        ) {
            let style = style
                .with_key(
                    "rate",
                    |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{:.1}/s", average_rate(state));
                    },
                )
                .with_key(
                    "left",
                    |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let rate = average_rate(state);
                        let rest = state.len().unwrap_or(0).saturating_sub(state.pos());
                        match rest as f64 / rate {
                            secs if rate > 0.0 && secs.is_finite() => {
                                let _ = write!(w, "{}", left(secs));
                            }
                            _ => {
                                let _ = write!(w, "?");
                            }
                        }
                    },
                );
            bar.set_style(style.progress_chars("=> "));
        }
        Bar { bar, rest: false }
    }
}

/// Steps per second over the whole run so far.
fn average_rate(state: &indicatif::ProgressState) -> f64 {
    let secs = state.elapsed().as_secs_f64();
    if secs > 0.0 {
        state.pos() as f64 / secs
    } else {
        0.0
    }
}

/// A duration left, for people: `40s`, `3m`, `1h 20m`.
fn left(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s.div_ceil(60)),
        _ => format!("{}h {}m", s / 3600, (s % 3600) / 60),
    }
}

impl Progress for Bar {
    fn transcripts(&mut self, total: usize) {
        self.bar.set_length(total as u64);
        self.bar.set_message("transcripts");
    }

    fn transcript_done(&mut self, _path: &Path) {
        self.bar.inc(1);
    }
}

impl PassProgress for Bar {
    fn start(&mut self, messages: u64, pass: Pass) {
        self.rest = pass == Pass::Rest;
        self.bar.reset();
        self.bar.set_length(messages);
        self.bar.set_position(0);
        self.bar.set_message(if self.rest {
            "embeddings, the rest of long messages"
        } else {
            "embeddings"
        });
    }

    fn advance(&mut self, n: u64) {
        self.bar.inc(n);
    }

    fn reached(&mut self, started_at_ms: i64) {
        // Newest first: what is done is everything since that day.
        if let Some(day) = chrono::DateTime::from_timestamp_millis(started_at_ms) {
            let day = day.format("%Y-%m-%d");
            self.bar.set_message(if self.rest {
                format!("embeddings, long messages in full back to {day}")
            } else {
                format!("embeddings (by meaning back to {day})")
            });
        }
    }
}

impl RunProgress for Bar {
    fn finish(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// Runs the command.
pub fn run(app: &App, args: &IndexArgs) -> Result<ExitStatus> {
    let started = Instant::now();
    let wait = if args.no_wait {
        Wait::No
    } else {
        Wait::Up(Duration::from_secs(app.config.config.index.lock_wait_secs))
    };
    let Outcome {
        report,
        embedded,
        embedding_broken,
        scrub_pending,
    } = index_all(app, wait, &mut Bar::new())?;

    for (harness, reason) in &report.discovery_failed {
        output::error(&format!(
            "{harness} reader could not look for transcripts: {reason}"
        ));
    }
    for w in &report.warnings {
        output::warn(w);
    }
    for (path, reason) in &report.failed {
        output::error(&format!(
            "`{path}`: {reason} (skipped; what was indexed before is kept)"
        ));
    }
    let a = &report.applied;
    let elapsed = started.elapsed();
    if args.json {
        output::print_json(&json::index::Index {
            discovery_errors: report
                .discovery_failed
                .iter()
                .map(|(h, e)| json::index::DiscoveryError {
                    error: e,
                    harness: h,
                })
                .collect(),
            embeddings: match &embedded {
                Ok(Some(p)) => json::index::Embeddings::Done {
                    cached: p.cached,
                    completed: p.completed,
                    embedded: p.embedded,
                    messages: p.messages,
                    searchable_after_seconds: p.first_pass_seconds,
                    units: p.units,
                },
                Ok(None) => json::index::Embeddings::Skipped {
                    skipped: "disabled in the config (`embed.enabled`)",
                },
                Err(why) => json::index::Embeddings::Skipped { skipped: why },
            },
            messages: json::index::Messages {
                added: a.messages_added,
                changed: a.messages_changed,
                removed: a.messages_removed,
            },
            seconds: elapsed.as_secs_f64(),
            sessions: json::index::Sessions {
                added: a.sessions_added,
                empty_skipped: report.skipped_empty,
                forgotten_skipped: a.sessions_forgotten,
                orphaned: a.sessions_orphaned,
                superseded: a.sessions_superseded,
                updated: a.sessions_updated,
            },
            transcripts: json::index::Transcripts {
                changed: report.changed,
                failed: report
                    .failed
                    .iter()
                    .map(|(p, e)| json::index::Failure { error: e, path: p })
                    .collect(),
                scanned: report.scanned,
            },
        })?;
    }
    let s = Style::stderr();
    use crate::output::plural;
    eprintln!(
        "{} in {:.2} s: {} scanned ({} changed, {} failed); {} added, {} updated; {} added",
        s.green("indexed"),
        elapsed.as_secs_f64(),
        plural(report.scanned, "transcript", "transcripts"),
        report.changed,
        report.failed.len(),
        plural(a.sessions_added, "session", "sessions"),
        a.sessions_updated,
        plural(a.messages_added, "message", "messages"),
    );
    match &embedded {
        // Messages are cut into text windows; each distinct window text is
        // embedded once and cached, so windows = new + cached + repeats.
        Ok(Some(p)) if p.units > 0 => {
            let repeats = p.units.saturating_sub(p.embedded + p.cached + p.team);
            let what = if p.messages > 0 {
                plural(p.messages, "message", "messages")
            } else {
                format!(
                    "the rest of {}",
                    plural(p.completed, "long message", "long messages")
                )
            };
            let passes = match p.first_pass_seconds {
                Some(secs) if p.messages > 0 => format!(
                    "; every message was searchable by meaning after {secs:.1} s, then the rest of the windows of {} followed",
                    plural(p.completed, "long message", "long messages")
                ),
                _ => String::new(),
            };
            eprintln!(
                "embedded {what} as {} ({} new to the model, {} from the cache{}{}){passes}",
                plural(p.units, "text window", "text windows"),
                p.embedded,
                p.cached,
                if p.team > 0 {
                    format!(", {} from teammates' vectors", p.team)
                } else {
                    String::new()
                },
                if repeats > 0 {
                    format!(
                        ", {} of a text embedded once in this run",
                        plural(repeats, "repeat", "repeats")
                    )
                } else {
                    String::new()
                }
            )
        }
        Ok(_) => {}
        Err(why) => {
            output::warn(&format!(
                "semantic index not updated: {why}; recall answers lexically"
            ));
        }
    }
    if a.sessions_orphaned > 0 {
        eprintln!(
            "{} kept whose transcript is gone or no longer holds {} (`deja forget` removes {})",
            plural(a.sessions_orphaned, "session", "sessions"),
            if a.sessions_orphaned == 1 {
                "it"
            } else {
                "them"
            },
            if a.sessions_orphaned == 1 {
                "it"
            } else {
                "them"
            },
        );
    }
    if scrub_pending {
        output::warn(SCRUB_PENDING);
    }
    // Problems the run could not get past: scripts must see them. A
    // transcript that failed is not one (it is reported, and retried).
    if !report.discovery_failed.is_empty() || embedding_broken || scrub_pending {
        return Ok(ExitStatus::Incomplete);
    }
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod progress_tests {
    use super::left;

    #[test]
    fn time_left_reads_as_people_say_it() {
        assert_eq!(left(4.4), "4s");
        assert_eq!(left(59.0), "59s");
        assert_eq!(left(61.0), "2m");
        assert_eq!(left(3600.0), "1h 0m");
        assert_eq!(left(4_830.0), "1h 20m");
    }
}
