//! Request rows of one cell (the inspector's histograms and lineage), and their Arrow schema.

use crate::schema::SchemaError;
use crate::schema::{text_array, text_type};
use arrow_array::builder::{Float64Builder, UInt32Builder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};

/// The query of `GET /api/requests` for one cell, as the app asks it and an offline copy stores it: the cell's
/// key in its text form, so that no two cells share it.
pub fn requests_query(key: &crate::CellKey) -> String {
    format!("cell={}", crate::query::encode(&key.to_string(), true))
}

/// Whether a row stands in the data now or was replaced by a refill (it comes from the backup).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lineage {
    /// The row stands in the data.
    Current,
    /// A refill replaced the row; it comes from the backup.
    Replaced,
}

impl Lineage {
    /// The name the `lineage` column holds.
    pub fn as_str(self) -> &'static str {
        match self {
            Lineage::Current => "current",
            Lineage::Replaced => "replaced",
        }
    }

    /// The lineage a name names.
    pub fn parse(text: &str) -> Option<Lineage> {
        match text {
            "current" => Some(Lineage::Current),
            "replaced" => Some(Lineage::Replaced),
            _ => None,
        }
    }
}

/// How a row was classified: an `ok` request, a non-ok request, or a skip sentinel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowClass {
    /// A request with an ok status.
    Ok,
    /// A request with a failing status.
    Failed,
    /// A skip sentinel: a cell that was not run, not a request.
    Skip,
}

impl RowClass {
    /// The row-classification rule, the one place it is written: a row whose `wall_ms`, `agent_id`,
    /// `request_id` and `request_sequence` are all zero is a skip sentinel (the V1 skip-row convention,
    /// docs/definitions.md#rows), whatever its status; otherwise status `ok` is an ok request and anything else a
    /// failed one. The three id fields are read only when `wall_ms` is zero, which keeps the indexer's hot loop
    /// cheap.
    pub fn classify(
        status: &[u8],
        wall_ms: Option<f64>,
        ids: impl FnOnce() -> [Option<f64>; 3],
    ) -> RowClass {
        if wall_ms == Some(0.0) && ids().iter().all(|id| *id == Some(0.0)) {
            RowClass::Skip
        } else if status == b"ok" {
            RowClass::Ok
        } else {
            RowClass::Failed
        }
    }

    /// The name the `class` column holds.
    pub fn as_str(self) -> &'static str {
        match self {
            RowClass::Ok => "ok",
            RowClass::Failed => "failed",
            RowClass::Skip => "skip",
        }
    }

    /// The class a name names.
    pub fn parse(text: &str) -> Option<RowClass> {
        match text {
            "ok" => Some(RowClass::Ok),
            "failed" => Some(RowClass::Failed),
            "skip" => Some(RowClass::Skip),
            _ => None,
        }
    }
}

/// One request row as the API serves it. Numbers a row does not carry (an empty `ttft_ms`, an unparsable
/// field of a failed row) are `None`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestRow {
    /// Whether the row stands in the data or a refill replaced it.
    pub lineage: Lineage,
    /// Ok, failed or skip sentinel.
    pub class: RowClass,
    /// The `run_id` column of the row (a refill run's id for spliced rows).
    pub source_run_id: String,
    /// 1-based line in the file the row was read from (the master, or the backup for replaced rows).
    pub line: u64,
    /// The agent that sent the request.
    pub agent_id: Option<u32>,
    /// The request's id.
    pub request_id: Option<u32>,
    /// Its position in its agent's sequence.
    pub request_sequence: Option<u32>,
    /// Wall latency.
    pub wall_ms: Option<f64>,
    /// Time to first token.
    pub ttft_ms: Option<f64>,
    /// Prompt tokens.
    pub prompt_tokens: Option<f64>,
    /// Completion tokens.
    pub completion_tokens: Option<f64>,
    /// When it was submitted, in seconds.
    pub submit_time_s: Option<f64>,
    /// When it completed, in seconds.
    pub complete_time_s: Option<f64>,
    /// The status as written (`ok`, `http_400`, …).
    pub status: String,
    /// The error message, when the row has one.
    pub error: Option<String>,
}

/// The Arrow schema of the request rows `/api/requests` serves.
pub fn requests_schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let float = |name: &str| Field::new(name, DataType::Float64, true);
            let id = |name: &str| Field::new(name, DataType::UInt32, true);
            Arc::new(Schema::new(vec![
                Field::new("lineage", text_type(), false),
                Field::new("class", text_type(), false),
                Field::new("source_run_id", text_type(), false),
                Field::new("line", DataType::UInt64, false),
                id("agent_id"),
                id("request_id"),
                id("request_sequence"),
                float("wall_ms"),
                float("ttft_ms"),
                float("prompt_tokens"),
                float("completion_tokens"),
                float("submit_time_s"),
                float("complete_time_s"),
                Field::new("status", text_type(), false),
                Field::new("error", text_type(), true),
            ]))
        })
        .clone()
}

/// A float column: its name and how to read it from a row.
type FloatColumn = (&'static str, fn(&RequestRow) -> Option<f64>);

const FLOATS: [FloatColumn; 6] = [
    ("wall_ms", |row| row.wall_ms),
    ("ttft_ms", |row| row.ttft_ms),
    ("prompt_tokens", |row| row.prompt_tokens),
    ("completion_tokens", |row| row.completion_tokens),
    ("submit_time_s", |row| row.submit_time_s),
    ("complete_time_s", |row| row.complete_time_s),
];

/// The request rows as one Arrow record batch of [`requests_schema`].
pub fn requests_to_batch(rows: &[RequestRow]) -> Result<RecordBatch, ArrowError> {
    let texts = |value: fn(&RequestRow) -> Option<&str>| text_array(rows.iter().map(value));
    let ids = |value: fn(&RequestRow) -> Option<u32>| -> ArrayRef {
        let mut builder = UInt32Builder::with_capacity(rows.len());
        for row in rows {
            builder.append_option(value(row));
        }
        Arc::new(builder.finish())
    };
    let mut lines = UInt64Builder::with_capacity(rows.len());
    for row in rows {
        lines.append_value(row.line);
    }
    let mut columns: Vec<ArrayRef> = vec![
        texts(|row| Some(row.lineage.as_str())),
        texts(|row| Some(row.class.as_str())),
        texts(|row| Some(&row.source_run_id)),
        Arc::new(lines.finish()),
        ids(|row| row.agent_id),
        ids(|row| row.request_id),
        ids(|row| row.request_sequence),
    ];
    for (_, value) in FLOATS {
        let mut builder = Float64Builder::with_capacity(rows.len());
        for row in rows {
            builder.append_option(value(row));
        }
        columns.push(Arc::new(builder.finish()));
    }
    columns.push(texts(|row| Some(&row.status)));
    columns.push(texts(|row| row.error.as_deref()));
    RecordBatch::try_new(requests_schema(), columns)
}

/// Reads request rows sent as an Arrow IPC stream (the browser's inspector), with the lean reader of
/// [`crate::schema::ipc`].
pub fn requests_from_ipc(bytes: &[u8]) -> Result<Vec<RequestRow>, SchemaError> {
    let mut rows = Vec::new();
    for table in crate::schema::ipc::read_tables(bytes)? {
        rows.extend(requests_from_table(&table)?);
    }
    Ok(rows)
}

fn requests_from_table(batch: &crate::schema::ipc::Table) -> Result<Vec<RequestRow>, SchemaError> {
    let text = |name: &'static str| batch.text(name).ok_or(SchemaError::Column(name));
    let id = |name: &'static str| batch.uint32(name).ok_or(SchemaError::Column(name));
    let float = |name: &'static str| batch.float64(name).ok_or(SchemaError::Column(name));
    let (lineage, class, source, status, error) = (
        text("lineage")?,
        text("class")?,
        text("source_run_id")?,
        text("status")?,
        text("error")?,
    );
    let line = batch.uint64("line").ok_or(SchemaError::Column("line"))?;
    let (agent, request, sequence) = (id("agent_id")?, id("request_id")?, id("request_sequence")?);
    let floats: Vec<_> = FLOATS
        .iter()
        .map(|(name, _)| float(name))
        .collect::<Result<_, _>>()?;
    (0..batch.rows)
        .map(|row| {
            let optional_id = |column: &crate::schema::ipc::ValueColumn<u32>| column.get(row);
            let f = |index: usize| floats[index].get(row);
            Ok(RequestRow {
                lineage: Lineage::parse(lineage.value(row)).ok_or_else(|| SchemaError::Value {
                    row,
                    column: "lineage",
                    value: lineage.value(row).to_string(),
                })?,
                class: RowClass::parse(class.value(row)).ok_or_else(|| SchemaError::Value {
                    row,
                    column: "class",
                    value: class.value(row).to_string(),
                })?,
                source_run_id: source.value(row).to_string(),
                line: line.value(row),
                agent_id: optional_id(agent),
                request_id: optional_id(request),
                request_sequence: optional_id(sequence),
                wall_ms: f(0),
                ttft_ms: f(1),
                prompt_tokens: f(2),
                completion_tokens: f(3),
                submit_time_s: f(4),
                complete_time_s: f(5),
                status: status.value(row).to_string(),
                error: (!error.is_null(row)).then(|| error.value(row).to_string()),
            })
        })
        .collect()
}

#[cfg(test)]
mod classify_tests {
    use super::RowClass;

    #[test]
    fn sentinels_need_all_four_zeros_and_win_over_the_status() {
        let zeros = || [Some(0.0); 3];
        assert_eq!(RowClass::classify(b"ok", Some(0.0), zeros), RowClass::Skip);
        assert_eq!(
            RowClass::classify(b"http_400", Some(0.0), zeros),
            RowClass::Skip
        );
        assert_eq!(
            RowClass::classify(b"ok", Some(0.0), || [Some(0.0), Some(1.0), Some(0.0)]),
            RowClass::Ok
        );
        assert_eq!(
            RowClass::classify(b"ok", Some(12.5), || unreachable!()),
            RowClass::Ok
        );
        assert_eq!(
            RowClass::classify(b"timeout", None, || unreachable!()),
            RowClass::Failed
        );
        assert_eq!(
            RowClass::classify(b"ok", None, || unreachable!()),
            RowClass::Ok
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_rows_survive_a_round_trip() {
        let rows = vec![
            RequestRow {
                lineage: Lineage::Current,
                class: RowClass::Ok,
                source_run_id: "20260613_055519_963364".into(),
                line: 12,
                agent_id: Some(1),
                request_id: Some(1),
                request_sequence: Some(1),
                wall_ms: Some(900.5),
                ttft_ms: Some(300.0),
                prompt_tokens: Some(9465.0),
                completion_tokens: Some(64.0),
                submit_time_s: Some(1.0),
                complete_time_s: Some(1.9005),
                status: "ok".into(),
                error: None,
            },
            RequestRow {
                lineage: Lineage::Replaced,
                class: RowClass::Failed,
                source_run_id: "20260612_212816_266127".into(),
                line: 12,
                agent_id: Some(1),
                request_id: Some(1),
                request_sequence: Some(1),
                wall_ms: Some(4.2),
                ttft_ms: None,
                prompt_tokens: Some(9800.0),
                completion_tokens: Some(0.0),
                submit_time_s: None,
                complete_time_s: None,
                status: "http_400".into(),
                error: Some("context length".into()),
            },
        ];
        let batch = requests_to_batch(&rows).unwrap();
        let bytes = crate::schema::write_ipc_stream(&[batch], &requests_schema()).unwrap();
        assert_eq!(requests_from_ipc(&bytes).unwrap(), rows);
    }
}
