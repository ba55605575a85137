//! Start-up traces: with `DEJA_TRACE` set, each layer can print how long the
//! process has run at a point of interest (for finding where time goes).

/// Prints the elapsed time at `what` when `DEJA_TRACE` is set.
pub fn trace(what: &str) {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let start = START.get_or_init(std::time::Instant::now);
    if std::env::var_os("DEJA_TRACE").is_some() {
        eprintln!(
            "trace: {:>7.1} ms  {what}",
            start.elapsed().as_secs_f64() * 1000.0
        );
    }
}
