//! The SpecStory reader, written only in TOML (`readers/specstory.toml`,
//! a `text` source): `fixtures/golden/specstory` holds two chats SpecStory
//! saved and their projects committed (see its SOURCES.md): one of April
//! 2025 in the older format (`_**User**_`, `_**Assistant**_`, searches in
//! `<details>`), one of October 2025 in the newer (times in the turn lines,
//! thinking in `<think>`, tool calls after `Tool use: **name**`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{HostContext, ParseOutput, ROption, Reader, Role, Session};
use deja_plugin_toml::TomlReader;

const OLDER: &str =
    "real-2025-04/minsky/.specstory/history/2025-04-28_18-34-available-tasks-inquiry.md";
const NEWER: &str = "real-2025-10/agente-bsc-rag/.specstory/history/2025-10-14_22-48Z-liberar-arquivo-env-do-globalcursorignore.md";

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("specstory.toml", home, env)
}

fn golden(rel: &str) -> PathBuf {
    testing::fixtures("specstory").join(rel)
}

fn parse(path: &Path) -> ParseOutput {
    testing::parse_file::<TomlReader>(path, &context(Path::new("/nonexistent"), &[]))
}

fn one(rel: &str) -> (PathBuf, Session) {
    let path = golden(rel);
    let out = parse(&path);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert_eq!(out.sessions.len(), 1);
    (path, out.sessions.into_iter().next().unwrap())
}

/// What SpecStory writes of tools and thinking, never in a message.
fn no_tool_blocks(s: &Session) {
    for m in &s.messages {
        let text = m.text.as_str();
        for left_out in [
            "<details",
            "</details>",
            "<think>",
            "<summary>",
            "Tool use: **",
            "*Called tool*",
            "Thought Process",
            "_**",
        ] {
            assert!(!text.contains(left_out), "{left_out} in {text}");
        }
        assert!(!text.lines().any(|l| l.trim() == "---"), "{text}");
        assert!(!text.contains("\n\n\n"), "{text:?}");
    }
}

#[test]
fn the_older_format_reads_as_typed_and_answered() {
    let (path, s) = one(OLDER);
    assert_eq!(
        s.native_id.as_str(),
        "2025-04-28_18-34-available-tasks-inquiry"
    );
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Available Tasks Inquiry")
    );
    // The project is the folder holding `.specstory`.
    let project = path.ancestors().nth(3).unwrap();
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome(project.to_string_lossy().as_ref())
    );
    // The file's name is the start in UTC (the heading's 14:34:13 is the
    // machine's local time); no turn has a time.
    assert_eq!(s.started_at_ms, 1_745_865_240_000);
    // 7 turns of the person's, 7 of the assistant's (grep -c): the last
    // answer holds nothing but `---` lines.
    let roles: Vec<Role> = s.messages.iter().map(|m| m.role).collect();
    let mut want = Vec::new();
    for _ in 0..6 {
        want.extend([Role::User, Role::Assistant]);
    }
    want.push(Role::User);
    assert_eq!(roles, want);
    let said = common::messages(&s);
    assert_eq!(said[0], (Role::User, "what tasks are available?"));
    assert_eq!(
        said[2],
        (
            Role::User,
            "why didnt you tun minsky to get the available tasks"
        )
    );
    assert_eq!(
        said[12],
        (
            Role::User,
            "> I will more strictly adhere to the user-preferences rule in all future interactions, \
             especially regarding confirmation prompts and implied next steps.\n\n\
             how will you make sure this happens? you wont remember this unless you record it somewhere"
        )
    );
    // The first answer without the search SpecStory kept in `<details>`.
    let first = said[1].1;
    assert!(first.starts_with(
        "Here are the available tasks and how you can view or manage them in this project:\n\n### 1. **List All Tasks**"
    ));
    assert!(!first.contains("Searched codebase"));
    assert!(first
        .ends_with("Each task has a detailed spec file for requirements and progress tracking."));
    // The command it ran, as SpecStory wrote it: a code block.
    assert!(said[3]
        .1
        .starts_with("```bash\nminsky tasks list --json\n```\n\n```\n["));
    // The edit after the search, as SpecStory wrote it: a diff.
    assert!(said[11].1.contains("```diff\n"));
    assert!(said[11].1.ends_with(
        "This will ensure strict adherence to both your workflow and user-preferences rules going forward."
    ));
    no_tool_blocks(&s);
}

#[test]
fn the_newer_format_reads_as_typed_and_answered_without_tools_or_thinking() {
    let (path, s) = one(NEWER);
    assert_eq!(
        s.native_id.as_str(),
        "2025-10-14_22-48Z-liberar-arquivo-env-do-globalcursorignore"
    );
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Liberar arquivo .env do globalcursorignore")
    );
    let project = path.ancestors().nth(3).unwrap();
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome(project.to_string_lossy().as_ref())
    );
    assert_eq!(s.started_at_ms, 1_760_482_080_000);
    let said = common::messages(&s);
    assert_eq!(said.len(), 4);
    assert_eq!(
        said[0],
        (
            Role::User,
            "Como faço para liberar o arquivo .env do globalcursorignore. Utilize brightdata para pesquisar e me retornar"
        )
    );
    assert_eq!(said[2], (Role::User, "conitnue"));
    // Both turns of the person's say 22:25Z; an answer says no time.
    assert_eq!(s.messages[0].timestamp_ms, 1_760_480_700_000);
    assert_eq!(s.messages[2].timestamp_ms, 1_760_480_700_000);
    // The first answer: its three parts between the searches and the page
    // it read, which are left out with the thinking.
    assert_eq!(said[1].0, Role::Assistant);
    assert_eq!(
        said[1].1,
        "Vou pesquisar informações sobre como liberar arquivos do `.globalcursorignore` usando o Brightdata.\n\n\
         Vou acessar a documentação oficial do Cursor para obter informações mais detalhadas:\n\n\
         Baseado nas pesquisas realizadas, aqui está como liberar o arquivo `.env` do ignore global do Cursor:\n\n\
         ## [EMOJI] Como Liberar .env do Global Cursor Ignore"
    );
    assert!(!said[1].1.contains("Google Search"));
    assert_eq!(said[3].0, Role::Assistant);
    assert!(said[3]
        .1
        .starts_with("## [EMOJI] Como Liberar .env do Global Cursor Ignore\n\n### [EMOJI] Descobertas da Pesquisa"));
    assert!(said[3].1.ends_with(
        "**Precisa de ajuda para implementar algum dos métodos?** Posso criar os comandos ou arquivos específicos para o seu projeto BSC RAG."
    ));
    // Its code blocks are the answer's own.
    assert!(said[3].1.contains("```bash\n# .cursorignore\n"));
    no_tool_blocks(&s);
}

#[test]
fn discovery_looks_inside_known_projects_and_code_folders() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    for rel in [
        "src/shop/.specstory/history/2025-04-28_18-34-a.md",
        "src/shop/.specstory/history/2025-10-14_22-48Z-b.md",
        "src/shop/.specstory/.what-is-this.md",
        "code/team/api/.specstory/history/2026-01-03_14-51Z-c.md",
        "elsewhere/app/.specstory/history/2025-12-02_12-49Z-d.md",
    ] {
        let p = h.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"<!-- Generated by SpecStory -->\n").unwrap();
    }
    let found = |env: &[(&str, &str)]| -> Vec<String> { common::discovered(&context(h, env)) };
    let at = |rel: &str| h.join(rel).to_string_lossy().into_owned();
    assert_eq!(
        found(&[]),
        vec![
            at("code/team/api/.specstory/history/2026-01-03_14-51Z-c.md"),
            at("src/shop/.specstory/history/2025-04-28_18-34-a.md"),
            at("src/shop/.specstory/history/2025-10-14_22-48Z-b.md"),
        ]
    );
    // A project folder another harness's session named.
    let known = at("elsewhere/app");
    assert_eq!(found(&[("DEJA_KNOWN_PROJECTS", &known)]).len(), 4);
}

#[test]
fn detection_wants_the_header_in_a_history_folder() {
    let c = context(Path::new("/home/me"), &[]);
    let head = b"<!-- Generated by SpecStory -->\n\n# Title (2025-10-14 22:48Z)\n";
    let path = "/p/.specstory/history/2025-10-14_22-48Z-title.md";
    assert!(TomlReader::detect_in(&c, path, head) > 0);
    // Newer versions name their format's version in the header.
    let versioned = b"<!-- Generated by SpecStory, Markdown v2.1.0 -->\n";
    assert!(TomlReader::detect_in(&c, path, versioned) > 0);
    assert_eq!(TomlReader::detect_in(&c, path, b"# Notes\n"), 0);
    assert_eq!(
        TomlReader::detect_in(&c, "/p/docs/notes.md", b"# Notes\n"),
        0
    );
}

#[test]
fn the_newest_turn_lines_read_with_their_models_and_times() {
    // SpecStory's newest turn lines, as its CLI and extension write them
    // (from SpecStory's format, no real file): the tool call in a
    // `<tool-use>` block.
    let dir = tempfile::tempdir().unwrap();
    let file = dir
        .path()
        .join("app/.specstory/history/2025-12-02_12-49-05Z-bunch-of-updates.md");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n\
         <!-- cursor Session 227b9a24-168c-4d87-810b-9ed83e62101e (2025-12-02 12:49Z) -->\n\n\
         # Bunch of updates (2025-12-02 12:49Z)\n\n\
         _**User (2025-12-02 12:49Z)**_\n\nremove smithery entirely\n\n---\n\n\
         _**Agent (model claude-4.5-opus-high-thinking, mode Agent)**_\n\n\
         <think><details><summary>Thought Process</summary>\nThe user wants it gone.\n</details></think>\n\n---\n\n\
         <tool-use data-tool-type=\"search\" data-tool-name=\"grep\">\n<details>\n<summary>Tool use: **grep**</summary>\n\nsmithery.json\n</details>\n</tool-use>\n\n---\n\n\
         Removed smithery.json.\n\n\
         _**Agent (claude-opus-4-8 2026-07-13 13:40:56Z)**_\n\nDone.\n",
    )
    .unwrap();
    let out = parse(&file);
    let s = &out.sessions[0];
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "remove smithery entirely"),
            (Role::Assistant, "Removed smithery.json."),
            (Role::Assistant, "Done."),
        ]
    );
    assert_eq!(s.messages[2].timestamp_ms, 1_783_950_056_000);
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Bunch of updates")
    );
}
