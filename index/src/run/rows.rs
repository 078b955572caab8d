//! Where a cell's rows are, so `/api/requests` can read exactly them back without re-parsing whole files, and
//! what can go wrong reading them.

/// Where a cell's rows are: the file and the byte offsets of its rows, or the record of another tool's file that
/// holds its requests.
#[derive(Clone, Debug, Default)]
pub struct CellRows {
    /// The format that reads them back.
    pub format: &'static str,
    /// The file, relative to the data root.
    pub file: String,
    /// The file length when indexed; a different length means the file changed since.
    pub file_bytes: u64,
    pub offsets: Vec<u64>,
    /// The 1-based line of the row at `offsets[0]`, when the index counted it: the rows are then read from
    /// their own stretch of the file, not the whole file.
    pub first_line: Option<u64>,
    /// The backup file (relative to the data root), its length when indexed and the offsets of the rows a refill
    /// replaced, for refilled cells.
    pub backup: Option<(String, u64, Vec<u64>)>,
    /// For a cell of another tool's file: the format, file and record that hold its requests.
    pub external: Option<ExternalRows>,
}

/// Where the rows of a cell of another tool's file are.
#[derive(Clone, Debug, Default)]
pub struct ExternalRows {
    pub format: &'static str,
    pub run_id: String,
    /// Relative to the data root.
    pub file: String,
    pub record: u32,
}

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
