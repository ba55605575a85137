//! deja's indexing pipeline, behind `deja index` (and any long-lived caller
//! that keeps the store fresh): discover with every enabled reader, read only
//! transcripts that changed (size and mtime, then content hash, then the
//! reader's version and settings: its config section and the redaction
//! settings), parse them through their plugin, redact them, and store each one
//! in its own transaction; then embed what has no vectors yet. A failing
//! transcript is reported and skipped; what was indexed from it before is
//! kept, and it is tried again on every run until it succeeds.
//!
//! A transcript a reader found in a code folder (inside a project, where a
//! cloned repository may have brought it) is not read when the folder's git
//! repository tracks it (unless `read_tracked`) or another user owns it
//! (see [`deja_host::code_folder`]); what is read from one is labelled
//! ([`Found::InCodeFolder`]). Every session's dates are clamped to the time
//! it is indexed: no transcript places a session in the future.
//!
//! - this module: the transcript pass.
//! - [`redact`]: secrets removed before anything is stored.
//! - [`embedding`]: the embedding pass and the vector index sync.

pub mod embedding;
pub mod redact;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use deja_host::code_folder::{self, Checked};
use deja_host::transcripts;
use deja_host::{Context, Plugin};
use deja_model::{sha256_hex, Session};
use deja_plugin_api::canonical::CanonicalPaths;
use deja_store::ingest::{Applied, FileState, Found, SourceState};
use deja_store::{Store, StoreError};

use crate::redact::Redactor;

/// One enabled reader and the context it is called with.
pub struct Reader<'a> {
    /// The loaded plugin.
    pub plugin: &'a Plugin,
    /// Its context (home, environment, config section).
    pub context: Context,
}

/// Where and how to index.
pub struct Options<'a> {
    /// The user's home: relative transcript paths are below it.
    pub home: &'a Path,
    /// Transcripts larger than this are refused (`index.max_file_bytes`).
    pub max_file_bytes: u64,
    /// Stop reading transcripts at this instant (a bounded freshness pass);
    /// what is left is counted in [`Report::left`] and sessions whose
    /// transcript is gone are not looked for.
    pub deadline: Option<std::time::Instant>,
    /// Read the transcripts found in a code folder that the folder's git
    /// repository tracks (`index.read_tracked`).
    pub read_tracked: bool,
}

/// What happened during a run, for the summary line and `--json`.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Transcripts the readers returned.
    pub scanned: usize,
    /// Transcripts read and parsed because they changed.
    pub changed: usize,
    /// Transcripts that failed (path, reason).
    pub failed: Vec<(String, String)>,
    /// Readers whose discovery failed (harness, reason).
    pub discovery_failed: Vec<(String, String)>,
    /// Warnings from discovery and parsing.
    pub warnings: Vec<String>,
    /// Sessions found empty and skipped.
    pub skipped_empty: u64,
    /// Transcripts read again because a setting that shapes what is stored
    /// (the reader's config section, the redaction settings) changed, whether
    /// or not their content changed too, or because the reader changed and
    /// their content did not: text stored before may be gone, so the store is
    /// marked for erasure ([`Store::require_erasure`]) and the caller scrubs
    /// it ([`Store::scrub`]) and rebuilds the vector index file.
    pub reread_for_settings: usize,
    /// What the store did.
    pub applied: Applied,
    /// Transcripts not looked at because the deadline passed.
    pub left: usize,
}

/// Progress callbacks.
pub trait Progress {
    /// The number of transcripts to look at is known.
    fn transcripts(&mut self, total: usize);
    /// One transcript was handled.
    fn transcript_done(&mut self, path: &Path);
}

/// A progress sink that ignores everything.
pub struct Quiet;

impl Progress for Quiet {
    fn transcripts(&mut self, _total: usize) {}
    fn transcript_done(&mut self, _path: &Path) {}
}

fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Indexes every transcript of every reader in `readers` into `store`.
/// Only the store's own failures are errors, and they stop the run (disk
/// full, a lock held past the timeout, a corrupt page: no later transcript
/// would fare better, and each transcript's transaction keeps the store
/// consistent); a transcript or a reader that fails is reported in the
/// [`Report`] and the run goes on.
pub fn run(
    readers: &[Reader<'_>],
    options: &Options<'_>,
    store: &mut Store,
    redactor: &Redactor,
    progress: &mut dyn Progress,
) -> Result<Report, StoreError> {
    let mut report = Report::default();
    // Each transcript with its reader, where it was found, and what was
    // seen of it then: its metadata, and whether its folder's listing
    // held a write-ahead log beside it.
    let mut work: Vec<(usize, PathBuf, Found, Seen)> = Vec::new();
    let mut discovered_ok: Vec<&str> = Vec::new();
    let mut canonical = CanonicalPaths::default();
    for (r, reader) in readers.iter().enumerate() {
        let plugin = reader.plugin;
        match plugin.discover(&reader.context) {
            Ok(found) => {
                let in_code_folders: HashSet<PathBuf> = found
                    .in_code_folders()
                    .iter()
                    .map(|p| canonical.resolve(&absolute(p, options.home)))
                    .collect();
                report.warnings.extend(found.warnings);
                let mut seen = HashSet::new();
                for path in found.transcripts {
                    let found_at = absolute(&path, options.home);
                    let path = canonical.resolve(&found_at);
                    if !seen.insert(path.clone()) {
                        continue;
                    }
                    // Told by the listing of the folder the file really is
                    // in, when that is the folder it was found in.
                    let wal = transcripts::write_ahead_log_name(&path)
                        .and_then(|wal| canonical.listed(&wal));
                    let seen_then = Seen {
                        meta: std::fs::metadata(&path).ok(),
                        wal,
                    };
                    if !in_code_folders.contains(&path) {
                        let refusal = seen_then
                            .meta
                            .as_ref()
                            .and_then(|meta| deja_host::shared_folder::refusal(&path, meta));
                        match refusal {
                            Some(reason) => report
                                .warnings
                                .push(format!("`{}`: {reason}", path.display())),
                            None => work.push((r, path, Found::Own, seen_then)),
                        }
                        continue;
                    }
                    match code_folder::check(&path, &plugin.harness, options.read_tracked) {
                        Checked::Read { warning } => {
                            if let Some(w) = warning {
                                report.warnings.push(format!("`{}`: {w}", path.display()));
                            }
                            work.push((r, path, Found::InCodeFolder, seen_then));
                        }
                        Checked::Refused(reason) => {
                            // What was read from it before stays, labelled.
                            store.label_found_in_code_folder(
                                &plugin.harness,
                                &path.to_string_lossy(),
                            )?;
                            report
                                .warnings
                                .push(format!("`{}`: {reason}", path.display()));
                        }
                    }
                }
                discovered_ok.push(&plugin.harness);
            }
            Err(e) => report
                .discovery_failed
                .push((plugin.harness.clone(), e.message.clone())),
        }
    }
    report.scanned = work.len();
    progress.transcripts(work.len());

    let limit = options.max_file_bytes;
    let redaction = redactor.fingerprint();
    // Each reader's config, fingerprinted once.
    let configs: Vec<String> = readers
        .iter()
        .map(|r| sha256_hex(r.context.config_json().as_bytes()))
        .collect();
    let total = work.len();
    // What the store knows of each harness's transcripts, read once.
    let mut known: HashMap<String, HashMap<String, SourceState>> = HashMap::new();
    for (done, (r, path, found, seen)) in work.into_iter().enumerate() {
        let reader = &readers[r];
        if options
            .deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
        {
            report.left = total - done;
            break;
        }
        let settings = settings_fingerprint(&configs[r], &redaction, found);
        let harness = &reader.plugin.harness;
        if !known.contains_key(harness) {
            known.insert(harness.clone(), store.sources_of(harness)?);
        }
        let source = known
            .get_mut(harness)
            .and_then(|k| k.remove(path.to_string_lossy().as_ref()));
        let transcript = Transcript {
            plugin: reader.plugin,
            path: &path,
            context: &reader.context,
            settings: &settings,
            found,
        };
        match index_one(store, &transcript, seen, source, limit, redactor)? {
            Ok(Outcome::Unchanged) => {}
            Ok(Outcome::Indexed {
                applied,
                skipped_empty,
                warnings,
                reread,
            }) => {
                report.changed += 1;
                report.reread_for_settings += usize::from(reread);
                report.applied.add(&applied);
                report.skipped_empty += u64::from(skipped_empty);
                report.warnings.extend(
                    warnings
                        .into_iter()
                        // A warning that names its file already is kept as it is.
                        .map(|w| {
                            let named = path.display().to_string();
                            if w.contains(&named) {
                                w
                            } else {
                                format!("`{named}`: {w}")
                            }
                        }),
                );
            }
            Err(e) => {
                report.changed += 1;
                report.failed.push((path.to_string_lossy().into_owned(), e));
            }
        }
        progress.transcript_done(&path);
    }

    if options.deadline.is_none() {
        for harness in discovered_ok {
            // The transcripts found were looked at just now; only the rest
            // of what the store knows may be gone.
            report.applied.sessions_orphaned += match known.get(harness) {
                Some(rest) => {
                    store.orphan_missing_among(rest.iter().map(|(p, k)| (k.id, p.as_str())))?
                }
                None => store.orphan_missing(harness)?,
            };
        }
    }
    Ok(report)
}

/// Now, in ms since the Unix epoch.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// `path`, relative to `base` unless absolute.
fn absolute(path: &Path, base: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// What discovery saw of a transcript: its metadata (`None`: it could not
/// be looked at, so the index looks again), and whether its folder's listing
/// held a write-ahead log beside it (`None`: not listed).
struct Seen {
    meta: Option<std::fs::Metadata>,
    wal: Option<bool>,
}

enum Outcome {
    Unchanged,
    Indexed {
        applied: Applied,
        skipped_empty: u32,
        warnings: Vec<String>,
        /// Read again because the settings changed (whatever the content),
        /// or the reader changed and the content did not.
        reread: bool,
    },
}

/// What a transcript is read with besides its reader's version: short
/// fingerprints of the reader's config section (the JSON it is handed) and of
/// the redaction settings, and whether it was found in a code folder. A
/// change of any re-reads the transcript (which labels its sessions anew).
fn settings_fingerprint(config: &str, redaction: &str, found: Found) -> String {
    let place = match found {
        Found::Own => "",
        Found::InCodeFolder => " found:code-folder",
    };
    format!("config:{} redact:{redaction}{place}", &config[..16])
}

/// One transcript to index, and what it is read with.
#[derive(Clone, Copy)]
struct Transcript<'a> {
    plugin: &'a Plugin,
    path: &'a Path,
    context: &'a Context,
    settings: &'a str,
    found: Found,
}

/// Indexes one transcript if it changed. The transcript's own problems are
/// `Ok(Err(reason))` (the caller adds the path); the store's are `Err`, which
/// stop the run. A transcript whose last read failed never
/// counts as unchanged: a raised size limit, a fixed permission (which does
/// not change the mtime) or a fixed reader makes it succeed.
fn index_one(
    store: &mut Store,
    transcript: &Transcript<'_>,
    seen: Seen,
    known: Option<SourceState>,
    limit: u64,
    redactor: &Redactor,
) -> Result<std::result::Result<Outcome, String>, StoreError> {
    let Transcript {
        plugin,
        path,
        context,
        settings,
        found,
    } = *transcript;
    let path_text = path.to_string_lossy();
    let reader = format!("{} {}", plugin.name, plugin.version);
    let meta = match seen.meta.map_or_else(|| std::fs::metadata(path), Ok) {
        Ok(meta) => meta,
        Err(e) => return Ok(Err(format!("cannot read: {e}"))),
    };
    // A SQLite database's write-ahead log is part of it (see
    // `transcripts::write_ahead_log`). None was beside it when its folder
    // was listed: one made since is seen by the next run, as the database's
    // size then differs from what was read.
    let wal = match seen.wal {
        Some(false) => None,
        _ => transcripts::write_ahead_log(path),
    };
    let wal_meta = wal.as_deref().and_then(|w| std::fs::metadata(w).ok());
    let size = meta.len() as i64 + wal_meta.as_ref().map_or(0, |m| m.len() as i64);
    let mtime = mtime_ns(&meta).max(wal_meta.as_ref().map_or(0, mtime_ns));
    // Read with the same reader and settings, and it succeeded.
    let same_reading = known
        .as_ref()
        .is_some_and(|k| k.error.is_none() && k.reader == reader && k.settings == settings);
    if let Some(k) = &known {
        if same_reading && k.size == size && k.mtime_ns == mtime {
            return Ok(Ok(Outcome::Unchanged));
        }
    }
    let t = match transcripts::read(path, limit) {
        Ok(t) => t,
        Err(e) => {
            let reason = match e {
                transcripts::ReadError::Io { source, .. } => format!("cannot read: {source}"),
                other => other.to_string(),
            };
            // Recorded so that `deja doctor` lists it; it is tried again on
            // the next run. Its sessions stay as they are.
            let file = FileState {
                harness: &plugin.harness,
                path: &path_text,
                size,
                mtime_ns: mtime,
                hash: "",
                reader: &reader,
                settings,
            };
            store.record_failure(&file, &reason)?;
            return Ok(Err(reason));
        }
    };
    // The size of what was read (not of the stat before), so that a file
    // that grew while it was read is read again next time.
    let (hash, size) = match wal.as_deref().map(|w| transcripts::read(w, limit)) {
        None => (sha256_hex(&t.bytes), t.size as i64),
        // An empty log (just created, or truncated by a checkpoint) adds nothing.
        Some(Ok(log)) if log.bytes.is_empty() => (sha256_hex(&t.bytes), t.size as i64),
        Some(Ok(log)) => (
            format!("{}+wal:{}", sha256_hex(&t.bytes), sha256_hex(&log.bytes)),
            (t.size + log.size) as i64,
        ),
        // Checkpointed and removed since: the database alone.
        Some(Err(transcripts::ReadError::Io { .. })) => (sha256_hex(&t.bytes), t.size as i64),
        Some(Err(e)) => {
            let reason = e.to_string();
            let file = FileState {
                harness: &plugin.harness,
                path: &path_text,
                size,
                mtime_ns: mtime,
                hash: "",
                reader: &reader,
                settings,
            };
            store.record_failure(&file, &reason)?;
            return Ok(Err(reason));
        }
    };
    let file = FileState {
        harness: &plugin.harness,
        path: &path_text,
        size,
        mtime_ns: mtime,
        hash: &hash,
        reader: &reader,
        settings,
    };
    if let Some(k) = &known {
        if same_reading && k.hash == hash {
            store.touch_source(k.id, file.size, mtime)?;
            return Ok(Ok(Outcome::Unchanged));
        }
    }
    // Text stored before may be gone now: the settings changed (whether or
    // not the content did too: a growing transcript under new redaction
    // rules), or the same bytes are read by another reader.
    let reread = known
        .as_ref()
        .is_some_and(|k| k.settings != settings || (k.error.is_none() && k.hash == hash));
    match plugin.parse(path, &t.bytes, t.modified_ms, context) {
        Ok(parsed) => {
            // No session sorts after the time it is indexed at.
            let now = now_ms();
            let sessions: Vec<Session> = parsed
                .sessions
                .into_iter()
                .map(|s| redactor.session(s).clamped_to(now))
                .collect();
            if reread {
                // Before the text is replaced: a run killed in between
                // leaves the scrub and the vector rebuild to the next one.
                store.require_erasure()?;
            }
            let applied = store.apply_found(&file, &sessions, found)?;
            Ok(Ok(Outcome::Indexed {
                applied,
                skipped_empty: parsed.skipped_empty,
                warnings: parsed.warnings,
                reread,
            }))
        }
        Err(e) => {
            let reason = e.message.clone();
            store.record_failure(&file, &reason)?;
            Ok(Err(reason))
        }
    }
}
