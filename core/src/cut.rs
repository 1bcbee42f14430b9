//! Text from outside cut to a length: names and engine errors have no
//! length limit of their own, and what carries them (an audit line, a
//! notification's body) must stay within what its reader takes.

/// `text`, at most `max` characters of it, marked `…` where it was cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn a_text_is_cut_at_a_character_not_a_byte() {
        assert_eq!(cut("short", 5), "short");
        assert_eq!(cut("longer", 5), "longe…");
        assert_eq!(cut("ééééé", 3), "ééé…");
        assert_eq!(cut("", 0), "");
        assert_eq!(cut("x", 0), "…");
    }
}
