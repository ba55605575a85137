//! deja reader plugin for Qwen Code chat recordings (work in progress).
