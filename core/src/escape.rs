//! Terminal-safe text.
//!
//! Release, swarm, application and node names, error strings and daemon
//! replies come from anyone who can create a Swarm object. Printed raw, a
//! name holding a line break fakes a section of the plan, and an escape
//! sequence moves the cursor or erases the line above. Every piece of such
//! text goes through [`Escaped`] (or [`escape`]) before it reaches a
//! terminal or a log: control characters and bidi controls come out as
//! `\u{1b}`, so no name can add a line or reorder what is shown. JSON output
//! stays exact and is never escaped this way.

use std::borrow::Cow;
use std::fmt::{self, Display, Write};

/// Whether `c` must not reach a terminal as it is: C0 controls (line breaks
/// and tabs included: the renderers write their own), DEL, C1 controls, the
/// line and paragraph separators some renderers break lines at, the bidi
/// controls that reorder what follows them, and the characters that show
/// nothing at all (zero-width spaces and joiners, the soft hyphen, the byte
/// order mark, tag characters): `db` and `db` with one of those inside are
/// two names that would print alike.
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{ad}'
        | '\u{61c}'
        | '\u{180e}'
        | '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{e0000}'..='\u{e007f}')
}

/// `text` with every unsafe character shown as `\u{..}`; borrowed when
/// there is nothing to escape.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    // Writing to a String cannot fail.
    let _ = EscapingWriter { inner: &mut out }.write_str(text);
    Cow::Owned(out)
}

/// Displays any value with its unsafe characters escaped:
/// `format!("{}", Escaped(&release_ref))`.
#[derive(Debug, Clone, Copy)]
pub struct Escaped<T>(pub T);

impl<T: Display> Display for Escaped<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(EscapingWriter { inner: f }, "{}", self.0)
    }
}

/// Escapes everything written through it.
struct EscapingWriter<'a, W: Write + ?Sized> {
    inner: &'a mut W,
}

impl<W: Write + ?Sized> Write for EscapingWriter<'_, W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut rest = s;
        while let Some(at) = rest.find(is_unsafe) {
            self.inner.write_str(&rest[..at])?;
            let c = rest[at..].chars().next().unwrap_or_default();
            write!(self.inner, "{}", c.escape_unicode())?;
            rest = &rest[at + c.len_utf8()..];
        }
        self.inner.write_str(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(escape("alpha/web-1 ünïcode"), Cow::Borrowed(_)));
    }

    #[test]
    fn controls_and_bidi_are_escaped() {
        assert_eq!(
            escape("g\nto delete (0):\n  nothing"),
            "g\\u{a}to delete (0):\\u{a}  nothing"
        );
        assert_eq!(escape("\u{1b}[1A\u{1b}[2K"), "\\u{1b}[1A\\u{1b}[2K");
        assert_eq!(escape("a\tb\rc\0d\u{7f}"), "a\\u{9}b\\u{d}c\\u{0}d\\u{7f}");
        assert_eq!(escape("x\u{9b}y"), "x\\u{9b}y");
        assert_eq!(escape("\u{202e}evil\u{2066}"), "\\u{202e}evil\\u{2066}");
        assert_eq!(escape("\u{200f}\u{61c}"), "\\u{200f}\\u{61c}");
    }

    #[test]
    fn what_shows_nothing_or_breaks_a_line_is_escaped() {
        assert_eq!(escape("db\u{200b}"), "db\\u{200b}");
        assert_eq!(escape("a\u{ad}b\u{feff}"), "a\\u{ad}b\\u{feff}");
        assert_eq!(escape("x\u{2028}y\u{2029}"), "x\\u{2028}y\\u{2029}");
        assert_eq!(escape("\u{2060}\u{e0041}"), "\\u{2060}\\u{e0041}");
        // What shows is left alone, accents and other scripts included.
        assert!(matches!(escape("ünïcode-ß-日本"), Cow::Borrowed(_)));
    }

    #[test]
    fn display_wrapper_escapes_any_display() {
        assert_eq!(
            Escaped(format_args!("{}/{}", "a\u{1b}", "b\n")).to_string(),
            "a\\u{1b}/b\\u{a}"
        );
        assert_eq!(Escaped("plain").to_string(), "plain");
    }

    #[test]
    fn nothing_unsafe_survives() {
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        assert!(!escape(&all).chars().any(is_unsafe));
    }
}
