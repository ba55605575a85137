//! End-to-end tests: they run the real `deja` binary in a temporary HOME.
//!
//! The bundled reader plugins are built on first use (`cargo build` of the five
//! plugin crates), so a plain `cargo test` works; test plugins and the guide's
//! example plugin are built outside the workspace, like third-party plugins.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod agents;
mod agents_npm;
mod agents_npm2;
mod agents_pypi;
mod agents_pypi10;
mod agents_pypi11;
mod agents_pypi2;
mod agents_pypi3;
mod agents_pypi4;
mod agents_pypi5;
mod agents_pypi6;
mod agents_pypi7;
mod agents_pypi8;
mod agents_pypi9;
mod amazon_q;
mod arithmetic;
mod blame;
mod blame_lines;
mod checks;
mod cloned;
mod commands;
mod common;
mod corpus;
mod corpus_commands;
mod cursor_editor;
mod demo;
mod described;
mod embedding;
mod extensions;
mod forget;
mod golden;
mod guide;
mod hardening;
mod harness_runs;
mod hostile;
mod index;
mod install;
mod languages;
mod live;
mod mcp;
mod multilingual;
mod output;
mod parse;
mod plugins;
mod recall;
mod recap;
mod setup_undo;
mod specstory;
mod storage;
mod team;
mod team_vectors;
mod trust;
mod ui;
mod wired;
mod wiring;
mod writeback;
