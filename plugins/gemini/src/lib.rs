//! deja reader plugin for Gemini CLI chat recordings.

use deja_plugin_api::{
    Discovery, HostContext, ParseOutput, ParseRequest, PluginError, PluginInfo, ResumeAdvice,
    ResumeRequest, RVec,
};

/// The Gemini CLI reader.
pub struct GeminiReader;

impl deja_plugin_api::Reader for GeminiReader {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "gemini".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            harness: "gemini".into(),
            description: "Gemini CLI chat recordings (~/.gemini/tmp/*/chats)".into(),
            abi: deja_plugin_api::version::CURRENT,
            config_keys: RVec::from(vec![]),
        }
    }

    fn detect(path: &str, head: &[u8]) -> u8 {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let json = name.ends_with(".json") || name.ends_with(".jsonl");
        if json && String::from_utf8_lossy(head).contains("\"sessionId\"") {
            if name.starts_with("session-") { 100 } else { 80 }
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
            message: "not implemented yet".into(),
        })
    }
}

deja_plugin_api::export_plugin!(GeminiReader);
