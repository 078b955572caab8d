//! The body of the fuzz target of the server's own reader of outside input, the refill note's markdown made HTML,
//! with the property it must keep; the index's targets are `cellscope_index::fuzzing`'s. `fuzz/` runs it under
//! libFuzzer (`cargo xtask fuzz`), and `server/tests/suite/fuzz_corpus.rs` on the committed corpus and seeded
//! mutations of it in every test run.
//!
//! It panics when its property fails: that is how libFuzzer and the tests see a finding.

pub use cellscope_index::fuzzing::Check;

/// The server's fuzz targets by name, as `fuzz/fuzz_targets/<name>.rs` and the corpus directories call them.
pub const TARGETS: [(&str, Check); 1] = [("refill_note", refill_note)];

/// A refill note's markdown becomes HTML with nothing active left in it: no script, style or frame element, no
/// event-handler attribute, no `javascript:` address.
pub fn refill_note(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let html = crate::http::snapshot::render_markdown(&text);
    let lower = html.to_ascii_lowercase();
    for element in [
        "<script", "<style", "<iframe", "<object", "<embed", "<svg", "<math",
    ] {
        assert!(!lower.contains(element), "{element} in {html}");
    }
    for (name, value) in attributes(&lower) {
        assert!(!name.starts_with("on"), "handler `{name}` in {html}");
        if name == "href" || name == "src" {
            assert!(!value.trim_start().starts_with("javascript:"), "{html}");
        }
    }
}

/// Every attribute of every tag in `html` as `(name, value)`, quotes respected, so that text inside a quoted
/// value is never taken for an attribute.
fn attributes(html: &str) -> Vec<(String, String)> {
    let bytes = html.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(open) = bytes[at..].iter().position(|byte| *byte == b'<') {
        at += open + 1;
        // The tag's name.
        while at < bytes.len() && !bytes[at].is_ascii_whitespace() && bytes[at] != b'>' {
            at += 1;
        }
        loop {
            while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b'/') {
                at += 1;
            }
            if at >= bytes.len() || bytes[at] == b'>' {
                break;
            }
            let name_start = at;
            while at < bytes.len()
                && !bytes[at].is_ascii_whitespace()
                && !matches!(bytes[at], b'=' | b'>' | b'/')
            {
                at += 1;
            }
            let name = html[name_start..at].to_string();
            let mut value = String::new();
            if bytes.get(at) == Some(&b'=') {
                at += 1;
                match bytes.get(at) {
                    Some(quote @ (b'"' | b'\'')) => {
                        let end = bytes[at + 1..]
                            .iter()
                            .position(|byte| byte == quote)
                            .map_or(bytes.len(), |end| at + 1 + end);
                        value = html[at + 1..end].to_string();
                        at = (end + 1).min(bytes.len());
                    }
                    _ => {
                        let start = at;
                        while at < bytes.len()
                            && !bytes[at].is_ascii_whitespace()
                            && bytes[at] != b'>'
                        {
                            at += 1;
                        }
                        value = html[start..at].to_string();
                    }
                }
            }
            found.push((name, value));
        }
    }
    found
}
