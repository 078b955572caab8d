//! A faster reading of the common case of a vLLM result file: one JSON object whose per-request arrays hold only
//! numbers. Its bytes are scanned directly, and each number is parsed by fast-float2, which rounds correctly
//! like serde_json's `float_roundtrip` (so the values are the same bits). Most of a `--save-detailed` file is
//! those numbers, and serde_json's own float parsing was most of the time spent reading it.
//!
//! Anything else (several objects in the file, a string or `null` among the numbers, an escaped key, a number
//! out of range, invalid JSON) gives `None`, and the file is read by the general reader, which also words the
//! warnings. Every value that is not a per-request array of numbers is still read (or validated) by serde_json.

use super::json::line_of;
use super::parallel::{Column, Columns, ResultObject};
use serde::de::IgnoredAny;
use serde_json::Value as Json;

/// The file's one result object and the line where it starts, when the fast reading applies.
pub(crate) fn single_result(bytes: &[u8]) -> Option<(u64, ResultObject)> {
    let mut scan = Scan { bytes, at: 0 };
    scan.skip_whitespace();
    let line = line_of(bytes, scan.at);
    let object = scan.object()?;
    scan.skip_whitespace();
    (scan.at == bytes.len()).then_some((line, object))
}

struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.skip_whitespace();
        (self.peek()? == byte).then(|| self.at += 1)
    }

    fn object(&mut self) -> Option<ResultObject> {
        self.expect(b'{')?;
        let mut fields = serde_json::Map::new();
        let mut columns = Columns::default();
        self.skip_whitespace();
        if self.peek()? == b'}' {
            self.at += 1;
        } else {
            loop {
                let key = self.plain_key()?;
                self.expect(b':')?;
                self.skip_whitespace();
                match key {
                    "latencies" => columns.latencies = self.numbers()?,
                    "ttfts" => columns.ttfts = self.numbers()?,
                    "input_lens" => columns.input_lens = self.numbers()?,
                    "output_lens" => columns.output_lens = self.numbers()?,
                    "start_times" => columns.start_times = self.numbers()?,
                    "itls" => columns.itls = self.gaps()?,
                    "errors" => columns.errors = self.errors()?,
                    "generated_texts" | "queue_times" => {
                        let value = self.value()?;
                        serde_json::from_slice::<IgnoredAny>(value).ok()?;
                    }
                    _ => {
                        let value: Json = serde_json::from_slice(self.value()?).ok()?;
                        fields.insert(key.to_string(), value);
                    }
                }
                self.skip_whitespace();
                match self.peek()? {
                    b',' => self.at += 1,
                    b'}' => {
                        self.at += 1;
                        break;
                    }
                    _ => return None,
                }
                self.skip_whitespace();
            }
        }
        Some(ResultObject {
            fields: Json::Object(fields),
            columns,
            is_object: true,
        })
    }

    /// A key without escapes.
    fn plain_key(&mut self) -> Option<&'a str> {
        self.expect(b'"')?;
        let start = self.at;
        let length = memchr::memchr2(b'"', b'\\', &self.bytes[start..])?;
        if self.bytes[start + length] != b'"' {
            return None;
        }
        self.at = start + length + 1;
        std::str::from_utf8(&self.bytes[start..start + length]).ok()
    }

    /// The text of the value at the cursor (found, not checked: the caller hands it to serde_json).
    fn value(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        match self.peek()? {
            b'"' => self.skip_string()?,
            b'[' | b'{' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => self.skip_string()?,
                        b'[' | b'{' => {
                            depth += 1;
                            self.at += 1;
                        }
                        b']' | b'}' => {
                            depth -= 1;
                            self.at += 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => self.at += 1,
                    }
                }
            }
            _ => {
                while let Some(byte) = self.peek() {
                    if matches!(byte, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    self.at += 1;
                }
            }
        }
        Some(&self.bytes[start..self.at])
    }

    /// Moves past the string that starts at the cursor.
    fn skip_string(&mut self) -> Option<()> {
        self.at += 1;
        loop {
            // `get`: an escape as the file's last byte leaves the cursor past the end (a truncated file; found by
            // the `formats` fuzz target).
            let offset = memchr::memchr2(b'"', b'\\', self.bytes.get(self.at..)?)?;
            self.at += offset;
            if self.bytes[self.at] == b'\\' {
                self.at += 2;
            } else {
                self.at += 1;
                return Some(());
            }
        }
    }

    /// A JSON number at the cursor, as serde_json reads it; `None` for anything else or a number out of range.
    fn number(&mut self) -> Option<f64> {
        let bytes = self.bytes;
        let start = self.at;
        let mut at = start;
        let digits_from = |mut at: usize| {
            while at < bytes.len() && bytes[at].is_ascii_digit() {
                at += 1;
            }
            at
        };
        if bytes.get(at) == Some(&b'-') {
            at += 1;
        }
        match bytes.get(at)? {
            b'0' => at += 1,
            b'1'..=b'9' => at = digits_from(at + 1),
            _ => return None,
        }
        if bytes.get(at) == Some(&b'.') {
            let end = digits_from(at + 1);
            if end == at + 1 {
                return None;
            }
            at = end;
        }
        if let Some(b'e' | b'E') = bytes.get(at) {
            at += 1;
            if let Some(b'+' | b'-') = bytes.get(at) {
                at += 1;
            }
            let end = digits_from(at);
            if end == at {
                return None;
            }
            at = end;
        }
        // A leading zero is followed by neither another digit (`01`) nor anything but `.`, `e` or the end.
        if bytes.get(at).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        self.at = at;
        let value: f64 = fast_float2::parse(&bytes[start..at]).ok()?;
        // serde_json refuses numbers beyond f64's range.
        value.is_finite().then_some(value)
    }

    /// An array of numbers, element by element with `each`; `None` unless every element is a number.
    fn array(&mut self, mut each: impl FnMut(&mut Scan<'a>) -> Option<()>) -> Option<()> {
        self.expect(b'[')?;
        self.skip_whitespace();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.skip_whitespace();
            each(self)?;
            self.skip_whitespace();
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn numbers(&mut self) -> Option<Column<Option<f64>>> {
        let mut values = Vec::new();
        self.array(|scan| {
            values.push(Some(scan.number()?));
            Some(())
        })?;
        Some(Column::Values(values))
    }

    /// Each request's inter-token gaps, in order.
    fn gaps(&mut self) -> Option<Column<Option<Vec<f64>>>> {
        let mut requests = Vec::new();
        self.array(|scan| {
            let mut gaps = Vec::new();
            scan.array(|scan| {
                gaps.push(scan.number()?);
                Some(())
            })?;
            requests.push(Some(gaps));
            Some(())
        })?;
        Some(Column::Values(requests))
    }

    /// Error texts: `""` is no error; any other string is decoded (and checked) by serde_json.
    fn errors(&mut self) -> Option<Column<Option<String>>> {
        let mut errors = Vec::new();
        self.array(|scan| {
            if scan.peek()? != b'"' {
                return None;
            }
            let start = scan.at;
            scan.skip_string()?;
            let text = &scan.bytes[start..scan.at];
            errors.push(if text == b"\"\"" {
                None
            } else {
                Some(serde_json::from_slice::<String>(text).ok()?)
            });
            Some(())
        })?;
        Some(Column::Values(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::json::documents;
    use crate::run::record::Request;

    /// A result's fields and requests.
    type Read = (Json, Vec<Request>);

    #[test]
    fn a_file_cut_after_an_escape_inside_a_string_is_declined_not_a_panic() {
        // The last byte is the backslash of an escape: the cursor steps past the end.
        for text in [
            r#"{"model": "a"#,
            r#"{"a": {"b": ""#,
            r#"{"x": [1, 2], "y": ""#,
        ] {
            assert!(single_result(text.as_bytes()).is_none(), "{text}");
        }
    }

    /// The fast reading and the general reader of the same text.
    fn both(text: &str) -> (Option<Read>, Read) {
        let read = |object: ResultObject| {
            let requests = match object.columns.arrays() {
                Ok(Some(arrays)) => arrays.requests(),
                _ => Vec::new(),
            };
            (object.fields, requests)
        };
        let fast = single_result(text.as_bytes()).map(|(_, object)| read(object));
        let general = documents::<ResultObject>(text.as_bytes())
            .into_iter()
            .next()
            .and_then(|(_, document)| document.ok())
            .map(read)
            .expect("valid JSON");
        (fast, general)
    }

    #[test]
    fn a_detailed_result_reads_the_same_as_through_serde_json() {
        let text = r#"{"model_id": "m", "num_prompts": 3, "nested": {"a": [1, {"b": "]"}]}, "label": null,
            "input_lens": [10, 11, 12], "output_lens": [3, 0, 2],
            "ttfts": [0.1, 0.0, 1e-3], "itls": [[0.011874916031956673, 2.5E-2], [], [-0, 0.30000000000000004]],
            "latencies": [0.2, 0.0, 12345678901234567890], "start_times": [1208438.401069494, 1208438.5, 1208439],
            "generated_texts": ["a \"quoted\" text", "", "x"], "queue_times": [0.0, 1.0, 2.0],
            "errors": ["", "Traceback (most recent call last):\n  \"quoted\" \u00e9", ""], "p99_e2el_ms": 1.5}"#;
        let (fast, general) = both(text);
        let fast = fast.expect("the fast reading applies");
        assert_eq!(fast, general);
        assert_eq!(fast.1.len(), 3);
        assert!(fast.1[1].error.as_deref().unwrap().contains("\"quoted\" é"));
        let bits = |requests: &[Request]| {
            requests
                .iter()
                .map(|request| request.wall_ms.map(f64::to_bits))
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&fast.1), bits(&general.1));
    }

    #[test]
    fn anything_unusual_is_left_to_the_general_reader() {
        for text in [
            r#"{"latencies": [1.0, "NaN"], "ttfts": [0.1, 0.2]}"#,
            r#"{"latencies": [1.0, null], "ttfts": [0.1, 0.2]}"#,
            r#"{"latencies": [1.0], "ttfts": [0.1]} {"latencies": [2.0], "ttfts": [0.2]}"#,
            r#"{"latencies": [01], "ttfts": [0.1]}"#,
            r#"{"latencies": [1.], "ttfts": [0.1]}"#,
            r#"{"latencies": [1e999], "ttfts": [0.1]}"#,
            r#"{"lat\u0065ncies": [1.0], "ttfts": [0.1]}"#,
            r#"{"latencies": [1.0], "ttfts": [0.1], "itls": [[0.1, true]]}"#,
            r#"{"latencies": [1.0], "ttfts": [0.1], "errors": [null]}"#,
            r#"{"latencies": [1.0], "ttfts": [0.1], "x": tru}"#,
            r#"[{"latencies": [1.0]}]"#,
        ] {
            assert!(single_result(text.as_bytes()).is_none(), "{text}");
        }
    }
}
