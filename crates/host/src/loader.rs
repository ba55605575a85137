//! Loading one plugin library: refuse files others own or can change, read the ABI
//! tag before any plugin code runs, then let abi_stable check the root
//! module's layout. Every failure becomes a [`LoadError`] with a reason a user
//! can act on.

use std::path::Path;

use abi_stable::library::{lib_header_from_raw_library, LibraryError, RawLibrary};
use deja_plugin_api::version::{AbiTag, AbiVersion, ABI_TAG_SYMBOL, CURRENT};
use deja_plugin_api::{
    PluginModuleV1_0Ref, PluginModuleV1_1Ref, PluginModuleV1_2Ref, PluginModuleV1_3Ref,
};

pub use crate::error::LoadError;
use crate::module::Module;

/// A loaded root module and the ABI version it was built for.
pub struct Loaded {
    /// The module, of the type of the plugin's ABI version.
    pub module: Module,
    /// The version from the plugin's tag.
    pub abi: AbiVersion,
}

/// Refuses a plugin file that someone other than this user or root owns or
/// can write to, or that sits in a folder (at any depth, up to `/`) someone
/// else could change: plugins are native code that runs inside deja. See
/// [`crate::permissions`] for the rule.
pub fn check_permissions(path: &Path) -> Result<(), LoadError> {
    crate::permissions::check(path)
}

/// Reads the plugin's ABI tag without running any of its code beyond the
/// loader's own, and checks it against this host.
fn read_tag(path: &Path) -> Result<AbiVersion, LoadError> {
    // SAFETY: loading a library runs its initializers; callers only load files
    // named like deja plugins that passed the permission check.
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|e| LoadError::Invalid(format!("cannot load library: {e}")))?;
    // SAFETY: the symbol is declared by `export_plugin!` as a static `AbiTag`;
    // its layout is fixed (repr(C)) and never changes.
    let tag = unsafe {
        lib.get::<*const AbiTag>(ABI_TAG_SYMBOL)
            .map(|sym| **sym)
            .map_err(|_| {
                LoadError::Invalid(
                    "not a deja plugin: it does not export `DEJA_PLUGIN_ABI` (build it with deja_plugin_api::export_plugin!)".into(),
                )
            })?
    };
    // Libraries are never unloaded: plugin code may still be referenced.
    std::mem::forget(lib);
    let version = tag
        .version()
        .ok_or_else(|| LoadError::Invalid("not a deja plugin: its ABI tag is malformed".into()))?;
    CURRENT
        .accepts(version)
        .map_err(|e| LoadError::Incompatible(e.to_string()))?;
    Ok(version)
}

/// Loads the plugin at `path`.
pub fn load(path: &Path) -> Result<Loaded, LoadError> {
    check_permissions(path)?;
    let abi = read_tag(path)?;
    let raw = RawLibrary::load_at(path)
        .map_err(|e| LoadError::Invalid(format!("cannot load library: {}", first_lines(&e))))?;
    let raw: &'static RawLibrary = Box::leak(Box::new(raw));
    // SAFETY: the library exports abi_stable's header (checked by abi_stable,
    // which fails cleanly when the symbol is missing).
    let header = unsafe { lib_header_from_raw_library(raw) }.map_err(incompatible)?;
    // Each ABI minor version has its own frozen module type.
    let module = match abi.minor {
        0 => Module::V1_0(
            header
                .init_root_module::<PluginModuleV1_0Ref>()
                .map_err(incompatible)?,
        ),
        1 => Module::V1_1(
            header
                .init_root_module::<PluginModuleV1_1Ref>()
                .map_err(incompatible)?,
        ),
        2 => Module::V1_2(
            header
                .init_root_module::<PluginModuleV1_2Ref>()
                .map_err(incompatible)?,
        ),
        3 => Module::V1_3(
            header
                .init_root_module::<PluginModuleV1_3Ref>()
                .map_err(incompatible)?,
        ),
        other => {
            return Err(LoadError::Incompatible(format!(
                "plugin ABI {}.{other} has no module type in this deja",
                abi.major
            )))
        }
    };
    Ok(Loaded { module, abi })
}

fn incompatible(e: LibraryError) -> LoadError {
    LoadError::Incompatible(format!(
        "its plugin interface does not match this deja's: {}",
        first_lines(&e)
    ))
}

/// abi_stable's layout errors are hundreds of lines long; keep the lines that
/// say what is wrong.
fn first_lines(e: &dyn std::fmt::Display) -> String {
    let text = e.to_string();
    let errors: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("Error:") || l.contains("error"))
        .take(3)
        .collect();
    if errors.is_empty() {
        text.lines().take(3).collect::<Vec<_>>().join(" ")
    } else {
        errors.join(" ")
    }
}
