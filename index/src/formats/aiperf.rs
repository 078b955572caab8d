//! NVIDIA AIPerf artifacts (docs/formats.md): the summary `profile_export_aiperf.json` (the v0.1
//! `{"records": {...}}` shape or the newer top-level metric objects) claims the run, and its requests are read
//! from the sibling `profile_export.jsonl`, one record per line (old `ttft` or new `time_to_first_token` tags,
//! warm-up records dropped). Multi-trial and sweep layouts (`profile_runs/trial_NNNN/concurrency_N/`) are one run,
//! the trial being the repetition; the sweep's own aggregates are derived and never read as cells.
//!
//! A `profile_export.jsonl` with no summary beside it (AIPerf writes the records as they arrive and the summary
//! at the end, so a run stopped early leaves only the records; or the summary was removed) is a run of its own:
//! every figure is recomputed from the records, the concurrency comes from the directory name and the model from
//! the directory's `<model>-<service kind>-<endpoint>-…` prefix, both inferred, and nothing is reported.

use super::RunFormat;
use crate::parse::json::{self, field_number, head_has_key, number};
use crate::parse::model_name;
use crate::parse::perf_metrics::{TTFT_TAGS, directory_model, ms_per_unit, reported};
use crate::parse::time::{self, Clock};
use crate::records::verdict::{self, Mark, Nearness, Signature, Verdict};
use crate::run::record::{FileAt, KeyParts, Part, Request, RunRecord};
use crate::storage::{self, Storage};
use cellscope_model::api::Warning;
use serde_json::Value as Json;
use std::collections::BTreeMap;

pub(super) struct Aiperf;

/// The format, as the registry lists it.
pub(crate) static FORMAT: &dyn RunFormat = &Aiperf;

/// The per-request file AIPerf writes beside its summary (export level `records`, the default).
const PER_REQUEST_FILE: &str = "profile_export.jsonl";

/// Summaries AIPerf derives from other runs (a sweep's or a value's aggregate over trials) or slices of one run
/// (time slices): reading them as cells would count the same requests twice.
fn is_derived_file(name: &str) -> bool {
    ["_sweep.json", "_aggregate.json", "_timeslices.json"]
        .iter()
        .any(|suffix| name.ends_with(suffix))
}

/// A directory AIPerf makes per trial or per sweep value (`profile_runs`, `trial_0001`, `run_0002`,
/// `concurrency_10`, `request_rate_5.0`, `concurrency_10__isl_512`), or one named for a load level by the user
/// or by AIPerf's default artifact name (`…-openai-chat-concurrency8`).
fn is_layout_directory(name: &str) -> bool {
    name == "profile_runs"
        || trial_number(name).is_some()
        || crate::records::is_load_level_directory(name)
        || is_sweep_value_directory(name)
}

/// Parameters AIPerf sweeps over, which name its per-value directories first.
const SWEEP_PARAMETERS: [&str; 6] = [
    "concurrency",
    "request_rate",
    "users",
    "isl",
    "osl",
    "request_count",
];

/// A sweep-value directory: `<parameter>_<value>` parts joined by `__`, the first naming a swept parameter (a
/// bare `<word>_<number>` directory of the user's, like `bench_20260301`, is not one).
fn is_sweep_value_directory(name: &str) -> bool {
    fn value_part(part: &str) -> Option<(&str, &str)> {
        part.rsplit_once('_').filter(|(parameter, value)| {
            !parameter.is_empty()
                && parameter
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_')
                && !value.is_empty()
                && value.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
    }
    let mut parts = name.split("__");
    parts
        .next()
        .and_then(value_part)
        .is_some_and(|(parameter, _)| SWEEP_PARAMETERS.contains(&parameter))
        && parts.all(|part| value_part(part).is_some())
}

/// The number of a `trial_NNNN` or `run_NNNN` directory.
fn trial_number(name: &str) -> Option<u32> {
    let digits = name
        .strip_prefix("trial_")
        .or_else(|| name.strip_prefix("run_"))?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// What makes a JSON object an AIPerf summary: its version, the v0.1 `records` map of tagged metrics, or a
/// `request_latency` metric beside keys only AIPerf writes.
const SUMMARY: &[Signature] = &[
    &[&[Mark::Key("aiperf_version")]],
    &[
        &[Mark::Key("records")],
        &[Mark::Key("tag")],
        &[Mark::Key("header")],
    ],
    &[
        &[Mark::Key("request_latency")],
        &[
            Mark::Key("request_count"),
            Mark::Key("benchmark_duration"),
            Mark::Key("error_summary"),
            Mark::Key("was_cancelled"),
        ],
    ],
];

/// What makes a line an AIPerf per-request record: the record's `metadata.request_start_ns` and its `metrics`.
const REQUEST_RECORD: &[Signature] = &[&[
    &[Mark::Key("metadata")],
    &[Mark::Key("metrics")],
    &[Mark::Key("request_start_ns")],
]];

/// What a derived summary is, for the `not_recognised` finding and `--explain`.
const DERIVED: &str =
    "an AIPerf aggregate over trials or sweep values, derived from runs read on their own";

/// What a file AIPerf writes beside a run's summary, and that is not read, is.
fn side_file(name: &str) -> Option<&'static str> {
    if name.ends_with("_aiperf.csv") || name.ends_with("_timeslices.csv") {
        Some("AIPerf's CSV export of a summary's figures")
    } else if name == "inputs.json" {
        Some("the inputs AIPerf sent")
    } else {
        None
    }
}

/// The run a derived summary belongs to: the one above its `aggregate` or `sweep_aggregate` directory.
fn aggregate_run_root(path: &str) -> String {
    let directory = storage::parent(path);
    let above = match storage::file_name(directory) {
        "aggregate" | "sweep_aggregate" => storage::parent(directory),
        _ => directory,
    };
    Aiperf.run_root(&storage::join(above, storage::file_name(path)))
}

/// What AIPerf makes of a file as a per-request file: JSON Lines whose first object has the marks of a record.
fn request_file_verdict(path: &str, head: &[u8]) -> Verdict {
    if !storage::file_name(path).ends_with(".jsonl") {
        return Verdict::declines(
            Nearness::OtherKind,
            "a file that is not .jsonl, which AIPerf's per-request records are",
        );
    }
    if !json::starts_with_object(head) {
        return Verdict::declines(
            Nearness::OtherKind,
            "a file that does not open a JSON object, where AIPerf writes one per line",
        );
    }
    verdict::signature_verdict(head, "an AIPerf per-request record", REQUEST_RECORD)
}

/// Whether the directory of `path` holds a summary (any name: `--profile-export-prefix` renames it), whose
/// record reads the per-request file itself.
fn has_summary_beside(storage: &dyn Storage, path: &str) -> bool {
    let directory = storage::parent(path);
    let Ok(entries) = storage.list(directory) else {
        // Unlistable: the per-request file is left to the summary, as it would be with one.
        return true;
    };
    entries.iter().any(|entry| {
        entry.kind == storage::EntryKind::File && entry.name.ends_with(".json") && {
            let sibling = storage::join(directory, &entry.name);
            storage
                .read_range(&sibling, 0..crate::parse::HEAD_BYTES)
                .is_ok_and(|head| Aiperf.examine_head(&sibling, &head).reads())
        }
    })
}

/// The per-request files a summary in `path`'s directory reads, in preference: `profile_export.jsonl`, then each
/// summary's own name as `.jsonl` (`--profile-export-prefix foo` writes `foo.json` and `foo.jsonl`).
fn request_file_names(storage: &dyn Storage, path: &str) -> Vec<String> {
    let directory = storage::parent(path);
    let mut names = vec![storage::join(directory, PER_REQUEST_FILE)];
    if let Ok(entries) = storage.list(directory) {
        let mut stems: Vec<String> = entries
            .into_iter()
            .filter(|entry| entry.kind == storage::EntryKind::File)
            .filter_map(|entry| entry.name.strip_suffix(".json").map(str::to_string))
            .collect();
        stems.sort();
        names.extend(
            stems
                .into_iter()
                .map(|stem| storage::join(directory, &format!("{stem}.jsonl"))),
        );
    }
    names
}

impl RunFormat for Aiperf {
    fn name(&self) -> &'static str {
        "aiperf"
    }

    /// A summary ([`RunFormat::examine`]), or a per-request file with no summary beside it (beside one, it is
    /// the summary's to read).
    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        let (storage, path, head) = (file.storage, file.path, file.head);
        let mapping = file.mapping;
        let _ = mapping;
        let summary = self.examine_head(path, head);
        let name = storage::file_name(path);
        if let Some(stem) = name.strip_suffix(".csv") {
            // `--profile-export-prefix foo` writes the summary's CSV export as `foo.csv` beside `foo.json`.
            let json = storage::join(storage::parent(path), &format!("{stem}.json"));
            let summarised = storage
                .read_range(&json, 0..crate::parse::HEAD_BYTES)
                .is_ok_and(|head| self.examine_head(&json, &head).reads());
            if summarised {
                return Verdict::side_file(
                    "AIPerf's CSV export of a summary's figures",
                    self.run_root(path),
                );
            }
        }
        if summary.reads() || !name.ends_with(".jsonl") {
            return summary;
        }
        let verdict = request_file_verdict(path, head);
        if !has_summary_beside(storage, path) {
            return verdict;
        }
        // The summary reads its records by name, so a file so named is its own whatever its first line holds
        // (an empty one is named as empty instead, and the summary's cell is what it is alone).
        let empty = head.iter().all(u8::is_ascii_whitespace);
        if !empty && request_file_names(storage, path).contains(&path.to_string()) {
            return Verdict::side_file(
                "the per-request records of the AIPerf summary beside it",
                self.run_root(path),
            );
        }
        match verdict {
            Verdict::Reads => Verdict::declines(
                Nearness::SomeMarks,
                format!(
                    "AIPerf per-request records under a name the summary beside it does not read (it reads \
                     `{PER_REQUEST_FILE}`, or its own name as `.jsonl`); they are not read"
                ),
            ),
            other => other,
        }
    }

    /// The directory above every trial and sweep-value directory: `<base>/profile_runs/trial_0001/concurrency_4`
    /// and `<base>/concurrency_4/profile_runs/trial_0001` are both runs of `<base>`.
    fn run_root(&self, path: &str) -> String {
        let mut directory = storage::parent(path);
        while !directory.is_empty() && is_layout_directory(storage::file_name(directory)) {
            directory = storage::parent(directory);
        }
        directory.to_string()
    }

    fn records(&self, file: &FileAt<'_>, warnings: &mut Vec<Warning>) -> Vec<RunRecord> {
        let (storage, path) = (file.storage, file.path);
        if storage::file_name(path).ends_with(".jsonl") {
            return records_only(storage, path, warnings).into_iter().collect();
        }
        let Some(summary) = crate::parse::read_object(storage, path, "summary", warnings) else {
            return Vec::new();
        };
        let mut record = record(storage, path, &summary, warnings);
        // A naive local time (Python's `isoformat()`), taken as UTC (docs/formats.md).
        record.started = time::started(
            summary.get("start_time"),
            Clock::Iso,
            "start_time",
            path,
            warnings,
        );
        vec![record]
    }
}

impl Aiperf {
    /// A JSON object that is an AIPerf summary: `aiperf_version`, or the v0.1 `records` map of tagged metrics,
    /// or (files without version keys, as users have committed them) a `request_latency` metric next to keys only
    /// AIPerf writes (`request_count`, `benchmark_duration`, `error_summary`, `was_cancelled`). GenAI-Perf's summary
    /// has none of those, and AIPerf's aggregates over trials (`aggregation_type`) are not runs.
    pub(super) fn examine_head(&self, path: &str, head: &[u8]) -> Verdict {
        let name = storage::file_name(path);
        if is_derived_file(name) {
            return Verdict::side_file(DERIVED, aggregate_run_root(path));
        }
        if !name.ends_with(".json") {
            return side_file(name).map_or_else(
                || {
                    Verdict::declines(
                        Nearness::OtherKind,
                        "a file that is not .json, which an AIPerf summary is (its per-request records are \
                         .jsonl)",
                    )
                },
                |what| Verdict::side_file(what, self.run_root(path)),
            );
        }
        if !json::starts_with_object(head) {
            return Verdict::declines(
                Nearness::OtherKind,
                "a file that does not open a JSON object, which an AIPerf summary is",
            );
        }
        if head_has_key(head, "aggregation_type") || head_has_key(head, "per_combination_metrics") {
            return Verdict::side_file(DERIVED, aggregate_run_root(path));
        }
        let verdict = verdict::signature_verdict(head, "an AIPerf summary", SUMMARY);
        match side_file(name) {
            Some(what) if !verdict.reads() => Verdict::side_file(what, self.run_root(path)),
            _ => verdict,
        }
    }
}

/// The one record of a summary, with the requests of its sibling per-request file.
fn record(
    storage: &dyn Storage,
    path: &str,
    summary: &Json,
    warnings: &mut Vec<Warning>,
) -> RunRecord {
    // v0.1 nests the metrics under `records`; later versions write them at the top level.
    let metrics = match summary.get("records") {
        Some(records @ Json::Object(_)) => records,
        _ => summary,
    };
    let config = summary
        .get("input_config")
        .filter(|config| config.is_object());
    let mut key = KeyParts::default();
    let mut notes = Vec::new();
    let mut expected_rows = None;
    match config {
        Some(config) => {
            key.n = concurrency(config);
            key.model = model(config, &mut notes);
            key.workload = workload(config);
            expected_rows = requests_configured(config);
        }
        None => warnings.push(
            Warning::warn(
                "no_input_config",
                "the summary has no input_config: the concurrency comes from the directory name and the model \
                 is unknown (set model in cellscope.toml)",
            )
            .file(path),
        ),
    }
    if key.n.is_none() {
        key.n = cli_concurrency(summary);
    }
    if key.n.is_none() {
        key.rate = config.and_then(request_rate);
    }
    key.rep = trial(path);
    // The server's address tells runs against two servers apart (never repetitions of one cell).
    let recorded: BTreeMap<String, String> = config
        .and_then(|config| {
            json::at(config, "endpoint.urls")
                .and_then(|urls| urls.get(0))
                .or_else(|| json::at(config, "endpoint.url"))
        })
        .and_then(Json::as_str)
        .map(|url| BTreeMap::from([("endpoint_url".to_string(), url.to_string())]))
        .unwrap_or_default();
    let reported = reported(metrics);
    super::perf_csv::check_against(storage, path, &reported, warnings);
    let requests_path = storage::join(storage::parent(path), PER_REQUEST_FILE);
    let requests_path = request_file_names(storage, path)
        .into_iter()
        .find(|candidate| storage.stat(candidate).is_ok())
        .unwrap_or(requests_path);
    let (requests, has_requests) = match crate::parse::read_sibling(
        storage,
        &requests_path,
        warnings,
    ) {
        Some(bytes) => (requests(&bytes, &requests_path, warnings, &mut notes), true),
        None => {
            warnings.push(
                Warning::warn(
                    "no_request_file",
                    format!(
                        "there is no readable {PER_REQUEST_FILE} beside the summary: the cell shows the tool's \
                         aggregates only"
                    ),
                )
                .file(path),
            );
            (Vec::new(), false)
        }
    };
    let count = |name: &str| {
        metrics
            .get(name)
            .and_then(|metric| field_number(metric, "avg"))
            .filter(|value| value.is_finite() && *value >= 0.0 && value.fract() == 0.0)
            .and_then(|value| u32::try_from(value as u64).ok())
    };
    let (completed, failed) = if has_requests {
        // The per-request file says which requests failed; the summary's counts would only repeat it.
        (None, None)
    } else {
        let failed = count("error_request_count").or_else(|| error_summary_count(summary));
        (count("request_count"), failed)
    };
    let duration_s = metrics.get("benchmark_duration").and_then(|metric| {
        let value = field_number(metric, "avg")?;
        Some(value * seconds_per_unit(metric)?)
    });
    RunRecord {
        record: 0,
        line: None,
        fields: summary.clone(),
        key,
        requests,
        has_requests,
        expected_rows,
        completed,
        failed,
        duration_s,
        reported,
        reported_figures: crate::records::figures::metric_figures(metrics),
        wall_derived: false,
        notes,
        recorded,
        ..RunRecord::default()
    }
}

/// The trial of a multi-trial layout, from the innermost `trial_NNNN`/`run_NNNN` directory.
fn trial(path: &str) -> Option<Part> {
    storage::parent(path)
        .split('/')
        .rev()
        .find_map(|component| trial_number(component).map(|trial| (trial, component.to_string())))
        .and_then(|(trial, component)| {
            Part::read(
                trial.to_string(),
                format!("the trial directory `{component}`"),
            )
        })
}

/// The one record of a per-request file without a summary: its requests, recomputed; what the summary would
/// have said is inferred where it can be (the concurrency by the default rule from the directory name, the model
/// from the artifact directory's name) and the run is reported as one without a summary.
fn records_only(
    storage: &dyn Storage,
    path: &str,
    warnings: &mut Vec<Warning>,
) -> Option<RunRecord> {
    let bytes = crate::parse::read_file(storage, path, warnings)?;
    warnings.push(
        Warning::warn(
            "no_summary",
            "there is no AIPerf summary (profile_export_aiperf.json) beside these per-request records (a run \
             stopped before the summary was written, or the summary was removed): every figure is recomputed \
             from the records, the concurrency and the model are inferred from the directory name",
        )
        .file(path),
    );
    let mut notes = vec![
        "no summary beside the per-request file: every figure is recomputed from its records; the tool's own \
         aggregates, the configured request count and the run's configuration are unknown"
            .to_string(),
    ];
    let requests = requests(&bytes, path, warnings, &mut notes);
    let key = KeyParts {
        model: directory_model(storage::file_name(storage::parent(path))),
        rep: trial(path),
        ..KeyParts::default()
    };
    Some(RunRecord {
        key,
        requests,
        has_requests: true,
        reported_figures: BTreeMap::new(),
        notes,
        ..RunRecord::default()
    })
}

/// The profiling concurrency: the v0.10 `phases` entry named `profiling` (else the last phase counted in the
/// results), else the v0.1 `loadgen.concurrency`.
fn concurrency(config: &Json) -> Option<Part> {
    let phases = config.get("phases").and_then(Json::as_array);
    let profiling = phases.and_then(|phases| {
        phases
            .iter()
            .find(|phase| json::field_text(phase, "name") == Some("profiling"))
            .or_else(|| {
                phases.iter().rev().find(|phase| {
                    phase.get("exclude_from_results").and_then(Json::as_bool) != Some(true)
                })
            })
    });
    if let Some(n) = profiling.and_then(|phase| json::field_count(phase, "concurrency")) {
        return Part::read(
            n.to_string(),
            "field `input_config.phases[profiling].concurrency`",
        );
    }
    let n = json::at(config, "loadgen.concurrency").and_then(whole)?;
    Part::read(n.to_string(), "field `input_config.loadgen.concurrency`")
}

/// The offered request rate of the profiling phase (v0.10) or of `loadgen` (v0.1), when the run was rate-driven.
fn request_rate(config: &Json) -> Option<Part> {
    let phases = config.get("phases").and_then(Json::as_array);
    let profiling = phases.and_then(|phases| {
        phases
            .iter()
            .find(|phase| json::field_text(phase, "name") == Some("profiling"))
    });
    if let Some(phase) = profiling
        && let Some(part) = crate::records::rate_part(phase, "request_rate")
    {
        return Some(Part {
            how: crate::run::record::How::Read(
                "field `input_config.phases[profiling].request_rate`".into(),
            ),
            ..part
        });
    }
    let loadgen = config.get("loadgen")?;
    let part = crate::records::rate_part(loadgen, "request_rate")?;
    Some(Part {
        how: crate::run::record::How::Read("field `input_config.loadgen.request_rate`".into()),
        ..part
    })
}

/// `--concurrency N` in the recorded command line, when it names one level (`--concurrency 1,4` is a sweep).
fn cli_concurrency(summary: &Json) -> Option<Part> {
    let command = json::at(summary, "run_info.cli_command").and_then(Json::as_str)?;
    let mut words = command.split_whitespace();
    while let Some(word) = words.next() {
        let value = match word.strip_prefix("--concurrency") {
            Some("") => words.next(),
            Some(rest) => rest.strip_prefix('='),
            None => continue,
        };
        if let Some(n) = value.and_then(|value| value.parse::<u32>().ok()) {
            return Part::read(
                n.to_string(),
                "`--concurrency` in field `run_info.cli_command`",
            );
        }
    }
    None
}

/// The model: v0.10 `models.items[].name`, v0.1 `endpoint.model_names[]`.
fn model(config: &Json, notes: &mut Vec<String>) -> Option<Part> {
    let (names, field) = match json::at(config, "models.items").and_then(Json::as_array) {
        Some(items) => (
            items
                .iter()
                .filter_map(|item| json::field_text(item, "name"))
                .collect::<Vec<_>>(),
            "field `input_config.models.items[0].name`",
        ),
        None => (
            json::at(config, "endpoint.model_names")
                .and_then(Json::as_array)
                .map(|names| names.iter().filter_map(Json::as_str).collect())
                .unwrap_or_default(),
            "field `input_config.endpoint.model_names[0]`",
        ),
    };
    if names.len() > 1 {
        notes.push(format!(
            "the run sent requests to {} models ({}); the cell is keyed by the first",
            names.len(),
            names.join(", ")
        ));
    }
    Part::read(model_name(names.first()?), field)
}

/// The workload: v0.1 synthetic prompt lengths (`input.prompt.{input,output}_tokens.mean`), else the file name
/// of the first dataset.
fn workload(config: &Json) -> Option<Part> {
    let mean = |path: &str| json::at(config, path).and_then(whole);
    if let (Some(input), Some(output)) = (
        mean("input.prompt.input_tokens.mean"),
        mean("input.prompt.output_tokens.mean"),
    ) {
        return Part::read(
            format!("synthetic_{input}x{output}"),
            "fields `input_config.input.prompt.input_tokens.mean`, `….output_tokens.mean`",
        );
    }
    let dataset = config.get("datasets")?.as_array()?.first()?;
    let file = json::field_text(dataset, "path")?;
    Part::read(
        storage::file_name(file.trim_end_matches('/')),
        "field `input_config.datasets[0].path`",
    )
}

/// The requests the run was told to send in its measured phase, when the user set a count.
fn requests_configured(config: &Json) -> Option<u32> {
    config
        .get("phases")
        .and_then(Json::as_array)
        .and_then(|phases| {
            phases
                .iter()
                .find(|phase| json::field_text(phase, "name") == Some("profiling"))
        })
        .and_then(|phase| json::field_count(phase, "requests"))
        .or_else(|| json::at(config, "loadgen.request_count").and_then(whole))
}

/// The failed requests `error_summary` counts (0.8 writes no `error_request_count` when none failed).
fn error_summary_count(summary: &Json) -> Option<u32> {
    let entries = summary.get("error_summary")?.as_array()?;
    Some(
        entries
            .iter()
            .filter_map(|entry| json::field_count(entry, "count"))
            .sum(),
    )
}

/// A whole non-negative number (`4`, `4.0`, `"4"`).
fn whole(value: &Json) -> Option<u32> {
    number(value)
        .filter(|value| value.is_finite() && *value >= 0.0 && value.fract() == 0.0)
        .and_then(|value| u32::try_from(value as u64).ok())
}

fn seconds_per_unit(metric: &Json) -> Option<f64> {
    ms_per_unit(json::field_text(metric, "unit").unwrap_or("sec")).map(|ms| ms / 1000.0)
}

/// An integer timestamp in nanoseconds. Epoch nanoseconds exceed 2^53, so they are kept as integers and only
/// differences are turned into floating point.
pub(super) fn nanoseconds(value: &Json) -> Option<i128> {
    match value {
        Json::Number(number) => number
            .as_u64()
            .map(i128::from)
            .or_else(|| number.as_i64().map(i128::from))
            // A float timestamp has already lost its last digits; it is still the best there is.
            .or_else(|| number.as_f64().filter(|v| v.is_finite()).map(|v| v as i128)),
        Json::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

/// A value of a per-request metric (`{"value": 255.88, "unit": "ms"}`) in ms.
fn metric_ms(metrics: &Json, tags: &[&str]) -> Option<f64> {
    let metric = tags.iter().find_map(|tag| metrics.get(*tag))?;
    let factor = ms_per_unit(json::field_text(metric, "unit").unwrap_or("ms"))?;
    metric
        .get("value")
        .and_then(number)
        .map(|value| value * factor)
}

/// The gaps of a per-request list metric (`{"value": [25.0, 20.7, …], "unit": "ms"}`) in ms.
fn metric_gaps_ms(metrics: &Json, tag: &str) -> Option<Vec<f64>> {
    let metric = metrics.get(tag)?;
    let factor = ms_per_unit(json::field_text(metric, "unit").unwrap_or("ms"))?;
    let gaps = metric.get("value")?.as_array()?;
    Some(
        gaps.iter()
            .filter_map(number)
            .map(|gap| gap * factor)
            .collect(),
    )
}

fn metric_value(metrics: &Json, tags: &[&str]) -> Option<f64> {
    tags.iter()
        .find_map(|tag| metrics.get(*tag))
        .and_then(|metric| metric.get("value"))
        .and_then(number)
}

/// The error text of a failed record: `<code> <type>: <message>`, so an HTTP code becomes the row's status.
fn error_text(error: &Json) -> String {
    let Json::Object(_) = error else {
        return error.as_str().unwrap_or_default().to_string();
    };
    let code = error
        .get("code")
        .and_then(number)
        .map(|code| format!("{code} "))
        .unwrap_or_default();
    let kind = json::field_text(error, "type").unwrap_or("error");
    let message = json::field_text(error, "message").unwrap_or_default();
    format!("{code}{kind}: {message}")
}

/// The profiling requests of a `profile_export.jsonl`. Each line is read on its own, so a damaged line is
/// reported with its number and the others are kept.
fn requests(
    bytes: &[u8],
    path: &str,
    warnings: &mut Vec<Warning>,
    notes: &mut Vec<String>,
) -> Vec<Request> {
    let mut kept: Vec<(Request, Option<(i128, i128)>)> = Vec::new();
    let mut warmup = 0usize;
    for (index, line) in bytes.split(|byte| *byte == b'\n').enumerate() {
        let number = index as u64 + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let object = match json::parse(line) {
            Ok(object @ Json::Object(_)) => object,
            Ok(_) => {
                warnings.push(
                    Warning::error(
                        "invalid_record",
                        format!("line {number} is not a JSON object; the request is left out"),
                    )
                    .file(path)
                    .line(number),
                );
                continue;
            }
            Err(error) => {
                warnings.push(
                    Warning::error(
                        "invalid_json",
                        format!(
                            "line {number} is not valid JSON ({}); the request is left out, the other lines are \
                             read",
                            error.message
                        ),
                    )
                    .file(path)
                    .line(number),
                );
                continue;
            }
        };
        let metadata = object.get("metadata").unwrap_or(&Json::Null);
        // Records without a phase predate warm-up records and are all measured.
        if let Some(phase) = json::field_text(metadata, "benchmark_phase")
            && phase != "profiling"
        {
            warmup += 1;
            continue;
        }
        let metrics = object.get("metrics").unwrap_or(&Json::Null);
        let error = object
            .get("error")
            .filter(|error| !error.is_null())
            .map(error_text);
        let span = metadata
            .get("request_start_ns")
            .and_then(nanoseconds)
            .zip(metadata.get("request_end_ns").and_then(nanoseconds));
        let request = Request {
            wall_ms: metric_ms(metrics, &["request_latency"]),
            ttft_ms: metric_ms(metrics, &TTFT_TAGS),
            itl_ms: metric_gaps_ms(metrics, "inter_chunk_latency"),
            prompt_tokens: metric_value(metrics, &["input_sequence_length"]),
            completion_tokens: metric_value(
                metrics,
                &["output_sequence_length", "output_token_count"],
            ),
            start_s: None,
            end_s: None,
            error,
        };
        kept.push((request, span));
    }
    if warmup > 0 {
        notes.push(format!(
            "{warmup} warm-up records (`benchmark_phase` other than `profiling`) were left out, not counted"
        ));
    }
    // Times are seconds since the first measured request started: the differences are taken in integer
    // nanoseconds, so throughput keeps every digit the tool wrote.
    let base = kept
        .iter()
        .filter_map(|(_, span)| span.map(|(start, _)| start))
        .min();
    if let Some(base) = base {
        notes.push(
            "request times are seconds since the first measured request started (from the tool's epoch \
             nanoseconds)"
                .to_string(),
        );
        for (request, span) in &mut kept {
            if let Some((start, end)) = *span {
                request.start_s = Some((start - base) as f64 / 1e9);
                request.end_s = Some((end - base) as f64 / 1e9);
            }
        }
    }
    kept.into_iter().map(|(request, _)| request).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fixture(relative: &str) -> (String, Vec<u8>) {
        (relative.to_string(), crate::parse::fixture_head(relative))
    }

    #[test]
    fn summaries_are_detected_and_their_siblings_are_not() {
        for summary in [
            "aiperf-v01/artifacts/meta-llama_Llama-3.1-8B-Instruct-openai-chat-concurrency4/profile_export_aiperf.json",
            "aiperf-v010/artifacts/qwen3-8b-openai-chat-concurrency8/profile_export_aiperf.json",
            "aiperf-sweep/artifacts/qwen3-sweep/profile_runs/trial_0001/concurrency_4/profile_export_aiperf.json",
            "aiperf-bad/artifacts/meta-llama_Llama-3.1-8B-Instruct-openai-chat-concurrency8/profile_export_aiperf.json",
        ] {
            let (path, head) = fixture(summary);
            assert!(Aiperf.examine_head(&path, &head).reads(), "{summary}");
        }
        for other in [
            "aiperf-v010/artifacts/qwen3-8b-openai-chat-concurrency8/profile_export.jsonl",
            "aiperf-sweep/artifacts/qwen3-sweep/sweep_aggregate/profile_export_aiperf_sweep.json",
            "genai-perf/artifacts/meta-llama_Llama-3.1-8B-Instruct-openai-chat-concurrency2/profile_export_genai_perf.json",
            "genai-perf/artifacts/meta-llama_Llama-3.1-8B-Instruct-openai-chat-concurrency2/profile_export.json",
            "vllm-detailed/openai-infqps-concurrency1-Qwen3-8B-20260301-101500.json",
        ] {
            let Ok(bytes) = std::fs::read(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../data/fixtures/formats")
                    .join(other),
            ) else {
                continue;
            };
            assert!(!Aiperf.examine_head(other, &bytes).reads(), "{other}");
        }
        // Renamed summaries (`--profile-export-prefix`) are still found by content.
        let (_, head) = fixture(
            "aiperf-v010/artifacts/qwen3-8b-openai-chat-concurrency8/profile_export_aiperf.json",
        );
        assert!(Aiperf.examine_head("results/mine.json", &head).reads());
    }

    #[test]
    fn a_request_file_is_a_run_only_without_a_summary_beside_it() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/formats");
        let disk = storage::LocalDisk::new(&root);
        let mapping = crate::mapping::Mapping::default();
        let claimed = |relative: &str| {
            let (path, head) = fixture(relative);
            Aiperf
                .examine(&FileAt {
                    storage: &disk,
                    mapping: &mapping,
                    path: &path,
                    head: &head,
                })
                .reads()
        };
        assert!(claimed(
            "aiperf-jsonl-only/artifacts/meta-llama_Llama-3.1-8B-Instruct-openai-chat-concurrency4/profile_export.jsonl"
        ));
        assert!(claimed(
            "aiperf-jsonl-only/artifacts/Qwen_Qwen3-8B-openai-chat-concurrency8/profile_export.jsonl"
        ));
        // Beside a summary, the summary's record reads it: never a second cell.
        assert!(!claimed(
            "aiperf-v010/artifacts/qwen3-8b-openai-chat-concurrency8/profile_export.jsonl"
        ));
        assert!(!claimed("sglang-detailed/sglang_0301_40_1024_128.jsonl"));
        assert_eq!(
            directory_model("meta-llama_Llama-3.1-8B-Instruct-openai-chat-concurrency4")
                .map(|part| part.value),
            Some("Llama-3.1-8B-Instruct".to_string())
        );
        assert_eq!(
            directory_model("qwen3-8b-openai-chat-concurrency8").map(|part| part.value),
            Some("qwen3-8b".to_string())
        );
        assert_eq!(directory_model("concurrency_4"), None);
    }

    #[test]
    fn trials_and_sweep_values_are_one_run() {
        assert_eq!(
            Aiperf.run_root(
                "a/qwen3-sweep/profile_runs/trial_0001/concurrency_4/profile_export_aiperf.json"
            ),
            "a/qwen3-sweep"
        );
        assert_eq!(
            Aiperf.run_root(
                "a/base/concurrency_10/profile_runs/trial_0000/profile_export_aiperf.json"
            ),
            "a/base"
        );
        assert_eq!(
            Aiperf.run_root("a/base/profile_runs/run_0002/profile_export_aiperf.json"),
            "a/base"
        );
        assert_eq!(
            Aiperf.run_root("a/base/concurrency_10__isl_512/profile_export_aiperf.json"),
            "a/base"
        );
        assert_eq!(
            Aiperf.run_root("artifacts/m-openai-chat-concurrency8/profile_export_aiperf.json"),
            "artifacts"
        );
        assert_eq!(
            Aiperf.run_root("results/profile_export_aiperf.json"),
            "results"
        );
        assert_eq!(trial_number("trial_0003"), Some(3));
        assert_eq!(trial_number("trial_x"), None);
    }

    #[test]
    fn nanosecond_differences_keep_every_digit() {
        let start = nanoseconds(&serde_json::json!(1772360100124152563u64)).unwrap();
        let end = nanoseconds(&serde_json::json!(1772360100367973430u64)).unwrap();
        assert_eq!(end - start, 243820867);
        assert_eq!(
            cli_concurrency(
                &serde_json::json!({"run_info": {"cli_command": "aiperf profile --concurrency 8"}})
            )
            .map(|part| part.value),
            Some("8".to_string())
        );
        assert!(
            cli_concurrency(
                &serde_json::json!({"run_info": {"cli_command": "aiperf --concurrency 1,4"}})
            )
            .is_none()
        );
    }
}
