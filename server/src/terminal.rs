//! Text from data files made safe to print on a terminal: control characters shown as escapes, never obeyed.
//!
//! A status, a manifest field or a refill note is written by another program and may hold an ANSI escape
//! sequence (which would clear or recolour the screen of whoever runs `cellscope audit`) or an invisible carriage
//! return (which makes `ok\r` look like `ok`). Every text the CLI prints goes through [`printable`].

use std::borrow::Cow;

/// `text` with every control character other than line feed and tab written as its Rust escape (`\r`,
/// `\u{1b}`); borrowed unchanged when there is none.
pub fn printable(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn escapes_are_shown_not_obeyed_and_plain_text_is_untouched() {
        assert_eq!(
            printable("status \u{1b}[2J\u{1b}[31mok\r done"),
            "status \\u{1b}[2J\\u{1b}[31mok\\r done"
        );
        assert_eq!(printable("two\nlines\tand tab"), "two\nlines\tand tab");
        assert!(matches!(
            printable("plain · ünïcode"),
            std::borrow::Cow::Borrowed(_)
        ));
        // C1 controls (a bare CSI) too.
        assert_eq!(printable("\u{9b}2J"), "\\u{9b}2J");
    }
}
