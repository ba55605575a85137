//! The queries every latency measurement asks.

/// Queries for latency runs.
pub const QUERIES: &[&str] = &[
    "the tenant predicate is missing from the invoice query",
    "flaky test because of a timeout",
    "docker image build stage",
    "terraform state lock",
    "dashboard chart renders too often",
    "pagination cursor offset bug",
    "auth token expires before retry",
    "database migration adds a column",
    "worker queue batch job schedule",
    "config loads from environment and fails",
];
