//! What the stages of indexing hand each other: the options of a read, what discovery finds ([`found`]), what a
//! format gives for each record of a file ([`record`]), a run's parse ([`parsed`]) and what it meant to do
//! ([`expected`]), what a read depends on ([`Inputs`]), the read of a run or backup ([`RunRead`], [`BackupRead`])
//! and where a cell's rows are ([`rows`]). Every stage and every format imports these from here, below all of
//! them, so that no stage imports another's types from above.

pub(crate) mod bytes;
pub(crate) mod expected;
pub(crate) mod found;
pub(crate) mod parsed;
pub(crate) mod record;
pub(crate) mod rows;

use crate::mapping::Mapping;
use crate::storage::Storage;
use cellscope_model::api::{BackupComparison, EnvironmentField, FileDigest, Warning};
use cellscope_model::key::CellCoordinates;
use expected::{Manifest, Plan};
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
pub(crate) struct ReadContext<'a> {
    pub storage: &'a dyn Storage,
    pub mapping: &'a Mapping,
    pub options: &'a IndexOptions,
    pub progress: &'a dyn Progress,
}

/// What a read of a run depends on besides the code that reads it: the cache keys its entry on these and uses it
/// only while every file is as it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Inputs {
    /// Every file the read opens, relative to the data root, each with whether it must be there (a run without it
    /// is read from its files every time, not cached).
    pub files: Vec<(String, bool)>,
    /// Whether the read depends on `cellscope.toml`.
    pub mapping: bool,
}

impl Inputs {
    /// A read of exactly `files`, each required, that `cellscope.toml` decides too.
    pub(crate) fn of(files: &[String]) -> Inputs {
        Inputs {
            files: files.iter().map(|file| (file.clone(), true)).collect(),
            mapping: true,
        }
    }
}

/// Everything read from one run, before runs are related to each other.
pub(crate) struct RunRead {
    /// The run's id (its cells' `run_id`).
    pub id: String,
    /// The run's directory, relative to the data root.
    pub root: String,
    /// The file whose rows are the run's, which warnings about its cells and rows name.
    pub rows_file: String,
    pub metrics: Result<ParsedMetrics, FileRejected>,
    pub digest: FileDigest,
    pub manifest: Option<Manifest>,
    pub plan: Option<Plan>,
    /// The note that says what was spliced into the run and why, with the run ids it names.
    pub note: Option<Note>,
    /// The run's files as its facts list them; the read stage sets them from what discovery found
    /// ([`found::DetectedRun::listed_files`]).
    pub files: Vec<String>,
    /// How the run was made, from its manifest's capture and its `config.yaml`.
    pub environment: BTreeMap<EnvironmentField, String>,
    /// When the run started, as its files record it (the read stage falls back on the run id, then on a file's
    /// modification time: `read::with_start`).
    pub started: Option<cellscope_model::api::RunStart>,
    pub warnings: Vec<Warning>,
    /// The format's name (`tr164`, `vllm-bench`, …).
    pub format: &'static str,
}

/// A run's refill note: the account of what was spliced into it and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Note {
    /// The note's file, relative to the data root.
    pub path: String,
    /// Its text as written.
    pub text: String,
    /// Run ids it names, with the line of their first mention.
    pub names: BTreeMap<String, u64>,
}

/// One backup (a run as it was before a refill changed it) and its comparison with that run.
pub(crate) struct BackupRead {
    /// The id of the run it is a backup of.
    pub of: String,
    pub label: String,
    /// The backup's directory, relative to the data root.
    pub root: String,
    pub digest: FileDigest,
    pub diff: Option<Result<SpliceDiff, String>>,
    /// The backup's own cells, for the pre-refill what-if.
    pub parsed: Option<ParsedMetrics>,
}

/// The comparison of a master with its backup, plus where the replaced rows are (for reading them back).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SpliceDiff {
    pub comparison: BackupComparison,
    /// Replaced rows per cell.
    pub replaced_cells: BTreeMap<CellCoordinates, u32>,
    /// Byte offsets in the backup of the replaced rows, per cell (the rows the inspector shows as `replaced`).
    pub replaced_offsets: BTreeMap<CellCoordinates, Vec<u64>>,
}
