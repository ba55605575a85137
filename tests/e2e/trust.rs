//! Correctness and trust: failed transcripts heal, settings changes re-read
//! what they shape, forgetting and redacting later leave no text behind in
//! any file of the data folder, stale temporary files go, and the data folder
//! is private whoever made it.

use std::path::{Path, PathBuf};

use crate::common::{gemini_session, repo, set_mode, Sandbox};

/// A token only one session holds. Scans look for its tail: the full-text
/// index stores a term after the prefix it shares with the term before it.
const FORGET_TOKEN: &str = "zebraquokka42";
const FORGET_TAIL: &str = "quokka42";
/// A token that a redaction pattern added later removes.
const SECRET_TOKEN: &str = "okapiwombat77";
const SECRET_TAIL: &str = "wombat77";
/// The redaction setting that catches it.
const SECRET_PATTERN: &str =
    "[redact]\npatterns = [{ name = \"staging-login\", regex = \"okapi[a-z]+[0-9]+\" }]\n";

const HISTORY: &str = "
# aider chat started at 2026-07-17 09:00:00

> Aider v0.86.2  

#### Show me the failing query  

The query misses the tenant predicate, so rows of every tenant come back.

> Applied edit to query.go  

#### Add a test for it  

Added `TestQueryScopesTenant`.
";

fn forgettable_history() -> String {
    format!(
        "
# aider chat started at 2026-07-18 10:00:00

#### Why does the {FORGET_TOKEN} importer drop rows?  

The {FORGET_TOKEN} importer skips rows whose checksum column is empty; fill it first.
"
    )
}

fn secret_history() -> String {
    format!(
        "
# aider chat started at 2026-07-19 11:00:00

#### The staging login is {SECRET_TOKEN}, can you wire the deploy script?  

The deploy script now reads the staging login {SECRET_TOKEN} from the environment instead.
"
    )
}

/// Registers an aider project at `~/work/<name>` with `history`; returns the
/// history file.
fn aider_project(sb: &Sandbox, name: &str, history: &str) -> PathBuf {
    let proj = sb.home.join("work").join(name);
    std::fs::create_dir_all(&proj).unwrap();
    let file = proj.join(".aider.chat.history.md");
    std::fs::write(&file, history).unwrap();
    let list = sb.home.join(".config/deja/aider-projects");
    let mut projects = std::fs::read_to_string(&list).unwrap_or_default();
    projects.push_str(&format!("{}\n", proj.to_str().unwrap()));
    sb.write(".config/deja/aider-projects", projects);
    file
}

fn session_ids(sb: &Sandbox, harness: &str) -> Vec<String> {
    sb.ok(&["sessions", "--json", "--harness", harness]).json()["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

fn failed(run: &serde_json::Value) -> usize {
    run["transcripts"]["failed"].as_array().unwrap().len()
}

fn doctor_problems(sb: &Sandbox) -> String {
    sb.run(&["doctor", "--json"]).json()["problems"].to_string()
}

/// Every file under `dir`, each read whole; a file that cannot be read fails
/// the test (a scan that skips it would prove nothing).
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).unwrap_or_else(|e| panic!("cannot list {}: {e}", d.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path)
                    .unwrap_or_else(|e| panic!("cannot scan {}: {e}", path.display()));
                files.push((path, bytes));
            }
        }
    }
    files
}

/// Every file of `files` whose bytes hold `needle` (any case).
fn holding<'a>(files: &'a [(PathBuf, Vec<u8>)], needle: &str) -> Vec<&'a PathBuf> {
    files
        .iter()
        .filter(|(_, bytes)| {
            bytes
                .windows(needle.len())
                .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
        })
        .map(|(path, _)| path)
        .collect()
}

/// Asserts that no file of the data folder holds `needle`, having scanned
/// every file there, the database among them.
fn assert_nowhere(sb: &Sandbox, needle: &str, when: &str) {
    let files = files_under(&sb.data_dir());
    assert!(
        files.iter().any(|(path, _)| *path == sb.database()),
        "{when}: the database was not scanned"
    );
    let found = holding(&files, needle);
    assert!(found.is_empty(), "{when}: `{needle}` is still in {found:?}");
}

/// The vector file's units of the messages `sql_where` selects (a condition
/// on `m`, the messages, with `?1` bound to `arg`): each unit's text hash and
/// the bytes the file stores for it (its f16 scalars), read by key from the
/// file itself. Every unit must be in the file.
fn stored_units(sb: &Sandbox, sql_where: &str, arg: &str) -> Vec<(String, Vec<u8>)> {
    let conn = rusqlite::Connection::open_with_flags(
        sb.database(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let dims: usize = conn
        .query_row("SELECT value FROM meta WHERE key = 'embed_dims'", [], |r| {
            r.get::<_, String>(0)
        })
        .unwrap()
        .parse()
        .unwrap();
    let mut stmt = conn
        .prepare(&format!(
            "SELECT c.id, c.text_hash FROM chunks c JOIN messages m ON m.id = c.message
             WHERE {sql_where}"
        ))
        .unwrap();
    let units: Vec<(i64, String)> = stmt
        .query_map([arg], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert!(!units.is_empty(), "no unit matches {sql_where}");
    let path = sb.data_dir().join("vectors.usearch");
    let index = deja_store::vectors::VectorIndex::open(&path, dims, true).unwrap();
    units
        .into_iter()
        .map(|(key, hash)| {
            let bytes = index
                .stored_bytes(key as u64)
                .unwrap_or_else(|| panic!("unit {key} is not in the vector file"));
            assert_eq!(bytes.len(), dims * 2, "the file stores f16 scalars");
            (hash, bytes)
        })
        .collect()
}

/// Whether the vector file's bytes hold `needle` anywhere.
fn vector_file_holds(sb: &Sandbox, needle: &[u8]) -> bool {
    std::fs::read(sb.data_dir().join("vectors.usearch"))
        .unwrap()
        .windows(needle.len())
        .any(|w| w == needle)
}

/// Of `units`, those whose text no unit of the store has any more.
fn gone_units(sb: &Sandbox, units: &[(String, Vec<u8>)]) -> Vec<Vec<u8>> {
    units
        .iter()
        .filter(|(hash, _)| {
            count(
                sb,
                &format!("SELECT count(*) FROM chunks WHERE text_hash = '{hash}'"),
            ) == 0
        })
        .map(|(_, bytes)| bytes.clone())
        .collect()
}

fn count(sb: &Sandbox, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open_with_flags(
        sb.database(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn a_transcript_over_the_size_limit_is_indexed_once_the_limit_is_raised() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n[index]\nmax_file_bytes = 100\n");
    let history = aider_project(&sb, "billing", HISTORY);
    let run = sb.index();
    assert_eq!(
        run["transcripts"]["failed"][0]["path"],
        history.to_str().unwrap(),
        "{run:#}"
    );
    assert!(session_ids(&sb, "aider").is_empty());
    assert!(doctor_problems(&sb).contains("max_file_bytes"));

    // Still too large: tried again, and reported again.
    let run = sb.index();
    assert_eq!(failed(&run), 1, "{run:#}");

    // The limit is raised; the file itself is untouched (same size and mtime).
    sb.config("[embed]\nenabled = false\n[index]\nmax_file_bytes = 100000\n");
    let run = sb.index();
    assert_eq!(failed(&run), 0, "{run:#}");
    assert_eq!(run["sessions"]["added"], 1, "{run:#}");
    assert_eq!(session_ids(&sb, "aider").len(), 1);
    let problems = doctor_problems(&sb);
    assert!(!problems.contains("max_file_bytes"), "{problems}");
    // And now it is unchanged.
    assert_eq!(sb.index()["transcripts"]["changed"], 0);
}

#[test]
fn a_transcript_that_failed_to_parse_heals_and_doctor_stops_listing_it() {
    let sb = Sandbox::new();
    // The aider reader refuses to guess the times of a history in a zone it
    // does not know: every history fails to parse.
    sb.config("[embed]\nenabled = false\n[harness.aider]\ntimezone = \"Mars/Olympus\"\n");
    let history = aider_project(&sb, "billing", HISTORY);
    let run = sb.index();
    assert_eq!(failed(&run), 1, "{run:#}");
    assert!(
        run["transcripts"]["failed"][0]["error"]
            .as_str()
            .unwrap()
            .contains("Mars/Olympus"),
        "{run:#}"
    );
    let problems = doctor_problems(&sb);
    assert!(problems.contains(history.to_str().unwrap()), "{problems}");
    // Tried again on the next run, though nothing changed.
    assert_eq!(failed(&sb.index()), 1);

    sb.config("[embed]\nenabled = false\n[harness.aider]\ntimezone = \"UTC\"\n");
    let run = sb.index();
    assert_eq!(failed(&run), 0, "{run:#}");
    assert_eq!(run["sessions"]["added"], 1, "{run:#}");
    let problems = doctor_problems(&sb);
    assert!(!problems.contains(history.to_str().unwrap()), "{problems}");
}

#[test]
fn an_unreadable_transcript_is_retried_once_readable_though_its_mtime_did_not_change() {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    let id = "0f18b3b3-7342-4d89-826c-b78fc1922f6c";
    let file = gemini_session(&sb.home.join(".gemini"), "billing", id, 0, 2, "invoice");
    sb.index();
    // The session grows while deja may not read the file (say a umask or a
    // sync tool got its mode wrong); chmod does not change the mtime.
    gemini_session(&sb.home.join(".gemini"), "billing", id, 0, 4, "invoice");
    set_mode(&file, 0o000);
    // Root reads any file: the runs from here on are then made by `nobody`,
    // with the sandbox its own and a copy of deja installed where it can run it.
    let nobody = std::fs::read(&file).is_ok().then(|| {
        fn chown_tree(path: &Path) {
            std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
            if path.is_dir() && !path.is_symlink() {
                for entry in std::fs::read_dir(path).unwrap() {
                    chown_tree(&entry.unwrap().path());
                }
            }
        }
        let root = sb.home.parent().unwrap();
        let plugins = root.join("prefix/lib/deja/plugins");
        std::fs::create_dir_all(&plugins).unwrap();
        std::fs::create_dir_all(root.join("prefix/bin")).unwrap();
        let built = crate::common::deja_bin();
        let deja = root.join("prefix/bin/deja");
        std::fs::copy(&built, &deja).unwrap();
        for entry in std::fs::read_dir(built.parent().unwrap()).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("libdeja_plugin_")
                && name.ends_with(std::env::consts::DLL_EXTENSION)
            {
                std::fs::copy(&path, plugins.join(name)).unwrap();
            }
        }
        chown_tree(root);
        deja
    });
    let ok = |args: &[&str]| -> serde_json::Value {
        let Some(deja) = &nobody else {
            return sb.ok(args).json();
        };
        use std::os::unix::process::CommandExt;
        let out = sb
            .command_of(deja)
            .uid(65534)
            .gid(65534)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let run = ok(&["index", "--json"]);
    assert_eq!(failed(&run), 1, "{run:#}");
    set_mode(&file, 0o644);
    let run = ok(&["index", "--json"]);
    assert_eq!(failed(&run), 0, "{run:#}");
    let shown = ok(&["show", id, "--json"]);
    assert_eq!(shown["messages"].as_array().unwrap().len(), 4, "{shown:#}");
}

#[test]
fn changing_the_aider_timezone_rereads_aider_histories() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n[harness.aider]\ntimezone = \"UTC\"\n");
    aider_project(&sb, "billing", HISTORY);
    sb.index();
    let started = |sb: &Sandbox| {
        sb.ok(&["sessions", "--json", "--harness", "aider"]).json()["sessions"][0]["started_at"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let before = started(&sb);
    assert!(before.starts_with("2026-07-17T09:00:00"), "{before}");

    sb.config("[embed]\nenabled = false\n[harness.aider]\ntimezone = \"+02:00\"\n");
    let run = sb.index();
    assert_eq!(run["transcripts"]["changed"], 1, "{run:#}");
    let after = started(&sb);
    assert!(after.starts_with("2026-07-17T07:00:00"), "{after}");
    // The same session, not a new one.
    assert_eq!(run["sessions"]["added"], 0, "{run:#}");
    assert_eq!(session_ids(&sb, "aider").len(), 1);
    // And then nothing to do.
    assert_eq!(sb.index()["transcripts"]["changed"], 0);
}

#[test]
fn changing_redaction_patterns_rereads_and_leaves_the_secret_in_no_file() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    aider_project(&sb, "billing", HISTORY);
    aider_project(&sb, "deploy", &secret_history());
    sb.index();
    let out = sb.ok(&["recall", "--mode", "lexical", "--json", SECRET_TOKEN]);
    assert!(out.stdout.contains(SECRET_TOKEN), "{}", out.stdout);

    sb.config(&format!("[embed]\nenabled = false\n{SECRET_PATTERN}"));
    let run = sb.index();
    assert!(
        run["transcripts"]["changed"].as_u64().unwrap() >= 1,
        "{run:#}"
    );
    let redacted: Vec<String> = session_ids(&sb, "aider")
        .into_iter()
        .filter(|id| {
            sb.ok(&["show", id, "--json"])
                .stdout
                .contains("[REDACTED:staging-login]")
        })
        .collect();
    assert_eq!(redacted.len(), 1, "the session is shown redacted");
    let shown = sb.ok(&["show", &redacted[0], "--json"]).stdout;
    assert!(!shown.contains(SECRET_TOKEN), "{shown}");
    assert_nowhere(&sb, SECRET_TAIL, "after the redaction change");
    assert_eq!(sb.index()["transcripts"]["changed"], 0);
}

#[test]
fn a_transcript_changed_with_the_redaction_settings_in_one_run_is_scrubbed_too() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    // The only transcript: no other one is re-read with its content as it
    // was (which would bring a scrub of its own).
    let history = aider_project(&sb, "deploy", &secret_history());
    sb.index();
    // The scan finds the secret before.
    assert!(!holding(&files_under(&sb.data_dir()), SECRET_TAIL).is_empty());

    // The session goes on (its file grows) and the redaction rule arrives
    // before the next run: content and settings change together.
    let mut grown = std::fs::read_to_string(&history).unwrap();
    grown.push_str("\n#### And the release notes?  \n\nThey are in CHANGES.md now.\n");
    std::fs::write(&history, grown).unwrap();
    sb.config(&format!("[embed]\nenabled = false\n{SECRET_PATTERN}"));
    // A reader in the middle of a read transaction keeps the write-ahead
    // log: the scrub this run owes cannot finish, and says so.
    let reader = rusqlite::Connection::open(sb.database()).unwrap();
    reader
        .execute_batch("BEGIN; SELECT count(*) FROM messages;")
        .unwrap();
    let run = sb.run(&["index", "--json"]);
    assert_eq!(run.code, 3, "the re-read owes a scrub: {}", run.stderr);
    assert!(
        run.json()["transcripts"]["changed"].as_u64().unwrap() >= 1,
        "{}",
        run.stdout
    );
    assert_eq!(
        count(&sb, "SELECT count(*) FROM meta WHERE key = 'scrub_pending'"),
        1
    );
    reader.execute_batch("COMMIT").unwrap();
    drop(reader);

    // The next run finishes it.
    let run = sb.run(&["index", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["transcripts"]["changed"], 0);
    // What the session added is stored, redacted.
    let out = sb.ok(&["recall", "--mode", "lexical", "--json", "release notes"]);
    assert!(
        !out.json()["hits"].as_array().unwrap().is_empty(),
        "{}",
        out.stdout
    );
    // Database and write-ahead log alike.
    assert_nowhere(&sb, SECRET_TAIL, "after a change of content and settings");
}

#[test]
fn a_forget_that_a_reader_holds_up_exits_3_and_the_next_index_finishes_the_scrub() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    aider_project(&sb, "billing", HISTORY);
    aider_project(&sb, "importer", &forgettable_history());
    sb.index();
    let out = sb.ok(&["recall", "--json", "--mode", "lexical", FORGET_TOKEN]);
    let id = out.json()["hits"][0]["session_id"]
        .as_str()
        .unwrap()
        .to_string();

    // Another process is in the middle of a read transaction.
    let reader = rusqlite::Connection::open(sb.database()).unwrap();
    reader
        .execute_batch("BEGIN; SELECT count(*) FROM messages;")
        .unwrap();
    let forget = sb.run(&["forget", &id]);
    assert_eq!(forget.code, 3, "{}", forget.stderr);
    assert!(
        forget.stderr.contains("forgot 1 session"),
        "{}",
        forget.stderr
    );
    assert!(
        forget.stderr.contains("write-ahead log") && forget.stderr.contains("deja index"),
        "{}",
        forget.stderr
    );
    assert_eq!(
        count(&sb, "SELECT count(*) FROM meta WHERE key = 'scrub_pending'"),
        1
    );
    // The session is gone from every answer already.
    let out = sb.run(&["recall", "--json", "--mode", "lexical", FORGET_TOKEN]);
    assert_eq!(out.json()["hits"], serde_json::json!([]), "{}", out.stdout);

    // The reader is done; the next writer finishes the scrub.
    reader.execute_batch("COMMIT").unwrap();
    drop(reader);
    let index = sb.run(&["index", "--json"]);
    assert_eq!(index.code, 0, "{}", index.stderr);
    assert_eq!(
        count(&sb, "SELECT count(*) FROM meta WHERE key = 'scrub_pending'"),
        0
    );
    assert_nowhere(&sb, FORGET_TAIL, "after the next index");
}

#[test]
fn forget_and_later_redaction_leave_no_text_behind_with_embeddings() {
    let mut sb = Sandbox::new();
    sb.config_with_model("[harness.aider]\ntimezone = \"UTC\"\n");
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    aider_project(&sb, "billing", HISTORY);
    aider_project(&sb, "importer", &forgettable_history());
    aider_project(&sb, "deploy", &secret_history());
    gemini_session(
        &sb.home.join(".gemini"),
        "billing",
        "0f18b3b3-7342-4d89-826c-b78fc1922f6c",
        0,
        4,
        "invoice export",
    );
    let run = sb.index();
    assert!(run["embeddings"]["units"].as_u64().unwrap() > 0, "{run:#}");
    // The scan finds what is there, and covers the vector file.
    assert!(sb.data_dir().join("vectors.usearch").is_file());
    assert!(!holding(&files_under(&sb.data_dir()), FORGET_TAIL).is_empty());
    let embeddings_before = count(&sb, "SELECT count(*) FROM embeddings");

    let out = sb.ok(&["recall", "--json", "--mode", "lexical", FORGET_TOKEN]);
    let id = out.json()["hits"][0]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    // The vectors of the session's text windows, as the file stores them:
    // found there now, so the scan below can fail.
    let forgotten = stored_units(
        &sb,
        "m.session = (SELECT id FROM sessions WHERE session_id = ?1)",
        &id,
    );
    for (_, bytes) in &forgotten {
        assert!(vector_file_holds(&sb, bytes));
    }
    let kept = stored_units(&sb, "m.text LIKE '%' || ?1 || '%'", "tenant predicate");
    sb.ok(&["forget", &id]);
    assert_nowhere(&sb, FORGET_TAIL, "after forget");
    let gone = gone_units(&sb, &forgotten);
    assert_eq!(gone.len(), forgotten.len());
    for bytes in &gone {
        assert!(
            !vector_file_holds(&sb, bytes),
            "a forgotten text window's vector is still in vectors.usearch"
        );
    }
    for (_, bytes) in &kept {
        assert!(vector_file_holds(&sb, bytes), "a kept vector went too");
    }
    assert!(count(&sb, "SELECT count(*) FROM embeddings") < embeddings_before);
    assert_eq!(
        count(
            &sb,
            "SELECT count(*) FROM embeddings e
             WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.text_hash = e.text_hash)"
        ),
        0,
        "a cached vector outlives the forgotten text"
    );
    // The others still recall, semantically too.
    for mode in ["lexical", "semantic", "hybrid"] {
        let out = sb.ok(&["recall", "--json", "--mode", mode, "invoice export module"]);
        assert!(
            out.json()["hits"]
                .as_array()
                .unwrap()
                .iter()
                .any(|h| h["harness"] == "gemini"),
            "{mode}: {}",
            out.stdout
        );
    }
    assert_nowhere(&sb, FORGET_TAIL, "after recall");

    // A secret redacted later: re-read, re-embedded, and the cached vectors
    // of the texts that held it are dropped.
    let with_secret: Vec<String> = {
        let conn = rusqlite::Connection::open(sb.database()).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT DISTINCT c.text_hash FROM chunks c JOIN messages m ON m.id = c.message
                 WHERE m.text LIKE '%' || ?1 || '%'",
            )
            .unwrap();
        stmt.query_map([SECRET_TOKEN], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    assert!(!with_secret.is_empty());
    let secret_units = stored_units(
        &sb,
        "m.session = (SELECT session FROM messages WHERE text LIKE '%' || ?1 || '%' LIMIT 1)",
        SECRET_TOKEN,
    );
    for (_, bytes) in &secret_units {
        assert!(vector_file_holds(&sb, bytes));
    }
    sb.config_with_model(&format!(
        "[harness.aider]\ntimezone = \"UTC\"\n{SECRET_PATTERN}"
    ));
    let run = sb.index();
    assert!(
        run["embeddings"]["embedded"].as_u64().unwrap() > 0,
        "{run:#}"
    );
    assert_nowhere(&sb, SECRET_TAIL, "after the redaction change");
    let gone = gone_units(&sb, &secret_units);
    assert!(
        !gone.is_empty(),
        "no window of the secret's session changed"
    );
    for bytes in &gone {
        assert!(
            !vector_file_holds(&sb, bytes),
            "the vector of a window that held the secret is still in vectors.usearch"
        );
    }
    for hash in &with_secret {
        assert_eq!(
            count(
                &sb,
                &format!("SELECT count(*) FROM embeddings WHERE text_hash = '{hash}'")
            ),
            0,
            "the vector of a text holding the secret is still cached"
        );
    }
    let out = sb.ok(&["recall", "--json", "deploy script staging login"]);
    assert!(
        out.stdout.contains("[REDACTED:staging-login]"),
        "{}",
        out.stdout
    );
}

#[test]
fn index_removes_stale_temporary_files() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    aider_project(&sb, "billing", HISTORY);
    sb.index();
    let data = sb.data_dir();
    // A pid no process has (beyond any pid_max).
    let dead = i32::MAX - 1;
    let vectors_tmp = data.join(format!(".vectors.usearch.tmp-{dead}"));
    std::fs::write(&vectors_tmp, b"half a vector index").unwrap();
    let query_model = data.join("cache/query-model");
    let model_tmp = query_model.join(format!(".tmp-{dead}"));
    std::fs::create_dir_all(&model_tmp).unwrap();
    std::fs::write(model_tmp.join("model.onnx"), b"half a model").unwrap();
    // One that a live process is making right now stays.
    let live_tmp = query_model.join(format!(".tmp-{}", std::process::id()));
    std::fs::create_dir_all(&live_tmp).unwrap();

    sb.index();
    assert!(!vectors_tmp.exists(), "{}", vectors_tmp.display());
    assert!(!model_tmp.exists(), "{}", model_tmp.display());
    assert!(live_tmp.exists(), "{}", live_tmp.display());
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_data_folder_made_by_another_tool_is_made_private() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    aider_project(&sb, "billing", HISTORY);
    std::fs::create_dir_all(sb.data_dir()).unwrap();
    set_mode(&sb.data_dir(), 0o755);
    sb.index();
    assert_eq!(mode(&sb.data_dir()), 0o700);

    set_mode(&sb.data_dir(), 0o755);
    let problems = doctor_problems(&sb);
    assert!(problems.contains("chmod 700"), "{problems}");
    let id = &session_ids(&sb, "aider")[0];
    sb.ok(&["forget", id]);
    assert_eq!(mode(&sb.data_dir()), 0o700);
}

#[test]
fn the_database_and_vector_file_are_private_and_doctor_says_when_they_are_not() {
    let sb = Sandbox::new();
    sb.config_with_model("");
    aider_project(&sb, "billing", HISTORY);
    sb.index();
    let vectors = sb.data_dir().join("vectors.usearch");
    assert_eq!(mode(&sb.database()), 0o600);
    assert_eq!(mode(&vectors), 0o600);
    let problems = doctor_problems(&sb);
    assert!(!problems.contains("readable by others"), "{problems}");

    for file in [vectors, sb.database()] {
        set_mode(&file, 0o644);
        let problems = doctor_problems(&sb);
        let fix = format!("chmod 600 '{}'", file.display());
        assert!(problems.contains(&fix), "no `{fix}` in {problems}");
        set_mode(&file, 0o600);
    }
}

/// The download cache `scripts/fetch-model` filled (reruns use it offline).
fn download_cache() -> PathBuf {
    std::env::var_os("DEJA_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/deja/downloads")
        })
}

fn fetch_model(home: &Path, cache: &Path) {
    let out = std::process::Command::new(repo().join("scripts/fetch-model"))
        .arg("--home")
        .arg(home)
        .arg("--cache")
        .arg(cache)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn fetch_model_makes_the_data_folder_private() {
    let cache = download_cache();
    let wheels = std::fs::read_dir(&cache)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "whl"))
                .count()
        })
        .unwrap_or(0);
    assert!(
        wheels >= 3,
        "the download cache {} lacks the model's wheels; run scripts/fetch-model first",
        cache.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("fresh/deja");
    let existing = dir.path().join("existing/deja");
    std::fs::create_dir_all(&existing).unwrap();
    set_mode(&existing, 0o755);
    for home in [&fresh, &existing] {
        fetch_model(home, &cache);
        assert_eq!(mode(home), 0o700, "{}", home.display());
    }
    // Already installed: a rerun still makes the folder private.
    set_mode(&existing, 0o755);
    fetch_model(&existing, &cache);
    assert_eq!(mode(&existing), 0o700);
}
