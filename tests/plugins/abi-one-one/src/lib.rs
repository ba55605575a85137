//! A reader built for plugin ABI 1.1, exported as a plugin built before ABI
//! 1.2 was (the 1.1 tag and root module, no commands' outcomes): a 1.2 deja
//! must still load it and use it, its commands' outcomes unknown. It reads
//! `*.oneone` files of `role: text` lines and `$ command` lines.

use deja_plugin_api::*;

struct OneOne;

const AT: i64 = 1_700_000_000_000;

impl Reader for OneOne {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "oneone".into(),
            version: "1.1.0".into(),
            harness: "oneone".into(),
            description: "a reader built for ABI 1.1".into(),
            abi: AbiVersion { major: 1, minor: 1 },
            config_keys: RVec::new(),
        }
    }
    fn detect(path: &str, _head: &[u8]) -> u8 {
        if path.ends_with(".oneone") {
            90
        } else {
            0
        }
    }
    fn discover(_context: &HostContext) -> Result<Discovery, PluginError> {
        Ok(Discovery::default())
    }
    fn parse(request: &ParseRequest<'_>) -> Result<ParseOutput, PluginError> {
        let text = String::from_utf8_lossy(request.bytes.as_slice());
        let mut session = Session::new("oneone-1", "1", AT, AT);
        let mut messages = Vec::new();
        let mut commands = Vec::new();
        for line in text.lines() {
            if let Some(command) = line.strip_prefix("$ ") {
                commands.push(CommandRecord {
                    command: command.into(),
                    origin: CommandOrigin::Agent,
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
        session.commands = commands.into();
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

/// The ABI tag of a 1.1 plugin.
#[no_mangle]
pub static DEJA_PLUGIN_ABI: AbiTag = AbiTag {
    magic: version::ABI_MAGIC,
    major: 1,
    minor: 1,
};

fn root_module() -> PluginModuleV1_1Ref {
    export::module_v1_1_for::<OneOne>()
}

/// abi_stable's library header for the 1.1 root module.
#[no_mangle]
pub static _1as_0lib_1header_0root_bmodule_bloader: abi_stable::library::LibHeader = {
    extern "C" fn erased() -> abi_stable::library::RootModuleResult {
        abi_stable::library::__call_root_module_loader(root_module)
    }
    // SAFETY: the constructor returns the module type named here.
    unsafe {
        abi_stable::library::LibHeader::from_constructor::<PluginModuleV1_1Ref>(
            erased,
            abi_stable::library::CheckTypeLayout::Yes,
        )
    }
};
