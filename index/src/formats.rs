//! The run-format half of the ingest seam: every input format is a [`RunFormat`] that detects its files by
//! content, reads them into the stage-2 product ([`RunRead`]: cells with request statistics and row locators)
//! and reads one cell's rows back.
//!
//! TR164 run directories ([`tr164`]) read their side files, backups and lineage evidence themselves. The other
//! tools' formats only say what is in their files: one [`RunRecord`] per measured cell (key parts as read,
//! per-request rows, the tool's own aggregates). Everything else, the cell key (`cellscope.toml` and the default
//! rules, [`key`]), the statistics (the model's [`CellAccumulator`]), what is reported or derived and the rows
//! read back, is done here once for all of them, so a new format is one sibling module plus one line in
//! [`FORMATS`].

pub mod aiperf;
pub mod config;
pub mod console_log;
pub mod genai_perf;
pub mod guidellm;
pub mod inference_perf;
pub mod inferencex;
pub mod json;
mod key;
pub mod llmd_report;
pub mod llmperf;
pub mod mlperf;
mod outline;
mod parallel;
pub mod perf_csv;
pub mod perf_metrics;
mod scan;
pub mod sglang;
pub mod table;
pub mod tr164;
pub mod verdict;
pub mod vllm;
pub mod yaml;

use crate::mapping::Mapping;
use crate::run::bytes::digest;
use crate::run::found::{DetectedRun, Offered, RunDir};
use crate::run::parsed::{ExternalCell, IdCount, ParsedCell, ParsedMetrics};
use crate::run::rows::{CellRows, ExternalRows, RowsError};
use crate::run::{IndexOptions, ReadContext, RunRead};
use crate::storage::{self, Storage};
use cellscope_model::api::{FileDigest, Warning};
use cellscope_model::origin::{CellOrigin, FigureOrigin};
use cellscope_model::requests::{Lineage, RequestRow, RowClass};
use cellscope_model::stat::Stat;
use cellscope_model::stats::{CellAccumulator, CellStats, MAX_LATENCY_MS, RequestSample};
use serde_json::Value as Json;
use std::collections::BTreeMap;

pub use key::explain_rules;
pub use verdict::{Nearness, Verdict};

/// One input format.
pub trait RunFormat: Sync {
    /// A stable name, shown in the audit and the inspector (`tr164`, `vllm-bench`, …).
    fn name(&self) -> &'static str;

    /// What this format makes of the file at `path` (relative to the data root), whose first bytes are `head`:
    /// it reads it, knows it as a side file of a run, or declines it and says why. Decided by content: tools let
    /// users rename their files.
    fn examine(&self, path: &str, head: &[u8]) -> Verdict;

    /// [`RunFormat::examine`] for a format that also needs `cellscope.toml` or more of the file than its head
    /// (a generic table named by a `[[table]]` glob, a Parquet schema in the footer). By default, `examine`.
    fn examine_in(
        &self,
        storage: &dyn Storage,
        path: &str,
        head: &[u8],
        mapping: &Mapping,
    ) -> Verdict {
        let _ = (storage, mapping);
        self.examine(path, head)
    }

    /// Whether the file is one of this format's: [`RunFormat::examine`] reads it.
    fn detect(&self, path: &str, head: &[u8]) -> bool {
        self.examine(path, head).reads()
    }

    /// Whether the file is one of this format's: [`RunFormat::examine_in`] reads it.
    fn detect_in(&self, storage: &dyn Storage, path: &str, head: &[u8], mapping: &Mapping) -> bool {
        self.examine_in(storage, path, head, mapping).reads()
    }

    /// The directory whose detected files together form one run (the sweep), relative to the data root.
    fn run_root(&self, path: &str) -> String {
        default_run_root(path)
    }

    /// The run records (one per measured cell) of one detected file. Problems go to `warnings` with the file
    /// and line or record they are about; a file that cannot be read gives no records, never a panic.
    fn records(
        &self,
        storage: &dyn Storage,
        path: &str,
        warnings: &mut Vec<Warning>,
    ) -> Vec<RunRecord>;

    /// [`RunFormat::records`] for a format whose columns `cellscope.toml` names. By default, `records`.
    fn records_in(
        &self,
        storage: &dyn Storage,
        path: &str,
        mapping: &Mapping,
        warnings: &mut Vec<Warning>,
    ) -> Vec<RunRecord> {
        let _ = mapping;
        self.records(storage, path, warnings)
    }

    /// Reads one run: by default the records of every file, mapped to cells by [`read_records`].
    fn read_run(&self, context: &ReadContext<'_>, run: &DetectedRun) -> RunRead {
        read_records(self, context, run)
    }

    /// The request rows of one cell, read back from its file.
    fn read_rows(
        &self,
        storage: &dyn Storage,
        rows: &CellRows,
    ) -> Result<Vec<RequestRow>, RowsError> {
        read_record_rows(self, storage, rows)
    }
}

/// Every format, in detection order (TR164 first: its `metrics.csv` is recognised by name and header; the
/// generic table last, so every specific format wins a file it recognises).
pub static FORMATS: &[&dyn RunFormat] = &[
    &tr164::Tr164,
    &vllm::VllmBench,
    &sglang::SglangBench,
    &aiperf::Aiperf,
    &genai_perf::GenaiPerf,
    &llmperf::Llmperf,
    &guidellm::Guidellm,
    &inferencex::InferencexAggregate,
    &perf_csv::PerfCsv,
    &llmd_report::LlmdReport,
    &inference_perf::InferencePerf,
    &mlperf::MlperfLoadgen,
    &console_log::ConsoleLog,
    &table::Table,
];

/// The other tool's format whose content the file at `path` has, looking at its first [`HEAD_BYTES`] only (of its
/// outline, for a longer JSON file: see `formats/outline.rs`), and the root of its run; or, when no format reads
/// it, why (TR164 run directories are found by discovery, by their metrics file's name). The first format in
/// [`FORMATS`] that reads the file takes it.
pub fn recognise(storage: &dyn Storage, mapping: &Mapping, path: &str) -> Offered {
    let head = match storage
        .read_range(path, 0..HEAD_BYTES)
        .and_then(|head| outline::head(storage, path, head, HEAD_BYTES))
    {
        Ok(head) => head,
        Err(error) => {
            return Offered::Unread(crate::run::found::Unread {
                side_of: Vec::new(),
                reason: format!("the file cannot be read ({error}), so no reader could look at it"),
                problem: Some(if storage::not_a_file(&error) {
                    "not_a_file"
                } else {
                    "unreadable_file"
                }),
                resembles_a_result: false,
            });
        }
    };
    let mut verdicts = Vec::new();
    for format in FORMATS
        .iter()
        .filter(|format| format.name() != tr164::Tr164.name())
    {
        let verdict = format.examine_in(storage, path, &head, mapping);
        if verdict.reads() {
            return Offered::Run {
                format: format.name(),
                root: format.run_root(path),
            };
        }
        verdicts.push((format.name(), verdict));
    }
    let mut unread = verdict::unread(&verdicts);
    if let Some((kind, reason)) = result_problem(path, &head) {
        unread.problem = Some(kind);
        unread.reason = reason.to_string();
    }
    Offered::Unread(unread)
}

/// Why a file no reader took is a result that cannot be read rather than an unknown file: its warning kind and
/// reason. A format may claim such a file by its name and report it itself, which is why this comes last.
fn result_problem(path: &str, head: &[u8]) -> Option<(&'static str, &'static str)> {
    let is_parquet = storage::file_name(path)
        .to_ascii_lowercase()
        .ends_with(".parquet");
    if is_result_name(path) && head.iter().all(u8::is_ascii_whitespace) {
        Some((
            "empty_file",
            "the file is empty (a result cut before its first byte, or never written): there is nothing to read",
        ))
    } else if is_result_name(path)
        && (head.starts_with(&[0xff, 0xfe]) || head.starts_with(&[0xfe, 0xff]))
    {
        Some((
            "utf16_file",
            "the file is UTF-16 text (as a Windows shell's `>` writes it); results are read as UTF-8: convert it \
             (`iconv -f UTF-16 -t UTF-8`) to index it",
        ))
    } else if is_parquet && head.starts_with(b"PAR1") {
        Some((
            "corrupt_file",
            "the file starts as Parquet but its footer (the schema and where the data lies) cannot be read: it \
             was cut short or damaged, and nothing of it is indexed",
        ))
    } else {
        None
    }
}

/// Whether a file's name is one results are written under (`.json`, `.jsonl`, `.csv`, `.yaml`, `.txt`, `.log`).
fn is_result_name(path: &str) -> bool {
    let name = storage::file_name(path).to_ascii_lowercase();
    [".json", ".jsonl", ".csv", ".yaml", ".yml", ".txt", ".log"]
        .iter()
        .any(|extension| name.ends_with(extension))
}

/// The format called `name`.
pub fn by_name(name: &str) -> Option<&'static dyn RunFormat> {
    FORMATS.iter().copied().find(|format| format.name() == name)
}

/// How many leading bytes detection looks at.
pub const HEAD_BYTES: u64 = 64 * 1024;

/// A directory named for a load level (`concurrency8`, `concurrency_8`, `c8`, `n8`, `max_concurrency=8`,
/// `request_rate_5.0`): users make one directory per level, and the sweep is the directory above.
pub fn is_load_level_directory(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let digits_after = |prefix: &str| {
        lower.strip_prefix(prefix).is_some_and(|rest| {
            !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
    };
    [
        "concurrency_",
        "concurrency",
        "max_concurrency=",
        "request_rate_",
        "c",
        "n",
    ]
    .iter()
    .any(|prefix| digits_after(prefix))
        || lower.ends_with(|c: char| c.is_ascii_digit())
            && ["-concurrency", "_concurrency"]
                .iter()
                .any(|marker| lower.contains(marker))
}

/// The file's directory, or the one above when the directory is named for a load level.
pub fn default_run_root(path: &str) -> String {
    let directory = storage::parent(path);
    if is_load_level_directory(storage::file_name(directory)) {
        storage::parent(directory).to_string()
    } else {
        directory.to_string()
    }
}

/// A key part and how it was obtained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub value: String,
    pub how: How,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum How {
    /// Read from the named field or place of the file.
    Read(String),
    /// Inferred by the named rule.
    Inferred(String),
}

impl Part {
    pub fn read(value: impl Into<String>, field: impl Into<String>) -> Option<Part> {
        Some(Part {
            value: value.into(),
            how: How::Read(field.into()),
        })
    }

    pub fn inferred(value: impl Into<String>, rule: impl Into<String>) -> Option<Part> {
        Some(Part {
            value: value.into(),
            how: How::Inferred(rule.into()),
        })
    }
}

/// The key parts a record states; `None` leaves the dimension to `cellscope.toml` or the default rule.
#[derive(Clone, Debug, Default)]
pub struct KeyParts {
    /// Suite and phase are stated only by files that have them (a table's columns).
    pub suite: Option<Part>,
    pub phase: Option<Part>,
    pub backend: Option<Part>,
    pub model: Option<Part>,
    pub workload: Option<Part>,
    /// The load: a concurrency `n`, else an offered request rate (`rate`, req/s, `inf` allowed).
    pub n: Option<Part>,
    pub rate: Option<Part>,
    pub rep: Option<Part>,
}

/// The offered request rate a record's `field` states (a number, `"inf"`, `Infinity`, a number as a string), as
/// a key part; `None` when the field is absent, null or not a rate above zero.
pub fn rate_part(object: &Json, field: &str) -> Option<Part> {
    let rate = object
        .get(field)
        .and_then(json::number)
        .and_then(cellscope_model::RateRps::new)?;
    Part::read(rate.to_string(), format!("field `{field}`"))
}

/// One request as a tool recorded it, in cellscope's units (ms, tokens, seconds). Missing values stay `None`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Request {
    pub wall_ms: Option<f64>,
    pub ttft_ms: Option<f64>,
    /// The inter-token gaps in order, ms, when the file records them per request.
    pub itl_ms: Option<Vec<f64>>,
    pub prompt_tokens: Option<f64>,
    pub completion_tokens: Option<f64>,
    /// Start and end on one clock, in seconds (epoch or monotonic); both or neither.
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    /// `Some` for a failed request: the tool's error text (may be empty when only a code is known).
    pub error: Option<String>,
}

/// One measured cell of another tool's file.
#[derive(Clone, Debug, Default)]
pub struct RunRecord {
    /// Which record of the file, from 0 (object, line, benchmark, experiment).
    pub record: u32,
    /// 1-based line where the record starts, for line-oriented files.
    pub line: Option<u64>,
    /// The record's own fields, for `{field}` templates in `cellscope.toml`.
    pub fields: Json,
    pub key: KeyParts,
    /// Per-request rows; empty when the file holds aggregates only.
    pub requests: Vec<Request>,
    /// The file has per-request rows (even if none survived).
    pub has_requests: bool,
    /// Requests the tool sent, when it says (vLLM `num_prompts`): the expected rows.
    pub expected_rows: Option<u32>,
    /// Succeeded and failed requests known only as counts (aggregate-only records).
    pub completed: Option<u32>,
    pub failed: Option<u32>,
    /// The tool's measured duration in seconds: the throughput span when requests carry no timestamps.
    pub duration_s: Option<f64>,
    /// The tool's own aggregates by cells-table column name (ms, tokens, tok/s).
    pub reported: BTreeMap<String, f64>,
    /// Every number the tool reports for the record, under its own key ([`top_level_figures`],
    /// [`metric_figures`]), whether or not a cells-table column corresponds to it.
    pub reported_figures: BTreeMap<String, f64>,
    /// Wall latency was rebuilt (TTFT + Σ ITL) rather than read.
    pub wall_derived: bool,
    pub notes: Vec<String>,
    /// Figures the reader computed from the tool's (a per-GPU throughput times the GPUs it was divided by), by
    /// cells-table column; shown marked derived, and only where neither the requests nor `reported` give one.
    pub derived: BTreeMap<String, f64>,
    /// Deployment parameters the record states in its own structure (a stack description, a name field), each
    /// with the field it was read from; they join those [`config::config_from_fields`] finds.
    pub settings: Vec<config::Setting>,
    /// The tool judged the whole record invalid (an MLPerf `INVALID` result): the status word its requests are
    /// counted under as failed, and why. Its figures stay, marked reported, but never as a clean cell's.
    pub rejected: Option<(String, String)>,
    /// Requests left out because a number of theirs is not a measurement ([`drop_bad_requests`]).
    pub malformed: u32,
    /// Settings the record states that are neither measurements, times nor ids, nor already part of its key (a
    /// wrapper script's serve parameter, a run label), by name: records that would share a key but differ in one
    /// are kept apart by it rather than taken as repetitions (`key`, `records_differ`).
    pub recorded: BTreeMap<String, String>,
}

/// The statistics columns a record can fill, in cells-table order (the model's list).
pub use cellscope_model::origin::STAT_COLUMNS;

/// Reads a whole file, reporting a read failure as a warning on the file.
pub fn read_file(
    storage: &dyn Storage,
    path: &str,
    warnings: &mut Vec<Warning>,
) -> Option<Vec<u8>> {
    match storage::read_bounded(storage, path, storage::MAX_DOCUMENT_BYTES) {
        Ok(bytes) => Some(bytes),
        Err(error) => {
            warnings.push(storage::unreadable_warning(&error, path));
            None
        }
    }
}

/// A file a reader looks for beside the one it reads (a summary, a per-request dump, a configuration): `None`
/// when there is none or it is empty, and also, with a warning naming it, when it is there but cannot be read (a FIFO, a
/// directory, a link, no permission).
pub fn read_sibling(
    storage: &dyn Storage,
    path: &str,
    warnings: &mut Vec<Warning>,
) -> Option<Vec<u8>> {
    match storage::read_bounded(storage, path, storage::MAX_DOCUMENT_BYTES) {
        // Discovery names an empty file (`empty_file`); to its reader it is as good as absent.
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => None,
        Ok(bytes) => Some(bytes),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => {
            warnings.push(storage::unreadable_warning(&error, path));
            None
        }
    }
}

/// A file that holds one JSON object (a summary, a report), or `None` with a warning naming the file (and the
/// line of a syntax error): `what` names the document in the message.
pub fn read_object(
    storage: &dyn Storage,
    path: &str,
    what: &str,
    warnings: &mut Vec<Warning>,
) -> Option<Json> {
    match read_json(storage, path, what, warnings)? {
        object @ Json::Object(_) => Some(object),
        _ => {
            warnings.push(
                Warning::error(
                    "invalid_result",
                    format!("the {what} is not a JSON object; the run is left out"),
                )
                .file(path),
            );
            None
        }
    }
}

/// A file that holds one JSON document, or `None` with a warning naming the file (and the line of a syntax
/// error): `what` names the document in the message.
pub fn read_json(
    storage: &dyn Storage,
    path: &str,
    what: &str,
    warnings: &mut Vec<Warning>,
) -> Option<Json> {
    let bytes = read_file(storage, path, warnings)?;
    match json::parse(&bytes) {
        Ok(document) => Some(document),
        Err(error) => {
            warnings.push(
                Warning::error(
                    "invalid_json",
                    format!(
                        "the {what} is not valid JSON ({}); the run is left out",
                        error.message
                    ),
                )
                .file(path)
                .line(error.line),
            );
            None
        }
    }
}

/// The first [`HEAD_BYTES`] of a file under `data/fixtures/formats`, as detection sees them.
#[cfg(test)]
pub(crate) fn fixture_head(relative: &str) -> Vec<u8> {
    let bytes = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../data/fixtures/formats")
            .join(relative),
    )
    .expect("fixture file");
    bytes[..bytes.len().min(HEAD_BYTES as usize)].to_vec()
}

/// A top-level document as a format reads it: a [`Json`] tree, or a typed reader of the format's objects.
pub trait Document: serde::de::DeserializeOwned {
    /// Whether the document is a JSON object (the others are reported and left out).
    fn is_object(&self) -> bool;
}

impl Document for Json {
    fn is_object(&self) -> bool {
        self.is_object()
    }
}

impl Document for parallel::ResultObject {
    fn is_object(&self) -> bool {
        self.is_object
    }
}

/// The objects of a file holding one or several (appended runs, JSON Lines) as `(record index, line, object)`.
/// A document that is not an object, or not valid JSON, is left out with a warning at its line, named by
/// `label(record index, line)`; the file's other documents are still read.
pub fn read_objects<T: Document>(
    storage: &dyn Storage,
    path: &str,
    label: impl Fn(u32, u64) -> String,
    warnings: &mut Vec<Warning>,
) -> Vec<(u32, u64, T)> {
    let Some(bytes) = read_file(storage, path, warnings) else {
        return Vec::new();
    };
    objects_in(&bytes, path, label, warnings)
}

/// [`read_objects`] of a file already read.
pub fn objects_in<T: Document>(
    bytes: &[u8],
    path: &str,
    label: impl Fn(u32, u64) -> String,
    warnings: &mut Vec<Warning>,
) -> Vec<(u32, u64, T)> {
    let mut objects = Vec::new();
    for (index, (line, document)) in json::documents::<T>(bytes).into_iter().enumerate() {
        let record = index as u32;
        match document {
            Ok(object) if object.is_object() => objects.push((record, line, object)),
            Ok(_) => warnings.push(
                Warning::error(
                    "invalid_result",
                    format!("{} is not a JSON object; it is left out", label(record, line)),
                )
                .file(path)
                .line(line),
            ),
            Err(error) => warnings.push(
                Warning::error(
                    "invalid_json",
                    format!(
                        "{} is not valid JSON ({}); it is left out, the file's other records are read",
                        label(record, line),
                        error.message
                    ),
                )
                .file(path)
                .line(error.line),
            ),
        }
    }
    objects
}

/// The run id of a detected run: `cellscope.toml`'s `run` when a `[[map]]` entry sets it for the first file,
/// else the `run` constant of its `[[table]]` entry, else the run root (the data root itself is `root`).
fn run_id(context: &ReadContext<'_>, run: &DetectedRun) -> String {
    if let Some(id) = &run.id {
        return id.clone();
    }
    natural_run_id(context, run)
}

/// The run id `cellscope.toml` or the run root give, before runs are told apart.
fn natural_run_id(context: &ReadContext<'_>, run: &DetectedRun) -> String {
    if run.format == "tr164" {
        // A TR164 run is its directory's name (its rows carry it).
        return match storage::file_name(&run.root) {
            "" => "root".to_string(),
            name => name.to_string(),
        };
    }
    let first = run.files.first().map(String::as_str).unwrap_or_default();
    let template = super::mapping::TemplateContext {
        path: first,
        record: &Json::Null,
    };
    let table_run = context
        .mapping
        .table_for(first)
        .and_then(|entry| entry.spec.run.as_ref())
        .map(|run| match &run.value {
            toml::Value::String(text) => text.clone(),
            other => other.to_string(),
        });
    match (context.mapping.value("run", &template), table_run) {
        (Some(Ok(mapped)), _) => mapped.value,
        (_, Some(table_run)) => table_run,
        _ if run.root.is_empty() => "root".to_string(),
        _ => run.root.clone(),
    }
}

/// Gives every run its own id. Two runs can be given one: `cellscope.toml` maps the same `run` onto two run
/// roots, or two formats' files share a directory (each format's files are a run of their own). Their cells would
/// then have the same keys and one would hide the other, so the first in `runs`' order (TR164 runs, then by root
/// and format name) keeps the id and each later one is indexed as `<id>@<its root>` (`<id>@<its format>` when the
/// roots are the same; `#2`, `#3`, … if that is taken too), with a warning naming both roots.
pub fn separate_run_ids(context: &ReadContext<'_>, runs: &mut [DetectedRun]) -> Vec<Warning> {
    let natural: Vec<String> = runs
        .iter()
        .map(|run| natural_run_id(context, run))
        .collect();
    let mut taken: std::collections::BTreeSet<String> = natural.iter().cloned().collect();
    let mut first: BTreeMap<&str, usize> = BTreeMap::new();
    let mut warnings = Vec::new();
    for (index, id) in natural.iter().enumerate() {
        let Some(&earlier) = first.get(id.as_str()) else {
            first.insert(id.as_str(), index);
            continue;
        };
        let shown = |run: &DetectedRun| {
            if run.root.is_empty() {
                "the data root".to_string()
            } else {
                format!("`{}`", run.root)
            }
        };
        let (kept, run) = (&runs[earlier], &runs[index]);
        let suffix = if run.root == kept.root {
            run.format.to_string()
        } else if run.root.is_empty() {
            "root".to_string()
        } else {
            run.root.clone()
        };
        let base = format!("{id}@{suffix}");
        let mut renamed = base.clone();
        let mut number = 2;
        while taken.contains(&renamed) {
            renamed = format!("{base}#{number}");
            number += 1;
        }
        taken.insert(renamed.clone());
        let warning = Warning::warn(
            "duplicate_run_id",
            format!(
                "run id `{id}` is given to two runs: {} ({}) and {} ({}); so that their cells are kept apart, \
                 the second is indexed as `{renamed}` (give it its own `run` in cellscope.toml to name it)",
                shown(kept),
                kept.format,
                shown(run),
                run.format
            ),
        )
        .run(&renamed);
        warnings.push(match run.files.first() {
            Some(file) => warning.file(file),
            None => warning,
        });
        runs[index].id = Some(renamed);
    }
    warnings
}

/// The default [`RunFormat::read_run`]: records of every file → cells keyed by `cellscope.toml` and the
/// default rules → the same [`RunRead`] a TR164 run gives.
pub fn read_records(
    format: &(impl RunFormat + ?Sized),
    context: &ReadContext<'_>,
    run: &DetectedRun,
) -> RunRead {
    let run_id = run_id(context, run);
    let mut warnings = Vec::new();
    let mut records: Vec<(String, RunRecord)> = Vec::new();
    let mut total_bytes = 0u64;
    let mut file_bytes: BTreeMap<String, u64> = BTreeMap::new();
    let mut single_file_bytes = None;
    for file in &run.files {
        let mut file_warnings = Vec::new();
        let mut found =
            format.records_in(context.storage, file, context.mapping, &mut file_warnings);
        drop_bad_requests(&mut found, file, &mut file_warnings);
        if found.is_empty()
            && !file_warnings
                .iter()
                .any(|warning| warning.file.as_deref() == Some(file))
        {
            // Recognised but empty (`benchmarks: []`, an empty array): said, never silence.
            file_warnings.push(
                Warning::warn(
                    "no_records",
                    format!(
                        "the file is a {} result but holds no result records (an empty list); nothing of it is \
                         indexed",
                        format.name()
                    ),
                )
                .file(file),
            );
        }
        warnings.extend(
            capped(file_warnings, file)
                .into_iter()
                .map(|warning| warning.run(&run_id)),
        );
        let bytes = context.storage.stat(file).map_or(0, |meta| meta.bytes);
        file_bytes.insert(file.clone(), bytes);
        total_bytes += bytes;
        context.progress.file_done(bytes);
        records.extend(found.into_iter().map(|record| (file.clone(), record)));
    }
    if let [only] = run.files.as_slice()
        && context.options.hashes
    {
        single_file_bytes =
            storage::read_bounded(context.storage, only, storage::MAX_DOCUMENT_BYTES).ok();
    }
    let keyed = key::resolve(
        format.name(),
        context.mapping,
        &run_id,
        records,
        &mut warnings,
    );
    let mut parsed = ParsedMetrics::default();
    for keyed in keyed {
        parsed.records += keyed.record.requests.len() as u64;
        let bytes = file_bytes.get(&keyed.file).copied().unwrap_or(0);
        let cell = cell_of(format.name(), &run_id, &keyed, bytes);
        parsed.cells.push((keyed.coordinates, cell));
    }
    let digest = match (single_file_bytes, run.files.as_slice()) {
        (Some(bytes), [only]) => digest(only.clone(), &bytes, true),
        _ => FileDigest {
            path: if run.files.len() == 1 {
                run.files[0].clone()
            } else {
                format!("{}/", run.root)
            },
            bytes: total_bytes,
            md5: None,
            sha256: None,
        },
    };
    let prefix = if run.root.is_empty() {
        String::new()
    } else {
        format!("{}/", run.root)
    };
    RunRead {
        dir: RunDir::plain(run_id, run.root.clone()),
        metrics: Ok(parsed),
        digest,
        manifest: None,
        plan: None,
        refill_note: None,
        note_names: BTreeMap::new(),
        files: run
            .files
            .iter()
            .map(|file| file.strip_prefix(&prefix).unwrap_or(file).to_string())
            .collect(),
        environment: BTreeMap::new(),
        warnings,
        format: format.name(),
    }
}

/// The cell one keyed record makes: census, statistics (recomputed from its requests where it has them, the
/// tool's figures marked reported where it does not), and where its rows are.
fn cell_of(
    format: &'static str,
    run_id: &str,
    keyed: &key::KeyedRecord,
    file_bytes: u64,
) -> ParsedCell {
    let record = &keyed.record;
    // Without per-request timestamps the tool's duration is the span (formats.md: how vLLM and SGLang define
    // throughput); with them the product's rule applies.
    let timestamps = record
        .requests
        .iter()
        .any(|request| request.start_s.is_some() && request.end_s.is_some());
    let (mut cell, accumulator, tokens_known) = census(record, timestamps);
    let mut stats = accumulator.finish();
    leave_out_unmeasured(record, &cell, tokens_known, &mut stats);
    let figures = figures_of(keyed, &cell, &mut stats);
    if !record.has_requests {
        stats.ok_rows = cell.ok_rows;
    }
    cell.stats = stats;
    cell.row_run_ids.insert(
        run_id.to_string(),
        IdCount {
            rows: cell.rows,
            first_offset: 0,
        },
    );
    let mut notes = record.notes.clone();
    if let Some((status, why)) = &record.rejected {
        notes.push(format!("the tool judged this result {status}: {why}"));
    }
    if record.has_requests && !timestamps && stats.aggregate_tps.is_some() {
        notes.push(
            "aggregate tps = Σ completion tokens of ok requests / the tool's duration (the requests carry no \
             timestamps)"
                .to_string(),
        );
    }
    cell.external = Some(Box::new(ExternalCell {
        format,
        file: keyed.file.clone(),
        file_bytes,
        record: record.record,
        expected_rows: record.expected_rows,
        figures,
        origin: CellOrigin {
            format: format.to_string(),
            file: keyed.file.clone(),
            record: record.record,
            line: record.line,
            inferred: keyed.inferred.clone(),
            reported: record.reported.clone(),
            reported_figures: record.reported_figures.clone(),
            notes,
        },
    }));
    cell
}

/// What is wrong with a request's numbers, if anything, by the rules TR164 rows are held to: a latency (wall,
/// TTFT, each inter-token gap) from 0 to [`MAX_LATENCY_MS`] ms, a token count a whole number, start and end
/// finite with the end not before the start. A failed request's numbers are not measurements and are not checked.
fn request_problem(request: &Request) -> Option<String> {
    use cellscope_model::stats::{is_latency_ms, is_token_count};
    if request.error.is_some() {
        return None;
    }
    let latencies = [("wall latency", request.wall_ms), ("TTFT", request.ttft_ms)];
    if let Some((name, value)) = latencies.into_iter().find_map(|(name, value)| {
        value
            .filter(|value| !is_latency_ms(*value))
            .map(|value| (name, value))
    }) {
        return Some(format!(
            "its {name} is {value} ms; expected a latency from 0 to {MAX_LATENCY_MS} ms"
        ));
    }
    if let Some(gap) = request
        .itl_ms
        .iter()
        .flatten()
        .find(|gap| !is_latency_ms(**gap))
    {
        return Some(format!(
            "an inter-token gap is {gap} ms; expected a latency from 0 to {MAX_LATENCY_MS} ms"
        ));
    }
    let counts = [
        ("prompt", request.prompt_tokens),
        ("completion", request.completion_tokens),
    ];
    if let Some((name, value)) = counts.into_iter().find_map(|(name, value)| {
        value
            .filter(|value| !is_token_count(*value))
            .map(|value| (name, value))
    }) {
        return Some(format!(
            "its {name} token count is {value}; expected a whole number from 0 to {}",
            u32::MAX
        ));
    }
    match (request.start_s, request.end_s) {
        (Some(start), Some(end)) if !start.is_finite() || !end.is_finite() => Some(format!(
            "its start ({start} s) or end ({end} s) is not a time"
        )),
        (Some(start), Some(end)) if end < start => {
            Some(format!("it ends ({end} s) before it starts ({start} s)"))
        }
        _ => None,
    }
}

/// Leaves out of each record the requests whose numbers are not measurements ([`request_problem`]), counting
/// them as malformed rows, with a `bad_number` warning on the file at the record's line for each.
fn drop_bad_requests(records: &mut [RunRecord], file: &str, warnings: &mut Vec<Warning>) {
    for record in records.iter_mut() {
        let (line, index_of_record) = (record.line, record.record);
        let mut position = 0usize;
        record.requests.retain(|request| {
            position += 1;
            let Some(problem) = request_problem(request) else {
                return true;
            };
            warnings.push(
                Warning::error(
                    "bad_number",
                    format!(
                        "request {} of record {index_of_record}: {problem}; the request is left out",
                        position - 1
                    ),
                )
                .file(file)
                .at_line(line),
            );
            false
        });
        let kept = record.requests.len();
        record.malformed += (position - kept) as u32;
    }
}

/// How many warnings of one kind on one file are listed one by one, as for TR164's rows; the rest are counted.
const MAX_WARNINGS_PER_KIND: usize = 20;

/// `warnings` (of one file) with at most [`MAX_WARNINGS_PER_KIND`] of each kind, the rest of a kind said in one
/// more warning of that kind, so that a file of many bad lines does not bury everything else.
fn capped(warnings: Vec<Warning>, file: &str) -> Vec<Warning> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut kept = Vec::with_capacity(warnings.len().min(256));
    let mut first_left_out: BTreeMap<String, Warning> = BTreeMap::new();
    for warning in warnings {
        let count = seen.entry(warning.kind.clone()).or_default();
        *count += 1;
        if *count <= MAX_WARNINGS_PER_KIND {
            kept.push(warning);
        } else {
            first_left_out
                .entry(warning.kind.clone())
                .or_insert(warning);
        }
    }
    for (kind, first) in first_left_out {
        let more = seen[&kind] - MAX_WARNINGS_PER_KIND;
        kept.push(Warning {
            message: format!(
                "{more} further `{kind}` findings on this file are not listed (only the first \
                 {MAX_WARNINGS_PER_KIND} are)"
            ),
            line: None,
            file: Some(first.file.unwrap_or_else(|| file.to_string())),
            ..first
        });
    }
    kept
}

/// A record's census (rows, ok and failed by status, the requests' positions) and the statistics of its `ok`
/// requests, and whether every one of those states its completion tokens. Without per-request `timestamps` the
/// tool's duration stands for each request's span. A record of aggregates only is counted by the tool's counts.
fn census(record: &RunRecord, timestamps: bool) -> (ParsedCell, CellAccumulator, bool) {
    let mut cell = ParsedCell {
        malformed_rows: record.malformed,
        ..ParsedCell::default()
    };
    let mut accumulator = CellAccumulator::new();
    let mut tokens_known = true;
    for (index, request) in record.requests.iter().enumerate() {
        cell.row_offsets.push(index as u64);
        cell.rows += 1;
        if let Some(error) = &request.error {
            cell.failed_rows += 1;
            let status = status_of(error);
            *cell.failed_by_status.entry(status).or_default() += 1;
            continue;
        }
        let Some(wall_ms) = request.wall_ms else {
            cell.failed_rows += 1;
            *cell
                .failed_by_status
                .entry("no_latency".to_string())
                .or_default() += 1;
            continue;
        };
        cell.ok_rows += 1;
        tokens_known &= request.completion_tokens.is_some();
        let (submit_time_s, complete_time_s) = if timestamps {
            (
                request.start_s.unwrap_or(f64::INFINITY),
                request.end_s.unwrap_or(f64::NEG_INFINITY),
            )
        } else {
            (0.0, record.duration_s.unwrap_or(0.0))
        };
        accumulator.push(&RequestSample {
            wall_ms,
            ttft_ms: request.ttft_ms,
            prompt_tokens: request.prompt_tokens.unwrap_or(0.0),
            completion_tokens: request.completion_tokens.unwrap_or(0.0),
            submit_time_s,
            complete_time_s,
        });
        if let Some(gaps) = &request.itl_ms {
            accumulator.push_gaps(gaps.iter().copied());
        }
    }
    if let Some((status, _)) = &record.rejected {
        // The tool rejected the record as a whole: every request it counts fails under its status word.
        let all = record.completed.unwrap_or(0) + record.failed.unwrap_or(0);
        cell.rows = all.max(cell.rows);
        cell.failed_rows = cell.rows;
        cell.ok_rows = 0;
        cell.failed_by_status = BTreeMap::from([(status.clone(), cell.rows)]);
    } else if !record.has_requests {
        // Aggregates only: the tool's counts are the census.
        cell.ok_rows = record.completed.unwrap_or(0);
        cell.failed_rows = record.failed.unwrap_or(0);
        cell.rows = cell.ok_rows + cell.failed_rows;
        if cell.failed_rows > 0 {
            cell.failed_by_status
                .insert("failed".to_string(), cell.failed_rows);
        }
    } else if let Some(failed) = record.failed
        && failed > cell.failed_rows
        && record
            .requests
            .iter()
            .all(|request| request.error.is_none())
    {
        // Legacy files count failures without saying which requests failed.
        let missing = failed - cell.failed_rows;
        cell.failed_rows += missing;
        cell.rows += missing;
        cell.failed_by_status.insert("failed".to_string(), missing);
    }
    (cell, accumulator, tokens_known)
}

/// Statistics the requests cannot give left out: TTFT when no `ok` request has one, prompt tokens when none
/// states them, completion tokens and throughput unless every `ok` request states its completion tokens.
fn leave_out_unmeasured(
    record: &RunRecord,
    cell: &ParsedCell,
    tokens_known: bool,
    stats: &mut CellStats,
) {
    let with_ttft = record
        .requests
        .iter()
        .any(|request| request.error.is_none() && request.ttft_ms.is_some());
    let prompt_known = record
        .requests
        .iter()
        .any(|request| request.error.is_none() && request.prompt_tokens.is_some());
    if !with_ttft {
        stats.p50_ttft_ms = None;
        stats.p95_ttft_ms = None;
    }
    if !prompt_known {
        stats.mean_prompt_tokens = None;
    }
    if !tokens_known || cell.ok_rows == 0 {
        stats.mean_completion_tokens = stats.mean_completion_tokens.filter(|_| tokens_known);
        stats.aggregate_tps = stats.aggregate_tps.filter(|_| tokens_known);
    }
    // TPOT divides by each request's tokens: a cell where some are unknown would mix requests silently.
    if !tokens_known {
        for stat in TOKEN_RATES {
            if let Some(slot) = stats.get_mut(stat) {
                *slot = None;
            }
        }
    }
    if !prompt_known || !tokens_known {
        stats.total_tps = None;
    }
}

/// The statistics computed from each request's TPOT, and so from its wall latency and token count.
const TOKEN_RATES: [Stat; 5] = [
    Stat::MeanTpotMs,
    Stat::P50TpotMs,
    Stat::P95TpotMs,
    Stat::P99TpotMs,
    Stat::P50InteractivityTps,
];

/// Every number among an object's top-level values, under its key: the tool's figures as it names them (a
/// number written as text, as LLMPerf writes numpy integers, is read too).
pub fn top_level_figures(object: &Json) -> BTreeMap<String, f64> {
    let Some(object) = object.as_object() else {
        return BTreeMap::new();
    };
    object
        .iter()
        .filter_map(|(key, value)| Some((key.clone(), figure(value)?)))
        .collect()
}

/// Every number among the members of an object's metric objects (those with a `unit`, `avg` or `mean`), as
/// `metric.stat`: the statistics of AIPerf's and GenAI-Perf's metric objects (`{"unit": "ms", "avg": …}`).
pub fn metric_figures(metrics: &Json) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for (metric, stats) in metrics.as_object().into_iter().flatten() {
        let Some(stats) = stats.as_object() else {
            continue;
        };
        // A metric object says its unit or has a mean; a configuration block is not a metric.
        if !["unit", "avg", "mean"]
            .iter()
            .any(|key| stats.contains_key(*key))
        {
            continue;
        }
        for (stat, value) in stats {
            if let Some(value) = figure(value) {
                out.insert(format!("{metric}.{stat}"), value);
            }
        }
    }
    out
}

/// Every number under `value`, down to `depth` levels of objects, under its dotted path from `prefix`
/// (arrays are per-request data or distributions, not figures).
pub fn nested_figures(value: &Json, prefix: &str, depth: u32, out: &mut BTreeMap<String, f64>) {
    match value {
        Json::Object(members) if depth > 0 => {
            for (key, member) in members {
                nested_figures(member, &format!("{prefix}.{key}"), depth - 1, out);
            }
        }
        _ => {
            if let Some(number) = figure(value) {
                out.insert(prefix.to_string(), number);
            }
        }
    }
}

/// A finite number, or text that is one.
fn figure(value: &Json) -> Option<f64> {
    match value {
        Json::Number(_) | Json::String(_) => json::number(value).filter(|value| value.is_finite()),
        _ => None,
    }
}

/// Where a cell's figures come from: what the requests could not give, the tool's figure gives, marked as
/// reported; latencies rebuilt from TTFT and ITL are marked derived, and key parts that were not read inferred.
fn figures_of(keyed: &key::KeyedRecord, cell: &ParsedCell, stats: &mut CellStats) -> FigureOrigin {
    let record = &keyed.record;
    let mut figures = FigureOrigin::default();
    for stat in Stat::REQUEST {
        let Some(slot) = stats.get_mut(stat) else {
            continue;
        };
        if slot.is_none()
            && let Some(value) = record.reported.get(stat.name())
            && value.is_finite()
            // An all-failed run writes its aggregates as 0.0: never a measurement.
            && !(cell.ok_rows == 0 && *value == 0.0)
        {
            *slot = Some(*value);
            figures.reported.push(stat.name().to_string());
        }
    }
    for stat in Stat::REQUEST {
        if let Some(slot) = stats.get_mut(stat)
            && slot.is_none()
            && let Some(value) = record.derived.get(stat.name())
            && value.is_finite()
        {
            *slot = Some(*value);
            figures.derived.push(stat.name().to_string());
        }
    }
    if record.wall_derived {
        let wall = [
            Stat::MeanWallMs,
            Stat::P50WallMs,
            Stat::P95WallMs,
            Stat::P99WallMs,
        ];
        figures.derived.extend(
            wall.into_iter()
                .chain(TOKEN_RATES)
                .map(Stat::name)
                .filter(|column| !figures.reported.iter().any(|name| name == column))
                .map(str::to_string),
        );
    }
    figures.inferred = keyed
        .inferred
        .iter()
        .map(|part| part.dimension.clone())
        .collect();
    figures
}

/// The status word of a failed request: `http_<code>` when the error text starts with an HTTP status code,
/// else `error`.
fn status_of(error: &str) -> String {
    let code: String = error.chars().take_while(char::is_ascii_digit).collect();
    if code.len() == 3 {
        format!("http_{code}")
    } else {
        "error".to_string()
    }
}

/// Where a cell of another tool's file keeps its requests, once its file is checked to be the length it had when
/// indexed (rows read from a file that has changed since are refused, never mixed into the snapshot's cell);
/// `None` for a cell that has no such file.
pub fn unchanged_source<'a>(
    storage: &dyn Storage,
    rows: &'a CellRows,
) -> Result<Option<&'a ExternalRows>, RowsError> {
    let Some(source) = &rows.external else {
        return Ok(None);
    };
    let meta = storage
        .stat(&source.file)
        .map_err(|error| RowsError::Read {
            path: source.file.clone(),
            source: error,
        })?;
    if meta.bytes != rows.file_bytes {
        return Err(RowsError::Changed(source.file.clone()));
    }
    Ok(Some(source))
}

/// The default [`RunFormat::read_rows`]: the cell's record read again from its file, its requests as rows.
pub fn read_record_rows(
    format: &(impl RunFormat + ?Sized),
    storage: &dyn Storage,
    rows: &CellRows,
) -> Result<Vec<RequestRow>, RowsError> {
    let Some(source) = unchanged_source(storage, rows)? else {
        return Ok(Vec::new());
    };
    let mut warnings = Vec::new();
    let record = format
        .records(storage, &source.file, &mut warnings)
        .into_iter()
        .find(|record| record.record == source.record)
        .ok_or_else(|| RowsError::Malformed {
            path: source.file.clone(),
            message: format!("record {} is no longer in the file", source.record),
        })?;
    let mut record = record;
    drop_bad_requests(
        std::slice::from_mut(&mut record),
        &source.file,
        &mut warnings,
    );
    Ok(record
        .requests
        .iter()
        .enumerate()
        .map(|(index, request)| {
            request_row(&source.run_id, index, request, record.line.unwrap_or(0))
        })
        .collect())
}

/// One request of another tool's file as a row of `/api/requests`: failed when it has an error or no latency
/// (the rule `cell_of` counts by), its status `http_<code>`, `error`, `no_latency` or `ok`. `line` is where the
/// row's record (or, for a table, the row itself) starts in the file.
pub fn request_row(source_run_id: &str, index: usize, request: &Request, line: u64) -> RequestRow {
    RequestRow {
        lineage: Lineage::Current,
        class: if request.error.is_some() || request.wall_ms.is_none() {
            RowClass::Failed
        } else {
            RowClass::Ok
        },
        source_run_id: source_run_id.to_string(),
        line,
        agent_id: None,
        request_id: u32::try_from(index).ok(),
        request_sequence: None,
        wall_ms: request.wall_ms,
        ttft_ms: request.ttft_ms,
        prompt_tokens: request.prompt_tokens,
        completion_tokens: request.completion_tokens,
        submit_time_s: request.start_s,
        complete_time_s: request.end_s,
        status: match &request.error {
            Some(error) => status_of(error),
            None if request.wall_ms.is_none() => "no_latency".to_string(),
            None => "ok".to_string(),
        },
        error: request.error.clone().filter(|error| !error.is_empty()),
    }
}

/// How one file of the data root is read and keyed, for `cellscope index --explain FILE`: its format, each
/// record's cell and, for every dimension, the field it was read from or the rule that inferred it.
pub fn explain(root: &std::path::Path, relative: &str) -> Result<String, String> {
    use std::fmt::Write as _;
    let disk = storage::LocalDisk::new(root);
    let mut warnings = Vec::new();
    let mapping = crate::mapping::read_text(&disk, &mut warnings)
        .map(|text| Mapping::parse(&text, crate::mapping::FILE, &mut warnings))
        .unwrap_or_default();
    let head = disk
        .read_range(relative, 0..HEAD_BYTES)
        .and_then(|head| outline::head(&disk, relative, head, HEAD_BYTES))
        .map_err(|error| format!("cannot read {relative}: {error}"))?;
    let mut verdicts = Vec::new();
    let format = FORMATS
        .iter()
        .copied()
        .find(|format| {
            let verdict = format.examine_in(&disk, relative, &head, &mapping);
            let reads = verdict.reads();
            verdicts.push((format.name(), verdict));
            reads
        })
        .ok_or_else(|| {
            // TR164 runs are found by their metrics file's name; other files are offered to the others.
            let (by_name, offered) = verdicts.split_at(1);
            verdict::explain_unread(relative, by_name, offered)
                .trim_end()
                .to_string()
        })?;
    let mut out = String::new();
    let root_of_run = format.run_root(relative);
    let _ = writeln!(
        out,
        "{relative}\n  format: {}\n  run root: {}",
        format.name(),
        if root_of_run.is_empty() {
            "(the data root)"
        } else {
            &root_of_run
        }
    );
    if format.name() == "tr164" {
        let _ = writeln!(
            out,
            "  every key dimension is a column of the file (run_id, suite, phase, backend, model, workload, n_agents, rep)"
        );
        return Ok(out);
    }
    let records = format.records_in(&disk, relative, &mapping, &mut warnings);
    let run = DetectedRun {
        format: format.name(),
        root: root_of_run,
        files: vec![relative.to_string()],
        id: None,
    };
    let options = IndexOptions::CELLS;
    let context = ReadContext {
        storage: &disk,
        mapping: &mapping,
        options: &options,
        progress: &super::Quiet,
    };
    let run_id = run_id(&context, &run);
    let _ = writeln!(out, "  run id: {run_id}");
    let keyed = key::resolve(
        format.name(),
        &mapping,
        &run_id,
        records
            .into_iter()
            .map(|record| (relative.to_string(), record))
            .collect(),
        &mut warnings,
    );
    for record in &keyed {
        let _ = writeln!(
            out,
            "  record {}{}: {} requests{}",
            record.record.record,
            record
                .record
                .line
                .map(|line| format!(" (line {line})"))
                .unwrap_or_default(),
            record.record.requests.len(),
            if record.record.has_requests {
                ""
            } else {
                " (aggregates only: figures are the tool's, reported)"
            }
        );
        for (dimension, value, how) in key::explain_rules(record) {
            let _ = writeln!(out, "    {dimension:<9}= {value:<28} {how}");
        }
        for note in &record.record.notes {
            let _ = writeln!(out, "    note: {note}");
        }
        for line in record.config.explain_lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    for warning in &warnings {
        let _ = writeln!(out, "  {warning}");
    }
    Ok(out)
}
