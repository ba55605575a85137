//! Turning a transcript's raw bytes into text, whatever they hold: UTF-8 with
//! or without a byte-order mark, UTF-16 LE/BE with a mark, NUL bytes and
//! invalid sequences. Never fails and never panics.

use std::borrow::Cow;

/// The encoding [`decode`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 (possibly with invalid sequences replaced).
    Utf8,
    /// UTF-8 with a byte-order mark.
    Utf8Bom,
    /// UTF-16, little-endian, with a byte-order mark.
    Utf16Le,
    /// UTF-16, big-endian, with a byte-order mark.
    Utf16Be,
}

/// Decodes `bytes` to text: strips a byte-order mark, decodes UTF-16 when
/// marked, replaces invalid sequences with U+FFFD and drops NUL characters.
pub fn decode(bytes: &[u8]) -> (Cow<'_, str>, Encoding) {
    let (text, enc) = if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        (String::from_utf8_lossy(rest), Encoding::Utf8Bom)
    } else if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        (
            Cow::Owned(utf16(rest, u16::from_le_bytes)),
            Encoding::Utf16Le,
        )
    } else if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        (
            Cow::Owned(utf16(rest, u16::from_be_bytes)),
            Encoding::Utf16Be,
        )
    } else {
        (String::from_utf8_lossy(bytes), Encoding::Utf8)
    };
    let text = if text.contains('\0') {
        Cow::Owned(text.replace('\0', ""))
    } else {
        text
    };
    (text, enc)
}

fn utf16(bytes: &[u8], read: fn([u8; 2]) -> u16) -> String {
    let units = bytes
        .chunks_exact(2)
        .filter_map(|c| <[u8; 2]>::try_from(c).ok())
        .map(read);
    char::decode_utf16(units)
        .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// Splits text into lines at `\r\n`, `\n` or a lone `\r`, without the line ends.
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let s = rest?;
        match s.find(['\r', '\n']) {
            None => {
                rest = None;
                (!s.is_empty()).then_some(s)
            }
            Some(i) => {
                let after = if s[i..].starts_with("\r\n") {
                    i + 2
                } else {
                    i + 1
                };
                rest = Some(&s[after..]);
                Some(&s[..i])
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_every_encoding() {
        assert_eq!(decode(b"hi").0, "hi");
        assert_eq!(
            decode(b"\xEF\xBB\xBFhi"),
            (Cow::Borrowed("hi"), Encoding::Utf8Bom)
        );
        assert_eq!(decode(b"\xFF\xFEh\0i\0").0, "hi");
        assert_eq!(decode(b"\xFE\xFF\0h\0i").0, "hi");
        assert_eq!(decode(b"a\xFFb").0, "a\u{FFFD}b");
        assert_eq!(decode(b"a\0b").0, "ab");
        // Odd byte count and unpaired surrogate.
        assert_eq!(decode(b"\xFF\xFE\x00\xD8h").0, "\u{FFFD}");
    }

    #[test]
    fn splits_all_line_ends() {
        let v: Vec<&str> = lines("a\r\nb\rc\n\nd").collect();
        assert_eq!(v, vec!["a", "b", "c", "", "d"]);
        let v: Vec<&str> = lines("a\n").collect();
        assert_eq!(v, vec!["a"]);
        assert_eq!(lines("").count(), 0);
    }
}
