//! The day-zero generator's Claude Code files, read by the real Claude Code reader:
//! every session and message it wrote is found, and each question's
//! episode is in its answer session and in no other.
//! (One reader per test binary: the reader libraries export the same
//! plugin symbols.)

#[allow(dead_code)]
#[path = "../src/generate.rs"]
mod generate;

#[allow(dead_code)]
#[path = "../src/dayzero_corpus.rs"]
mod dayzero_corpus;

use std::path::Path;

use dayzero_corpus::{questions, write, SEED};

/// (sessions, messages, each session's id and message texts) of every file under `dir`.
type Found = (usize, usize, Vec<(String, Vec<String>)>);

fn read_all(dir: &Path) -> anyhow::Result<Found> {
    let (mut sessions, mut messages, mut found) = (0, 0, Vec::new());
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let bytes = std::fs::read(&path)?;
            let name = path.to_string_lossy().to_string();
            let output = deja_plugin_claude::parse::parse(&name, &bytes, 0).output;
            assert!(output.warnings.is_empty(), "{name}: {:?}", output.warnings);
            for s in output.sessions.iter() {
                sessions += 1;
                messages += s.messages.len();
                found.push((
                    s.native_id.to_string(),
                    s.messages.iter().map(|m| m.text.to_string()).collect(),
                ));
            }
        }
    }
    Ok((sessions, messages, found))
}

#[test]
fn the_reader_finds_every_session_message_and_episode() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let qs = questions(SEED, 180.0);
    let written = write(home.path(), 160, 180.0, (2, 9), &qs, SEED)?;
    assert_eq!(written.sessions, 160);
    assert!(written.claude > 30, "{written:?}");
    let (sessions, messages, found) = read_all(&home.path().join(".claude"))?;
    assert_eq!(sessions, written.claude);
    assert_eq!(messages, written.claude_messages);
    for q in qs.iter().filter(|q| q.harness == "claude") {
        let holders: Vec<&String> = found
            .iter()
            .filter(|(_, texts)| texts.iter().any(|t| t == &q.planted))
            .map(|(id, _)| id)
            .collect();
        assert_eq!(holders, vec![&q.session], "question {}", q.id);
    }
    Ok(())
}
