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
            writer.write(&neutralised_text(batch)?)?;
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

/// `batch` with every text value neutralised against spreadsheet formulas (`schema::neutralised`), for CSV.
fn neutralised_text(batch: &RecordBatch) -> Result<RecordBatch, ExportError> {
    let columns = batch
        .columns()
        .iter()
        .map(
            |column| match column.as_any().downcast_ref::<arrow_array::StringArray>() {
                Some(texts) => std::sync::Arc::new(
                    texts
                        .iter()
                        .map(|text| {
                            text.map(|text| cellscope_model::schema::neutralised(text).into_owned())
                        })
                        .collect::<arrow_array::StringArray>(),
                ) as arrow_array::ArrayRef,
                None => column.clone(),
            },
        )
        .collect();
    Ok(RecordBatch::try_new(batch.schema(), columns)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Float64Array, StringArray};
    use std::sync::Arc;

    #[test]
    fn csv_text_is_neutralised_and_numbers_are_left_as_they_are() {
        let batch = RecordBatch::try_from_iter([
            (
                "error",
                Arc::new(StringArray::from(vec![
                    Some("=1+2"),
                    Some("ok"),
                    None,
                    Some("-0.25"),
                    Some("-cmd"),
                ])) as ArrayRef,
            ),
            (
                "wall_ms",
                Arc::new(Float64Array::from(vec![-1.5, 2.0, 3.0, 4.0, 5.0])) as ArrayRef,
            ),
        ])
        .unwrap();
        let csv = String::from_utf8(encode_batch(&batch, Format::Csv).unwrap()).unwrap();
        // A text that is a number stays one; a text that would run as a formula is guarded.
        assert_eq!(
            csv,
            "error,wall_ms\n'=1+2,-1.5\nok,2.0\n,3.0\n-0.25,4.0\n'-cmd,5.0\n"
        );
    }
}
