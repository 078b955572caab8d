//! vLLM `vllm bench serve` / `benchmark_serving.py` result JSON (docs/formats.md): one object per run, or several
//! in one file (`--append-result`, wrapper scripts), with or without the per-request arrays of
//! `--save-detailed`, legacy files without `failed` or `latencies`, and `vllm bench sweep serve` experiments
//! (`SERVE-…-BENCH-…/run=<i>.json`, the experiment directory being the run; `summary.json` and `warmup.json` are
//! not runs).

use super::RunFormat;
use crate::parse::json::{self, field_count, field_number, field_text};
use crate::parse::model_name;
use crate::parse::parallel::{self, Columns, ResultObject};
use crate::parse::scan;
use crate::parse::time::{self, Clock};
use crate::records::verdict::{self, Mark, Nearness, Signature, Verdict};
use crate::run::record::{FileAt, KeyParts, Part, RunRecord};
use crate::storage;
use cellscope_model::api::Warning;
use cellscope_model::{config, engine};
use serde_json::Value as Json;
use std::collections::BTreeMap;

pub(super) struct VllmBench;

/// The format, as the registry lists it.
pub(crate) static FORMAT: &dyn RunFormat = &VllmBench;

/// What a file next to results that is not a result is (`<stem>.pytorch.json` is the PyTorch benchmark-DB export;
/// a sweep's `warmup.json` is the discarded warm-up run, its `summary.json` and `summary.csv` the runs again).
fn side_file(name: &str) -> Option<&'static str> {
    Some(match name {
        "warmup.json" => "a vLLM sweep's warm-up run, which is discarded",
        "summary.json" => "a vLLM sweep's summary, its runs again",
        "summary.csv" => "a vLLM sweep's summary table, its runs again",
        _ if name.ends_with(".pytorch.json") => {
            "vLLM's PyTorch benchmark-database export of a result"
        }
        _ => return None,
    })
}

/// What makes a JSON object a vLLM result: the keys vLLM writes first and SGLang never writes; or, for a sweep's
/// `run=<i>.failure.json`, the run's number and its error.
const SIGNATURES: &[Signature] = &[
    &[&[Mark::Key("model_id")], &[Mark::Key("num_prompts")]],
    &[&[Mark::Key("run_number")], &[Mark::Key("error_type")]],
];

/// A sweep combination directory (`SERVE--max_num_seqs=32-BENCH--max_concurrency=8`).
fn is_sweep_combination(name: &str) -> bool {
    name.starts_with("SERVE-") || name.contains("BENCH-")
}

impl RunFormat for VllmBench {
    fn name(&self) -> &'static str {
        "vllm-bench"
    }

    /// An object (not an array) with `model_id` and `num_prompts`, the keys vLLM writes first and SGLang never
    /// writes; a sweep's `run=<i>.failure.json` (`run_number` and `error_type`) too, so a failed sweep run is
    /// reported rather than missing in silence.
    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        let (path, head) = (file.path, file.head);
        let name = storage::file_name(path);
        if let Some(what) = side_file(name) {
            return Verdict::side_file(what, self.run_root(path));
        }
        if !name.ends_with(".json") && !name.ends_with(".jsonl") {
            return Verdict::declines(
                Nearness::OtherKind,
                "a file that is neither .json nor .jsonl, which vLLM writes its results as",
            );
        }
        if !json::starts_with_object(head) {
            return Verdict::declines(
                Nearness::OtherKind,
                "a file that does not open a JSON object, where a vLLM result is one object per run",
            );
        }
        verdict::signature_verdict(head, "a vLLM result", SIGNATURES)
    }

    fn run_root(&self, path: &str) -> String {
        let directory = storage::parent(path);
        if is_sweep_combination(storage::file_name(directory)) {
            storage::parent(directory).to_string()
        } else {
            crate::records::default_run_root(path)
        }
    }

    fn records(&self, file: &FileAt<'_>, warnings: &mut Vec<Warning>) -> Vec<RunRecord> {
        let (storage, path) = (file.storage, file.path);
        let mut records = Vec::new();
        let Some(bytes) = crate::parse::read_file(storage, path, warnings) else {
            return records;
        };
        // One object of per-request numbers (the common case) is scanned directly; anything else, and every
        // problem, goes through the general reader.
        let objects = match scan::single_result(&json::prepare(&bytes)) {
            Some((line, object)) => vec![(0, line, object)],
            None => crate::parse::objects_in::<ResultObject>(
                &bytes,
                path,
                |record, _| format!("record {record}"),
                warnings,
            ),
        };
        for (
            record_index,
            line,
            ResultObject {
                fields: object,
                columns,
                ..
            },
        ) in objects
        {
            if let Some(error_type) = field_text(&object, "error_type") {
                warnings.push(
                    Warning::error(
                        "sweep_run_failed",
                        format!(
                            "sweep run {} failed ({error_type}: {}); it has no results",
                            field_number(&object, "run_number").unwrap_or(f64::NAN),
                            field_text(&object, "error").unwrap_or_default()
                        ),
                    )
                    .file(path)
                    .line(line),
                );
                continue;
            }
            let mut time_warnings = Vec::new();
            let started = time::started(
                object.get("date"),
                Clock::Compact,
                "date",
                path,
                &mut time_warnings,
            );
            warnings.extend(time_warnings.into_iter().map(|warning| warning.line(line)));
            let parsed = record(object, columns, record_index, line)
                .map(|record| RunRecord { started, ..record });
            parallel::keep(
                &mut records,
                parsed,
                &format!("record {record_index}"),
                (path, line),
                warnings,
            );
        }
        records
    }
}

/// One result object: its fields besides the per-request arrays, and those arrays.
fn record(object: Json, columns: Columns, index: u32, line: u64) -> Result<RunRecord, String> {
    let has_errors_key = columns.has_errors_key();
    let arrays = columns.arrays().map_err(|problem| problem.message())?;
    let object = &object;
    let mut key = KeyParts {
        n: parallel::max_concurrency(object)?,
        ..KeyParts::default()
    };
    if key.n.is_none() {
        key.rate = crate::records::rate_part(object, "request_rate");
    }
    if let Some(model) = field_text(object, "model_id") {
        key.model = Part::read(model_name(model), "field `model_id`");
    }
    if let Some(rep) = field_count(object, "run_number") {
        key.rep = Part::read(rep.to_string(), "field `run_number` (sweep)");
    }
    key.workload = workload(object);
    key.backend = backend(object);
    if key.backend.is_none()
        && let Some(label) = field_text(object, "label")
        && let Some(engine) = engine::canonical(label)
    {
        key.backend = Part::inferred(engine, "the run's `label` names an engine");
    }
    let completed = field_count(object, "completed");
    let num_prompts = field_count(object, "num_prompts");
    let failed = field_count(object, "failed").or_else(|| {
        // Legacy files have no `failed`: the prompts that did not complete failed.
        num_prompts
            .zip(completed)
            .map(|(sent, done)| sent.saturating_sub(done))
    });
    let mut notes = Vec::new();
    let (requests, has_requests, wall_derived) = match arrays {
        Some(arrays) => {
            if arrays.wall_derived() {
                notes.push(
                    "wall latency = TTFT + Σ inter-token latencies (the file has no `latencies`; the reported \
                     latency is the last chunk's time, so these are slightly below it)"
                        .to_string(),
                );
            }
            let wall_derived = arrays.wall_derived();
            (arrays.requests(), true, wall_derived)
        }
        None => (Vec::new(), false, false),
    };
    if object.get("failed").is_none() && has_requests && !has_errors_key {
        notes.push(
            "the file has neither `failed` nor `errors`: failures are the prompts that did not complete".to_string(),
        );
    }
    Ok(RunRecord {
        key,
        requests,
        has_requests,
        recorded: recorded(object),
        expected_rows: num_prompts,
        completed,
        failed,
        reported_figures: crate::records::figures::top_level_figures(object),
        wall_derived,
        notes,
        ..parallel::result_record(object, index, line)
    })
}

/// The workload a result states: `--metadata workload=…`, else the random dataset's lengths a sweep wrote
/// (`random_input_len`, `random_output_len`), else the lengths `--metadata input_len=… output_len=…` wrote (text).
fn workload(object: &Json) -> Option<Part> {
    if let Some(workload) = field_text(object, "workload") {
        return Part::read(workload, "field `workload` (--metadata)");
    }
    for (input, output, source) in [
        (
            "random_input_len",
            "random_output_len",
            "(sweep parameters)",
        ),
        ("input_len", "output_len", "(--metadata)"),
    ] {
        if let (Some(input_len), Some(output_len)) =
            (field_count(object, input), field_count(object, output))
        {
            return Part::read(
                format!("random_{input_len}x{output_len}"),
                format!("fields `{input}`, `{output}` {source}"),
            );
        }
    }
    None
}

/// The engine the `backend` field names (`vllm`, `tensorrt-llm`, `sglang`, …): `vllm bench serve --backend`
/// names the engine's own API when it is one, and only a request protocol when it is `openai…`, which names no
/// engine.
fn backend(object: &Json) -> Option<Part> {
    let written = field_text(object, "backend")?;
    engine::canonical(written)?;
    Part::read(written, "field `backend`")
}

/// The settings a result records beyond vLLM's own fields and its `--metadata` labels (which are configuration
/// already): numbers and flags a wrapper script or a sweep wrote (`gpu_memory_utilization`, `enable_prefix_caching`),
/// and the run's `label` when it is the user's (not the endpoint type it defaults to, nor an engine).
fn recorded(object: &Json) -> BTreeMap<String, String> {
    let mut recorded = BTreeMap::new();
    let Some(fields) = object.as_object() else {
        return recorded;
    };
    for (key, value) in fields {
        let text = match value {
            Json::Number(number) => number.to_string(),
            Json::Bool(flag) => flag.to_string(),
            _ => continue,
        };
        if is_vllm_field(key) || config::param(key).is_some() || !config::is_configuration(key) {
            continue;
        }
        recorded.insert(config::canonical_name(key), text);
    }
    if let Some(label) = field_text(object, "label")
        && engine::canonical(label).is_none()
        && Some(label) != field_text(object, "endpoint_type")
        && Some(label) != field_text(object, "backend")
    {
        recorded.insert("run_label".to_string(), label.to_string());
    }
    recorded
}

/// A numeric or boolean field vLLM writes itself: a setting of the bench (the load, the sampling), a count, a
/// throughput or a statistic (`mean_ttft_ms`, `p99_e2el_ms`).
fn is_vllm_field(key: &str) -> bool {
    const OWN: &[&str] = &[
        "num_prompts",
        "request_rate",
        "burstiness",
        "max_concurrency",
        "duration",
        "completed",
        "failed",
        "total_input_tokens",
        "total_output_tokens",
        "request_throughput",
        "request_goodput",
        "request_goodput:",
        "output_throughput",
        "total_token_throughput",
        "input_throughput",
        "max_output_tokens_per_s",
        "max_concurrent_requests",
        "rtfx",
        "best_of",
        "use_beam_search",
        "run_number",
        "ramp_up_start_rps",
        "ramp_up_end_rps",
        "random_input_len",
        "random_output_len",
        "input_len",
        "output_len",
    ];
    let statistic = ["mean_", "median_", "std_", "p"].iter().any(|prefix| {
        key.strip_prefix(prefix)
            .is_some_and(|rest| *prefix != "p" || rest.starts_with(|c: char| c.is_ascii_digit()))
    });
    OWN.contains(&key) || statistic || key.ends_with("_throughput") || key.starts_with("total_")
}
