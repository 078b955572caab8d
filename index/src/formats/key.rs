//! The cell key of another tool's record: `cellscope.toml` first, then what the file states, then the default
//! rules. Every value that was not read from the file is returned with the rule that produced it, so the audit
//! and `cellscope index --explain` can show it.

use super::super::mapping::{Mapping, TemplateContext};
use super::{How, Part, RunRecord};
use cellscope_model::api::Warning;
use cellscope_model::key::CellCoordinates;
use cellscope_model::origin::InferredPart;
use std::collections::{BTreeMap, BTreeSet};

/// Engine names recognised in a path (a component or a `-`/`_`/`.`-separated part of one).
const ENGINES: [&str; 11] = [
    "vllm", "sglang", "tgi", "trtllm", "tensorrt", "llamacpp", "ollama", "lmdeploy", "dynamo",
    "mlc", "exllama",
];

/// A record with its cell coordinates.
pub struct KeyedRecord {
    pub file: String,
    pub record: RunRecord,
    pub coordinates: CellCoordinates,
    pub inferred: Vec<InferredPart>,
    /// Dimension → the field it was read from, for `--explain`.
    pub read: Vec<(String, String)>,
}

/// The text `--explain` prints for each dimension of a keyed record: `(dimension, value, how)`.
pub fn explain_rules(keyed: &KeyedRecord) -> Vec<(String, String, String)> {
    let coordinates = &keyed.coordinates;
    let values = [
        ("suite", coordinates.suite.clone()),
        ("phase", coordinates.phase.clone()),
        ("backend", coordinates.backend.clone()),
        ("model", coordinates.model.clone()),
        ("workload", coordinates.workload.clone()),
        ("n", coordinates.n.to_string()),
        ("rep", coordinates.rep.to_string()),
    ];
    values
        .into_iter()
        .map(|(dimension, value)| {
            let how = keyed
                .inferred
                .iter()
                .find(|part| part.dimension == dimension)
                .map(|part| format!("inferred: {}", part.rule))
                .or_else(|| {
                    keyed
                        .read
                        .iter()
                        .find(|(name, _)| name == dimension)
                        .map(|(_, field)| format!("read from {field}"))
                })
                .unwrap_or_default();
            (dimension.to_string(), value, how)
        })
        .collect()
}

/// The last component of a model path or repository id (`meta-llama/Llama-3.1-8B` → `Llama-3.1-8B`), so the
/// same model served from a local directory and from a hub id line up.
pub(super) fn model_name(raw: &str) -> String {
    let trimmed = raw.trim().trim_end_matches('/');
    trimmed
        .rsplit('/')
        .next()
        .filter(|name| !name.is_empty())
        .unwrap_or(trimmed)
        .to_string()
}

/// An engine name in the path, if exactly one kind appears.
fn engine_in_path(path: &str) -> Option<String> {
    let mut found = BTreeSet::new();
    for component in path.split('/') {
        let lower = component.to_ascii_lowercase();
        for part in lower.split(['-', '_', '.', '=']) {
            if let Some(engine) = ENGINES.iter().find(|engine| **engine == part) {
                found.insert((*engine).to_string());
            }
        }
    }
    (found.len() == 1).then(|| found.into_iter().next().unwrap_or_default())
}

/// A load level in the path: `concurrency8`, `concurrency_8`, `max_concurrency=8`, `c8`, `n8` as a component,
/// or `-concurrency8` inside a component (the AIPerf/GenAI-Perf artifact name). The innermost wins.
fn n_in_path(path: &str) -> Option<(u32, String)> {
    let components: Vec<&str> = path.split('/').collect();
    for component in components.iter().rev().skip(1) {
        let lower = component.to_ascii_lowercase();
        for prefix in ["max_concurrency=", "concurrency_", "concurrency", "c", "n"] {
            if let Some(rest) = lower.strip_prefix(prefix)
                && let Ok(n) = rest.parse::<u32>()
            {
                return Some((n, format!("the directory name `{component}`")));
            }
        }
        for marker in ["-concurrency", "_concurrency", "max_concurrency="] {
            if let Some(position) = lower.rfind(marker) {
                let digits: String = lower[position + marker.len()..]
                    .trim_start_matches(['_', '='])
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if let Ok(n) = digits.parse::<u32>() {
                    return Some((n, format!("the directory name `{component}`")));
                }
            }
        }
    }
    None
}

/// Resolves the key of every record of one run. Records without a concurrency are left out with a warning;
/// `rep`s not stated are numbered in file and record order among records with the same other key.
pub(super) fn resolve(
    format: &str,
    mapping: &Mapping,
    run_id: &str,
    records: Vec<(String, RunRecord)>,
    warnings: &mut Vec<Warning>,
) -> Vec<KeyedRecord> {
    let mut keyed = Vec::new();
    let mut next_rep: BTreeMap<(String, String, String, String, String, u32), u32> =
        BTreeMap::new();
    let mut seen: BTreeSet<CellCoordinates> = BTreeSet::new();
    for (file, record) in records {
        let context = TemplateContext {
            path: &file,
            record: &record.fields,
        };
        let mut inferred = Vec::new();
        let mut read = Vec::new();
        let mut take = |dimension: &str,
                        stated: Option<Part>,
                        default: &dyn Fn() -> Option<Part>,
                        warnings: &mut Vec<Warning>|
         -> Option<String> {
            let mapped = match mapping.value(dimension, &context) {
                Some(Ok(mapped)) => Part::inferred(mapped.value, mapped.rule),
                Some(Err(reason)) => {
                    warnings.push(
                        Warning::warn(
                            "mapping_field_missing",
                            format!("{reason}; the default rule for {dimension} is used instead"),
                        )
                        .run(run_id)
                        .file(&file)
                        .at_line(record.line),
                    );
                    None
                }
                None => None,
            };
            let part = mapped.or(stated).or_else(default)?;
            match part.how {
                How::Read(field) => read.push((dimension.to_string(), field)),
                How::Inferred(rule) => inferred.push(InferredPart {
                    dimension: dimension.to_string(),
                    value: part.value.clone(),
                    rule,
                }),
            }
            Some(part.value)
        };
        let suite = take(
            "suite",
            record.key.suite.clone(),
            &|| Part::inferred(format, "the format's name (the file records no suite)"),
            warnings,
        )
        .unwrap_or_default();
        let phase = take(
            "phase",
            record.key.phase.clone(),
            &|| Part::inferred("sweep", "`sweep` (the file records no phase)"),
            warnings,
        )
        .unwrap_or_default();
        let backend = take(
            "backend",
            record.key.backend.clone(),
            &|| match engine_in_path(&file) {
                Some(engine) => Part::inferred(
                    engine,
                    "an engine name in the file's path (the tool's `backend` field is the request protocol)",
                ),
                None => Part::inferred(
                    "unknown",
                    "no engine is recorded in the file or its path; set backend in cellscope.toml",
                ),
            },
            warnings,
        )
        .unwrap_or_default();
        let model = take(
            "model",
            record.key.model.clone(),
            &|| {
                Part::inferred(
                    "unknown",
                    "the file records no model; set model in cellscope.toml",
                )
            },
            warnings,
        )
        .unwrap_or_default();
        let workload = take(
            "workload",
            record.key.workload.clone(),
            // Measured token means differ from cell to cell, so they would split one sweep into as many
            // workloads as it has cells; one shared value keeps the sweep's curve together.
            &|| {
                Part::inferred(
                    "unknown",
                    "the file records no workload, dataset or configured lengths; set workload in cellscope.toml",
                )
            },
            warnings,
        )
        .unwrap_or_default();
        let n_text = take(
            "n",
            record.key.n.clone(),
            &|| {
                n_in_path(&file).and_then(|(n, place)| {
                    Part::inferred(n.to_string(), format!("the load level in {place}"))
                })
            },
            warnings,
        );
        let Some(n) = n_text
            .as_deref()
            .and_then(|text| text.trim().parse::<u32>().ok())
        else {
            warnings.push(
                Warning::warn(
                    "no_concurrency",
                    match &n_text {
                        Some(text) => format!(
                            "record {}: the concurrency `{text}` is not a whole number; the record is left out",
                            record.record
                        ),
                        None => format!(
                            "record {}: no concurrency is recorded (a rate-driven run?) and none is in the path; \
                             set n in cellscope.toml to index it",
                            record.record
                        ),
                    },
                )
                .run(run_id)
                .file(&file)
                .at_line(record.line),
            );
            continue;
        };
        let order_key = (
            suite.clone(),
            phase.clone(),
            backend.clone(),
            model.clone(),
            workload.clone(),
            n,
        );
        let order = *next_rep.get(&order_key).unwrap_or(&0);
        let rep_text = take(
            "rep",
            record.key.rep.clone(),
            &|| {
                Part::inferred(
                    order.to_string(),
                    "the order of records with the same other key (file, then record order)",
                )
            },
            warnings,
        );
        let Some(rep) = rep_text
            .as_deref()
            .and_then(|text| text.trim().parse::<u32>().ok())
        else {
            warnings.push(
                Warning::warn(
                    "bad_rep",
                    format!(
                        "record {}: the repetition `{}` is not a whole number; the record is left out",
                        record.record,
                        rep_text.unwrap_or_default()
                    ),
                )
                .run(run_id)
                .file(&file)
                .at_line(record.line),
            );
            continue;
        };
        next_rep.insert(order_key, order + 1);
        let coordinates = CellCoordinates {
            suite,
            phase,
            backend,
            model,
            workload,
            n,
            rep,
        };
        if !seen.insert(coordinates.clone()) {
            warnings.push(
                Warning::error(
                    "duplicate_cell",
                    format!(
                        "record {} has the same cell key as an earlier record of this run ({}); it is left out \
                         so no cell is counted twice (map rep in cellscope.toml to tell them apart)",
                        record.record,
                        super::coordinates_text(&coordinates)
                    ),
                )
                .run(run_id)
                .file(&file)
                .at_line(record.line),
            );
            continue;
        }
        keyed.push(KeyedRecord {
            file,
            record,
            coordinates,
            inferred,
            read,
        });
    }
    keyed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_engines_and_load_levels() {
        assert_eq!(
            engine_in_path("results/vllm-sweep/run=0.json").as_deref(),
            Some("vllm")
        );
        assert_eq!(engine_in_path("results/a/b.json"), None);
        assert_eq!(engine_in_path("vllm/vs/sglang/x.json"), None);
        assert_eq!(
            n_in_path("a/concurrency_16/profile_export.jsonl").map(|(n, _)| n),
            Some(16)
        );
        assert_eq!(
            n_in_path("artifacts/m-openai-chat-concurrency64/profile_export.jsonl").map(|(n, _)| n),
            Some(64)
        );
        assert_eq!(
            n_in_path("x/SERVE--a=1-BENCH--max_concurrency=8/run=0.json").map(|(n, _)| n),
            Some(8)
        );
        assert_eq!(n_in_path("results/out.json"), None);
        assert_eq!(model_name("meta-llama/Llama-3.1-8B/"), "Llama-3.1-8B");
        assert_eq!(model_name("qwen"), "qwen");
    }
}
