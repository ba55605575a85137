//! The guide's runnable commands: every `deja` line of a ```` ```sh deja-test ````
//! block in README.md and the pages under docs/ runs, as written, over the
//! demo transcripts (`fixtures/demo`), and must succeed; a `recall` must
//! find something.

use std::path::{Path, PathBuf};

use crate::common::{fixtures, repo, Sandbox};

/// The fence that marks a block of commands the tests run.
const FENCE: &str = "```sh deja-test";

/// README.md and every Markdown page under docs/, in a stable order.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "md") {
                found.push(path);
            }
        }
    }
    let mut found = vec![repo().join("README.md")];
    walk(&repo().join("docs"), &mut found);
    found.sort();
    found
}

/// The command lines of the `deja-test` blocks of `text`.
fn runnable(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if inside && line.trim_start().starts_with("```") {
            inside = false;
        } else if inside {
            if !line.trim().is_empty() && !line.trim_start().starts_with('#') {
                lines.push(line.trim().to_string());
            }
        } else if line.trim() == FENCE {
            inside = true;
        }
    }
    lines
}

/// A command line's words as a POSIX shell splits them: blanks separate
/// words, and `"..."` or `'...'` quote. Anything else a shell would
/// interpret (`$`, `|`, `;`, backquotes, a trailing comment) is refused, so
/// that the line means the same here as in a terminal.
fn words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some('"') if matches!(c, '$' | '`' | '\\') => {
                return Err(format!("`{c}` inside double quotes"))
            }
            Some(_) => word.get_or_insert_with(String::new).push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            None if c.is_whitespace() => words.extend(word.take()),
            None if "$`\\|;&<>()#*?[]{}~".contains(c) => {
                return Err(format!("`{c}` outside quotes"))
            }
            None => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err("an unclosed quote".into());
    }
    words.extend(word);
    Ok(words)
}

#[test]
fn command_lines_split_as_a_shell_splits_them() {
    assert_eq!(
        words(r#"deja recall "firms peeking at each other's financials" -n 3"#).unwrap(),
        [
            "deja",
            "recall",
            "firms peeking at each other's financials",
            "-n",
            "3"
        ]
    );
    assert_eq!(
        words("deja recall 'a \"b\"' x").unwrap(),
        ["deja", "recall", "a \"b\"", "x"]
    );
    assert_eq!(words("deja recall ''").unwrap(), ["deja", "recall", ""]);
    assert!(words("deja recall \"open").is_err());
    assert!(words("deja recall x | head").is_err());
    assert!(words("deja index # comment").is_err());
    assert!(words("deja recall \"$HOME\"").is_err());
    assert_eq!(
        runnable("text\n```sh deja-test\ndeja index\n\n# a note\ndeja sessions\n```\n```sh\ndeja ui\n```\n"),
        ["deja index", "deja sessions"]
    );
}

#[test]
fn every_runnable_command_of_the_guide_succeeds_on_the_demo() {
    let mut sb = Sandbox::new();
    sb.config_with_model("");
    sb.env("DEJA_AIDER_ROOTS", fixtures().join("demo/aider"));
    sb.env("DEJA_GEMINI_ROOT", fixtures().join("demo/gemini"));
    sb.env("DEJA_CLAUDE_ROOT", fixtures().join("demo/claude"));
    sb.env("DEJA_CODEX_ROOT", fixtures().join("demo/codex"));
    // Every block may assume the demo is indexed, whatever page runs first.
    sb.ok(&["index"]);
    let mut ran = Vec::new();
    for page in pages() {
        let shown = page.strip_prefix(repo()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&page).unwrap();
        for line in runnable(&text) {
            let words = words(&line).unwrap_or_else(|e| panic!("{shown}: `{line}`: {e}"));
            assert_eq!(
                words.first().map(String::as_str),
                Some("deja"),
                "{shown}: `{line}`: a deja-test block holds deja commands only"
            );
            let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
            let out = sb.run(&args);
            assert_eq!(
                out.code, 0,
                "{shown}: `{line}` exited {}\nstdout:\n{}\nstderr:\n{}",
                out.code, out.stdout, out.stderr
            );
            if args.first() == Some(&"recall") {
                assert!(
                    !out.stdout.trim().is_empty(),
                    "{shown}: `{line}` found nothing\nstderr:\n{}",
                    out.stderr
                );
            }
            ran.push(format!("{shown}: {line}"));
        }
    }
    // These pages hold such blocks; a page that
    // loses its fence must not make this test pass by running nothing.
    for page in [
        "docs/getting-started.md",
        "docs/recall.md",
        "docs/commands.md",
        "docs/agents/README.md",
        "docs/agents/claude-code.md",
    ] {
        assert!(
            ran.iter().any(|r| r.starts_with(page)),
            "no runnable command found in {page}: {ran:#?}"
        );
    }
}

/// The command-line reference, generated from deja's help and every
/// subcommand's.
const CLI_PAGE: &str = "docs/cli.md";

/// The subcommands a `--help` text lists under `Commands:` (not `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A wrapped description continues further in.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The help of `deja <path>`, then the same for each of its subcommands.
fn help_pages(sb: &Sandbox, path: &[String], out: &mut String) {
    // `deja help PATH` rather than `deja PATH --help`: `deja aider` hands
    // `--help` to aider.
    let args: Vec<&str> = std::iter::once("help")
        .chain(path.iter().map(String::as_str))
        .collect();
    let help = sb.ok(&args).stdout;
    let name = std::iter::once("deja")
        .chain(path.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    out.push_str(&format!(
        "\n## `{name}`\n\n```text\n{}\n```\n",
        help.trim_end()
    ));
    for sub in subcommands(&help) {
        let mut next = path.to_vec();
        next.push(sub);
        help_pages(sb, &next, out);
    }
}

#[test]
fn the_command_line_reference_is_generated_from_the_help() {
    let sb = Sandbox::new();
    let mut page = String::from(
        "<!-- Generated from `deja --help` and each command's `--help`: do not edit by hand. \
         Regenerate with `UPDATE_DOCS=1 cargo test -p deja --test e2e guide::`. -->\n\n\
         # Command-line reference\n\n\
         What each command prints with `--help`. [Commands](commands.md) says more about \
         what each one does.\n",
    );
    help_pages(&sb, &[], &mut page);
    assert!(page.contains("## `deja team push`"), "{page}");
    let path = repo().join(CLI_PAGE);
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &page).unwrap();
    }
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        written == page,
        "{CLI_PAGE} differs from deja's --help; regenerate it with \
         `UPDATE_DOCS=1 cargo test -p deja --test e2e guide::` and commit it"
    );
}

#[test]
fn every_bundled_reader_has_a_page_in_the_guide() {
    let sb = Sandbox::new();
    let listed = sb.ok(&["plugins", "--json"]).json();
    let table = std::fs::read_to_string(repo().join("docs/harnesses/README.md")).unwrap();
    let front = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut checked = 0;
    for plugin in listed["plugins"].as_array().unwrap() {
        let Some(harness) = plugin["harness"].as_str() else {
            continue; // the TOML reader plugin itself reads no harness
        };
        let path = plugin["path"].as_str().unwrap();
        // Where the reader lives in this repository, as the table names it.
        let source = match path.split_once('#') {
            Some((_, file)) => format!("`plugins/toml/readers/{file}`"),
            None => format!("`plugins/{}`", plugin["name"].as_str().unwrap()),
        };
        let row = table
            .lines()
            .find(|l| l.starts_with("| [") && l.contains(&source))
            .unwrap_or_else(|| {
                panic!("docs/harnesses/README.md has no row for the {harness} reader ({source})")
            });
        let page = row
            .split_once("](")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(page, _)| page)
            .unwrap();
        assert!(
            repo().join("docs/harnesses").join(page).is_file(),
            "the {harness} reader's page docs/harnesses/{page} is missing"
        );
        assert!(
            front.contains(&format!("](docs/harnesses/{page})")),
            "README.md's table of harnesses does not link docs/harnesses/{page}"
        );
        checked += 1;
    }
    assert!(checked >= 18, "only {checked} readers listed: {listed:#}");
}
