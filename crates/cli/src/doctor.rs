//! `deja doctor`: where everything is and whether it works: config, store
//! and vectors with their sizes, each plugin's status, what each reader found
//! and where it looked, the model and runtime, and every problem with its fix.
//! Exits 1 when it finds a problem.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;

use crate::app::App;
use crate::json::doctor as out;
use crate::output::{self, Style};
use crate::ExitStatus;
use deja_embed::Embedder;
use deja_store::Store;

/// `deja doctor`.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

struct Problem {
    what: String,
    fix: String,
}

fn size(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|m| m.len())
}

fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// A file's permission bits (`deja_fs::mode`, without the special bits).
#[cfg(unix)]
fn mode(path: &Path) -> Option<u32> {
    deja_fs::mode(path).map(|m| m & 0o777)
}

/// Runs the command.
pub fn run(app: &App, as_json: bool) -> Result<ExitStatus> {
    with_report(app, |report, problems| {
        if as_json {
            output::print_json(report)?;
        } else {
            print_text(app, report, problems);
        }
        Ok(if problems.is_empty() {
            ExitStatus::Success
        } else {
            ExitStatus::NoResults
        })
    })
}

/// Gathers the report `deja doctor --json` prints and hands it to `then`
/// (the status page of `deja ui` takes what it shows from it).
pub fn report<T>(app: &App, then: impl FnOnce(&out::Doctor<'_>) -> T) -> Result<T> {
    with_report(app, |report, _| Ok(then(report)))
}

/// Gathers the report and hands it, with its problems, to `then`.
fn with_report<T>(
    app: &App,
    then: impl FnOnce(&out::Doctor<'_>, &[Problem]) -> Result<T>,
) -> Result<T> {
    let mut problems: Vec<Problem> = Vec::new();
    let config = config(app, &mut problems);
    let store = open_store(app, &mut problems);
    let store_json = store_report(app, store.as_ref(), &mut problems)?;
    let plugins = plugins(app, &mut problems);
    let readers = readers(app, &mut problems)?;
    let settings = app.embed_settings();
    let choice = app.model_choice();
    let mut model_json = model(&settings, store.as_ref(), &mut problems)?;
    model_json.why = choice.map(|c| c.why);
    let wiring = wiring(app, &mut problems);
    let team = team(app, store.as_ref(), &mut problems);
    let report = out::Doctor {
        config,
        model: model_json,
        plugins,
        problems: problems
            .iter()
            .map(|p| out::Problem {
                fix: &p.fix,
                problem: &p.what,
            })
            .collect(),
        readers,
        store: store_json,
        team,
        wiring,
    };
    then(&report, &problems)
}

/// The config file, and its error as a problem.
fn config<'a>(app: &'a App, problems: &mut Vec<Problem>) -> out::Config<'a> {
    let config = out::Config {
        error: app.config_error(),
        exists: app.config.file_exists,
        path: &app.config.path,
    };
    if let Some(e) = app.config_error() {
        problems.push(Problem {
            what: e.to_string(),
            fix: format!(
                "edit `{}` (`deja config --default` prints every key with its bounds); \
                 until then other commands refuse to run, and this report uses the defaults",
                app.config.path.display()
            ),
        });
    }

    config
}

/// The index, opened for reading; a missing or unreadable one is a problem.
fn open_store(app: &App, problems: &mut Vec<Problem>) -> Option<Store> {
    let db = app.paths.database();
    if db.exists() {
        match Store::open_read(&db) {
            Ok(s) => Some(s),
            Err(e) => {
                problems.push(Problem {
                    what: format!("cannot open the index: {e}"),
                    fix: format!(
                        "move `{}` away and run `deja index` to rebuild it",
                        db.display()
                    ),
                });
                None
            }
        }
    } else {
        problems.push(Problem {
            what: format!("no index at `{}` yet", db.display()),
            fix: "run `deja index`".into(),
        });
        None
    }
}

/// Whether the configured model or runtime is not installed (no embedding
/// can be made until it is).
fn model_missing(app: &App) -> bool {
    let settings = app.embed_settings();
    settings.model_files().is_err() || settings.runtime().is_err()
}

/// The index's counts, its files' modes and the vector file's state.
fn store_report<'a>(
    app: &'a App,
    store: Option<&Store>,
    problems: &mut Vec<Problem>,
) -> Result<out::Store<'a>> {
    let db = app.paths.database();
    let vectors = app.paths.vectors();
    let mut store_json = out::Store {
        bytes: size(&db),
        data_dir: &app.paths.data_dir,
        embed_model: None,
        embedding_units: None,
        forgotten: None,
        meaning_covers_after: None,
        messages: None,
        messages_embedded_in_part: None,
        messages_without_vectors: None,
        path: db.clone(),
        sessions: None,
        sessions_without_source: None,
        transcripts: None,
        vectors: out::Vectors {
            bytes: deja_store::vectors::disk_bytes(&vectors),
            count: deja_store::vectors::file_count(&vectors),
            in_sync: None,
            path: vectors.clone(),
        },
    };
    if let Some(s) = store {
        let c = s.counts()?;
        store_json.sessions = Some(c.sessions);
        store_json.sessions_without_source = Some(c.orphaned);
        store_json.messages = Some(c.messages);
        store_json.transcripts = Some(c.sources);
        store_json.embedding_units = Some(c.chunks);
        store_json.forgotten = Some(c.tombstones);
        store_json.embed_model = Some(s.meta("embed_model")?);
        if app.config.config.embed.enabled {
            let coverage = s.current_coverage()?;
            let pending = coverage.pending;
            store_json.messages_without_vectors = Some(pending);
            store_json.messages_embedded_in_part = Some(coverage.partial);
            store_json.meaning_covers_after = coverage.waiting_since.map(output::rfc3339);
            if pending > 0 {
                let since = crate::indexing::covers_after(&coverage).unwrap_or_default();
                problems.push(Problem {
                    what: format!(
                        "{} no embedding yet (an index run was interrupted, or embeddings were off when {} indexed): recall by meaning covers the sessions begun after {since}",
                        if pending == 1 { "1 message has".to_string() } else { format!("{pending} messages have") },
                        if pending == 1 { "it was" } else { "they were" }
                    ),
                    fix: if model_missing(app) {
                        format!(
                            "the model is not installed, so `deja index` cannot embed them: run {} first; recall finds them by their words meanwhile",
                            deja_embed::install::fetch_model_command()
                        )
                    } else {
                        "run `deja index`; recall finds them by their words meanwhile".into()
                    },
                });
            }
        }
        for f in s.failed_sources()? {
            problems.push(Problem {
                what: format!(
                    "{} transcript `{}` failed to parse: {}",
                    f.harness,
                    f.path,
                    f.error.unwrap_or_default()
                ),
                fix: "its earlier sessions are kept; `deja parse` on it shows the error".into(),
            });
        }
    }
    #[cfg(unix)]
    let mut private = vec![
        (app.paths.data_dir.clone(), 0o700),
        (db.clone(), 0o600),
        (app.paths.vectors(), 0o600),
    ];
    #[cfg(unix)]
    private.extend(
        deja_store::vectors::segment_files(&app.paths.vectors())
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(_, f)| (f, 0o600)),
    );
    #[cfg(unix)]
    for (path, want) in &private {
        let (path, want) = (path, *want);
        if let Some(m) = mode(path) {
            if m & 0o077 != 0 {
                problems.push(Problem {
                    what: format!(
                        "`{}` is readable by others (mode {m:o}); transcripts hold secrets",
                        path.display()
                    ),
                    fix: format!("chmod {want:o} '{}'", path.display()),
                });
            }
        }
    }
    if let Some(s) = store {
        let in_sync = deja_store::vectors::in_sync(s, &vectors).unwrap_or(false);
        store_json.vectors.in_sync = Some(in_sync);
        if !in_sync {
            problems.push(Problem {
                what: "the vector index is behind the database (an index run was interrupted, or one is running)".into(),
                fix: "run `deja index`; recall meanwhile scores the missing vectors exactly".into(),
            });
        }
    }

    Ok(store_json)
}

/// The plugins found, and those that could not be loaded as problems.
fn plugins<'a>(app: &'a App, problems: &mut Vec<Problem>) -> Vec<out::Plugin<'a>> {
    let mut plugins = Vec::new();
    for r in &app.host().reports {
        if let Some(reason) = r.status.reason() {
            problems.push(Problem {
                what: format!(
                    "plugin `{}` is {}: {reason}",
                    r.path.display(),
                    r.status.label()
                ),
                fix: "see `deja plugins`".into(),
            });
        }
        plugins.push(out::Plugin {
            abi: r.abi.map(|a| a.to_string()),
            harness: r.harness.as_deref(),
            name: r.name.as_deref(),
            path: &r.path,
            reason: r.status.reason(),
            status: r.status.label(),
            version: r.version.as_deref(),
        });
    }
    plugins
}

/// Each reader's discovery: where it looked, what it found, its warnings.
fn readers<'a>(app: &'a App, problems: &mut Vec<Problem>) -> Result<Vec<out::Reader<'a>>> {
    let mut readers = Vec::new();
    if let Err(e) = app.config.check_harness_names(&app.host().harnesses()) {
        problems.push(Problem {
            what: e.to_string(),
            fix: format!(
                "rename or remove the section in `{}`, or install the plugin that reads it",
                app.config.path.display()
            ),
        });
    }
    for p in &app.host().plugins {
        if let Err(e) = app.config.check_harness_keys(&p.harness, &p.config_keys) {
            problems.push(Problem {
                what: e.to_string(),
                fix: format!("edit `{}`", app.config.path.display()),
            });
            continue;
        }
        let enabled = app.harness_enabled(&p.harness);
        let context = app.context_for(&p.harness)?;
        match p.discover(&context) {
            Ok(d) => {
                for w in &d.warnings {
                    problems.push(Problem {
                        what: format!("{} reader: {w}", p.harness),
                        fix: "check the folder's permissions, or exclude it in the config".into(),
                    });
                }
                readers.push(out::Reader {
                    enabled,
                    harness: &p.harness,
                    looked_in: d
                        .searched
                        .into_iter()
                        .map(|(path, reason, exists)| out::LookedIn {
                            exists,
                            path,
                            reason,
                        })
                        .collect(),
                    transcripts: d.transcripts.len(),
                });
            }
            Err(e) => problems.push(Problem {
                what: e.to_string(),
                fix: "see `deja plugins`; report it to the plugin's author".into(),
            }),
        }
    }

    Ok(readers)
}

/// The embedding model and runtime, loaded once to check them.
fn model<'a>(
    settings: &'a deja_embed::Settings,
    store: Option<&Store>,
    problems: &mut Vec<Problem>,
) -> Result<out::Model<'a>> {
    let runtime = settings.runtime().map(|p| p.to_path_buf());
    let mut model_json = out::Model {
        dims: None,
        enabled: settings.enabled,
        id: None,
        load_ms: None,
        model_dir: &settings.model_dir,
        runtime: runtime.ok(),
        status: None,
        script_means: None,
        off_topic: None,
        why: None,
    };
    if settings.enabled {
        let started = Instant::now();
        match Embedder::load(settings, store.and_then(|s| s.model_stamp()).as_ref()) {
            Ok(e) => {
                model_json.status = Some("ok".into());
                model_json.id = Some(e.id().into());
                model_json.dims = Some(e.dims());
                model_json.script_means = e.script_means().map(Path::to_path_buf);
                model_json.off_topic = Some(e.off_topic()).filter(|x| *x > 0.0);
                model_json.load_ms = Some(started.elapsed().as_millis() as u64);
                if let Some(s) = store {
                    if let Some(stored) = s.meta("embed_model")? {
                        if stored != e.id() {
                            problems.push(Problem {
                                what: format!("the index was embedded with `{stored}`, the config now names `{}`", e.id()),
                                fix: "run `deja index` to re-embed".into(),
                            });
                        }
                    }
                }
            }
            Err(e) => {
                model_json.status = Some(e.to_string());
                problems.push(Problem {
                    what: format!("semantic recall is off: {e}"),
                    fix: if e.is_missing() {
                        format!(
                            "run {} (recall still answers lexically)",
                            deja_embed::install::fetch_model_command_for(&settings.model_dir)
                        )
                    } else if settings.model_dir.join("MODEL").is_file() {
                        // A folder the installer made (it writes `MODEL`):
                        // it checks the files and installs them again.
                        format!(
                            "run {} to verify and reinstall the model's files",
                            deja_embed::install::fetch_model_command_for(&settings.model_dir)
                        )
                    } else {
                        "check `embed.model_dir` and `embed.runtime` in the config".into()
                    },
                });
            }
        }
    }
    Ok(model_json)
}

/// Team memory's settings, checked without connecting: a URL, password file
/// or name that `deja team` would refuse, and shared projects that no
/// indexed session belongs to, are problems.
fn team(app: &App, store: Option<&Store>, problems: &mut Vec<Problem>) -> out::Team {
    let env = |k: &str| std::env::var(k).ok();
    let configured = !app.config.config.team.url.trim().is_empty();
    let pulled_sessions = store
        .and_then(|s| s.origin_counts().ok())
        .map(|c| c.iter().map(|(_, n)| n).sum());
    let mut team = out::Team {
        configured,
        origin: None,
        pulled_sessions,
        server: None,
        share: Vec::new(),
    };
    if !configured {
        return team;
    }
    match deja_team::Settings::from_config(&app.config, &env, &app.paths.home) {
        Ok(settings) => {
            team.origin = Some(settings.origin.clone());
            team.server = Some(settings.server());
            for p in &settings.share {
                let filter = deja_store::SessionFilter {
                    project: Some(p.clone()),
                    origin: Some(deja_store::Origin::Mine),
                    ..deja_store::SessionFilter::default()
                };
                if let Some(Ok(0)) = store.map(|s| s.count_sessions(&filter)) {
                    problems.push(Problem {
                        what: format!("`team.share` names `{p}`, which no session of this machine belongs to"),
                        fix: "check the name against `deja sessions` (a directory or a folder name, as `--project` takes it)".into(),
                    });
                }
            }
            team.share = settings.share;
        }
        Err(e) => problems.push(Problem {
            what: format!("team memory: {e}"),
            fix: "fix `[team]` in the config (README, \"Team memory\"); `deja team status` checks the server".into(),
        }),
    }
    team
}

/// What `deja setup` has wired, per agent, with the command that wires it.
fn wiring(app: &App, problems: &mut Vec<Problem>) -> Vec<out::Wiring> {
    use super::setup::status;
    let env = match deja_agents::agents::Env::new(app) {
        Ok(env) => env,
        Err(e) => {
            problems.push(Problem {
                what: format!("cannot check the agents' wiring: {e:#}"),
                fix: "run deja from its installed path".into(),
            });
            return Vec::new();
        }
    };
    let mut wired = Vec::new();
    for agent in deja_agents::agents::all() {
        let found = agent.found(&env);
        let (state, why) = status(agent, &env);
        let fix = format!("deja setup {}", agent.name());
        let p = agent.provides();
        let gives = [
            p.mcp.then_some("MCP tools"),
            p.session_start.map(|_| "session-start digest"),
            p.failure_notes.then_some("failure notes"),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
        let detail = match (state, &found) {
            ("wired", _) => gives.clone(),
            ("stale", _) => {
                problems.push(Problem {
                    what: format!(
                        "deja's wiring of {} is out of date: {}",
                        agent.title(),
                        why.clone().unwrap_or_default()
                    ),
                    fix: format!("run `{fix}` again"),
                });
                why.unwrap_or_default()
            }
            ("unknown", _) => why.unwrap_or_default(),
            // Not a problem (wiring is the user's choice), but said.
            (_, Some(at)) => format!("found at {at}; run `{fix}` for {gives}"),
            (_, None) => "not found on this machine".to_string(),
        };
        wired.push(out::Wiring {
            detail,
            fix,
            harness: agent.name(),
            status: if state == "not wired" && found.is_none() {
                "not found"
            } else {
                state
            },
        });
    }
    wired
}

fn print_text(app: &App, report: &out::Doctor<'_>, problems: &[Problem]) {
    let s = Style::stdout();
    // What is unknown reads `null`, as it does in the JSON report.
    let or_null = |v: Option<&str>| v.unwrap_or("null").to_string();
    println!(
        "{:<9} {}{}",
        s.bold("config"),
        app.config.path.display(),
        if app.config_error().is_some() {
            " (broken: see the problem below; the defaults apply)"
        } else if app.config.file_exists {
            ""
        } else {
            " (absent: defaults apply)"
        }
    );
    let st = &report.store;
    println!(
        "{:<9} {} ({})",
        s.bold("store"),
        st.path.display(),
        st.bytes.map(human).unwrap_or_else(|| "absent".into())
    );
    if let (Some(sessions), Some(orphaned), Some(messages), Some(transcripts), Some(units)) = (
        st.sessions,
        st.sessions_without_source,
        st.messages,
        st.transcripts,
        st.embedding_units,
    ) {
        println!(
            "          {sessions} sessions ({orphaned} without transcript), {messages} messages, {transcripts} transcripts, {units} embedded text windows"
        );
    }
    if let Some(partial) = st.messages_embedded_in_part.filter(|n| *n > 0) {
        println!(
            "          {} embedded in part so far (found by meaning already; `deja index` embeds the rest of their windows)",
            crate::output::plural(usize::try_from(partial).unwrap_or(0), "long message", "long messages")
        );
    }
    println!(
        "{:<9} {} ({})",
        s.bold("vectors"),
        st.vectors.path.display(),
        st.vectors
            .bytes
            .map(human)
            .unwrap_or_else(|| "absent".into())
    );
    for p in &report.plugins {
        println!(
            "{:<9} {} {} ({}) {}",
            s.bold("plugin"),
            or_null(p.name),
            or_null(p.version),
            p.status,
            p.path.display()
        );
    }
    for r in &report.readers {
        println!(
            "{:<9} {}: {} transcripts{}",
            s.bold("reader"),
            r.harness,
            r.transcripts,
            if r.enabled { "" } else { " (disabled)" }
        );
        for l in &r.looked_in {
            println!(
                "            {} {} ({})",
                if l.exists { "found  " } else { "missing" },
                l.path,
                l.reason
            );
        }
    }
    let m = &report.model;
    println!(
        "{:<9} {} ({})",
        s.bold("model"),
        m.model_dir.display(),
        or_null(m.status.as_deref())
    );
    if let Some(why) = &m.why {
        println!("{:<9} {why}", s.bold("chosen"));
    }
    if let Some(means) = &m.script_means {
        println!(
            "{:<9} {} (each script's mean vector is taken out of every vector)",
            s.bold("means"),
            means.display()
        );
    }
    if let Some(near) = m.off_topic {
        println!(
            "{:<9} {near} (an answer under the relevance bar is kept by meaning alone only from nearer)",
            s.bold("off-topic")
        );
    }
    if let Some(rt) = &m.runtime {
        println!("{:<9} {}", s.bold("runtime"), rt.display());
    }
    let t = &report.team;
    match (&t.server, &t.origin) {
        (Some(server), Some(origin)) => println!(
            "{:<9} {server} as {origin}; shares {}; {} pulled sessions (`deja team status` checks the server)",
            s.bold("team"),
            if t.share.is_empty() {
                "nothing".to_string()
            } else {
                t.share.join(", ")
            },
            t.pulled_sessions.unwrap_or(0)
        ),
        _ if t.configured => println!("{:<9} configured, with a problem (below)", s.bold("team")),
        _ => println!("{:<9} not configured", s.bold("team")),
    }
    for w in &report.wiring {
        if w.status == "not found" {
            println!("{:<9} {:<8} not found", s.bold("wiring"), w.harness);
        } else {
            println!(
                "{:<9} {:<8} {} ({})",
                s.bold("wiring"),
                w.harness,
                w.status,
                w.detail
            );
        }
    }
    if problems.is_empty() {
        println!("{}", s.green("no problems found"));
    }
    for p in problems {
        println!("{} {}", s.yellow("problem:"), p.what);
        println!("  {} {}", s.cyan("fix:"), p.fix);
    }
}
