//! LLMPerf (`ray-project/llmperf`) results (docs/formats.md): the flat `<stem>_summary.json` claims the run
//! and its requests come from the sibling `<stem>_individual_responses.json` (a JSON array, seconds, numbers
//! sometimes written as strings). The file names carry no concurrency, so users make one directory per load
//! level; the concurrency is read from inside the summary.

use super::RunFormat;
use crate::parse::json::{self, array_element_lines, field_count, field_number, field_text};
use crate::parse::model_name;
use crate::records::verdict::{self, Mark, Signature, Verdict};
use crate::run::record::{FileAt, KeyParts, Part, Request, RunRecord};
use crate::storage::{self, Storage};
use cellscope_model::api::Warning;
use cellscope_model::stat::Stat;
use serde_json::Value as Json;
use std::collections::BTreeMap;

pub(super) struct Llmperf;

/// The format, as the registry lists it.
pub(crate) static FORMAT: &dyn RunFormat = &Llmperf;

const SUMMARY_SUFFIX: &str = "_summary.json";
const REQUESTS_SUFFIX: &str = "_individual_responses.json";

/// What makes a JSON object an LLMPerf summary: its concurrency and its flattened statistics.
const SIGNATURES: &[Signature] = &[&[
    &[Mark::Key("num_concurrent_requests")],
    &[Mark::Text("results_*")],
]];

impl RunFormat for Llmperf {
    fn name(&self) -> &'static str {
        "llmperf"
    }

    /// A JSON object with `num_concurrent_requests` and flattened `results_…` statistics: the summary, whatever
    /// its name (leaderboard files do not follow the default naming).
    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        let (path, head) = (file.path, file.head);
        let verdict = verdict::object_file_verdict(path, head, "an LLMPerf summary", SIGNATURES);
        match summary_path(path) {
            Some(summary) if !verdict.reads() => Verdict::side_file(
                "LLMPerf's per-request responses, read with the summary beside them",
                self.run_root(&summary),
            ),
            _ => verdict,
        }
    }

    fn records(&self, file: &FileAt<'_>, warnings: &mut Vec<Warning>) -> Vec<RunRecord> {
        let (storage, path) = (file.storage, file.path);
        let Some(summary) = crate::parse::read_object(storage, path, "summary", warnings) else {
            return Vec::new();
        };
        match record(storage, path, &summary, warnings) {
            Ok(record) => vec![record],
            Err(message) => {
                warnings.push(
                    Warning::error("invalid_result", format!("{message}; the run is left out"))
                        .file(path),
                );
                Vec::new()
            }
        }
    }
}

/// Where the summary of a per-request file is ([`requests_path`] the other way round), when `path` is named or
/// placed as one.
fn summary_path(path: &str) -> Option<String> {
    let name = storage::file_name(path);
    let directory = storage::parent(path);
    if let Some(stem) = name.strip_suffix(REQUESTS_SUFFIX) {
        return Some(storage::join(directory, &format!("{stem}{SUMMARY_SUFFIX}")));
    }
    (storage::file_name(directory) == "individual")
        .then(|| storage::join(&storage::join(storage::parent(directory), "summary"), name))
}

/// Where the per-request file of a summary is: `<stem>_individual_responses.json` beside `<stem>_summary.json`,
/// or, in the leaderboard layout, `individual/<name>` beside the `summary/` directory.
fn requests_path(path: &str) -> Option<String> {
    let name = storage::file_name(path);
    let directory = storage::parent(path);
    if let Some(stem) = name.strip_suffix(SUMMARY_SUFFIX) {
        return Some(storage::join(
            directory,
            &format!("{stem}{REQUESTS_SUFFIX}"),
        ));
    }
    (storage::file_name(directory) == "summary").then(|| {
        storage::join(
            &storage::join(storage::parent(directory), "individual"),
            name,
        )
    })
}

fn record(
    storage: &dyn Storage,
    path: &str,
    summary: &Json,
    warnings: &mut Vec<Warning>,
) -> Result<RunRecord, String> {
    let mut key = KeyParts::default();
    match summary.get("num_concurrent_requests") {
        None | Some(Json::Null) => {}
        Some(value) => match json::number(value) {
            Some(n) if n.fract() == 0.0 && n >= 1.0 => {
                key.n = Part::read((n as u64).to_string(), "field `num_concurrent_requests`");
            }
            _ => {
                return Err(format!(
                    "`num_concurrent_requests` is not a whole number: {value}"
                ));
            }
        },
    }
    if let Some(model) = field_text(summary, "model") {
        key.model = Part::read(model_name(model), "field `model`");
    }
    // LLMPerf always prompts with its Shakespeare sonnets, so the configured lengths are the workload.
    if let (Some(input), Some(output)) = (
        field_count(summary, "mean_input_tokens"),
        field_count(summary, "mean_output_tokens"),
    ) {
        key.workload = Part::read(
            format!("sonnet_{input}x{output}"),
            "fields `mean_input_tokens`, `mean_output_tokens`",
        );
    }
    let mut notes = Vec::new();
    let completed = field_count(summary, "results_num_completed_requests");
    let per_minute = field_number(summary, "results_num_completed_requests_per_min")
        .filter(|rate| rate.is_finite() && *rate > 0.0);
    // LLMPerf writes no duration; its completed requests over its rate per minute give the test's wall time.
    let duration_s = completed
        .zip(per_minute)
        .map(|(completed, per_minute)| f64::from(completed) / per_minute * 60.0);
    if duration_s.is_some() {
        notes.push(
            "duration = results_num_completed_requests / results_num_completed_requests_per_min × 60 s (the \
             summary writes no duration)"
                .to_string(),
        );
    }
    let (requests, has_requests) = match requests_path(path).and_then(|requests_path| {
        crate::parse::read_sibling(storage, &requests_path, warnings)
            .map(|bytes| (requests_path, bytes))
    }) {
        Some((requests_path, bytes)) => match read_requests(&bytes, &requests_path, warnings) {
            Some(requests) => (requests, true),
            None => (Vec::new(), false),
        },
        None => {
            warnings.push(
                Warning::warn(
                    "no_request_file",
                    "there is no readable individual-responses file beside the summary: the cell shows the \
                     tool's aggregates only",
                )
                .file(path),
            );
            (Vec::new(), false)
        }
    };
    let ok = requests
        .iter()
        .filter(|request| request.error.is_none())
        .count();
    if has_requests
        && let Some(completed) = completed
        && completed as usize != ok
    {
        notes.push(format!(
            "the summary counts {completed} completed requests and the per-request file {ok}: the tool's figures \
             describe its {completed}"
        ));
    }
    Ok(RunRecord {
        record: 0,
        line: None,
        fields: summary.clone(),
        key,
        requests,
        has_requests,
        expected_rows: field_count(summary, "results_num_requests_started"),
        completed,
        failed: if has_requests {
            None
        } else {
            field_count(summary, "results_number_errors")
        },
        duration_s,
        reported: reported(summary),
        reported_figures: crate::records::figures::top_level_figures(summary),
        wall_derived: false,
        notes,
        ..RunRecord::default()
    })
}

/// The requests of an individual-responses file. Elements that are not request objects (the tool's
/// `extend(dict)` bug appends a dict's keys as strings) and successful requests missing a figure are left out
/// with a warning at their element and line. A file that cannot be read at all is reported and gives `None`:
/// the cell then shows the summary's figures only.
fn read_requests(bytes: &[u8], path: &str, warnings: &mut Vec<Warning>) -> Option<Vec<Request>> {
    let elements = match json::parse(bytes) {
        Ok(Json::Array(elements)) => elements,
        Ok(_) => {
            warnings.push(
                Warning::error(
                    "invalid_result",
                    "the file is not a JSON array of requests; the cell shows the summary's figures only",
                )
                .file(path),
            );
            return None;
        }
        Err(error) => {
            warnings.push(
                Warning::error(
                    "invalid_json",
                    format!(
                        "the file is not valid JSON ({}); the cell shows the summary's figures only",
                        error.message
                    ),
                )
                .file(path)
                .line(error.line),
            );
            return None;
        }
    };
    let lines = array_element_lines(bytes);
    let mut requests = Vec::with_capacity(elements.len());
    for (index, element) in elements.iter().enumerate() {
        let warn = |kind: &str, message: String| {
            Warning::error(kind, message)
                .file(path)
                .at_line(lines.get(index).copied())
        };
        if !element.is_object() {
            warnings.push(warn(
                "invalid_request",
                format!("element {index} is {element}, not a request object; it is left out"),
            ));
            continue;
        }
        let error = match element.get("error_code") {
            None | Some(Json::Null) => None,
            Some(code) => {
                let code =
                    json::number(code).map_or_else(|| code.to_string(), |code| code.to_string());
                let message = field_text(element, "error_msg").unwrap_or_default();
                Some(format!("{code} {message}").trim().to_string())
            }
        };
        let seconds = |key: &str| field_number(element, key).map(|value| value * 1000.0);
        let request = Request {
            wall_ms: seconds("end_to_end_latency_s"),
            ttft_ms: seconds("ttft_s"),
            // `inter_token_latency_s` is one request's mean, not its gaps.
            itl_ms: None,
            prompt_tokens: field_number(element, "number_input_tokens"),
            completion_tokens: field_number(element, "number_output_tokens"),
            start_s: None,
            end_s: None,
            error,
        };
        if request.error.is_none() {
            let missing: Vec<&str> = [
                ("end_to_end_latency_s", request.wall_ms),
                ("ttft_s", request.ttft_ms),
                ("number_input_tokens", request.prompt_tokens),
                ("number_output_tokens", request.completion_tokens),
            ]
            .into_iter()
            .filter(|(_, value)| value.is_none())
            .map(|(key, _)| key)
            .collect();
            if !missing.is_empty() {
                warnings.push(warn(
                    "incomplete_request",
                    format!(
                        "element {index} has no {}; the request is left out",
                        missing
                            .iter()
                            .map(|key| format!("`{key}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
                continue;
            }
        }
        requests.push(request);
    }
    Some(requests)
}

/// The summary's statistics as cells-table columns (seconds → ms; throughput in tok/s as written).
fn reported(summary: &Json) -> BTreeMap<String, f64> {
    let figures = [
        (
            Stat::MeanWallMs,
            "results_end_to_end_latency_s_mean",
            1000.0,
        ),
        (
            Stat::P50WallMs,
            "results_end_to_end_latency_s_quantiles_p50",
            1000.0,
        ),
        (
            Stat::P95WallMs,
            "results_end_to_end_latency_s_quantiles_p95",
            1000.0,
        ),
        (
            Stat::P99WallMs,
            "results_end_to_end_latency_s_quantiles_p99",
            1000.0,
        ),
        (Stat::P50TtftMs, "results_ttft_s_quantiles_p50", 1000.0),
        (Stat::P95TtftMs, "results_ttft_s_quantiles_p95", 1000.0),
        (Stat::MeanTtftMs, "results_ttft_s_mean", 1000.0),
        (Stat::P99TtftMs, "results_ttft_s_quantiles_p99", 1000.0),
        (
            Stat::MeanPromptTokens,
            "results_number_input_tokens_mean",
            1.0,
        ),
        (
            Stat::MeanCompletionTokens,
            "results_number_output_tokens_mean",
            1.0,
        ),
        (
            Stat::AggregateTps,
            "results_mean_output_throughput_token_per_s",
            1.0,
        ),
    ];
    figures
        .into_iter()
        .filter_map(|(column, key, factor)| {
            field_number(summary, key)
                .filter(|value| value.is_finite())
                .map(|value| (column.name().to_string(), value * factor))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::fixture_head as head;

    #[test]
    fn the_summary_is_detected_and_the_requests_file_is_not() {
        let summary = "llmperf/n4/meta-llama-Llama-3-1-8B-Instruct_256_64_summary.json";
        assert!(crate::formats::detect(&Llmperf, summary, &head(summary)));
        assert!(crate::formats::detect(
            &Llmperf,
            "raw_data/summary/groq_70b.json",
            &head(summary)
        ));
        let requests =
            "llmperf/n4/meta-llama-Llama-3-1-8B-Instruct_256_64_individual_responses.json";
        for format in super::super::all() {
            assert!(
                !crate::formats::detect(format, requests, &head(requests)),
                "{}",
                format.name()
            );
            if format.name() != "llmperf" {
                assert!(
                    !crate::formats::detect(format, summary, &head(summary)),
                    "{}",
                    format.name()
                );
            }
        }
    }

    #[test]
    fn the_requests_file_is_found_beside_the_summary() {
        assert_eq!(
            requests_path("n4/m_256_64_summary.json").as_deref(),
            Some("n4/m_256_64_individual_responses.json")
        );
        assert_eq!(
            requests_path("raw_data/summary/groq_70b.json").as_deref(),
            Some("raw_data/individual/groq_70b.json")
        );
        assert_eq!(requests_path("results/out.json"), None);
    }
}
