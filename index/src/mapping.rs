//! `cellscope.toml` at the data root: how files of other benchmark tools map to cell-key dimensions.
//!
//! Those tools rarely record the serving engine, the workload or the repetition, so a user can say it once per
//! path glob, with literal values or `{field}` templates read from each run record. Every value set here is
//! marked *inferred* on the cell, with the entry that set it, because it was not read from the file itself.

pub(crate) mod table;

use cellscope_model::api::Warning;
use serde::Deserialize;
use serde_json::Value as Json;
use table::{RawTable, TableEntry};

/// The mapping's file name, at the data root.
pub(crate) const FILE: &str = "cellscope.toml";

/// The largest `cellscope.toml` read: a hand-written mapping is a few kilobytes, and parsing one costs far more
/// memory and time than its size.
pub(crate) const MAX_FILE_BYTES: u64 = 256 * 1024;

/// The text of `cellscope.toml` at the root: `None` when there is none, and also, with a warning naming it, when
/// it is larger than [`MAX_FILE_BYTES`], not a regular file, or unreadable (no mapping is then applied).
pub(crate) fn read_text(
    storage: &dyn super::storage::Storage,
    warnings: &mut Vec<Warning>,
) -> Option<String> {
    let too_large = |bytes: u64| {
        Warning::error(
            "file_too_large",
            format!(
                "the mapping is {bytes} bytes, more than the {MAX_FILE_BYTES} read; no mapping is applied"
            ),
        )
        .file(FILE)
    };
    match storage.stat(FILE) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
        Ok(meta) if meta.bytes > MAX_FILE_BYTES => {
            warnings.push(too_large(meta.bytes));
            return None;
        }
        _ => {}
    }
    match storage.read(FILE) {
        Ok(bytes) if bytes.len() as u64 > MAX_FILE_BYTES => {
            warnings.push(too_large(bytes.len() as u64));
            None
        }
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => {
            let warning = super::storage::unreadable_warning(&error, FILE);
            warnings.push(Warning {
                message: format!("{}; no mapping is applied", warning.message),
                ..warning
            });
            None
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    map: Vec<RawEntry>,
    #[serde(default)]
    table: Vec<RawTable>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    glob: String,
    run: Option<String>,
    suite: Option<String>,
    phase: Option<String>,
    backend: Option<String>,
    model: Option<String>,
    workload: Option<String>,
    n: Option<String>,
    /// An offered request rate in req/s (`inf` allowed), for rate-driven runs; `n` wins when both are set.
    rate: Option<String>,
    rep: Option<String>,
    /// Deployment parameters (`config.tp = 4`), each a literal or a `{field}` template.
    #[serde(default)]
    config: std::collections::BTreeMap<String, ConfigValue>,
}

/// A configuration value as TOML writes it: text (a template allowed), a number or a boolean.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ConfigValue {
    Text(String),
    Integer(i64),
    Float(f64),
    Flag(bool),
}

impl ConfigValue {
    fn text(&self) -> String {
        match self {
            ConfigValue::Text(text) => text.clone(),
            ConfigValue::Integer(number) => number.to_string(),
            ConfigValue::Float(number) => number.to_string(),
            ConfigValue::Flag(flag) => flag.to_string(),
        }
    }
}

/// One `[[map]]` entry.
#[derive(Debug, Clone)]
pub(crate) struct MapEntry {
    /// 1-based position in the file, for the rule text.
    pub number: usize,
    pub glob_text: String,
    glob: globset::GlobMatcher,
    /// `(dimension, template)` for every dimension the entry sets.
    pub values: Vec<(&'static str, String)>,
    /// `(canonical parameter name, template)` for every deployment parameter the entry sets.
    pub config: Vec<(String, String)>,
}

/// The parsed `cellscope.toml` (empty when the file is absent).
#[derive(Debug, Clone, Default)]
pub(crate) struct Mapping {
    pub entries: Vec<MapEntry>,
    /// `[[table]]` entries: how generic long tables are read.
    pub tables: Vec<TableEntry>,
}

/// What a file offers to templates: the run record's fields and the file's place in the tree.
pub(crate) struct TemplateContext<'a> {
    pub path: &'a str,
    pub record: &'a Json,
}

/// A mapped value and the rule text naming the entry that set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mapped {
    pub value: String,
    pub rule: String,
}

impl Mapping {
    /// Reads `cellscope.toml`; a file that cannot be used is reported (file and line) and ignored as a whole,
    /// because applying half of a mapping would silently give cells the wrong keys.
    pub(crate) fn parse(text: &str, file: &str, warnings: &mut Vec<Warning>) -> Mapping {
        let raw: RawFile = match toml::from_str(text) {
            Ok(raw) => raw,
            Err(error) => {
                let line = error.span().map(|span| {
                    text[..span.start.min(text.len())].matches('\n').count() as u64 + 1
                });
                warnings.push(
                    Warning::error(
                        "invalid_mapping",
                        format!(
                            "cellscope.toml cannot be used: {}; no mapping is applied",
                            error.message()
                        ),
                    )
                    .file(file)
                    .at_line(line),
                );
                return Mapping::default();
            }
        };
        let mut entries = Vec::new();
        for (index, entry) in raw.map.into_iter().enumerate() {
            let glob = match globset::GlobBuilder::new(&entry.glob)
                .literal_separator(true)
                .build()
            {
                Ok(glob) => glob.compile_matcher(),
                Err(error) => {
                    warnings.push(
                        Warning::error(
                            "invalid_mapping",
                            format!(
                                "[[map]] entry {} has an invalid glob `{}`: {error}; the entry is ignored",
                                index + 1,
                                entry.glob
                            ),
                        )
                        .file(file),
                    );
                    continue;
                }
            };
            let values = [
                ("run", entry.run),
                ("suite", entry.suite),
                ("phase", entry.phase),
                ("backend", entry.backend),
                ("model", entry.model),
                ("workload", entry.workload),
                ("n", entry.n),
                ("rate", entry.rate),
                ("rep", entry.rep),
            ]
            .into_iter()
            .filter_map(|(dimension, value)| value.map(|value| (dimension, value)))
            .collect();
            let config = config_templates(&entry.config, index + 1, file, warnings);
            entries.push(MapEntry {
                number: index + 1,
                glob_text: entry.glob,
                glob,
                values,
                config,
            });
        }
        let mut tables = Vec::new();
        for (index, spec) in raw.table.into_iter().enumerate() {
            match globset::GlobBuilder::new(&spec.glob)
                .literal_separator(true)
                .build()
            {
                Ok(glob) => tables.push(TableEntry {
                    number: index + 1,
                    glob_text: spec.glob.clone(),
                    glob: glob.compile_matcher(),
                    spec,
                }),
                Err(error) => warnings.push(
                    Warning::error(
                        "invalid_mapping",
                        format!(
                            "[[table]] entry {} has an invalid glob `{}`: {error}; the entry is ignored",
                            index + 1,
                            spec.glob
                        ),
                    )
                    .file(file),
                ),
            }
        }
        Mapping { entries, tables }
    }

    /// `cellscope.toml` at the root of `storage`, read quietly (the index reports its problems once): for
    /// reading one cell's rows back the way they were indexed.
    pub(crate) fn load(storage: &dyn super::storage::Storage) -> Mapping {
        read_text(storage, &mut Vec::new())
            .map(|text| Mapping::parse(&text, FILE, &mut Vec::new()))
            .unwrap_or_default()
    }

    /// The `[[table]]` entry for the file at `path` (relative to the root): the last one whose glob matches.
    pub(crate) fn table_for(&self, path: &str) -> Option<&TableEntry> {
        self.tables
            .iter()
            .rev()
            .find(|entry| entry.glob.is_match(path))
    }

    /// The value `cellscope.toml` gives `dimension` for a record of the file at `context.path` (the last
    /// matching entry that sets it), or `None`. A template naming a field the record lacks gives `None` with the
    /// reason, so the caller falls back to the default rule and says why.
    pub(crate) fn value(
        &self,
        dimension: &str,
        context: &TemplateContext<'_>,
    ) -> Option<Result<Mapped, String>> {
        let entry = self.entries.iter().rev().find(|entry| {
            entry.glob.is_match(context.path)
                && entry.values.iter().any(|(name, _)| *name == dimension)
        })?;
        let (_, template) = entry.values.iter().find(|(name, _)| *name == dimension)?;
        let rule = format!(
            "cellscope.toml [[map]] #{} (glob `{}`): {dimension} = \"{template}\"",
            entry.number, entry.glob_text
        );
        Some(match expand(template, context) {
            Ok(value) => Ok(Mapped { value, rule }),
            Err(missing) => Err(format!(
                "{rule} names `{missing}`, which {} lacks",
                context.path
            )),
        })
    }
}

/// The deployment parameters of `[[map]]` entry `number`, by canonical name; a name that is the load or the
/// bench client's bookkeeping is reported and left out.
fn config_templates(
    config: &std::collections::BTreeMap<String, ConfigValue>,
    number: usize,
    file: &str,
    warnings: &mut Vec<Warning>,
) -> Vec<(String, String)> {
    let mut templates = Vec::new();
    for (name, value) in config {
        if cellscope_model::config::is_configuration(name) {
            templates.push((cellscope_model::config::canonical_name(name), value.text()));
        } else {
            warnings.push(
                Warning::error(
                    "invalid_mapping",
                    format!(
                        "[[map]] entry {number} sets config.{name}, which is not configuration (the load or the \
                         bench client's own setting; set n or rate for the load); it is ignored"
                    ),
                )
                .file(file),
            );
        }
    }
    templates
}

impl Mapping {
    /// The deployment parameters `cellscope.toml` gives a record of the file at `context.path`: for each
    /// parameter, the last matching entry that sets it, expanded, with the rule naming that entry; a template
    /// naming a field the record lacks gives the reason instead.
    pub(crate) fn config(
        &self,
        context: &TemplateContext<'_>,
    ) -> Vec<(String, Result<Mapped, String>)> {
        let mut found: Vec<(String, Result<Mapped, String>)> = Vec::new();
        for entry in self
            .entries
            .iter()
            .filter(|entry| entry.glob.is_match(context.path))
        {
            for (name, template) in &entry.config {
                let rule = format!(
                    "cellscope.toml [[map]] #{} (glob `{}`): config.{name} = \"{template}\"",
                    entry.number, entry.glob_text
                );
                let value = match expand(template, context) {
                    Ok(value) => Ok(Mapped { value, rule }),
                    Err(missing) => Err(format!(
                        "{rule} names `{missing}`, which {} lacks",
                        context.path
                    )),
                };
                found.retain(|(known, _)| known != name);
                found.push((name.clone(), value));
            }
        }
        found
    }
}

/// Replaces `{field}` (a dotted path into the record), `{dir}`, `{parent}` and `{file}` in `template`. `Err`
/// names the first placeholder without a value.
pub(crate) fn expand(template: &str, context: &TemplateContext<'_>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            out.push_str(&rest[open..]);
            return Ok(out);
        };
        let name = &rest[open + 1..open + close];
        let value = placeholder(name, context).ok_or_else(|| name.to_string())?;
        out.push_str(&value);
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn placeholder(name: &str, context: &TemplateContext<'_>) -> Option<String> {
    let mut components = context.path.rsplit('/');
    let file = components.next().unwrap_or_default();
    match name {
        "file" => return Some(file.split('.').next().unwrap_or(file).to_string()),
        "dir" => return components.next().map(str::to_string),
        "parent" => return components.nth(1).map(str::to_string),
        _ => {}
    }
    let mut value = context.record;
    for part in name.split('.') {
        value = value.get(part)?;
    }
    match value {
        Json::String(text) => Some(text.clone()),
        Json::Number(number) => Some(number.to_string()),
        Json::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (Mapping, Vec<Warning>) {
        let mut warnings = Vec::new();
        (
            Mapping::parse(text, "cellscope.toml", &mut warnings),
            warnings,
        )
    }

    #[test]
    fn later_entries_win_and_templates_read_record_fields() {
        let (mapping, warnings) = parse(
            r#"
[[map]]
glob = "external/**"
backend = "vllm"
workload = "{workload}"

[[map]]
glob = "external/sglang/*.jsonl"
backend = "sglang"
model = "{server_info.model_path}"
rep = "{dir}-{file}"
"#,
        );
        assert!(warnings.is_empty());
        let record =
            serde_json::json!({"workload": "chat", "server_info": {"model_path": "/m/llama"}});
        let vllm = TemplateContext {
            path: "external/vllm/run=0.json",
            record: &record,
        };
        let sglang = TemplateContext {
            path: "external/sglang/out.jsonl",
            record: &record,
        };
        assert_eq!(
            mapping.value("backend", &vllm).unwrap().unwrap().value,
            "vllm"
        );
        let mapped = mapping.value("backend", &sglang).unwrap().unwrap();
        assert_eq!(mapped.value, "sglang");
        assert!(mapped.rule.starts_with("cellscope.toml [[map]] #2"));
        assert_eq!(
            mapping.value("model", &sglang).unwrap().unwrap().value,
            "/m/llama"
        );
        assert_eq!(
            mapping.value("workload", &sglang).unwrap().unwrap().value,
            "chat"
        );
        assert_eq!(
            mapping.value("rep", &sglang).unwrap().unwrap().value,
            "sglang-out"
        );
        assert!(mapping.value("phase", &sglang).is_none());
        // `*` does not cross a `/`.
        let nested = TemplateContext {
            path: "external/sglang/deep/out.jsonl",
            record: &record,
        };
        assert_eq!(
            mapping.value("backend", &nested).unwrap().unwrap().value,
            "vllm"
        );
    }

    #[test]
    fn a_missing_field_is_named_and_a_bad_file_is_reported() {
        let (mapping, _) = parse("[[map]]\nglob = \"**\"\nmodel = \"{model_id}\"\n");
        let record = serde_json::json!({});
        let context = TemplateContext {
            path: "a.json",
            record: &record,
        };
        let error = mapping.value("model", &context).unwrap().unwrap_err();
        assert!(error.contains("`model_id`"), "{error}");
        let (empty, warnings) = parse("[[map]]\nglob = \"**\"\nengine = \"vllm\"\n");
        assert!(empty.entries.is_empty());
        assert_eq!(warnings[0].kind, "invalid_mapping");
        assert_eq!(warnings[0].line, Some(3));
    }

    #[test]
    fn table_entries_name_columns_or_constants_and_unknown_keys_are_reported() {
        let (mapping, warnings) = parse(
            r#"
[[table]]
glob = "tr131/*.csv"
grain = "cell"
run = { value = "20260226_174224" }
n = { value = 1 }
model = "model_name"
wall_unit = "s"
keep = ["trace_mb"]
"#,
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        let entry = mapping.table_for("tr131/runs.csv").expect("entry");
        assert_eq!(entry.spec.grain, table::Grain::Cell);
        assert_eq!(
            entry
                .spec
                .n
                .as_ref()
                .and_then(table::Source::constant)
                .as_deref(),
            Some("1")
        );
        assert_eq!(
            entry.spec.model,
            Some(table::Source::Column("model_name".into()))
        );
        assert_eq!(entry.spec.wall_unit, Some(table::Unit::S));
        assert!(mapping.table_for("other/runs.csv").is_none());
        let (empty, warnings) = parse("[[table]]\nglob = \"**\"\nlatency = \"x\"\n");
        assert!(empty.tables.is_empty());
        assert_eq!(warnings[0].kind, "invalid_mapping");
    }
}
