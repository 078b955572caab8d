//! What the stages of indexing hand each other: the options of a read, what discovery finds ([`found`]), a run's
//! parse ([`parsed`]) and side files ([`expected`]), the read of a run or backup ([`RunRead`], [`BackupRead`]) and
//! where a cell's rows are ([`rows`]). Every stage and every format imports these from here, below all of them, so
//! that no stage imports another's types from above.

pub mod bytes;
pub mod expected;
pub mod found;
pub mod parsed;
pub mod record;
pub mod rows;

use crate::mapping::Mapping;
use crate::storage::Storage;
use cellscope_model::api::{BackupComparison, EnvironmentField, FileDigest, Warning};
use cellscope_model::key::CellCoordinates;
use expected::{Manifest, Plan};
use found::{BackupDir, RunDir};
use parsed::{FileRejected, ParsedMetrics};
use std::collections::BTreeMap;

/// What to compute besides the cells.
#[derive(Clone, Copy, Debug)]
pub struct IndexOptions {
    /// md5 and sha256 of every metrics.csv.
    pub hashes: bool,
    /// Compare spliced masters with their backups row by row.
    pub backup_diff: bool,
}

impl IndexOptions {
    /// What the cells table needs: the backup comparison (for refilled cells' pre-refill state) but no
    /// checksums (`cellscope cells` and `cellscope compare`).
    pub const CELLS: IndexOptions = IndexOptions {
        hashes: false,
        backup_diff: true,
    };
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            hashes: true,
            backup_diff: true,
        }
    }
}

/// Progress events, for a progress bar on long indexing.
pub trait Progress: Sync {
    fn files_found(&self, _files: u64, _bytes: u64) {}
    fn file_done(&self, _bytes: u64) {}
}

/// No progress reporting.
pub struct Quiet;
impl Progress for Quiet {}

/// What reading a run needs besides its files.
pub struct ReadContext<'a> {
    pub storage: &'a dyn Storage,
    pub mapping: &'a Mapping,
    pub options: &'a IndexOptions,
    pub progress: &'a dyn Progress,
}

/// Everything read from one run directory, before runs are related to each other.
pub struct RunRead {
    pub dir: RunDir,
    pub metrics: Result<ParsedMetrics, FileRejected>,
    pub digest: FileDigest,
    pub manifest: Option<Manifest>,
    pub plan: Option<Plan>,
    /// `REFILL_NOTE.md` as written.
    pub refill_note: Option<String>,
    /// Run ids the note names, with the line of their first mention.
    pub note_names: BTreeMap<String, u64>,
    pub files: Vec<String>,
    /// How the run was made, from its manifest's capture and its `config.yaml`.
    pub environment: BTreeMap<EnvironmentField, String>,
    pub warnings: Vec<Warning>,
    /// The format's name (`tr164`, `vllm-bench`, …).
    pub format: &'static str,
}

impl RunRead {
    /// `<run path>/<file name>`, relative to the data root.
    pub fn relative(&self, name: &str) -> String {
        format!("{}/{name}", self.dir.relative)
    }
}

/// One backup directory and its comparison with the master.
pub struct BackupRead {
    pub dir: BackupDir,
    pub digest: FileDigest,
    pub diff: Option<Result<SpliceDiff, String>>,
    /// The backup's own cells, for the pre-refill what-if.
    pub parsed: Option<ParsedMetrics>,
}

/// The comparison of a master with its backup, plus where the replaced rows are (for reading them back).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpliceDiff {
    pub comparison: BackupComparison,
    /// Replaced rows per cell.
    pub replaced_cells: BTreeMap<CellCoordinates, u32>,
    /// Byte offsets in the backup of the replaced rows, per cell (the rows the inspector shows as `replaced`).
    pub replaced_offsets: BTreeMap<CellCoordinates, Vec<u64>>,
}
