//! A reader built for plugin ABI 1.0, exported as a plugin built before ABI
//! 1.1 was (the 1.0 tag and root module): a 1.1 deja must still load it and
//! use it. It reads `*.oldabi` files of `role: text` lines.

use deja_plugin_api::*;

struct OldAbi;

impl Reader for OldAbi {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "oldabi".into(),
            version: "1.0.0".into(),
            harness: "oldabi".into(),
            description: "a reader built for ABI 1.0".into(),
            abi: AbiVersion { major: 1, minor: 0 },
            config_keys: RVec::new(),
        }
    }
    fn detect(path: &str, _head: &[u8]) -> u8 {
        if path.ends_with(".oldabi") {
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
        let mut session = Session::new("oldabi-1", "1", 1_700_000_000_000, 1_700_000_000_000);
        let messages: Vec<Message> = text
            .lines()
            .filter_map(|line| {
                let (role, text) = line.split_once(": ")?;
                let role = match role {
                    "user" => Role::User,
                    "assistant" => Role::Assistant,
                    _ => return None,
                };
                Some(Message::new(role, text, 1_700_000_000_000))
            })
            .collect();
        session.messages = messages.into();
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

/// The ABI tag of a 1.0 plugin.
#[no_mangle]
pub static DEJA_PLUGIN_ABI: AbiTag = AbiTag {
    magic: version::ABI_MAGIC,
    major: 1,
    minor: 0,
};

fn root_module() -> PluginModuleV1_0Ref {
    export::module_v1_0_for::<OldAbi>()
}

/// abi_stable's library header for the 1.0 root module.
#[no_mangle]
pub static _1as_0lib_1header_0root_bmodule_bloader: abi_stable::library::LibHeader = {
    extern "C" fn erased() -> abi_stable::library::RootModuleResult {
        abi_stable::library::__call_root_module_loader(root_module)
    }
    // SAFETY: the constructor returns the module type named here.
    unsafe {
        abi_stable::library::LibHeader::from_constructor::<PluginModuleV1_0Ref>(
            erased,
            abi_stable::library::CheckTypeLayout::Yes,
        )
    }
};
