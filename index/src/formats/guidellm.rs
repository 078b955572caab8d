//! GuideLLM reports (docs/formats.md): one `benchmarks.json` holds every load level of an invocation, one
//! record per benchmark. Requests come from `requests.{successful,errored,incomplete}`; those whose span does not
//! overlap the measurement window (warm-up and cool-down) are left out, as the tool's own statistics leave them
//! out. Report versions 1 (0.5, `args`) and 2 (`config`) are read, and 0.3 reports, which have no `metadata`
//! (the strategy under each benchmark's `args`, the model under its `worker`, requests with `start_time` and
//! `end_time`, only measured requests listed); any other version is reported and skipped.

use super::RunFormat;
use crate::parse::json::{self, field_number, field_text};
use crate::parse::model_name;
use crate::parse::time::{self, Clock};
use crate::records::verdict::{self, Mark, Signature, Verdict};
use crate::run::record::{FileAt, KeyParts, Part, Request, RunRecord, Started};
use crate::storage;
use cellscope_model::api::Warning;
use cellscope_model::stat::Stat;
use serde_json::Value as Json;
use std::collections::BTreeMap;

pub(super) struct Guidellm;

/// The format, as the registry lists it.
pub(crate) static FORMAT: &dyn RunFormat = &Guidellm;

/// What makes a JSON object a GuideLLM report: its benchmarks, and a generative one or GuideLLM's version.
const SIGNATURES: &[Signature] = &[&[
    &[Mark::Key("benchmarks")],
    &[
        Mark::Text("generative_benchmark"),
        Mark::Key("guidellm_version"),
    ],
]];

/// What a file GuideLLM writes beside its report is: the CSV summary of the same benchmarks (by its default name,
/// or by the first cell of its header).
fn side_file(path: &str, head: &[u8]) -> Option<&'static str> {
    let name = storage::file_name(path);
    (name == "benchmarks.csv" || name.ends_with(".csv") && head.starts_with(b"Run Info,"))
        .then_some("GuideLLM's CSV summary of a report's benchmarks")
}

/// The report versions whose benchmark and request shapes this reader knows.
const KNOWN_VERSIONS: [u64; 2] = [1, 2];

/// The two shapes of a report, told apart by `metadata` (dispatch on `metadata.version`, then
/// on `args` vs `config` vs neither).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// GuideLLM 0.3: `{"benchmarks": [...]}`, each benchmark with `args`, `worker`, `request_loader`,
    /// `request_totals` and GenerativeTextResponseStats requests (`start_time`, `end_time`, epoch s).
    V03,
    /// `metadata.version` 1 (0.5, `args`) or 2 (`config`): each benchmark with `config`, `scheduler_metrics`
    /// and GenerativeRequestStats requests (`request_start_time`, `request_end_time`).
    Versioned,
}

impl RunFormat for Guidellm {
    fn name(&self) -> &'static str {
        "guidellm"
    }

    /// A JSON object with `benchmarks` and either a `generative_benchmark` entry or GuideLLM's
    /// `guidellm_version` metadata, whatever `--output-path` named it. The version is not looked at here, so a
    /// report of an unknown version is claimed and reported rather than silently ignored.
    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        let (path, head) = (file.path, file.head);
        verdict::object_file_verdict(path, head, "a GuideLLM report", SIGNATURES)
            .or_side_file(side_file(path, head), || self.run_root(path))
    }

    fn records(&self, file: &FileAt<'_>, warnings: &mut Vec<Warning>) -> Vec<RunRecord> {
        let (storage, path) = (file.storage, file.path);
        let Some(report) = crate::parse::read_object(storage, path, "report", warnings) else {
            return Vec::new();
        };
        let version = json::at(&report, "metadata.version");
        let shape = if report.get("metadata").is_none() {
            Shape::V03
        } else {
            Shape::Versioned
        };
        if shape == Shape::Versioned
            && !version
                .and_then(Json::as_u64)
                .is_some_and(|version| KNOWN_VERSIONS.contains(&version))
        {
            let message = match version {
                Some(version) => format!(
                    "the report's metadata.version is {version}, which cellscope does not read (it reads 1 \
                     and 2); the file is skipped"
                ),
                None => "the report's metadata has no version, a shape cellscope does not read (it reads \
                         metadata.version 1 and 2, and 0.3 reports without metadata); the file is skipped"
                    .to_string(),
            };
            warnings.push(Warning::error("unknown_version", message).file(path));
            return Vec::new();
        }
        let Some(benchmarks) = report.get("benchmarks").and_then(Json::as_array) else {
            warnings.push(
                Warning::error(
                    "invalid_result",
                    "`benchmarks` is not an array; the file is left out",
                )
                .file(path),
            );
            return Vec::new();
        };
        let mut records = Vec::new();
        for (index, benchmark) in benchmarks.iter().enumerate() {
            let record_index = index as u32;
            match record(&report, benchmark, record_index, shape) {
                Ok(record) => records.push(RunRecord {
                    started: started(benchmark, record_index, path, warnings),
                    ..record
                }),
                Err(message) => warnings.push(
                    Warning::error(
                        "invalid_result",
                        format!("benchmark {record_index}: {message}; it is left out"),
                    )
                    .file(path),
                ),
            }
        }
        records
    }
}

/// Where a benchmark says it started, epoch seconds: its own `start_time` (v0.5 on), else `run_stats` (v0.3), else
/// the scheduler's.
const START_KEYS: [&str; 4] = [
    "start_time",
    "run_stats.start_time",
    "scheduler_metrics.start_time",
    "scheduler_state.start_time",
];

fn started(
    benchmark: &Json,
    index: u32,
    path: &str,
    warnings: &mut Vec<Warning>,
) -> Option<Started> {
    let (key, value) = START_KEYS.iter().find_map(|key| {
        Some((
            key,
            json::at(benchmark, key).filter(|value| !value.is_null())?,
        ))
    })?;
    time::started(
        Some(value),
        Clock::EpochS,
        &format!("benchmarks[{index}].{key}"),
        path,
        warnings,
    )
}

fn record(report: &Json, benchmark: &Json, index: u32, shape: Shape) -> Result<RunRecord, String> {
    if !benchmark.is_object() {
        return Err("it is not a JSON object".to_string());
    }
    let config = benchmark.get("config").unwrap_or(&Json::Null);
    let lists = match benchmark.get("requests") {
        Some(lists @ Json::Object(_)) => lists,
        None | Some(Json::Null) => return Err("it has no `requests` lists".to_string()),
        Some(other) => {
            return Err(format!(
                "`requests` is {}, not the object of status lists (`successful`, `errored`, `incomplete`)",
                json_kind(other)
            ));
        }
    };
    // 0.3 keeps the strategy under `args`; later versions under `config`.
    let strategy_field = match shape {
        Shape::V03 => "args.strategy",
        Shape::Versioned => "config.strategy",
    };
    let strategy = json::at(benchmark, strategy_field).unwrap_or(&Json::Null);
    let rate = offered_rate(strategy, strategy_field);
    let mut key = KeyParts {
        n: if rate.is_some() {
            None
        } else {
            concurrency(strategy, strategy_field)?
        },
        rate,
        model: model(report, benchmark),
        workload: match shape {
            Shape::V03 => workload_v03(benchmark),
            Shape::Versioned => workload(report, config),
        },
        ..KeyParts::default()
    };
    // 0.3's `args.strategy_index` is the strategy's place in the profile (each is a different load level),
    // not a repetition: the default rule numbers repetitions.
    if let Some(run_index) = json::field_count(config, "run_index") {
        key.rep = Part::read(run_index.to_string(), "field `config.run_index`");
    }
    // 0.3 lists only the measured requests, and records no window.
    let window = json::at(benchmark, "scheduler_metrics.measure_start_time")
        .and_then(json::number)
        .zip(json::at(benchmark, "scheduler_metrics.measure_end_time").and_then(json::number));
    let mut requests = Vec::new();
    let mut outside = 0usize;
    for list in ["successful", "errored", "incomplete"] {
        let Some(entries) = lists.get(list) else {
            continue;
        };
        let entries = entries
            .as_array()
            .ok_or_else(|| format!("`requests.{list}` is not an array"))?;
        for entry in entries {
            let request = request(entry, list, shape);
            let inside = match (window, request.start_s, request.end_s) {
                (Some((low, high)), Some(start), Some(end)) => end >= low && start <= high,
                _ => true,
            };
            if inside {
                requests.push(request);
            } else {
                outside += 1;
            }
        }
    }
    let mut notes = Vec::new();
    if let Some(kind @ ("constant" | "poisson")) = field_text(strategy, "type_") {
        // Both offer the same mean rate; the arrival process tells them apart, and the key does not hold it.
        notes.push(format!(
            "GuideLLM strategy `{kind}`: requests arrive {}",
            match kind {
                "constant" => "evenly spaced at the offered rate",
                _ => "as a Poisson process at the offered rate",
            }
        ));
    }
    if outside > 0 {
        notes.push(format!(
            "{outside} listed requests outside the measurement window (warm-up and cool-down) were left out, as \
             the tool's statistics leave them out"
        ));
    }
    match shape {
        Shape::V03 => notes.push(
            "a GuideLLM 0.3 report: its request lists hold the measured requests only (warm-up and cool-down \
             are not listed)"
                .to_string(),
        ),
        Shape::Versioned => notes.push(
            "the tool's percentiles take sorted[min(floor(q·n), n−1)]; the recomputed ones interpolate \
             linearly, so they may differ slightly"
                .to_string(),
        ),
    }
    // Sampled request lists (`sample_requests`, 0.3's `request_samples` after `--output-sampling`) hold fewer
    // requests than were sent: not a sign of failure.
    let sampled = [
        config.get("sample_requests"),
        benchmark.get("request_samples"),
    ]
    .into_iter()
    .flatten()
    .any(|sample| !sample.is_null());
    if sampled {
        notes.push(
            "the report keeps a sample of the requests; the recomputed statistics are of the sample".to_string(),
        );
    }
    let totals =
        json::at(benchmark, "metrics.request_totals").or_else(|| benchmark.get("request_totals"));
    let total = totals.and_then(|totals| json::field_count(totals, "total"));
    let mut fields = benchmark.clone();
    if let Json::Object(map) = &mut fields {
        // The request lists are the rows, not fields to map key dimensions from.
        map.remove("requests");
    }
    Ok(RunRecord {
        record: index,
        line: None,
        fields,
        key,
        requests,
        has_requests: true,
        expected_rows: if sampled { None } else { total },
        // The request lists are the census; the totals only say how many were sent.
        completed: None,
        failed: None,
        duration_s: field_number(benchmark, "duration"),
        reported: reported(benchmark),
        reported_figures: figures(benchmark),
        wall_derived: false,
        notes,
        recorded: recorded(report, benchmark),
        ..RunRecord::default()
    })
}

/// The server a benchmark ran against (`args.target`, `config.backend.target`, 0.3's `worker.backend_target`):
/// reports of one folder against two servers are two deployments, never repetitions.
fn recorded(report: &Json, benchmark: &Json) -> BTreeMap<String, String> {
    [
        json::at(report, "args.target"),
        json::at(benchmark, "config.backend.target"),
        json::at(benchmark, "worker.backend_target"),
    ]
    .into_iter()
    .flatten()
    .find_map(Json::as_str)
    .map(|target| BTreeMap::from([("target".to_string(), target.to_string())]))
    .unwrap_or_default()
}

/// The offered rate of a rate-driven strategy: `throughput` sends everything at once (an unbounded rate),
/// `constant` and `poisson` offer their `rate`. `None` for the closed-loop strategies.
fn offered_rate(strategy: &Json, at: &str) -> Option<Part> {
    match field_text(strategy, "type_") {
        Some("throughput") => {
            Part::inferred("inf", "a throughput strategy sends every request at once")
        }
        Some(kind @ ("constant" | "poisson")) => {
            let part = crate::records::rate_part(strategy, "rate")?;
            Some(Part {
                how: crate::run::record::How::Read(format!(
                    "field `{at}.rate` (a {kind} strategy)"
                )),
                ..part
            })
        }
        _ => None,
    }
}

/// The concurrency of a strategy: `streams` of a concurrent one, 1 (or its `max_concurrency`) for synchronous,
/// the cap `max_concurrency` of a rate-driven one (none: the default rules then report the record).
/// `at` names where the strategy is (`config.strategy`, 0.3's `args.strategy`).
fn concurrency(strategy: &Json, at: &str) -> Result<Option<Part>, String> {
    let whole = |field: &str| -> Result<Option<u32>, String> {
        match strategy.get(field) {
            None | Some(Json::Null) => Ok(None),
            Some(value) => json::number(value)
                .filter(|n| n.fract() == 0.0 && *n >= 1.0)
                .and_then(|n| u32::try_from(n as u64).ok())
                .map(Some)
                .ok_or_else(|| format!("`{at}.{field}` is not a whole number: {value}")),
        }
    };
    let read = |n: u32, field: &str| Part::read(n.to_string(), format!("field `{at}.{field}`"));
    Ok(match field_text(strategy, "type_") {
        Some("concurrent") => whole("streams")?.and_then(|n| read(n, "streams")),
        Some("synchronous") => match whole("max_concurrency")? {
            Some(n) => read(n, "max_concurrency"),
            None => Part::inferred("1", "a synchronous strategy sends one request at a time"),
        },
        _ => whole("max_concurrency")?.and_then(|n| read(n, "max_concurrency")),
    })
}

/// What a JSON value is, for messages.
fn json_kind(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

/// The model: the report's `args.model` (0.5), else the benchmark's backend model.
fn model(report: &Json, benchmark: &Json) -> Option<Part> {
    [
        (report, "args.model", "field `args.model`"),
        (
            benchmark,
            "config.backend.model",
            "field `config.backend.model`",
        ),
        (
            benchmark,
            "worker.backend_model",
            "field `worker.backend_model`",
        ),
    ]
    .into_iter()
    .find_map(|(value, path, field)| {
        let name = json::at(value, path)?.as_str()?;
        Part::read(model_name(name), field)
    })
}

/// The workload: the data specification the requests were made from (`prompt_tokens=256,output_tokens=12`, a
/// dataset name or file), when there is one.
fn workload(report: &Json, config: &Json) -> Option<Part> {
    [
        (report, "args.data", "field `args.data`"),
        (config, "requests.data", "field `config.requests.data`"),
    ]
    .into_iter()
    .find_map(|(value, path, field)| {
        let data = match json::at(value, path)? {
            Json::Array(items) if items.len() == 1 => items[0].as_str()?,
            Json::String(data) => data.as_str(),
            _ => return None,
        };
        Part::read(storage::file_name(data.trim_end_matches('/')), field)
    })
}

/// 0.3's workload: the data specification of the benchmark's request loader.
fn workload_v03(benchmark: &Json) -> Option<Part> {
    let data = json::at(benchmark, "request_loader.data")?.as_str()?;
    Part::read(
        storage::file_name(data.trim_end_matches('/')),
        "field `request_loader.data`",
    )
}

/// One request of list `list`: latency in s, TTFT in ms, timestamps in epoch s (0.3: `start_time`/`end_time`,
/// later `request_start_time`/`request_end_time`).
fn request(entry: &Json, list: &str, shape: Shape) -> Request {
    let error = match list {
        "successful" => None,
        "incomplete" => Some("incomplete (cancelled when the benchmark ended)".to_string()),
        _ => {
            let text = json::at(entry, "info.error")
                .and_then(Json::as_str)
                .or_else(|| field_text(entry, "error"))
                .unwrap_or_default();
            // An HTTP status in the error text (`Server error '500 Internal Server Error'`) leads, so it becomes
            // the row's status.
            Some(match http_status(text) {
                Some(code) => format!("{code} {text}"),
                None => text.to_string(),
            })
        }
    };
    let (start, end) = match shape {
        Shape::V03 => ("start_time", "end_time"),
        Shape::Versioned => ("request_start_time", "request_end_time"),
    };
    let start_s = field_number(entry, start);
    let end_s = field_number(entry, end);
    // `request_latency` is computed from the two times when the report is written; a report whose computed
    // fields were dropped still has them.
    let latency_s = field_number(entry, "request_latency").or_else(|| {
        start_s
            .zip(end_s)
            .filter(|_| shape == Shape::V03)
            .map(|(start, end)| end - start)
    });
    Request {
        wall_ms: latency_s.map(|seconds| seconds * 1000.0),
        ttft_ms: field_number(entry, "time_to_first_token_ms"),
        // The report keeps each request's mean inter-token latency, not its gaps.
        itl_ms: None,
        prompt_tokens: field_number(entry, "prompt_tokens"),
        completion_tokens: field_number(entry, "output_tokens"),
        start_s: start_s.filter(|_| end_s.is_some()),
        end_s: end_s.filter(|_| start_s.is_some()),
        error,
    }
}

/// A quoted HTTP status (`'500 …`) in an error text.
fn http_status(text: &str) -> Option<&str> {
    text.match_indices('\'').find_map(|(position, _)| {
        let code = text.get(position + 1..position + 4)?;
        (code.chars().all(|c| c.is_ascii_digit())
            && text[position + 4..].starts_with(' ')
            && (code.starts_with('4') || code.starts_with('5')))
        .then_some(code)
    })
}

/// Every number of the benchmark's own figures: its top-level numbers, and each statistic of its `metrics`
/// as `metrics.<metric>.<group>.<stat>` (percentiles as `….percentiles.p99`).
fn figures(benchmark: &Json) -> BTreeMap<String, f64> {
    let mut out = crate::records::figures::top_level_figures(benchmark);
    if let Some(metrics) = benchmark.get("metrics") {
        crate::records::figures::nested_figures(metrics, "metrics", 4, &mut out);
    }
    out
}

/// The benchmark's statistics of successful requests as cells-table columns (request latency s → ms).
fn reported(benchmark: &Json) -> BTreeMap<String, f64> {
    let successful = |metric: &str| json::at(benchmark, &format!("metrics.{metric}.successful"));
    let stat = |metric: &str, stat: &str| -> Option<f64> {
        let summary = successful(metric)?;
        match stat {
            "median" => field_number(summary, "median")
                .or_else(|| json::at(summary, "percentiles.p50").and_then(json::number)),
            "p95" | "p99" => {
                json::at(summary, &format!("percentiles.{stat}")).and_then(json::number)
            }
            _ => field_number(summary, stat),
        }
    };
    let figures = [
        (
            Stat::MeanWallMs,
            stat("request_latency", "mean").map(|s| s * 1000.0),
        ),
        (
            Stat::P50WallMs,
            stat("request_latency", "median").map(|s| s * 1000.0),
        ),
        (
            Stat::P95WallMs,
            stat("request_latency", "p95").map(|s| s * 1000.0),
        ),
        (
            Stat::P99WallMs,
            stat("request_latency", "p99").map(|s| s * 1000.0),
        ),
        (Stat::P50TtftMs, stat("time_to_first_token_ms", "median")),
        (Stat::P95TtftMs, stat("time_to_first_token_ms", "p95")),
        (Stat::MeanPromptTokens, stat("prompt_token_count", "mean")),
        (
            Stat::MeanCompletionTokens,
            stat("output_token_count", "mean"),
        ),
        (Stat::AggregateTps, stat("output_tokens_per_second", "mean")),
        (Stat::MeanTtftMs, stat("time_to_first_token_ms", "mean")),
        (Stat::P99TtftMs, stat("time_to_first_token_ms", "p99")),
        // GuideLLM's inter-token latency of a request is (last token − first token) / (output tokens − 1): a TPOT.
        (Stat::MeanTpotMs, stat("inter_token_latency_ms", "mean")),
        (Stat::P50TpotMs, stat("inter_token_latency_ms", "median")),
        (Stat::P95TpotMs, stat("inter_token_latency_ms", "p95")),
        (Stat::P99TpotMs, stat("inter_token_latency_ms", "p99")),
        (
            Stat::RequestThroughputRps,
            stat("requests_per_second", "mean"),
        ),
    ];
    figures
        .into_iter()
        .filter_map(|(column, value)| {
            value
                .filter(|value| value.is_finite())
                .map(|value| (column.name().to_string(), value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::fixture_head as head;

    #[test]
    fn reports_are_detected_whatever_their_version() {
        for report in [
            "guidellm-v05/benchmarks.json",
            "guidellm-v03/benchmarks.json",
            "guidellm-v03-bad/benchmarks.json",
            "guidellm-bad/good/benchmarks.json",
            "guidellm-bad/bad/benchmarks.json",
        ] {
            assert!(
                crate::formats::detect(&Guidellm, report, &head(report)),
                "{report}"
            );
            assert!(crate::formats::detect(
                &Guidellm,
                "out/sweep-report.json",
                &head(report)
            ));
            for format in super::super::all() {
                if format.name() != "guidellm" {
                    assert!(
                        !crate::formats::detect(format, report, &head(report)),
                        "{}",
                        format.name()
                    );
                }
            }
        }
        let other = "vllm-detailed/openai-infqps-concurrency1-Qwen3-8B-20260301-101500.json";
        assert!(!crate::formats::detect(&Guidellm, other, &head(other)));
    }

    #[test]
    fn strategies_give_the_concurrency() {
        let n = |strategy: Json| {
            concurrency(&strategy, "config.strategy")
                .unwrap()
                .map(|part| part.value)
        };
        assert_eq!(
            n(serde_json::json!({"type_": "concurrent", "streams": 4})).as_deref(),
            Some("4")
        );
        assert_eq!(
            n(serde_json::json!({"type_": "synchronous"})).as_deref(),
            Some("1")
        );
        assert_eq!(
            n(serde_json::json!({"type_": "constant", "rate": 5.0})),
            None
        );
        assert!(
            concurrency(
                &serde_json::json!({"type_": "concurrent", "streams": 2.5}),
                "args.strategy"
            )
            .is_err_and(|message| message.contains("`args.strategy.streams`"))
        );
        assert_eq!(
            http_status("HTTPStatusError: Server error '500 Internal Server Error' for url"),
            Some("500")
        );
        assert_eq!(http_status("timeout"), None);
    }
}
