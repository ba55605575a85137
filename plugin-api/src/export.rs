//! The helper plugin authors use to export a reader: implement [`Reader`], then
//! call [`export_plugin!`](crate::export_plugin) once at the crate root.
//!
//! Every exported call runs inside `catch_unwind`: a panic becomes a
//! [`PluginError`] of kind [`ErrorKind::Panic`] carrying the panic message and
//! location, and never unwinds into the host.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use abi_stable::std_types::{RResult, RSlice, RStr};

use crate::module::{
    PluginModuleV1_0, PluginModuleV1_0Ref, PluginModuleV1_1, PluginModuleV1_1Ref, PluginModuleV1_2,
    PluginModuleV1_2Ref, PluginModuleV1_3, PluginModuleV1_3Ref,
};
use crate::types::{
    Descriptions, Discovery, ErrorKind, HostContext, ParseOutput, ParseOutputV1_2, ParseOutputV1_3,
    ParseRequest, PluginError, PluginInfo, ResumeAdvice, ResumeRequest,
};
use crate::version::{AbiVersion, CURRENT};

/// A transcript reader. Implement it on a unit struct and export it with
/// [`export_plugin!`](crate::export_plugin).
pub trait Reader {
    /// Name, version and harness. `abi` is filled in by the export helper.
    fn info() -> PluginInfo;

    /// 0–100: how sure the reader is that the file at `path`, starting with
    /// `head`, is one of its transcripts.
    fn detect(path: &str, head: &[u8]) -> u8;

    /// Finds transcripts on this machine from the host's context.
    fn discover(context: &HostContext) -> Result<Discovery, PluginError>;

    /// Parses one transcript.
    fn parse(request: &ParseRequest<'_>) -> Result<ParseOutput, PluginError>;

    /// How to reopen a session in the harness.
    fn resume(request: &ResumeRequest<'_>) -> Result<ResumeAdvice, PluginError>;

    /// Name, version and harness of the reader `context` describes (a reader
    /// that serves descriptions); a plain reader's [`Reader::info`].
    fn info_in(context: &HostContext) -> Result<PluginInfo, PluginError> {
        let _ = context;
        Ok(Self::info())
    }

    /// [`Reader::detect`] by the reader `context` describes; a plain reader
    /// ignores the context.
    fn detect_in(context: &HostContext, path: &str, head: &[u8]) -> u8 {
        let _ = context;
        Self::detect(path, head)
    }

    /// The description files this reader serves; none for a plain reader.
    fn descriptions() -> Descriptions {
        Descriptions::default()
    }

    /// Parses one transcript and says how its commands ended (ABI 1.2): a
    /// reader whose transcripts record it overrides this (and answers
    /// [`Reader::parse`] with its `output`); by default every outcome is
    /// unknown.
    fn parse_with_outcomes(request: &ParseRequest<'_>) -> Result<ParseOutputV1_2, PluginError> {
        Self::parse(request).map(ParseOutputV1_2::without_outcomes)
    }

    /// Parses one transcript and says how its commands ended and what its
    /// edits wrote (ABI 1.3): a reader whose transcripts keep the text an
    /// edit wrote overrides this (and answers [`Reader::parse_with_outcomes`]
    /// with [`ParseOutputV1_3::into_v1_2`]); by default no edit keeps its
    /// text.
    fn parse_with_edits(request: &ParseRequest<'_>) -> Result<ParseOutputV1_3, PluginError> {
        Self::parse_with_outcomes(request).map(ParseOutputV1_3::without_edits)
    }
}

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs, once, a panic hook in the plugin's copy of std that records the
/// panic's location instead of printing it, so the host can report it.
fn install_hook() {
    HOOK.call_once(|| {
        panic::set_hook(Box::new(|info| {
            let location = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(location));
        }));
    });
}

fn payload_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_string()
    }
}

/// Runs `f`, turning a panic into a [`PluginError`].
pub fn guard<T>(what: &str, f: impl FnOnce() -> Result<T, PluginError>) -> RResult<T, PluginError> {
    install_hook();
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => RResult::ROk(v),
        Ok(Err(e)) => RResult::RErr(e),
        Err(payload) => {
            let location = LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_default();
            RResult::RErr(PluginError::new(
                ErrorKind::Panic,
                format!(
                    "plugin panicked in {what}: {}{location}",
                    payload_message(payload.as_ref())
                ),
            ))
        }
    }
}

extern "C" fn abi_version() -> AbiVersion {
    CURRENT
}

extern "C" fn describe<R: Reader>() -> RResult<PluginInfo, PluginError> {
    guard("describe", || {
        let mut info = R::info();
        info.abi = CURRENT;
        Ok(info)
    })
}

extern "C" fn detect<R: Reader>(path: RStr<'_>, head: RSlice<'_, u8>) -> RResult<u8, PluginError> {
    guard("detect", || {
        Ok(R::detect(path.as_str(), head.as_slice()).min(100))
    })
}

extern "C" fn discover<R: Reader>(context: &HostContext) -> RResult<Discovery, PluginError> {
    guard("discover", || R::discover(context))
}

extern "C" fn parse<R: Reader>(request: &ParseRequest<'_>) -> RResult<ParseOutput, PluginError> {
    guard("parse", || R::parse(request))
}

extern "C" fn resume<R: Reader>(request: &ResumeRequest<'_>) -> RResult<ResumeAdvice, PluginError> {
    guard("resume", || R::resume(request))
}

extern "C" fn describe_in<R: Reader>(context: &HostContext) -> RResult<PluginInfo, PluginError> {
    guard("describe", || {
        let mut info = R::info_in(context)?;
        info.abi = CURRENT;
        Ok(info)
    })
}

extern "C" fn detect_in<R: Reader>(
    context: &HostContext,
    path: RStr<'_>,
    head: RSlice<'_, u8>,
) -> RResult<u8, PluginError> {
    guard("detect", || {
        Ok(R::detect_in(context, path.as_str(), head.as_slice()).min(100))
    })
}

extern "C" fn descriptions<R: Reader>() -> RResult<Descriptions, PluginError> {
    guard("descriptions", || Ok(R::descriptions()))
}

extern "C" fn parse_with_outcomes<R: Reader>(
    request: &ParseRequest<'_>,
) -> RResult<ParseOutputV1_2, PluginError> {
    guard("parse", || R::parse_with_outcomes(request))
}

extern "C" fn parse_with_edits<R: Reader>(
    request: &ParseRequest<'_>,
) -> RResult<ParseOutputV1_3, PluginError> {
    guard("parse", || {
        R::parse_with_edits(request).map(|mut o| {
            // The cap holds whatever the reader handed over.
            for s in o.edits.iter_mut() {
                for t in s.texts.iter_mut() {
                    if let abi_stable::std_types::ROption::RSome(text) = t {
                        if text.len() > crate::types::EDIT_TEXT_MAX_BYTES {
                            *text = crate::types::cap_edit_text(text).into();
                        }
                    }
                }
            }
            o
        })
    })
}

/// The root module for reader `R`. Used by [`export_plugin!`](crate::export_plugin).
pub fn module_for<R: Reader>() -> PluginModuleV1_3Ref {
    use abi_stable::prefix_type::PrefixTypeTrait;
    PluginModuleV1_3 {
        abi_version,
        describe: describe::<R>,
        detect: detect::<R>,
        discover: discover::<R>,
        parse: parse::<R>,
        resume: resume::<R>,
        describe_in: describe_in::<R>,
        detect_in: detect_in::<R>,
        descriptions: descriptions::<R>,
        parse_with_outcomes: parse_with_outcomes::<R>,
        parse_with_edits: parse_with_edits::<R>,
    }
    .leak_into_prefix()
}

/// The ABI 1.2 root module for reader `R`, as a plugin built before ABI 1.3
/// exported it. Only for testing that hosts keep loading such plugins.
#[doc(hidden)]
pub fn module_v1_2_for<R: Reader>() -> PluginModuleV1_2Ref {
    use abi_stable::prefix_type::PrefixTypeTrait;
    PluginModuleV1_2 {
        abi_version,
        describe: describe::<R>,
        detect: detect::<R>,
        discover: discover::<R>,
        parse: parse::<R>,
        resume: resume::<R>,
        describe_in: describe_in::<R>,
        detect_in: detect_in::<R>,
        descriptions: descriptions::<R>,
        parse_with_outcomes: parse_with_outcomes::<R>,
    }
    .leak_into_prefix()
}

/// The ABI 1.1 root module for reader `R`, as a plugin built before ABI 1.2
/// exported it. Only for testing that hosts keep loading such plugins.
#[doc(hidden)]
pub fn module_v1_1_for<R: Reader>() -> PluginModuleV1_1Ref {
    use abi_stable::prefix_type::PrefixTypeTrait;
    PluginModuleV1_1 {
        abi_version,
        describe: describe::<R>,
        detect: detect::<R>,
        discover: discover::<R>,
        parse: parse::<R>,
        resume: resume::<R>,
        describe_in: describe_in::<R>,
        detect_in: detect_in::<R>,
        descriptions: descriptions::<R>,
    }
    .leak_into_prefix()
}

/// The ABI 1.0 root module for reader `R`, as a plugin built before ABI 1.1
/// exported it (its `abi_version` still answers the current version: the
/// host goes by the plugin's tag). Only for testing that hosts keep loading
/// such plugins.
#[doc(hidden)]
pub fn module_v1_0_for<R: Reader>() -> PluginModuleV1_0Ref {
    use abi_stable::prefix_type::PrefixTypeTrait;
    PluginModuleV1_0 {
        abi_version,
        describe: describe::<R>,
        detect: detect::<R>,
        discover: discover::<R>,
        parse: parse::<R>,
        resume: resume::<R>,
    }
    .leak_into_prefix()
}

/// Exports a [`Reader`] as a deja plugin. Call it once, at the crate root of a
/// `cdylib` crate:
///
/// ```ignore
/// struct MyReader;
/// impl deja_plugin_api::Reader for MyReader { /* ... */ }
/// deja_plugin_api::export_plugin!(MyReader);
/// ```
///
/// It exports the ABI tag that the host reads first, and the abi_stable root
/// module, with every call guarded against panics.
#[macro_export]
macro_rules! export_plugin {
    ($reader:ty) => {
        /// The ABI tag deja reads before loading this plugin.
        #[no_mangle]
        pub static DEJA_PLUGIN_ABI: $crate::AbiTag = $crate::AbiTag::CURRENT;

        #[doc(hidden)]
        pub fn __deja_plugin_root_module() -> $crate::PluginModuleV1_3Ref {
            $crate::export::module_for::<$reader>()
        }

        /// abi_stable's library header (what `#[export_root_module]` generates,
        /// spelled out so that plugins need no direct abi_stable dependency).
        #[no_mangle]
        pub static _1as_0lib_1header_0root_bmodule_bloader: $crate::abi_stable::library::LibHeader = {
            extern "C" fn erased() -> $crate::abi_stable::library::RootModuleResult {
                $crate::abi_stable::library::__call_root_module_loader(__deja_plugin_root_module)
            }
            // SAFETY: the constructor returns the module type named here, as
            // abi_stable's own `export_root_module` attribute does.
            unsafe {
                $crate::abi_stable::library::LibHeader::from_constructor::<$crate::PluginModuleV1_3Ref>(
                    erased,
                    $crate::abi_stable::library::CheckTypeLayout::Yes,
                )
            }
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_module_symbol_matches_abi_stable() {
        assert_eq!(
            abi_stable::library::ROOT_MODULE_LOADER_NAME,
            "_1as_0lib_1header_0root_bmodule_bloader"
        );
    }

    #[test]
    fn guard_turns_panics_into_errors() {
        let r: RResult<(), PluginError> = guard("parse", || panic!("boom {}", 7));
        let err = r.into_result().unwrap_err();
        assert_eq!(err.kind, ErrorKind::Panic);
        assert!(err.message.contains("boom 7"), "{}", err.message);
        assert!(err.message.contains("export.rs"), "{}", err.message);
    }

    #[test]
    fn guard_passes_values_and_errors_through() {
        assert_eq!(guard("x", || Ok(3)).into_result().ok(), Some(3));
        let e = guard::<()>("x", || Err(PluginError::invalid("bad"))).into_result();
        assert_eq!(e.unwrap_err().kind, ErrorKind::InvalidInput);
    }
}
