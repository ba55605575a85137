//! deja reader plugin for Claude Code session transcripts (work in progress).
