//! Reads the request rows of one cell back from disk, using the byte offsets recorded while indexing, plus
//! the rows a refill replaced (from the backup) so both sides of a splice can be shown.

use super::CellRows;
use super::metrics_csv::{parse_count, parse_number, record_start};
use cellscope_model::requests::{Lineage, RequestRow, RowClass};
use std::collections::HashMap;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum RowsError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{0} changed since it was indexed; the index is being rebuilt")]
    Changed(String),
    #[error("{path}: {message}")]
    Malformed { path: String, message: String },
}

/// All rows of a cell: the current ones (master), then the replaced ones (backup), each in file order.
pub fn read(cell: &CellRows) -> Result<Vec<RequestRow>, RowsError> {
    let mut rows = read_file(&cell.file, cell.file_bytes, &cell.offsets, Lineage::Current)?;
    if let Some((path, bytes, offsets)) = &cell.backup {
        rows.extend(read_file(path, *bytes, offsets, Lineage::Replaced)?);
    }
    Ok(rows)
}

fn read_file(
    path: &Path,
    expected_bytes: u64,
    offsets: &[u64],
    lineage: Lineage,
) -> Result<Vec<RequestRow>, RowsError> {
    let display = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| RowsError::Read {
        path: display.clone(),
        source,
    })?;
    if bytes.len() as u64 != expected_bytes {
        return Err(RowsError::Changed(display));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    let malformed = |message: String| RowsError::Malformed {
        path: display.clone(),
        message,
    };
    let mut header_reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut record = csv::ByteRecord::new();
    if !header_reader
        .read_byte_record(&mut record)
        .map_err(|error| malformed(error.to_string()))?
    {
        return Err(malformed("no header".into()));
    }
    let columns: HashMap<String, usize> = record
        .iter()
        .enumerate()
        .map(|(position, name)| (String::from_utf8_lossy(name).trim().to_string(), position))
        .collect();
    let column = |name: &str| columns.get(name).copied();

    let mut sorted: Vec<u64> = offsets.to_vec();
    sorted.sort_unstable();
    let mut rows = Vec::with_capacity(sorted.len());
    // Lines are counted incrementally between consecutive offsets, so reading a cell costs one pass at most.
    let mut line = 1u64;
    let mut counted_to = 0usize;
    for offset in sorted {
        let start = record_start(bytes, offset);
        line += bytes[counted_to.min(start)..start]
            .iter()
            .filter(|byte| **byte == b'\n')
            .count() as u64;
        counted_to = start;
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(&bytes[start..]);
        if !reader
            .read_byte_record(&mut record)
            .map_err(|error| malformed(error.to_string()))?
        {
            return Err(malformed(format!("no row at byte {offset}")));
        }
        let field = |name: &str| column(name).and_then(|position| record.get(position));
        let text =
            |name: &str| field(name).map(|value| String::from_utf8_lossy(value).into_owned());
        let number = |name: &str| field(name).and_then(parse_number);
        let count = |name: &str| field(name).and_then(parse_count);
        let status = text("status").unwrap_or_default();
        let class = RowClass::classify(status.as_bytes(), number("wall_ms"), || {
            ["agent_id", "request_id", "request_sequence"].map(number)
        });
        rows.push(RequestRow {
            lineage,
            class,
            source_run_id: text("run_id").unwrap_or_default(),
            line,
            agent_id: count("agent_id"),
            request_id: count("request_id"),
            request_sequence: count("request_sequence"),
            wall_ms: number("wall_ms"),
            ttft_ms: number("ttft_ms"),
            prompt_tokens: number("prompt_tokens"),
            completion_tokens: number("completion_tokens"),
            submit_time_s: number("submit_time_s"),
            complete_time_s: number("complete_time_s"),
            status,
            error: text("error").filter(|message| !message.is_empty()),
        });
    }
    Ok(rows)
}
