//! A shared library named like a plugin that is not one.

#[no_mangle]
pub extern "C" fn something_else() -> i32 {
    42
}
