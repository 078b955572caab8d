//! The text side of a query: percent-encoding, comma-separated lists, and the parameters of one query string
//! while the declared fields take them, each value a field cannot use kept with the reason.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A query parameter that could not be used, and why. The app lists these in a notice; an endpoint refuses the
/// request with the first one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoredParameter {
    /// The parameter's name as given.
    pub name: String,
    /// The value that could not be used (decoded; one item of a list).
    pub value: String,
    /// Why, and what it takes.
    pub reason: String,
}

impl fmt::Display for IgnoredParameter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}={}`: {}", self.name, self.value, self.reason)
    }
}

/// Percent-encodes a value for a query string (this app's links and its API requests), keeping the characters
/// that read well in a link. `keep_commas` is false for list items, whose commas would otherwise split them.
pub fn encode(text: &str, keep_commas: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'~'
            | b'/'
            | b'='
            | b'|' => out.push(byte as char),
            b',' if keep_commas => out.push(','),
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

/// The inverse of [`encode`] (and of browsers' form encoding): `+` is a space, `%XX` a byte; a `%` that starts
/// no escape stays.
pub(crate) fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'+' => out.push(b' '),
            b'%' => {
                let byte = bytes
                    .get(index + 1..index + 3)
                    .and_then(|hex| std::str::from_utf8(hex).ok())
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok());
                match byte {
                    Some(byte) => {
                        out.push(byte);
                        index += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The items of a list value (`vllm,sglang`): split before decoding, so an encoded comma stays in its item;
/// items are trimmed and empty ones dropped.
pub(crate) fn list_items(raw: &str) -> Vec<String> {
    raw.split(',')
        .map(|item| decode(item).trim().to_string())
        .filter(|item| !item.is_empty())
        .collect()
}

/// A list value from its items, each encoded so that its commas stay inside it.
pub(crate) fn list_value<S: AsRef<str>>(items: &[S]) -> String {
    items
        .iter()
        .map(|item| encode(item.as_ref(), false))
        .collect::<Vec<_>>()
        .join(",")
}

/// The parameters of one query string while fields take them.
pub(crate) struct Params {
    /// `(name, raw value)` in query order; taken ones are removed.
    pub(crate) pairs: Vec<(String, String)>,
    pub(crate) ignored: Vec<IgnoredParameter>,
}

impl Params {
    /// The parameters of a query string (with or without `?`), names decoded and values as written.
    pub(crate) fn of_query(query: &str) -> Params {
        let query = query.strip_prefix('?').unwrap_or(query);
        Params {
            pairs: query
                .split('&')
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                    (decode(name), value.to_string())
                })
                .collect(),
            ignored: Vec::new(),
        }
    }

    /// Parameters whose values are already decoded (a caller that holds them as name/value pairs): encoded again
    /// so that fields read them as from a query string, commas still separating list items.
    pub(crate) fn of_pairs(pairs: &[(String, String)]) -> Params {
        Params {
            pairs: pairs
                .iter()
                .map(|(name, value)| (name.clone(), encode(value, true)))
                .collect(),
            ignored: Vec::new(),
        }
    }

    /// Every raw value given for `name`, in order.
    pub(crate) fn take_all(&mut self, name: &str) -> Vec<String> {
        let mut taken = Vec::new();
        self.pairs.retain(|(pair_name, value)| {
            if pair_name == name {
                taken.push(value.clone());
                false
            } else {
                true
            }
        });
        taken
    }

    /// The decoded value of a parameter that takes one value: the last one given (earlier ones are reported).
    pub(crate) fn take(&mut self, name: &str) -> Option<String> {
        let mut values = self.take_all(name);
        let last = values.pop()?;
        for earlier in values {
            self.ignore(
                name,
                &decode(&earlier),
                "given more than once; the last value is used",
            );
        }
        Some(decode(&last))
    }

    /// Reports a value that cannot be used.
    pub(crate) fn ignore(&mut self, name: &str, value: &str, reason: impl Into<String>) {
        self.ignored.push(IgnoredParameter {
            name: name.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        });
    }

    /// Reports every parameter no field took as unknown, and returns what was ignored.
    pub(crate) fn finish(mut self) -> Vec<IgnoredParameter> {
        for (name, value) in std::mem::take(&mut self.pairs) {
            self.ignore(&name, &decode(&value), "unknown parameter");
        }
        self.ignored
    }
}

/// One or more query parameters of a target (a [`crate::view_state::ViewState`], a [`super::Query`]): how they
/// are written from it and read into it.
pub(crate) struct Field<T> {
    /// Writes `(name, encoded value)` pairs, only for values that differ from the default.
    pub(crate) print: fn(&T, &mut Vec<(&'static str, String)>),
    /// Takes its parameters and sets the target, reporting values it cannot use.
    pub(crate) parse: fn(&mut T, &mut Params),
}

/// Writes `fields` of `target` as a query string (without `?`), in the fields' order.
pub(crate) fn print<T>(fields: &[Field<T>], target: &T) -> String {
    let mut pairs = Vec::new();
    for field in fields {
        (field.print)(target, &mut pairs);
    }
    pairs
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// Reads `params` into `target` through every field, in the fields' order.
pub(crate) fn parse<T>(fields: &[Field<T>], target: &mut T, params: &mut Params) {
    for field in fields {
        (field.parse)(target, params);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_and_lists_keep_their_commas() {
        let text = "meta-llama/Llama 3,1 & 100%+";
        assert_eq!(decode(&encode(text, true)), text);
        assert_eq!(list_items(&list_value(&[text, "b"])), [text, "b"]);
        let params = Params::of_pairs(&[("model".into(), "a b,c".into())]);
        assert_eq!(list_items(&params.pairs[0].1), ["a b", "c"]);
    }
}
