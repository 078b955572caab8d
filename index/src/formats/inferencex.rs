//! InferenceX (InferenceMAX) aggregate results: `agg_<result name>.json`, one object per configuration that
//! InferenceX's `process_result.py` derives from a vLLM-format result, and `agg_bmk.json`, an array of them. The
//! latencies are in seconds under the vLLM names without `_ms` (`median_ttft`, `p99_e2el`), interactivity
//! (`median_intvty`, 1000 / TPOT in ms) and throughput per GPU are the tool's own; there are no request counts.
//! Every configuration field (`hw`, `framework`, `precision`, `tp`, `ep`, `dp_attention`, the disaggregated
//! `prefill_*`/`decode_*` sizes, …) is a dimension, `conc` the load and `isl`/`osl` the workload. The rows
//! InferenceX's public API serves (`hardware`, `spec_method`, the figures under `metrics`) are read the same way.

use super::RunFormat;
use crate::parse::json::{self, array_element_lines, field_count, field_number, field_text};
use crate::parse::model_name;
use crate::records::verdict::{self, Mark, Nearness, Signature, Verdict};
use crate::run::record::Setting;
use crate::run::record::{FileAt, How, KeyParts, Part, RunRecord};
use crate::storage;
use cellscope_model::api::Warning;
use serde_json::Value as Json;
use std::collections::BTreeMap;

pub(super) struct InferencexAggregate;

/// The format, as the registry lists it.
pub(crate) static FORMAT: &dyn RunFormat = &InferencexAggregate;

/// What makes a JSON object an InferenceX aggregate row: its concurrency, its per-GPU throughput and the
/// deployment it was measured on.
const SIGNATURES: &[Signature] = &[&[
    &[Mark::Key("conc")],
    &[Mark::Key("output_tput_per_gpu"), Mark::Key("tput_per_gpu")],
    &[
        Mark::Key("framework"),
        Mark::Key("hw"),
        Mark::Key("hardware"),
        Mark::Key("device"),
    ],
]];

/// The prefix `process_result.py` gives an aggregate of the result `<name>.json` beside it.
const AGGREGATE_PREFIX: &str = "agg_";

/// The configuration fields of a row as InferenceX names them, in its aggregate files and in the rows its public
/// API serves (`hardware`, `spec_method`), each with the parameter it is (the canonical names are the model's).
const CONFIG_FIELDS: &[(&str, &str)] = &[
    ("hw", "hw"),
    ("hardware", "hw"),
    ("device", "hw"),
    ("framework", "framework"),
    ("precision", "precision"),
    ("tp", "tp"),
    ("pp", "pp"),
    ("ep", "ep"),
    ("dp_attention", "dp_attention"),
    ("dcp_size", "dcp_size"),
    ("pcp_size", "pcp_size"),
    ("spec_decoding", "spec_decoding"),
    ("spec_method", "spec_decoding"),
    ("mtp", "mtp"),
    ("disagg", "disagg"),
    ("offload_mode", "offload_mode"),
    ("benchmark_type", "benchmark_type"),
    ("kv_p2p_transfer", "kv_p2p_transfer"),
    ("prefill_hw", "prefill_hw"),
    ("prefill_tp", "prefill_tp"),
    ("prefill_pp", "prefill_pp"),
    ("prefill_ep", "prefill_ep"),
    ("prefill_dp_attention", "prefill_dp_attention"),
    ("prefill_dcp_size", "prefill_dcp_size"),
    ("prefill_pcp_size", "prefill_pcp_size"),
    ("prefill_num_workers", "prefill_num_workers"),
    ("decode_hw", "decode_hw"),
    ("decode_tp", "decode_tp"),
    ("decode_pp", "decode_pp"),
    ("decode_ep", "decode_ep"),
    ("decode_dp_attention", "decode_dp_attention"),
    ("decode_dcp_size", "decode_dcp_size"),
    ("decode_pcp_size", "decode_pcp_size"),
    ("decode_num_workers", "decode_num_workers"),
    ("num_prefill_gpu", "num_prefill_gpu"),
    ("num_decode_gpu", "num_decode_gpu"),
];

/// Sizes that mean "not used" at 1 and flags at their default: left out, so a row lines up with the cells of the
/// same deployment read from its result name, which states only what differs.
fn is_default(field: &str, value: &str) -> bool {
    matches!(
        (field, value),
        ("pp" | "dcp_size" | "pcp_size", "1")
            | ("prefill_pp" | "prefill_dcp_size" | "prefill_pcp_size", "1")
            | ("decode_pp" | "decode_dcp_size" | "decode_pcp_size", "1")
            | ("spec_decoding" | "mtp", "none" | "off" | "" | "false")
            | ("disagg", "false")
            | ("offload_mode", "off" | "none" | "")
    )
}

/// Latency statistics: the row's key stem (seconds) and the cells-table column (ms) it fills.
const LATENCIES: &[(&str, &str)] = &[
    ("mean_ttft", "mean_ttft_ms"),
    ("median_ttft", "p50_ttft_ms"),
    ("p95_ttft", "p95_ttft_ms"),
    ("p99_ttft", "p99_ttft_ms"),
    ("mean_tpot", "mean_tpot_ms"),
    ("median_tpot", "p50_tpot_ms"),
    ("p95_tpot", "p95_tpot_ms"),
    ("p99_tpot", "p99_tpot_ms"),
    ("mean_itl", "mean_itl_ms"),
    ("median_itl", "p50_itl_ms"),
    ("p95_itl", "p95_itl_ms"),
    ("p99_itl", "p99_itl_ms"),
    ("mean_e2el", "mean_wall_ms"),
    ("median_e2el", "p50_wall_ms"),
    ("p95_e2el", "p95_wall_ms"),
    ("p99_e2el", "p99_wall_ms"),
    // Rows from 2024-era results, whose wall latency keys were `*_latency_ms`.
    ("mean_latency", "mean_wall_ms"),
    ("median_latency", "p50_wall_ms"),
    ("p99_latency", "p99_wall_ms"),
];

impl RunFormat for InferencexAggregate {
    fn name(&self) -> &'static str {
        "inferencex-agg"
    }

    /// [`RunFormat::examine`], and an `agg_<name>.json` whose result `<name>.json` is beside it is that result's
    /// figures again: the result (with its request counts) is the cell.
    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        let (storage, path, head) = (file.storage, file.path, file.head);
        let verdict = self.examine_head(path, head);
        if !verdict.reads() {
            return verdict;
        }
        let name = storage::file_name(path);
        let Some(result) = name.strip_prefix(AGGREGATE_PREFIX) else {
            return verdict;
        };
        let result = storage::join(storage::parent(path), result);
        if storage.stat(&result).is_ok_and(|meta| meta.is_file()) {
            return Verdict::side_file_of(
                super::vllm::VllmBench.name(),
                format!(
                    "InferenceX's aggregate of `{result}` beside it, the same run's figures again"
                ),
                super::vllm::VllmBench.run_root(&result),
            );
        }
        verdict
    }

    fn records(&self, file: &FileAt<'_>, warnings: &mut Vec<Warning>) -> Vec<RunRecord> {
        let (storage, path) = (file.storage, file.path);
        let Some(bytes) = crate::parse::read_file(storage, path, warnings) else {
            return Vec::new();
        };
        let document = match json::parse(&bytes) {
            Ok(document) => document,
            Err(error) => {
                warnings.push(
                    Warning::error(
                        "invalid_json",
                        format!(
                            "the InferenceX aggregate is not valid JSON ({}); its rows are left out",
                            error.message
                        ),
                    )
                    .file(path)
                    .line(error.line),
                );
                return Vec::new();
            }
        };
        let (rows, lines) = match document {
            Json::Array(rows) => (rows, array_element_lines(&bytes)),
            object @ Json::Object(_) => (vec![object], vec![1]),
            _ => {
                warnings.push(
                    Warning::error(
                        "invalid_result",
                        "the InferenceX aggregate is neither an object nor an array of objects",
                    )
                    .file(path),
                );
                return Vec::new();
            }
        };
        let mut records = Vec::new();
        for (index, row) in rows.into_iter().enumerate() {
            let line = lines.get(index).copied();
            let label = if lines.len() > 1 || path.ends_with("agg_bmk.json") {
                format!("row [{index}]")
            } else {
                "the row".to_string()
            };
            match record(row, index as u32, line, &label, warnings, path) {
                Ok(record) => records.push(record),
                Err(problem) => {
                    let mut warning = Warning::error(
                        "invalid_result",
                        format!("{label}: {problem}; it is left out, the other rows are read"),
                    )
                    .file(path);
                    if let Some(line) = line {
                        warning = warning.line(line);
                    }
                    warnings.push(warning);
                }
            }
        }
        records
    }
}

impl InferencexAggregate {
    /// A `.json` file opening an object or an array whose head carries `conc`, a per-GPU throughput and
    /// `framework` or `hw`.
    pub(super) fn examine_head(&self, path: &str, head: &[u8]) -> Verdict {
        if !storage::file_name(path).ends_with(".json") {
            return Verdict::declines(
                Nearness::OtherKind,
                "a file that is not .json, which an InferenceX aggregate is",
            );
        }
        let opens = head.iter().find(|byte| !byte.is_ascii_whitespace());
        if !matches!(opens, Some(b'{' | b'[')) {
            return Verdict::declines(
                Nearness::OtherKind,
                "a file that opens neither a JSON object nor an array, which an InferenceX aggregate is",
            );
        }
        verdict::signature_verdict(head, "an InferenceX aggregate", SIGNATURES)
    }
}

/// One aggregate row as a record: key, configuration, the tool's figures in cellscope's units.
fn record(
    row: Json,
    index: u32,
    line: Option<u64>,
    label: &str,
    warnings: &mut Vec<Warning>,
    path: &str,
) -> Result<RunRecord, String> {
    let Json::Object(mut fields) = row else {
        return Err("not a JSON object".to_string());
    };
    // Rows served by InferenceX's API keep their figures under `metrics`; the row's own keys win.
    if let Some(Json::Object(metrics)) = fields.remove("metrics") {
        for (key, value) in metrics {
            fields.entry(key).or_insert(value);
        }
    }
    let row = Json::Object(fields);
    let n = match row.get("conc") {
        None | Some(Json::Null) => {
            return Err("no `conc` (the concurrency it was run at)".to_string());
        }
        Some(value) => json::number(value)
            .filter(|n| n.is_finite() && *n >= 1.0 && n.fract() == 0.0)
            .ok_or_else(|| format!("`conc` is not a whole number of at least 1: {value}"))?,
    };
    let mut key = KeyParts {
        n: Part::read((n as u64).to_string(), "field `conc`"),
        ..KeyParts::default()
    };
    if let Some(framework) = field_text(&row, "framework") {
        key.backend = Part::read(framework.to_ascii_lowercase(), "field `framework`");
    }
    key.model = field_text(&row, "model")
        .map(|model| Part::read(model_name(model), "field `model`"))
        .or_else(|| {
            field_text(&row, "infmax_model_prefix")
                .map(|prefix| Part::read(prefix, "field `infmax_model_prefix`"))
        })
        .flatten();
    if let (Some(input), Some(output)) = (field_count(&row, "isl"), field_count(&row, "osl")) {
        key.workload = Part::read(lengths_name(input, output), "fields `isl`, `osl`");
    }
    let mut notes = vec![
        "an InferenceX aggregate row: latencies are the tool's, in seconds (shown in ms); no request counts"
            .to_string(),
    ];
    let (reported, figure_problems) = reported(&row);
    for problem in figure_problems {
        let mut warning = Warning::warn("bad_number", format!("{label}: {problem}")).file(path);
        if let Some(line) = line {
            warning = warning.line(line);
        }
        warnings.push(warning);
    }
    let derived = derived(&row, &mut notes);
    Ok(RunRecord {
        record: index,
        line,
        key,
        reported,
        derived,
        reported_figures: crate::records::figures::top_level_figures(&row),
        settings: settings(&row),
        notes,
        fields: row,
        ..RunRecord::default()
    })
}

/// `1k1k` as InferenceX names its sequence lengths when both are whole thousands of 1024 tokens, else the lengths.
fn lengths_name(input: u32, output: u32) -> String {
    if input.is_multiple_of(1024) && output.is_multiple_of(1024) && input > 0 && output > 0 {
        format!("{}k{}k", input / 1024, output / 1024)
    } else {
        format!("random_{input}x{output}")
    }
}

/// The configuration fields the row states, defaults left out.
fn settings(row: &Json) -> Vec<Setting> {
    let mut settings: Vec<Setting> = Vec::new();
    for (field, name) in CONFIG_FIELDS {
        let value = match row.get(*field) {
            None | Some(Json::Null) => continue,
            Some(Json::String(text)) => text.to_ascii_lowercase(),
            Some(other) => other.to_string(),
        };
        let setting = Setting::new(name, &value, How::Read(format!("field `{field}`")));
        if is_default(name, &value) || settings.iter().any(|known| known.name == setting.name) {
            continue;
        }
        settings.push(setting);
    }
    if let Some(router) = row.pointer("/router/name").and_then(Json::as_str) {
        settings.push(Setting::new(
            "router",
            router,
            How::Read("field `router.name`".to_string()),
        ));
    }
    settings
}

/// The tool's latencies in ms, its median interactivity and its output throughput per GPU, by cells-table column;
/// and each figure that is there but not a finite non-negative number.
fn reported(row: &Json) -> (BTreeMap<String, f64>, Vec<String>) {
    let mut reported = BTreeMap::new();
    let mut problems = Vec::new();
    let mut take = |field: &str, column: &str, scale: f64| match row.get(field) {
        None | Some(Json::Null) => {}
        Some(value) => match json::number(value).filter(|v| v.is_finite() && *v >= 0.0) {
            Some(number) => {
                reported.entry(column.to_string()).or_insert(number * scale);
            }
            None => problems.push(format!(
                "`{field}` is not a finite number of at least 0 ({value}); it is left out"
            )),
        },
    };
    for (field, column) in LATENCIES {
        take(field, column, 1000.0);
    }
    take("median_intvty", "p50_interactivity_tps", 1.0);
    take("intvty_p50", "p50_interactivity_tps", 1.0);
    take("output_tput_per_gpu", "output_tps_per_accelerator", 1.0);
    (reported, problems)
}

/// Output and total throughput, from the per-GPU figures times the GPUs `process_result.py` divides a
/// single-node result by (tp × pp × pcp_size). A disaggregated row's divisors changed between versions, so it
/// gets none.
fn derived(row: &Json, notes: &mut Vec<String>) -> BTreeMap<String, f64> {
    let mut derived = BTreeMap::new();
    let multinode = row.get("is_multinode").and_then(Json::as_bool) == Some(true)
        || row.get("num_decode_gpu").is_some();
    let Some(tp) = field_number(row, "tp").filter(|tp| *tp >= 1.0) else {
        return derived;
    };
    if multinode {
        return derived;
    }
    let size = |field: &str| {
        field_number(row, field)
            .filter(|n| *n >= 1.0)
            .unwrap_or(1.0)
    };
    let gpus = tp * size("pp") * size("pcp_size");
    for (field, column) in [
        ("output_tput_per_gpu", "aggregate_tps"),
        ("tput_per_gpu", "total_tps"),
    ] {
        if let Some(per_gpu) = field_number(row, field).filter(|v| v.is_finite() && *v >= 0.0) {
            derived.insert(column.to_string(), per_gpu * gpus);
        }
    }
    if !derived.is_empty() {
        notes.push(format!(
            "output and total tok/s = the per-GPU figures × {gpus} GPUs (tp × pp × pcp_size, what InferenceX \
             divides a single-node result by)"
        ));
    }
    derived
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_named_as_inferencex_names_them() {
        assert_eq!(lengths_name(1024, 1024), "1k1k");
        assert_eq!(lengths_name(8192, 1024), "8k1k");
        assert_eq!(lengths_name(8192, 1025), "random_8192x1025");
    }

    #[test]
    fn aggregates_are_recognised_as_objects_and_arrays() {
        let object =
            br#"{"hw": "b200", "conc": 4, "framework": "sglang", "output_tput_per_gpu": 12.5}"#;
        assert!(
            InferencexAggregate
                .examine_head("agg_x.json", object)
                .reads()
        );
        let array = br#"[
  {"conc": 4, "framework": "sglang", "tput_per_gpu": 12.5}"#;
        assert!(
            InferencexAggregate
                .examine_head("agg_bmk.json", array)
                .reads()
        );
        assert!(
            !InferencexAggregate
                .examine_head("x.json", br#"{"conc": 4, "framework": "sglang"}"#)
                .reads()
        );
    }
}
