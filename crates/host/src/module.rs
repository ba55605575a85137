//! A loaded plugin's root module, whichever ABI 1.x minor version it was
//! built for, behind one set of calls: a 1.0 plugin answers the 1.1 calls as
//! a plain reader does (no context, no descriptions), and a plugin older
//! than 1.2 gives every command's outcome as unknown, and one older than 1.3
//! keeps no edit's text.

use abi_stable::std_types::{RResult, RSlice, RStr};
use deja_plugin_api as api;

/// The root module of one plugin.
#[derive(Clone, Copy)]
pub enum Module {
    /// Built for ABI 1.0.
    V1_0(api::PluginModuleV1_0Ref),
    /// Built for ABI 1.1.
    V1_1(api::PluginModuleV1_1Ref),
    /// Built for ABI 1.2.
    V1_2(api::PluginModuleV1_2Ref),
    /// Built for ABI 1.3.
    V1_3(api::PluginModuleV1_3Ref),
}

type Result<T> = RResult<T, api::PluginError>;

impl Module {
    /// Name, version and harness.
    pub fn describe(&self) -> Result<api::PluginInfo> {
        match self {
            Module::V1_0(m) => (m.describe())(),
            Module::V1_1(m) => (m.describe())(),
            Module::V1_2(m) => (m.describe())(),
            Module::V1_3(m) => (m.describe())(),
        }
    }

    /// Name, version and harness of the reader `context` describes.
    pub fn describe_in(&self, context: &api::HostContext) -> Result<api::PluginInfo> {
        match self {
            Module::V1_0(m) => (m.describe())(),
            Module::V1_1(m) => (m.describe_in())(context),
            Module::V1_2(m) => (m.describe_in())(context),
            Module::V1_3(m) => (m.describe_in())(context),
        }
    }

    /// Detection, by the reader `context` describes where there is one.
    pub fn detect(
        &self,
        context: Option<&api::HostContext>,
        path: &str,
        head: &[u8],
    ) -> Result<u8> {
        let (path, head) = (RStr::from(path), RSlice::from(head));
        match (self, context) {
            (Module::V1_1(m), Some(context)) => (m.detect_in())(context, path, head),
            (Module::V1_2(m), Some(context)) => (m.detect_in())(context, path, head),
            (Module::V1_3(m), Some(context)) => (m.detect_in())(context, path, head),
            (Module::V1_1(m), None) => (m.detect())(path, head),
            (Module::V1_2(m), None) => (m.detect())(path, head),
            (Module::V1_3(m), None) => (m.detect())(path, head),
            (Module::V1_0(m), _) => (m.detect())(path, head),
        }
    }

    /// Discovery.
    pub fn discover(&self, context: &api::HostContext) -> Result<api::Discovery> {
        match self {
            Module::V1_0(m) => (m.discover())(context),
            Module::V1_1(m) => (m.discover())(context),
            Module::V1_2(m) => (m.discover())(context),
            Module::V1_3(m) => (m.discover())(context),
        }
    }

    /// Parsing one transcript, with the commands' outcomes where the
    /// plugin gives them (ABI 1.2 and later) and the edits' texts where it
    /// gives them (ABI 1.3 and later).
    pub fn parse(&self, request: &api::ParseRequest<'_>) -> Result<api::ParseOutputV1_3> {
        let older = |o: api::ParseOutput| {
            api::ParseOutputV1_3::without_edits(api::ParseOutputV1_2::without_outcomes(o))
        };
        match self {
            Module::V1_0(m) => (m.parse())(request).map(older),
            Module::V1_1(m) => (m.parse())(request).map(older),
            Module::V1_2(m) => {
                (m.parse_with_outcomes())(request).map(api::ParseOutputV1_3::without_edits)
            }
            Module::V1_3(m) => (m.parse_with_edits())(request),
        }
    }

    /// Resume advice.
    pub fn resume(&self, request: &api::ResumeRequest<'_>) -> Result<api::ResumeAdvice> {
        match self {
            Module::V1_0(m) => (m.resume())(request),
            Module::V1_1(m) => (m.resume())(request),
            Module::V1_2(m) => (m.resume())(request),
            Module::V1_3(m) => (m.resume())(request),
        }
    }

    /// The description files the plugin serves (none before ABI 1.1).
    pub fn descriptions(&self) -> Result<api::Descriptions> {
        match self {
            Module::V1_0(_) => RResult::ROk(api::Descriptions::default()),
            Module::V1_1(m) => (m.descriptions())(),
            Module::V1_2(m) => (m.descriptions())(),
            Module::V1_3(m) => (m.descriptions())(),
        }
    }
}
