//! JSON text byte for byte as the benchmark tools write it: Python's `json.dumps` (with or without `indent`) and
//! pydantic's `model_dump_json`, with keys in insertion order.
//!
//! `serde_json` cannot do this here: its maps are sorted unless the workspace-wide `preserve_order` feature is on,
//! its float text differs from Python's `repr` outside 1e-4..1e16, and it refuses the bare `Infinity` that
//! `json.dumps(float("inf"))` writes (the SGLang `request_rate`). So the external writers build this small tree.

use crate::pyrepr::py_float;
use std::fmt::Write as _;

/// A JSON value whose objects keep their keys in insertion order, like a Python dict.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Obj),
}

/// An ordered JSON object.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Obj(Vec<(String, Json)>);

impl Obj {
    pub(super) fn new() -> Obj {
        Obj(Vec::new())
    }

    /// Appends a key (the caller knows it is new: this is a dict literal being written out in order).
    pub(super) fn put(&mut self, key: &str, value: impl Into<Json>) -> &mut Obj {
        self.0.push((key.to_string(), value.into()));
        self
    }

    /// Python's `d[key] = value`: an existing key keeps its position and takes the new value, a new key goes last.
    pub(super) fn set(&mut self, key: &str, value: impl Into<Json>) -> &mut Obj {
        let value = value.into();
        match self.0.iter_mut().find(|(existing, _)| existing == key) {
            Some(entry) => entry.1 = value,
            None => self.0.push((key.to_string(), value)),
        }
        self
    }

    /// Python's `del d[key]` when the key is there: the other keys keep their order.
    pub(super) fn remove(&mut self, key: &str) -> &mut Obj {
        self.0.retain(|(existing, _)| existing != key);
        self
    }

    /// The value of `key`, if present.
    pub(super) fn get(&self, key: &str) -> Option<&Json> {
        self.0
            .iter()
            .find(|(existing, _)| existing == key)
            .map(|(_, value)| value)
    }
}

impl From<Obj> for Json {
    fn from(value: Obj) -> Json {
        Json::Object(value)
    }
}

impl From<f64> for Json {
    fn from(value: f64) -> Json {
        Json::Float(value)
    }
}

impl From<i64> for Json {
    fn from(value: i64) -> Json {
        Json::Int(value)
    }
}

impl From<u32> for Json {
    fn from(value: u32) -> Json {
        Json::Int(i64::from(value))
    }
}

impl From<bool> for Json {
    fn from(value: bool) -> Json {
        Json::Bool(value)
    }
}

impl From<&str> for Json {
    fn from(value: &str) -> Json {
        Json::Str(value.to_string())
    }
}

impl From<String> for Json {
    fn from(value: String) -> Json {
        Json::Str(value)
    }
}

impl<T: Into<Json>> From<Option<T>> for Json {
    fn from(value: Option<T>) -> Json {
        value.map_or(Json::Null, Into::into)
    }
}

impl<T: Into<Json>> From<Vec<T>> for Json {
    fn from(value: Vec<T>) -> Json {
        Json::Array(value.into_iter().map(Into::into).collect())
    }
}

/// How a writer lays JSON out.
#[derive(Clone, Copy, Debug)]
pub(super) struct Style {
    /// `None`: one line; `Some(k)`: one item per line, nested `k` spaces deeper per level.
    pub indent: Option<usize>,
    /// Between items on one line (`json.dumps` uses `", "`; with an indent Python switches to `","`).
    pub item_separator: &'static str,
    pub key_separator: &'static str,
}

/// `json.dumps(value)`: one line, `", "` and `": "`.
pub(super) const PYTHON_LINE: Style = Style {
    indent: None,
    item_separator: ", ",
    key_separator: ": ",
};

/// `json.dump(value, f, indent=4)`.
pub(super) const PYTHON_INDENT_4: Style = Style {
    indent: Some(4),
    item_separator: ",",
    key_separator: ": ",
};

/// pydantic's `model_dump_json(indent=2)`.
pub(super) const PYDANTIC_INDENT_2: Style = Style {
    indent: Some(2),
    item_separator: ",",
    key_separator: ": ",
};

/// pydantic's `model_dump_json()`: no whitespace at all.
pub(super) const PYDANTIC_LINE: Style = Style {
    indent: None,
    item_separator: ",",
    key_separator: ":",
};

impl Json {
    /// The JSON text in `style` (no trailing newline).
    pub(super) fn to_text(&self, style: Style) -> String {
        let mut out = String::new();
        write_value(&mut out, self, style, 0);
        out
    }
}

fn newline(out: &mut String, style: Style, depth: usize) {
    if let Some(width) = style.indent {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', width * depth));
    }
}

fn write_value(out: &mut String, value: &Json, style: Style, depth: usize) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Json::Int(number) => {
            let _ = write!(out, "{number}");
        }
        Json::Float(number) => out.push_str(&float_text(*number)),
        Json::Str(text) => write_string(out, text),
        Json::Array(items) => {
            // Python writes an empty list as `[]` even when indenting.
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    out.push_str(style.item_separator);
                }
                newline(out, style, depth + 1);
                write_value(out, item, style, depth + 1);
            }
            newline(out, style, depth);
            out.push(']');
        }
        Json::Object(Obj(entries)) => {
            if entries.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (position, (key, item)) in entries.iter().enumerate() {
                if position > 0 {
                    out.push_str(style.item_separator);
                }
                newline(out, style, depth + 1);
                write_string(out, key);
                out.push_str(style.key_separator);
                write_value(out, item, style, depth + 1);
            }
            newline(out, style, depth);
            out.push('}');
        }
    }
}

/// `float.__repr__`, and the bare literals Python's encoder writes for the non-finite values.
fn float_text(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_string()
    } else if value.is_infinite() {
        if value > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
    } else {
        py_float(value)
    }
}

/// A string as Python's encoder writes it with `ensure_ascii=True`: everything outside printable ASCII escaped.
fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(character),
            _ => {
                let mut units = [0u16; 2];
                for unit in character.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Json {
        let mut inner = Obj::new();
        inner
            .put("b", vec![1.5, 0.00001])
            .put("e", Vec::<Json>::new());
        let mut outer = Obj::new();
        outer
            .put("rate", f64::INFINITY)
            .put("n", 4u32)
            .put("s", "a\"b\n\u{e9}")
            .put("inner", inner)
            .put("none", Json::Null);
        outer.into()
    }

    #[test]
    fn one_line_matches_python_json_dumps() {
        // json.dumps({"rate": float("inf"), "n": 4, "s": "a\"b\n\u00e9", "inner": {"b": [1.5, 1e-05], "e": []},
        //             "none": None})
        assert_eq!(
            sample().to_text(PYTHON_LINE),
            r#"{"rate": Infinity, "n": 4, "s": "a\"b\n\u00e9", "inner": {"b": [1.5, 1e-05], "e": []}, "none": null}"#
        );
    }

    #[test]
    fn indented_matches_python_json_dumps_with_indent() {
        let expected = "{\n    \"rate\": Infinity,\n    \"n\": 4,\n    \"s\": \"a\\\"b\\n\\u00e9\",\n    \"inner\": {\n        \
                        \"b\": [\n            1.5,\n            1e-05\n        ],\n        \"e\": []\n    },\n    \
                        \"none\": null\n}";
        assert_eq!(sample().to_text(PYTHON_INDENT_4), expected);
    }

    #[test]
    fn set_keeps_the_position_of_an_existing_key() {
        let mut object = Obj::new();
        object.put("a", 1u32).put("b", 2u32);
        object.set("a", 3u32).set("c", 4u32);
        assert_eq!(
            Json::from(object).to_text(PYDANTIC_LINE),
            r#"{"a":3,"b":2,"c":4}"#
        );
    }
}
