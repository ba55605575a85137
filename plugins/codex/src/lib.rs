//! deja reader plugin for Codex CLI rollouts (work in progress).
