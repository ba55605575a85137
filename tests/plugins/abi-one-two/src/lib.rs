//! A reader built for plugin ABI 1.2, exported as a plugin built before ABI
//! 1.3 was (the 1.2 tag and root module, no edits' texts): a 1.3 deja must
//! still load it and use it, its edits keeping no text. It reads
//! `~/notes/*.onetwo` files of `role: text` lines and `edit PATH` lines.

use std::path::Path;

use deja_plugin_api::*;

struct OneTwo;

const AT: i64 = 1_700_000_000_000;

impl Reader for OneTwo {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "onetwo".into(),
            version: "1.2.0".into(),
            harness: "onetwo".into(),
            description: "a reader built for ABI 1.2".into(),
            abi: AbiVersion { major: 1, minor: 2 },
            config_keys: RVec::new(),
        }
    }
    fn detect(path: &str, _head: &[u8]) -> u8 {
        if path.ends_with(".onetwo") {
            90
        } else {
            0
        }
    }
    fn discover(context: &HostContext) -> Result<Discovery, PluginError> {
        let home = Path::new(context.home.as_str());
        let mut found = discover::Collector::new(discover::Excludes::new(&[], home));
        found.walk(&home.join("notes"), 1, &mut |c, path| {
            if path.extension().is_some_and(|e| e == "onetwo") {
                c.add(path);
            }
        });
        Ok(found.finish())
    }
    fn parse(request: &ParseRequest<'_>) -> Result<ParseOutput, PluginError> {
        let text = String::from_utf8_lossy(request.bytes.as_slice());
        let mut session = Session::new("onetwo-1", "1", AT, AT);
        let mut messages = Vec::new();
        let mut files = Vec::new();
        for line in text.lines() {
            if let Some(path) = line.strip_prefix("edit ") {
                files.push(FileRecord {
                    path: path.into(),
                    action: FileAction::Edit,
                    timestamp_ms: AT,
                });
                continue;
            }
            let Some((role, text)) = line.split_once(": ") else {
                continue;
            };
            let role = match role {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                _ => continue,
            };
            messages.push(Message::new(role, text, AT));
        }
        session.messages = messages.into();
        session.files = files.into();
        Ok(ParseOutput {
            sessions: vec![session].into(),
            ..Default::default()
        })
    }
    fn resume(_request: &ResumeRequest<'_>) -> Result<ResumeAdvice, PluginError> {
        Ok(ResumeAdvice::Refused {
            message: "no".into(),
        })
    }
}

/// The ABI tag of a 1.2 plugin.
#[no_mangle]
pub static DEJA_PLUGIN_ABI: AbiTag = AbiTag {
    magic: version::ABI_MAGIC,
    major: 1,
    minor: 2,
};

fn root_module() -> PluginModuleV1_2Ref {
    export::module_v1_2_for::<OneTwo>()
}

/// abi_stable's library header for the 1.2 root module.
#[no_mangle]
pub static _1as_0lib_1header_0root_bmodule_bloader: abi_stable::library::LibHeader = {
    extern "C" fn erased() -> abi_stable::library::RootModuleResult {
        abi_stable::library::__call_root_module_loader(root_module)
    }
    // SAFETY: the constructor returns the module type named here.
    unsafe {
        abi_stable::library::LibHeader::from_constructor::<PluginModuleV1_2Ref>(
            erased,
            abi_stable::library::CheckTypeLayout::Yes,
        )
    }
};
