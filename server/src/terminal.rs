//! Text from data files made safe to print on a terminal: control characters shown as escapes, never obeyed.
//!
//! A status, a manifest field or a refill note is written by another program and may hold an ANSI escape
//! sequence (which would clear or recolour the screen of whoever runs `cellscope audit`), an invisible carriage
//! return (which makes `ok\r` look like `ok`) or a bidirectional control (which shows the text after it
//! reversed: `\u{202e}kooc` reads as `cook`). Every text the CLI prints goes through [`printable`]; an export
//! written to a terminal goes through [`for_standard_output`].

use std::borrow::Cow;

/// The Unicode bidirectional controls: embeddings and overrides (U+202A–U+202E), isolates (U+2066–U+2069) and
/// the marks (U+200E, U+200F, U+061C). They are format characters, not control characters, yet they reorder
/// what a terminal shows.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

/// Whether `c` is shown as its escape: every control character but line feed and tab, and every bidirectional
/// control.
fn shown_escaped(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c)
}

/// `text` with every control character other than line feed and tab, and every bidirectional control, written as
/// its Rust escape (`\r`, `\u{1b}`, `\u{202e}`); borrowed unchanged when there is none.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(shown_escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if shown_escaped(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// An export's text as it goes to standard output: through [`printable`] when that is a terminal, where the
/// export is read rather than parsed; its exact bytes otherwise (a pipe or a file), so that what a program reads
/// is the export itself.
pub fn for_standard_output(export: &[u8], terminal: bool) -> Cow<'_, [u8]> {
    if !terminal {
        return Cow::Borrowed(export);
    }
    match String::from_utf8_lossy(export) {
        Cow::Borrowed(text) => match printable(text) {
            Cow::Borrowed(_) => Cow::Borrowed(export),
            Cow::Owned(shown) => Cow::Owned(shown.into_bytes()),
        },
        Cow::Owned(text) => Cow::Owned(printable(&text).into_owned().into_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::{for_standard_output, printable};

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

    #[test]
    fn every_bidirectional_control_is_shown_escaped_and_other_format_characters_are_not() {
        for (control, shown) in [
            ('\u{202a}', "\\u{202a}"),
            ('\u{202b}', "\\u{202b}"),
            ('\u{202c}', "\\u{202c}"),
            ('\u{202d}', "\\u{202d}"),
            ('\u{202e}', "\\u{202e}"),
            ('\u{2066}', "\\u{2066}"),
            ('\u{2067}', "\\u{2067}"),
            ('\u{2068}', "\\u{2068}"),
            ('\u{2069}', "\\u{2069}"),
            ('\u{200e}', "\\u{200e}"),
            ('\u{200f}', "\\u{200f}"),
            ('\u{61c}', "\\u{61c}"),
        ] {
            assert_eq!(printable(&format!("a{control}b")), format!("a{shown}b"));
        }
        // A zero-width joiner holds emoji together; it reorders nothing.
        assert_eq!(printable("👩\u{200d}🔬"), "👩\u{200d}🔬");
    }

    #[test]
    fn csv_on_a_terminal_shows_escape_bell_carriage_return_and_bidi_controls_as_escapes() {
        let csv = "run_id,workload\nr1,\"short\u{1b}[31m\u{7}\r\u{202e}decode\"\n";
        assert_eq!(
            String::from_utf8(for_standard_output(csv.as_bytes(), true).into_owned()).unwrap(),
            "run_id,workload\nr1,\"short\\u{1b}[31m\\u{7}\\r\\u{202e}decode\"\n"
        );
        // Elsewhere than on a terminal, the very bytes.
        assert!(matches!(
            for_standard_output(csv.as_bytes(), false),
            std::borrow::Cow::Borrowed(bytes) if bytes == csv.as_bytes()
        ));
        // Plain CSV on a terminal is not copied.
        assert!(matches!(
            for_standard_output(b"a,b\n1,2\n", true),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
