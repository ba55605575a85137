//! A reader that panics in every call but `describe`: deja must report the
//! panics and keep working with its other plugins.

use deja_plugin_api::*;

struct Panicky;

impl Reader for Panicky {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "panicky".into(),
            version: "0.0.1".into(),
            harness: "panicky".into(),
            description: "panics on purpose".into(),
            abi: version::CURRENT,
            config_keys: RVec::new(),
        }
    }
    fn detect(_path: &str, _head: &[u8]) -> u8 {
        panic!("detect exploded")
    }
    fn discover(_context: &HostContext) -> Result<Discovery, PluginError> {
        panic!("discover exploded")
    }
    fn parse(_request: &ParseRequest<'_>) -> Result<ParseOutput, PluginError> {
        let v: Vec<u8> = Vec::new();
        let i = v.len() + 3;
        // An index out of bounds, like a real parser bug.
        Ok(ParseOutput {
            skipped_empty: u32::from(v[i]),
            ..Default::default()
        })
    }
    fn resume(_request: &ResumeRequest<'_>) -> Result<ResumeAdvice, PluginError> {
        panic!("resume exploded")
    }
}

export_plugin!(Panicky);
