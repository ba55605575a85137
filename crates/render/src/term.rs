//! Text for a terminal: control characters and escape sequences replaced by
//! visible stand-ins (U+2400 control pictures for C0, `␡` for DEL, U+FFFD
//! for C1 and the bidirectional controls), so stored text cannot act on the
//! terminal (title, clipboard, hyperlinks, cursor, erasing, concealing) or
//! reorder what is shown. Newlines and tabs stay; a carriage return stays
//! only before a newline.

use std::borrow::Cow;

/// The styles deja's own output uses (SGR parameters): reset, bold, dim,
/// red, green, yellow, cyan and bold yellow. [`screen`] lets exactly these
/// through when colour is on; nothing else that starts with ESC passes.
pub const OWN_STYLES: &[&str] = &["0", "1", "2", "31", "32", "33", "36", "1;33"];

/// Whether `c` must not reach a terminal as it is.
fn unsafe_char(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        || c == '\r'
}

/// The visible stand-in of an unsafe character.
fn stand_in(c: char) -> char {
    match c {
        '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
        '\u{7f}' => '\u{2421}',
        _ => '\u{fffd}',
    }
}

/// `text` with every character that could act on a terminal replaced; the
/// text itself is borrowed when nothing needed replacing.
pub fn clean(text: &str) -> Cow<'_, str> {
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            out.push('\r');
        } else if unsafe_char(c) {
            out.push(stand_in(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` on one line for a list: [`clean`], and every run of whitespace
/// (newlines included) folded to one space.
pub fn line(text: &str) -> String {
    clean(text).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A whole output for a terminal: every unsafe character replaced, except
/// the style sequences of [`OWN_STYLES`], which pass when `styles` is true
/// (colour is on) and are dropped when it is false. This is the last step
/// of everything deja prints for people, so a field that was not cleaned on
/// its own still cannot act on the terminal.
pub fn screen(text: &str, styles: bool) -> Cow<'_, str> {
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\u{1b}' {
            if let Some(len) = own_style(rest) {
                if styles {
                    out.push_str(&rest[..len]);
                }
                rest = &rest[len..];
                continue;
            }
        }
        if c == '\r' && rest[1..].starts_with('\n') {
            out.push('\r');
        } else if unsafe_char(c) {
            out.push(stand_in(c));
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// The length of the style sequence of deja's own that `text` starts with.
fn own_style(text: &str) -> Option<usize> {
    let params = text.strip_prefix("\u{1b}[")?;
    let end = params.find('m')?;
    let p = &params[..end];
    OWN_STYLES.contains(&p).then_some(2 + end + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_become_visible_text() {
        // Title, clipboard (OSC 52), hyperlink (OSC 8), erase, conceal.
        let evil =
            "a\u{1b}]0;pwned\u{7}b\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}[2J\u{1b}[8mhidden\u{9b}31m";
        let shown = clean(evil);
        assert!(!shown.chars().any(unsafe_char), "{shown:?}");
        assert_eq!(
            shown,
            "a␛]0;pwned␇b␛]52;c;cm0gLXJmIH4=␇␛[2J␛[8mhidden\u{fffd}31m"
        );
    }

    #[test]
    fn newlines_tabs_and_crlf_stay_lone_carriage_returns_do_not() {
        assert_eq!(clean("a\tb\r\nc"), "a\tb\r\nc");
        assert_eq!(clean("safe\rEVIL"), "safe␍EVIL");
        assert!(matches!(clean("plain, ünïcode 🚀"), Cow::Borrowed(_)));
    }

    #[test]
    fn bidirectional_controls_are_replaced() {
        assert_eq!(clean("x\u{202e}yz\u{2066}"), "x\u{fffd}yz\u{fffd}");
    }

    #[test]
    fn screen_lets_only_own_styles_through() {
        let ours = "\u{1b}[1;33mword\u{1b}[0m";
        assert_eq!(screen(ours, true), ours);
        assert_eq!(screen(ours, false), "word");
        let theirs = "\u{1b}[8mhidden\u{1b}[0m \u{1b}]8;;http://x\u{7}link";
        assert_eq!(
            screen(theirs, true),
            "␛[8mhidden\u{1b}[0m ␛]8;;http://x␇link"
        );
    }

    #[test]
    fn line_folds_whitespace_after_cleaning() {
        assert_eq!(line("a\n\u{1b}[2J  b"), "a ␛[2J b");
    }

    proptest::proptest! {
        #[test]
        fn nothing_unsafe_survives(s in "\\PC*|[\\x00-\\x1f\\x7f-\\x9f\u{202a}-\u{202e}a]*") {
            proptest::prop_assert!(!clean(&s).chars().any(|c| unsafe_char(c) && c != '\r'));
            let sc = screen(&s, true);
            // Only ESC of an own style may remain.
            let mut rest: &str = &sc;
            while let Some(i) = rest.find('\u{1b}') {
                let len = own_style(&rest[i..]);
                proptest::prop_assert!(len.is_some(), "{:?}", sc);
                rest = &rest[i + len.unwrap_or(1)..];
            }
            let once = clean(&s).into_owned();
            proptest::prop_assert_eq!(clean(&once).into_owned(), once.clone());
        }
    }
}
