//! MLPerf Inference LoadGen logs of one performance run, aggregates only: the detail log (`mlperf_log_detail.txt`,
//! one `:::MLLOG {json}` record per key) is read when it is there, and the human summary beside it
//! (`mlperf_log_summary.txt`) is then a side file checked against it; a summary alone is read itself. Neither log
//! names the model or the system: they come from the results tree's path
//! (`results/<system>/<benchmark>/<scenario>/performance/run_N/`), the scenario from the log. An `INVALID` result
//! is kept, marked rejected by the tool, never as a clean cell. Latencies are nanoseconds in the logs and
//! milliseconds in cells.

use super::RunFormat;
use crate::parse::time::{self, Clock};
use crate::records::verdict::{self, Nearness, Verdict};
use crate::run::record::Setting;
use crate::run::record::{FileAt, How, KeyParts, Part, RunRecord, Started};
use crate::storage::{self, EntryKind, Storage};
use cellscope_model::api::Warning;
use cellscope_model::slo::presets;
use cellscope_model::stat::Stat;
use serde_json::Value as Json;
use std::collections::BTreeMap;

pub(super) struct MlperfLoadgen;

/// The format, as the registry lists it.
pub(crate) static FORMAT: &dyn RunFormat = &MlperfLoadgen;

/// LoadGen's scenarios, and `Interactive`, which results trees use for a Server run under the tighter bounds of a
/// benchmark's interactive variant (LoadGen itself logs it as `Server`).
const SCENARIOS: [&str; 5] = [
    "Server",
    "Offline",
    "SingleStream",
    "MultiStream",
    "Interactive",
];

/// LoadGen's own file names: a file so named is read (and its problems reported) whatever it holds.
const DETAIL_NAME: &str = "mlperf_log_detail.txt";
const SUMMARY_NAME: &str = "mlperf_log_summary.txt";

/// The banner that opens a summary.
const SUMMARY_BANNER: &[u8] = b"MLPerf Results Summary";

/// Which of LoadGen's logs a file is, by content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Detail,
    Summary,
}

fn kind_of(bytes: &[u8]) -> Option<Kind> {
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = text
        .iter()
        .position(|byte| !byte.is_ascii_whitespace())
        .unwrap_or(text.len());
    if text[start..].starts_with(b":::MLLOG") {
        Some(Kind::Detail)
    } else if memchr::memmem::find(text, SUMMARY_BANNER).is_some() {
        Some(Kind::Summary)
    } else {
        None
    }
}

/// A file LoadGen writes beside a run's logs that holds no performance results of its own, by name or content.
fn side_file(name: &str, head: &[u8]) -> Option<&'static str> {
    let accuracy_content = head.trim_ascii_start().starts_with(b"[")
        && memchr::memmem::find(head, b"\"qsl_idx\"").is_some();
    if name == "mlperf_log_accuracy.json" || accuracy_content {
        Some("LoadGen's accuracy log (each sample's output, no timing)")
    } else if name == "mlperf_log_trace.json" {
        Some("LoadGen's trace (timed events, no results of its own)")
    } else {
        None
    }
}

impl RunFormat for MlperfLoadgen {
    fn name(&self) -> &'static str {
        "mlperf-loadgen"
    }

    /// [`RunFormat::examine`], and a summary with a detail log beside it is that log's side file.
    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        let (storage, path, head) = (file.storage, file.path, file.head);
        let verdict = self.examine_head(path, head);
        let summary = kind_of(head) == Some(Kind::Summary)
            || (kind_of(head).is_none() && storage::file_name(path) == SUMMARY_NAME);
        if verdict.reads() && summary && beside(storage, path, Kind::Detail).is_some() {
            return Verdict::side_file(
                "an MLPerf LoadGen summary, checked against the detail log beside it, which is read",
                self.run_root(path),
            );
        }
        verdict
    }

    /// The benchmark directory of a results tree (its scenarios and runs are one sweep), else the file's.
    fn run_root(&self, path: &str) -> String {
        match ResultsPath::of(path) {
            Some(results) => results.root,
            None => crate::records::default_run_root(path),
        }
    }

    fn records(&self, file: &FileAt<'_>, warnings: &mut Vec<Warning>) -> Vec<RunRecord> {
        let (storage, path) = (file.storage, file.path);
        let Some(bytes) = crate::parse::read_file(storage, path, warnings) else {
            return Vec::new();
        };
        if bytes.trim_ascii().is_empty() {
            warnings.push(
                Warning::error(
                    "empty_file",
                    "the LoadGen log is empty (the run did not get as far as writing it); nothing of it is read",
                )
                .file(path),
            );
            return Vec::new();
        }
        let text = String::from_utf8_lossy(&bytes);
        let reading = match kind_of(&bytes) {
            Some(Kind::Detail) => {
                let mut detail = read_detail(&text, path, warnings);
                if let Some(summary_path) = beside(storage, path, Kind::Summary) {
                    check_against_summary(storage, &mut detail, path, &summary_path, warnings);
                }
                detail
            }
            Some(Kind::Summary) => read_summary(&text, path, warnings),
            None => {
                warnings.push(
                    Warning::error(
                        "not_a_loadgen_log",
                        "the file has LoadGen's log name but neither `:::MLLOG` records nor the `MLPerf Results \
                         Summary` banner; nothing of it is read",
                    )
                    .file(path),
                );
                return Vec::new();
            }
        };
        record(path, reading, warnings).into_iter().collect()
    }
}

impl MlperfLoadgen {
    /// A detail log (`:::MLLOG` records) or a summary (the `MLPerf Results Summary` banner), whatever its name, and
    /// any file with LoadGen's log names (so an empty or broken one is reported); an accuracy run's logs and the
    /// accuracy and trace JSON are side files.
    pub(super) fn examine_head(&self, path: &str, head: &[u8]) -> Verdict {
        let name = storage::file_name(path);
        if let Some(what) = side_file(name, head) {
            return Verdict::side_file(what, self.run_root(path));
        }
        match kind_of(head) {
            Some(_) if memchr::memmem::find(head, b"AccuracyOnly").is_some() => Verdict::side_file(
                "the log of an MLPerf accuracy run, which has no performance results",
                self.run_root(path),
            ),
            Some(_) => Verdict::Reads,
            None if name == DETAIL_NAME || name == SUMMARY_NAME => Verdict::Reads,
            None if verdict::is_structured(path) => Verdict::declines(
                Nearness::OtherKind,
                "a JSON, CSV or Parquet file, where LoadGen's logs are text",
            ),
            None => Verdict::declines(
                Nearness::NoMarks,
                "a file without `:::MLLOG` records or the `MLPerf Results Summary` banner of a LoadGen log",
            ),
        }
    }
}

/// The other log of the run in `path`'s directory, paired by the logs' own fields ([`identity`]), never by being
/// neighbours: the log of the other kind that agrees on every field both state, LoadGen's own name first among
/// equals, and only when that log's own best partner is `path` (a folder may hold the logs of several runs).
fn beside(storage: &dyn Storage, path: &str, kind: Kind) -> Option<String> {
    let partner = best_partner(storage, path, kind)?;
    let own = match kind {
        Kind::Detail => Kind::Summary,
        Kind::Summary => Kind::Detail,
    };
    (best_partner(storage, &partner, own).as_deref() == Some(path)).then_some(partner)
}

/// The log of `kind` in `path`'s directory that agrees with `path` on every field both state ([`identity`]).
fn best_partner(storage: &dyn Storage, path: &str, kind: Kind) -> Option<String> {
    let directory = storage::parent(path);
    let own = storage::file_name(path);
    let head = |path: &str| storage.read_range(path, 0..IDENTITY_BYTES).ok();
    let mine = identity(&head(path)?);
    let mut names: Vec<String> = storage
        .list(directory)
        .ok()?
        .into_iter()
        .filter(|entry| entry.kind == EntryKind::File && entry.name != own)
        .map(|entry| entry.name)
        .collect();
    let standard = match kind {
        Kind::Detail => DETAIL_NAME,
        Kind::Summary => SUMMARY_NAME,
    };
    names.sort_by_key(|name| (name != standard, name.clone()));
    names.into_iter().find_map(|name| {
        let candidate = storage::join(directory, &name);
        let bytes = head(&candidate)?;
        (kind_of(&bytes) == Some(kind) && agree(&mine, &identity(&bytes))).then_some(candidate)
    })
}

/// How much of a log its identity is read from: a summary whole, a detail log's settings (logged first).
const IDENTITY_BYTES: u64 = 64 * 1024;

/// The fields that tell one LoadGen run from another, as (shared name, summary label, detail key): the system under
/// test, the scenario, the mode and the test settings both logs print.
const IDENTITY: [(&str, &str, &str); 11] = [
    ("sut", "SUT name", "sut_name"),
    ("scenario", "Scenario", "effective_scenario"),
    ("mode", "Mode", "effective_test_mode"),
    (
        "samples_per_query",
        "samples_per_query",
        "effective_samples_per_query",
    ),
    ("target_qps", "target_qps", "effective_target_qps"),
    (
        "min_query_count",
        "min_query_count",
        "effective_min_query_count",
    ),
    (
        "min_duration_ms",
        "min_duration (ms)",
        "effective_min_duration_ms",
    ),
    (
        "performance_sample_count",
        "performance_sample_count",
        "effective_performance_sample_count",
    ),
    ("qsl_rng_seed", "qsl_rng_seed", "effective_qsl_rng_seed"),
    (
        "sample_index_rng_seed",
        "sample_index_rng_seed",
        "effective_sample_index_rng_seed",
    ),
    (
        "schedule_rng_seed",
        "schedule_rng_seed",
        "effective_schedule_rng_seed",
    ),
];

/// A log's identity fields by shared name, as text.
fn identity(bytes: &[u8]) -> BTreeMap<&'static str, String> {
    let text = String::from_utf8_lossy(bytes);
    let mut found = BTreeMap::new();
    let detail = kind_of(bytes) == Some(Kind::Detail);
    for line in text.lines() {
        let pair = if detail {
            line.find(":::MLLOG").and_then(|at| {
                let record: Json =
                    serde_json::from_str(line[at + ":::MLLOG".len()..].trim()).ok()?;
                let key = record.get("key")?.as_str()?.to_string();
                let value = match record.get("value")? {
                    Json::String(text) => text.clone(),
                    other => other.to_string(),
                };
                Some((key, value))
            })
        } else {
            line.split_once(':')
                .map(|(label, value)| (label.trim().to_string(), value.trim().to_string()))
        };
        let Some((key, value)) = pair else { continue };
        if let Some((name, ..)) = IDENTITY.iter().find(|(_, label, detail_key)| {
            if detail {
                *detail_key == key
            } else {
                *label == key
            }
        }) {
            found.entry(*name).or_insert(value);
        }
    }
    found
}

/// Whether two identities agree on every field both state (numbers as numbers: the summary prints `%g`).
fn agree(left: &BTreeMap<&'static str, String>, right: &BTreeMap<&'static str, String>) -> bool {
    left.iter().all(|(name, value)| {
        right.get(name).is_none_or(|other| {
            value == other
                || match (value.parse::<f64>(), other.parse::<f64>()) {
                    (Ok(a), Ok(b)) => (a - b).abs() <= 1e-5 * a.abs().max(b.abs()),
                    _ => false,
                }
        })
    })
}

// ---------------------------------------------------------------------------------------------------------------
// The results path

/// What a results tree's path says: `…/<system>/<benchmark>/<scenario>/[TESTnn/]performance/run_N/<log>`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ResultsPath {
    system: Option<String>,
    benchmark: String,
    scenario: String,
    /// The compliance audit (`TEST01`) when the run is one.
    test: Option<String>,
    /// `N` of `run_N`.
    run: Option<u32>,
    /// The benchmark directory.
    root: String,
}

impl ResultsPath {
    /// The innermost scenario directory followed by nothing, `performance`/`accuracy` or an audit directory then
    /// one of them; the benchmark and system are the two directories above it.
    fn of(path: &str) -> Option<ResultsPath> {
        let components: Vec<&str> = path.split('/').collect();
        let directories = &components[..components.len().saturating_sub(1)];
        (1..directories.len()).rev().find_map(|at| {
            let scenario = scenario_name(directories[at])?;
            let mut rest = &directories[at + 1..];
            let test = rest
                .first()
                .filter(|name| is_audit(name))
                .map(|name| name.to_string());
            if test.is_some() {
                rest = &rest[1..];
            }
            if let Some(mode) = rest.first()
                && *mode != "performance"
                && *mode != "accuracy"
            {
                return None;
            }
            let run = rest
                .get(1)
                .and_then(|name| name.strip_prefix("run_"))
                .and_then(|number| number.parse::<u32>().ok());
            Some(ResultsPath {
                system: (at >= 2).then(|| directories[at - 2].to_string()),
                benchmark: directories[at - 1].to_string(),
                scenario: scenario.to_string(),
                test,
                run,
                root: directories[..at].join("/"),
            })
        })
    }
}

/// The scenario a name spells, in LoadGen's spelling.
fn scenario_name(name: &str) -> Option<&'static str> {
    SCENARIOS
        .iter()
        .copied()
        .find(|scenario| scenario.eq_ignore_ascii_case(name))
}

/// A compliance audit directory (`TEST01`, `TEST06`).
fn is_audit(name: &str) -> bool {
    name.strip_prefix("TEST")
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

// ---------------------------------------------------------------------------------------------------------------
// Reading the logs

/// What one log says, in a vocabulary shared by the two logs ([`DETAIL_KEYS`], [`SUMMARY_LABELS`]).
#[derive(Clone, Debug, Default)]
struct Reading {
    /// The scenario and the key or line it was read from.
    scenario: Option<(String, String)>,
    mode: Option<String>,
    /// `VALID` or not, and where it was read.
    valid: Option<(bool, String)>,
    /// Why LoadGen judged the run invalid, as it says.
    reasons: Vec<String>,
    /// Shared name → the value and the tool's key it was read from.
    values: BTreeMap<&'static str, (f64, String)>,
    /// Every number of the log under the tool's own key.
    figures: BTreeMap<String, f64>,
    version: Option<String>,
    /// The system under test's name as the log gives it, and where.
    sut: Option<(String, String)>,
    /// The log came from the summary (no detail log beside it).
    from_summary: bool,
    /// When the test started: the detail log's `test_datetime`.
    started: Option<Started>,
}

impl Reading {
    fn value(&self, name: &str) -> Option<f64> {
        self.values.get(name).map(|(value, _)| *value)
    }

    fn field(&self, name: &str) -> String {
        self.values
            .get(name)
            .map(|(_, key)| key.clone())
            .unwrap_or_default()
    }
}

/// The shared names and the detail log's keys for them, the first key present winning (the per-scenario
/// throughput keys of LoadGen's `LogDetail`).
const DETAIL_KEYS: &[(&str, &[&str])] = &[
    (
        "samples_per_s",
        &[
            "result_completed_samples_per_sec",
            "result_samples_per_second",
            "result_qps_with_loadgen_overhead",
        ],
    ),
    (
        "tokens_per_s",
        &[
            "result_completed_tokens_per_second",
            "result_tokens_per_second",
            "result_token_throughput_with_loadgen_overhead",
        ],
    ),
    (
        "inferred_tokens_per_s",
        &[
            "result_inferred_completed_tokens_per_second",
            "result_inferred_tokens_per_second",
        ],
    ),
    ("wall_mean", &["result_mean_latency_ns"]),
    ("wall_p50", &["result_50.00_percentile_latency_ns"]),
    ("wall_p95", &["result_95.00_percentile_latency_ns"]),
    ("wall_p99", &["result_99.00_percentile_latency_ns"]),
    ("ttft_mean", &["result_first_token_mean_latency_ns"]),
    (
        "ttft_p50",
        &["result_first_token_50.00_percentile_latency_ns"],
    ),
    (
        "ttft_p95",
        &["result_first_token_95.00_percentile_latency_ns"],
    ),
    (
        "ttft_p99",
        &["result_first_token_99.00_percentile_latency_ns"],
    ),
    ("tpot_mean", &["result_time_to_output_token_mean"]),
    (
        "tpot_p50",
        &["result_time_per_output_token_50.00_percentile_ns"],
    ),
    (
        "tpot_p95",
        &["result_time_per_output_token_95.00_percentile_ns"],
    ),
    (
        "tpot_p99",
        &["result_time_per_output_token_99.00_percentile_ns"],
    ),
    (
        "target_qps",
        &["effective_target_qps", "requested_server_target_qps"],
    ),
    ("samples_per_query", &["effective_samples_per_query"]),
    ("query_count", &["result_query_count"]),
    ("ttft_bound_ns", &["requested_server_ttft_latency"]),
    ("tpot_bound_ns", &["requested_server_tpot_latency"]),
];

/// The shared names and the summary's labels for them (`LogSummary` and the test settings' block; TPOT's mean
/// is `Time to Output Token` in older LoadGen and `Time per Output Token` in newer).
const SUMMARY_LABELS: &[(&str, &[&str])] = &[
    (
        "samples_per_s",
        &[
            "Completed samples per second",
            "Samples per second",
            "QPS w/ loadgen overhead",
        ],
    ),
    (
        "tokens_per_s",
        &[
            "Completed tokens per second",
            "Tokens per second",
            "TPS w/ loadgen overhead",
        ],
    ),
    (
        "inferred_tokens_per_s",
        &[
            "Completed tokens per second (inferred)",
            "Tokens per second (inferred)",
        ],
    ),
    ("wall_mean", &["Mean latency (ns)"]),
    ("wall_p50", &["50.00 percentile latency (ns)"]),
    ("wall_p95", &["95.00 percentile latency (ns)"]),
    ("wall_p99", &["99.00 percentile latency (ns)"]),
    ("ttft_mean", &["Mean First Token latency (ns)"]),
    ("ttft_p50", &["50.00 percentile first token latency (ns)"]),
    ("ttft_p95", &["95.00 percentile first token latency (ns)"]),
    ("ttft_p99", &["99.00 percentile first token latency (ns)"]),
    (
        "tpot_mean",
        &[
            "Mean Time to Output Token (ns)",
            "Mean Time per Output Token (ns)",
        ],
    ),
    ("tpot_p50", &["50.00 percentile time to output token (ns)"]),
    ("tpot_p95", &["95.00 percentile time to output token (ns)"]),
    ("tpot_p99", &["99.00 percentile time to output token (ns)"]),
    ("target_qps", &["target_qps"]),
    ("samples_per_query", &["samples_per_query"]),
    ("ttft_bound_ns", &["ttft_latency (ns)"]),
    ("tpot_bound_ns", &["tpot_latency (ns)"]),
];

/// The checks LoadGen's detail log states, and how the reason reads when one failed.
const DETAIL_CHECKS: [(&str, &str); 4] = [
    (
        "result_perf_constraints_met",
        "performance constraints not satisfied",
    ),
    ("result_min_duration_met", "min duration not satisfied"),
    ("result_min_queries_met", "min queries not satisfied"),
    ("early_stopping_met", "early stopping not satisfied"),
];

/// The detail log: one JSON record per `:::MLLOG` line; a line that is not one is reported at its line and
/// skipped (the first record of a key wins, as LoadGen logs each result once).
fn read_detail(text: &str, path: &str, warnings: &mut Vec<Warning>) -> Reading {
    let mut records: BTreeMap<String, Json> = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let Some(at) = line.find(":::MLLOG") else {
            continue;
        };
        let body = line[at + ":::MLLOG".len()..].trim();
        let parsed = serde_json::from_str::<Json>(body).ok().and_then(|record| {
            let key = record.get("key")?.as_str()?.to_string();
            Some((key, record.get("value").cloned().unwrap_or(Json::Null)))
        });
        match parsed {
            Some((key, value)) => {
                records.entry(key).or_insert(value);
            }
            None => warnings.push(
                Warning::warn(
                    "invalid_log_line",
                    format!(
                        "line {} is not a complete `:::MLLOG` record with a key and a value; it is skipped",
                        index + 1
                    ),
                )
                .file(path)
                .line(index as u64 + 1),
            ),
        }
    }
    let mut reading = Reading::default();
    let text_of = |key: &str| records.get(key).and_then(Json::as_str).map(str::to_string);
    reading.scenario = ["effective_scenario", "requested_scenario"]
        .iter()
        .find_map(|key| Some((text_of(key)?, format!("key `{key}`"))));
    reading.mode = text_of("effective_test_mode").or_else(|| text_of("requested_test_mode"));
    reading.version = text_of("loadgen_version");
    reading.started = time::started(
        records.get("test_datetime"),
        Clock::Iso,
        "test_datetime",
        path,
        warnings,
    );
    reading.sut = text_of("sut_name").map(|sut| (sut, "key `sut_name`".to_string()));
    reading.valid = text_of("result_validity")
        .map(|validity| (validity == "VALID", "key `result_validity`".to_string()));
    for (key, reason) in DETAIL_CHECKS {
        if records.get(key) == Some(&Json::Bool(false)) {
            reading.reasons.push(format!("{reason} (`{key}`)"));
        }
    }
    if let Some(reason) = text_of("result_invalid_reason").filter(|text| !text.trim().is_empty()) {
        reading.reasons.push(reason.trim().to_string());
    }
    for (key, value) in &records {
        if let Some(number) = value.as_f64().filter(|number| number.is_finite()) {
            reading.figures.insert(key.clone(), number);
        }
    }
    for (name, keys) in DETAIL_KEYS {
        if let Some((value, key)) = keys
            .iter()
            .find_map(|key| Some((records.get(*key)?.as_f64()?, key)))
        {
            reading.values.insert(name, (value, format!("key `{key}`")));
        }
    }
    reading
}

/// The summary: `label : value` lines; the validity checks that say `NO` and the recommendations under
/// `Recommendations:` are the reasons of an `INVALID` result. A summary without its closing `Test Parameters
/// Used` block was cut short: what it has is read, with a warning at its last line.
fn read_summary(text: &str, path: &str, warnings: &mut Vec<Warning>) -> Reading {
    let mut reading = Reading {
        from_summary: true,
        ..Reading::default()
    };
    let mut labelled: BTreeMap<String, (String, u64)> = BTreeMap::new();
    let mut recommendations = false;
    let mut parameters = false;
    let mut last_line = 0;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let number = index as u64 + 1;
        if !line.is_empty() {
            last_line = number;
        }
        if line == "Test Parameters Used" {
            parameters = true;
        }
        if line == "Recommendations:" {
            recommendations = true;
            continue;
        }
        if let Some(item) = line.strip_prefix("* ") {
            if recommendations {
                reading.reasons.push(item.trim().to_string());
            }
            continue;
        }
        recommendations = false;
        let Some((label, value)) = line.split_once(':') else {
            continue;
        };
        let (label, value) = (label.trim(), value.trim());
        if label.ends_with("satisfied") && value.eq_ignore_ascii_case("no") {
            reading.reasons.push(format!("{label}: NO"));
        }
        labelled
            .entry(label.to_string())
            .or_insert((value.to_string(), number));
    }
    let line_field = |label: &str, line: u64| format!("line {line} `{label}`");
    if let Some((scenario, line)) = labelled.get("Scenario") {
        reading.scenario = Some((scenario.clone(), line_field("Scenario", *line)));
    }
    reading.mode = labelled.get("Mode").map(|(mode, _)| mode.clone());
    reading.sut = labelled
        .get("SUT name")
        .map(|(sut, line)| (sut.clone(), line_field("SUT name", *line)));
    if let Some((validity, line)) = labelled.get("Result is") {
        reading.valid = Some((validity == "VALID", line_field("Result is", *line)));
    }
    for (label, (value, _)) in &labelled {
        if let Ok(number) = value.parse::<f64>()
            && number.is_finite()
        {
            reading.figures.insert(label.clone(), number);
        }
    }
    for (name, labels) in SUMMARY_LABELS {
        let Some((label, (value, line))) = labels
            .iter()
            .find_map(|label| Some((*label, labelled.get(*label)?)))
        else {
            continue;
        };
        match value.parse::<f64>() {
            Ok(number) if number.is_finite() => {
                reading
                    .values
                    .insert(name, (number, line_field(label, *line)));
            }
            _ => warnings.push(
                Warning::warn(
                    "invalid_figure",
                    format!("`{label}` is `{value}`, not a number; the figure is left out"),
                )
                .file(path)
                .line(*line),
            ),
        }
    }
    if !parameters {
        warnings.push(
            Warning::warn(
                "truncated_log",
                format!(
                    "the summary ends at line {last_line} before its `Test Parameters Used` block: it was cut short; \
                     what it has is read"
                ),
            )
            .file(path)
            .line(last_line),
        );
    }
    reading
}

/// Reads the summary beside a detail log and warns, naming both files, where they disagree on the scenario, the
/// validity, the throughput or the p99 latencies beyond what the summary's printing rounds away. The detail log's
/// values are kept.
fn check_against_summary(
    storage: &dyn Storage,
    detail: &mut Reading,
    path: &str,
    summary_path: &str,
    warnings: &mut Vec<Warning>,
) {
    let Some(bytes) = crate::parse::read_sibling(storage, summary_path, warnings) else {
        return;
    };
    let summary = read_summary(&String::from_utf8_lossy(&bytes), summary_path, warnings);
    let mut differences = Vec::new();
    let text = |reading: &Reading| reading.scenario.as_ref().map(|(value, _)| value.clone());
    if let (Some(left), Some(right)) = (text(detail), text(&summary))
        && left != right
    {
        differences.push(format!("scenario {left} against {right}"));
    }
    if let (Some((left, _)), Some((right, _))) = (&detail.valid, &summary.valid)
        && left != right
    {
        let word = |valid: bool| if valid { "VALID" } else { "INVALID" };
        differences.push(format!("result {} against {}", word(*left), word(*right)));
    }
    for name in [
        "samples_per_s",
        "tokens_per_s",
        "wall_p99",
        "ttft_p99",
        "tpot_p99",
    ] {
        if let (Some(left), Some(right)) = (detail.value(name), summary.value(name))
            && (left - right).abs() > 0.011_f64.max(1e-4 * left.abs().max(right.abs()))
        {
            differences.push(format!(
                "{} {left} against {} {right}",
                detail.field(name),
                summary.field(name)
            ));
        }
    }
    if !differences.is_empty() {
        warnings.push(
            Warning::warn(
                "logs_disagree",
                format!(
                    "the detail log and the summary `{summary_path}` beside it disagree ({}); the detail log's values \
                     are used",
                    differences.join("; ")
                ),
            )
            .file(path),
        );
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The record

/// The cell of one run's log: key parts from the log and the results path, the tool's figures in cellscope's
/// columns, the SLO preset named, and an `INVALID` result marked rejected. `None` (with a warning) when the log
/// states no result.
fn record(path: &str, reading: Reading, warnings: &mut Vec<Warning>) -> Option<RunRecord> {
    let Some((valid, _)) = reading.valid.clone() else {
        let what = if reading.from_summary {
            "no `Result is :` line"
        } else {
            "no `result_validity` record"
        };
        warnings.push(
            Warning::error(
                "no_result",
                format!(
                    "the log has {what}: LoadGen did not finish the run or the log was cut short; it is left out"
                ),
            )
            .file(path),
        );
        return None;
    };
    let results = ResultsPath::of(path);
    let (scenario, scenario_part) = scenario_of(path, &reading, results.as_ref(), warnings);
    let mut notes = vec![format!(
        "the {} figures: latencies are LoadGen's nanoseconds ÷ 10⁶ (ms), samples per second are requests per \
         second, tokens per second are output tokens",
        if reading.from_summary {
            "summary's (there is no detail log beside it)"
        } else {
            "detail log's"
        }
    )];
    if let Some(version) = &reading.version {
        notes.push(format!("LoadGen {version}"));
    }
    if reading.from_summary {
        notes.push(
            "the request count is unknown: a summary counts no queries, and its `samples_per_query` is a setting of \
             the test, not the samples it issued"
                .to_string(),
        );
    }
    let mut key = KeyParts {
        phase: scenario_part.map(|part| match results.as_ref().and_then(|r| r.test.as_ref()) {
            Some(test) => Part {
                value: format!("{}-{test}", part.value),
                how: How::Inferred(format!(
                    "the scenario and the compliance audit directory `{test}` of the results path"
                )),
            },
            None => part,
        }),
        ..KeyParts::default()
    };
    load(&scenario, &reading, &mut key, &mut notes);
    let mut settings = Vec::new();
    if let Some(results) = &results {
        let rule = "the MLPerf results path (`<system>/<benchmark>/<scenario>/performance/run_N`)";
        key.model = Part::inferred(&results.benchmark, rule);
        key.workload = Part::inferred(
            presets::preset_name(&results.benchmark),
            "the MLPerf benchmark (its dataset is fixed), from the results path",
        );
        if let Some(run) = results.run {
            key.rep = Part::inferred(
                run.saturating_sub(1).to_string(),
                format!("the results path's `run_{run}` (run_N is rep N−1)"),
            );
        }
        if let Some(system) = &results.system {
            settings.push(Setting::new(
                "system",
                system,
                How::Inferred(rule.to_string()),
            ));
        }
        slo_preset(
            path,
            &results.benchmark,
            &scenario,
            &reading,
            &mut notes,
            warnings,
        );
    }
    if results.is_none()
        && let Some((sut, field)) = &reading.sut
    {
        // Outside a results tree the log's own SUT name is what tells one submission's system from another's.
        settings.push(Setting::new("system", sut, How::Read(field.clone())));
    }
    if reading.value("inferred_tokens_per_s").is_some() {
        notes.push(
            "LoadGen's token rate for this benchmark is inferred (samples × a fixed tokens-per-sample factor), not \
             measured: it is kept as a figure, not as the output tok/s"
                .to_string(),
        );
    }
    let rejected = (!valid).then(|| {
        let why = if reading.reasons.is_empty() {
            "the log states no reason".to_string()
        } else {
            reading.reasons.join("; ")
        };
        warnings.push(
            Warning::warn(
                "mlperf_invalid",
                format!(
                    "LoadGen judged this {scenario} run INVALID ({why}); its figures are kept, marked as the tool's, \
                     and it counts as failed"
                ),
            )
            .file(path),
        );
        ("mlperf_invalid".to_string(), why)
    });
    Some(RunRecord {
        record: 0,
        line: None,
        fields: serde_json::json!({
            "scenario": scenario,
            "system": results.as_ref().and_then(|r| r.system.clone()),
            "benchmark": results.as_ref().map(|r| r.benchmark.clone()),
            "validity": if valid { "VALID" } else { "INVALID" },
        }),
        key,
        requests: Vec::new(),
        has_requests: false,
        expected_rows: None,
        completed: completed(&scenario, &reading),
        failed: None,
        duration_s: None,
        reported: reported(&scenario, &reading),
        reported_figures: reading.figures.clone(),
        wall_derived: false,
        notes,
        settings,
        rejected,
        started: reading.started.clone(),
        ..RunRecord::default()
    })
}

/// The scenario: the log's, else the path's. A path saying `Interactive` over a log saying `Server` is the
/// interactive variant (LoadGen runs it as Server); any other disagreement is warned about, the log winning.
fn scenario_of(
    path: &str,
    reading: &Reading,
    results: Option<&ResultsPath>,
    warnings: &mut Vec<Warning>,
) -> (String, Option<Part>) {
    let from_path = results.map(|results| results.scenario.clone());
    match (&reading.scenario, from_path) {
        (Some((logged, _)), Some(directory))
            if directory == "Interactive" && logged == "Server" =>
        {
            (
                directory.clone(),
                Part::inferred(
                    directory,
                    "the results path's `Interactive` directory (LoadGen logs the run as Server)",
                ),
            )
        }
        (Some((logged, field)), directory) => {
            if let Some(directory) = directory.filter(|directory| directory != logged) {
                warnings.push(
                    Warning::warn(
                        "path_conflict",
                        format!(
                            "the path says scenario {directory} (its `{directory}` directory) but the log says \
                             {logged} ({field}); the log's is used"
                        ),
                    )
                    .file(path),
                );
            }
            (logged.clone(), Part::read(logged.clone(), field.clone()))
        }
        (None, Some(directory)) => (
            directory.clone(),
            Part::inferred(directory, "the results path's scenario directory"),
        ),
        (None, None) => (String::new(), None),
    }
}

/// The load each scenario offers: Server (and Interactive) its target QPS as the offered rate, Offline every
/// sample at once, SingleStream one query at a time, MultiStream one query of `samples_per_query` samples at a
/// time.
fn load(scenario: &str, reading: &Reading, key: &mut KeyParts, notes: &mut Vec<String>) {
    match scenario {
        "Server" | "Interactive" => {
            if let Some(rate) = reading
                .value("target_qps")
                .and_then(cellscope_model::RateRps::new)
            {
                key.rate = Part::read(rate.to_string(), reading.field("target_qps"));
                notes.push(
                    "the offered rate is LoadGen's target QPS (Poisson arrivals); the achieved rate is the request \
                     throughput"
                        .to_string(),
                );
            }
        }
        "Offline" => {
            key.rate = Part::inferred(
                "inf",
                "the Offline scenario issues every sample at once (one query)",
            );
        }
        "SingleStream" => {
            key.n = Part::inferred(
                "1",
                "the SingleStream scenario issues one query at a time, the next when it completes",
            );
        }
        "MultiStream" => {
            if let Some(samples) = reading
                .value("samples_per_query")
                .filter(|samples| *samples >= 1.0 && samples.fract() == 0.0)
            {
                key.n = Part::inferred(
                    format!("{samples}"),
                    "the MultiStream scenario issues one query of `samples_per_query` samples at a time: that many \
                     in flight",
                );
            }
        }
        _ => {}
    }
}

/// The samples LoadGen completed: its query count times the samples per query (Server and SingleStream queries
/// are one sample, an Offline run one query of them all). Only the detail log counts queries: a summary's
/// `samples_per_query` is a setting, not what was issued, so a summary alone gives no count.
fn completed(scenario: &str, reading: &Reading) -> Option<u32> {
    let samples_per_query = reading.value("samples_per_query");
    let count = match (reading.value("query_count"), samples_per_query) {
        (Some(queries), Some(samples)) => queries * samples,
        (Some(queries), None) if scenario == "Server" || scenario == "SingleStream" => queries,
        _ => return None,
    };
    (count.is_finite() && count >= 0.0 && count <= f64::from(u32::MAX)).then_some(count as u32)
}

/// The tool's figures as cells-table columns: nanoseconds → ms, samples per second as requests per second,
/// tokens per second as output tok/s. A MultiStream summary states per-query latencies only, which are not one
/// request's, so its latencies are left out.
fn reported(scenario: &str, reading: &Reading) -> BTreeMap<String, f64> {
    let latencies = [
        (Stat::MeanWallMs, "wall_mean"),
        (Stat::P50WallMs, "wall_p50"),
        (Stat::P95WallMs, "wall_p95"),
        (Stat::P99WallMs, "wall_p99"),
        (Stat::MeanTtftMs, "ttft_mean"),
        (Stat::P50TtftMs, "ttft_p50"),
        (Stat::P95TtftMs, "ttft_p95"),
        (Stat::P99TtftMs, "ttft_p99"),
        (Stat::MeanTpotMs, "tpot_mean"),
        (Stat::P50TpotMs, "tpot_p50"),
        (Stat::P95TpotMs, "tpot_p95"),
        (Stat::P99TpotMs, "tpot_p99"),
    ];
    let skip_wall = reading.from_summary && scenario == "MultiStream";
    let mut out = BTreeMap::new();
    for (stat, name) in latencies {
        if skip_wall && name.starts_with("wall") {
            continue;
        }
        if let Some(value) = reading.value(name) {
            out.insert(stat.name().to_string(), value / 1e6);
        }
    }
    for (stat, name) in [
        (Stat::AggregateTps, "tokens_per_s"),
        (Stat::RequestThroughputRps, "samples_per_s"),
    ] {
        if let Some(value) = reading.value(name) {
            out.insert(stat.name().to_string(), value);
        }
    }
    out
}

/// Names the SLO preset of the benchmark (its interactive variant in the Interactive scenario) in a note, and
/// warns when the log's own TTFT/TPOT bounds differ from the preset's (the log's stay among its figures).
fn slo_preset(
    path: &str,
    benchmark: &str,
    scenario: &str,
    reading: &Reading,
    notes: &mut Vec<String>,
    warnings: &mut Vec<Warning>,
) {
    let name = if scenario == "Interactive" {
        presets::interactive_name(benchmark)
    } else {
        presets::preset_name(benchmark)
    };
    let Ok(slo) = cellscope_model::slo::Slo::preset(&name) else {
        notes.push(format!(
            "no SLO preset for the benchmark `{benchmark}` (the presets: {})",
            presets::names().join(", ")
        ));
        return;
    };
    notes.push(format!(
        "slo={name}: MLPerf's Server bounds for the benchmark ({slo})"
    ));
    let bound = |column: &str| {
        slo.bounds
            .iter()
            .find(|bound| bound.column == column)
            .map(|bound| bound.max)
    };
    let mut differences = Vec::new();
    for (name_ns, column, label) in [
        ("ttft_bound_ns", "p99_ttft_ms", "ttft_latency"),
        ("tpot_bound_ns", "p99_tpot_ms", "tpot_latency"),
    ] {
        if let (Some(logged), Some(preset)) =
            (reading.value(name_ns).map(|ns| ns / 1e6), bound(column))
            && (logged - preset).abs() > 1e-6
        {
            differences.push(format!("{label} {logged} ms against {preset} ms"));
        }
    }
    if !differences.is_empty() {
        warnings.push(
            Warning::warn(
                "slo_differs",
                format!(
                    "the log's latency bounds differ from the preset `{name}` ({}); the log's are kept as its \
                     figures, the preset is MLPerf's current table",
                    differences.join(", ")
                ),
            )
            .file(path),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_results_path_gives_system_benchmark_scenario_and_run() {
        let path = "closed/X/results/8xH100_TRT/llama2-70b-99.9/Server/performance/run_1/mlperf_log_detail.txt";
        let results = ResultsPath::of(path).expect("a results path");
        assert_eq!(results.system.as_deref(), Some("8xH100_TRT"));
        assert_eq!(results.benchmark, "llama2-70b-99.9");
        assert_eq!(results.scenario, "Server");
        assert_eq!(results.run, Some(1));
        assert_eq!(results.root, "closed/X/results/8xH100_TRT/llama2-70b-99.9");
        let audit = ResultsPath::of("c/S/gptj-99/Offline/TEST01/performance/run_1/a.txt").unwrap();
        assert_eq!(audit.test.as_deref(), Some("TEST01"));
        assert_eq!(ResultsPath::of("runs/Server/other/x.txt"), None);
        assert_eq!(ResultsPath::of("x.txt"), None);
    }

    #[test]
    fn logs_are_known_by_content_and_side_files_by_name() {
        assert_eq!(kind_of(b"\n:::MLLOG {}"), Some(Kind::Detail));
        assert_eq!(
            kind_of(b"====\nMLPerf Results Summary\n"),
            Some(Kind::Summary)
        );
        assert_eq!(kind_of(b"anything"), None);
        assert!(
            MlperfLoadgen
                .examine_head("a/renamed.log", b":::MLLOG {\"key\": 1}")
                .reads()
        );
        assert!(
            !MlperfLoadgen
                .examine_head("a/mlperf_log_accuracy.json", b"[\n{\"qsl_idx\"")
                .reads()
        );
        assert!(matches!(
            MlperfLoadgen.examine_head("a/out.json", b"[{\"seq_id\": 0, \"qsl_idx\": 1"),
            Verdict::SideFile { .. }
        ));
    }
}
