//! The root modules of ABI 1.x: the tables of functions a plugin exports.
//!
//! - [`PluginModuleV1_0`]: the reader's five calls.
//! - [`PluginModuleV1_1`]: the same, plus the calls of a reader that serves
//!   *descriptions* (reader definitions in a file, such as deja's TOML
//!   reader): who it is and what it detects for one description, and which
//!   description files it serves.
//! - [`PluginModuleV1_2`]: the same, plus a parse call that returns each
//!   command's outcome (failed, succeeded or unknown, and its exit code)
//!   beside the sessions.
//! - [`PluginModuleV1_3`]: the same, plus a parse call that also returns
//!   each edit's new text (what it wrote) beside the sessions.
//!
//! # Evolution
//!
//! abi_stable's prefix types let a newer plugin load in an older host, but an
//! older plugin fails in a newer host once a field is appended. deja therefore
//! never changes a published root module. Each ABI minor version gets its own
//! frozen module type (`PluginModuleV1_0`, later `PluginModuleV1_1`, ...); the
//! host reads the plugin's [`AbiTag`](crate::AbiTag) first and initializes the
//! module type of exactly that version, keeping adapters for older ones. A new
//! minor version may only add functions (a new module type that extends the
//! previous one); the value types of this version stay as they are.

use abi_stable::library::RootModule;
use abi_stable::sabi_types::VersionStrings;
use abi_stable::std_types::{RResult, RSlice, RStr};
use abi_stable::{declare_root_module_statics, StableAbi};

use crate::types::{
    Descriptions, Discovery, HostContext, ParseOutput, ParseOutputV1_2, ParseOutputV1_3,
    ParseRequest, PluginError, PluginInfo, ResumeAdvice, ResumeRequest,
};
use crate::version::AbiVersion;

/// The functions of a reader plugin, ABI 1.0. Frozen: never add or change a field.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModuleV1_0Ref)))]
#[sabi(missing_field(panic))]
pub struct PluginModuleV1_0 {
    /// The ABI version the plugin was built for.
    pub abi_version: extern "C" fn() -> AbiVersion,
    /// Name, version and harness.
    pub describe: extern "C" fn() -> RResult<PluginInfo, PluginError>,
    /// How sure the plugin is (0 = not mine, 100 = certainly mine) that a file,
    /// given its path and first bytes, is one of its transcripts.
    pub detect: extern "C" fn(RStr<'_>, RSlice<'_, u8>) -> RResult<u8, PluginError>,
    /// Finds the transcripts on this machine.
    pub discover: extern "C" fn(&HostContext) -> RResult<Discovery, PluginError>,
    /// Parses one transcript.
    pub parse: extern "C" fn(&ParseRequest<'_>) -> RResult<ParseOutput, PluginError>,
    /// Says how a session is reopened in its harness.
    #[sabi(last_prefix_field)]
    pub resume: extern "C" fn(&ResumeRequest<'_>) -> RResult<ResumeAdvice, PluginError>,
}

impl RootModule for PluginModuleV1_0Ref {
    declare_root_module_statics! {PluginModuleV1_0Ref}
    const BASE_NAME: &'static str = "deja_plugin";
    const NAME: &'static str = "deja reader plugin";
    // The ABI version, not the crate version: abi_stable requires equal majors,
    // and deja's own tag check handles minors.
    const VERSION_STRINGS: VersionStrings = VersionStrings::new("1.0.0");
}

/// The functions of a reader plugin, ABI 1.1: those of 1.0, in the same
/// order, then three more. Frozen: never add or change a field.
///
/// A plain reader answers the new calls as 1.0 would (`describe_in` and
/// `detect_in` ignore the context; `descriptions` serves none). A reader that
/// serves descriptions is called once per description: the host hands the
/// description to every call through the context (see
/// [`crate::types::DESCRIPTION_VAR`]).
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModuleV1_1Ref)))]
#[sabi(missing_field(panic))]
pub struct PluginModuleV1_1 {
    /// The ABI version the plugin was built for.
    pub abi_version: extern "C" fn() -> AbiVersion,
    /// Name, version and harness.
    pub describe: extern "C" fn() -> RResult<PluginInfo, PluginError>,
    /// As in 1.0.
    pub detect: extern "C" fn(RStr<'_>, RSlice<'_, u8>) -> RResult<u8, PluginError>,
    /// As in 1.0.
    pub discover: extern "C" fn(&HostContext) -> RResult<Discovery, PluginError>,
    /// As in 1.0.
    pub parse: extern "C" fn(&ParseRequest<'_>) -> RResult<ParseOutput, PluginError>,
    /// As in 1.0.
    pub resume: extern "C" fn(&ResumeRequest<'_>) -> RResult<ResumeAdvice, PluginError>,
    /// Name, version and harness of the reader the context describes.
    pub describe_in: extern "C" fn(&HostContext) -> RResult<PluginInfo, PluginError>,
    /// Detection by the reader the context describes.
    pub detect_in:
        extern "C" fn(&HostContext, RStr<'_>, RSlice<'_, u8>) -> RResult<u8, PluginError>,
    /// The description files this plugin serves: their file extension and the
    /// descriptions built into it. An empty extension: none (a plain reader).
    #[sabi(last_prefix_field)]
    pub descriptions: extern "C" fn() -> RResult<Descriptions, PluginError>,
}

impl RootModule for PluginModuleV1_1Ref {
    declare_root_module_statics! {PluginModuleV1_1Ref}
    const BASE_NAME: &'static str = "deja_plugin";
    const NAME: &'static str = "deja reader plugin";
    const VERSION_STRINGS: VersionStrings = VersionStrings::new("1.0.0");
}

/// The functions of a reader plugin, ABI 1.2: those of 1.1, in the same
/// order, then a parse call that gives the commands' outcomes too. Frozen:
/// never add or change a field.
///
/// `parse` still answers as in 1.0; the host calls `parse_with_outcomes`
/// instead when the plugin is built for 1.2 or later.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModuleV1_2Ref)))]
#[sabi(missing_field(panic))]
pub struct PluginModuleV1_2 {
    /// The ABI version the plugin was built for.
    pub abi_version: extern "C" fn() -> AbiVersion,
    /// Name, version and harness.
    pub describe: extern "C" fn() -> RResult<PluginInfo, PluginError>,
    /// As in 1.0.
    pub detect: extern "C" fn(RStr<'_>, RSlice<'_, u8>) -> RResult<u8, PluginError>,
    /// As in 1.0.
    pub discover: extern "C" fn(&HostContext) -> RResult<Discovery, PluginError>,
    /// As in 1.0.
    pub parse: extern "C" fn(&ParseRequest<'_>) -> RResult<ParseOutput, PluginError>,
    /// As in 1.0.
    pub resume: extern "C" fn(&ResumeRequest<'_>) -> RResult<ResumeAdvice, PluginError>,
    /// As in 1.1.
    pub describe_in: extern "C" fn(&HostContext) -> RResult<PluginInfo, PluginError>,
    /// As in 1.1.
    pub detect_in:
        extern "C" fn(&HostContext, RStr<'_>, RSlice<'_, u8>) -> RResult<u8, PluginError>,
    /// As in 1.1.
    pub descriptions: extern "C" fn() -> RResult<Descriptions, PluginError>,
    /// Parses one transcript, giving each command's outcome beside the sessions.
    #[sabi(last_prefix_field)]
    pub parse_with_outcomes:
        extern "C" fn(&ParseRequest<'_>) -> RResult<ParseOutputV1_2, PluginError>,
}

impl RootModule for PluginModuleV1_2Ref {
    declare_root_module_statics! {PluginModuleV1_2Ref}
    const BASE_NAME: &'static str = "deja_plugin";
    const NAME: &'static str = "deja reader plugin";
    const VERSION_STRINGS: VersionStrings = VersionStrings::new("1.0.0");
}

/// The functions of a reader plugin, ABI 1.3: those of 1.2, in the same
/// order, then a parse call that gives the edits' new texts too. Frozen:
/// never add or change a field.
///
/// `parse` and `parse_with_outcomes` still answer as in 1.0 and 1.2; the
/// host calls `parse_with_edits` instead when the plugin is built for 1.3 or
/// later.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModuleV1_3Ref)))]
#[sabi(missing_field(panic))]
pub struct PluginModuleV1_3 {
    /// The ABI version the plugin was built for.
    pub abi_version: extern "C" fn() -> AbiVersion,
    /// Name, version and harness.
    pub describe: extern "C" fn() -> RResult<PluginInfo, PluginError>,
    /// As in 1.0.
    pub detect: extern "C" fn(RStr<'_>, RSlice<'_, u8>) -> RResult<u8, PluginError>,
    /// As in 1.0.
    pub discover: extern "C" fn(&HostContext) -> RResult<Discovery, PluginError>,
    /// As in 1.0.
    pub parse: extern "C" fn(&ParseRequest<'_>) -> RResult<ParseOutput, PluginError>,
    /// As in 1.0.
    pub resume: extern "C" fn(&ResumeRequest<'_>) -> RResult<ResumeAdvice, PluginError>,
    /// As in 1.1.
    pub describe_in: extern "C" fn(&HostContext) -> RResult<PluginInfo, PluginError>,
    /// As in 1.1.
    pub detect_in:
        extern "C" fn(&HostContext, RStr<'_>, RSlice<'_, u8>) -> RResult<u8, PluginError>,
    /// As in 1.1.
    pub descriptions: extern "C" fn() -> RResult<Descriptions, PluginError>,
    /// As in 1.2.
    pub parse_with_outcomes:
        extern "C" fn(&ParseRequest<'_>) -> RResult<ParseOutputV1_2, PluginError>,
    /// Parses one transcript, giving each command's outcome and each edit's
    /// new text beside the sessions.
    #[sabi(last_prefix_field)]
    pub parse_with_edits: extern "C" fn(&ParseRequest<'_>) -> RResult<ParseOutputV1_3, PluginError>,
}

impl RootModule for PluginModuleV1_3Ref {
    declare_root_module_statics! {PluginModuleV1_3Ref}
    const BASE_NAME: &'static str = "deja_plugin";
    const NAME: &'static str = "deja reader plugin";
    const VERSION_STRINGS: VersionStrings = VersionStrings::new("1.0.0");
}
