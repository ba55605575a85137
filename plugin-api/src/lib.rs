//! The stable ABI between deja and its transcript reader plugins.
//!
//! This is the only crate a reader plugin depends on. A plugin is a `cdylib`
//! that implements [`Reader`] and calls [`export_plugin!`] once; deja loads it at
//! run time from its plugin folders. The pieces:
//!
//! - [`version`]: the ABI version every plugin declares and the host's rule for
//!   accepting it (same major, minor not newer than the host's).
//! - [`types`]: the FFI-safe values that cross the boundary: sessions, messages,
//!   files and command records (and, since 1.2, how commands ended; since
//!   1.3, what each edit wrote),
//!   discovery results, resume advice.
//! - [`module`]: the frozen root module of function pointers, and how the ABI evolves.
//! - [`export`]: the [`Reader`] trait and the export helper, which catches every
//!   panic inside the plugin and returns it as an error value.
//! - [`discover`], [`text`] and [`paths`]: helpers most readers need (config
//!   roots and excludes, a bounded folder walk, decoding arbitrary bytes to
//!   text, path strings of any operating system).
//! - `testing` (feature `testing`): the readers' test kit (a host context
//!   built explicitly, parsing through the [`Reader`] trait, fixture walks)
//!   and, on Unix, running a test again as an unprivileged user.

// Input-dependent code never indexes unchecked: a reader must not panic on
// any bytes (SECURITY.md). Tests may index.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod canonical;
pub mod discover;
pub mod export;
pub mod module;
pub mod paths;
#[cfg(feature = "testing")]
pub mod testing;
pub mod text;
pub mod types;
pub mod version;

/// Re-exported so plugins need no direct dependency on abi_stable.
pub use abi_stable;
pub use abi_stable::std_types::{ROption, RResult, RSlice, RStr, RString, RVec};
pub use export::Reader;
pub use module::{
    PluginModuleV1_0, PluginModuleV1_0Ref, PluginModuleV1_1, PluginModuleV1_1Ref, PluginModuleV1_2,
    PluginModuleV1_2Ref, PluginModuleV1_3, PluginModuleV1_3Ref,
};
pub use types::*;
pub use version::{AbiTag, AbiVersion, ABI_MAJOR, ABI_MINOR, ABI_TAG_SYMBOL};

/// Re-exported for plugins that read JSON config sections or transcripts.
pub use serde_json;
