//! The CSV exports of GenAI-Perf (`profile_export_genai_perf.csv`) and AIPerf (`profile_export_aiperf.csv`): a
//! table of metrics (`Metric,avg,min,max,p99,…`, one row per metric named with its unit, `Time To First Token
//! (ms)`) and, after a blank line, a table of scalars (`Metric,Value`). Numbers carry two decimals and, from a
//! thousand up, thousands separators inside quotes (`"1,019.69"`); AIPerf ends its lines with CRLF.
//!
//! The export is the cell only when no JSON of the same run is beside it (a summary, or the per-request records
//! or raw export its tool's reader reads): then the JSON is the cell, and its reader checks the two agree
//! ([`check_against`]). The metrics are turned into the summary's metric objects and read by the same rules.

use super::RunFormat;
use crate::parse::perf_metrics::{self, ms_per_unit};
use crate::records::verdict::{Nearness, Verdict};
use crate::run::record::{FileAt, KeyParts, RunRecord};
use crate::storage::{self, Storage};
use cellscope_model::api::Warning;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

pub(super) struct PerfCsv;

/// The format, as the registry lists it.
pub(crate) static FORMAT: &dyn RunFormat = &PerfCsv;

/// The JSON files beside an export whose reader reads the run: AIPerf's summary or per-request records,
/// GenAI-Perf's raw export.
const JSON_SIBLINGS: [&str; 3] = [
    "profile_export_aiperf.json",
    "profile_export.jsonl",
    "profile_export.json",
];

/// The first cells of an export's header.
const HEADER: &str = "Metric,avg,";

/// One export, read: metric objects by tag (`{"unit": "ms", "avg": …, "p50": …}`) and where each row was.
#[derive(Debug, Default)]
pub(super) struct Export {
    pub metrics: Map<String, Json>,
    pub lines: BTreeMap<String, u64>,
}

impl RunFormat for PerfCsv {
    fn name(&self) -> &'static str {
        "perf-csv"
    }

    /// [`RunFormat::examine`], except that an export with its run's JSON beside it is that run's figures again.
    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        let (storage, path, head) = (file.storage, file.path, file.head);
        let verdict = self.examine_head(path, head);
        if !verdict.reads() {
            return verdict;
        }
        match json_beside(storage, path) {
            Some(name) => Verdict::declines(
                Nearness::SomeMarks,
                format!(
                    "a CSV export of the figures of `{name}` beside it, which is read instead (and checked \
                     against it)"
                ),
            ),
            None => verdict,
        }
    }

    fn run_root(&self, path: &str) -> String {
        crate::records::default_run_root(path)
    }

    fn records(&self, file: &FileAt<'_>, warnings: &mut Vec<Warning>) -> Vec<RunRecord> {
        let (storage, path) = (file.storage, file.path);
        let Some(bytes) = crate::parse::read_file(storage, path, warnings) else {
            return Vec::new();
        };
        let export = read(&bytes, path, warnings);
        if export.metrics.is_empty() {
            warnings.push(
                Warning::error(
                    "invalid_result",
                    "the CSV export has no metric rows; the run is left out",
                )
                .file(path),
            );
            return Vec::new();
        }
        vec![record(path, export)]
    }
}

impl PerfCsv {
    /// A `.csv` file whose first line is `Metric,avg,…`.
    pub(super) fn examine_head(&self, path: &str, head: &[u8]) -> Verdict {
        if !storage::file_name(path).ends_with(".csv") {
            return Verdict::declines(
                Nearness::OtherKind,
                "a file that is not .csv, which a GenAI-Perf or AIPerf export is",
            );
        }
        let text = String::from_utf8_lossy(crate::run::bytes::without_boms(head));
        if !text.trim_start().starts_with(HEADER) {
            // Any other table is the generic table reader's to judge, so this reader is never the nearest.
            return Verdict::declines(
                Nearness::OtherKind,
                format!(
                    "a CSV file whose header does not start `{HEADER}…`, as GenAI-Perf's and AIPerf's exports do"
                ),
            );
        }
        Verdict::Reads
    }
}

/// The JSON of the run beside an export, whose reader reads the run (and checks the export): AIPerf's summary or
/// per-request records and GenAI-Perf's raw export under their default names, a summary under its tool's suffix
/// (`*_genai_perf.json`, `*_aiperf.json`), or the export's own stem as `.json`/`.jsonl` (AIPerf's
/// `--profile-export-prefix` names all its files so).
fn json_beside(storage: &dyn Storage, path: &str) -> Option<String> {
    let directory = storage::parent(path);
    let name = storage::file_name(path);
    let stem = name.strip_suffix(".csv").unwrap_or(name);
    let entries = storage.list(directory).ok()?;
    let mut names: Vec<String> = entries
        .into_iter()
        .filter(|entry| entry.kind == storage::EntryKind::File)
        .map(|entry| entry.name)
        .collect();
    names.sort();
    names.into_iter().find(|sibling| {
        JSON_SIBLINGS.contains(&sibling.as_str())
            || sibling.ends_with("_genai_perf.json")
            || sibling.ends_with("_aiperf.json")
            || *sibling == format!("{stem}.json")
            || *sibling == format!("{stem}.jsonl")
    })
}

/// The record of an export read on its own: the tool's figures, reported; the load and model from the default
/// rules and the artifact directory's name.
fn record(path: &str, export: Export) -> RunRecord {
    let metrics = Json::Object(export.metrics);
    let scalar = |tag: &str| {
        metrics
            .get(tag)
            .and_then(|metric| metric.get("avg"))
            .and_then(Json::as_f64)
    };
    let count = |tag: &str| {
        scalar(tag)
            .filter(|value| *value >= 0.0 && value.fract() == 0.0)
            .map(|value| value as u32)
    };
    let key = KeyParts {
        model: perf_metrics::directory_model(storage::file_name(storage::parent(path))),
        ..KeyParts::default()
    };
    RunRecord {
        key,
        // AIPerf's request count is of the requests that succeeded; GenAI-Perf's export has none.
        completed: count("request_count"),
        failed: count("error_request_count"),
        duration_s: scalar("benchmark_duration"),
        reported: perf_metrics::reported(&metrics),
        reported_figures: crate::records::figures::metric_figures(&metrics),
        notes: vec![
            "figures from the tool's CSV export, printed to two decimals (no JSON of the run is beside it)"
                .to_string(),
        ],
        fields: metrics,
        ..RunRecord::default()
    }
}

/// The rows of an export as metric objects. A row whose numbers cannot be read is a warning at its line; the
/// other rows are kept. The exports quote no line breaks, so each line is one row (and its line is known exactly).
pub(super) fn read(bytes: &[u8], path: &str, warnings: &mut Vec<Warning>) -> Export {
    let text = String::from_utf8_lossy(crate::run::bytes::without_boms(bytes));
    let mut export = Export::default();
    let mut columns: Vec<String> = Vec::new();
    for (index, line_text) in text.lines().enumerate() {
        let line = index as u64 + 1;
        let Some(cells) = row_cells(line_text) else {
            warnings.push(
                Warning::warn(
                    "invalid_csv",
                    "the CSV row cannot be read (an unclosed quote); it is left out",
                )
                .file(path)
                .line(line),
            );
            continue;
        };
        if cells.iter().all(|cell| cell.is_empty()) {
            continue;
        }
        if cells[0] == "Metric" {
            columns = cells[1..].to_vec();
            continue;
        }
        let (tag, metric) = metric_of(&cells, &columns, path, line, warnings);
        export.lines.insert(tag.clone(), line);
        export.metrics.insert(tag, Json::Object(metric));
    }
    export
}

/// The trimmed cells of one line, or `None` when it is not one CSV record.
fn row_cells(line: &str) -> Option<Vec<String>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line.as_bytes());
    let record = match reader.records().next() {
        None => return Some(Vec::new()),
        Some(record) => record.ok()?,
    };
    if line.matches('"').count() % 2 == 1 {
        return None;
    }
    Some(record.iter().map(|cell| cell.trim().to_string()).collect())
}

/// One metric row as a metric object under its tag: each column's number, the `Value` of a scalar as `avg`.
fn metric_of(
    cells: &[String],
    columns: &[String],
    path: &str,
    line: u64,
    warnings: &mut Vec<Warning>,
) -> (String, Map<String, Json>) {
    let (tag, unit) = tag_and_unit(&cells[0]);
    let mut metric = Map::new();
    if let Some(unit) = unit {
        metric.insert("unit".to_string(), Json::from(unit));
    }
    for (column, cell) in columns.iter().zip(&cells[1..]) {
        let stat = if column == "Value" {
            "avg"
        } else {
            column.as_str()
        };
        match number(cell) {
            Some(value) => {
                metric.insert(stat.to_string(), Json::from(value));
            }
            None if cell.is_empty() => {}
            None => warnings.push(
                Warning::warn(
                    "bad_number",
                    format!(
                        "`{}` {column} is `{cell}`, not a number; it is left out",
                        cells[0]
                    ),
                )
                .file(path)
                .line(line),
            ),
        }
    }
    (tag, metric)
}

/// `Time To First Token (ms)` → (`time_to_first_token`, `ms`); `Request Throughput (per sec)` →
/// (`request_throughput`, `per sec`). The tag is the name the tools' JSON gives the metric.
fn tag_and_unit(name: &str) -> (String, Option<String>) {
    let (name, unit) = match name.rsplit_once(" (") {
        Some((name, unit)) => (name, unit.strip_suffix(')').map(str::to_string)),
        None => (name, None),
    };
    let tag = name
        .trim()
        .to_ascii_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("_");
    // A time unit keeps its name for the time rules; counts and rates are read as written.
    let unit = unit.filter(|unit| ms_per_unit(unit).is_some());
    (tag, unit)
}

/// A number as the exports print it: `49.54`, `"1,019.69"` (the quotes already removed by the CSV reader).
fn number(cell: &str) -> Option<f64> {
    let plain: String = cell.chars().filter(|c| *c != ',').collect();
    plain.parse::<f64>().ok().filter(|value| value.is_finite())
}

/// Checks the export beside a JSON summary against the figures read from it (`reported`, cells-table columns):
/// each figure both give must agree to the export's two printed decimals; a disagreement is a warning naming
/// both files.
pub(super) fn check_against(
    storage: &dyn Storage,
    json_path: &str,
    reported: &BTreeMap<String, f64>,
    warnings: &mut Vec<Warning>,
) {
    let directory = storage::parent(json_path);
    let name = storage::file_name(json_path);
    let stem = name
        .strip_suffix(".json")
        .map(|stem| stem.strip_suffix("_genai_perf").unwrap_or(stem))
        .unwrap_or(name);
    let Some(csv_path) = [
        format!("{stem}_genai_perf.csv"),
        format!("{stem}.csv"),
        "profile_export_aiperf.csv".to_string(),
        "profile_export_genai_perf.csv".to_string(),
    ]
    .into_iter()
    .map(|name| storage::join(directory, &name))
    .find(|path| storage.stat(path).is_ok_and(|meta| meta.is_file())) else {
        return;
    };
    let Some(bytes) = crate::parse::read_sibling(storage, &csv_path, warnings) else {
        return;
    };
    let mut ignored = Vec::new();
    let export = read(&bytes, &csv_path, &mut ignored);
    let from_csv = perf_metrics::reported(&Json::Object(export.metrics));
    let differing: Vec<String> = from_csv
        .iter()
        .filter_map(|(column, csv_value)| {
            let json_value = reported.get(column)?;
            // Two decimals: half a hundredth, and a little for the float arithmetic of unit conversion.
            let agrees = (csv_value - json_value).abs() <= 0.005 + 1e-5 * json_value.abs();
            (!agrees).then(|| format!("{column} {csv_value} (CSV) vs {json_value} (JSON)"))
        })
        .collect();
    if !differing.is_empty() {
        warnings.push(
            Warning::warn(
                "export_disagrees",
                format!(
                    "the CSV export `{csv_path}` disagrees with this JSON beside it: {}; the JSON's figures are \
                     shown",
                    differing.join(", ")
                ),
            )
            .file(json_path),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_units_and_numbers_as_the_exports_print_them() {
        assert_eq!(
            tag_and_unit("Time To First Token (ms)"),
            ("time_to_first_token".to_string(), Some("ms".to_string()))
        );
        assert_eq!(
            tag_and_unit("Output Token Throughput (tokens/sec)"),
            ("output_token_throughput".to_string(), None)
        );
        assert_eq!(tag_and_unit("Request Count").0, "request_count");
        assert_eq!(number("1,019.69"), Some(1019.69));
        assert_eq!(number("fast"), None);
    }

    #[test]
    fn two_tables_with_crlf_and_quoted_thousands() {
        let text = "Metric,avg,min,max,p99,p95,p90,p75,p50,p25\r\nRequest Latency (ms),\"1,204.50\",\"1,000.00\",\"1,500.25\",1,1,1,1,\"1,190.00\",1\r\n\r\nMetric,Value\r\nRequest Throughput (per sec),\"2,018.96\"\r\n";
        let mut warnings = Vec::new();
        let export = read(text.as_bytes(), "x.csv", &mut warnings);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(export.metrics["request_latency"]["p50"], 1190.0);
        assert_eq!(export.metrics["request_throughput"]["avg"], 2018.96);
        assert_eq!(export.lines["request_throughput"], 5);
    }
}
