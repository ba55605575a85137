//! A reader that lets a test hold `deja index` in the middle of a run:
//! `*.gated` files below its `roots` are one session each, one message per
//! line; before parsing a file whose name starts with `wait`, it creates
//! `<file>.reached` and blocks until `<file>.go` exists (at most a minute).
//! Tests synchronise on those files instead of on sleeps.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use deja_plugin_api::discover::{expand_home, Collector, CommonConfig, Excludes};
use deja_plugin_api::text::{decode, lines};
use deja_plugin_api::*;

struct Gated;

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn wait_for_go(path: &Path) -> Result<(), PluginError> {
    std::fs::write(with_suffix(path, ".reached"), b"")
        .map_err(|e| PluginError::new(ErrorKind::Io, format!("cannot signal: {e}")))?;
    let go = with_suffix(path, ".go");
    let started = Instant::now();
    while !go.exists() {
        if started.elapsed() > Duration::from_secs(60) {
            return Err(PluginError::new(ErrorKind::Other, "never told to go on"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

impl Reader for Gated {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "gated".into(),
            version: "0.0.1".into(),
            harness: "gated".into(),
            description: "blocks mid-index until a test says go".into(),
            abi: version::CURRENT,
            config_keys: RVec::new(),
        }
    }

    fn detect(path: &str, _head: &[u8]) -> u8 {
        if path.ends_with(".gated") {
            100
        } else {
            0
        }
    }

    fn discover(context: &HostContext) -> Result<Discovery, PluginError> {
        let config: CommonConfig = context.config()?;
        let mut found = Collector::new(Excludes::new(&config.exclude, context.home()));
        for root in &config.roots {
            let root = expand_home(root, context.home());
            found.walk(&root, 1, &mut |c, path| {
                if path.extension().is_some_and(|e| e == "gated") {
                    c.add(path);
                }
            });
        }
        Ok(found.finish())
    }

    fn parse(request: &ParseRequest<'_>) -> Result<ParseOutput, PluginError> {
        let path = Path::new(request.path.as_str());
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if stem.starts_with("wait") {
            wait_for_go(path)?;
        }
        // A fixed time, so that two homes indexing the same text agree.
        let when = 1_700_000_000_000;
        let mut session = Session::new(format!("gated-{stem}"), stem.as_str(), when, when);
        let (text, _encoding) = decode(request.bytes.as_slice());
        for line in lines(&text) {
            session.messages.push(Message::new(Role::User, line, when));
        }
        Ok(ParseOutput {
            sessions: RVec::from(vec![session]),
            ..Default::default()
        })
    }

    fn resume(_request: &ResumeRequest<'_>) -> Result<ResumeAdvice, PluginError> {
        Ok(ResumeAdvice::Refused {
            message: "gated transcripts cannot be reopened".into(),
        })
    }
}

export_plugin!(Gated);
