//! What detection looks at in a JSON file: its outline, the file with long strings cut short, runs of blanks
//! kept as one and deep nesting left out, so that a long value early in a file (a 1 MiB `model_id`, a GuideLLM `args` holding a whole
//! `--data` file, a deeply nested `label`) does not hide the keys that come after it.

use crate::storage::Storage;

/// The longest string the outline keeps whole; a longer one keeps its first this many bytes.
const STRING_BYTES: usize = 256;

/// The deepest nesting the outline keeps; what lies deeper is left out (its brackets stay balanced).
const DEPTH: usize = 32;

/// How much of a file the outline reads at most: far beyond any real result's preamble.
const SCAN_BYTES: u64 = 256 << 20;

/// How much of a file is read at a time.
const PIECE_BYTES: u64 = 1 << 20;

/// The first `head_bytes` of the outline of the JSON file at `path`, whose first `head_bytes` are `head`; the
/// head itself when the file is not longer than that or is not JSON (its first non-blank byte opens neither an
/// object nor an array). A leading byte-order mark is left out either way.
pub(crate) fn head(
    storage: &dyn Storage,
    path: &str,
    head: Vec<u8>,
    head_bytes: u64,
) -> std::io::Result<Vec<u8>> {
    // A byte-order mark (as Windows tools write one) is not content: detection sees what follows it.
    let bom_bytes = head.len() - crate::run::bytes::without_boms(&head).len();
    let is_json = head[bom_bytes..]
        .iter()
        .find(|byte| !byte.is_ascii_whitespace())
        .is_some_and(|byte| matches!(byte, b'{' | b'['));
    if (head.len() as u64) < head_bytes || !is_json {
        return Ok(head[bom_bytes..].to_vec());
    }
    let mut outline = Outline::new(head_bytes as usize);
    if outline.feed(&head[bom_bytes..]) {
        return Ok(outline.out);
    }
    let mut read = head.len() as u64;
    while read < SCAN_BYTES {
        let piece = storage.read_range(path, read..read + PIECE_BYTES)?;
        if piece.is_empty() || outline.feed(&piece) {
            break;
        }
        read += piece.len() as u64;
    }
    Ok(outline.out)
}

/// The outline being made, a piece of the file at a time.
struct Outline {
    out: Vec<u8>,
    limit: usize,
    depth: usize,
    in_string: bool,
    escaped: bool,
    escape_kept: bool,
    string_bytes: usize,
}

impl Outline {
    fn new(limit: usize) -> Outline {
        Outline {
            out: Vec::with_capacity(limit),
            limit,
            depth: 0,
            in_string: false,
            escaped: false,
            escape_kept: false,
            string_bytes: 0,
        }
    }

    /// Adds a piece of the file; `true` once the outline is `limit` bytes long.
    fn feed(&mut self, piece: &[u8]) -> bool {
        for &byte in piece {
            let kept = self.depth <= DEPTH;
            if self.in_string {
                // Within the first bytes of a string, and the character after a backslash kept there.
                let keep = kept && (self.string_bytes < STRING_BYTES || self.escape_kept);
                if self.escaped {
                    self.escaped = false;
                    self.escape_kept = false;
                } else if byte == b'\\' {
                    self.escaped = true;
                    self.escape_kept = keep;
                } else if byte == b'"' {
                    self.in_string = false;
                    if kept {
                        self.out.push(b'"');
                    }
                    continue;
                }
                self.string_bytes += 1;
                if keep {
                    self.out.push(byte);
                }
            } else {
                match byte {
                    b'"' => {
                        self.in_string = true;
                        self.string_bytes = 0;
                    }
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                    _ => {}
                }
                if byte.is_ascii_whitespace() {
                    // A run of blanks is kept as one (a line break, if it holds one: JSON Lines records stay
                    // on lines of their own).
                    match self.out.last_mut() {
                        Some(last) if last.is_ascii_whitespace() => {
                            if byte == b'\n' {
                                *last = b'\n';
                            }
                            continue;
                        }
                        _ if !kept => continue,
                        _ => {}
                    }
                }
                if kept || self.depth == DEPTH && matches!(byte, b'}' | b']') {
                    self.out.push(byte);
                }
            }
            if self.out.len() >= self.limit {
                self.out.truncate(self.limit);
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outline(text: &[u8]) -> Vec<u8> {
        let mut outline = Outline::new(1 << 20);
        outline.feed(text);
        outline.out
    }

    #[test]
    fn long_strings_are_cut_and_deep_nesting_left_out_but_later_keys_kept() {
        let long = "x".repeat(10_000);
        let text = format!(r#"{{"model_id": "{long}", "date": "2026", "num_prompts": 8}}"#);
        let cut = String::from_utf8(outline(text.as_bytes())).unwrap();
        assert_eq!(
            cut,
            format!(
                r#"{{"model_id": "{}", "date": "2026", "num_prompts": 8}}"#,
                "x".repeat(STRING_BYTES)
            )
        );
        let deep = format!(
            r#"{{"label": {}1{}, "completed": 8}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let cut = String::from_utf8(outline(deep.as_bytes())).unwrap();
        assert!(cut.ends_with(r#"]]]], "completed": 8}"#), "{cut}");
        assert!(cut.len() < 200, "{}", cut.len());
        // The brackets of the outline balance.
        assert_eq!(
            cut.matches(['[', '{']).count(),
            cut.matches([']', '}']).count()
        );
        let blank = format!(
            "{{\"label\":{}\"x\",\n\n \"completed\": 8}}",
            " ".repeat(100_000)
        );
        assert_eq!(
            String::from_utf8(outline(blank.as_bytes())).unwrap(),
            "{\"label\": \"x\",\n\"completed\": 8}"
        );
        // Escaped quotes do not end a string; an escape at the cut stays whole.
        let escaped = format!(r#"{{"a": "{}\"", "b": 1}}"#, "y".repeat(STRING_BYTES - 1));
        let cut = String::from_utf8(outline(escaped.as_bytes())).unwrap();
        assert!(cut.ends_with(r#"\"", "b": 1}"#), "{cut}");
    }
}
