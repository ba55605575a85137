//! Why a plugin file was not loaded: the one error the permission check and
//! the loader share.

/// Why a plugin file was not loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// Unsafe permissions or another policy reason.
    #[error("{0}")]
    Refused(String),
    /// Built for another ABI, or its layout does not match.
    #[error("{0}")]
    Incompatible(String),
    /// Not a loadable library, or not a deja plugin.
    #[error("{0}")]
    Invalid(String),
}
