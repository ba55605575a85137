//! Which installed model embeds a history when the config names no model
//! folder: `embed.model` says `minilm` (all-MiniLM-L6-v2, English),
//! `multilingual` (multilingual-e5-small) or `auto`. With `auto`, a store
//! keeps the model its vectors were made with (a store never mixes models);
//! a history not embedded yet gets the multilingual model when that model is
//! installed and enough of the history is written in Chinese, Japanese,
//! Korean or another script than Latin, and MiniLM otherwise.

use std::path::{Path, PathBuf};

use crate::{DEFAULT_MODEL, FALLBACK_MODEL};

/// The multilingual model's folder name under `<data dir>/models`.
pub const MULTILINGUAL_MODEL: &str = "multilingual-e5-small-int8";

/// The share of sampled messages written mostly in a script other than
/// Latin from which `auto` picks the multilingual model.
pub const NON_LATIN_SHARE: f64 = 0.2;

/// Messages sampled (the newest) and characters read of each.
pub const SAMPLE_MESSAGES: usize = 2000;
/// Characters read of each sampled message.
pub const SAMPLE_CHARS: usize = 400;

/// What the config asks for (`embed.model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preference {
    /// Decided by the store and the history (see the module).
    Auto,
    /// all-MiniLM-L6-v2.
    English,
    /// multilingual-e5-small.
    Multilingual,
}

impl Preference {
    /// From the config's value (`auto`, `minilm`, `multilingual`); `None`
    /// for anything else.
    pub fn parse(value: &str) -> Option<Preference> {
        match value {
            "" | "auto" => Some(Preference::Auto),
            "minilm" => Some(Preference::English),
            "multilingual" => Some(Preference::Multilingual),
            _ => None,
        }
    }
}

/// How much of a history is written in scripts other than Latin.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Scripts {
    /// Messages sampled that hold letters.
    pub messages: usize,
    /// Of those, the ones mostly in another script than Latin.
    pub non_latin: usize,
}

impl Scripts {
    /// Counts `texts`: a message is non-Latin when at least 30% of its
    /// letters are outside the Latin script (Chinese, Japanese and Korean
    /// carry a word in one or two characters, so a little prose among
    /// code identifiers counts).
    pub fn of<S: AsRef<str>>(texts: &[S]) -> Scripts {
        let mut s = Scripts::default();
        for text in texts {
            let (mut latin, mut other) = (0usize, 0usize);
            for c in text.as_ref().chars().filter(|c| c.is_alphabetic()) {
                if is_latin(c) {
                    latin += 1;
                } else {
                    other += 1;
                }
            }
            if latin + other == 0 {
                continue;
            }
            s.messages += 1;
            if other * 10 >= (latin + other) * 3 {
                s.non_latin += 1;
            }
        }
        s
    }

    /// The non-Latin share, 0 for no messages.
    pub fn share(&self) -> f64 {
        if self.messages == 0 {
            0.0
        } else {
            self.non_latin as f64 / self.messages as f64
        }
    }
}

/// Latin letters: ASCII and the Latin blocks up to Latin Extended-B, plus
/// Latin Extended Additional.
fn is_latin(c: char) -> bool {
    matches!(c as u32, 0x41..=0x5A | 0x61..=0x7A | 0xC0..=0x24F | 0x1E00..=0x1EFF)
}

/// The chosen model folder and why it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The model folder.
    pub dir: PathBuf,
    /// Why, in a sentence.
    pub why: String,
    /// Whether it is the store's own model, kept.
    pub kept: bool,
}

fn installed(dir: &Path) -> bool {
    dir.join("model.onnx").is_file()
}

/// MiniLM's folder: the int8 build, else the fp32 one while only it is
/// installed.
fn english(models: &Path) -> PathBuf {
    let default = models.join(DEFAULT_MODEL);
    let fallback = models.join(FALLBACK_MODEL);
    if !installed(&default) && installed(&fallback) {
        fallback
    } else {
        default
    }
}

/// The model for `preference` under `models` (`<data dir>/models`), given
/// the model id the store's vectors were made with (`recorded`, its folder
/// name before the `@`) and, when needed, the history's scripts.
pub fn choose(
    preference: Preference,
    models: &Path,
    recorded: Option<&str>,
    scripts: impl FnOnce() -> Scripts,
) -> Choice {
    match preference {
        Preference::English => Choice {
            dir: english(models),
            why: "embed.model = \"minilm\" in the config".into(),
            kept: false,
        },
        Preference::Multilingual => Choice {
            dir: models.join(MULTILINGUAL_MODEL),
            why: "embed.model = \"multilingual\" in the config".into(),
            kept: false,
        },
        Preference::Auto => {
            let kept = recorded
                .and_then(|id| id.split('@').next())
                .filter(|name| [DEFAULT_MODEL, FALLBACK_MODEL, MULTILINGUAL_MODEL].contains(name))
                .map(|name| models.join(name))
                .filter(|dir| installed(dir));
            if let Some(dir) = kept {
                return Choice {
                    dir,
                    why: "the store's vectors were made with it (set embed.model to change it, \
                          which re-embeds everything)"
                        .into(),
                    kept: true,
                };
            }
            let multilingual = models.join(MULTILINGUAL_MODEL);
            if !installed(&multilingual) {
                return Choice {
                    dir: english(models),
                    why: format!(
                        "the default; the multilingual model is not installed ({} installs it)",
                        crate::install::fetch_model_command_for(&multilingual)
                    ),
                    kept: false,
                };
            }
            let s = scripts();
            let percent = (s.share() * 100.0).round();
            if s.share() >= NON_LATIN_SHARE {
                Choice {
                    dir: multilingual,
                    why: format!(
                        "{percent}% of the history's messages ({} of {} sampled) are in Chinese, \
                         Japanese, Korean or another non-Latin script (at least {}% picks the \
                         multilingual model)",
                        s.non_latin,
                        s.messages,
                        NON_LATIN_SHARE * 100.0
                    ),
                    kept: false,
                }
            } else {
                Choice {
                    dir: english(models),
                    why: format!(
                        "{percent}% of the history's messages ({} of {} sampled) are in a \
                         non-Latin script, under the {}% that picks the multilingual model",
                        s.non_latin,
                        s.messages,
                        NON_LATIN_SHARE * 100.0
                    ),
                    kept: false,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn install(models: &Path, name: &str) {
        std::fs::create_dir_all(models.join(name)).unwrap();
        std::fs::write(models.join(name).join("model.onnx"), "x").unwrap();
    }

    #[test]
    fn scripts_count_messages_mostly_outside_latin() {
        let s = Scripts::of(&[
            "我的这个项目里面，总是会内存泄露 rpc 请求太多",
            "パッケージ管理はuvを利用し",
            "fix the failing test in parser.rs",
            "Привет, как дела",
            "12345 ---",
            "use serde_json::Value; // 注释",
        ]);
        assert_eq!(s.messages, 5);
        assert_eq!(s.non_latin, 3);
        assert!((s.share() - 0.6).abs() < 1e-9);
        assert_eq!(Scripts::of::<&str>(&[]).share(), 0.0);
    }

    #[test]
    fn auto_keeps_the_store_model_then_looks_at_the_history() {
        let dir = tempfile::tempdir().unwrap();
        let models = dir.path();
        let cjk = || Scripts {
            messages: 10,
            non_latin: 6,
        };
        let english_history = || Scripts {
            messages: 10,
            non_latin: 1,
        };

        // Only MiniLM installed: MiniLM whatever the history.
        install(models, DEFAULT_MODEL);
        let c = choose(Preference::Auto, models, None, cjk);
        assert_eq!(c.dir, models.join(DEFAULT_MODEL));
        assert!(c.why.contains("not installed"), "{}", c.why);

        // Both installed: the history decides.
        install(models, MULTILINGUAL_MODEL);
        let c = choose(Preference::Auto, models, None, cjk);
        assert_eq!(c.dir, models.join(MULTILINGUAL_MODEL));
        assert!(c.why.contains("60%"), "{}", c.why);
        let c = choose(Preference::Auto, models, None, english_history);
        assert_eq!(c.dir, models.join(DEFAULT_MODEL));
        assert!(c.why.contains("10%"), "{}", c.why);

        // A store keeps its model, without looking at the history.
        let recorded = format!("{DEFAULT_MODEL}@0123456789ab:256/32/48");
        let c = choose(Preference::Auto, models, Some(&recorded), || {
            panic!("the history is not read when the store has a model")
        });
        assert_eq!(c.dir, models.join(DEFAULT_MODEL));
        assert!(c.why.contains("store's vectors"), "{}", c.why);
        // ... unless that model is gone or unknown.
        let c = choose(Preference::Auto, models, Some("elsewhere@1:1/1/1"), cjk);
        assert_eq!(c.dir, models.join(MULTILINGUAL_MODEL));

        // The config wins.
        let c = choose(Preference::English, models, None, cjk);
        assert_eq!(c.dir, models.join(DEFAULT_MODEL));
        let recorded = format!("{DEFAULT_MODEL}@0123456789ab:256/32/48");
        let c = choose(
            Preference::Multilingual,
            models,
            Some(&recorded),
            english_history,
        );
        assert_eq!(c.dir, models.join(MULTILINGUAL_MODEL));
        assert!(c.why.contains("embed.model"), "{}", c.why);
    }

    #[test]
    fn preferences_parse() {
        assert_eq!(Preference::parse("auto"), Some(Preference::Auto));
        assert_eq!(Preference::parse(""), Some(Preference::Auto));
        assert_eq!(Preference::parse("minilm"), Some(Preference::English));
        assert_eq!(
            Preference::parse("multilingual"),
            Some(Preference::Multilingual)
        );
        assert_eq!(Preference::parse("e5"), None);
    }
}
