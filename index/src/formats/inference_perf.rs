//! kubernetes-sigs/inference-perf lifecycle reports: a run directory (`reports-<date>-<time>/`) holds one
//! `stage_<i>_lifecycle_metrics.json` per load stage, each a load level with aggregates only (latencies in
//! seconds, throughputs per second, success and failure counts), beside `summary_lifecycle_metrics.json` (every
//! stage together, not a load level), the optional per-request dump and the run's `config.yaml`, from which the
//! model, the model server and the data are read (the stage reports name none of them).

use super::RunFormat;
use crate::parse::json::{self, at};
use crate::parse::model_name;
use crate::parse::time::{self, Clock};
use crate::parse::yaml;
use crate::records::verdict::{Mark, Nearness, Signature, Verdict};
use crate::run::record::{FileAt, KeyParts, Part, RunRecord, Started};
use crate::storage::{self, Storage};
use cellscope_model::RateRps;
use cellscope_model::api::Warning;
use cellscope_model::stat::Stat;
use serde_json::Value as Json;
use std::collections::BTreeMap;

pub(super) struct InferencePerf;

/// The format, as the registry lists it.
pub(crate) static FORMAT: &dyn RunFormat = &InferencePerf;

/// What makes a JSON object an inference-perf lifecycle report: its successes and failures, and its load summary
/// or its benchmark time.
const SIGNATURES: &[Signature] = &[&[
    &[Mark::Key("successes")],
    &[Mark::Key("failures")],
    &[
        Mark::Key("load_summary"),
        Mark::Key("benchmark_time_seconds"),
    ],
]];

/// The file names the tool's report files end with (after the configured `report_file_prefix`).
const LIFECYCLE_SUFFIX: &str = "_lifecycle_metrics.json";

/// What a file inference-perf writes beside its stage reports is, by its name.
fn side_file(name: &str) -> Option<&'static str> {
    Some(if name.ends_with("per_request_lifecycle_metrics.json") {
        "inference-perf's per-request records, which carry no stage (the stage reports beside them are read)"
    } else if name.ends_with("summary_lifecycle_metrics.json") {
        "inference-perf's summary over every stage of the run, not a load level"
    } else if name.ends_with("session_lifecycle_metrics.json") {
        "inference-perf's session report (sessions, not requests)"
    } else if name.ends_with("_prometheus_metrics.json") {
        "inference-perf's model-server (Prometheus) metrics report, not a load level"
    } else if name.contains("adapter_") && name.ends_with(LIFECYCLE_SUFFIX) {
        "inference-perf's report of one LoRA adapter's requests, a part of a stage or of the run"
    } else {
        return None;
    })
}

/// The stage a report is named for: `stage_<i>_lifecycle_metrics.json`, after any prefix.
fn stage_of(name: &str) -> Option<usize> {
    let stem = name.strip_suffix(LIFECYCLE_SUFFIX)?;
    let (before, digits) = stem.rsplit_once("stage_")?;
    (before.is_empty() || before.ends_with(['_', '-', '.'])).then_some(())?;
    digits.parse().ok()
}

/// Whether a YAML head is an inference-perf run configuration: its `load` with its `server` or `data`.
fn is_run_configuration(head: &[u8]) -> bool {
    let keys = yaml::top_level_keys(head);
    let has = |name: &str| keys.iter().any(|(key, _)| key == name);
    has("load") && (has("server") || has("data"))
}

impl RunFormat for InferencePerf {
    fn name(&self) -> &'static str {
        "inference-perf"
    }

    /// A JSON object with `successes`, `failures` and `load_summary` whose load summary states the stage's
    /// `requested_rate` (a stage report, whatever its name), or named `stage_<i>_lifecycle_metrics.json` (an
    /// empty or damaged stage report is read so that it is reported). The summary, per-request, session,
    /// Prometheus and adapter reports and the run's `config.yaml` are side files.
    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        let (path, head) = (file.path, file.head);
        let name = storage::file_name(path);
        if let Some(what) = side_file(name) {
            return Verdict::side_file(what, self.run_root(path));
        }
        if name == "config.yaml" || name == "config.yml" {
            return if is_run_configuration(head) {
                Verdict::side_file(
                    "inference-perf's run configuration, read for the model and server of its stages",
                    self.run_root(path),
                )
            } else {
                Verdict::declines(
                    Nearness::OtherKind,
                    "a YAML file that is not an inference-perf run configuration",
                )
            };
        }
        if !name.ends_with(".json") {
            return Verdict::declines(
                Nearness::OtherKind,
                "a file that is not .json, which inference-perf's reports are",
            );
        }
        let stage_named = stage_of(name).is_some();
        if stage_named && head.iter().all(u8::is_ascii_whitespace) {
            return Verdict::Reads;
        }
        if !json::starts_with_object(head) {
            return Verdict::declines(
                Nearness::OtherKind,
                "a file that does not open a JSON object, which an inference-perf stage report is",
            );
        }
        let verdict = crate::records::verdict::signature_verdict(
            head,
            "an inference-perf report",
            SIGNATURES,
        );
        if !verdict.reads() {
            return if stage_named && json::head_has_key(head, "successes") {
                Verdict::Reads
            } else {
                verdict
            };
        }
        if json::head_has_key(head, "requested_rate") || stage_named {
            Verdict::Reads
        } else {
            Verdict::side_file(
                "an inference-perf report without `load_summary.requested_rate`: a report over several stages, \
                 not a load level",
                self.run_root(path),
            )
        }
    }

    fn records(&self, file: &FileAt<'_>, warnings: &mut Vec<Warning>) -> Vec<RunRecord> {
        let (storage, path) = (file.storage, file.path);
        let Some(bytes) = crate::parse::read_file(storage, path, warnings) else {
            return Vec::new();
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            warnings.push(
                Warning::error(
                    "empty_file",
                    "the stage report is empty (a run that stopped before inference-perf wrote it); it is left \
                     out",
                )
                .file(path),
            );
            return Vec::new();
        }
        let report = match json::parse(&bytes) {
            Ok(report @ Json::Object(_)) => report,
            Ok(_) => {
                warnings.push(
                    Warning::error(
                        "invalid_result",
                        "the stage report is not a JSON object; it is left out",
                    )
                    .file(path),
                );
                return Vec::new();
            }
            Err(error) => {
                warnings.push(
                    Warning::error(
                        "invalid_json",
                        format!(
                            "the stage report is not valid JSON ({}); it is left out",
                            error.message
                        ),
                    )
                    .file(path)
                    .line(error.line),
                );
                return Vec::new();
            }
        };
        let config = configuration(storage, path, warnings);
        let mut reading = Reading {
            path,
            warnings,
            reported: BTreeMap::new(),
        };
        let record = reading.record(&report, config.as_ref());
        vec![RunRecord {
            started: report_directory_time(path),
            ..record
        }]
    }
}

/// The time in the name inference-perf gives its report directory when the run starts
/// (`reports-%Y%m%d-%H%M%S`, local time without zone, taken as UTC); a directory named otherwise says nothing.
fn report_directory_time(path: &str) -> Option<Started> {
    let directory = storage::file_name(storage::parent(path));
    let stamp = directory.strip_prefix("reports-")?;
    Some(Started {
        at: time::parse_text(stamp, Clock::Compact)?,
        key: format!("the report directory's name `{directory}`"),
    })
}

/// The run's `config.yaml` (or `.yml`) beside a stage report, as JSON values: `None` when there is none, or when
/// it cannot be read (with a warning on it).
fn configuration(
    storage: &dyn Storage,
    path: &str,
    warnings: &mut Vec<Warning>,
) -> Option<Configuration> {
    let directory = storage::parent(path);
    let (file, bytes) = ["config.yaml", "config.yml"].into_iter().find_map(|name| {
        let file = storage::join(directory, name);
        crate::parse::read_sibling(storage, &file, warnings).map(|bytes| (file, bytes))
    })?;
    match yaml::parse(&bytes) {
        Ok(document @ Json::Object(_)) => Some(Configuration { file, document }),
        Ok(_) => None,
        Err(error) => {
            warnings.push(
                Warning::warn(
                    "invalid_yaml",
                    format!(
                        "the run's configuration is not valid YAML ({}); the model, server and data of its stages \
                         are left to the default rules",
                        error.message
                    ),
                )
                .file(&file)
                .at_line(error.line),
            );
            None
        }
    }
}

/// The run's configuration and the file it was read from.
struct Configuration {
    file: String,
    document: Json,
}

impl Configuration {
    /// The text at `path` (dotted), with where it was read.
    fn text(&self, path: &str) -> Option<(&str, String)> {
        let value = at(&self.document, path)?.as_str()?.trim();
        let name = storage::file_name(&self.file);
        (!value.is_empty()).then(|| (value, format!("{name} beside the file, field `{path}`")))
    }
}

/// Every latency metric of a stage report, in seconds, and the columns its mean, median, p95 and p99 fill.
const LATENCY: [(&str, [Stat; 4]); 4] = [
    (
        "request_latency",
        [
            Stat::MeanWallMs,
            Stat::P50WallMs,
            Stat::P95WallMs,
            Stat::P99WallMs,
        ],
    ),
    (
        "time_to_first_token",
        [
            Stat::MeanTtftMs,
            Stat::P50TtftMs,
            Stat::P95TtftMs,
            Stat::P99TtftMs,
        ],
    ),
    (
        "time_per_output_token",
        [
            Stat::MeanTpotMs,
            Stat::P50TpotMs,
            Stat::P95TpotMs,
            Stat::P99TpotMs,
        ],
    ),
    (
        "inter_token_latency",
        [
            Stat::MeanItlMs,
            Stat::P50ItlMs,
            Stat::P95ItlMs,
            Stat::P99ItlMs,
        ],
    ),
];

/// The statistics of a latency metric that have a column, in [`LATENCY`]'s order.
const LATENCY_STATISTICS: [&str; 4] = ["mean", "median", "p95", "p99"];

/// One stage report being read.
struct Reading<'a> {
    path: &'a str,
    warnings: &'a mut Vec<Warning>,
    reported: BTreeMap<String, f64>,
}

impl Reading<'_> {
    fn problem(&mut self, warning: Warning) {
        self.warnings.push(warning.file(self.path));
    }

    fn record(&mut self, report: &Json, config: Option<&Configuration>) -> RunRecord {
        let mut notes = vec![
            "the stage report's aggregates (latencies in seconds, converted to ms)".to_string(),
        ];
        for (metric, columns) in LATENCY {
            self.latency(report, metric, &columns);
        }
        // Normalised TPOT has no column; its shape is still checked so a damaged figure is reported.
        self.latency(report, "normalized_time_per_output_token", &[]);
        let prompt = ["prompt_tokens", "prompt_len"]
            .into_iter()
            .find(|block| at(report, &format!("successes.{block}")).is_some_and(Json::is_object))
            .unwrap_or("prompt_tokens");
        for (field, column) in [
            (format!("successes.{prompt}.mean"), Stat::MeanPromptTokens),
            (
                "successes.output_len.mean".to_string(),
                Stat::MeanCompletionTokens,
            ),
            (
                "successes.throughput.output_tokens_per_sec".to_string(),
                Stat::AggregateTps,
            ),
            (
                "successes.throughput.total_tokens_per_sec".to_string(),
                Stat::TotalTps,
            ),
            (
                "successes.throughput.requests_per_sec".to_string(),
                Stat::RequestThroughputRps,
            ),
        ] {
            self.number(report, &field, &field, column, 1.0);
        }
        let mut key = KeyParts::default();
        (key.n, key.rate) = self.load(report, config);
        if let Some(achieved) = at(report, "load_summary.achieved_rate").and_then(json::number) {
            notes.push(format!(
                "the load is the stage's requested rate; inference-perf sent {achieved} req/s \
                 (`load_summary.achieved_rate`)"
            ));
        }
        if let Some(config) = config {
            if let Some((model, field)) = config
                .text("server.model_name")
                .or_else(|| config.text("tokenizer.pretrained_model_name_or_path"))
            {
                key.model = Part::read(model_name(model), field);
            }
            if let Some((server, field)) = config.text("server.type") {
                key.backend = Part::read(server.to_ascii_lowercase(), field);
            }
            if let Some((data, field)) = config.text("data.type") {
                key.workload = Part::read(data, field);
            }
        }
        let mut figures = BTreeMap::new();
        for (name, value) in report.as_object().into_iter().flatten() {
            crate::records::figures::nested_figures(value, name, 5, &mut figures);
        }
        RunRecord {
            fields: report.clone(),
            key,
            completed: self.count(report, "successes.count"),
            failed: self.count(report, "failures.count"),
            duration_s: report.get("benchmark_time_seconds").and_then(json::number),
            reported: std::mem::take(&mut self.reported),
            reported_figures: figures,
            notes,
            ..RunRecord::default()
        }
    }

    /// One latency metric's statistics, seconds to ms. `null` (no successful request had it) states nothing;
    /// anything else that is not a mapping of numbers is warned about by its key path and left out.
    fn latency(&mut self, report: &Json, metric: &str, columns: &[Stat]) {
        let key_path = format!("successes.latency.{metric}");
        let block = match at(report, &key_path) {
            None | Some(Json::Null) => return,
            Some(block @ Json::Object(_)) => block,
            Some(other) => {
                self.problem(Warning::error(
                    "invalid_metric",
                    format!(
                        "`{key_path}` is {}, not a mapping of statistics in seconds; it is left out",
                        json::shown(other)
                    ),
                ));
                return;
            }
        };
        for (statistic, column) in LATENCY_STATISTICS.into_iter().zip(columns) {
            self.number(
                block,
                statistic,
                &format!("{key_path}.{statistic}"),
                *column,
                1000.0,
            );
        }
    }

    /// The number at `path` of `value` times `factor` as `column`. A value that is not a number is warned about
    /// by its key path in the report, `key_path`.
    fn number(&mut self, value: &Json, path: &str, key_path: &str, column: Stat, factor: f64) {
        let Some(found) = at(value, path).filter(|found| !found.is_null()) else {
            return;
        };
        match json::number(found).filter(|number| number.is_finite()) {
            Some(number) => {
                self.reported
                    .insert(column.name().to_string(), number * factor);
            }
            None => self.problem(Warning::error(
                "invalid_metric",
                format!(
                    "`{key_path}` is {}, not a number; it is left out",
                    json::shown(found)
                ),
            )),
        }
    }

    /// A count of requests at `path`; a value that is not one is warned about and unknown.
    fn count(&mut self, report: &Json, path: &str) -> Option<u32> {
        let value = at(report, path).filter(|value| !value.is_null())?;
        let count = json::number(value)
            .filter(|number| number.is_finite() && *number >= 0.0 && number.fract() == 0.0)
            .and_then(|number| u32::try_from(number as u64).ok());
        if count.is_none() {
            self.problem(Warning::error(
                "invalid_metric",
                format!(
                    "`{path}` is {}, not a count of requests; it is unknown",
                    json::shown(value)
                ),
            ));
        }
        count
    }

    /// The stage's load: `load_summary.concurrency` (a concurrent stage), else `load_summary.requested_rate`.
    /// A report without them takes its stage's configured level from `config.yaml` (inferred), else none.
    fn load(
        &mut self,
        report: &Json,
        config: Option<&Configuration>,
    ) -> (Option<Part>, Option<Part>) {
        let summary = report
            .get("load_summary")
            .filter(|summary| summary.is_object());
        if let Some(summary) = summary {
            if let Some(n) = json::field_count(summary, "concurrency").filter(|n| *n >= 1) {
                return (
                    Part::read(n.to_string(), "field `load_summary.concurrency`"),
                    None,
                );
            }
            if let Some(rate) = summary
                .get("requested_rate")
                .and_then(json::number)
                .and_then(RateRps::new)
            {
                return (
                    None,
                    Part::read(rate.to_string(), "field `load_summary.requested_rate`"),
                );
            }
        }
        let stage = stage_of(storage::file_name(self.path));
        let configured = stage.zip(config).and_then(|(stage, config)| {
            let level = at(&config.document, "load.stages")?
                .as_array()?
                .get(stage)?;
            let name = storage::file_name(&config.file);
            let rule = |field: &str| {
                format!(
                    "{name}'s `load.stages[{stage}].{field}` (the report states no load of its own)"
                )
            };
            if let Some(n) = json::field_count(level, "concurrency_level").filter(|n| *n >= 1) {
                return Some((
                    Part::inferred(n.to_string(), rule("concurrency_level")),
                    None,
                ));
            }
            let rate = level
                .get("rate")
                .and_then(json::number)
                .and_then(RateRps::new)?;
            Some((None, Part::inferred(rate.to_string(), rule("rate"))))
        });
        let missing = if summary.is_some() {
            "no `load_summary.requested_rate`"
        } else {
            "no `load_summary`"
        };
        let (load, what) = match configured {
            Some(load) => (
                load,
                "its load is the level configured for its stage in config.yaml",
            ),
            None => ((None, None), "its load is unknown"),
        };
        self.problem(Warning::warn(
            "no_load_summary",
            format!("the stage report has {missing}: {what}"),
        ));
        load
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::fixture_head as head;

    #[test]
    fn stage_reports_are_read_and_the_runs_other_files_are_side_files() {
        let stage = "inference-perf/reports-20260310-101500/stage_0_lifecycle_metrics.json";
        assert!(crate::formats::detect(&InferencePerf, stage, &head(stage)));
        for format in super::super::all() {
            if format.name() != "inference-perf" {
                assert!(
                    !crate::formats::detect(format, stage, &head(stage)),
                    "{}",
                    format.name()
                );
            }
        }
        let summary = "inference-perf/reports-20260310-101500/summary_lifecycle_metrics.json";
        assert!(matches!(
            crate::formats::examine_head(&InferencePerf, summary, &head(summary)),
            Verdict::SideFile { .. }
        ));
        // Renamed, a summary is still not a load level: it states no requested rate.
        assert!(matches!(
            crate::formats::examine_head(&InferencePerf, "x/all.json", &head(summary)),
            Verdict::SideFile { .. }
        ));
        let config = "inference-perf/reports-20260310-101500/config.yaml";
        assert!(matches!(
            crate::formats::examine_head(&InferencePerf, config, &head(config)),
            Verdict::SideFile { .. }
        ));
    }

    #[test]
    fn stage_names_give_their_index() {
        assert_eq!(stage_of("stage_3_lifecycle_metrics.json"), Some(3));
        assert_eq!(stage_of("run1-stage_12_lifecycle_metrics.json"), Some(12));
        assert_eq!(stage_of("summary_lifecycle_metrics.json"), None);
        assert_eq!(stage_of("stage_0_prometheus_metrics.json"), None);
    }
}
