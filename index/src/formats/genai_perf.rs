//! GenAI-Perf artifacts (docs/formats.md): the raw perf_analyzer export `profile_export.json` claims the run,
//! one record per experiment (load level), its requests timed from nanosecond timestamps; the sibling
//! `<stem>_genai_perf.json` summary gives the model, the configuration and the tool's aggregates. The raw export
//! has no token counts (GenAI-Perf re-tokenizes the responses) and no error field, so token means and
//! throughput are the tool's, marked reported.

use super::RunFormat;
use super::aiperf::nanoseconds;
use crate::parse::json::{self, field_text};
use crate::parse::model_name;
use crate::parse::perf_metrics::reported;
use crate::parse::read_json;
use crate::parse::time::{self, Clock};
use crate::records::verdict::{self, Mark, Signature, Verdict};
use crate::run::record::{FileAt, KeyParts, Part, Request, RunRecord, Started};
use crate::storage::{self, Storage};
use cellscope_model::api::Warning;
use serde_json::Value as Json;
use std::collections::BTreeMap;

pub(super) struct GenaiPerf;

/// The format, as the registry lists it.
pub(crate) static FORMAT: &dyn RunFormat = &GenaiPerf;

/// What makes a JSON object the perf_analyzer export: its load levels, with their experiment or timestamps.
const SIGNATURES: &[Signature] = &[&[
    &[Mark::Key("experiments")],
    &[Mark::Key("experiment"), Mark::Key("response_timestamps")],
]];

/// What a file GenAI-Perf writes beside its export, and that is not a run of its own, is: the summary is read
/// with the export (`<stem>_genai_perf.json`), the rest not at all.
fn side_file(name: &str) -> Option<&'static str> {
    if name.ends_with("_genai_perf.json") {
        Some("the GenAI-Perf summary read with the export beside it")
    } else if name.ends_with("_genai_perf.csv") {
        Some("GenAI-Perf's CSV export of a summary's figures")
    } else if name == "inputs.json" || name == "llm_inputs.json" {
        Some("the inputs GenAI-Perf sent")
    } else {
        None
    }
}

impl RunFormat for GenaiPerf {
    fn name(&self) -> &'static str {
        "genai-perf"
    }

    /// [`RunFormat::examine`], except that a summary with no export beside it (the export not kept) is read on its
    /// own, for the tool's figures.
    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        let (storage, path, head) = (file.storage, file.path, file.head);
        let verdict = self.examine_head(path, head);
        if is_summary_name(storage::file_name(path))
            && json::starts_with_object(head)
            && export_beside(storage, path).is_none()
        {
            return Verdict::Reads;
        }
        verdict
    }

    fn records(&self, file: &FileAt<'_>, warnings: &mut Vec<Warning>) -> Vec<RunRecord> {
        let (storage, path) = (file.storage, file.path);
        if is_summary_name(storage::file_name(path)) {
            return summary_record(storage, path, warnings)
                .into_iter()
                .collect();
        }
        let Some(export) = read_json(storage, path, "export", warnings) else {
            return Vec::new();
        };
        let Some(experiments) = export.get("experiments").and_then(Json::as_array) else {
            warnings.push(
                Warning::error(
                    "invalid_result",
                    "`experiments` is not an array of load levels; the run is left out",
                )
                .file(path),
            );
            return Vec::new();
        };
        let summary = summary(storage, path, warnings);
        let config = summary
            .as_ref()
            .and_then(|summary| summary.get("input_config"))
            .unwrap_or(&Json::Null);
        let mut records = Vec::new();
        for (index, experiment) in experiments.iter().enumerate() {
            let record_index = index as u32;
            let Some(requests) = experiment.get("requests").and_then(Json::as_array) else {
                warnings.push(
                    Warning::error(
                        "invalid_result",
                        format!(
                            "experiment {record_index} has no `requests` array; it is left out"
                        ),
                    )
                    .file(path),
                );
                continue;
            };
            let mut key = KeyParts {
                model: model(config),
                workload: workload(config),
                backend: backend(config),
                ..KeyParts::default()
            };
            let load = experiment.get("experiment").unwrap_or(&Json::Null);
            key.n = match field_text(load, "mode") {
                Some("concurrency") => load
                    .get("value")
                    .and_then(json::number)
                    .filter(|n| n.fract() == 0.0 && *n >= 1.0)
                    .and_then(|n| {
                        Part::read(
                            (n as u64).to_string(),
                            format!("field `experiments[{record_index}].experiment.value`"),
                        )
                    }),
                // A request-rate experiment has no concurrency: its rate is its load.
                Some(_) => None,
                None => configured_concurrency(config),
            };
            if field_text(load, "mode") == Some("request_rate") {
                key.rate = crate::records::rate_part(load, "value").map(|part| Part {
                    how: crate::run::record::How::Read(format!(
                        "field `experiments[{record_index}].experiment.value`"
                    )),
                    ..part
                });
            }
            let mut notes = vec![
                "wall = last response − request start and TTFT = first response − request start, from the \
                 export's nanosecond timestamps (the last response is the stream's closing event)"
                    .to_string(),
                "the export has no token counts (GenAI-Perf counts tokens by re-tokenizing the responses): \
                 token means and throughput are the tool's"
                    .to_string(),
            ];
            // The summary aggregates the whole export, so it describes an experiment only when there is one.
            let (reported, reported_figures) = match &summary {
                Some(summary) if experiments.len() == 1 => (
                    reported(summary),
                    crate::records::figures::metric_figures(summary),
                ),
                Some(_) => {
                    notes.push(
                        "the summary covers every experiment of the export, so none of its figures is shown \
                         for this one"
                            .to_string(),
                    );
                    (BTreeMap::new(), BTreeMap::new())
                }
                None => (BTreeMap::new(), BTreeMap::new()),
            };
            super::perf_csv::check_against(storage, path, &reported, warnings);
            // The first request sent; a request without a readable timestamp is warned of by `read_requests`.
            let started = requests
                .iter()
                .filter_map(|request| request.get("timestamp")?.as_i64())
                .min()
                .and_then(|ns| time::parse(&Json::from(ns), Clock::EpochNs))
                .map(|at| Started {
                    at,
                    key: format!("experiments[{record_index}].requests[].timestamp (earliest)"),
                });
            let requests = read_requests(requests, path, record_index, warnings);
            records.push(RunRecord {
                started,
                record: record_index,
                fields: summary.clone().unwrap_or(Json::Null),
                key,
                requests,
                has_requests: true,
                reported,
                reported_figures,
                notes,
                ..RunRecord::default()
            });
        }
        records
    }
}

impl GenaiPerf {
    /// A JSON object with `experiments` whose entries carry an `experiment` (mode and value) or requests with
    /// `response_timestamps`: the perf_analyzer export, whatever `--profile-export-file` named it.
    pub(super) fn examine_head(&self, path: &str, head: &[u8]) -> Verdict {
        verdict::object_file_verdict(path, head, "a GenAI-Perf export", SIGNATURES)
            .or_side_file(side_file(storage::file_name(path)), || self.run_root(path))
    }
}

/// Whether a file name is a GenAI-Perf summary's (`<stem>_genai_perf.json`).
fn is_summary_name(name: &str) -> bool {
    name.ends_with("_genai_perf.json")
}

/// The export in the summary's directory: a `.json` file with the export's marks (its name is the user's).
fn export_beside(storage: &dyn Storage, summary: &str) -> Option<String> {
    let directory = storage::parent(summary);
    let mut names: Vec<String> = storage
        .list(directory)
        .ok()?
        .into_iter()
        .filter(|entry| {
            entry.kind == storage::EntryKind::File
                && entry.name.ends_with(".json")
                && side_file(&entry.name).is_none()
        })
        .map(|entry| entry.name)
        .collect();
    names.sort();
    names.into_iter().find_map(|name| {
        let candidate = storage::join(directory, &name);
        let head = storage
            .read_range(&candidate, 0..crate::parse::HEAD_BYTES)
            .ok()?;
        GenaiPerf
            .examine_head(&candidate, &head)
            .reads()
            .then_some(candidate)
    })
}

/// The record of a summary read without its export: the tool's figures (reported), model, workload and
/// concurrency from its `input_config`, the CSV beside it checked against them.
fn summary_record(
    storage: &dyn Storage,
    path: &str,
    warnings: &mut Vec<Warning>,
) -> Option<RunRecord> {
    let summary = crate::parse::read_object(storage, path, "summary", warnings)?;
    let config = summary.get("input_config").unwrap_or(&Json::Null);
    let key = KeyParts {
        model: model(config),
        workload: workload(config),
        backend: backend(config),
        n: configured_concurrency(config),
        ..KeyParts::default()
    };
    let reported = reported(&summary);
    super::perf_csv::check_against(storage, path, &reported, warnings);
    let count = |tag: &str| {
        summary
            .get(tag)
            .and_then(|metric| json::field_number(metric, "avg"))
            .filter(|value| *value >= 0.0 && value.fract() == 0.0)
            .map(|value| value as u32)
    };
    Some(RunRecord {
        key,
        completed: count("request_count"),
        reported,
        reported_figures: crate::records::figures::metric_figures(&summary),
        notes: vec![
            "the GenAI-Perf summary alone (no export of the requests beside it): every figure is the tool's"
                .to_string(),
        ],
        fields: summary,
        ..RunRecord::default()
    })
}

/// The summary beside the export: `<stem>_genai_perf.json` for the export `<stem>.json` (the stem follows
/// `--profile-export-file`), else the directory's one summary when the export was renamed. A missing summary is not
/// a problem of the run; a damaged one is reported.
fn summary(storage: &dyn Storage, path: &str, warnings: &mut Vec<Warning>) -> Option<Json> {
    let name = storage::file_name(path);
    let stem = name.strip_suffix(".json").unwrap_or(name);
    let directory = storage::parent(path);
    let own = storage::join(directory, &format!("{stem}_genai_perf.json"));
    let summary_path = if storage.stat(&own).is_ok() {
        own
    } else {
        let summaries: Vec<String> = storage
            .list(directory)
            .ok()?
            .into_iter()
            .filter(|entry| entry.kind == storage::EntryKind::File && is_summary_name(&entry.name))
            .map(|entry| storage::join(directory, &entry.name))
            .collect();
        match summaries.as_slice() {
            [only] => only.clone(),
            _ => return None,
        }
    };
    let bytes = crate::parse::read_sibling(storage, &summary_path, warnings)?;
    match json::parse(&bytes) {
        Ok(summary @ Json::Object(_)) => Some(summary),
        Ok(_) => {
            warnings.push(
                Warning::warn(
                    "invalid_result",
                    "the summary is not a JSON object; the model and the tool's figures are unknown",
                )
                .file(&summary_path),
            );
            None
        }
        Err(error) => {
            warnings.push(
                Warning::warn(
                    "invalid_json",
                    format!(
                        "the summary is not valid JSON ({}); the model and the tool's figures are unknown",
                        error.message
                    ),
                )
                .file(&summary_path)
                .line(error.line),
            );
            None
        }
    }
}

/// The model: `input_config.model` (a list, or a string in some versions), newer `model_names`.
fn model(config: &Json) -> Option<Part> {
    ["model", "model_names"].into_iter().find_map(|field| {
        let value = config.get(field)?;
        let name = match value {
            Json::String(name) => name.as_str(),
            Json::Array(names) => names.first()?.as_str()?,
            _ => return None,
        };
        Part::read(model_name(name), format!("field `input_config.{field}`"))
    })
}

/// The workload: synthetic prompt and output lengths, else the input file's name.
fn workload(config: &Json) -> Option<Part> {
    let count = |field: &str| json::field_count(config, field);
    if field_text(config, "prompt_source").is_none_or(|source| source == "synthetic")
        && let (Some(input), Some(output)) = (
            count("synthetic_input_tokens_mean"),
            count("output_tokens_mean"),
        )
    {
        return Part::read(
            format!("synthetic_{input}x{output}"),
            "fields `input_config.synthetic_input_tokens_mean`, `input_config.output_tokens_mean`",
        );
    }
    let file = field_text(config, "input_file")?;
    Part::read(
        storage::file_name(file.trim_end_matches('/')),
        "field `input_config.input_file`",
    )
}

/// The serving engine, which GenAI-Perf records only for Triton (`backend`: `tensorrtllm`, `vllm`); for the
/// OpenAI service kind `backend` is an unused default.
fn backend(config: &Json) -> Option<Part> {
    if field_text(config, "service_kind") != Some("triton") {
        return None;
    }
    let engine = field_text(config, "backend")?;
    Part::inferred(
        engine,
        "the Triton backend GenAI-Perf was told to use (`input_config.backend`)",
    )
}

/// The configured concurrency, for exports whose experiments name no mode.
fn configured_concurrency(config: &Json) -> Option<Part> {
    for field in ["concurrency", "perf_analyzer.stimulus.concurrency"] {
        if let Some(n) = json::at(config, field).and_then(json::number)
            && n.fract() == 0.0
            && n >= 1.0
        {
            return Part::read(
                (n as u64).to_string(),
                format!("field `input_config.{field}` of the summary"),
            );
        }
    }
    None
}

/// The requests of one experiment. A request with no response has no latency and counts as failed.
fn read_requests(
    requests: &[Json],
    path: &str,
    experiment: u32,
    warnings: &mut Vec<Warning>,
) -> Vec<Request> {
    let mut timed: Vec<(i128, Vec<i128>)> = Vec::new();
    for (index, request) in requests.iter().enumerate() {
        let Some(start) = request.get("timestamp").and_then(nanoseconds) else {
            warnings.push(
                Warning::error(
                    "invalid_request",
                    format!(
                        "experiment {experiment}, request {index} has no `timestamp`; it is left out"
                    ),
                )
                .file(path),
            );
            continue;
        };
        let responses = request
            .get("response_timestamps")
            .and_then(Json::as_array)
            .map(|stamps| stamps.iter().filter_map(nanoseconds).collect())
            .unwrap_or_default();
        timed.push((start, responses));
    }
    // Times are seconds since the experiment's first request: epoch nanoseconds do not fit a double exactly,
    // so differences are taken as integers first.
    let base = timed.iter().map(|(start, _)| *start).min().unwrap_or(0);
    timed
        .into_iter()
        .map(|(start, responses)| {
            let ms = |stamp: i128| (stamp - start) as f64 / 1e6;
            let last = responses.last().copied();
            Request {
                wall_ms: last.map(ms),
                ttft_ms: responses.first().copied().map(ms),
                // The gaps between responses end with the stream's closing event, which is not a token.
                itl_ms: None,
                prompt_tokens: None,
                completion_tokens: None,
                start_s: last.map(|_| (start - base) as f64 / 1e9),
                end_s: last.map(|end| (end - base) as f64 / 1e9),
                error: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::fixture_head as head;

    const DIRECTORY: &str =
        "genai-perf/artifacts/meta-llama_Llama-3.1-8B-Instruct-openai-chat-concurrency2";

    #[test]
    fn the_raw_export_is_detected_and_the_summary_is_not() {
        let raw = format!("{DIRECTORY}/profile_export.json");
        assert!(GenaiPerf.examine_head(&raw, &head(&raw)).reads());
        assert!(GenaiPerf.examine_head("renamed.json", &head(&raw)).reads());
        let summary = format!("{DIRECTORY}/profile_export_genai_perf.json");
        assert!(!GenaiPerf.examine_head(&summary, &head(&summary)).reads());
        let aiperf =
            "aiperf-v010/artifacts/qwen3-8b-openai-chat-concurrency8/profile_export_aiperf.json";
        assert!(!GenaiPerf.examine_head(aiperf, &head(aiperf)).reads());
        // No other format claims either file.
        for format in super::super::all() {
            if format.name() != "genai-perf" {
                assert!(
                    !crate::formats::detect(format, &raw, &head(&raw)),
                    "{}",
                    format.name()
                );
            }
            assert!(
                !crate::formats::detect(format, &summary, &head(&summary)),
                "{}",
                format.name()
            );
        }
    }

    #[test]
    fn latencies_come_from_integer_nanosecond_differences() {
        let requests = vec![serde_json::json!({
            "timestamp": 1772363000000340949u64,
            "response_timestamps": [1772363000048175099u64, 1772363000094758964u64],
        })];
        let mut warnings = Vec::new();
        let rows = read_requests(&requests, "x.json", 0, &mut warnings);
        assert!(warnings.is_empty());
        assert_eq!(rows[0].ttft_ms, Some(47_834_150.0 / 1e6));
        assert_eq!(rows[0].wall_ms, Some(94_418_015.0 / 1e6));
        assert_eq!(rows[0].start_s, Some(0.0));
    }
}
