//! The embedding paths agree: bulk indexing goes through fastembed with an
//! optimized graph, a single recall query through ONNX Runtime directly with
//! optimizations off; both must give the same vectors.

use deja_embed::query::QueryEncoder;
use deja_embed::{dot, Embedder, Settings};

use crate::common::installed_model;

fn settings() -> Settings {
    settings_for(installed_model().0)
}

/// Settings that embed with the model in `model_dir` and the installed
/// runtime, as the tests of the embedding paths use them.
pub fn settings_for(model_dir: std::path::PathBuf) -> Settings {
    Settings {
        model_dir,
        runtime_candidates: vec![installed_model().1],
        max_tokens: 256,
        overlap_tokens: 32,
        context_tokens: 48,
        max_windows: 0,
        first_windows: 0,
        batch_size: 64,
        batch_tokens: 512,
        threads: 0,
        enabled: true,
        cache_dir: None,
    }
}

#[test]
fn query_encoder_matches_fastembed() {
    let s = settings();
    let mut bulk = Embedder::load(&s, None).unwrap();
    let mut query = QueryEncoder::load(&s).unwrap();
    // The pre-optimized copy of the model (what recall normally uses) too.
    let cache = tempfile::tempdir().unwrap();
    let mut fast_settings = s.clone();
    fast_settings.cache_dir = Some(cache.path().to_path_buf());
    let made = deja_embed::query::prepare(&fast_settings).unwrap();
    assert!(
        made.is_some_and(|p| p.is_file()),
        "the optimized model was not made"
    );
    let mut fast = QueryEncoder::load(&fast_settings).unwrap();
    let texts = [
        "that tenant predicate bug",
        "The query misses the tenant predicate, so rows of every tenant come back.",
        "ünïcödé, emoji 🚀 and `code_identifiers` with CamelCase",
        &"a long text that goes past the token limit ".repeat(40),
    ];
    let batch: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
    let vectors = bulk.embed(&batch).unwrap();
    for (t, v) in texts.iter().zip(&vectors) {
        let q = query.encode(t).unwrap();
        assert_eq!(q.len(), 384);
        // Without an optimized copy the graph is optimized in memory; a few
        // int8 activations may round differently on a full window.
        let cos = dot(&q, v);
        assert!(cos > 0.999, "cos {cos} for {t:?}");
        let f = fast.encode(t).unwrap();
        let cos = dot(&f, v);
        assert!(cos > 0.9999, "optimized: cos {cos} for {t:?}");
    }
    // And they are meaningful: a paraphrase is closer than an unrelated text.
    let a = query.encode("that tenant predicate bug").unwrap();
    let b = query
        .encode("The query misses the tenant predicate.")
        .unwrap();
    let c = query.encode("I like pizza with extra cheese").unwrap();
    assert!(
        dot(&a, &b) > 0.6 && dot(&a, &c) < 0.2,
        "{} {}",
        dot(&a, &b),
        dot(&a, &c)
    );
}
