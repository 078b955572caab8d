//! What discovery finds: TR164 run directories and their backups, and the files of other tools' runs.

use crate::storage;

/// The names a TR164 run's metrics file may have, in order of preference: plain, then compressed (read through
/// [`super::bytes::decompressed`]).
pub const METRICS_NAMES: [&str; 3] = ["metrics.csv", "metrics.csv.gz", "metrics.csv.zst"];

/// Which of [`METRICS_NAMES`] the file `relative` (a TR164 run's one detected file) is; plain when none.
pub fn metrics_name_of(relative: &str) -> &'static str {
    let name = storage::file_name(relative);
    METRICS_NAMES
        .into_iter()
        .find(|known| *known == name)
        .unwrap_or(METRICS_NAMES[0])
}

/// A directory holding a `metrics.csv` (or, without one, a `metrics.csv.gz` or `metrics.csv.zst`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunDir {
    /// The directory name.
    pub run_id: String,
    /// The directory relative to the data root, with `/` separators.
    pub relative: String,
    /// The metrics file's name: one of [`METRICS_NAMES`].
    pub metrics_name: &'static str,
}

impl RunDir {
    /// A run directory whose metrics file is the plain `metrics.csv`.
    pub fn plain(run_id: String, relative: String) -> RunDir {
        RunDir {
            run_id,
            relative,
            metrics_name: METRICS_NAMES[0],
        }
    }

    /// The metrics file relative to the data root.
    pub fn metrics_relative(&self) -> String {
        storage::join(&self.relative, self.metrics_name)
    }
}

/// `<run id>_BACKUP_<label>/`: the untouched state of a run before a splice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackupDir {
    pub master_run_id: String,
    pub label: String,
    /// The directory relative to the data root.
    pub relative: String,
}

/// Files of one run of one format, found by discovery.
#[derive(Clone, Debug)]
pub struct DetectedRun {
    pub format: &'static str,
    /// The run root, relative to the data root.
    pub root: String,
    /// The run's files, relative to the data root, in path order.
    pub files: Vec<String>,
    /// The run id when it is not the one the format's files give (another run already has that one: see
    /// `records::ids::separate_run_ids`).
    pub id: Option<String>,
}

/// What the formats make of a file discovery offers them.
#[derive(Clone, Debug)]
pub enum Offered {
    /// A file of `format`, one of the files of the run rooted at `root`.
    Run { format: &'static str, root: String },
    /// A file no format reads.
    Unread(Unread),
}

/// A file no format reads: the runs it would be a side file of, and why it is not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unread {
    /// Each format that knows the file as one its tool writes beside a run's results, with that run's root: the
    /// file is then one of the run's when the run was found.
    pub side_of: Vec<(&'static str, String)>,
    /// Why no format reads it, in words, for the `not_recognised` finding.
    pub reason: String,
    /// The kind of warning the file gets when it is a result that cannot be read rather than an unknown file:
    /// `empty_file` (no content at all), `utf16_file`, `corrupt_file` (a Parquet file that is not whole),
    /// `unreadable_file` or `not_a_file`. `None` for a file no reader knows (`not_recognised`).
    pub problem: Option<&'static str>,
    /// A reader found some of its marks in the file (a text that resembles a tool's output): such a text is named
    /// even where other texts (notes, READMEs) are passed over.
    pub resembles_a_result: bool,
}
