//! Generic long tables (CSV or Parquet) for results no dedicated reader knows: one row per request (every
//! figure recomputed) or one row per cell (the table's figures kept as *reported*), columns named by a
//! `[[table]]` entry of `cellscope.toml` ([`crate::mapping::table`]) or, without one, by their canonical
//! names.
//!
//! Detection is by content: a Parquet file by its magic bytes and schema, a CSV file by its header. A file a
//! `[[table]]` glob matches is a table whatever its columns (a column the entry names that the file lacks is
//! then reported); any other CSV or Parquet file is one when its header has the canonical names: `n` (or
//! `concurrency`, `max_concurrency`) and `wall_ms` (request grain) or a cell figure such as `p95_wall_ms` or
//! `aggregate_tps` (cell grain). TR164's `metrics.csv` header and cellscope's own cells export are never
//! claimed.

use super::RunFormat;
use crate::mapping::Mapping;
use crate::mapping::table::{Grain, RawTable, Source, TableEntry, Unit};
use crate::records::verdict::{Nearness, Verdict};
use crate::records::{STAT_COLUMNS, request_row};
use crate::run::record::{FileAt, KeyParts, Part, Request, RunRecord};
use crate::run::rows::{CellRows, RowsError};
use crate::storage::Storage;
use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_schema::DataType;
use cellscope_model::api::Warning;
use cellscope_model::requests::RequestRow;
use cellscope_model::stat::Stat;
use serde_json::Value as Json;
use std::collections::BTreeMap;

pub(super) struct Table;

/// The format, as the registry lists it.
pub(crate) static FORMAT: &dyn RunFormat = &Table;

const PARQUET_MAGIC: &[u8] = b"PAR1";

/// Canonical column names, first the preferred one.
const N_COLUMNS: [&str; 3] = ["n", "concurrency", "max_concurrency"];
/// TR164's `metrics.csv` columns that no other table has: such a file belongs to the TR164 reader.
const TR164_MARKERS: [&str; 3] = ["agent_id", "request_sequence", "n_agents"];
/// Columns of `cellscope cells` output: reading it back would count every cell twice.
const EXPORT_MARKERS: [&str; 3] = ["expected_rows", "refilled", "reported_metrics"];

impl RunFormat for Table {
    fn name(&self) -> &'static str {
        "table"
    }

    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        let (storage, path, head) = (file.storage, file.path, file.head);
        let mapping = file.mapping;
        let mapped = mapping.table_for(path).is_some();
        if head.starts_with(PARQUET_MAGIC) {
            if mapped {
                return Verdict::Reads;
            }
            return match parquet_columns(storage, path) {
                Some(columns) => header_verdict(&columns, "Parquet schema"),
                None => Verdict::declines(
                    Nearness::SomeMarks,
                    "a Parquet file whose schema cannot be read from its footer",
                ),
            };
        }
        match csv_header(head) {
            Some(_) if mapped => Verdict::Reads,
            Some(header) => header_verdict(&header, "CSV header"),
            None => Verdict::declines(Nearness::OtherKind, NOT_A_TABLE),
        }
    }

    fn records(&self, file: &FileAt<'_>, warnings: &mut Vec<Warning>) -> Vec<RunRecord> {
        groups(file.storage, file.path, file.mapping, warnings)
            .into_iter()
            .map(|group| group.record)
            .collect()
    }

    /// The cell's rows, each with its own line (row of a Parquet file), read the way they were indexed.
    fn read_rows(
        &self,
        storage: &dyn Storage,
        rows: &CellRows,
    ) -> Result<Vec<RequestRow>, RowsError> {
        let Some(source) = crate::records::unchanged_source(storage, rows)? else {
            return Ok(Vec::new());
        };
        let group = groups(
            storage,
            &source.file,
            &Mapping::load(storage),
            &mut Vec::new(),
        )
        .into_iter()
        .find(|group| group.record.record == source.record)
        .ok_or_else(|| RowsError::Malformed {
            path: source.file.clone(),
            message: format!("record {} is no longer in the file", source.record),
        })?;
        Ok(group
            .record
            .requests
            .iter()
            .zip(&group.lines)
            .enumerate()
            .map(|(index, (request, line))| request_row(&source.run_id, index, request, *line))
            .collect())
    }
}

impl Table {
    /// Without `cellscope.toml`: a CSV whose header has the canonical names.
    #[cfg(test)]
    pub(super) fn examine_head(&self, path: &str, head: &[u8]) -> Verdict {
        if head.starts_with(PARQUET_MAGIC) {
            return Verdict::declines(
                Nearness::NoMarks,
                "a Parquet file, whose schema is read only from the data root",
            );
        }
        if path.ends_with(".json") {
            return Verdict::declines(Nearness::OtherKind, NOT_A_TABLE);
        }
        match csv_header(head) {
            Some(header) => header_verdict(&header, "CSV header"),
            None => Verdict::declines(Nearness::OtherKind, NOT_A_TABLE),
        }
    }
}

/// The header of a CSV file from its first bytes, or `None` when the bytes are not a text table (JSON, binary,
/// a single column).
fn csv_header(head: &[u8]) -> Option<Vec<String>> {
    let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let first = text.iter().position(|byte| !byte.is_ascii_whitespace())?;
    if matches!(text[first], b'{' | b'[') || text.contains(&0) {
        return None;
    }
    let line_end = text
        .iter()
        .position(|byte| *byte == b'\n')
        .unwrap_or(text.len());
    let line = std::str::from_utf8(&text[..line_end]).ok()?;
    let delimiter = delimiter_of(line);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .delimiter(delimiter)
        .from_reader(line.as_bytes());
    let record = reader.records().next()?.ok()?;
    let header: Vec<String> = record.iter().map(|name| name.trim().to_string()).collect();
    (header.len() >= 2).then_some(header)
}

/// A tab when the header line has tabs and no commas, else a comma.
fn delimiter_of(line: &str) -> u8 {
    if line.contains('\t') && !line.contains(',') {
        b'\t'
    } else {
        b','
    }
}

/// The grain a header with canonical names has, or `None` when it is not a canonical table (or is TR164's
/// or cellscope's own export).
fn canonical_grain(columns: &[String]) -> Option<Grain> {
    grain_of(columns).ok()
}

/// What a file that is neither a CSV table nor Parquet is, for the `not_recognised` finding.
const NOT_A_TABLE: &str =
    "a file that is neither a CSV table (a header of two or more columns) nor Parquet";

/// The verdict on a table's columns (a `what`: CSV header or Parquet schema) when no `[[table]]` entry names it.
fn header_verdict(columns: &[String], what: &str) -> Verdict {
    match grain_of(columns) {
        Ok(_) => Verdict::Reads,
        Err((nearness, why)) => {
            let shown: Vec<String> = columns
                .iter()
                .take(6)
                .map(|column| format!("`{column}`"))
                .collect();
            let more = if columns.len() > shown.len() {
                ", …"
            } else {
                ""
            };
            Verdict::declines(
                nearness,
                format!(
                    "a table whose {what} ({}{more}) {why}, and no `[[table]]` entry of cellscope.toml names it",
                    shown.join(", ")
                ),
            )
        }
    }
}

/// The grain of a table with the canonical names, or how near its columns come to them and what they lack.
fn grain_of(columns: &[String]) -> Result<Grain, (Nearness, String)> {
    let has = |name: &str| columns.iter().any(|column| column == name);
    if TR164_MARKERS.iter().any(|name| has(name)) {
        return Err((
            Nearness::SomeMarks,
            "is TR164's, whose metrics are read only as a run directory's `metrics.csv`"
                .to_string(),
        ));
    }
    if EXPORT_MARKERS.iter().any(|name| has(name)) {
        return Err((
            Nearness::SomeMarks,
            "is cellscope's own cells export, which reading back would count every cell twice"
                .to_string(),
        ));
    }
    let load = N_COLUMNS.iter().any(|name| has(name));
    let grain = if has("wall_ms") {
        Some(Grain::Request)
    } else {
        Stat::REQUEST
            .into_iter()
            // Token means alone do not make a table one row per cell: a latency or the throughput does. The
            // serving statistics do not either: a tool's own summary table (a vLLM sweep's `summary.csv`)
            // carries them.
            .filter(|stat| !matches!(stat, Stat::MeanPromptTokens | Stat::MeanCompletionTokens))
            .filter(|stat| !Stat::SERVING.contains(stat))
            .any(|stat| has(stat.name()))
            .then_some(Grain::Cell)
    };
    match (load, grain) {
        (true, Some(grain)) => Ok(grain),
        (true, None) => Err((
            Nearness::SomeMarks,
            "has a load column but neither `wall_ms` (one row per request) nor a latency or throughput such as \
             `p95_wall_ms` or `aggregate_tps` (one row per cell)"
                .to_string(),
        )),
        (false, Some(_)) => Err((
            Nearness::SomeMarks,
            "has figures but no load column (`n`, `concurrency` or `max_concurrency`)".to_string(),
        )),
        (false, None) => Err((
            Nearness::NoMarks,
            "has none of the canonical columns (a load `n`, `concurrency` or `max_concurrency`, with `wall_ms` \
             or a figure such as `p95_wall_ms`)"
                .to_string(),
        )),
    }
}

/// The column names of a Parquet file, from its footer (read through `storage`, not the whole file).
fn parquet_columns(storage: &dyn Storage, path: &str) -> Option<Vec<String>> {
    let length = storage.stat(path).ok()?.bytes;
    if length < 12 {
        return None;
    }
    let tail = storage.read_range(path, length - 8..length).ok()?;
    if tail.get(4..8)? != PARQUET_MAGIC {
        return None;
    }
    let footer_length = u64::from(u32::from_le_bytes(tail.get(..4)?.try_into().ok()?));
    if footer_length + 12 > length {
        return None;
    }
    let footer = storage
        .read_range(path, length - 8 - footer_length..length - 8)
        .ok()?;
    let metadata = parquet::file::metadata::ParquetMetaDataReader::decode_metadata(&footer).ok()?;
    Some(
        metadata
            .file_metadata()
            .schema_descr()
            .root_schema()
            .get_fields()
            .iter()
            .map(|field| field.name().to_string())
            .collect(),
    )
}

/// A table read as text: its columns and its rows with their 1-based line (CSV) or row (Parquet) numbers.
struct Sheet {
    columns: Vec<String>,
    rows: Vec<(u64, Vec<Option<String>>)>,
    /// `line` or `row`: how a position in this file is named in warnings.
    place: &'static str,
}

fn read_sheet(storage: &dyn Storage, path: &str, warnings: &mut Vec<Warning>) -> Option<Sheet> {
    let bytes = crate::parse::read_file(storage, path, warnings)?;
    if bytes.starts_with(PARQUET_MAGIC) {
        return read_parquet(bytes, path, warnings);
    }
    Some(read_csv(&bytes, path, warnings))
}

fn read_csv(bytes: &[u8], path: &str, warnings: &mut Vec<Warning>) -> Sheet {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let first_line = bytes
        .split(|byte| *byte == b'\n')
        .next()
        .unwrap_or_default();
    let delimiter = delimiter_of(&String::from_utf8_lossy(first_line));
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .delimiter(delimiter)
        .from_reader(bytes);
    let columns: Vec<String> = match reader.headers() {
        Ok(header) => header.iter().map(|name| name.trim().to_string()).collect(),
        Err(error) => {
            warnings.push(
                Warning::error(
                    "invalid_table",
                    format!("the header cannot be read ({error}); the file is left out"),
                )
                .file(path)
                .line(1),
            );
            return Sheet {
                columns: Vec::new(),
                rows: Vec::new(),
                place: "line",
            };
        }
    };
    let mut rows = Vec::new();
    for record in reader.records() {
        match record {
            Ok(record) => {
                let line = record.position().map_or(0, |position| position.line());
                if record.len() == 1 && record.get(0).is_some_and(|field| field.trim().is_empty()) {
                    continue;
                }
                if record.len() != columns.len() {
                    warnings.push(
                        Warning::warn(
                            "invalid_row",
                            format!(
                                "line {line} has {} fields and the header {}; the row is left out",
                                record.len(),
                                columns.len()
                            ),
                        )
                        .file(path)
                        .line(line),
                    );
                    continue;
                }
                rows.push((
                    line,
                    record
                        .iter()
                        .map(|field| {
                            let field = field.trim();
                            (!field.is_empty()).then(|| field.to_string())
                        })
                        .collect(),
                ));
            }
            Err(error) => {
                let line = error.position().map(|position| position.line());
                warnings.push(
                    Warning::warn(
                        "invalid_row",
                        format!("a row cannot be read ({error}); it is left out"),
                    )
                    .file(path)
                    .at_line(line),
                );
            }
        }
    }
    Sheet {
        columns,
        rows,
        place: "line",
    }
}

/// A Parquet file's rows, or a warning naming the file. The parquet crate asserts on some damaged files (a
/// column chunk at a negative offset panics in `ColumnChunkMetaData::byte_range`; found by the `formats` fuzz
/// target) instead of returning an error. That case is checked before decoding; for any other such assertion
/// the decoding runs under `catch_unwind`, so a damaged file is left out with a warning and the runs beside it
/// are indexed as ever.
fn read_parquet(bytes: Vec<u8>, path: &str, warnings: &mut Vec<Warning>) -> Option<Sheet> {
    let mut decoding_warnings = Vec::new();
    let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        decode_parquet(bytes, path, &mut decoding_warnings)
    }));
    warnings.append(&mut decoding_warnings);
    decoded.unwrap_or_else(|_| {
        warnings.push(
            Warning::error(
                "invalid_table",
                "the Parquet file cannot be read (the Parquet decoder failed on its metadata: a damaged file); \
                 the file is left out",
            )
            .file(path),
        );
        None
    })
}

fn decode_parquet(bytes: Vec<u8>, path: &str, warnings: &mut Vec<Warning>) -> Option<Sheet> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let file_bytes = bytes.len() as i64;
    let fail = |warnings: &mut Vec<Warning>, error: String| {
        warnings.push(
            Warning::error(
                "invalid_table",
                format!("the Parquet file cannot be read ({error}); the file is left out"),
            )
            .file(path),
        );
    };
    let builder = match ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes)) {
        Ok(builder) => builder,
        Err(error) => {
            fail(warnings, error.to_string());
            return None;
        }
    };
    // Every column chunk must lie inside the file: the decoder asserts on a negative offset or size (a panic,
    // which under a fuzzer's abort-on-panic hook no `catch_unwind` can catch), so such a file is refused first.
    let outside = builder
        .metadata()
        .row_groups()
        .iter()
        .flat_map(|group| group.columns())
        .find(|column| {
            let start = column
                .dictionary_page_offset()
                .unwrap_or_else(|| column.data_page_offset());
            let size = column.compressed_size();
            start < 0 || size < 0 || start.checked_add(size).is_none_or(|end| end > file_bytes)
        });
    if let Some(column) = outside {
        fail(
            warnings,
            format!(
                "column `{}` is said to lie outside the file (at byte {}, {} bytes long, in a file of {file_bytes})",
                column.column_path(),
                column
                    .dictionary_page_offset()
                    .unwrap_or_else(|| column.data_page_offset()),
                column.compressed_size()
            ),
        );
        return None;
    }
    let columns: Vec<String> = builder
        .schema()
        .fields()
        .iter()
        .map(|field| field.name().clone())
        .collect();
    let reader = match builder.build() {
        Ok(reader) => reader,
        Err(error) => {
            fail(warnings, error.to_string());
            return None;
        }
    };
    let mut rows = Vec::new();
    let mut row_number = 0u64;
    for batch in reader {
        let batch = match batch {
            Ok(batch) => batch,
            Err(error) => {
                fail(warnings, error.to_string());
                return None;
            }
        };
        let mut texts = Vec::new();
        for column in batch.columns() {
            match arrow_cast::cast(column, &DataType::Utf8) {
                Ok(text) => texts.push(text),
                Err(error) => {
                    fail(warnings, error.to_string());
                    return None;
                }
            }
        }
        for index in 0..batch.num_rows() {
            row_number += 1;
            rows.push((
                row_number,
                texts
                    .iter()
                    .map(|array| {
                        let strings = array.as_string::<i32>();
                        (!strings.is_null(index))
                            .then(|| strings.value(index).trim().to_string())
                            .filter(|text| !text.is_empty())
                    })
                    .collect(),
            ));
        }
    }
    Some(Sheet {
        columns,
        rows,
        place: "row",
    })
}

/// Where one value comes from, resolved against the file's columns.
#[derive(Clone, Debug)]
enum Binding {
    Column { index: usize, name: String },
    Constant { value: String, rule: String },
}

/// A `[[table]]` entry (or the canonical names) resolved against one file's columns.
struct Columns {
    grain: Grain,
    /// `(dimension, binding)` for suite, phase, backend, model, workload, n, rep.
    dimensions: Vec<(&'static str, Binding)>,
    wall: Option<(usize, Unit)>,
    ttft: Option<(usize, Unit)>,
    prompt_tokens: Option<usize>,
    completion_tokens: Option<usize>,
    start: Option<(usize, Unit)>,
    end: Option<(usize, Unit)>,
    status: Option<usize>,
    ok: Vec<String>,
    error: Option<usize>,
    /// Cell grain: `(reported name, column, factor to cellscope's unit)`.
    figures: Vec<(String, usize, f64)>,
    requests: Option<Binding>,
    ok_requests: Option<Binding>,
    failed_requests: Option<Binding>,
    notes: Vec<String>,
}

impl Columns {
    /// Resolves `entry` (or the canonical names) against `columns`. A column the entry names that the file
    /// lacks is reported at the header and leaves the file out: keys read from the wrong columns would be
    /// worse than no cells.
    fn resolve(
        columns: &[String],
        entry: Option<&TableEntry>,
        path: &str,
        warnings: &mut Vec<Warning>,
    ) -> Option<Columns> {
        let default = RawTable::default();
        let spec = entry.map_or(&default, |entry| &entry.spec);
        let grain = match entry {
            Some(entry) => entry.spec.grain,
            None => canonical_grain(columns)?,
        };
        let mut lookup = Lookup {
            columns,
            rule: entry.map_or_else(
                || "the canonical column names (no [[table]] entry)".to_string(),
                TableEntry::rule,
            ),
            missing: Vec::new(),
            notes: Vec::new(),
        };
        let dimensions = lookup.dimensions(spec);
        let requests = lookup.source("requests", spec.requests.as_ref(), &["requests"]);
        let ok_requests = lookup.source("ok_requests", spec.ok_requests.as_ref(), &["ok_requests"]);
        let failed_requests = lookup.source(
            "failed_requests",
            spec.failed_requests.as_ref(),
            &["failed_requests"],
        );
        let mut result = Columns {
            grain,
            dimensions,
            wall: None,
            ttft: None,
            prompt_tokens: None,
            completion_tokens: None,
            start: None,
            end: None,
            status: None,
            ok: spec
                .ok
                .clone()
                .unwrap_or_else(|| ["ok", "success", "200"].map(str::to_string).to_vec()),
            error: None,
            figures: Vec::new(),
            requests,
            ok_requests,
            failed_requests,
            notes: Vec::new(),
        };
        match grain {
            Grain::Request => lookup.request_columns(spec, &mut result),
            Grain::Cell => lookup.cell_figures(spec, &mut result),
        }
        if !lookup.missing.is_empty() {
            warnings.push(
                Warning::error(
                    "missing_column",
                    format!(
                        "{} names columns the file does not have: {}; the file is left out",
                        lookup.rule,
                        lookup.missing.join(", ")
                    ),
                )
                .file(path)
                .line(1),
            );
            return None;
        }
        result.notes = lookup.notes;
        Some(result)
    }
}

/// A `[[table]]` entry's names looked up among a file's columns: the ones it names that the file lacks, and notes
/// on the units converted.
struct Lookup<'a> {
    columns: &'a [String],
    /// The entry (or the canonical names), as warnings and notes name it.
    rule: String,
    missing: Vec<String>,
    notes: Vec<String>,
}

impl Lookup<'_> {
    /// The column of `key`: a named column must exist; an unnamed one is the first canonical name the file has.
    fn column(&mut self, key: &str, named: Option<&String>, canonical: &[&str]) -> Option<usize> {
        let position = |name: &str| self.columns.iter().position(|column| column == name);
        match named {
            Some(name) => {
                let found = position(name);
                if found.is_none() {
                    self.missing.push(format!("`{name}` ({key})"));
                }
                found
            }
            None => canonical.iter().find_map(|name| position(name)),
        }
    }

    /// Where `key` comes from: a column (named, or the first canonical name the file has) or a constant.
    fn source(&mut self, key: &str, named: Option<&Source>, canonical: &[&str]) -> Option<Binding> {
        match named {
            Some(Source::Column(name)) => {
                self.column(key, Some(name), &[])
                    .map(|index| Binding::Column {
                        index,
                        name: name.clone(),
                    })
            }
            Some(constant @ Source::Constant { .. }) => {
                let value = constant.constant().unwrap_or_default();
                Some(Binding::Constant {
                    rule: format!("{}: {key} = \"{value}\" (a constant)", self.rule),
                    value,
                })
            }
            None => self
                .column(key, None, canonical)
                .map(|index| Binding::Column {
                    index,
                    name: self.columns[index].clone(),
                }),
        }
    }

    /// The key dimensions the file gives, in key order.
    fn dimensions(&mut self, spec: &RawTable) -> Vec<(&'static str, Binding)> {
        let mut dimensions = Vec::new();
        for (dimension, named, canonical) in [
            ("suite", &spec.suite, &["suite"][..]),
            ("phase", &spec.phase, &["phase"][..]),
            ("backend", &spec.backend, &["backend"][..]),
            ("model", &spec.model, &["model"][..]),
            ("workload", &spec.workload, &["workload"][..]),
            ("n", &spec.n, &N_COLUMNS[..]),
            ("rep", &spec.rep, &["rep"][..]),
        ] {
            if let Some(binding) = self.source(dimension, named.as_ref(), canonical) {
                dimensions.push((dimension, binding));
            }
        }
        dimensions
    }

    /// Notes that `what`, read from column `index`, was converted from `unit` to `target`.
    fn unit_note(&mut self, what: &str, index: usize, unit: Unit, target: &str) {
        if unit.name() != target {
            self.notes.push(format!(
                "{what} read from column `{}` in {}, converted to {target}",
                self.columns[index],
                unit.name()
            ));
        }
    }

    /// A request table's columns: latencies, tokens, times, status and error.
    fn request_columns(&mut self, spec: &RawTable, result: &mut Columns) {
        let wall_unit = spec.wall_unit.unwrap_or(Unit::Ms);
        let ttft_unit = spec.ttft_unit.unwrap_or(Unit::Ms);
        let time_unit = spec.time_unit.unwrap_or(Unit::S);
        result.wall = self
            .column("wall", spec.wall.as_ref(), &["wall_ms"])
            .map(|index| {
                self.unit_note("wall latency", index, wall_unit, "ms");
                (index, wall_unit)
            });
        result.ttft = self
            .column("ttft", spec.ttft.as_ref(), &["ttft_ms"])
            .map(|index| {
                self.unit_note("TTFT", index, ttft_unit, "ms");
                (index, ttft_unit)
            });
        result.prompt_tokens = self.column(
            "prompt_tokens",
            spec.prompt_tokens.as_ref(),
            &["prompt_tokens"],
        );
        result.completion_tokens = self.column(
            "completion_tokens",
            spec.completion_tokens.as_ref(),
            &["completion_tokens"],
        );
        result.start = self
            .column("start", spec.start.as_ref(), &["start_s", "submit_time_s"])
            .map(|index| {
                self.unit_note("start times", index, time_unit, "s");
                (index, time_unit)
            });
        result.end = self
            .column("end", spec.end.as_ref(), &["end_s", "complete_time_s"])
            .map(|index| (index, time_unit));
        result.status = self.column("status", spec.status.as_ref(), &["status"]);
        result.error = self.column("error", spec.error.as_ref(), &["error"]);
        if result.wall.is_none() && self.missing.is_empty() {
            self.missing
                .push("a wall latency column (`wall`, or `wall_ms`)".to_string());
        }
    }

    /// A cell table's figures, each with the factor to cellscope's unit, then the columns `keep` names.
    fn cell_figures(&mut self, spec: &RawTable, result: &mut Columns) {
        let wall = Some(spec.wall_unit.unwrap_or(Unit::Ms));
        let ttft = Some(spec.ttft_unit.unwrap_or(Unit::Ms));
        // (key of the entry, its value there, the canonical column and cells-table name, the unit when a time)
        for (key, named, reported, unit) in [
            ("mean_wall", &spec.mean_wall, Stat::MeanWallMs.name(), wall),
            ("p50_wall", &spec.p50_wall, Stat::P50WallMs.name(), wall),
            ("p95_wall", &spec.p95_wall, Stat::P95WallMs.name(), wall),
            ("p99_wall", &spec.p99_wall, Stat::P99WallMs.name(), wall),
            ("mean_ttft", &spec.mean_ttft, "mean_ttft_ms", ttft),
            ("p50_ttft", &spec.p50_ttft, Stat::P50TtftMs.name(), ttft),
            ("p95_ttft", &spec.p95_ttft, Stat::P95TtftMs.name(), ttft),
            ("p99_ttft", &spec.p99_ttft, "p99_ttft_ms", ttft),
            ("tps", &spec.tps, Stat::AggregateTps.name(), None),
            (
                "efficiency",
                &spec.efficiency,
                Stat::Efficiency.name(),
                None,
            ),
            (
                "mean_prompt_tokens",
                &spec.mean_prompt_tokens,
                Stat::MeanPromptTokens.name(),
                None,
            ),
            (
                "mean_completion_tokens",
                &spec.mean_completion_tokens,
                Stat::MeanCompletionTokens.name(),
                None,
            ),
        ] {
            if let Some(index) = self.column(key, named.as_ref(), &[reported]) {
                let factor = unit.map_or(1.0, Unit::to_ms);
                if let Some(unit) = unit {
                    self.unit_note(reported, index, unit, "ms");
                }
                result.figures.push((reported.to_string(), index, factor));
            }
        }
        for name in &spec.keep {
            if let Some(index) = self.column("keep", Some(name), &[]) {
                result.figures.push((name.clone(), index, 1.0));
            }
        }
    }
}

/// One cell's rows of a table: the run record and the line (or row) of each of its requests.
struct Group {
    record: RunRecord,
    lines: Vec<u64>,
}

/// A number, or `Err` with the text that is not one. Empty cells are `Ok(None)`.
fn number(value: Option<&String>) -> Result<Option<f64>, String> {
    match value {
        None => Ok(None),
        Some(text) => match text.parse::<f64>() {
            Ok(number) if number.is_finite() => Ok(Some(number)),
            _ => Err(text.clone()),
        },
    }
}

/// A whole number written as a float (`8.0`, a Parquet double column) as `8`, for `n` and `rep`.
fn whole(text: &str) -> String {
    match text.parse::<f64>() {
        Ok(number) if number.fract() == 0.0 && (0.0..4e9).contains(&number) => {
            format!("{}", number as u64)
        }
        _ => text.to_string(),
    }
}

/// The records of one table file, grouped into cells (request grain) or one per row (cell grain).
fn groups(
    storage: &dyn Storage,
    path: &str,
    mapping: &Mapping,
    warnings: &mut Vec<Warning>,
) -> Vec<Group> {
    let Some(sheet) = read_sheet(storage, path, warnings) else {
        return Vec::new();
    };
    if sheet.columns.is_empty() {
        return Vec::new();
    }
    let Some(columns) = Columns::resolve(&sheet.columns, mapping.table_for(path), path, warnings)
    else {
        return Vec::new();
    };
    let mut grouping = Grouping {
        sheet: &sheet,
        columns: &columns,
        groups: Vec::new(),
        by_key: BTreeMap::new(),
        no_counts: false,
    };
    for (line, values) in &sheet.rows {
        if let Err(what) = grouping.add(*line, values) {
            warnings.push(
                Warning::warn(
                    "invalid_row",
                    format!("{} {line}: {what}; the row is left out", sheet.place),
                )
                .file(path)
                .line(*line),
            );
        }
    }
    if grouping.no_counts {
        warnings.push(
            Warning::warn(
                "no_request_counts",
                "the table gives no request counts (`requests`, `ok_requests` or `failed_requests`, a column or \
                 a constant), so its cells have no rows and show as not run; their figures are kept",
            )
            .file(path),
        );
    }
    grouping.groups
}

/// A table's rows being grouped into records.
struct Grouping<'a> {
    sheet: &'a Sheet,
    columns: &'a Columns,
    groups: Vec<Group>,
    /// Request grain: each cell's group, by its key as written.
    by_key: BTreeMap<Vec<String>, usize>,
    /// A cell-grain row gave neither a completed nor a failed count.
    no_counts: bool,
}

impl Grouping<'_> {
    /// One row at `line`: into its cell's group (request grain) or a record of its own (cell grain); `Err` says
    /// why it is left out.
    fn add(&mut self, line: u64, values: &[Option<String>]) -> Result<(), String> {
        let (key, key_text) = self.key_of(values)?;
        let fields = Json::Object(
            self.sheet
                .columns
                .iter()
                .zip(values)
                .filter_map(|(name, value)| {
                    value
                        .as_ref()
                        .map(|value| (name.clone(), Json::String(value.clone())))
                })
                .collect(),
        );
        match self.columns.grain {
            Grain::Request => {
                let request = self.request_of(values)?;
                let groups = &mut self.groups;
                let group = *self.by_key.entry(key_text).or_insert_with(|| {
                    groups.push(Group {
                        record: RunRecord {
                            record: groups.len() as u32,
                            line: Some(line),
                            fields,
                            key,
                            has_requests: true,
                            notes: self.columns.notes.clone(),
                            ..RunRecord::default()
                        },
                        lines: Vec::new(),
                    });
                    groups.len() - 1
                });
                self.groups[group].record.requests.push(request);
                self.groups[group].lines.push(line);
            }
            Grain::Cell => {
                let mut record = self.cell_record(values)?;
                record.record = self.groups.len() as u32;
                record.line = Some(line);
                record.fields = fields;
                record.key = key;
                self.groups.push(Group {
                    record,
                    lines: Vec::new(),
                });
            }
        }
        Ok(())
    }

    /// The row's key as written (with how each part was found), and its parts' text; `Err` when a key column is
    /// empty.
    fn key_of(&self, values: &[Option<String>]) -> Result<(KeyParts, Vec<String>), String> {
        let mut key = KeyParts::default();
        let mut key_text = Vec::new();
        for (dimension, binding) in &self.columns.dimensions {
            let part = match binding {
                Binding::Column { index, name } => match &values[*index] {
                    Some(value) => {
                        let value = if matches!(*dimension, "n" | "rep") {
                            whole(value)
                        } else {
                            value.clone()
                        };
                        Part::read(value, format!("column `{name}`"))
                    }
                    None => return Err(format!("the {dimension} column `{name}` is empty")),
                },
                Binding::Constant { value, rule } => Part::inferred(value.clone(), rule.clone()),
            };
            key_text.push(
                part.as_ref()
                    .map(|part| part.value.clone())
                    .unwrap_or_default(),
            );
            match *dimension {
                "suite" => key.suite = part,
                "phase" => key.phase = part,
                "backend" => key.backend = part,
                "model" => key.model = part,
                "workload" => key.workload = part,
                "n" => key.n = part,
                _ => key.rep = part,
            }
        }
        Ok((key, key_text))
    }

    /// A request-grain row's request, in cellscope's units; `Err` names the first column of an `ok` request that
    /// holds no number.
    fn request_of(&self, values: &[Option<String>]) -> Result<Request, String> {
        let columns = self.columns;
        let value = |index: Option<usize>| index.and_then(|index| values[index].as_ref());
        let error_text = value(columns.error).cloned();
        let status_text = value(columns.status).cloned();
        let failed = error_text.is_some()
            || status_text
                .as_ref()
                .is_some_and(|status| !columns.ok.iter().any(|ok| ok.eq_ignore_ascii_case(status)));
        let mut request = Request::default();
        let mut wrong = None;
        let mut read = |slot: &mut Option<f64>, index: Option<usize>, factor: f64| match number(
            value(index),
        ) {
            Ok(number) => *slot = number.map(|number| number * factor),
            Err(text) if wrong.is_none() && !failed => {
                wrong = Some(format!(
                    "column `{}` holds `{text}`, not a number",
                    index.map_or("", |index| self.sheet.columns[index].as_str())
                ));
            }
            Err(_) => {}
        };
        let time = |column: Option<(usize, Unit)>| {
            (
                column.map(|(index, _)| index),
                column.map_or(1.0, |(_, unit)| unit.to_ms()),
            )
        };
        let (wall, wall_factor) = time(columns.wall);
        read(&mut request.wall_ms, wall, wall_factor);
        let (ttft, ttft_factor) = time(columns.ttft);
        read(&mut request.ttft_ms, ttft, ttft_factor);
        read(&mut request.prompt_tokens, columns.prompt_tokens, 1.0);
        read(
            &mut request.completion_tokens,
            columns.completion_tokens,
            1.0,
        );
        let (start, start_factor) = time(columns.start);
        read(&mut request.start_s, start, start_factor / 1e3);
        let (end, end_factor) = time(columns.end);
        read(&mut request.end_s, end, end_factor / 1e3);
        if let Some(what) = wrong {
            return Err(what);
        }
        if request.start_s.is_none() || request.end_s.is_none() {
            request.start_s = None;
            request.end_s = None;
        }
        if failed {
            request.error = Some(error_text.or(status_text).unwrap_or_default());
        }
        Ok(request)
    }

    /// A cell-grain row's record: its counts and the table's figures, as reported; `Err` for a count that is not a
    /// whole number (said first) or a figure that is not a number.
    fn cell_record(&mut self, values: &[Option<String>]) -> Result<RunRecord, String> {
        let figures = self.figures(values);
        let count = |binding: &Option<Binding>| -> Result<Option<u32>, String> {
            let text = match binding {
                None => return Ok(None),
                Some(Binding::Constant { value, .. }) => Some(value.clone()),
                Some(Binding::Column { index, .. }) => values[*index].clone(),
            };
            match text {
                None => Ok(None),
                Some(text) => whole(&text)
                    .parse::<u32>()
                    .map(Some)
                    .map_err(|_| format!("the request count `{text}` is not a whole number")),
            }
        };
        let (requests, ok, failed) = match (
            count(&self.columns.requests),
            count(&self.columns.ok_requests),
            count(&self.columns.failed_requests),
        ) {
            (Ok(requests), Ok(ok), Ok(failed)) => (requests, ok, failed),
            (Err(what), _, _) | (_, Err(what), _) | (_, _, Err(what)) => return Err(what),
        };
        let reported = figures?;
        let completed =
            ok.or_else(|| requests.map(|requests| requests - failed.unwrap_or(0).min(requests)));
        let failed = failed.or_else(|| {
            requests
                .zip(ok)
                .map(|(requests, ok)| requests.saturating_sub(ok))
        });
        if completed.is_none() && failed.is_none() {
            self.no_counts = true;
        }
        let mut notes = self.columns.notes.clone();
        let extra: Vec<&String> = reported
            .keys()
            .filter(|name| !STAT_COLUMNS.contains(&name.as_str()))
            .collect();
        if !extra.is_empty() {
            notes.push(format!(
                "the table's own figures without a cells-table column are kept here as reported: {}",
                extra
                    .iter()
                    .map(|name| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(RunRecord {
            requests: Vec::new(),
            has_requests: false,
            expected_rows: requests,
            completed,
            failed,
            reported,
            notes,
            ..RunRecord::default()
        })
    }

    /// A cell-grain row's figures in cellscope's units; `Err` names the first that is not a number.
    fn figures(&self, values: &[Option<String>]) -> Result<BTreeMap<String, f64>, String> {
        let mut reported = BTreeMap::new();
        for (reported_name, index, factor) in &self.columns.figures {
            match number(values[*index].as_ref()) {
                Ok(Some(number)) => {
                    reported.insert(reported_name.clone(), number * factor);
                }
                Ok(None) => {}
                Err(text) => {
                    return Err(format!(
                        "column `{}` holds `{text}`, not a number",
                        self.sheet.columns[*index]
                    ));
                }
            }
        }
        Ok(reported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> Vec<String> {
        csv_header(text.as_bytes()).expect("a header")
    }

    #[test]
    fn a_parquet_file_the_decoder_panics_on_is_left_out_with_a_warning() {
        // The fuzz finding (first byte: the file name it was given): column chunk metadata with a negative
        // offset, on which the parquet crate asserts instead of returning an error.
        let input = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fuzz/corpus/formats/regression-parquet-negative-column-offset"
        ))
        .unwrap();
        let mut warnings = Vec::new();
        assert!(
            read_parquet(input[1..].to_vec(), "sweep/requests.parquet", &mut warnings).is_none()
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].kind, "invalid_table");
        assert_eq!(warnings[0].file.as_deref(), Some("sweep/requests.parquet"));
        // Refused before decoding, by the check, not caught after a panic.
        assert!(
            warnings[0].message.contains("outside the file"),
            "{}",
            warnings[0].message
        );
    }

    #[test]
    fn canonical_headers_are_detected_and_tr164_is_not_stolen() {
        assert_eq!(
            canonical_grain(&header("backend,model,n,rep,wall_ms,ttft_ms\n1,2")),
            Some(Grain::Request)
        );
        assert_eq!(
            canonical_grain(&header("model\tconcurrency\tp95_wall_ms\n")),
            Some(Grain::Cell)
        );
        // TR164's metrics.csv has wall_ms and n_agents.
        assert_eq!(
            canonical_grain(&header(
                "run_id,suite,phase,backend,model,workload,n_agents,rep,agent_id,request_id,request_sequence,n,wall_ms"
            )),
            None
        );
        // cellscope's own cells export.
        assert_eq!(
            canonical_grain(&header(
                "run_id,n,rep,status,refilled,expected_rows,p95_wall_ms"
            )),
            None
        );
        assert_eq!(canonical_grain(&header("model,wall_ms")), None);
        assert!(csv_header(b"{\"n\": 1}").is_none());
        assert!(
            !Table
                .examine_head("a/results.csv", b"date,value\n1,2\n")
                .reads()
        );
        assert!(
            Table
                .examine_head("a/results.csv", b"n,wall_ms\n1,2\n")
                .reads()
        );
    }

    #[test]
    fn whole_numbers_written_as_floats_are_whole() {
        assert_eq!(whole("8.0"), "8");
        assert_eq!(whole("8"), "8");
        assert_eq!(whole("8.5"), "8.5");
        assert_eq!(whole("x"), "x");
    }
}
