//! The JSON wire contract: the bodies of `/api/index`, `/api/provenance` and `/api/compare`, the error body, and
//! the run facts and warnings they carry. The server serialises exactly these types and the app deserialises
//! them, so a field renamed on one side is a compile error on the other, not a blank cell in the browser.

pub use crate::facts::{
    BackupComparison, BackupFacts, Census, EnvironmentField, FileDigest, HistoryEvent, LedgerEntry,
    NOT_RECOGNISED, RefillFacts, RunFacts, RunRole, RunStart, RunStartSource, Severity, Warning,
};
use crate::key::{CellKey, Dimension, Value};
use crate::status::CellStatus;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Per-cell provenance beyond the summary row: the manifest's status and history, or where another tool's cell
/// came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CellProvenance {
    /// The manifest's status of the cell, when the run has a manifest.
    pub manifest_status: Option<String>,
    /// The manifest's events of the cell, in order.
    pub history: Vec<HistoryEvent>,
    /// For a cell of another tool's file: its file and record, inferred key parts, reported figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<crate::origin::CellOrigin>,
    /// The statuses of the cell's non-ok rows and how many of each (`http_400` → 105).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failed_by_status: BTreeMap<String, u32>,
}

/// The statuses of one cell's non-ok rows, now and before a refill: what the audit's search finds a cell by.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellFailures {
    /// The cell.
    pub key: CellKey,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    /// The statuses of its non-ok rows now, and how many of each.
    pub failed_by_status: BTreeMap<String, u32>,
    /// For a refilled cell: the statuses of the non-ok rows it had before the refill (from the backup).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pre_refill_failed_by_status: BTreeMap<String, u32>,
}

/// A distinct value of a dimension and how many cells have it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DimensionCount {
    /// The value.
    pub value: Value,
    /// How many cells have it.
    pub cells: u32,
}

/// What an offline copy (`cellscope bundle`, `GET /api/bundle`) is of: written into the page beside the API bodies
/// it carries, read by the app's banner.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OfflineMeta {
    /// The snapshot the copy holds.
    pub snapshot: String,
    /// When the copy was made.
    pub made_at_unix_ms: u64,
    /// The query of the view the copy opens on (without `at=`: the copy is of one snapshot).
    pub view: String,
    /// The cells in that view.
    pub cells_in_view: usize,
    /// Those of them whose request rows the copy carries.
    pub cells_with_rows: usize,
}

/// `GET /api/index`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexBody {
    /// The snapshot the body describes (a content hash).
    pub snapshot: String,
    /// Whether the second indexing stage (checksums, backup comparison) is in.
    pub complete: bool,
    /// When the index was built.
    pub indexed_at_unix_ms: u64,
    /// How long building it took.
    pub index_ms: f64,
    /// How many cells it holds.
    pub cells: usize,
    /// Every run's facts.
    pub runs: Vec<RunFacts>,
    /// The exclusion ledger's entries.
    pub exclusions: Vec<LedgerEntry>,
    /// Every warning of the index.
    pub warnings: Vec<Warning>,
    /// Every value of every dimension with its cell count.
    pub dimensions: BTreeMap<Dimension, Vec<DimensionCount>>,
}

/// `GET /api/compare` and `cellscope compare --json`: the comparison (`spec` and `groups` at the top level, as
/// before confounders were added) and what else differs between the runs behind its two sides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareBody {
    #[serde(flatten)]
    /// The comparison.
    pub comparison: crate::compare::Comparison,
    /// What else differs between the runs behind its two sides.
    pub confounders: crate::compare::confounders::Confounders,
}

/// A skipped or not-run cell and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkippedCell {
    /// The cell.
    pub key: CellKey,
    /// Skipped or not run.
    pub status: CellStatus,
    /// Why it has no data.
    pub reason: String,
    /// The manifest's status of the cell.
    pub manifest_status: Option<String>,
    /// The manifest's events of the cell.
    pub history: Vec<HistoryEvent>,
}

/// A master that received a refill, with its note and backups.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RefillProvenance {
    /// The master's run id.
    pub run: String,
    /// The master's directory, relative to the data root.
    pub path: String,
    /// The refill runs whose rows stand in it.
    pub refill_runs: Vec<String>,
    /// Cells whose rows a refill replaced.
    pub refilled_cells: u32,
    /// Rows that carry a refill run's id.
    pub refill_rows: u64,
    /// `REFILL_NOTE.md` as written.
    pub note_markdown: Option<String>,
    /// The note rendered to HTML and sanitised.
    pub note_html: Option<String>,
    /// The master's backups and what comparing them found.
    pub backups: Vec<BackupFacts>,
}

/// A ledger entry and the cells it matches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExclusionMatches {
    /// The entry.
    pub entry: LedgerEntry,
    /// The cells it matches.
    pub matched: Vec<CellKey>,
}

/// The manifest history of one cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestHistory {
    /// The cell.
    pub key: CellKey,
    /// The manifest's status of the cell.
    pub manifest_status: Option<String>,
    /// The manifest's events of the cell, in order.
    pub history: Vec<HistoryEvent>,
}

/// `GET /api/provenance`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The snapshot the body describes.
    pub snapshot: String,
    /// Skipped and not-run cells with why.
    pub skipped: Vec<SkippedCell>,
    /// Masters that received a refill.
    pub refills: Vec<RefillProvenance>,
    /// Each ledger entry with the cells it matches.
    pub exclusions: Vec<ExclusionMatches>,
    /// Manifest histories of the cells that have one.
    pub manifest_histories: Vec<ManifestHistory>,
    /// Every warning of the index.
    pub warnings: Vec<Warning>,
    /// Where each cell of another tool's file came from (file, record, inferred key parts, the tool's figures).
    #[serde(default)]
    pub origins: Vec<KeyedOrigin>,
    /// The statuses of the non-ok rows of every cell that has or had some, in key order.
    #[serde(default)]
    pub failures: Vec<CellFailures>,
}

/// The origin of one cell of another tool's file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KeyedOrigin {
    /// The cell.
    pub key: CellKey,
    /// Where it came from.
    pub origin: crate::origin::CellOrigin,
}

impl Provenance {
    /// The skipped or not-run entry of a cell.
    pub fn skipped(&self, key: &CellKey) -> Option<&SkippedCell> {
        self.skipped.iter().find(|skipped| &skipped.key == key)
    }

    /// The manifest history of a cell.
    pub fn history(&self, key: &CellKey) -> Option<&ManifestHistory> {
        self.manifest_histories
            .iter()
            .find(|history| &history.key == key)
    }

    /// Where a cell of another tool's file came from.
    pub fn origin_of(&self, key: &CellKey) -> Option<&crate::origin::CellOrigin> {
        self.origins
            .iter()
            .find(|keyed| &keyed.key == key)
            .map(|keyed| &keyed.origin)
    }

    /// The statuses of a cell's non-ok rows.
    pub fn failures_of(&self, key: &CellKey) -> Option<&CellFailures> {
        self.failures
            .binary_search_by(|failures| failures.key.cmp(key))
            .ok()
            .map(|at| &self.failures[at])
    }

    /// The refill facts of a master run.
    pub fn refill_of(&self, run_id: &str) -> Option<&RefillProvenance> {
        self.refills.iter().find(|refill| refill.run == run_id)
    }

    /// The ledger entries that match a cell.
    pub fn exclusions_of<'a>(
        &'a self,
        key: &'a CellKey,
    ) -> impl Iterator<Item = &'a ExclusionMatches> {
        self.exclusions
            .iter()
            .filter(move |entry| entry.matched.contains(key))
    }
}

/// The body of every error response: `{"error": {"code", "message"}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetail,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
/// An error's code and message.
pub struct ErrorDetail {
    /// A stable code (`bad_parameter`, `unknown_cell`, …).
    pub code: String,
    /// What to change, in words.
    pub message: String,
}
