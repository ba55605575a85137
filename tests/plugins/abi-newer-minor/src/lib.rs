//! A library that declares plugin ABI 1.99, newer than any deja 1.x host
//! knows. deja must refuse it and say to upgrade deja.

#[no_mangle]
pub static DEJA_PLUGIN_ABI: deja_plugin_api::AbiTag = deja_plugin_api::AbiTag {
    magic: deja_plugin_api::version::ABI_MAGIC,
    major: 1,
    minor: 99,
};
