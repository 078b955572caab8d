//! A run's files as parsed: each cell's row census, request statistics and where its rows are, the same for a
//! TR164 metrics file and another tool's records.

use cellscope_model::key::CellCoordinates;
use cellscope_model::origin::{CellOrigin, FigureOrigin};
use cellscope_model::stats::CellStats;
use std::collections::BTreeMap;

/// Every [`FileRejected::kind`]: a kind read back from the cache must be one of them.
pub(crate) const REJECTION_KINDS: [&str; 4] = [
    "empty_file",
    "unreadable_header",
    "missing_column",
    "bare_cr_line_endings",
];

/// What one file says about one cell.
#[derive(Clone, Debug, Default)]
pub(crate) struct ParsedCell {
    pub rows: u32,
    pub ok_rows: u32,
    pub failed_rows: u32,
    pub skip_rows: u32,
    /// Rows of this cell left out as malformed (a bad number, a run id that is not UTF-8): not counted in `rows`.
    /// Such a cell does not vote on the rows a run's cells are expected to have.
    pub malformed_rows: u32,
    /// Non-ok status value → row count.
    pub failed_by_status: BTreeMap<String, u32>,
    /// `run_id` column value → its rows (skip sentinels included), for the refill lineage.
    pub row_run_ids: BTreeMap<String, IdCount>,
    /// 1-based line of the cell's first row; computed only for cells a warning names (0 otherwise).
    pub first_line: u64,
    /// 1-based line of the row at `row_offsets[0]` (0 for another tool's file), so its rows can be read back
    /// with their line numbers without counting the lines before them.
    pub first_row_line: u64,
    /// Byte offsets of the cell's rows (as the csv reader reports them), for reading them back on demand; for
    /// another tool's file, the requests' positions in their record.
    pub row_offsets: Vec<u64>,
    pub stats: CellStats,
    /// For a cell of another tool's file: its file and record, expected rows, reported and inferred marks.
    pub external: Option<Box<ExternalCell>>,
}

/// The rows of one cell that carry one `run_id`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct IdCount {
    pub rows: u32,
    /// Byte offset of the first of them (as the csv reader reports it).
    pub first_offset: u64,
}

/// The parse of one file.
#[derive(Clone, Debug, Default)]
pub(crate) struct ParsedMetrics {
    /// Cells in the order they first appear in the file.
    pub cells: Vec<(CellCoordinates, ParsedCell)>,
    /// Data records read (excluding the header), whether or not they were usable.
    pub records: u64,
    /// Records left out because they were malformed.
    pub malformed_rows: u64,
    pub header: Vec<String>,
}

/// Why a file could not be indexed at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileRejected {
    /// One of [`REJECTION_KINDS`].
    pub kind: &'static str,
    pub line: Option<u64>,
    pub message: String,
}

/// What a cell of another tool's file carries beyond the TR164 census.
#[derive(Clone, Debug)]
pub(crate) struct ExternalCell {
    pub format: &'static str,
    /// The file, relative to the data root.
    pub file: String,
    /// Its length when indexed: reading rows back from a file of another length is refused.
    pub file_bytes: u64,
    pub record: u32,
    pub expected_rows: Option<u32>,
    pub figures: FigureOrigin,
    pub origin: CellOrigin,
}
