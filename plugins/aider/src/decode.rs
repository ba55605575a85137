//! A history file's bytes to text, whatever they hold (see
//! [`deja_plugin_api::text::decode`]: BOMs, UTF-16, NULs, invalid UTF-8).
//!
//! One real case needs more: a file that a shell created with a UTF-16 byte
//! order mark (PowerShell's `echo > file`) and that aider then appended to in
//! UTF-8. Read as UTF-16 it is noise; so when the declared UTF-16 holds no
//! session header and the bytes after the mark read as UTF-8 do, the latter wins.

use std::borrow::Cow;

use deja_plugin_api::text::{self, Encoding};

use crate::header;

/// The text of a history file.
pub(crate) fn decode(bytes: &[u8]) -> Cow<'_, str> {
    let (declared, encoding) = text::decode(bytes);
    if matches!(encoding, Encoding::Utf16Le | Encoding::Utf16Be) && !has_header(&declared) {
        let (appended, _) = text::decode(bytes.get(2..).unwrap_or_default());
        if has_header(&appended) {
            return appended;
        }
    }
    declared
}

fn has_header(text: &str) -> bool {
    text::lines(text).any(header::is_header)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const HEADER: &str = "# aider chat started at 2025-09-01 14:45:11";

    #[test]
    fn utf16_with_a_header_is_utf16() {
        let mut bytes = vec![0xFF, 0xFE];
        bytes.extend(HEADER.encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(decode(&bytes), HEADER);
    }

    #[test]
    fn utf8_after_a_utf16_mark_is_utf8() {
        let mut bytes = vec![0xFF, 0xFE, 0x0D, 0x00, 0x0A, 0x00];
        bytes.extend(format!("\r\n{HEADER}\r\n\r\n#### hi  \r\0\n\0").as_bytes());
        assert_eq!(
            decode(&bytes),
            format!("\r\n\r\n{HEADER}\r\n\r\n#### hi  \r\n")
        );
    }

    #[test]
    fn utf16_without_a_header_stays_utf16() {
        let mut bytes = vec![0xFE, 0xFF];
        bytes.extend("hello".encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(decode(&bytes), "hello");
    }
}
