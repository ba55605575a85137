//! A library that declares plugin ABI 2.0, as a plugin built for a future,
//! incompatible deja would. deja must refuse it with a clear message.

#[no_mangle]
pub static DEJA_PLUGIN_ABI: deja_plugin_api::AbiTag = deja_plugin_api::AbiTag {
    magic: deja_plugin_api::version::ABI_MAGIC,
    major: 2,
    minor: 0,
};
