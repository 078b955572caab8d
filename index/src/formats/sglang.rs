//! SGLang `bench_serving` JSON Lines (docs/formats.md): one run per line, appended, with the bare `Infinity`
//! literal for an unbounded request rate; per-request arrays only with `--output-details`, and never an
//! end-to-end latency array, so wall latency is rebuilt as TTFT + Σ ITL and marked derived.

use super::RunFormat;
use crate::parse::json::{self, field_count, field_text, head_has_key};
use crate::parse::model_name;
use crate::parse::parallel::{self, arrays};
use crate::records::verdict::{self, Mark, Nearness, Signature, Verdict};
use crate::run::record::{FileAt, KeyParts, Part, RunRecord};
use cellscope_model::api::Warning;
use cellscope_model::engine;
use serde_json::Value as Json;

pub(super) struct SglangBench;

/// The format, as the registry lists it.
pub(crate) static FORMAT: &dyn RunFormat = &SglangBench;

/// What makes a JSON object an SGLang result: the dataset it ran, and its count or end-to-end latency.
const SIGNATURES: &[Signature] = &[&[
    &[Mark::Key("dataset_name")],
    &[
        Mark::Key("mean_e2e_latency_ms"),
        Mark::Key("median_e2e_latency_ms"),
        Mark::Key("completed"),
    ],
]];

impl RunFormat for SglangBench {
    fn name(&self) -> &'static str {
        "sglang-bench"
    }

    /// Lines with `dataset_name` and `completed` or an end-to-end latency aggregate, and no `model_id` (which
    /// would make it a vLLM result).
    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        let head = file.head;
        if !json::starts_with_object(head) {
            return Verdict::declines(
                Nearness::OtherKind,
                "a file that does not open a JSON object, where an SGLang result is one object per line",
            );
        }
        let verdict = verdict::signature_verdict(head, "an SGLang result", SIGNATURES);
        if verdict.reads() && head_has_key(head, "model_id") {
            return Verdict::declines(
                Nearness::SomeMarks,
                "a JSON object with the keys of an SGLang result and `model_id`, which SGLang never writes",
            );
        }
        verdict
    }

    fn records(&self, file: &FileAt<'_>, warnings: &mut Vec<Warning>) -> Vec<RunRecord> {
        let (storage, path) = (file.storage, file.path);
        let mut records = Vec::new();
        for (record_index, line, object) in crate::parse::read_objects::<Json>(
            storage,
            path,
            |_, line| format!("line {line}"),
            warnings,
        ) {
            if let Some(disagreement) = backend_disagreement(&object) {
                warnings.push(
                    Warning::warn("backend_disagrees", disagreement)
                        .file(path)
                        .line(line),
                );
            }
            let parsed = record(&object, record_index, line);
            parallel::keep(
                &mut records,
                parsed,
                &format!("line {line}"),
                (path, line),
                warnings,
            );
        }
        records
    }
}

/// A `backend` field naming another engine than the SGLang server whose `server_info` the result carries (the
/// client was told `--backend vllm` against an SGLang server): the server is the engine, and that is said.
fn backend_disagreement(object: &Json) -> Option<String> {
    json::at(object, "server_info.model_path")?;
    let backend = field_text(object, "backend")?;
    // `--backend` names an engine's API (`vllm`, `trt`, `lmdeploy`), a variant of one after `-` (`vllm-chat`).
    let engine = engine::canonical(backend)
        .or_else(|| backend.split('-').next().and_then(engine::canonical))
        .filter(|engine| *engine != "sglang")?;
    Some(format!(
        "the field `backend` says {backend} but `server_info` comes from an SGLang server; the backend is sglang \
         ({engine} was the client's request protocol)"
    ))
}

fn record(object: &Json, index: u32, line: u64) -> Result<RunRecord, String> {
    let arrays = arrays(object).map_err(|problem| problem.message())?;
    let mut key = KeyParts {
        n: parallel::max_concurrency(object)?,
        ..KeyParts::default()
    };
    if key.n.is_none() {
        key.rate = crate::records::rate_part(object, "request_rate");
    }
    if let Some(model) = json::at(object, "server_info.model_path").and_then(Json::as_str) {
        key.model = Part::read(model_name(model), "field `server_info.model_path`");
        // Only an SGLang server answers `/server_info` with a model path.
        key.backend = Part::inferred(
            "sglang",
            "the run's `server_info` has a `model_path`, which only an SGLang server reports",
        );
    }
    if let Some(dataset) = field_text(object, "dataset_name") {
        let lengths = (
            field_count(object, "random_input_len"),
            field_count(object, "random_output_len"),
        );
        key.workload = match lengths {
            (Some(input), Some(output)) if dataset.starts_with("random") => Part::read(
                format!("{dataset}_{input}x{output}"),
                "fields `dataset_name`, `random_input_len`, `random_output_len`",
            ),
            _ => Part::read(dataset, "field `dataset_name`"),
        };
    }
    let mut notes = Vec::new();
    let (requests, has_requests) = match arrays {
        Some(arrays) => (arrays.requests(), true),
        None => (Vec::new(), false),
    };
    if has_requests {
        notes.push(
            "wall latency = TTFT + Σ inter-token latencies (SGLang saves no end-to-end latency per request)"
                .to_string(),
        );
    }
    let completed = field_count(object, "completed");
    Ok(RunRecord {
        key,
        requests,
        has_requests,
        expected_rows: None,
        completed,
        // Only `--output-details` says which requests failed; without it the count is unknown, not zero.
        failed: None,
        reported_figures: crate::records::figures::top_level_figures(object),
        wall_derived: has_requests,
        notes,
        ..parallel::result_record(object, index, line)
    })
}
