//! Writes the cells table in the three export formats ([`Format`]), all from one Arrow record batch so the
//! columns agree.

use arrow_array::RecordBatch;
use cellscope_model::CellSummary;
pub use cellscope_model::query::Format;
use cellscope_model::schema::{cells_to_batch, cells_to_csv, write_ipc_stream};

/// An export that could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Arrow could not build or write the table.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
}

/// Encodes `cells` in `format`. CSV has a header line and leaves undefined numbers empty; JSON is an array of
/// objects with explicit `null`s; Arrow is an IPC stream.
pub fn encode(cells: &[CellSummary], format: Format) -> Result<Vec<u8>, ExportError> {
    let batch = cells_to_batch(cells)?;
    match format {
        Format::Arrow => {
            let schema = batch.schema();
            Ok(write_ipc_stream(&[batch], &schema)?)
        }
        // One CSV writer for the CLI, the API and the browser's export.
        Format::Csv => Ok(cells_to_csv(cells).into_bytes()),
        Format::Json => encode_batch(&batch, Format::Json),
    }
}

/// Encodes any record batch in `format` (the Arrow stream uses the batch's own schema).
pub fn encode_batch(batch: &RecordBatch, format: Format) -> Result<Vec<u8>, ExportError> {
    let mut bytes = Vec::new();
    match format {
        Format::Csv => {
            let mut writer = arrow_csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut bytes);
            writer.write(batch)?;
        }
        Format::Json => {
            let mut writer = arrow_json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, arrow_json::writer::JsonArray>(&mut bytes);
            writer.write(batch)?;
            writer.finish()?;
            if bytes.is_empty() {
                bytes.extend_from_slice(b"[]");
            }
            bytes.push(b'\n');
        }
        Format::Arrow => bytes = write_ipc_stream(std::slice::from_ref(batch), &batch.schema())?,
    }
    Ok(bytes)
}
