//! YAML documents read as JSON values, so that a tool's YAML and JSON files are looked into the same way.

use serde_json::Value as Json;

/// A YAML document that could not be read, with the 1-based line the parser names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct YamlError {
    pub line: Option<u64>,
    pub message: String,
}

/// Reads one YAML document into JSON values. Keys that are not strings (YAML allows numbers and booleans as keys)
/// become their text; `.inf`, `-.inf` and `.nan`, which JSON numbers cannot hold, become the texts `inf`, `-inf`
/// and `NaN` that [`super::json::number`] reads back.
pub(crate) fn parse(bytes: &[u8]) -> Result<Json, YamlError> {
    let document: serde_yaml_ng::Value =
        serde_yaml_ng::from_slice(bytes).map_err(|error| YamlError {
            line: error.location().map(|location| location.line() as u64),
            message: error.to_string(),
        })?;
    Ok(to_json(document))
}

fn to_json(value: serde_yaml_ng::Value) -> Json {
    use serde_yaml_ng::Value as Yaml;
    match value {
        Yaml::Null => Json::Null,
        Yaml::Bool(flag) => Json::Bool(flag),
        Yaml::Number(number) => {
            if let Some(integer) = number.as_i64() {
                Json::from(integer)
            } else if let Some(integer) = number.as_u64() {
                Json::from(integer)
            } else {
                let float = number.as_f64().unwrap_or(f64::NAN);
                serde_json::Number::from_f64(float).map_or_else(
                    || Json::String(non_finite_text(float).to_string()),
                    Json::Number,
                )
            }
        }
        Yaml::String(text) => Json::String(text),
        Yaml::Sequence(items) => Json::Array(items.into_iter().map(to_json).collect()),
        Yaml::Mapping(entries) => Json::Object(
            entries
                .into_iter()
                .filter_map(|(key, value)| Some((key_text(to_json(key))?, to_json(value))))
                .collect(),
        ),
        Yaml::Tagged(tagged) => to_json(tagged.value),
    }
}

fn non_finite_text(float: f64) -> &'static str {
    if float == f64::INFINITY {
        "inf"
    } else if float == f64::NEG_INFINITY {
        "-inf"
    } else {
        "NaN"
    }
}

/// A mapping key as text (`None` for null, empty text, sequences and mappings).
fn key_text(value: Json) -> Option<String> {
    let text = match value {
        Json::String(text) => text.trim().to_string(),
        Json::Number(number) => number.to_string(),
        Json::Bool(flag) => flag.to_string(),
        Json::Null | Json::Array(_) | Json::Object(_) => return None,
    };
    (!text.is_empty()).then_some(text)
}

/// The top-level `key: value` lines of a YAML head (possibly cut mid-document), in order: keys at the start of a
/// line, values as written on the same line with quotes removed (empty for a block that follows). Enough to
/// recognise a document by its top-level keys without parsing a head that may end mid-value.
pub(crate) fn top_level_keys(head: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(head);
    text.lines()
        .filter(|line| {
            line.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '"' || c == '\'')
        })
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            let key = key.trim().trim_matches(['"', '\'']);
            let value = value.split(" #").next().unwrap_or_default().trim();
            Some((key.to_string(), value.trim_matches(['"', '\'']).to_string()))
        })
        .collect()
}

/// Whether a YAML head has a line `key:` indented under some top-level key (`  request_performance:`).
pub(crate) fn has_nested_key(head: &[u8], key: &str) -> bool {
    String::from_utf8_lossy(head).lines().any(|line| {
        line.starts_with(' ')
            && line
                .trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.starts_with(':'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infinities_become_texts_the_number_reader_knows() {
        let document = parse(b"a: .inf\nb: -.inf\nc: 2\nd: 0.5\n").expect("yaml");
        assert_eq!(document["a"], "inf");
        assert_eq!(document["b"], "-inf");
        assert_eq!(
            super::super::json::number(&document["a"]),
            Some(f64::INFINITY)
        );
        assert_eq!(document["c"], 2);
        assert_eq!(document["d"], 0.5);
    }

    #[test]
    fn a_broken_document_names_its_line() {
        let error = parse(b"a: 1\nb: \"open\n").expect_err("unterminated");
        assert!(error.line.is_some(), "{error:?}");
    }

    #[test]
    fn top_level_keys_are_read_from_a_cut_head() {
        let head =
            b"results:\n  request_performance:\n    aggregate:\nversion: '0.2'\nrun:\n  eid: x";
        let keys = top_level_keys(head);
        assert_eq!(
            keys,
            [
                ("results".to_string(), String::new()),
                ("version".to_string(), "0.2".to_string()),
                ("run".to_string(), String::new())
            ]
        );
        assert!(has_nested_key(head, "request_performance"));
        assert!(!has_nested_key(head, "results"));
    }
}
