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

/// The coordinates a record was given, as warnings name them.
pub(super) fn coordinates_text(coordinates: &CellCoordinates) -> String {
    format!(
        "suite={} phase={} backend={} model={} workload={} n={} rep={}",
        coordinates.suite,
        coordinates.phase,
        coordinates.backend,
        coordinates.model,
        coordinates.workload,
        coordinates.n,
        coordinates.rep
    )
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
    let mut keying = Keying {
        format,
        mapping,
        run_id,
        next_rep: BTreeMap::new(),
        seen: BTreeSet::new(),
    };
    records
        .into_iter()
        .filter_map(|(file, record)| keying.key(file, record, warnings))
        .collect()
}

/// The key of every record of a run: what it takes to number repetitions and refuse a cell twice.
struct Keying<'a> {
    format: &'a str,
    mapping: &'a Mapping,
    run_id: &'a str,
    /// The next repetition of each key without its rep, for records that state none.
    next_rep: BTreeMap<(String, String, String, String, String, u32), u32>,
    seen: BTreeSet<CellCoordinates>,
}

impl Keying<'_> {
    /// One record keyed; `None` (with a warning) when its concurrency or repetition is not a whole number or its
    /// cell was already keyed.
    fn key(
        &mut self,
        file: String,
        record: RunRecord,
        warnings: &mut Vec<Warning>,
    ) -> Option<KeyedRecord> {
        let mut parts = Parts {
            mapping: self.mapping,
            context: TemplateContext {
                path: &file,
                record: &record.fields,
            },
            run_id: self.run_id,
            line: record.line,
            inferred: Vec::new(),
            read: Vec::new(),
        };
        let [suite, phase, backend, model, workload] =
            parts.named_dimensions(self.format, &record, warnings);
        let n = parts.concurrency(&record, warnings)?;
        let order_key = (
            suite.clone(),
            phase.clone(),
            backend.clone(),
            model.clone(),
            workload.clone(),
            n,
        );
        let order = *self.next_rep.get(&order_key).unwrap_or(&0);
        let rep = parts.repetition(&record, order, warnings)?;
        self.next_rep.insert(order_key, order + 1);
        let coordinates = CellCoordinates {
            suite,
            phase,
            backend,
            model,
            workload,
            n,
            rep,
        };
        let (inferred, read) = (parts.inferred, parts.read);
        if !self.seen.insert(coordinates.clone()) {
            warnings.push(
                Warning::error(
                    "duplicate_cell",
                    format!(
                        "record {} has the same cell key as an earlier record of this run ({}); it is left out \
                         so no cell is counted twice (map rep in cellscope.toml to tell them apart)",
                        record.record,
                        coordinates_text(&coordinates)
                    ),
                )
                .run(self.run_id)
                .file(&file)
                .at_line(record.line),
            );
            return None;
        }
        Some(KeyedRecord {
            file,
            record,
            coordinates,
            inferred,
            read,
        })
    }
}

/// The parts of one record's key as they are decided, each noted as read (with its field) or inferred (with its
/// rule).
struct Parts<'a> {
    mapping: &'a Mapping,
    context: TemplateContext<'a>,
    run_id: &'a str,
    line: Option<u64>,
    inferred: Vec<InferredPart>,
    read: Vec<(String, String)>,
}

impl Parts<'_> {
    /// A dimension's value: `cellscope.toml`'s, else the record's own, else the default rule's.
    fn take(
        &mut self,
        dimension: &str,
        stated: Option<Part>,
        default: &dyn Fn() -> Option<Part>,
        warnings: &mut Vec<Warning>,
    ) -> Option<String> {
        let mapped = match self.mapping.value(dimension, &self.context) {
            Some(Ok(mapped)) => Part::inferred(mapped.value, mapped.rule),
            Some(Err(reason)) => {
                warnings.push(
                    Warning::warn(
                        "mapping_field_missing",
                        format!("{reason}; the default rule for {dimension} is used instead"),
                    )
                    .run(self.run_id)
                    .file(self.context.path)
                    .at_line(self.line),
                );
                None
            }
            None => None,
        };
        let part = mapped.or(stated).or_else(default)?;
        match part.how {
            How::Read(field) => self.read.push((dimension.to_string(), field)),
            How::Inferred(rule) => self.inferred.push(InferredPart {
                dimension: dimension.to_string(),
                value: part.value.clone(),
                rule,
            }),
        }
        Some(part.value)
    }

    /// Suite, phase, backend, model and workload, each with its default rule.
    fn named_dimensions(
        &mut self,
        format: &str,
        record: &RunRecord,
        warnings: &mut Vec<Warning>,
    ) -> [String; 5] {
        let file = self.context.path;
        let suite = self.take(
            "suite",
            record.key.suite.clone(),
            &|| Part::inferred(format, "the format's name (the file records no suite)"),
            warnings,
        );
        let phase = self.take(
            "phase",
            record.key.phase.clone(),
            &|| Part::inferred("sweep", "`sweep` (the file records no phase)"),
            warnings,
        );
        let backend = self.take(
            "backend",
            record.key.backend.clone(),
            &|| match engine_in_path(file) {
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
        );
        let model = self.take(
            "model",
            record.key.model.clone(),
            &|| {
                Part::inferred(
                    "unknown",
                    "the file records no model; set model in cellscope.toml",
                )
            },
            warnings,
        );
        let workload = self.take(
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
        );
        [suite, phase, backend, model, workload].map(Option::unwrap_or_default)
    }

    /// The concurrency (`n`): stated, mapped or a load level in the path; `None` (with a warning) when there is
    /// none or it is not a whole number.
    fn concurrency(&mut self, record: &RunRecord, warnings: &mut Vec<Warning>) -> Option<u32> {
        let file = self.context.path;
        let n_text = self.take(
            "n",
            record.key.n.clone(),
            &|| {
                n_in_path(file).and_then(|(n, place)| {
                    Part::inferred(n.to_string(), format!("the load level in {place}"))
                })
            },
            warnings,
        );
        let n = n_text
            .as_deref()
            .and_then(|text| text.trim().parse::<u32>().ok());
        if n.is_none() {
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
                .run(self.run_id)
                .file(file)
                .at_line(record.line),
            );
        }
        n
    }

    /// The repetition: stated or mapped, else `order`, the place of the record among those with the same other
    /// key; `None` (with a warning) when it is not a whole number.
    fn repetition(
        &mut self,
        record: &RunRecord,
        order: u32,
        warnings: &mut Vec<Warning>,
    ) -> Option<u32> {
        let rep_text = self.take(
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
        let rep = rep_text
            .as_deref()
            .and_then(|text| text.trim().parse::<u32>().ok());
        if rep.is_none() {
            warnings.push(
                Warning::warn(
                    "bad_rep",
                    format!(
                        "record {}: the repetition `{}` is not a whole number; the record is left out",
                        record.record,
                        rep_text.unwrap_or_default()
                    ),
                )
                .run(self.run_id)
                .file(self.context.path)
                .at_line(record.line),
            );
        }
        rep
    }
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
