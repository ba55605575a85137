//! Local embeddings: finding the ONNX Runtime library and the model on disk,
//! loading them through fastembed, splitting long texts into token windows,
//! and embedding batches of similar length. Nothing is ever downloaded here.
//! This is the only crate that links ONNX Runtime (ort, fastembed), so that
//! heavy native build is isolated from the rest of deja.
//!
//! - this module: [`Settings`] (where things are), [`Embedder`] (indexing).
//! - [`query`]: the query-time encoder, loaded as fast as possible.
//! - [`window`]: token windows and neighbour context.
//! - [`card`]: what a model folder says of its model (prefixes, pooling).
//! - [`centering`]: each script's mean taken out of a multilingual model's vectors.
//! - [`choice`]: which installed model embeds a history the config leaves open.

pub mod card;
pub mod centering;
pub mod choice;
pub mod install;
pub mod query;
pub mod window;

/// The ONNX Runtime session setting that makes int8 matrix products exact on
/// x86-64 processors without AVX-512 VNNI. Their AVX2 kernel multiplies 8-bit
/// activations by 8-bit weights in 16-bit sums that saturate, so the same int8
/// model gives other vectors there (seen: the demo's noise ceiling 0.279
/// against 0.252, which hid a paraphrase's answer); with this setting the
/// products are widened to 16 bits first and every processor computes the
/// same vectors. The indexing and the query sessions both set it, so stored
/// and query vectors always agree.
pub const EXACT_INT8: (&str, &str) = ("session.x64quantprecision", "1");

/// What the id of a quantised model carries after its hash since sessions
/// set [`EXACT_INT8`]: vectors made before it, on a processor whose sums
/// saturated, never mix with today's.
pub const EXACT_INT8_TAG: &str = "+x16";

/// Whether int8 products were already exact on this processor without
/// [`EXACT_INT8`] (AVX-512 VNNI or AVX-VNNI on x86-64; every other
/// architecture's kernels sum in 32 bits), so that vectors a store made here
/// before the setting are the ones made with it.
pub fn int8_was_exact_here() -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        std::arch::is_x86_feature_detected!("avx512vnni")
            || std::arch::is_x86_feature_detected!("avxvnni")
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        true
    }
}

/// The id `id` had before [`EXACT_INT8_TAG`] existed, if it carries the tag.
pub fn id_before_exact_int8(id: &str) -> Option<String> {
    let at = id.find(EXACT_INT8_TAG)?;
    Some(format!("{}{}", &id[..at], &id[at + EXACT_INT8_TAG.len()..]))
}

/// Whether the ONNX graph in `onnx_bytes` computes in int8 (the operators
/// ONNX Runtime's quantised kernels run).
pub fn quantised(onnx_bytes: &[u8]) -> bool {
    [
        &b"MatMulInteger"[..],
        b"DynamicQuantizeLinear",
        b"QLinearMatMul",
    ]
    .iter()
    .any(|op| has_op(onnx_bytes, op))
}

/// Whether the ONNX graph in `onnx_bytes` names the operator `op`.
fn has_op(onnx_bytes: &[u8], op: &[u8]) -> bool {
    onnx_bytes.windows(op.len()).any(|w| w == op)
}

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};

use deja_model::trace::trace;
pub use deja_model::ModelStamp as Known;

/// The default model's folder name under `<data dir>/models`.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2-int8";

/// The folder used when the default one is not installed: the same model in
/// fp32 arithmetic, which `scripts/fetch-model` installs first (so an
/// installation made before the int8 build, or one whose build failed, still
/// embeds).
pub const FALLBACK_MODEL: &str = "all-MiniLM-L6-v2";

/// Why embeddings are unavailable or failed.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The ONNX Runtime library is not where we looked.
    #[error("ONNX Runtime not found (looked for {looked})")]
    RuntimeMissing {
        /// Where we looked.
        looked: String,
    },
    /// The runtime library failed to load.
    #[error("cannot load ONNX Runtime from `{path}`: {message}")]
    RuntimeLoad {
        /// The library.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A model file is missing.
    #[error("embedding model not found: `{0}` is missing")]
    ModelMissing(PathBuf),
    /// The model failed to load or run.
    #[error("embedding model `{path}`: {message}")]
    Model {
        /// The model folder.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

impl EmbedError {
    /// Whether this means "not installed" (as opposed to broken).
    pub fn is_missing(&self) -> bool {
        matches!(
            self,
            EmbedError::RuntimeMissing { .. } | EmbedError::ModelMissing(_)
        )
    }
}

/// Where the model and runtime are, from the config and data folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Model folder.
    pub model_dir: PathBuf,
    /// Candidate runtime library paths, in order.
    pub runtime_candidates: Vec<PathBuf>,
    /// Tokens per window.
    pub max_tokens: usize,
    /// Overlap between windows.
    pub overlap_tokens: usize,
    /// Tokens of neighbouring messages embedded with each message.
    pub context_tokens: usize,
    /// Most windows embedded of one message (0 = all).
    pub max_windows: usize,
    /// Most windows of one message embedded by the first pass over the
    /// history (0 = all at once); a second pass embeds the rest.
    pub first_windows: usize,
    /// Most texts per model call.
    pub batch_size: usize,
    /// Most (padded) tokens per model call.
    pub batch_tokens: usize,
    /// ONNX Runtime threads (0 = all cores).
    pub threads: usize,
    /// Whether embedding is enabled at all.
    pub enabled: bool,
    /// Where derived files (the pre-optimized query model) are kept; `None`
    /// to derive nothing.
    pub cache_dir: Option<PathBuf>,
}

/// File names of the ONNX Runtime library on this platform, newest first.
fn runtime_names() -> &'static [&'static str] {
    if cfg!(target_os = "macos") {
        &["libonnxruntime.dylib", "libonnxruntime.1.32.0.dylib"]
    } else if cfg!(windows) {
        &["onnxruntime.dll"]
    } else {
        &["libonnxruntime.so", "libonnxruntime.so.1.32.0"]
    }
}

impl Settings {
    /// From the config's `[embed]` section, the user's home (for `~` in
    /// configured paths) and deja's data folder (which holds `models/`,
    /// `runtime/` and `cache/`).
    pub fn from_config(c: &deja_config::Embed, home: &Path, data_dir: &Path) -> Settings {
        let model_dir = if c.model_dir.is_empty() {
            let models = data_dir.join("models");
            let default = models.join(DEFAULT_MODEL);
            let fallback = models.join(FALLBACK_MODEL);
            if !default.join("model.onnx").is_file() && fallback.join("model.onnx").is_file() {
                fallback
            } else {
                default
            }
        } else {
            deja_config::expand_home(&c.model_dir, home)
        };
        let mut runtime_candidates = Vec::new();
        if !c.runtime.is_empty() {
            runtime_candidates.push(deja_config::expand_home(&c.runtime, home));
        } else {
            for name in runtime_names() {
                runtime_candidates.push(data_dir.join("runtime").join(name));
            }
            if let Some(p) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
                runtime_candidates.push(PathBuf::from(p));
            }
        }
        Settings {
            model_dir,
            runtime_candidates,
            max_tokens: c.max_tokens,
            overlap_tokens: c.overlap_tokens,
            context_tokens: c.context_tokens,
            max_windows: c.max_windows,
            first_windows: c.first_windows,
            batch_size: c.batch_size,
            batch_tokens: c.batch_tokens,
            threads: c.threads,
            enabled: c.enabled,
            cache_dir: Some(data_dir.join("cache")),
        }
    }

    /// The runtime library to use, if any candidate exists.
    pub fn runtime(&self) -> Result<&Path, EmbedError> {
        self.runtime_candidates
            .iter()
            .find(|p| p.is_file())
            .map(|p| p.as_path())
            .ok_or_else(|| EmbedError::RuntimeMissing {
                looked: self
                    .runtime_candidates
                    .iter()
                    .map(|p| format!("`{}`", p.display()))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// The model files, checked to exist.
    pub fn model_files(&self) -> Result<[PathBuf; 5], EmbedError> {
        let files = [
            "model.onnx",
            "tokenizer.json",
            "config.json",
            "special_tokens_map.json",
            "tokenizer_config.json",
        ]
        .map(|f| self.model_dir.join(f));
        for f in &files {
            if !f.is_file() {
                return Err(EmbedError::ModelMissing(f.clone()));
            }
        }
        Ok(files)
    }
}

impl Settings {
    /// deja's id for the model in `onnx_bytes` with this windowing: vectors
    /// of different ids never mix.
    pub fn model_id(&self, onnx_bytes: &[u8]) -> String {
        let hash = deja_model::sha256_hex(onnx_bytes);
        let name = self
            .model_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        let exact = if quantised(onnx_bytes) {
            EXACT_INT8_TAG
        } else {
            ""
        };
        format!(
            "{name}@{}{exact}:{}{}",
            hash.get(..12).unwrap_or(&hash),
            self.windowing(),
            self.card_tag()
        )
    }

    /// The model card's part of the id and fingerprint (empty for the
    /// defaults; an unreadable `deja-model.json` is reported when the model
    /// loads).
    fn card_tag(&self) -> String {
        card::ModelCard::of(&self.model_dir)
            .map(|c| c.tag())
            .unwrap_or_else(|_| "/p?".into())
    }

    /// The windowing part of the id and fingerprint: `max/overlap/context`,
    /// then `/wN` when at most N windows of a message are embedded (nothing
    /// when all are, so stores embedded before the cap existed keep their id).
    fn windowing(&self) -> String {
        let sizes = format!(
            "{}/{}/{}",
            self.max_tokens, self.overlap_tokens, self.context_tokens
        );
        match self.max_windows {
            0 => sizes,
            n => format!("{sizes}/w{n}"),
        }
    }

    /// A cheap identity of the model files and windowing: path, size and
    /// modification time of `model.onnx`, and the window sizes.
    pub fn fingerprint(&self) -> Option<String> {
        let path = self.model_dir.join("model.onnx");
        let meta = std::fs::metadata(&path).ok()?;
        let mtime = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_nanos();
        Some(format!(
            "{}|{}|{mtime}{EXACT_INT8_TAG}|{}{}",
            path.display(),
            meta.len(),
            self.windowing(),
            self.card_tag()
        ))
    }
}

/// The one ONNX Runtime environment of this process.
fn environment(lib: &Path) -> Result<ort::environment::Environment, EmbedError> {
    static ENV: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();
    ENV.get_or_init(|| {
        let builder = ort::init_from(lib).map_err(|e| e.to_string())?;
        builder.with_name("deja").build().map_err(|e| e.to_string())
    })
    .clone()
    .map_err(|message| EmbedError::RuntimeLoad {
        path: lib.to_path_buf(),
        message,
    })
}

/// A loaded embedding model.
pub struct Embedder {
    model: TextEmbedding,
    counter: tokenizers::Tokenizer,
    fingerprint: String,
    id: String,
    dims: usize,
    max_tokens: usize,
    overlap_tokens: usize,
    context_tokens: usize,
    max_windows: usize,
    first_windows: usize,
    batch_size: usize,
    batch_tokens: usize,
    one_per_call: bool,
    card: card::ModelCard,
}

/// Whether the ONNX graph in `onnx_bytes` quantises its activations with one
/// scale per tensor (`DynamicQuantizeLinear`): such a model gives a text a
/// vector that depends on the other texts of its batch and their padding, so
/// it must embed one text per call to agree with the query encoder.
pub fn scales_per_batch(onnx_bytes: &[u8]) -> bool {
    has_op(onnx_bytes, b"DynamicQuantizeLinear")
}

impl Embedder {
    /// Loads the runtime and model named by `settings`. When `known` describes
    /// the same files, its id and dimensions are reused.
    pub fn load(settings: &Settings, known: Option<&Known>) -> Result<Embedder, EmbedError> {
        let fingerprint = settings.fingerprint();
        let known = known.filter(|k| fingerprint.as_deref() == Some(k.fingerprint.as_str()));
        let files = settings.model_files()?;
        let lib = settings.runtime()?;
        let env = environment(lib)?;
        trace("runtime loaded");
        let read = |p: &PathBuf| {
            std::fs::read(p).map_err(|e| EmbedError::Model {
                path: p.clone(),
                message: e.to_string(),
            })
        };
        let [onnx, tokenizer, config, special, tokenizer_config] = &files;
        let onnx_bytes = read(onnx)?;
        let one_per_call = scales_per_batch(&onnx_bytes);
        let card = card::ModelCard::of(&settings.model_dir)?;
        let computed_id = match known {
            Some(_) => String::new(),
            None => settings.model_id(&onnx_bytes),
        };
        let model = UserDefinedEmbeddingModel::new(
            onnx_bytes,
            TokenizerFiles {
                tokenizer_file: read(tokenizer)?,
                config_file: read(config)?,
                special_tokens_map_file: read(special)?,
                tokenizer_config_file: read(tokenizer_config)?,
            },
        )
        .with_pooling(match card.pooling {
            card::Pooling::Mean => Pooling::Mean,
            card::Pooling::Cls => Pooling::Cls,
        });
        let mut options = InitOptionsUserDefined::default()
            .with_environment(env)
            .with_max_length(settings.max_tokens)
            .with_session_config(EXACT_INT8.0, EXACT_INT8.1);
        if settings.threads > 0 {
            options = options.with_intra_threads(settings.threads);
        }
        let model_err = |message: String| EmbedError::Model {
            path: settings.model_dir.clone(),
            message,
        };
        trace("model files read");
        let mut model = TextEmbedding::try_new_from_user_defined(model, options)
            .map_err(|e| model_err(e.to_string()))?;
        trace("session created");
        let mut counter = model.tokenizer.clone();
        counter
            .with_truncation(None)
            .map_err(|e| model_err(e.to_string()))?;
        counter.with_padding(None);
        let (id, dims) = match known {
            Some(k) => (k.id.clone(), k.dims),
            None => {
                let probe = model
                    .embed(["deja"], None)
                    .map_err(|e| model_err(e.to_string()))?;
                let dims = probe.first().map(|v| v.len()).unwrap_or(0);
                if dims == 0 {
                    return Err(model_err("the model returned an empty embedding".into()));
                }
                let id = computed_id;
                (id, dims)
            }
        };
        if let Some(means) = card.centering.as_ref().filter(|m| m.dims() != dims) {
            return Err(EmbedError::Model {
                path: means.path().to_path_buf(),
                message: format!(
                    "its means have {} values, the model's vectors {dims}",
                    means.dims()
                ),
            });
        }
        Ok(Embedder {
            model,
            counter,
            fingerprint: fingerprint.unwrap_or_default(),
            id,
            dims,
            max_tokens: settings.max_tokens,
            overlap_tokens: settings.overlap_tokens,
            context_tokens: settings.context_tokens,
            max_windows: settings.max_windows,
            first_windows: settings.first_windows,
            batch_size: settings.batch_size,
            batch_tokens: settings.batch_tokens,
            one_per_call,
            card,
        })
    }

    /// Identifies the model and the windowing: vectors from different ids never mix.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What the store should remember about this model.
    pub fn known(&self) -> Known {
        Known {
            fingerprint: self.fingerprint.clone(),
            id: self.id.clone(),
            dims: self.dims,
        }
    }

    /// The table of per-script means taken out of every vector, when the
    /// model's card names one.
    pub fn script_means(&self) -> Option<&Path> {
        self.card.centering.as_ref().map(|m| m.path())
    }

    /// How near off-topic questions come with this model, as its card says
    /// (0: it says nothing).
    pub fn off_topic(&self) -> f64 {
        self.card.off_topic
    }

    /// Vector dimensions.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Most windows of one message that the first pass embeds (0 = all).
    pub fn first_windows(&self) -> usize {
        self.first_windows
    }

    /// Splits `text` into windows of at most the configured number of tokens
    /// (less the room kept for context), at most `max_windows` of them
    /// (evenly spaced, the first and last kept) when that is set.
    pub fn windows(&self, text: &str) -> Vec<String> {
        let budget = self.max_tokens - 2 * self.context_tokens;
        let all = window::split(&self.counter, text, budget, self.overlap_tokens);
        window::spread(all, self.max_windows)
    }

    /// The texts embedded for a message: its windows, the first preceded by
    /// the end of the previous message and the last followed by the start of
    /// the next one (when context is configured).
    pub fn units(&self, previous: Option<&str>, text: &str, next: Option<&str>) -> Vec<String> {
        let mut units = self.windows(text);
        if units.is_empty() {
            units.push(text.to_string());
        }
        if self.context_tokens == 0 {
            return units;
        }
        let n = self.context_tokens;
        if let Some(p) = previous.map(|p| window::edge(&self.counter, p, n, true)) {
            if !p.is_empty() {
                units[0] = format!("{p}\n{}", units[0]);
            }
        }
        if let Some(x) = next.map(|x| window::edge(&self.counter, x, n, false)) {
            if !x.is_empty() {
                let last = units.len() - 1;
                units[last] = format!("{}\n{x}", units[last]);
            }
        }
        units
    }

    /// Embeds `texts`, returning unit-length vectors in the same order.
    pub fn embed(&mut self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_with_progress(texts, &mut |_| {})
    }

    /// [`Embedder::embed`], calling `done` with the number of texts embedded
    /// so far after each batch (for progress that moves while a large page
    /// is embedded).
    pub fn embed_with_progress(
        &mut self,
        texts: &[String],
        done: &mut dyn FnMut(usize),
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let prefix = self.card.passage_prefix.clone();
        self.run_model(texts, &prefix, done)
    }

    /// Embeds `texts`, each after `prefix`, in batches.
    fn run_model(
        &mut self,
        texts: &[String],
        prefix: &str,
        done: &mut dyn FnMut(usize),
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for range in self.batches(texts) {
            let end = range.end;
            let prefixed: Vec<String>;
            let batch = if prefix.is_empty() {
                &texts[range]
            } else {
                prefixed = texts[range]
                    .iter()
                    .map(|t| format!("{prefix}{t}"))
                    .collect();
                &prefixed[..]
            };
            let mut out =
                self.model
                    .embed(batch, Some(batch.len()))
                    .map_err(|e| EmbedError::Model {
                        path: PathBuf::from(&self.id),
                        message: e.to_string(),
                    })?;
            vectors.append(&mut out);
            done(end);
        }
        for (v, text) in vectors.iter_mut().zip(texts) {
            normalize(v);
            if let Some(means) = &self.card.centering {
                means.center(text, v)?;
            }
        }
        Ok(vectors)
    }

    /// Consecutive batches of `texts` holding at most `batch_tokens` tokens
    /// once padded to their longest text (estimated from its length), and at
    /// most `batch_size` texts: long texts go a few at a time, which bounds
    /// memory, and short ones many at a time, which keeps the model busy.
    /// Callers sort texts by length so that batches pad little. A model whose
    /// activations are scaled per batch gets one text per call.
    fn batches(&self, texts: &[String]) -> Vec<std::ops::Range<usize>> {
        if self.one_per_call {
            return (0..texts.len()).map(|i| i..i + 1).collect();
        }
        let estimate = |t: &String| (t.len() / 3 + 2).min(self.max_tokens).max(1);
        let mut out = Vec::new();
        let mut start = 0;
        let mut longest = 0;
        for (i, t) in texts.iter().enumerate() {
            let longest_with = longest.max(estimate(t));
            let count = i - start + 1;
            if count > 1 && (count * longest_with > self.batch_tokens || count > self.batch_size) {
                out.push(start..i);
                start = i;
                longest = estimate(t);
            } else {
                longest = longest_with;
            }
        }
        if start < texts.len() {
            out.push(start..texts.len());
        }
        out
    }

    /// Embeds one query (after the model's query prefix).
    pub fn embed_query(&mut self, query: &str) -> Result<Vec<f32>, EmbedError> {
        let prefix = self.card.query_prefix.clone();
        let mut v = self.run_model(&[query.to_string()], &prefix, &mut |_| {})?;
        Ok(v.pop().unwrap_or_default())
    }
}

/// Scales `v` to unit length (no-op for the zero vector).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v {
            *x /= norm;
        }
    }
}

/// Dot product.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// The installed model (`scripts/fetch-model`), with windows of
    /// `max_tokens`. Panics with the fix when it is missing: these tests
    /// never pass without the model.
    fn settings(max_tokens: usize, overlap_tokens: usize, context_tokens: usize) -> Settings {
        let data = std::env::var_os("DEJA_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".local/share/deja")
            });
        let settings = Settings {
            model_dir: data.join("models").join(DEFAULT_MODEL),
            runtime_candidates: runtime_names()
                .iter()
                .map(|n| data.join("runtime").join(n))
                .collect(),
            max_tokens,
            overlap_tokens,
            context_tokens,
            max_windows: 0,
            first_windows: 0,
            batch_size: 64,
            batch_tokens: 4096,
            threads: 2,
            enabled: true,
            cache_dir: None,
        };
        if settings.model_files().is_err() || settings.runtime().is_err() {
            panic!(
                "the embedding model is not installed under {}; run scripts/fetch-model first",
                data.display()
            );
        }
        settings
    }

    #[test]
    fn without_the_int8_build_the_fp32_model_is_used() {
        let data = tempfile::tempdir().unwrap();
        let home = data.path();
        let dir = |name: &str| data.path().join("models").join(name);
        let c = deja_config::defaults(Path::new("/nonexistent/config.toml"), &|_| None)
            .unwrap()
            .config
            .embed;
        // Nothing installed: the default, so the error names what to install.
        assert_eq!(
            Settings::from_config(&c, home, data.path()).model_dir,
            dir(DEFAULT_MODEL)
        );
        std::fs::create_dir_all(dir(FALLBACK_MODEL)).unwrap();
        std::fs::write(dir(FALLBACK_MODEL).join("model.onnx"), b"x").unwrap();
        assert_eq!(
            Settings::from_config(&c, home, data.path()).model_dir,
            dir(FALLBACK_MODEL)
        );
        std::fs::create_dir_all(dir(DEFAULT_MODEL)).unwrap();
        std::fs::write(dir(DEFAULT_MODEL).join("model.onnx"), b"x").unwrap();
        assert_eq!(
            Settings::from_config(&c, home, data.path()).model_dir,
            dir(DEFAULT_MODEL)
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_means_table_of_another_length_than_the_models_vectors_is_refused() {
        let installed = settings(256, 32, 48);
        let dir = tempfile::tempdir().unwrap();
        for f in installed.model_files().unwrap() {
            std::os::unix::fs::symlink(&f, dir.path().join(f.file_name().unwrap())).unwrap();
        }
        std::fs::remove_file(dir.path().join(card::FILE)).ok();
        std::fs::write(
            dir.path().join(card::FILE),
            r#"{"script_means": "means.json"}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("means.json"),
            r#"{"means": {"latin": [0.1, 0.2]}}"#,
        )
        .unwrap();
        let s = Settings {
            model_dir: dir.path().to_path_buf(),
            ..installed
        };
        let e = Embedder::load(&s, None).err().unwrap().to_string();
        assert!(
            e.contains("means.json") && e.contains("2 values") && e.contains("384"),
            "{e}"
        );
    }

    #[test]
    fn progress_is_told_after_every_batch_and_ends_at_every_text() {
        let mut settings = settings(256, 32, 48);
        settings.batch_size = 4;
        let mut embedder = Embedder::load(&settings, None).unwrap();
        let texts: Vec<String> = (0..18)
            .map(|i| format!("text number {i} about caches"))
            .collect();
        let mut told = Vec::new();
        let vectors = embedder
            .embed_with_progress(&texts, &mut |done| told.push(done))
            .unwrap();
        assert_eq!(vectors.len(), 18);
        // Batches of at most 4: at least five reports, rising, ending at 18.
        assert!(told.len() >= 5, "{told:?}");
        assert!(told.windows(2).all(|w| w[0] < w[1]), "{told:?}");
        assert!(
            told.iter()
                .zip(std::iter::once(&0).chain(told.iter()))
                .all(|(now, before)| now - before <= 4),
            "{told:?}"
        );
        assert_eq!(told.last(), Some(&18));
        // The same vectors, in the same order, as without progress (batch
        // shapes may differ in the last bits).
        let plain = embedder.embed(&texts).unwrap();
        for (a, b) in plain.iter().zip(&vectors) {
            assert!(dot(a, b) > 0.9999, "{}", dot(a, b));
        }
    }

    fn load(max_tokens: usize, overlap_tokens: usize, context_tokens: usize) -> Embedder {
        Embedder::load(&settings(max_tokens, overlap_tokens, context_tokens), None).unwrap()
    }

    fn strings(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| t.to_string()).collect()
    }

    /// Each of `texts` embedded in a call of its own.
    fn each_alone(e: &mut Embedder, texts: &[String]) -> Vec<Vec<f32>> {
        texts
            .iter()
            .map(|t| e.embed(std::slice::from_ref(t)).unwrap().remove(0))
            .collect()
    }

    /// Texts of many lengths, in no order (a deterministic sequence).
    fn texts(n: usize) -> Vec<String> {
        let mut seed = 0x2545_f491_u64;
        (0..n)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                "word ".repeat(((seed >> 33) % 400) as usize)
            })
            .collect()
    }

    #[test]
    fn batches_keep_order_and_never_exceed_either_bound() {
        let mut e = load(256, 32, 48);
        let texts = texts(300);
        assert!(e.batches(&[]).is_empty());
        // A model that scales activations per batch gets one text per call,
        // whatever the bounds.
        e.one_per_call = true;
        let singles = e.batches(&texts);
        assert_eq!(singles.len(), texts.len());
        assert!(singles.iter().enumerate().all(|(i, b)| *b == (i..i + 1)));
        e.one_per_call = false;
        for (size, tokens) in [
            (1, 4096),
            (8, 512),
            (64, 4096),
            (1000, 300),
            (5, 1_000_000),
            (4096, 256),
        ] {
            e.batch_size = size;
            e.batch_tokens = tokens;
            // The padded size of a batch: its count times its longest text,
            // in tokens as estimated from the length (the model truncates
            // at `max_tokens`).
            let estimate = |t: &String| (t.len() / 3 + 2).min(e.max_tokens).max(1);
            let batches = e.batches(&texts);
            let mut next = 0;
            for b in &batches {
                assert_eq!(b.start, next, "batches are consecutive");
                assert!(!b.is_empty());
                next = b.end;
                let n = b.len();
                let longest = texts[b.clone()].iter().map(estimate).max().unwrap();
                assert!(n <= size, "{n} texts > {size}");
                assert!(
                    n == 1 || n * longest <= tokens,
                    "{n} × {longest} tokens > {tokens}"
                );
                // A batch ends only where the next text would break a bound.
                if let Some(t) = texts.get(b.end) {
                    let longest = longest.max(estimate(t));
                    assert!(n + 1 > size || (n + 1) * longest > tokens, "{b:?}");
                }
            }
            assert_eq!(next, texts.len(), "every text is in a batch");
        }
    }

    #[test]
    fn embedding_in_batches_gives_each_text_its_own_vector_in_order() {
        let mut e = load(256, 32, 0);
        let texts = strings(&[
            "the tenant predicate is missing from the query",
            "I like pizza with extra cheese",
            "cargo test fails with a linker error on macOS",
            "rebase the branch onto main and force-push",
            "the tenant predicate is missing from the query",
        ]);
        let alone = each_alone(&mut e, &texts);
        e.batch_size = 2;
        let batched = e.embed(&texts).unwrap();
        assert_eq!(batched.len(), texts.len());
        for (i, (a, b)) in alone.iter().zip(&batched).enumerate() {
            assert_eq!(b.len(), e.dims());
            assert!(
                (dot(b, b) - 1.0).abs() < 1e-4,
                "vector {i} is not unit length"
            );
            assert!(dot(a, b) > 0.9999, "vector {i}: cos {}", dot(a, b));
        }
        assert!(dot(&batched[0], &batched[1]) < 0.5);
        assert!(e.embed(&[]).unwrap().is_empty());
    }

    #[test]
    fn ids_of_int8_graphs_say_their_arithmetic_is_exact() {
        let s = settings(256, 32, 0);
        let int8 = s.model_id(b"\x08node: MatMulInteger\x12");
        let float = s.model_id(b"\x08node: MatMul\x12");
        assert!(
            int8.contains(&format!("{EXACT_INT8_TAG}:256/32/0")),
            "{int8}"
        );
        assert!(!float.contains(EXACT_INT8_TAG), "{float}");
        // The id an earlier store has for the same files, and none for a
        // float graph.
        let before = id_before_exact_int8(&int8).unwrap();
        assert_eq!(
            before.replace(":256", &format!("{EXACT_INT8_TAG}:256")),
            int8
        );
        assert_eq!(id_before_exact_int8(&float), None);
        // The installed model computes in int8; the cheap fingerprint
        // changes with the id, so an earlier store's is never taken as it.
        let onnx = std::fs::read(s.model_dir.join("model.onnx")).unwrap();
        assert!(quantised(&onnx));
        assert!(s.fingerprint().unwrap().contains(EXACT_INT8_TAG));
    }

    #[test]
    fn the_installed_model_scales_per_batch_so_it_embeds_one_text_per_call() {
        assert!(scales_per_batch(b"\x08node: DynamicQuantizeLinear\x12"));
        assert!(!scales_per_batch(b"MatMul DequantizeLinear QuantizeLinear"));
        let mut e = load(256, 32, 0);
        assert!(e.one_per_call, "the default model computes in int8");
        let texts = strings(&[
            "a short line",
            "the tenant predicate is missing from the query, so every customer sees the others' rows",
        ]);
        let alone = each_alone(&mut e, &texts);
        // Batched together (padded to the longer text), the short text's
        // vector moves: the reason for one text per call.
        e.one_per_call = false;
        let together = e.embed(&texts).unwrap();
        assert!(
            dot(&alone[0], &together[0]) < 0.9999,
            "{}",
            dot(&alone[0], &together[0])
        );
        e.one_per_call = true;
        for (a, b) in alone.iter().zip(&e.embed(&texts).unwrap()) {
            assert!(dot(a, b) > 0.9999, "{}", dot(a, b));
        }
    }

    /// A copy of the model folder of `base` with `json` as its
    /// `deja-model.json`, and settings naming it.
    fn with_card(base: &Settings, json: &str) -> (tempfile::TempDir, Settings) {
        let dir = tempfile::tempdir().unwrap();
        for f in base.model_files().unwrap() {
            std::fs::copy(&f, dir.path().join(f.file_name().unwrap())).unwrap();
        }
        std::fs::write(dir.path().join(card::FILE), json).unwrap();
        let mut settings = base.clone();
        settings.model_dir = dir.path().to_path_buf();
        (dir, settings)
    }

    #[test]
    fn a_model_folder_with_prefixes_embeds_queries_and_passages_after_them() {
        let plain_settings = settings(256, 32, 0);
        let (dir, prefixed_settings) = with_card(
            &plain_settings,
            r#"{"query_prefix": "query: ", "passage_prefix": "passage: "}"#,
        );
        let mut plain = Embedder::load(&plain_settings, None).unwrap();
        let mut prefixed = Embedder::load(&prefixed_settings, None).unwrap();
        let text = "the tenant predicate is missing".to_string();
        let same = |a: &[f32], b: &[f32]| dot(a, b) > 0.9999;
        let passage = prefixed.embed(std::slice::from_ref(&text)).unwrap();
        let by_hand = plain.embed(&[format!("passage: {text}")]).unwrap();
        assert!(same(&passage[0], &by_hand[0]));
        let query = prefixed.embed_query(&text).unwrap();
        let by_hand = plain.embed(&[format!("query: {text}")]).unwrap();
        assert!(same(&query, &by_hand[0]));
        assert!(!same(&query, &passage[0]));
        // The query encoder puts the same prefix first.
        let mut encoder = query::QueryEncoder::load(&prefixed_settings).unwrap();
        assert!(same(&encoder.encode(&text).unwrap(), &query));
        // Prefixes are part of the id and the fingerprint.
        let tag = card::ModelCard::of(dir.path()).unwrap().tag();
        let id = |s: &Settings| s.model_id(b"same bytes");
        assert_ne!(id(&plain_settings), id(&prefixed_settings));
        assert!(
            id(&prefixed_settings).ends_with(&tag),
            "{}",
            id(&prefixed_settings)
        );
        assert!(prefixed_settings.fingerprint().unwrap().ends_with(&tag));
        assert!(plain_settings.fingerprint().unwrap().ends_with("|256/32/0"));
    }

    #[test]
    fn a_model_folder_that_pools_the_first_token_embeds_and_encodes_queries_alike() {
        let mean_settings = settings(256, 32, 0);
        let (_dir, cls_settings) = with_card(&mean_settings, r#"{"pooling": "cls"}"#);
        let mut mean = Embedder::load(&mean_settings, None).unwrap();
        let mut cls = Embedder::load(&cls_settings, None).unwrap();
        let texts = strings(&[
            "the tenant predicate is missing",
            "cargo test fails with a linker error on macOS",
        ]);
        let by_mean = mean.embed(&texts).unwrap();
        let by_cls = cls.embed(&texts).unwrap();
        for (m, c) in by_mean.iter().zip(&by_cls) {
            // Another pooling gives another vector of the same size, unit length.
            assert_eq!(c.len(), m.len());
            assert!((dot(c, c) - 1.0).abs() < 1e-4);
            assert!(dot(m, c) < 0.99, "cos {}", dot(m, c));
        }
        // The query encoder pools as indexing does, so a query matches the
        // stored vector of the same text.
        let mut encoder = query::QueryEncoder::load(&cls_settings).unwrap();
        for (text, stored) in texts.iter().zip(&by_cls) {
            let q = encoder.encode(text).unwrap();
            assert!(dot(&q, stored) > 0.9999, "cos {}", dot(&q, stored));
        }
        // The pooling is part of the id and the fingerprint: vectors of the
        // two never mix.
        let id = |s: &Settings| s.model_id(b"same bytes");
        assert!(id(&cls_settings).ends_with("/cls"), "{}", id(&cls_settings));
        assert!(!id(&mean_settings).contains("/cls"));
        assert!(cls_settings.fingerprint().unwrap().ends_with("/cls"));
    }

    #[test]
    fn units_are_windows_with_the_neighbours_edges_and_fit_the_model() {
        let (max, overlap, context) = (64, 8, 8);
        let e = load(max, overlap, context);
        let count = |t: &str| e.counter.encode(t, false).unwrap().get_ids().len();
        let long = "Refactoring the ingestion pipeline: unmistakably, the \
                    deduplication of transcripts happens per position, and \
                    incomprehensibilities arise whenever a harness rewrites history. "
            .repeat(6);
        let previous = "The earlier message ended with a thoroughly uncharacteristic conclusion.";
        let next = "Nevertheless, the following message begins with counterintuitive wording.";

        let windows = e.windows(&long);
        assert!(windows.len() >= 3, "{windows:?}");
        // Windows leave room for both contexts and the special tokens.
        for w in &windows {
            assert!(count(w) <= max - 2 * context - 2, "{w:?}");
        }

        let units = e.units(Some(previous), &long, Some(next));
        assert_eq!(units.len(), windows.len());
        let before = window::edge(&e.counter, previous, context, true);
        let after = window::edge(&e.counter, next, context, false);
        assert!(!before.is_empty() && previous.ends_with(&before));
        assert!(!after.is_empty() && next.starts_with(&after));
        let last = units.len() - 1;
        assert_eq!(units[0], format!("{before}\n{}", windows[0]));
        assert_eq!(units[last], format!("{}\n{after}", windows[last]));
        assert_eq!(units[1..last], windows[1..last]);
        // No unit is cut by the model.
        for u in &units {
            assert!(count(u) <= max - 2, "{} tokens: {u:?}", count(u));
        }

        // Without neighbours, or without context, the units are the windows.
        assert_eq!(e.units(None, &long, None), windows);
        let plain = load(max, overlap, 0);
        assert_eq!(
            plain.units(Some(previous), &long, Some(next)),
            plain.windows(&long)
        );

        // A short message is one unit between its neighbours' edges.
        assert_eq!(
            e.units(Some(previous), "  short  ", Some(next)),
            [format!("{before}\nshort\n{after}")]
        );
    }

    #[test]
    fn a_window_cap_keeps_the_ends_and_evenly_spaced_windows_under_its_own_id() {
        let all = load(64, 8, 8);
        let mut capped_settings = settings(64, 8, 8);
        capped_settings.max_windows = 3;
        let capped = Embedder::load(&capped_settings, None).unwrap();
        let long = (0..400)
            .map(|i| format!("paragraph{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let windows = all.windows(&long);
        assert!(windows.len() > 3, "{}", windows.len());
        let kept = capped.windows(&long);
        let last = windows.len() - 1;
        assert_eq!(
            kept,
            [
                windows[0].clone(),
                windows[last.div_ceil(2)].clone(),
                windows[last].clone()
            ]
        );
        // Short texts are untouched; the units follow the capped windows.
        assert_eq!(capped.windows("a short one"), ["a short one"]);
        assert_eq!(capped.units(None, &long, None), kept);
        // Capped vectors never mix with uncapped ones, and the uncapped id
        // is the one stores had before the cap existed.
        assert_ne!(capped.id(), all.id());
        assert!(capped.id().ends_with(":64/8/8/w3"), "{}", capped.id());
        assert!(all.id().ends_with(":64/8/8"), "{}", all.id());
        assert_ne!(
            capped_settings.fingerprint(),
            settings(64, 8, 8).fingerprint()
        );
    }
}
