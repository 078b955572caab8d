//! The Arrow schema of the cells table and its (de)serialisation, shared by the server (writer) and the
//! browser (reader). Column names are a contract: the CLI's CSV/JSON exports use the same ones.

use crate::config::Config;
use crate::exclusions::ExclusionScope;
use crate::key::{CellKey, Dimension};
use crate::load::Load;
use crate::origin::FigureOrigin;
use crate::stat::Stat;
use crate::stats::CellStats;
use crate::status::CellStatus;
use crate::summary::{CellSummary, ExpectedSource};
use arrow_array::builder::{
    BooleanBuilder, Float64Builder, StringDictionaryBuilder, UInt32Builder,
};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use std::sync::{Arc, OnceLock};

pub mod ipc;

/// The media type of an Arrow IPC stream body.
pub const ARROW_STREAM_MEDIA_TYPE: &str = "application/vnd.apache.arrow.stream";

/// Errors decoding a cells table that does not follow [`cells_schema`].
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// Arrow could not read the stream.
    #[error("arrow: {0}")]
    Arrow(#[from] ArrowError),
    /// A column is absent or of another type.
    #[error("column `{0}` is missing or has the wrong type")]
    Column(&'static str),
    /// A text column holds a value its type does not know.
    #[error("row {row}: `{column}` has the unknown value `{value}`")]
    Value {
        /// The row, from 0.
        row: usize,
        /// The column.
        column: &'static str,
        /// The value as written.
        value: String,
    },
    /// A required column is null.
    #[error("row {row}: `{column}` is null but required")]
    Null {
        /// The row, from 0.
        row: usize,
        /// The column.
        column: &'static str,
    },
}

/// The type of every text column of cellscope's tables (cells and request rows): dictionary-encoded UTF-8 with
/// 32-bit keys (Arrow's default key type, which every Arrow reader takes). Each column holds a few distinct texts
/// (backends, models, statuses, runs, error kinds), so the dictionary sends each once and the rows carry small
/// keys: the demo's compressed cells body is a tenth smaller, its identity body and a cell's request rows about a
/// quarter, and `/api/cells`' latency under load is mostly the bytes sent.
pub(crate) fn text_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// The cells table schema. The first 28 columns are the documented export contract, in order; the rest carry
/// provenance the app needs (where `expected_rows` came from, exclusion scope, baseline fallback, refill source
/// run, and for other tools' files which figures are reported or derived and which key parts inferred).
pub fn cells_schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let text = |name: &str| Field::new(name, text_type(), false);
            let count = |name: &str| Field::new(name, DataType::UInt32, false);
            let mut fields: Vec<Field> = Dimension::ALL
                .map(|dimension| match dimension.is_numeric() {
                    true => count(dimension.column()),
                    false => text(dimension.column()),
                })
                .into();
            fields.extend([
                text("status"),
                Field::new("refilled", DataType::Boolean, false),
                Field::new("fallback", DataType::Boolean, false),
                text("excluded"),
                Field::new("expected_rows", DataType::UInt32, true),
                count("rows"),
                count("ok_rows"),
                count("failed_rows"),
                count("skip_rows"),
            ]);
            fields.extend(Stat::ALL.map(|stat| Field::new(stat.name(), DataType::Float64, true)));
            fields.extend([
                text("expected_source"),
                Field::new("exclusion_scope", text_type(), true),
                Field::new("baseline_fallback", DataType::Boolean, false),
                Field::new("source_run_id", text_type(), true),
                text("reported_metrics"),
                text("derived_metrics"),
                text("inferred_dimensions"),
            ]);
            Arc::new(Schema::new(fields))
        })
        .clone()
}

/// What the cells table needs beyond [`cells_schema`]: a null `n` for cells at an offered rate or without a
/// stated load, a `rate_rps` column when some cell is at a rate, a `baseline_load` column when some cell is
/// normalised against another load than N=1, a `config` column (the configuration's text form) when some cell's
/// configuration states anything. A table of concurrency cells normalised against N=1 without configurations
/// keeps exactly the base schema.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtraColumns {
    /// Some cell's load is not a concurrency: `n` is nullable.
    pub nullable_n: bool,
    /// Some cell is at an offered rate: `rate_rps` (req/s, `inf` allowed) follows the base columns.
    pub rate_rps: bool,
    /// Some cell has a baseline other than N=1: `baseline_load` (its text form) follows.
    pub baseline_load: bool,
    /// Some cell's configuration states something: `config` (its text form, empty for none) comes last.
    pub config: bool,
}

impl ExtraColumns {
    /// The columns `cells` need.
    pub fn of(cells: &[CellSummary]) -> ExtraColumns {
        ExtraColumns {
            nullable_n: cells
                .iter()
                .any(|cell| cell.key.load.concurrency().is_none()),
            rate_rps: cells.iter().any(|cell| cell.key.load.rate_rps().is_some()),
            baseline_load: cells.iter().any(|cell| cell.baseline_load.is_some()),
            config: cells.iter().any(|cell| !cell.key.config.is_empty()),
        }
    }
}

/// The cells schema for a table with these load columns ([`cells_schema`] when none is needed).
pub fn cells_schema_with(columns: ExtraColumns) -> SchemaRef {
    if columns == ExtraColumns::default() {
        return cells_schema();
    }
    let base = cells_schema();
    let mut fields: Vec<Field> = base
        .fields()
        .iter()
        .map(|field| {
            let nullable = field.name() == Dimension::Load.column() && columns.nullable_n;
            field
                .as_ref()
                .clone()
                .with_nullable(field.is_nullable() || nullable)
        })
        .collect();
    if columns.rate_rps {
        fields.push(Field::new("rate_rps", DataType::Float64, true));
    }
    if columns.baseline_load {
        fields.push(Field::new("baseline_load", text_type(), true));
    }
    if columns.config {
        fields.push(Field::new("config", text_type(), false));
    }
    Arc::new(Schema::new(fields))
}

/// The names of the cells columns, in order.
pub fn cell_column_names() -> Vec<String> {
    column_names(&cells_schema())
}

fn column_names(schema: &SchemaRef) -> Vec<String> {
    schema
        .fields()
        .iter()
        .map(|field| field.name().clone())
        .collect()
}

/// A text column (see [`text_type`]) from its values, `None` for null.
pub(crate) fn text_array<S: AsRef<str>>(values: impl Iterator<Item = Option<S>>) -> ArrayRef {
    let mut builder = StringDictionaryBuilder::<Int32Type>::new();
    for value in values {
        builder.append_option(value);
    }
    Arc::new(builder.finish())
}

/// Builds the cells table.
pub fn cells_to_batch(cells: &[CellSummary]) -> Result<RecordBatch, ArrowError> {
    let texts =
        |value: fn(&CellSummary) -> &str| text_array(cells.iter().map(|cell| Some(value(cell))));
    let optional_texts =
        |value: fn(&CellSummary) -> Option<&str>| text_array(cells.iter().map(value));
    let counts = |value: fn(&CellSummary) -> Option<u32>| -> ArrayRef {
        let mut builder = UInt32Builder::with_capacity(cells.len());
        for cell in cells {
            builder.append_option(value(cell));
        }
        Arc::new(builder.finish())
    };
    let flags = |value: fn(&CellSummary) -> bool| -> ArrayRef {
        let mut builder = BooleanBuilder::with_capacity(cells.len());
        for cell in cells {
            builder.append_value(value(cell));
        }
        Arc::new(builder.finish())
    };
    let excluded = text_array(cells.iter().map(|cell| Some(cell.excluded.join(";"))));
    let mut columns: Vec<ArrayRef> = vec![
        texts(|cell| &cell.key.run_id),
        texts(|cell| &cell.key.suite),
        texts(|cell| &cell.key.phase),
        texts(|cell| &cell.key.backend),
        texts(|cell| &cell.key.model),
        texts(|cell| &cell.key.workload),
        counts(|cell| cell.key.load.concurrency()),
        counts(|cell| Some(cell.key.rep)),
        texts(|cell| cell.status.as_str()),
        flags(|cell| cell.refilled),
        flags(|cell| cell.fallback),
        excluded,
        counts(|cell| cell.expected_rows),
        counts(|cell| Some(cell.rows)),
        counts(|cell| Some(cell.ok_rows)),
        counts(|cell| Some(cell.failed_rows)),
        counts(|cell| Some(cell.skip_rows)),
    ];
    for stat in Stat::ALL {
        let mut builder = Float64Builder::with_capacity(cells.len());
        for cell in cells {
            builder.append_option(cell.stat(stat));
        }
        columns.push(Arc::new(builder.finish()));
    }
    columns.extend([
        texts(|cell| cell.expected_source.as_str()),
        optional_texts(|cell| cell.exclusion_scope.map(ExclusionScope::as_str)),
        flags(|cell| cell.baseline_fallback),
        optional_texts(|cell| cell.source_run_id.as_deref()),
    ]);
    let reported: fn(&CellSummary) -> &Vec<String> = |cell| &cell.origin.reported;
    let derived: fn(&CellSummary) -> &Vec<String> = |cell| &cell.origin.derived;
    let inferred: fn(&CellSummary) -> &Vec<String> = |cell| &cell.origin.inferred;
    for names in [reported, derived, inferred] {
        columns.push(text_array(
            cells
                .iter()
                .map(|cell| Some(FigureOrigin::join(names(cell)))),
        ));
    }
    let extra_columns = ExtraColumns::of(cells);
    if extra_columns.rate_rps {
        let mut builder = Float64Builder::with_capacity(cells.len());
        for cell in cells {
            builder.append_option(cell.key.load.rate_rps());
        }
        columns.push(Arc::new(builder.finish()));
    }
    if extra_columns.baseline_load {
        columns.push(text_array(
            cells
                .iter()
                .map(|cell| cell.baseline_load.map(|load| load.to_string())),
        ));
    }
    if extra_columns.config {
        columns.push(text_array(
            cells.iter().map(|cell| Some(cell.key.config.text())),
        ));
    }
    RecordBatch::try_new(cells_schema_with(extra_columns), columns)
}

/// Reads a cells table sent as an Arrow IPC stream back into summaries (the browser, and the server's kept
/// snapshots), with the lean reader of [`ipc`].
pub fn cells_from_ipc(bytes: &[u8]) -> Result<Vec<CellSummary>, SchemaError> {
    let mut cells = Vec::new();
    for table in ipc::read_tables(bytes)? {
        cells.extend(cells_from_table(&table)?);
    }
    Ok(cells)
}

/// Reads one record batch of a cells table back into summaries.
fn cells_from_table(batch: &ipc::Table) -> Result<Vec<CellSummary>, SchemaError> {
    let text = |name: &'static str| batch.text(name).ok_or(SchemaError::Column(name));
    let count = |name: &'static str| batch.uint32(name).ok_or(SchemaError::Column(name));
    let flag = |name: &'static str| batch.boolean(name).ok_or(SchemaError::Column(name));
    let float = |name: &'static str| batch.float64(name).ok_or(SchemaError::Column(name));
    let (run_id, suite, phase, backend, model, workload) = (
        text(Dimension::Run.column())?,
        text(Dimension::Suite.column())?,
        text(Dimension::Phase.column())?,
        text(Dimension::Backend.column())?,
        text(Dimension::Model.column())?,
        text(Dimension::Workload.column())?,
    );
    let (n, rep) = (
        count(Dimension::Load.column())?,
        count(Dimension::Rep.column())?,
    );
    let status = text("status")?;
    // Only tables with a cell at an offered rate (or normalised against another load than N=1) have these.
    let (rate_rps, baseline_load) = (batch.float64("rate_rps"), batch.text("baseline_load"));
    // Only tables with a cell whose configuration states something have `config`.
    let config = batch.text("config");
    let load_at = |row: usize| -> Result<Load, SchemaError> {
        if let Some(n) = n.get(row) {
            return Ok(Load::Concurrency(n));
        }
        match rate_rps.and_then(|column| column.get(row)) {
            Some(rps) => Load::rate(rps).ok_or(SchemaError::Value {
                row,
                column: "rate_rps",
                value: rps.to_string(),
            }),
            None => Ok(Load::Unstated),
        }
    };
    let baseline_at = |row: usize| -> Option<Load> {
        let column = baseline_load?;
        (!column.is_null(row))
            .then(|| column.value(row).parse().ok())
            .flatten()
    };
    let (refilled, fallback, excluded) = (flag("refilled")?, flag("fallback")?, text("excluded")?);
    let (expected_rows, rows, ok_rows) =
        (count("expected_rows")?, count("rows")?, count("ok_rows")?);
    let (failed_rows, skip_rows) = (count("failed_rows")?, count("skip_rows")?);
    // The serving statistics may be absent: a kept snapshot written before they existed reads them as `None`.
    let floats: Vec<_> = Stat::ALL
        .iter()
        .map(|stat| match float(stat.name()) {
            Err(_) if Stat::SERVING.contains(stat) => Ok(None),
            found => found.map(Some),
        })
        .collect::<Result<_, _>>()?;
    let (expected_source, exclusion_scope) = (text("expected_source")?, text("exclusion_scope")?);
    let (baseline_fallback, source_run_id) = (flag("baseline_fallback")?, text("source_run_id")?);
    // Tables written before the origin columns existed (a kept snapshot) read as all recomputed.
    let origin_column = |name: &'static str| batch.text(name);
    let (reported, derived, inferred) = (
        origin_column("reported_metrics"),
        origin_column("derived_metrics"),
        origin_column("inferred_dimensions"),
    );

    (0..batch.rows)
        .map(|row| {
            let status_text = status.value(row);
            let status_value =
                CellStatus::parse(status_text).ok_or_else(|| SchemaError::Value {
                    row,
                    column: "status",
                    value: status_text.to_string(),
                })?;
            let source_text = expected_source.value(row);
            let source_value =
                ExpectedSource::parse(source_text).ok_or_else(|| SchemaError::Value {
                    row,
                    column: "expected_source",
                    value: source_text.to_string(),
                })?;
            let scope = if exclusion_scope.is_null(row) {
                None
            } else {
                let scope_text = exclusion_scope.value(row);
                Some(
                    ExclusionScope::parse(scope_text).ok_or_else(|| SchemaError::Value {
                        row,
                        column: "exclusion_scope",
                        value: scope_text.to_string(),
                    })?,
                )
            };
            let excluded_text = excluded.value(row);
            let f = |stat: Stat| floats[stat as usize].and_then(|column| column.get(row));
            Ok(CellSummary {
                key: CellKey {
                    run_id: run_id.value(row).to_string(),
                    suite: suite.value(row).to_string(),
                    phase: phase.value(row).to_string(),
                    backend: backend.value(row).to_string(),
                    model: model.value(row).to_string(),
                    workload: workload.value(row).to_string(),
                    config: config_at(config, row)?,
                    load: load_at(row)?,
                    rep: rep.value(row),
                },
                status: status_value,
                refilled: refilled.value(row),
                fallback: fallback.value(row),
                excluded: if excluded_text.is_empty() {
                    Vec::new()
                } else {
                    excluded_text.split(';').map(str::to_string).collect()
                },
                exclusion_scope: scope,
                expected_rows: expected_rows.get(row),
                expected_source: source_value,
                rows: rows.value(row),
                ok_rows: ok_rows.value(row),
                failed_rows: failed_rows.value(row),
                skip_rows: skip_rows.value(row),
                stats: request_stats(ok_rows.value(row), f),
                efficiency: f(Stat::Efficiency),
                p95_multiplier: f(Stat::P95Multiplier),
                baseline_fallback: baseline_fallback.value(row),
                baseline_load: baseline_at(row),
                source_run_id: (!source_run_id.is_null(row))
                    .then(|| source_run_id.value(row).to_string()),
                origin: FigureOrigin {
                    reported: reported
                        .map(|column| FigureOrigin::split(column.value(row)))
                        .unwrap_or_default(),
                    derived: derived
                        .map(|column| FigureOrigin::split(column.value(row)))
                        .unwrap_or_default(),
                    inferred: inferred
                        .map(|column| FigureOrigin::split(column.value(row)))
                        .unwrap_or_default(),
                },
            })
        })
        .collect()
}

/// The configuration of one row: read from its text form in the `config` column, empty without the column.
fn config_at(column: Option<&ipc::TextColumn>, row: usize) -> Result<Config, SchemaError> {
    let Some(column) = column else {
        return Ok(Config::new());
    };
    let text = column.value(row);
    text.parse().map_err(|_| SchemaError::Value {
        row,
        column: "config",
        value: text.to_string(),
    })
}

/// A cell's request statistics, each read by `value` from its column.
fn request_stats(ok_rows: u32, value: impl Fn(Stat) -> Option<f64>) -> CellStats {
    let mut stats = CellStats {
        ok_rows,
        ..CellStats::default()
    };
    for stat in Stat::REQUEST {
        if let Some(slot) = stats.get_mut(stat) {
            *slot = value(stat);
        }
    }
    stats
}

/// A text field as a spreadsheet may open it: one that starts with `=`, `+`, `-`, `@`, a tab or a carriage return
/// and is not a number would be taken for a formula, so it gets a leading `'` (OWASP's advice for CSV injection).
/// A number (`-0.0123`, `-1.5e-3`, `-inf`) stays as it is, so that pandas and spreadsheets read it as a number.
pub fn neutralised(text: &str) -> std::borrow::Cow<'_, str> {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) && !is_number(text) {
        std::borrow::Cow::Owned(format!("'{text}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Whether a CSV reader takes `text` for a number: an optional sign, then decimal digits with an optional point
/// and exponent, or `inf`/`infinity`/`nan` (as Rust writes a float and pandas reads one back); such a text calls
/// no function in a spreadsheet.
pub fn is_number(text: &str) -> bool {
    text.parse::<f64>().is_ok()
}

/// Appends one CSV number field: its shortest exact decimal form (`-0.0123`, `inf`), or nothing when absent.
fn csv_number(out: &mut String, value: Option<f64>) {
    if let Some(value) = value {
        out.push_str(&value.to_string());
    }
}

/// Appends one CSV text field, neutralised against formulas ([`neutralised`]) and quoted when it holds a comma, a
/// quote or a line break (RFC 4180).
pub(crate) fn csv_field(out: &mut String, text: &str) {
    let text = neutralised(text);
    if text.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(&text);
    }
}

/// The cells table as CSV (header line, `\n` line ends, RFC 4180 quoting, empty for undefined numbers).
/// The CLI, the API and the browser's export all use this one writer.
pub fn cells_to_csv(cells: &[CellSummary]) -> String {
    let field = csv_field;
    let extra_columns = ExtraColumns::of(cells);
    let mut out = column_names(&cells_schema_with(extra_columns)).join(",");
    out.push('\n');
    for cell in cells {
        let key = &cell.key;
        for text in key.series_components() {
            field(&mut out, text);
            out.push(',');
        }
        out.push_str(&format!(
            "{},{},{},{},{},",
            key.load
                .concurrency()
                .map(|n| n.to_string())
                .unwrap_or_default(),
            key.rep,
            cell.status.as_str(),
            cell.refilled,
            cell.fallback
        ));
        field(&mut out, &cell.excluded.join(";"));
        out.push(',');
        if let Some(expected) = cell.expected_rows {
            out.push_str(&expected.to_string());
        }
        out.push_str(&format!(
            ",{},{},{},{}",
            cell.rows, cell.ok_rows, cell.failed_rows, cell.skip_rows
        ));
        for stat in Stat::ALL {
            out.push(',');
            csv_number(&mut out, cell.stat(stat));
        }
        out.push(',');
        out.push_str(cell.expected_source.as_str());
        out.push(',');
        out.push_str(cell.exclusion_scope.map_or("", ExclusionScope::as_str));
        out.push_str(&format!(",{},", cell.baseline_fallback));
        field(&mut out, cell.source_run_id.as_deref().unwrap_or(""));
        for names in [
            &cell.origin.reported,
            &cell.origin.derived,
            &cell.origin.inferred,
        ] {
            out.push(',');
            field(&mut out, &FigureOrigin::join(names));
        }
        write_extra_columns(&mut out, cell, extra_columns);
        out.push('\n');
    }
    out
}

/// The `rate_rps`, `baseline_load` and `config` fields of one CSV row, as far as the table has them.
fn write_extra_columns(out: &mut String, cell: &CellSummary, columns: ExtraColumns) {
    if columns.rate_rps {
        out.push(',');
        csv_number(out, cell.key.load.rate_rps());
    }
    if columns.baseline_load {
        out.push(',');
        if let Some(load) = cell.baseline_load {
            out.push_str(&load.to_string());
        }
    }
    if columns.config {
        out.push(',');
        csv_field(out, &cell.key.config.text());
    }
}

/// Encodes record batches as an Arrow IPC stream (uncompressed: HTTP compression does that job, and the
/// IPC zstd codec does not build for wasm32).
pub fn write_ipc_stream(
    batches: &[RecordBatch],
    schema: &SchemaRef,
) -> Result<Vec<u8>, ArrowError> {
    let mut bytes = Vec::new();
    {
        let mut writer = arrow_ipc::writer::StreamWriter::try_new(&mut bytes, schema)?;
        for batch in batches {
            writer.write(batch)?;
        }
        writer.finish()?;
    }
    Ok(bytes)
}

/// Decodes an Arrow IPC stream into its batches with arrow's own reader: what any Arrow client reads, and the
/// oracle the lean reader of [`ipc`] is tested against. The browser uses the lean reader only (arrow's reader
/// links its dictionary-delta concatenation, about a third of a megabyte of WASM before optimisation).
pub fn read_ipc_stream(bytes: &[u8]) -> Result<Vec<RecordBatch>, ArrowError> {
    arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)?.collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;

    /// A one-column stream of dictionary-encoded texts, written with `handling`.
    fn dictionary_stream(
        batches: &[Vec<&str>],
        handling: arrow_ipc::writer::DictionaryHandling,
    ) -> Vec<u8> {
        let schema = Arc::new(Schema::new(vec![Field::new("status", text_type(), false)]));
        let options =
            arrow_ipc::writer::IpcWriteOptions::default().with_dictionary_handling(handling);
        let mut bytes = Vec::new();
        let mut writer =
            arrow_ipc::writer::StreamWriter::try_new_with_options(&mut bytes, &schema, options)
                .unwrap();
        for values in batches {
            let column = text_array(values.iter().map(Some));
            writer
                .write(&RecordBatch::try_new(schema.clone(), vec![column]).unwrap())
                .unwrap();
        }
        writer.finish().unwrap();
        drop(writer);
        bytes
    }

    #[test]
    fn ipc_streams_round_trip_and_bad_ones_are_refused() {
        let mut cell = CellSummary::empty(
            CellKey {
                run_id: "r".into(),
                suite: "s".into(),
                phase: "p".into(),
                backend: "b".into(),
                model: "m".into(),
                workload: "w".into(),
                config: Default::default(),
                load: crate::Load::Concurrency(4),
                rep: 1,
            },
            CellStatus::Clean,
        );
        cell.efficiency = Some(0.75);
        let mut other = cell.clone();
        other.key.backend = "vllm".into();
        other.key.load = crate::Load::Concurrency(8);
        other.status = CellStatus::Skipped;
        other.source_run_id = Some("r0".into());
        other.exclusion_scope = Some(ExclusionScope::Comparison);
        other.excluded = vec!["x".into(), "y".into()];
        let first = vec![cell.clone(), other.clone(), cell.clone()];
        let second = vec![other.clone(), other];
        let batches = [
            cells_to_batch(&first).unwrap(),
            cells_to_batch(&second).unwrap(),
        ];
        // Every text column is dictionary-encoded, and each batch sends its own dictionaries.
        let types: Vec<&DataType> = batches[0]
            .schema_ref()
            .fields()
            .iter()
            .map(|field| field.data_type())
            .collect();
        assert_eq!(
            types.iter().filter(|kind| ***kind == text_type()).count(),
            14
        );
        assert!(!types.contains(&&DataType::Utf8));
        let bytes = write_ipc_stream(&batches, &cells_schema()).unwrap();
        // arrow's own reader reads back what was written; the lean reader reads the same summaries.
        assert_eq!(read_ipc_stream(&bytes).unwrap(), batches.to_vec());
        let read = cells_from_ipc(&bytes).unwrap();
        assert_eq!(read, [first, second].concat());
        assert!(read_ipc_stream(&bytes[..bytes.len() / 2]).is_err());

        // A dictionary sent again for a later batch replaces the one before; both readers agree.
        use arrow_ipc::writer::DictionaryHandling;
        let replaced = dictionary_stream(
            &[vec!["a", "b", "a"], vec!["c", "a"]],
            DictionaryHandling::Resend,
        );
        let tables = ipc::read_tables(&replaced).unwrap();
        let texts: Vec<Vec<&str>> = tables
            .iter()
            .map(|table| {
                let column = table.text("status").unwrap();
                (0..table.rows).map(|row| column.value(row)).collect()
            })
            .collect();
        assert_eq!(texts, [vec!["a", "b", "a"], vec!["c", "a"]]);
        assert_eq!(read_ipc_stream(&replaced).unwrap().len(), 2);
        // A delta (new entries appended to the dictionary before) is refused, not misread.
        let delta = dictionary_stream(
            &[vec!["a", "b"], vec!["a", "b", "c"]],
            DictionaryHandling::Delta,
        );
        let error = ipc::read_tables(&delta).unwrap_err();
        assert!(error.to_string().contains("dictionary deltas"), "{error}");
        // So are other key types.
        let dictionary: arrow_array::DictionaryArray<arrow_array::types::Int16Type> =
            vec!["a", "b", "a"].into_iter().collect();
        let schema = Arc::new(Schema::new(vec![Field::new(
            "status",
            dictionary.data_type().clone(),
            false,
        )]));
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(dictionary)]).unwrap();
        let bytes = write_ipc_stream(&[batch], &schema).unwrap();
        assert!(read_ipc_stream(&bytes).is_ok());
        let error = ipc::read_tables(&bytes).unwrap_err();
        assert!(error.to_string().contains("32-bit signed keys"), "{error}");
    }

    #[test]
    fn a_cells_table_with_plain_text_columns_still_reads() {
        // Kept snapshots in a cache written before the text columns were dictionary-encoded hold plain UTF-8.
        use arrow_array::cast::AsArray;
        let mut cell = CellSummary::empty(
            "r/s/p/b/m/w/n=2/rep=0".parse().unwrap(),
            CellStatus::Partial,
        );
        cell.source_run_id = Some("r0".into());
        let cells = vec![
            cell,
            CellSummary::empty("r/s/p/c/m/w/n=1/rep=0".parse().unwrap(), CellStatus::NotRun),
        ];
        let batch = cells_to_batch(&cells).unwrap();
        let fields: Vec<Field> = batch
            .schema_ref()
            .fields()
            .iter()
            .map(|field| match field.data_type() {
                DataType::Dictionary(..) => field.as_ref().clone().with_data_type(DataType::Utf8),
                _ => field.as_ref().clone(),
            })
            .collect();
        let columns: Vec<ArrayRef> = batch
            .columns()
            .iter()
            .map(|column| match column.data_type() {
                DataType::Dictionary(..) => {
                    let texts = column.as_dictionary::<Int32Type>();
                    let texts = texts.downcast_dict::<arrow_array::StringArray>().unwrap();
                    Arc::new(texts.into_iter().collect::<arrow_array::StringArray>()) as ArrayRef
                }
                _ => column.clone(),
            })
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let plain = RecordBatch::try_new(schema.clone(), columns).unwrap();
        let bytes = write_ipc_stream(&[plain], &schema).unwrap();
        assert_eq!(cells_from_ipc(&bytes).unwrap(), cells);
    }

    #[test]
    fn the_lean_reader_refuses_a_key_outside_its_dictionary() {
        use arrow_ipc::writer::DictionaryHandling;
        let mut bytes = dictionary_stream(&[vec!["a", "b", "b"]], DictionaryHandling::Resend);
        // The record batch's keys are the last 0, 1, 1 in the stream; the third becomes 7.
        let keys: Vec<u8> = [0i32, 1, 1]
            .iter()
            .flat_map(|key| key.to_le_bytes())
            .collect();
        let at = bytes
            .windows(keys.len())
            .rposition(|window| window == keys.as_slice())
            .unwrap();
        bytes[at + 8] = 7;
        let error = ipc::read_tables(&bytes).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("`status`: a key lies outside its dictionary"),
            "{error}"
        );
    }

    #[test]
    fn the_lean_reader_refuses_what_it_does_not_read_and_streams_cut_short() {
        let cell = CellSummary::empty("r/s/p/b/m/w/n=1/rep=0".parse().unwrap(), CellStatus::NotRun);
        let batch = cells_to_batch(&[cell]).unwrap();
        let bytes = write_ipc_stream(&[batch], &cells_schema()).unwrap();
        for cut in [40, bytes.len() / 2, bytes.len() - 9] {
            let error = ipc::read_tables(&bytes[..cut]).unwrap_err();
            assert!(error.to_string().contains("ends inside"), "{cut}: {error}");
        }
        let signed: arrow_array::Int32Array = vec![1, -2].into();
        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int32, false)]));
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(signed)]).unwrap();
        let bytes = write_ipc_stream(&[batch], &schema).unwrap();
        let error = ipc::read_tables(&bytes).unwrap_err();
        assert!(error.to_string().contains("column `n`"), "{error}");
    }

    #[test]
    fn the_export_contract_columns_come_first_and_in_order() {
        let names = cell_column_names();
        let contract = "run_id, suite, phase, backend, model, workload, n, rep, status, refilled, fallback, excluded, \
             expected_rows, rows, ok_rows, failed_rows, skip_rows, mean_wall_ms, p50_wall_ms, p95_wall_ms, \
             p99_wall_ms, p50_ttft_ms, p95_ttft_ms, mean_prompt_tokens, mean_completion_tokens, aggregate_tps, \
             efficiency, p95_multiplier";
        let contract: Vec<&str> = contract.split(", ").collect();
        assert_eq!(&names[..contract.len()], contract.as_slice());
    }

    #[test]
    fn csv_text_that_a_spreadsheet_would_run_is_neutralised_and_numbers_are_not() {
        let mut cell = CellSummary::empty(
            CellKey {
                run_id: "=HYPERLINK(\"http://x\",\"y\")".into(),
                suite: "+s".into(),
                phase: "-p".into(),
                backend: "@b".into(),
                model: "\tm".into(),
                workload: "w-1".into(),
                config: Default::default(),
                load: crate::Load::Concurrency(2),
                rep: 0,
            },
            CellStatus::Clean,
        );
        cell.stats.mean_wall_ms = Some(-1.5);
        let csv = cells_to_csv(&[cell]);
        let row = csv.lines().nth(1).expect("a row");
        assert!(
            row.starts_with(
                "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",'+s,'-p,'@b,'\tm,w-1,2,0,clean,"
            ),
            "{row}"
        );
        assert!(row.contains(",-1.5,"), "{row}");
        assert_eq!(neutralised("plain"), "plain");
        // A number is read as one: negative, with an exponent, infinite, signed positive.
        for number in ["-0.0123", "-1.5e-3", "-inf", "+2", "-7"] {
            assert_eq!(neutralised(number), number);
        }
        // Anything else that starts like a formula is guarded, however number-like its start.
        for (text, guarded) in [
            ("-cmd", "'-cmd"),
            ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
            ("-1+1", "'-1+1"),
            ("=1", "'=1"),
            ("-", "'-"),
            ("- 1", "'- 1"),
            ("+1 ", "'+1 "),
            ("-2,5", "'-2,5"),
        ] {
            assert_eq!(neutralised(text), guarded, "{text}");
        }
    }

    #[test]
    fn csv_has_one_line_per_cell_and_quotes_when_needed() {
        let mut cell = CellSummary::empty(
            CellKey {
                run_id: "r,1".into(),
                suite: "s".into(),
                phase: "p".into(),
                backend: "b".into(),
                model: "m".into(),
                workload: "w".into(),
                config: Default::default(),
                load: crate::Load::Concurrency(2),
                rep: 0,
            },
            CellStatus::Skipped,
        );
        cell.skip_rows = 1;
        cell.expected_rows = Some(24);
        let csv = cells_to_csv(&[cell]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].split(',').count(), cell_column_names().len());
        // Every statistic empty: one comma per statistic column after `skip_rows`.
        let empty_stats = ",".repeat(Stat::ALL.len() + 1);
        assert!(
            lines[1].starts_with(&format!(
                "\"r,1\",s,p,b,m,w,2,0,skipped,false,false,,24,0,0,0,1{empty_stats}unknown,,false,"
            )),
            "{}",
            lines[1]
        );
    }

    #[test]
    fn cells_survive_an_ipc_round_trip() {
        let key: CellKey =
            "20260531_120428_552237/local_core/ttft/pytorch_direct/llama3.2-3b/balanced_2k/n=16/rep=0"
                .parse()
                .unwrap();
        let mut partial = CellSummary::empty(key, CellStatus::Partial);
        partial.expected_rows = Some(192);
        partial.expected_source = ExpectedSource::Plan;
        partial.rows = 37;
        partial.ok_rows = 37;
        partial.stats = CellStats {
            ok_rows: 37,
            p95_wall_ms: Some(1234.5),
            aggregate_tps: Some(0.5),
            p99_tpot_ms: Some(21.25),
            p50_interactivity_tps: Some(47.0),
            ..CellStats::default()
        };
        partial.efficiency = Some(0.001);
        partial.excluded = vec!["a".into(), "b".into()];
        partial.exclusion_scope = Some(ExclusionScope::All);
        let mut refilled = partial.clone();
        refilled.refilled = true;
        refilled.source_run_id = Some("20260613_055519_963364".into());
        refilled.excluded.clear();
        refilled.exclusion_scope = None;
        let cells = vec![partial, refilled];
        let batch = cells_to_batch(&cells).unwrap();
        let bytes = write_ipc_stream(&[batch.clone(), batch], &cells_schema()).unwrap();
        let read = cells_from_ipc(&bytes).unwrap();
        assert_eq!(read, [cells.clone(), cells].concat());
    }

    #[test]
    fn a_configuration_is_a_last_column_only_when_some_cell_states_one() {
        let plain: CellKey = "r/s/p/b/m/w/n=1/rep=0".parse().unwrap();
        let configured: CellKey = "r/s/p/b/m/w/model_path=%2Fa%2Cb,tp=4/n=1/rep=0"
            .parse()
            .unwrap();
        assert_eq!(configured.config.get("model_path"), Some("/a,b"));
        let cells = vec![
            CellSummary::empty(plain.clone(), CellStatus::Clean),
            CellSummary::empty(configured, CellStatus::Clean),
        ];
        assert!(
            !cells_to_csv(&cells[..1])
                .lines()
                .next()
                .unwrap()
                .contains("config")
        );
        let csv = cells_to_csv(&cells);
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0].ends_with(",config"), "{}", lines[0]);
        assert!(lines[1].ends_with(','), "{}", lines[1]);
        // The text form's commas are quoted as any CSV field's.
        assert!(
            lines[2].ends_with(",\"model_path=%2Fa%2Cb,tp=4\""),
            "{}",
            lines[2]
        );
        let batch = cells_to_batch(&cells).unwrap();
        assert_eq!(batch.schema().fields().last().unwrap().name(), "config");
        let bytes = write_ipc_stream(std::slice::from_ref(&batch), &batch.schema()).unwrap();
        assert_eq!(cells_from_ipc(&bytes).unwrap(), cells);
    }
}
