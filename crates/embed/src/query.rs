//! The query encoder used by `deja recall`: the same model, tokenizer and
//! pooling as indexing, through ONNX Runtime directly with graph
//! optimizations off.
//!
//! A cold `deja recall` is dominated by the model. With fastembed, which
//! always asks ONNX Runtime for every graph optimization, creating the session
//! takes about 150–250 ms here. Without optimizations it takes about 50 ms,
//! but then every run dequantizes the int8 weights again (about 60 ms). So
//! deja derives, once, a copy of the model optimized to ONNX Runtime's
//! "extended" level (portable across CPUs) with its weights, already
//! dequantized, in a separate file that ONNX Runtime memory-maps: loading it
//! with optimizations off takes about 40 ms and a query about 4 ms. The copy
//! lives in `<data dir>/cache/` (made by `deja index`, or by the first recall
//! that misses it); without it the original model is used, unoptimized.
//! Optimizations do not change the numbers (a test checks that this path and
//! fastembed's give the same vector).

use std::path::{Path, PathBuf};

use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;
use ort::value::Tensor;
use tokenizers::{Tokenizer, TruncationParams};

use super::card::{ModelCard, Pooling};
use super::{environment, normalize, EmbedError, Settings};

/// Encodes queries, one at a time.
pub struct QueryEncoder {
    session: Session,
    tokenizer: Tokenizer,
    token_types: bool,
    model_dir: PathBuf,
    card: ModelCard,
}

impl QueryEncoder {
    /// Loads the runtime, model and tokenizer named by `settings`.
    pub fn load(settings: &Settings) -> Result<QueryEncoder, EmbedError> {
        let [onnx, tokenizer_file, ..] = settings.model_files()?;
        let card = ModelCard::of(&settings.model_dir)?;
        // The tokenizer loads on its own thread while ONNX Runtime starts.
        let max_tokens = settings.max_tokens;
        let tokenizer_thread =
            std::thread::spawn(move || load_tokenizer(&tokenizer_file, max_tokens));
        let env = environment(settings.runtime()?)?;
        deja_model::trace::trace("runtime loaded");
        let err = |message: String| EmbedError::Model {
            path: settings.model_dir.clone(),
            message,
        };
        // The optimized copy loads without optimizing again. Without one, the
        // graph is optimized here as the indexing session does: the fused
        // int8 kernels are the ones EXACT_INT8 makes exact, and the unfused
        // graph gives other vectors on processors without AVX-512 VNNI.
        let (model_path, level) = match prepare_at(settings, &env, &onnx) {
            Some(optimized) => (optimized, GraphOptimizationLevel::Disable),
            None => (onnx, GraphOptimizationLevel::Level3),
        };
        deja_model::trace::trace("optimized model found");
        let session = Session::builder(&env)
            .map_err(|e| err(e.to_string()))?
            .with_optimization_level(level)
            .map_err(|e| err(e.to_string()))?
            .with_config_entry(crate::EXACT_INT8.0, crate::EXACT_INT8.1)
            .map_err(|e| err(e.to_string()))?
            // One short query runs on one thread, and no idle thread spins
            // after it: the engine searches the lexical index on the other
            // core meanwhile, and the vector index right after on this one.
            .with_intra_threads(1)
            .map_err(|e| err(e.to_string()))?
            .with_intra_op_spinning(false)
            .map_err(|e| err(e.to_string()))?
            .commit_from_file(&model_path)
            .map_err(|e| err(e.to_string()))?;
        deja_model::trace::trace("session created");
        let token_types = session
            .inputs()
            .iter()
            .any(|i| i.name() == "token_type_ids");
        let tokenizer = tokenizer_thread
            .join()
            .unwrap_or_else(|_| Err("the tokenizer failed to load".into()))
            .map_err(err)?;
        Ok(QueryEncoder {
            session,
            tokenizer,
            token_types,
            model_dir: settings.model_dir.clone(),
            card,
        })
    }

    /// Whether the model compares meaning across writing systems: its
    /// vectors have each script's mean taken out ([`super::centering`]).
    pub fn compares_scripts(&self) -> bool {
        self.card.centering.is_some()
    }

    /// How near a question on a topic a history never discusses comes to
    /// its messages in its own language, as the model's card says (0: it
    /// says nothing).
    pub fn off_topic(&self) -> f64 {
        self.card.off_topic
    }

    /// The unit-length embedding of the query `text` (after the model's
    /// query prefix).
    pub fn encode(&mut self, query: &str) -> Result<Vec<f32>, EmbedError> {
        let prefixed;
        let text = if self.card.query_prefix.is_empty() {
            query
        } else {
            prefixed = format!("{}{query}", self.card.query_prefix);
            prefixed.as_str()
        };
        let err = |message: String| EmbedError::Model {
            path: self.model_dir.clone(),
            message,
        };
        let encoding = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| err(e.to_string()))?;
        let n = encoding.len().max(1);
        let ids: Vec<i64> = encoding.get_ids().iter().map(|&x| i64::from(x)).collect();
        let mask: Vec<i64> = encoding
            .get_attention_mask()
            .iter()
            .map(|&x| i64::from(x))
            .collect();
        let types: Vec<i64> = encoding
            .get_type_ids()
            .iter()
            .map(|&x| i64::from(x))
            .collect();
        let tensor =
            |v: Vec<i64>| Tensor::from_array(([1usize, n], v)).map_err(|e| err(e.to_string()));
        let mut inputs = ort::inputs![
            "input_ids" => tensor(ids)?,
            "attention_mask" => tensor(mask.clone())?,
        ];
        if self.token_types {
            inputs.push(("token_type_ids".into(), tensor(types)?.into()));
        }
        let outputs = self.session.run(inputs).map_err(|e| err(e.to_string()))?;
        let (shape, data) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(|e| err(e.to_string()))?;
        let mut v = pool(shape, data, &mask, self.card.pooling)
            .ok_or_else(|| err(format!("unexpected output shape {shape:?}")))?;
        normalize(&mut v);
        if let Some(means) = &self.card.centering {
            means.center(query, &mut v)?;
        }
        Ok(v)
    }
}

/// Derives the optimized copy of the configured model if it is missing (so
/// that later recalls start fast). Returns its path, or `None` when it cannot
/// be made (no cache folder, or ONNX Runtime refused).
pub fn prepare(settings: &Settings) -> Result<Option<PathBuf>, EmbedError> {
    let [onnx, ..] = settings.model_files()?;
    if let Some(dir) = optimized_dir(settings, &onnx) {
        if dir.join("model.onnx").is_file() && dir.join("weights.bin").is_file() {
            return Ok(Some(dir.join("model.onnx")));
        }
    }
    let env = environment(settings.runtime()?)?;
    Ok(prepare_at(settings, &env, &onnx))
}

/// Where the optimized copy of `onnx` goes: keyed by the model file's size and
/// modification time, and by the runtime library's, since both shape it.
fn optimized_dir(settings: &Settings, onnx: &Path) -> Option<PathBuf> {
    let stamp = |p: &Path| -> Option<String> {
        let m = std::fs::metadata(p).ok()?;
        let t = m
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Some(format!("{}-{}", m.len(), t.as_secs()))
    };
    let runtime = settings.runtime().ok()?;
    let key = deja_model::sha256_hex(
        format!("{}|{}|{}", onnx.display(), stamp(onnx)?, stamp(runtime)?).as_bytes(),
    );
    Some(
        settings
            .cache_dir
            .as_ref()?
            .join("query-model")
            .join(&key[..16]),
    )
}

fn prepare_at(
    settings: &Settings,
    env: &ort::environment::Environment,
    onnx: &Path,
) -> Option<PathBuf> {
    let dir = optimized_dir(settings, onnx)?;
    let model = dir.join("model.onnx");
    if model.is_file() && dir.join("weights.bin").is_file() {
        return Some(model);
    }
    // The cache lives in the data folder; only the store creates that (0700).
    let data_dir = settings.cache_dir.as_ref()?.parent()?;
    if !data_dir.is_dir() {
        return None;
    }
    // Written beside the final place, then renamed into it, so a reader
    // never sees half of it.
    let parent = dir.parent()?;
    std::fs::create_dir_all(parent).ok()?;
    let tmp = parent.join(format!(".tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).ok()?;
    let made = (|| -> Option<Session> {
        Session::builder(env)
            .ok()?
            .with_optimization_level(GraphOptimizationLevel::Level2)
            .ok()?
            .with_config_entry(crate::EXACT_INT8.0, crate::EXACT_INT8.1)
            .ok()?
            .with_intra_threads(1)
            .ok()?
            .with_optimized_model_path(tmp.join("model.onnx"))
            .ok()?
            .with_config_entry(
                "session.optimized_model_external_initializers_file_name",
                "weights.bin",
            )
            .ok()?
            .with_config_entry(
                "session.optimized_model_external_initializers_min_size_in_bytes",
                "1024",
            )
            .ok()?
            .commit_from_file(onnx)
            .ok()
    })();
    let ok =
        made.is_some() && tmp.join("model.onnx").is_file() && tmp.join("weights.bin").is_file();
    if !ok || std::fs::rename(&tmp, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
        // Another process may have made it meanwhile.
        return (model.is_file() && dir.join("weights.bin").is_file()).then_some(model);
    }
    Some(model)
}

/// Removes the half-made copies (`<cache>/query-model/.tmp-<pid>`) of
/// processes that died while deriving the optimized model; `is_running`
/// says whether a process id is alive (a copy of a live process is being
/// made now and is left alone). Returns how many were removed.
pub fn remove_stale_temporaries(settings: &Settings, is_running: &dyn Fn(u32) -> bool) -> usize {
    let Some(cache) = &settings.cache_dir else {
        return 0;
    };
    let Ok(entries) = std::fs::read_dir(cache.join("query-model")) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(".tmp-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || is_running(pid) {
            continue;
        }
        let path = entry.path();
        let gone = if entry.file_type().is_ok_and(|t| t.is_dir()) {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        if gone.is_ok() {
            removed += 1;
        }
    }
    removed
}

/// One vector from the token embeddings (`[1, n, d]`): their mean where
/// the mask is 1, or the first token's; a `[1, d]` output is taken as
/// already pooled.
fn pool(shape: &[i64], data: &[f32], mask: &[i64], pooling: Pooling) -> Option<Vec<f32>> {
    match shape {
        [1, d] => Some(data.get(..*d as usize)?.to_vec()),
        [1, _, d] if pooling == Pooling::Cls => Some(data.get(..*d as usize)?.to_vec()),
        [1, n, d] => {
            let (n, d) = (*n as usize, *d as usize);
            let mut sum = vec![0f32; d];
            let mut count = 0f32;
            for t in 0..n {
                if mask.get(t).copied().unwrap_or(1) == 0 {
                    continue;
                }
                let row = data.get(t * d..(t + 1) * d)?;
                for (s, x) in sum.iter_mut().zip(row) {
                    *s += x;
                }
                count += 1.0;
            }
            let count = count.max(1e-9);
            Some(sum.into_iter().map(|s| s / count).collect())
        }
        _ => None,
    }
}

/// The tokenizer, truncating at `max_tokens` and never padding.
fn load_tokenizer(path: &Path, max_tokens: usize) -> Result<Tokenizer, String> {
    let mut tokenizer =
        Tokenizer::from_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            ..Default::default()
        }))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    tokenizer.with_padding(None);
    Ok(tokenizer)
}
