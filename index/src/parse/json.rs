//! Lenient JSON for the files benchmark tools write: Python's bare `Infinity`/`NaN`, several objects in one file
//! (appended runs, JSON Lines), numbers written as strings, and errors reported with their line.

use serde_json::Value as Json;

/// A JSON value that could not be read, with the 1-based line where the problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JsonError {
    pub line: u64,
    pub message: String,
}

/// Replaces Python's non-standard `Infinity`, `-Infinity` and `NaN` tokens outside strings with the strings
/// `"Infinity"`, `"-Infinity"`, `"NaN"`, which [`number`] reads back. Returns the input untouched (borrowed) when
/// there is nothing to replace, which is the common case.
pub(crate) fn standardise(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let has_token = memchr::memmem::find(bytes, b"Infinity").is_some()
        || memchr::memmem::find(bytes, b"NaN").is_some();
    if !has_token {
        return std::borrow::Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut string = InString::default();
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        if string.inside(byte) {
            out.push(byte);
            index += 1;
            continue;
        }
        let rest = &bytes[index..];
        let token = [&b"-Infinity"[..], b"Infinity", b"NaN"]
            .into_iter()
            .find(|token| rest.starts_with(token));
        if let Some(token) = token {
            out.push(b'"');
            out.extend_from_slice(token);
            out.push(b'"');
            index += token.len();
            continue;
        }
        out.push(byte);
        index += 1;
    }
    std::borrow::Cow::Owned(out)
}

/// Follows JSON strings byte by byte, so scanners can skip what is quoted.
#[derive(Default)]
struct InString {
    open: bool,
    escaped: bool,
}

impl InString {
    /// Whether `byte` is part of a string (its quotes included): an opening quote starts one, and an unescaped
    /// quote inside one ends it.
    fn inside(&mut self, byte: u8) -> bool {
        if !self.open {
            self.open = byte == b'"';
            return self.open;
        }
        if self.escaped {
            self.escaped = false;
        } else if byte == b'\\' {
            self.escaped = true;
        } else if byte == b'"' {
            self.open = false;
        }
        true
    }
}

/// The 1-based line of byte `offset`.
pub(crate) fn line_of(bytes: &[u8], offset: usize) -> u64 {
    memchr::memchr_iter(b'\n', &bytes[..offset.min(bytes.len())]).count() as u64 + 1
}

/// One JSON document.
pub(crate) fn parse(bytes: &[u8]) -> Result<Json, JsonError> {
    let bytes = standardise(strip_bom(bytes));
    serde_json::from_slice(&bytes).map_err(|error| JsonError {
        line: error.line() as u64,
        message: error.to_string(),
    })
}

/// A file's bytes as the readers parse them: without a byte-order mark, Python's bare tokens made strings.
pub(crate) fn prepare(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    standardise(strip_bom(bytes))
}

fn strip_bom(bytes: &[u8]) -> &[u8] {
    crate::run::bytes::without_boms(bytes)
}

/// Every top-level JSON value of a file that holds one or several (appended objects, JSON Lines), each with the
/// 1-based line where it starts, read as `T` (a [`Json`] tree, or a typed reader of a known layout). A value that
/// cannot be read is returned as an error and reading resumes at the next line, so one damaged line does not hide
/// the others.
pub(crate) fn documents<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
) -> Vec<(u64, Result<T, JsonError>)> {
    let standard = prepare(bytes);
    let bytes: &[u8] = &standard;
    let mut out = Vec::new();
    let mut start = 0usize;
    while start < bytes.len() {
        while start < bytes.len() && bytes[start].is_ascii_whitespace() {
            start += 1;
        }
        if start >= bytes.len() {
            break;
        }
        let line = line_of(bytes, start);
        let mut stream = serde_json::Deserializer::from_slice(&bytes[start..]).into_iter::<T>();
        match stream.next() {
            Some(Ok(value)) => {
                start += stream.byte_offset();
                out.push((line, Ok(value)));
            }
            Some(Err(error)) => {
                out.push((
                    line,
                    Err(JsonError {
                        line: line + error.line().saturating_sub(1) as u64,
                        message: error.to_string(),
                    }),
                ));
                // Resume at the next line.
                match memchr::memchr(b'\n', &bytes[start..]) {
                    Some(newline) => start += newline + 1,
                    None => break,
                }
            }
            None => break,
        }
    }
    out
}

/// A number, also when written as a string (`"550"`, `"inf"`, `"Infinity"`); `None` for anything else.
pub(crate) fn number(value: &Json) -> Option<f64> {
    match value {
        Json::Number(number) => number.as_f64(),
        Json::String(text) => number_text(text),
        _ => None,
    }
}

/// A number written as a string (`"550"`, `"inf"`, `"Infinity"`, `"NaN"`).
pub(crate) fn number_text(text: &str) -> Option<f64> {
    match text.trim() {
        "inf" | "Infinity" | "+inf" => Some(f64::INFINITY),
        "-inf" | "-Infinity" => Some(f64::NEG_INFINITY),
        "nan" | "NaN" => Some(f64::NAN),
        other => other.parse::<f64>().ok(),
    }
}

/// A value as a warning shows it: its kind and, when short, itself (`a string ("fast")`).
pub(crate) fn shown(value: &Json) -> String {
    let text = value.to_string();
    let kind = match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "a mapping",
    };
    if text.len() <= 40 {
        format!("{kind} ({text})")
    } else {
        kind.to_string()
    }
}

/// `value[key]` as a number.
pub(crate) fn field_number(value: &Json, key: &str) -> Option<f64> {
    value.get(key).and_then(number)
}

/// `value[key]` as a whole non-negative count (`4`, `4.0`, `"4"`).
pub(crate) fn field_count(value: &Json, key: &str) -> Option<u32> {
    field_number(value, key)
        .filter(|number| number.is_finite() && *number >= 0.0 && number.fract() == 0.0)
        .and_then(|number| u32::try_from(number as u64).ok())
}

/// `value[key]` as text.
pub(crate) fn field_text<'a>(value: &'a Json, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Json::as_str)
}

/// A value at a dotted path (`input_config.loadgen.concurrency`).
pub(crate) fn at<'a>(value: &'a Json, path: &str) -> Option<&'a Json> {
    path.split('.')
        .try_fold(value, |value, part| value.get(part))
}

/// Whether a file's first non-blank byte opens an object (results are objects; summaries of several runs are
/// arrays).
pub(crate) fn starts_with_object(head: &[u8]) -> bool {
    head.iter()
        .find(|byte| !byte.is_ascii_whitespace())
        .is_some_and(|byte| *byte == b'{')
}

/// Whether the first bytes of a file (possibly cut mid-document) contain `"key"` as a JSON key.
pub(crate) fn head_has_key(head: &[u8], key: &str) -> bool {
    let quoted = format!("\"{key}\"");
    memchr::memmem::find_iter(head, quoted.as_bytes()).any(|position| {
        head[position + quoted.len()..]
            .iter()
            .find(|byte| !byte.is_ascii_whitespace())
            .is_some_and(|byte| *byte == b':')
    })
}

/// The 1-based line where each element of a file's top-level array starts (empty when the file is not an
/// array), so a problem with element `i` can be reported at its line although the parsed value has no positions.
pub(crate) fn array_element_lines(bytes: &[u8]) -> Vec<u64> {
    let bytes = strip_bom(bytes);
    let mut lines = Vec::new();
    let mut line = 1u64;
    let mut depth = 0usize;
    let mut string = InString::default();
    let mut expecting_element = false;
    for &byte in bytes {
        if byte == b'\n' {
            line += 1;
        }
        if string.open {
            string.inside(byte);
            continue;
        }
        if byte.is_ascii_whitespace() {
            continue;
        }
        if depth == 0 && lines.is_empty() && !expecting_element && byte != b'[' {
            return Vec::new();
        }
        if expecting_element && byte != b']' {
            lines.push(line);
            expecting_element = false;
        }
        match byte {
            b'"' => {
                string.inside(byte);
            }
            b'[' | b'{' => {
                depth += 1;
                if depth == 1 {
                    expecting_element = true;
                }
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                expecting_element = false;
            }
            b',' if depth == 1 => expecting_element = true,
            _ => {}
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_tokens_become_strings_outside_strings_only() {
        let text = br#"{"request_rate": Infinity, "x": -Infinity, "y": NaN, "s": "NaN Infinity"}"#;
        let value = parse(text).unwrap();
        assert_eq!(field_number(&value, "request_rate"), Some(f64::INFINITY));
        assert_eq!(field_number(&value, "x"), Some(f64::NEG_INFINITY));
        assert!(field_number(&value, "y").unwrap().is_nan());
        assert_eq!(field_text(&value, "s"), Some("NaN Infinity"));
    }

    #[test]
    fn several_documents_with_a_damaged_one_in_between() {
        let text = b"\n{\"a\": 1}\n{\"a\": 2, \"b\": [1,\n{\"a\": 3}\n";
        let documents = documents::<Json>(text);
        assert_eq!(documents.len(), 3);
        assert_eq!(documents[0].0, 2);
        assert_eq!(documents[0].1.as_ref().unwrap()["a"], 1);
        assert_eq!(documents[1].0, 3);
        assert!(documents[1].1.is_err());
        assert_eq!(documents[2].0, 4);
        assert_eq!(documents[2].1.as_ref().unwrap()["a"], 3);
    }

    #[test]
    fn numbers_as_strings_and_counts() {
        let value = serde_json::json!({"a": "550", "b": 4.0, "c": 4.5, "d": "x", "e": -1});
        assert_eq!(field_number(&value, "a"), Some(550.0));
        assert_eq!(field_count(&value, "b"), Some(4));
        assert_eq!(field_count(&value, "c"), None);
        assert_eq!(field_number(&value, "d"), None);
        assert_eq!(field_count(&value, "e"), None);
        assert!(head_has_key(b"{\"model_id\" : \"x\"", "model_id"));
        assert!(!head_has_key(b"{\"text\": \"model_id\"}", "model_id"));
    }

    #[test]
    fn array_elements_are_found_at_their_lines() {
        let text = b"[\n  {\"a\": [1,\n 2]},\n  \"x, ]\",\n  3\n]\n";
        assert_eq!(array_element_lines(text), vec![2, 4, 5]);
        assert_eq!(array_element_lines(b"[]"), Vec::<u64>::new());
        assert_eq!(array_element_lines(b"{\"a\": [1, 2]}"), Vec::<u64>::new());
    }
}
