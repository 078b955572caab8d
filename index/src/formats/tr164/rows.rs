//! Reads the request rows of one cell back from its file through [`Storage`], using the byte offsets recorded
//! while indexing, plus the rows a refill replaced (from the backup) so both sides of a splice can be shown.

use super::metrics_csv::{parse_count, parse_number, record_start};
use crate::run::bytes::{decompressed, is_compressed, without_boms};
use crate::run::rows::{CellRows, RowsError};
use crate::storage::{self, Storage};
use cellscope_model::requests::{Lineage, RequestRow, RowClass};
use std::collections::HashMap;

/// All rows of a cell: the current ones (master), then the replaced ones (backup), each in file order.
pub(crate) fn read(storage: &dyn Storage, cell: &CellRows) -> Result<Vec<RequestRow>, RowsError> {
    let mut rows = read_stretch(
        storage,
        &cell.file,
        cell.file_bytes,
        &cell.offsets,
        cell.first_line,
        Lineage::Current,
    )?;
    if let Some((path, bytes, offsets)) = &cell.backup {
        rows.extend(read_stretch(
            storage,
            path,
            *bytes,
            offsets,
            None,
            Lineage::Replaced,
        )?);
    }
    Ok(rows)
}

/// Bytes read at a time: past the start of a cell's last row to find its end (rows here are a few hundred
/// bytes), and while counting the lines before a cell whose first line the index did not count.
const CHUNK_BYTES: u64 = 64 << 10;

/// Where the stretches of one file are read from: the file itself on a local disk (positioned reads), the storage
/// by byte range, or the whole file decompressed in memory (a compressed file cannot be read from an offset, and
/// the offsets count decompressed bytes).
enum Ranges<'a> {
    Local(std::fs::File),
    Stored {
        storage: &'a dyn Storage,
        path: &'a str,
    },
    Inflated(Vec<u8>),
}

impl Ranges<'_> {
    /// `[start, end)` of the file (`end` already clamped to its length).
    fn read(&mut self, start: u64, end: u64) -> std::io::Result<Vec<u8>> {
        use std::io::{Read as _, Seek as _, SeekFrom};
        match self {
            Ranges::Local(file) => {
                let mut bytes = vec![0; end.saturating_sub(start) as usize];
                file.seek(SeekFrom::Start(start))?;
                file.read_exact(&mut bytes)?;
                Ok(bytes)
            }
            Ranges::Stored { storage, path } => storage.read_range(path, start..end),
            Ranges::Inflated(inflated) => Ok(inflated
                .get(start as usize..end as usize)
                .unwrap_or_default()
                .to_vec()),
        }
    }
}

/// The file at `path` ready for reading stretches of it, once it is checked to have the length it had when
/// indexed; `None` when the file is unchanged but no row is wanted.
fn open_ranges<'a>(
    storage: &'a dyn Storage,
    path: &'a str,
    expected_bytes: u64,
    wanted: bool,
    unreadable: impl Fn(std::io::Error) -> RowsError,
) -> Result<Option<Ranges<'a>>, RowsError> {
    use std::io::Read as _;
    let local = storage.local_file(path).transpose().map_err(&unreadable)?;
    let bytes = match &local {
        Some(file) => file.metadata().map_err(&unreadable)?.len(),
        None => storage.stat(path).map_err(&unreadable)?.bytes,
    };
    if bytes != expected_bytes {
        return Err(RowsError::Changed(storage.display(path)));
    }
    if !wanted {
        return Ok(None);
    }
    let name = storage::file_name(path);
    if !is_compressed(name) {
        return Ok(Some(match local {
            Some(file) => Ranges::Local(file),
            None => Ranges::Stored { storage, path },
        }));
    }
    let stored = match local {
        Some(mut file) => {
            let mut stored = Vec::new();
            file.read_to_end(&mut stored).map_err(&unreadable)?;
            stored
        }
        None => storage.read(path).map_err(&unreadable)?,
    };
    let inflated = decompressed(name, &stored).map_err(&unreadable)?;
    Ok(Some(Ranges::Inflated(inflated.unwrap_or(stored))))
}

/// The rows at `offsets`, reading only the header line and the stretch of the file from the first row to the
/// end of the last, so a cell of a large file costs a few kilobytes of reading instead of the whole file (64
/// requests at once each reading a 25 MB file held 1.6 GB). `first_line` is the line of the first row when the
/// index counted it; otherwise the lines before it are counted in chunks (a backup's replaced rows).
fn read_stretch(
    storage: &dyn Storage,
    path: &str,
    expected_bytes: u64,
    offsets: &[u64],
    first_line: Option<u64>,
    lineage: Lineage,
) -> Result<Vec<RequestRow>, RowsError> {
    let display = storage.display(path);
    let unreadable = |source| RowsError::Read {
        path: display.clone(),
        source,
    };
    let mut sorted = offsets.to_vec();
    sorted.sort_unstable();
    let ranges = open_ranges(
        storage,
        path,
        expected_bytes,
        !sorted.is_empty(),
        unreadable,
    )?;
    let (Some(mut ranges), Some(&first), Some(&last)) = (ranges, sorted.first(), sorted.last())
    else {
        return Ok(Vec::new());
    };
    let length = match &ranges {
        Ranges::Inflated(bytes) => bytes.len() as u64,
        _ => expected_bytes,
    };
    // Reads `[start, end)` of the file, clamped to its length.
    let mut read_range = |start: u64, end: u64| -> Result<Vec<u8>, RowsError> {
        ranges.read(start, end.min(length)).map_err(unreadable)
    };
    // Offsets count from after the UTF-8 BOMs, as the index parsed the file without them.
    let mut head = read_range(0, CHUNK_BYTES)?;
    let bom = (head.len() - without_boms(&head).len()) as u64;
    while !head.contains(&b'\n') && (head.len() as u64) < length {
        let more = read_range(head.len() as u64, head.len() as u64 + CHUNK_BYTES)?;
        head.extend(more);
    }
    let header_end = head
        .iter()
        .position(|byte| *byte == b'\n')
        .map_or(head.len(), |end| end + 1);
    let header = &head[bom as usize..header_end];
    let mut tail_end = last + bom + CHUNK_BYTES;
    let mut stretch = read_range(first + bom, tail_end)?;
    // Until the last row's record ends (or the file does), read on.
    while tail_end < length && !record_ends_in(&stretch[(last - first) as usize..]) {
        let more = read_range(tail_end, tail_end + CHUNK_BYTES)?;
        tail_end += CHUNK_BYTES;
        stretch.extend(more);
    }
    // The first row's own first byte (past a CRLF's line feed the reader may report), and its line.
    let first_row_start = record_start(&stretch, 0);
    let first_line = match first_line {
        Some(line) => line,
        None => {
            let mut line_feeds = stretch[..first_row_start]
                .iter()
                .filter(|byte| **byte == b'\n')
                .count() as u64;
            let mut position = bom;
            while position < first + bom {
                let chunk = read_range(position, (position + CHUNK_BYTES).min(first + bom))?;
                line_feeds += memchr::memchr_iter(b'\n', &chunk).count() as u64;
                position += chunk.len().max(1) as u64;
            }
            1 + line_feeds
        }
    };
    let relative: Vec<u64> = sorted.iter().map(|offset| offset - first).collect();
    rows_at(
        &display,
        header,
        &stretch,
        &relative,
        first_line,
        first_row_start,
        lineage,
    )
}

/// Whether the record at the start of `bytes` (as the index reported its offset) ends inside them: a line feed
/// ends it only outside quotes, since a quoted field may hold line breaks.
fn record_ends_in(bytes: &[u8]) -> bool {
    let start = record_start(bytes, 0);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(&bytes[start..]);
    let mut record = csv::ByteRecord::new();
    // A record cut by the end of `bytes` ends there too: only bytes read after it show that it ended.
    matches!(reader.read_byte_record(&mut record), Ok(true))
        && reader.position().byte() < (bytes.len() - start) as u64
}

/// The rows at `offsets` of `bytes`, with the columns named by the first record of `header`. Lines are counted
/// from `line_at_start`, the line of byte `counted_from` of `bytes`.
fn rows_at(
    display: &str,
    header: &[u8],
    bytes: &[u8],
    offsets: &[u64],
    line_at_start: u64,
    counted_from: usize,
    lineage: Lineage,
) -> Result<Vec<RequestRow>, RowsError> {
    let malformed = |message: String| RowsError::Malformed {
        path: display.to_string(),
        message,
    };
    let mut header_reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(header);
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
    let mut line = line_at_start;
    let mut counted_to = counted_from;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{IndexOptions, Quiet};
    use crate::storage::LocalDisk;

    const HEADER: &str = "run_id,suite,phase,backend,model,workload,n_agents,rep,agent_id,request_id,request_sequence,wall_ms,prompt_tokens,completion_tokens,submit_time_s,complete_time_s,status,error";

    fn row(n: u32, agent: u32, wall: &str, status: &str, error: &str) -> String {
        format!(
            "r1,s,scaling,b,m,w,{n},0,{agent},{agent},{agent},{wall},10,10,1.0,2.0,{status},{error}"
        )
    }

    #[test]
    fn a_row_whose_quoted_field_spans_lines_is_read_back_whole_and_later_rows_on_their_lines() {
        // The N = 1 cell's last row holds an error text of two lines (lines 3 and 4), its second line longer than
        // the stretch read past a row's start at first.
        let long = "x".repeat(CHUNK_BYTES as usize + 1000);
        let error = format!("upstream timeout\n{long}");
        let text = [
            HEADER.to_string(),
            row(1, 1, "100.0", "ok", ""),
            row(1, 2, "30000.0", "timeout", &format!("\"{error}\"")),
            row(2, 1, "200.0", "ok", ""),
        ]
        .join("\n")
            + "\n";
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("r1")).unwrap();
        std::fs::write(root.path().join("r1/metrics.csv"), &text).unwrap();
        let index = crate::build(root.path(), &IndexOptions::default(), &Quiet).unwrap();
        assert!(index.warnings.is_empty(), "{:?}", index.warnings);
        // Read for its cells only, the file is mapped rather than read whole: the same cells, rows and lines.
        let cells_only = crate::build(root.path(), &IndexOptions::CELLS, &Quiet).unwrap();
        assert!(cells_only.warnings.is_empty(), "{:?}", cells_only.warnings);
        assert_eq!(cells_only.cells, index.cells);
        let located = |index: &crate::Index| -> Vec<(Vec<u64>, Option<u64>)> {
            index
                .rows
                .values()
                .map(|rows| (rows.offsets.clone(), rows.first_line))
                .collect()
        };
        assert_eq!(located(&cells_only), located(&index));
        let disk = LocalDisk::new(root.path());
        let mut cells = index.rows.values();
        let (n1, n2) = (cells.next().unwrap(), cells.next().unwrap());
        for first_line in [n1.first_line, None] {
            let rows = read(
                &disk,
                &CellRows {
                    first_line,
                    ..n1.clone()
                },
            )
            .unwrap();
            let read_back: Vec<(u64, Option<f64>, &str, Option<&str>)> = rows
                .iter()
                .map(|row| {
                    (
                        row.line,
                        row.wall_ms,
                        row.status.as_str(),
                        row.error.as_deref(),
                    )
                })
                .collect();
            assert_eq!(
                read_back,
                vec![
                    (2, Some(100.0), "ok", None),
                    (3, Some(30000.0), "timeout", Some(error.as_str()))
                ]
            );
        }
        let rows = read(&disk, n2).unwrap();
        assert_eq!(
            rows.iter()
                .map(|row| (row.line, row.wall_ms))
                .collect::<Vec<_>>(),
            vec![(5, Some(200.0))]
        );
    }
}
