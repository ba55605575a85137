//! deja reader plugin for aider's `.aider.chat.history.md` transcripts.

use deja_plugin_api::{
    Discovery, HostContext, ParseOutput, ParseRequest, PluginError, PluginInfo, ResumeAdvice,
    ResumeRequest, RVec,
};

/// The aider reader.
pub struct AiderReader;

impl deja_plugin_api::Reader for AiderReader {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "aider".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            harness: "aider".into(),
            description: "aider chat histories (.aider.chat.history.md)".into(),
            abi: deja_plugin_api::version::CURRENT,
            config_keys: RVec::from(vec!["timezone".into()]),
        }
    }

    fn detect(path: &str, head: &[u8]) -> u8 {
        if path.ends_with(".aider.chat.history.md") {
            100
        } else if String::from_utf8_lossy(head).contains("# aider chat started at") {
            90
        } else {
            0
        }
    }

    fn discover(_context: &HostContext) -> Result<Discovery, PluginError> {
        Ok(Discovery::default())
    }

    fn parse(_request: &ParseRequest<'_>) -> Result<ParseOutput, PluginError> {
        Ok(ParseOutput::default())
    }

    fn resume(_request: &ResumeRequest<'_>) -> Result<ResumeAdvice, PluginError> {
        Ok(ResumeAdvice::Refused {
            message: "aider cannot reopen one session".into(),
        })
    }
}

deja_plugin_api::export_plugin!(AiderReader);
