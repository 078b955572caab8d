//! llm-d-benchmark's Benchmark Report: one report per stage of an experiment, written by its harness beside the
//! workload generator's own results (`benchmark_report,_<result>.yaml` for schema 0.1,
//! `benchmark_report_v0.2,_<result>.yaml` for 0.2 and its additive revision 0.2.1), in YAML or JSON. A report
//! holds aggregates only, each statistic with the units it declares; the stages of one experiment share
//! `run.eid`, which keys each cell's configuration so that two experiments gathered in one folder stay apart.

use super::RunFormat;
use crate::parse::json::{self, at};
use crate::parse::model_name;
use crate::parse::time::{self, Clock};
use crate::parse::yaml;
use crate::records::verdict::{Nearness, Verdict};
use crate::run::record::Setting;
use crate::run::record::{FileAt, How, KeyParts, Part, RunRecord, Started};
use crate::storage::{self, Storage};
use cellscope_model::RateRps;
use cellscope_model::api::{EnvironmentField, Warning};
use cellscope_model::stat::Stat;
use serde_json::Value as Json;
use std::collections::BTreeMap;

pub(super) struct LlmdReport;

/// The format, as the registry lists it.
pub(crate) static FORMAT: &dyn RunFormat = &LlmdReport;

/// How the harness names a schema 0.1 report, and the prefixes of the newer report of the same result.
const V01_PREFIX: &str = "benchmark_report,_";
const NEWER_PREFIXES: [&str; 2] = ["benchmark_report_v0.2,_", "benchmark_report_v0.2.1,_"];

impl RunFormat for LlmdReport {
    fn name(&self) -> &'static str {
        "llmd-report"
    }

    /// [`RunFormat::examine`], and a schema 0.1 report whose result also has a 0.2 report beside it is that
    /// report's side file: the harness writes both for every result, and they are one measurement.
    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        let (storage, path, head) = (file.storage, file.path, file.head);
        let verdict = self.examine_head(path, head);
        match newer_report(storage, path) {
            Some(newer) if verdict.reads() => Verdict::side_file(
                format!(
                    "the schema 0.1 report of a result whose newer report `{newer}` is read instead"
                ),
                self.run_root(path),
            ),
            _ => verdict,
        }
    }

    fn records(&self, file: &FileAt<'_>, warnings: &mut Vec<Warning>) -> Vec<RunRecord> {
        let (storage, path) = (file.storage, file.path);
        let Some(bytes) = crate::parse::read_file(storage, path, warnings) else {
            return Vec::new();
        };
        let document = match document(path, &bytes) {
            Ok(document) => document,
            Err(warning) => {
                warnings.push(warning.file(path));
                return Vec::new();
            }
        };
        let mut reading = Reading {
            path,
            warnings,
            reported: BTreeMap::new(),
        };
        let record = match version_text(document.get("version")).as_deref() {
            Some("0.1") => reading.v01(&document),
            Some(version) if version == "0.2" || version.starts_with("0.2.") => {
                reading.v02(&document)
            }
            Some(version) => {
                reading.problem(
                    Warning::error(
                        "unknown_version",
                        format!(
                            "schema version `{version}` is not one this reader knows (0.1, 0.2, 0.2.1); the \
                             report is left out"
                        ),
                    ),
                );
                None
            }
            None => {
                reading.problem(Warning::error(
                    "invalid_result",
                    "the report has no `version`, so its schema is unknown; it is left out",
                ));
                None
            }
        };
        record.into_iter().collect()
    }
}

impl LlmdReport {
    /// A YAML or JSON document whose top level has a schema `version` (`0.1`, `0.2`, …) with `scenario` and
    /// `metrics` (schema 0.1) or `run` and `results` (0.2); a document whose `version` is not in its head (the
    /// harness writes keys in sorted order, `version` last) is read when it has `results` with
    /// `request_performance`, or `scenario` and `metrics` with `time_to_first_token`.
    /// An empty file named as the harness names its reports is read, so that it is reported.
    pub(super) fn examine_head(&self, path: &str, head: &[u8]) -> Verdict {
        let name = storage::file_name(path);
        let Some(syntax) = Syntax::of(name) else {
            return Verdict::declines(
                Nearness::OtherKind,
                "a file that is neither .yaml, .yml nor .json, which an llm-d benchmark report is",
            );
        };
        if head.iter().all(u8::is_ascii_whitespace) {
            return if name.starts_with("benchmark_report") {
                Verdict::Reads
            } else {
                Verdict::declines(Nearness::OtherKind, "an empty file")
            };
        }
        let marks = match syntax {
            Syntax::Json if !json::starts_with_object(head) => {
                return Verdict::declines(
                    Nearness::OtherKind,
                    "a file that does not open a JSON object, which an llm-d benchmark report is",
                );
            }
            Syntax::Json => Marks::of_json(head),
            Syntax::Yaml => Marks::of_yaml(head),
        };
        marks.verdict()
    }
}

/// How the file is written, by its extension.
#[derive(Clone, Copy)]
enum Syntax {
    Json,
    Yaml,
}

impl Syntax {
    fn of(name: &str) -> Option<Syntax> {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".json") {
            Some(Syntax::Json)
        } else if lower.ends_with(".yaml") || lower.ends_with(".yml") {
            Some(Syntax::Yaml)
        } else {
            None
        }
    }
}

/// What a head shows of a report's top level.
struct Marks {
    /// `version`, when its value has the shape of a schema version (`0.2`, `0.2.1`).
    version: Option<String>,
    scenario: bool,
    metrics: bool,
    results: bool,
    run: bool,
    /// `request_performance` (schema 0.2) or `time_to_first_token` (0.1) below the top level: with `results`,
    /// or with `scenario` and `metrics`, they make a report whose `version` is cut off or not yet seen.
    request_performance: bool,
    time_to_first_token: bool,
}

impl Marks {
    fn of_json(head: &[u8]) -> Marks {
        Marks {
            version: json_version(head),
            scenario: json::head_has_key(head, "scenario"),
            metrics: json::head_has_key(head, "metrics"),
            results: json::head_has_key(head, "results"),
            run: json::head_has_key(head, "run"),
            request_performance: json::head_has_key(head, "request_performance"),
            time_to_first_token: json::head_has_key(head, "time_to_first_token"),
        }
    }

    fn of_yaml(head: &[u8]) -> Marks {
        let keys = yaml::top_level_keys(head);
        let has = |name: &str| keys.iter().any(|(key, _)| key == name);
        Marks {
            version: keys
                .iter()
                .find(|(key, _)| key == "version")
                .map(|(_, value)| value.clone())
                .filter(|value| is_schema_version(value)),
            scenario: has("scenario"),
            metrics: has("metrics"),
            results: has("results"),
            run: has("run"),
            request_performance: yaml::has_nested_key(head, "request_performance"),
            time_to_first_token: yaml::has_nested_key(head, "time_to_first_token"),
        }
    }

    fn verdict(&self) -> Verdict {
        let v01 = self.scenario && self.metrics;
        let v02 = self.results && (self.run || self.scenario);
        // The harness sorts a YAML report's keys, so `version` comes last: a head or a file cut before it still
        // shows the report's results.
        let unversioned =
            self.results && self.request_performance || v01 && self.time_to_first_token;
        if self.version.is_some() && (v01 || v02) || unversioned {
            return Verdict::Reads;
        }
        let found: Vec<String> = [
            ("version", self.version.is_some()),
            ("scenario", self.scenario),
            ("metrics", self.metrics),
            ("results", self.results),
            ("run", self.run),
        ]
        .into_iter()
        .filter(|(_, found)| *found)
        .map(|(key, _)| format!("`{key}`"))
        .collect();
        if found.is_empty() {
            Verdict::declines(
                Nearness::NoMarks,
                "a document without the top-level keys of an llm-d benchmark report (a schema `version` with \
                 `scenario` and `metrics`, or with `run` and `results`)",
            )
        } else {
            Verdict::declines(
                Nearness::SomeMarks,
                format!(
                    "a document with {} at its top level but not a schema `version` with `scenario` and \
                     `metrics`, or with `run` and `results`, which an llm-d benchmark report has",
                    crate::records::verdict::listed(&found)
                ),
            )
        }
    }
}

/// `0.1`, `0.2`, `0.2.1`: digits with one or two dots.
fn is_schema_version(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|part| !part.is_empty() && part.bytes().all(|byte| byte.is_ascii_digit()))
}

/// The text value of the first `"version": "<schema version>"` in a JSON head.
fn json_version(head: &[u8]) -> Option<String> {
    let key = b"\"version\"";
    memchr::memmem::find_iter(head, key).find_map(|position| {
        let rest = &head[position + key.len()..];
        let rest = rest.trim_ascii_start().strip_prefix(b":")?;
        let rest = rest.trim_ascii_start().strip_prefix(b"\"")?;
        let end = memchr::memchr(b'"', rest)?;
        let value = std::str::from_utf8(&rest[..end]).ok()?;
        is_schema_version(value).then(|| value.to_string())
    })
}

/// The schema 0.2 report beside a schema 0.1 one of the same result, by the harness's names.
fn newer_report(storage: &dyn Storage, path: &str) -> Option<String> {
    let rest = storage::file_name(path).strip_prefix(V01_PREFIX)?;
    let directory = storage::parent(path);
    NEWER_PREFIXES.iter().find_map(|prefix| {
        let name = format!("{prefix}{rest}");
        storage
            .stat(&storage::join(directory, &name))
            .ok()
            .map(|_| name)
    })
}

/// The report as JSON values, or the warning that says why it cannot be read (without its file).
fn document(path: &str, bytes: &[u8]) -> Result<Json, Warning> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Warning::error(
            "empty_file",
            "the report is empty (a run that stopped before the harness wrote it); it is left out",
        ));
    }
    let parsed = match Syntax::of(storage::file_name(path)) {
        Some(Syntax::Json) => json::parse(bytes).map_err(|error| {
            Warning::error(
                "invalid_json",
                format!(
                    "the report is not valid JSON ({}); it is left out",
                    error.message
                ),
            )
            .line(error.line)
        }),
        _ => yaml::parse(bytes).map_err(|error| {
            Warning::error(
                "invalid_yaml",
                format!(
                    "the report is not valid YAML ({}); it is left out",
                    error.message
                ),
            )
            .at_line(error.line)
        }),
    }?;
    if parsed.is_object() {
        Ok(parsed)
    } else {
        Err(Warning::error(
            "invalid_result",
            "the report is not a mapping of keys; it is left out",
        ))
    }
}

/// A schema version as written: a string, or a number when a hand-written YAML leaves it unquoted.
fn version_text(value: Option<&Json>) -> Option<String> {
    match value? {
        Json::String(text) => Some(text.trim().to_string()),
        Json::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// What a statistic measures, for the units it may be declared in.
#[derive(Clone, Copy)]
enum Quantity {
    Time,
    TimePerToken,
    Count,
    TokenRate,
    RequestRate,
}

impl Quantity {
    /// The factor that turns a value in `unit` into cellscope's unit (ms, tokens, tok/s, req/s).
    fn factor(self, unit: &str) -> Option<f64> {
        let time = |unit: &str| match unit {
            "s" => Some(1000.0),
            "ms" => Some(1.0),
            "us" => Some(1e-3),
            "ns" => Some(1e-6),
            _ => None,
        };
        match self {
            Quantity::Time => time(unit),
            // Per-token latencies are declared per token; a plain time unit says the same.
            Quantity::TimePerToken => time(unit.strip_suffix("/token").unwrap_or(unit)),
            Quantity::Count => (unit == "count").then_some(1.0),
            Quantity::TokenRate => (unit == "tokens/s").then_some(1.0),
            Quantity::RequestRate => matches!(unit, "queries/s" | "requests/s").then_some(1.0),
        }
    }

    fn units(self) -> &'static str {
        match self {
            Quantity::Time => "s, ms, us, ns",
            Quantity::TimePerToken => "s/token, ms/token, us/token, ns/token",
            Quantity::Count => "count",
            Quantity::TokenRate => "tokens/s",
            Quantity::RequestRate => "queries/s",
        }
    }
}

/// The statistics of a latency metric that have a cells-table column: mean, median, p95, p99.
const fn latency_columns(mean: Stat, p50: Stat, p95: Stat, p99: Stat) -> [(&'static str, Stat); 4] {
    [("mean", mean), ("p50", p50), ("p95", p95), ("p99", p99)]
}

/// A metric of a report: its key, what it measures, and the column each of its statistics fills.
type Metric = (&'static str, Quantity, &'static [(&'static str, Stat)]);

/// Every latency metric of a report, its quantity and the columns its statistics fill.
const LATENCY: [Metric; 5] = [
    (
        "request_latency",
        Quantity::Time,
        &latency_columns(
            Stat::MeanWallMs,
            Stat::P50WallMs,
            Stat::P95WallMs,
            Stat::P99WallMs,
        ),
    ),
    (
        "time_to_first_token",
        Quantity::Time,
        &latency_columns(
            Stat::MeanTtftMs,
            Stat::P50TtftMs,
            Stat::P95TtftMs,
            Stat::P99TtftMs,
        ),
    ),
    (
        "time_per_output_token",
        Quantity::TimePerToken,
        &latency_columns(
            Stat::MeanTpotMs,
            Stat::P50TpotMs,
            Stat::P95TpotMs,
            Stat::P99TpotMs,
        ),
    ),
    (
        "inter_token_latency",
        Quantity::TimePerToken,
        &latency_columns(
            Stat::MeanItlMs,
            Stat::P50ItlMs,
            Stat::P95ItlMs,
            Stat::P99ItlMs,
        ),
    ),
    // Normalised TPOT counts the first token too: no column is that figure, but its units are checked.
    (
        "normalized_time_per_output_token",
        Quantity::TimePerToken,
        &[],
    ),
];

/// The request-length statistics and the column each mean fills.
const LENGTHS: [(&str, Stat); 2] = [
    ("input_length", Stat::MeanPromptTokens),
    ("output_length", Stat::MeanCompletionTokens),
];

/// One report being read: its file, the warnings so far and the columns converted so far.
struct Reading<'a> {
    path: &'a str,
    warnings: &'a mut Vec<Warning>,
    reported: BTreeMap<String, f64>,
}

impl Reading<'_> {
    fn problem(&mut self, warning: Warning) {
        self.warnings.push(warning.file(self.path));
    }

    /// A schema 0.2 (or 0.2.1) report.
    fn v02(&mut self, document: &Json) -> Option<RunRecord> {
        let base = "results.request_performance.aggregate";
        let Some(aggregate) = at(document, base).filter(|value| value.is_object()) else {
            self.problem(Warning::warn(
                "no_request_performance",
                format!(
                    "the report has no `{base}` (a session-only or other kind of report): it holds no request \
                     figures to index"
                ),
            ));
            return None;
        };
        for (metric, quantity, columns) in LATENCY {
            self.statistics(
                at(aggregate, &format!("latency.{metric}")),
                &format!("{base}.latency.{metric}"),
                quantity,
                columns,
            );
        }
        for (metric, column) in LENGTHS {
            self.statistics(
                at(aggregate, &format!("requests.{metric}")),
                &format!("{base}.requests.{metric}"),
                Quantity::Count,
                &[("mean", column)],
            );
        }
        let rates: [Metric; 4] = [
            (
                "output_token_rate",
                Quantity::TokenRate,
                &[("mean", Stat::AggregateTps)],
            ),
            (
                "total_token_rate",
                Quantity::TokenRate,
                &[("mean", Stat::TotalTps)],
            ),
            ("input_token_rate", Quantity::TokenRate, &[]),
            (
                "request_rate",
                Quantity::RequestRate,
                &[("mean", Stat::RequestThroughputRps)],
            ),
        ];
        for (metric, quantity, columns) in rates {
            self.statistics(
                at(aggregate, &format!("throughput.{metric}")),
                &format!("{base}.throughput.{metric}"),
                quantity,
                columns,
            );
        }
        let (completed, failed) =
            self.counts(aggregate.get("requests"), &format!("{base}.requests"));
        let standardized = at(document, "scenario.load.standardized");
        let mut key = self.stack_v02(document.pointer("/scenario/stack"));
        (key.parts.n, key.parts.rate) = self.load_v02(standardized);
        let mut settings = std::mem::take(&mut key.settings);
        let eid = at(document, "run.eid").and_then(Json::as_str);
        if let Some(eid) = eid {
            settings.push(Setting::new(
                "eid",
                eid,
                How::Read("field `run.eid`".into()),
            ));
        }
        let mut notes = vec![UNITS_NOTE.to_string()];
        if let Some(stage) = standardized.and_then(|load| json::field_count(load, "stage")) {
            notes.push(format!(
                "stage {stage} of its experiment (`scenario.load.standardized.stage`)"
            ));
        }
        let mut figures = BTreeMap::new();
        if let Some(results) = document.get("results") {
            crate::records::figures::nested_figures(results, "results", 12, &mut figures);
        }
        if let Some(load) = standardized {
            crate::records::figures::nested_figures(
                load,
                "scenario.load.standardized",
                3,
                &mut figures,
            );
        }
        // The stack components' own labels (`vllm-0`) name the deployment a report measured.
        let labels: Vec<&str> = document
            .pointer("/scenario/stack")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(|component| at(component, "metadata.label").and_then(Json::as_str))
            .collect();
        let recorded = if labels.is_empty() {
            BTreeMap::new()
        } else {
            BTreeMap::from([("stack_labels".to_string(), labels.join(","))])
        };
        let started = self.started(document, "run.time.start", Clock::Iso);
        Some(RunRecord {
            started,
            environment: engine_build(document.pointer("/scenario/stack")),
            fields: document.clone(),
            key: key.parts,
            completed,
            failed,
            recorded,
            duration_s: at(document, "run.time.duration")
                .and_then(Json::as_str)
                .and_then(iso_duration_s),
            reported: std::mem::take(&mut self.reported),
            reported_figures: figures,
            notes,
            settings,
            ..RunRecord::default()
        })
    }

    /// When the report says its run started, at `key` on `clock`.
    fn started(&mut self, document: &Json, key: &str, clock: Clock) -> Option<Started> {
        let mut problems = Vec::new();
        let started = time::started(at(document, key), clock, key, self.path, &mut problems);
        self.warnings.extend(problems);
        started
    }

    /// A schema 0.1 report.
    fn v01(&mut self, document: &Json) -> Option<RunRecord> {
        let Some(metrics) = document.get("metrics").filter(|value| value.is_object()) else {
            self.problem(Warning::error(
                "invalid_result",
                "the schema 0.1 report has no `metrics`; it is left out",
            ));
            return None;
        };
        for (metric, quantity, columns) in LATENCY {
            self.statistics(
                at(metrics, &format!("latency.{metric}")),
                &format!("metrics.latency.{metric}"),
                quantity,
                columns,
            );
        }
        for (metric, column) in LENGTHS {
            self.statistics(
                at(metrics, &format!("requests.{metric}")),
                &format!("metrics.requests.{metric}"),
                Quantity::Count,
                &[("mean", column)],
            );
        }
        // Schema 0.1 states its throughputs as plain numbers, in the units their names say.
        for (field, column) in [
            ("output_tokens_per_sec", Stat::AggregateTps),
            ("total_tokens_per_sec", Stat::TotalTps),
            ("requests_per_sec", Stat::RequestThroughputRps),
        ] {
            self.plain_number(
                metrics.get("throughput"),
                "metrics.throughput",
                field,
                column,
            );
        }
        let (completed, failed) = self.counts(metrics.get("requests"), "metrics.requests");
        let scenario = document.get("scenario");
        let mut key = self.host_v01(scenario);
        key.parts.model = at(document, "scenario.model.name")
            .and_then(Json::as_str)
            .filter(|name| !name.trim().is_empty() && *name != "unknown")
            .and_then(|name| Part::read(model_name(name), "field `scenario.model.name`"));
        (key.parts.n, key.parts.rate) =
            self.load_v01(scenario.and_then(|scenario| scenario.get("load")));
        let mut settings = std::mem::take(&mut key.settings);
        if let Some(quantization) =
            at(document, "scenario.model.quantization").and_then(Json::as_str)
        {
            settings.push(Setting::new(
                "precision",
                quantization,
                How::Read("field `scenario.model.quantization`".into()),
            ));
        }
        if let Some(eid) = at(document, "metadata.eid")
            .and_then(Json::as_str)
            .filter(|eid| !eid.is_empty())
        {
            settings.push(Setting::new(
                "eid",
                eid,
                How::Read("field `metadata.eid`".into()),
            ));
        }
        let mut notes = vec![UNITS_NOTE.to_string()];
        if let Some(stage) = at(document, "scenario.load.metadata.stage").and_then(json::number) {
            notes.push(format!(
                "stage {stage} of its experiment (`scenario.load.metadata.stage`)"
            ));
        }
        let mut figures = BTreeMap::new();
        crate::records::figures::nested_figures(metrics, "metrics", 8, &mut figures);
        let started = self.started(document, "metrics.time.start", Clock::EpochS);
        Some(RunRecord {
            started,
            fields: document.clone(),
            key: key.parts,
            completed,
            failed,
            duration_s: at(metrics, "time.duration").and_then(json::number),
            reported: std::mem::take(&mut self.reported),
            reported_figures: figures,
            notes,
            settings,
            ..RunRecord::default()
        })
    }

    /// One statistics block converted by its declared units into `columns` (statistic → column). A block
    /// that is not a mapping, has no `units` or units of another quantity gives nothing, with a warning naming
    /// its key path; so does each statistic that is not a number.
    fn statistics(
        &mut self,
        block: Option<&Json>,
        key_path: &str,
        quantity: Quantity,
        columns: &[(&str, Stat)],
    ) {
        let block = match block {
            None | Some(Json::Null) => return,
            Some(block @ Json::Object(_)) => block,
            Some(other) => {
                self.problem(Warning::error(
                    "invalid_metric",
                    format!(
                        "`{key_path}` is {}, not a mapping of statistics; its figures are left out",
                        json::shown(other)
                    ),
                ));
                return;
            }
        };
        let Some(unit) = block.get("units").and_then(Json::as_str) else {
            self.problem(Warning::error(
                "missing_units",
                format!(
                    "`{key_path}` states no `units`, so its figures cannot be converted; they are left out"
                ),
            ));
            return;
        };
        let Some(factor) = quantity.factor(unit.trim()) else {
            self.problem(Warning::error(
                "unknown_unit",
                format!(
                    "`{key_path}.units` is `{unit}`, not a unit this reader converts for it ({}); its figures \
                     are left out",
                    quantity.units()
                ),
            ));
            return;
        };
        for (statistic, column) in columns {
            match block.get(*statistic) {
                None | Some(Json::Null) => {}
                Some(value) => match json::number(value).filter(|value| value.is_finite()) {
                    Some(number) => {
                        self.reported
                            .insert(column.name().to_string(), number * factor);
                    }
                    None => self.problem(Warning::error(
                        "invalid_metric",
                        format!(
                            "`{key_path}.{statistic}` is {}, not a number; it is left out",
                            json::shown(value)
                        ),
                    )),
                },
            }
        }
    }

    /// A plain number of a schema 0.1 block, into `column` as written.
    fn plain_number(&mut self, block: Option<&Json>, block_path: &str, field: &str, column: Stat) {
        match block.and_then(|block| block.get(field)) {
            None | Some(Json::Null) => {}
            Some(value) => match json::number(value).filter(|value| value.is_finite()) {
                Some(number) => {
                    self.reported.insert(column.name().to_string(), number);
                }
                None => self.problem(Warning::error(
                    "invalid_metric",
                    format!(
                        "`{block_path}.{field}` is {}, not a number; it is left out",
                        json::shown(value)
                    ),
                )),
            },
        }
    }

    /// Completed and failed requests: `total` less `failures` and `incomplete` (each where stated), and those
    /// two together; a count that is not a whole number is warned about and unknown.
    fn counts(&mut self, requests: Option<&Json>, block_path: &str) -> (Option<u32>, Option<u32>) {
        let mut count = |field: &str| -> Option<u32> {
            let value = requests?.get(field)?;
            if value.is_null() {
                return None;
            }
            let count = json::number(value)
                .filter(|number| number.is_finite() && *number >= 0.0 && number.fract() == 0.0)
                .and_then(|number| u32::try_from(number as u64).ok());
            if count.is_none() {
                self.problem(Warning::error(
                    "invalid_metric",
                    format!(
                        "`{block_path}.{field}` is {}, not a count of requests; it is left out",
                        json::shown(value)
                    ),
                ));
            }
            count
        };
        let total = count("total");
        let failures = count("failures");
        let incomplete = count("incomplete");
        let failed = match (failures, incomplete) {
            (None, None) => None,
            (failures, incomplete) => Some(failures.unwrap_or(0) + incomplete.unwrap_or(0)),
        };
        let completed = total.map(|total| total.saturating_sub(failed.unwrap_or(0)));
        (completed, failed)
    }

    /// The load of a schema 0.2 stage: a finite `concurrency` is the concurrency, else `rate_qps` the offered
    /// rate, else a `.inf` concurrency with no rate sends every request at once (an unbounded rate).
    fn load_v02(&mut self, standardized: Option<&Json>) -> (Option<Part>, Option<Part>) {
        let field = "scenario.load.standardized";
        let Some(load) = standardized else {
            return (None, None);
        };
        let concurrency = load.get("concurrency").filter(|value| !value.is_null());
        let concurrency_value = concurrency.and_then(json::number);
        if let Some(value) = concurrency
            && concurrency_value
                .is_none_or(|number| number.is_finite() && (number < 1.0 || number.fract() != 0.0))
        {
            self.problem(Warning::error(
                "invalid_load",
                format!(
                    "`{field}.concurrency` is {}, not a whole number of at least 1 or `.inf`; it is left out",
                    json::shown(value)
                ),
            ));
        }
        if let Some(n) =
            concurrency_value.filter(|n| n.is_finite() && *n >= 1.0 && n.fract() == 0.0)
        {
            return (
                Part::read(
                    (n as u64).to_string(),
                    format!("field `{field}.concurrency`"),
                ),
                None,
            );
        }
        if let Some(rate) = load
            .get("rate_qps")
            .and_then(json::number)
            .and_then(RateRps::new)
        {
            return (
                None,
                Part::read(rate.to_string(), format!("field `{field}.rate_qps`")),
            );
        }
        if concurrency_value == Some(f64::INFINITY) {
            return (
                None,
                Part::read(
                    "inf",
                    format!(
                        "field `{field}.concurrency` (`.inf` with no `rate_qps`: every request at once)"
                    ),
                ),
            );
        }
        (None, None)
    }

    /// The load of a schema 0.1 report, from its generator's own arguments: an inference-perf stage's
    /// `concurrency_level` or `rate`, else `max_concurrency`, else `request_rate` (vLLM, InferenceMAX; AIPerf
    /// under `loadgen`).
    fn load_v01(&mut self, load: Option<&Json>) -> (Option<Part>, Option<Part>) {
        let Some(args) = load.and_then(|load| load.get("args")) else {
            return (None, None);
        };
        let mut candidates: Vec<(String, String)> = Vec::new();
        if let Some(stage) = load
            .and_then(|load| at(load, "metadata.stage"))
            .and_then(json::number)
            .filter(|stage| *stage >= 0.0 && stage.fract() == 0.0)
        {
            let stage = stage as usize;
            candidates.push((
                format!("load.stages.{stage}.concurrency_level"),
                format!("load.stages[{stage}].concurrency_level"),
            ));
            candidates.push((
                format!("load.stages.{stage}.rate"),
                format!("load.stages[{stage}].rate"),
            ));
        }
        for field in [
            "max_concurrency",
            "loadgen.concurrency",
            "request_rate",
            "loadgen.request_rate",
        ] {
            candidates.push((field.to_string(), field.to_string()));
        }
        for (path, shown_path) in candidates {
            let Some(value) = stage_aware_at(args, &path) else {
                continue;
            };
            let Some(number) = json::number(value) else {
                continue;
            };
            let field = format!("field `scenario.load.args.{shown_path}`");
            if path.ends_with("concurrency") || path.ends_with("concurrency_level") {
                if number.is_finite() && number >= 1.0 && number.fract() == 0.0 {
                    return (Part::read((number as u64).to_string(), field), None);
                }
            } else if let Some(rate) = RateRps::new(number) {
                return (None, Part::read(rate.to_string(), field));
            }
        }
        (None, None)
    }

    /// Backend, model and deployment of a schema 0.2 stack: its `inference_engine` components.
    fn stack_v02(&mut self, stack: Option<&Json>) -> Stack {
        let engines: Vec<(usize, &Json)> = stack
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(|(index, component)| {
                let standardized = component.get("standardized")?;
                (standardized.get("kind").and_then(Json::as_str) == Some("inference_engine"))
                    .then_some((index, standardized))
            })
            .collect();
        let mut stack = Stack::default();
        let Some(&(first, engine)) = engines.first() else {
            return stack;
        };
        let field = |index: usize, rest: &str| {
            format!("field `scenario.stack[{index}].standardized.{rest}`")
        };
        if let Some(tool) = engine.get("tool").and_then(Json::as_str) {
            stack.parts.backend =
                Part::read(tool.trim().to_ascii_lowercase(), field(first, "tool"));
        }
        if let Some(model) = at(engine, "model.name").and_then(Json::as_str) {
            stack.parts.model = Part::read(model_name(model), field(first, "model.name"));
        }
        let hosts: Vec<Host> = engines
            .iter()
            .map(|(index, engine)| Host {
                role: engine
                    .get("role")
                    .and_then(Json::as_str)
                    .unwrap_or("replica")
                    .to_string(),
                accelerator: at(engine, "accelerator.model")
                    .and_then(Json::as_str)
                    .map(str::to_string),
                count: at(engine, "accelerator.count").and_then(json::number),
                parallelism: at(engine, "accelerator.parallelism").cloned(),
                replicas: engine.get("replicas").and_then(json::number),
                field: format!("scenario.stack[{index}].standardized"),
            })
            .collect();
        stack.settings = deployment(
            &hosts,
            HostFields {
                model: "accelerator.model",
                count: "accelerator.count",
                parallelism: "accelerator.parallelism",
            },
        );
        stack
    }

    /// Backend and deployment of a schema 0.1 scenario: `platform.engine` and `host.accelerator`/`host.type`.
    fn host_v01(&mut self, scenario: Option<&Json>) -> Stack {
        let mut stack = Stack::default();
        let Some(scenario) = scenario else {
            return stack;
        };
        if let Some(name) = at(scenario, "platform.engine")
            .and_then(|engines| engines.get(0))
            .and_then(|engine| engine.get("name"))
            .and_then(Json::as_str)
            .map(image_name)
            .filter(|name| !name.is_empty())
        {
            stack.parts.backend = Part::read(name, "field `scenario.platform.engine[0].name`");
        }
        let types: Vec<&str> = at(scenario, "host.type")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .collect();
        let hosts: Vec<Host> = at(scenario, "host.accelerator")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(index, accelerator)| Host {
                role: types.get(index).copied().unwrap_or("replica").to_string(),
                accelerator: accelerator
                    .get("model")
                    .and_then(Json::as_str)
                    .map(str::to_string),
                count: accelerator.get("count").and_then(json::number),
                parallelism: accelerator.get("parallelism").cloned(),
                replicas: Some(1.0),
                field: format!("scenario.host.accelerator[{index}]"),
            })
            .collect();
        stack.settings = deployment(
            &hosts,
            HostFields {
                model: "model",
                count: "count",
                parallelism: "parallelism",
            },
        );
        stack
    }
}

/// The note every report's cells carry.
const UNITS_NOTE: &str = "the report's aggregates, each converted from the units it declares (times to ms, rates as tokens/s and req/s)";

/// [`json::at`] where a numeric part indexes a list (`load.stages.2.rate`).
fn stage_aware_at<'a>(value: &'a Json, path: &str) -> Option<&'a Json> {
    path.split('.').try_fold(value, |value, part| match value {
        Json::Array(items) => items.get(part.parse::<usize>().ok()?),
        _ => value.get(part),
    })
}

/// An engine image or name reduced to its name: `ghcr.io/llm-d/llm-d-cuda:0.3.1` → `llm-d-cuda`.
fn image_name(image: &str) -> String {
    let without_tag = match image.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => name,
        _ => image,
    };
    model_name(without_tag).to_ascii_lowercase()
}

/// `PT49.97S`, `PT1H2M3S`: an ISO-8601 duration of hours, minutes and seconds, in seconds.
fn iso_duration_s(text: &str) -> Option<f64> {
    let mut rest = text.trim().strip_prefix("PT")?;
    let mut seconds = 0.0;
    let mut any = false;
    for (unit, factor) in [('H', 3600.0), ('M', 60.0), ('S', 1.0)] {
        if let Some((number, after)) = rest.split_once(unit) {
            seconds += number.parse::<f64>().ok()? * factor;
            rest = after;
            any = true;
        }
    }
    (any && rest.is_empty() && seconds.is_finite()).then_some(seconds)
}

/// Key parts and deployment settings a stack states.
#[derive(Default)]
struct Stack {
    parts: KeyParts,
    settings: Vec<Setting>,
}

/// One serving host (a 0.2 engine component, a 0.1 accelerator entry) as the deployment settings need it.
struct Host {
    role: String,
    accelerator: Option<String>,
    count: Option<f64>,
    parallelism: Option<Json>,
    replicas: Option<f64>,
    /// Its key path, for where each setting was read.
    field: String,
}

/// Where a host states its accelerator model, count and parallel sizes, below its own key path.
struct HostFields {
    model: &'static str,
    count: &'static str,
    parallelism: &'static str,
}

/// The deployment the hosts state: per role (prefixed `prefill_`/`decode_` when there is more than one role) the
/// first host's accelerator and parallel sizes and the role's replicas; and the accelerators of all hosts
/// together, when every host states its count.
fn deployment(hosts: &[Host], fields: HostFields) -> Vec<Setting> {
    let mut roles: Vec<&str> = Vec::new();
    for host in hosts {
        if !roles.contains(&host.role.as_str()) {
            roles.push(&host.role);
        }
    }
    let mut settings = Vec::new();
    for role in &roles {
        let prefix = if roles.len() > 1 {
            format!("{role}_")
        } else {
            String::new()
        };
        let of_role: Vec<&Host> = hosts.iter().filter(|host| host.role == *role).collect();
        let first = of_role[0];
        let read = |rest: &str| How::Read(format!("field `{}.{rest}`", first.field));
        if let Some(accelerator) = &first.accelerator {
            let name = format!("{prefix}accelerator");
            settings.push(Setting::new(
                &name,
                &accelerator.to_ascii_lowercase(),
                read(fields.model),
            ));
        }
        for size in ["tp", "dp", "pp", "ep"] {
            if let Some(value) = first
                .parallelism
                .as_ref()
                .and_then(|parallelism| json::field_count(parallelism, size))
            {
                settings.push(Setting::new(
                    &format!("{prefix}{size}"),
                    &value.to_string(),
                    read(&format!("{}.{size}", fields.parallelism)),
                ));
            }
        }
        let replicas: Option<f64> = of_role.iter().map(|host| host.replicas).sum();
        if let Some(replicas) =
            replicas.filter(|replicas| replicas.fract() == 0.0 && *replicas >= 1.0)
        {
            let how = if of_role.len() == 1 && first.field.starts_with("scenario.stack") {
                read("replicas")
            } else {
                How::Read(format!("the number of `{role}` hosts"))
            };
            settings.push(Setting::new(
                &format!("{prefix}replicas"),
                &(replicas as u64).to_string(),
                how,
            ));
        }
    }
    let counts: Option<f64> = hosts.iter().map(|host| host.count).sum();
    if let Some(count) =
        counts.filter(|count| !hosts.is_empty() && count.fract() == 0.0 && *count >= 1.0)
    {
        let how = match hosts {
            [only] => How::Read(format!("field `{}.{}`", only.field, fields.count)),
            _ => How::Read(format!("the sum of every host's `{}`", fields.count)),
        };
        settings.push(Setting::new(
            "accelerators",
            &(count as u64).to_string(),
            how,
        ));
    }
    settings
}

/// The engine's build a schema 0.2 stack records: the first `inference_engine` component's `tool_version`, an
/// image reference (`ghcr.io/llm-d/llm-d-cuda:0.3.1`) kept whole as the backend's build, else a version.
fn engine_build(stack: Option<&Json>) -> BTreeMap<EnvironmentField, String> {
    let version = stack
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter(|component| {
            at(component, "standardized.kind").and_then(Json::as_str) == Some("inference_engine")
        })
        .find_map(|component| at(component, "standardized.tool_version").and_then(Json::as_str));
    let Some(version) = version.map(str::trim).filter(|version| !version.is_empty()) else {
        return BTreeMap::new();
    };
    let field = if version.contains('/') || version.contains(':') {
        EnvironmentField::BackendCommit
    } else {
        EnvironmentField::BackendVersion
    };
    BTreeMap::from([(field, version.to_string())])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::fixture_head as head;

    #[test]
    fn reports_are_recognised_by_their_top_level_and_nothing_else_reads_them() {
        for file in [
            "llmd-report-v01/benchmark_report,_stage_0_lifecycle_metrics.json.yaml",
            "llmd-report-v02/yaml/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml",
            "llmd-report-v02/json/benchmark_report_v0.2,_results_c8.json",
        ] {
            assert!(LlmdReport.examine_head(file, &head(file)).reads(), "{file}");
            for format in super::super::all() {
                if format.name() != "llmd-report" {
                    assert!(
                        !crate::formats::detect(format, file, &head(file)),
                        "{} reads {file}",
                        format.name()
                    );
                }
            }
        }
        assert!(
            !LlmdReport
                .examine_head(
                    "x/config.yaml",
                    b"load:\n  type: constant\nserver:\n  type: vllm\n"
                )
                .reads()
        );
    }

    #[test]
    fn a_head_cut_before_its_version_is_read_by_its_results() {
        assert!(
            LlmdReport
                .examine_head(
                    "r.yaml",
                    b"results:\n  request_performance:\n    aggregate:\n"
                )
                .reads()
        );
        assert!(
            !LlmdReport
                .examine_head("r.yaml", b"results:\n  accuracy: 1\nrun:\n  id: 3\n")
                .reads()
        );
        assert!(
            LlmdReport
                .examine_head(
                    "r.yaml",
                    b"version: '0.2'\nrun:\n  uid: x\nresults:\n  a: 1\n"
                )
                .reads()
        );
    }

    #[test]
    fn units_convert_and_durations_parse() {
        assert_eq!(Quantity::Time.factor("s"), Some(1000.0));
        assert_eq!(Quantity::Time.factor("ns"), Some(1e-6));
        assert_eq!(Quantity::TimePerToken.factor("s/token"), Some(1000.0));
        assert_eq!(Quantity::TimePerToken.factor("ms"), Some(1.0));
        assert_eq!(Quantity::Time.factor("minutes"), None);
        assert_eq!(Quantity::TokenRate.factor("queries/s"), None);
        assert_eq!(iso_duration_s("PT49.97S"), Some(49.97));
        assert_eq!(iso_duration_s("PT1H2M3S"), Some(3723.0));
        assert_eq!(iso_duration_s("P1D"), None);
        assert_eq!(image_name("ghcr.io/llm-d/llm-d-cuda:0.3.1"), "llm-d-cuda");
        assert_eq!(image_name("vllm"), "vllm");
    }
}
