//! ABI versions: what a plugin declares, and the rule the host applies to it.
//!
//! Every plugin exports two things: the abi_stable root module, and a plain
//! `#[no_mangle]` static named [`ABI_TAG_SYMBOL`] holding an [`AbiTag`]. The host
//! reads the tag first, before any code of the plugin runs, so that a library that
//! is not a deja plugin, or one built for another ABI, is rejected with a clear
//! message instead of an abi_stable layout dump.
//!
//! The rule (see [`AbiVersion::accepts`]): a host for ABI `M.n` loads plugins built
//! for `M.0` up to `M.n`. A plugin for another major version, or for a newer minor
//! version than the host knows, is refused.

use abi_stable::StableAbi;
use std::fmt;

/// Major version of the ABI this crate defines. Bumped for any incompatible change,
/// including an upgrade of abi_stable to a new 0.x release.
pub const ABI_MAJOR: u32 = 1;
/// Minor version of the ABI this crate defines. Bumped when a new, frozen root
/// module type is added alongside the older ones (see the crate docs).
pub const ABI_MINOR: u32 = 3;

/// The ABI version this crate builds plugins for and hosts load.
pub const CURRENT: AbiVersion = AbiVersion {
    major: ABI_MAJOR,
    minor: ABI_MINOR,
};

/// Name of the static every plugin exports (see [`AbiTag`]).
pub const ABI_TAG_SYMBOL: &[u8] = b"DEJA_PLUGIN_ABI\0";

/// Magic bytes at the start of [`AbiTag`], so a stray symbol with the same name
/// is not mistaken for a deja plugin.
pub const ABI_MAGIC: [u8; 8] = *b"dejaplug";

/// A major.minor ABI version.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AbiVersion {
    /// Incompatible changes bump this.
    pub major: u32,
    /// Compatible additions bump this.
    pub minor: u32,
}

impl AbiVersion {
    /// Whether a host speaking `self` can load a plugin built for `plugin`.
    pub fn accepts(self, plugin: AbiVersion) -> Result<(), Incompatibility> {
        if plugin.major != self.major {
            Err(Incompatibility::Major { host: self, plugin })
        } else if plugin.minor > self.minor {
            Err(Incompatibility::NewerMinor { host: self, plugin })
        } else {
            Ok(())
        }
    }
}

impl fmt::Display for AbiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Why a host refuses a plugin's ABI version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incompatibility {
    /// The major versions differ.
    Major {
        /// The host's version.
        host: AbiVersion,
        /// The plugin's version.
        plugin: AbiVersion,
    },
    /// The plugin needs a newer host.
    NewerMinor {
        /// The host's version.
        host: AbiVersion,
        /// The plugin's version.
        plugin: AbiVersion,
    },
}

impl fmt::Display for Incompatibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Incompatibility::Major { host, plugin } => write!(
                f,
                "built for plugin ABI {plugin}, but this deja loads ABI {}.x; rebuild the plugin against deja-plugin-api {}.x",
                host.major, host.major
            ),
            Incompatibility::NewerMinor { host, plugin } => write!(
                f,
                "built for plugin ABI {plugin}, newer than this deja's ABI {host}; upgrade deja"
            ),
        }
    }
}

/// The plain-C marker a plugin exports under [`ABI_TAG_SYMBOL`].
///
/// Its layout never changes: it is read before abi_stable's own checks.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbiTag {
    /// Always [`ABI_MAGIC`].
    pub magic: [u8; 8],
    /// The ABI major version the plugin was built for.
    pub major: u32,
    /// The ABI minor version the plugin was built for.
    pub minor: u32,
}

impl AbiTag {
    /// The tag of a plugin built with this crate.
    pub const CURRENT: AbiTag = AbiTag {
        magic: ABI_MAGIC,
        major: ABI_MAJOR,
        minor: ABI_MINOR,
    };

    /// The version, when the magic bytes are right.
    pub fn version(&self) -> Option<AbiVersion> {
        (self.magic == ABI_MAGIC).then_some(AbiVersion {
            major: self.major,
            minor: self.minor,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u32, minor: u32) -> AbiVersion {
        AbiVersion { major, minor }
    }

    #[test]
    fn newer_host_loads_older_minor() {
        assert_eq!(v(1, 3).accepts(v(1, 0)), Ok(()));
        assert_eq!(v(1, 3).accepts(v(1, 3)), Ok(()));
        assert_eq!(CURRENT.accepts(AbiTag::CURRENT.version().unwrap()), Ok(()));
    }

    #[test]
    fn newer_minor_and_other_major_are_refused() {
        assert!(matches!(
            v(1, 0).accepts(v(1, 1)),
            Err(Incompatibility::NewerMinor { .. })
        ));
        assert!(matches!(
            v(1, 0).accepts(v(2, 0)),
            Err(Incompatibility::Major { .. })
        ));
        assert!(matches!(
            v(2, 0).accepts(v(1, 0)),
            Err(Incompatibility::Major { .. })
        ));
    }

    #[test]
    fn messages_say_what_to_do() {
        let msg = v(1, 0).accepts(v(2, 0)).unwrap_err().to_string();
        assert!(msg.contains("ABI 2.0") && msg.contains("rebuild"), "{msg}");
        let msg = v(1, 0).accepts(v(1, 4)).unwrap_err().to_string();
        assert!(msg.contains("upgrade deja"), "{msg}");
    }

    #[test]
    fn tag_with_wrong_magic_has_no_version() {
        let mut tag = AbiTag::CURRENT;
        assert_eq!(tag.version(), Some(CURRENT));
        tag.magic = *b"notdeja!";
        assert_eq!(tag.version(), None);
    }
}
