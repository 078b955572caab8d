//! What a run's side files say it meant to do: its manifest (statuses, expected rows, fallbacks and each cell's
//! history) and its execution plan (the cells it selected).

use cellscope_model::api::HistoryEvent;
use cellscope_model::key::CellCoordinates;
use std::collections::BTreeMap;

/// What the indexer keeps of a manifest cell.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ManifestCell {
    pub status: Option<String>,
    pub expected_rows: Option<u32>,
    pub rows_written: Option<u32>,
    pub fallback: bool,
    pub history: Vec<HistoryEvent>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Manifest {
    pub status: Option<String>,
    pub environment: Option<serde_json::Value>,
    /// `default_max_model_len`, else `max_model_len`.
    pub max_model_len: Option<serde_json::Value>,
    /// `started_at` as written; only the read uses it, so the cache keeps the start it gave rather than this.
    pub started_at: Option<serde_json::Value>,
    pub cells: BTreeMap<CellCoordinates, ManifestCell>,
}

/// Planned (selected) cells with their expected row counts, where known.
#[derive(Clone, Debug, Default)]
pub(crate) struct Plan {
    pub cells: BTreeMap<CellCoordinates, Option<u32>>,
    /// Entries present in the plan but not selected for this run (e.g. other backends of a 1,800-cell plan).
    pub unselected: usize,
}
