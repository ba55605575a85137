//! Team memory: the sessions of opted-in projects published to a shared
//! PostgreSQL database and brought into other machines' local stores.
//!
//! deja stays local-first: the team store is where published sessions meet,
//! never where recall runs. [`connect`] opens the team store (checking and
//! migrating its schema), [`push`] publishes this machine's shared sessions
//! (only what changed, by content hash; tombstones for what it forgot, and
//! for what it no longer shares or merely lacks only when asked), [`pull`]
//! brings the others' into a local store (bounded and checked), [`status`] compares
//! both sides without changing either, and [`machine`] keeps the id that
//! tells this machine from another using the same name. Sessions travel
//! with their embedding vectors ([`vectors`]), so a team embeds its history
//! once.
//!
//! The `scratch` feature adds module `scratch`, a throwaway PostgreSQL
//! server for tests and the benchmark; the shipped binary is built without.

pub mod connect;
pub mod content;
pub mod error;
pub mod machine;
pub mod pull;
pub mod push;
pub mod schema;
#[cfg(feature = "scratch")]
pub mod scratch;
pub mod status;
pub mod vectors;

pub use connect::{connect, Settings, Team};
pub use error::TeamError;
pub use pull::{pull, PullLimits, PullReport, Skipped};
pub use push::{push, PushOptions, PushReport, Unshared, Why};
pub use status::{status, Status};

/// A result with [`TeamError`].
pub type Result<T> = std::result::Result<T, TeamError>;

/// The key of a published session: who published it, its harness and its deja id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// `user@machine`.
    pub origin: String,
    /// Harness.
    pub harness: String,
    /// deja id.
    pub id: String,
}
