//! What the indexer found out about runs, as the API carries it: each run's facts (census, digests, role, refill,
//! backup, environment), the warnings naming run, file and line, the exclusion ledger's entries and a manifest
//! cell's history. The comparison's confounders and the reasons read them as well as the bodies of
//! [`crate::api`], which re-exports every one.

use crate::exclusions::ExclusionEntry;
use crate::status::CellStatus;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// How loud a warning is. `Error` means data was lost from the index (a row, a file, a run); `Warning` means
/// data is kept but something about it is suspicious; `Info` says how data was read where nothing is wrong with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Nothing is lost or suspicious; how the data was read (a record kept with its load unstated, a file no
    /// reader recognises passed over).
    Info,
    /// Data is kept but something about it is suspicious.
    Warning,
    /// Data was lost from the index (a row, a file, a run).
    Error,
}

/// The kind of the [`Severity::Info`] finding that names a file under the data root that may have been a result
/// (`.json`, `.jsonl`, `.csv`, `.parquet`) but that no reader recognises, with the nearest reader's reason: a
/// results folder holds other files too, so it is information, not a problem.
pub const NOT_RECOGNISED: &str = "not_recognised";

/// One finding of the indexer. `run` is the run id (or `None` for root-level files such as `exclusions.toml`);
/// `file` is the path relative to the data root; `line` is 1-based where it applies.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Warning {
    /// How loud it is.
    pub severity: Severity,
    /// A stable machine-readable kind, e.g. `ragged_row`, `missing_column`, `splice_problem`.
    pub kind: String,
    /// The run it concerns, `None` for files at the root.
    pub run: Option<String>,
    /// The file, relative to the data root.
    pub file: Option<String>,
    /// The 1-based line where it applies.
    pub line: Option<u64>,
    /// What was found and what it means for the data, in words.
    pub message: String,
}

impl Warning {
    /// A finding of `kind` with no run, file or line yet.
    pub fn new(severity: Severity, kind: &str, message: impl Into<String>) -> Warning {
        Warning {
            severity,
            kind: kind.to_string(),
            run: None,
            file: None,
            line: None,
            message: shortened(message.into()),
        }
    }

    /// Whether the finding is a problem (a warning or an error) rather than information on how data was read:
    /// only problems mark the data root's warnings as needing attention.
    pub fn is_problem(&self) -> bool {
        self.severity > Severity::Info
    }

    /// A [`Severity::Info`].
    pub fn info(kind: &str, message: impl Into<String>) -> Warning {
        Warning::new(Severity::Info, kind, message)
    }

    /// A [`Severity::Warning`].
    pub fn warn(kind: &str, message: impl Into<String>) -> Warning {
        Warning::new(Severity::Warning, kind, message)
    }

    /// A [`Severity::Error`].
    pub fn error(kind: &str, message: impl Into<String>) -> Warning {
        Warning::new(Severity::Error, kind, message)
    }

    /// The finding, naming its run.
    pub fn run(mut self, run: &str) -> Warning {
        self.run = Some(run.to_string());
        self
    }

    /// The finding, naming its file.
    pub fn file(mut self, file: &str) -> Warning {
        self.file = Some(file.to_string());
        self
    }

    /// The finding, naming its line.
    pub fn line(mut self, line: u64) -> Warning {
        self.line = Some(line);
        self
    }

    /// Sets the line when there is one.
    pub fn at_line(mut self, line: Option<u64>) -> Warning {
        self.line = line;
        self
    }
}

/// The longest message a finding keeps, in bytes: what a message quotes of a file is an excerpt, never the file.
pub const MAX_MESSAGE_BYTES: usize = 2048;

/// `message` cut to [`MAX_MESSAGE_BYTES`] at a character boundary, saying how much was left out.
fn shortened(mut message: String) -> String {
    if message.len() <= MAX_MESSAGE_BYTES {
        return message;
    }
    let mut end = MAX_MESSAGE_BYTES - 64;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    let left_out = message.len() - end;
    message.truncate(end);
    message.push_str(&format!(
        " … ({left_out} more bytes of this message left out)"
    ));
    message
}

/// The start of `text` quoted in a message: at most `chars` characters, with `…` when it goes on.
pub fn excerpt(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, "{severity}[{}]", self.kind)?;
        if let Some(run) = &self.run {
            write!(f, " run {run}")?;
        }
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, " {file}:{line}")?,
            (Some(file), None) => write!(f, " {file}")?,
            _ => {}
        }
        write!(f, ": {}", self.message)
    }
}

/// A file's size and checksums (checksums are computed in the second indexing stage).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    /// Relative to the data root.
    pub path: String,
    /// The file's size.
    pub bytes: u64,
    /// Its MD5, once the second indexing stage has computed it.
    pub md5: Option<String>,
    /// Its SHA-256, once the second indexing stage has computed it.
    pub sha256: Option<String>,
}

/// Cells and rows of one run by status.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Census {
    /// Every cell of the run.
    pub cells: u32,
    /// Every status, zero counts included, so a reader sees what is absent.
    pub cells_by_status: BTreeMap<String, u32>,
    /// Cells whose rows a refill replaced.
    pub refilled_cells: u32,
    /// Cells completed through a fallback path (from the manifest).
    pub fallback_cells: u32,
    /// Cells an exclusion ledger entry matches.
    pub excluded_cells: u32,
    /// Real request rows (skip sentinels excluded).
    pub rows: u64,
    /// Rows with an ok status.
    pub ok_rows: u64,
    /// Rows with a failing status.
    pub failed_rows: u64,
    /// Failed rows by their status (`http_400`, `timeout`, …).
    pub failed_by_status: BTreeMap<String, u64>,
    /// Skip sentinel rows.
    pub skip_rows: u64,
    /// Rows left out as malformed.
    pub malformed_rows: u64,
    /// Σ expected rows over the cells that have an expectation, and Σ real rows of those cells.
    pub expected_rows: u64,
    /// Σ real rows of the cells that have an expectation.
    pub observed_rows: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
/// What a run directory is to the others.
pub enum RunRole {
    /// An ordinary run (or a master that received a refill).
    Run,
    /// A targeted re-run whose rows were spliced into a master; its spliced cells belong to the master.
    Refill,
    /// A copy of another run directory (its rows carry the other run's id): set aside, no cells.
    Copy,
}

/// What the row-by-row comparison of a spliced master with its pre-refill backup found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BackupComparison {
    /// Rows of the spliced master.
    pub master_rows: u64,
    /// Rows of the backup.
    pub backup_rows: u64,
    /// Rows at the same position whose common columns differ.
    pub replaced_rows: u64,
    /// Status in the backup of each replaced row → count (all non-ok for an honest refill).
    pub replaced_backup_status: BTreeMap<String, u64>,
    /// `run_id` of the replacing master rows → count.
    pub replacement_run_ids: BTreeMap<String, u64>,
    /// Replaced rows that were `ok` in the backup (data that was fine got overwritten).
    pub replaced_ok_rows: u64,
    /// Replaced rows whose cell differs between master and backup.
    pub moved_rows: u64,
    /// `(line in the master, message)` of each problem, the first few of them.
    pub problems: Vec<(u64, String)>,
    /// How many problems there are, beyond the few listed.
    pub problem_count: u64,
}

/// A backup of a master and what the comparison found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackupFacts {
    /// The backup file, relative to the data root.
    pub path: String,
    /// How the backup is named where it is shown.
    pub label: String,
    /// Its size and checksums.
    pub metrics: FileDigest,
    /// The row-by-row comparison with the master, once the second indexing stage has made it.
    pub diff: Option<BackupComparison>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// What a master run received from refill runs.
pub struct RefillFacts {
    /// Refill runs whose rows stand in this master.
    pub refill_runs: Vec<String>,
    /// Cells of this master whose rows a refill replaced.
    pub refilled_cells: u32,
    /// Rows in this master that carry a refill run's id.
    pub refill_rows: u64,
    /// `REFILL_NOTE.md` as written (markdown).
    pub note: Option<String>,
}

/// A fact about how a run was made that may differ between the runs behind a comparison's two sides: hardware,
/// software stack, serving configuration. The indexer reads them from the run's `manifest.json` (`environment`)
/// and `config.yaml` (docs/run-format.md); the order here is the order they are shown in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvironmentField {
    /// The GPU model.
    Gpu,
    /// The GPU's memory.
    GpuMemoryMib,
    /// The NVIDIA driver version.
    Driver,
    /// The CUDA version the driver reports (nvidia-smi), not the one a wheel was built for (that is in `Torch`).
    Cuda,
    /// Forward-compatibility libraries that let a newer CUDA run on an older driver.
    CudaCompat,
    /// The Python version.
    Python,
    /// The torch version, with the CUDA it was built for.
    Torch,
    /// The version of the run's serving backend (vLLM, SGLang, …).
    BackendVersion,
    /// The commit or build hash of the run's serving backend, or the tag of the image it ran from.
    BackendCommit,
    /// How the backend was installed: a native venv, a native launcher, a container image.
    Install,
    /// The context ceiling the server was started with (`default_max_model_len`; a refill may override it).
    MaxModelLen,
    /// The run's backend's extra launch arguments, as written in the config.
    BackendExtraArgs,
    /// Launch arguments the config adds for particular models on the run's backend (`model: args; …`).
    ModelExtraArgs,
}

impl EnvironmentField {
    /// Every field, in the order they are shown.
    pub const ALL: [EnvironmentField; 13] = [
        EnvironmentField::Gpu,
        EnvironmentField::GpuMemoryMib,
        EnvironmentField::Driver,
        EnvironmentField::Cuda,
        EnvironmentField::CudaCompat,
        EnvironmentField::Python,
        EnvironmentField::Torch,
        EnvironmentField::BackendVersion,
        EnvironmentField::BackendCommit,
        EnvironmentField::Install,
        EnvironmentField::MaxModelLen,
        EnvironmentField::BackendExtraArgs,
        EnvironmentField::ModelExtraArgs,
    ];

    /// How the field is named on screen.
    pub fn label(self) -> &'static str {
        match self {
            EnvironmentField::Gpu => "GPU",
            EnvironmentField::GpuMemoryMib => "GPU memory (MiB)",
            EnvironmentField::Driver => "driver",
            EnvironmentField::Cuda => "CUDA",
            EnvironmentField::CudaCompat => "CUDA compat",
            EnvironmentField::Python => "Python",
            EnvironmentField::Torch => "torch",
            EnvironmentField::BackendVersion => "backend version",
            EnvironmentField::BackendCommit => "backend commit",
            EnvironmentField::Install => "install",
            EnvironmentField::MaxModelLen => "max model length",
            EnvironmentField::BackendExtraArgs => "backend extra args",
            EnvironmentField::ModelExtraArgs => "model extra args",
        }
    }
}

/// Everything known about one run directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFacts {
    /// The run's id (its directory name for TR164 runs).
    pub run_id: String,
    /// Relative to the data root.
    pub path: String,
    /// What the run is to the others.
    pub role: RunRole,
    /// For a refill run: the master it was spliced into.
    pub refill_of: Option<String>,
    /// For a copy: the run it copies.
    pub copy_of: Option<String>,
    /// The manifest's status of the run, when it has a manifest.
    pub manifest_status: Option<String>,
    /// Whether the run has a plan of its cells.
    pub has_plan: bool,
    /// Its cells and rows by status.
    pub census: Census,
    /// The size and checksums of its metrics file.
    pub metrics: FileDigest,
    /// Names of the files in the run directory (sub-directories end with `/`), for the inventory.
    pub files: Vec<String>,
    /// What the run received from refill runs.
    pub refill: Option<RefillFacts>,
    /// Its backups and what comparing them found.
    pub backups: Vec<BackupFacts>,
    /// Exclusion ledger id → cells of this run it matches.
    pub exclusions: BTreeMap<String, u32>,
    /// The suites its cells belong to.
    pub suites: Vec<String>,
    /// How the run was made, for the fields its side files state (absent = not stated). Defaults to empty when
    /// reading a body written before the field existed (a snapshot kept in the cache).
    #[serde(default)]
    pub environment: BTreeMap<EnvironmentField, String>,
    /// For another tool's files: each key value that was inferred (a default rule or `cellscope.toml`) rather
    /// than read, with its rule and how many cells carry it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inferred: Vec<crate::origin::InferredCount>,
    /// When the run started and how that is known; absent when neither a file nor its modification time says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<RunStart>,
}

/// When a run started: the time a file records, or else a file's modification time, which only says the run
/// ended no later than that (a copy or checkout moves it), and is marked so wherever it shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunStart {
    /// RFC 3339 in UTC to the second (`2026-06-12T20:42:54Z`).
    pub at: String,
    /// Where the time was read.
    pub source: RunStartSource,
}

/// Where a run's start time was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunStartSource {
    /// A time the run's own files record: the file (relative to the data root) and its key or line.
    Recorded {
        /// The file, relative to the data root.
        file: String,
        /// The key (`date`, `run.time.start`) or line that holds it.
        key: String,
    },
    /// The time at the start of the run's id (`20260612_204254_…`), for runs whose files record none: the clock
    /// of the machine that named it, whose zone the id does not say.
    RunId {
        /// The run's id.
        id: String,
    },
    /// The file's modification time, for runs whose files record no time.
    FileModified {
        /// The file, relative to the data root.
        file: String,
    },
}

impl RunStart {
    /// A start the run's files record: `at` (RFC 3339, UTC), read from `key` of `file`.
    pub fn recorded(at: String, file: &str, key: &str) -> RunStart {
        RunStart {
            at,
            source: RunStartSource::Recorded {
                file: file.to_string(),
                key: key.to_string(),
            },
        }
    }

    /// `YYYY-MM-DD HH:MM` of [`RunStart::at`] (`None` when `at` is not RFC 3339 to the minute).
    fn minute(&self) -> Option<String> {
        let at = self.at.as_bytes();
        let shape =
            at.len() >= 16 && at[4] == b'-' && at[7] == b'-' && at[10] == b'T' && at[13] == b':';
        shape.then(|| format!("{} {}", &self.at[..10], &self.at[11..16]))
    }

    /// How the start is shown in a table: `2026-06-12 20:42 UTC` when a file records it,
    /// `2026-06-12 20:42 (run id)` from the run's id, and `≤ 2026-06-12 20:42 (file time)` from a modification
    /// time, which bounds the start from above (docs/definitions.md#run-start).
    pub fn label(&self) -> String {
        let minute = self.minute().unwrap_or_else(|| self.at.clone());
        match self.source {
            RunStartSource::Recorded { .. } => format!("{minute} UTC"),
            RunStartSource::RunId { .. } => format!("{minute} (run id)"),
            RunStartSource::FileModified { .. } => format!("≤ {minute} (file time)"),
        }
    }

    /// A sentence for a hover saying where the start was read and what it means.
    pub fn explanation(&self) -> String {
        match &self.source {
            RunStartSource::Recorded { file, key } => {
                format!("{}: recorded by the tool in {file} ({key})", self.at)
            }
            RunStartSource::RunId { id } => format!(
                "{}: read from the run id {id}, on the clock of the machine that named it (its zone is not \
                 recorded, so it is shown as written)",
                self.at
            ),
            RunStartSource::FileModified { file } => format!(
                "{}: no file of the run records when it started; this is when {file} was last modified, so the run \
                 started no later than this (a copy or a checkout moves it)",
                self.at
            ),
        }
    }

    /// Where the time was read, in words: `recorded in a/r.json (date)`, `named by the run id`,
    /// `modification time of a/r.json`.
    pub fn source_text(&self) -> String {
        match &self.source {
            RunStartSource::Recorded { file, key } => format!("recorded in {file} ({key})"),
            RunStartSource::RunId { .. } => "named by the run id".to_string(),
            RunStartSource::FileModified { file } => format!("modification time of {file}"),
        }
    }

    /// Whether the time is only a file's modification time.
    pub fn is_file_time(&self) -> bool {
        matches!(self.source, RunStartSource::FileModified { .. })
    }
}

/// One ledger entry with where it came from and how many cells it matched.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LedgerEntry {
    #[serde(flatten)]
    /// The entry as the ledger writes it.
    pub entry: ExclusionEntry,
    /// The ledger file, relative to the data root.
    pub file: String,
    /// The directory (relative, `""` = the root) whose runs the entry applies to.
    pub applies_under: String,
    /// How many cells it matched.
    pub matched_cells: u32,
}

/// One event of a manifest cell's history, kept as written for display.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryEvent {
    #[serde(default)]
    /// When it happened, as written.
    pub at: Option<String>,
    #[serde(default)]
    /// What happened (`started`, `completed`, `skipped`, …).
    pub event: String,
    #[serde(default)]
    /// The generation of the sweep it belongs to.
    pub generation: Option<String>,
    #[serde(default)]
    /// The process that wrote it.
    pub pid: Option<u64>,
    #[serde(default)]
    /// Why, when the manifest says.
    pub detail: Option<String>,
}

impl Census {
    /// The census of one run's cells. `malformed_rows` and the failed rows by status come from the file, not
    /// from the summaries.
    pub fn of<'a>(
        cells: impl IntoIterator<Item = &'a crate::summary::CellSummary>,
        malformed_rows: u64,
        failed_by_status: BTreeMap<String, u64>,
    ) -> Census {
        let mut census = Census {
            cells_by_status: CellStatus::ALL
                .iter()
                .map(|status| (status.as_str().to_string(), 0))
                .collect(),
            malformed_rows,
            failed_by_status,
            ..Census::default()
        };
        for cell in cells {
            census.cells += 1;
            *census
                .cells_by_status
                .entry(cell.status.as_str().to_string())
                .or_default() += 1;
            census.refilled_cells += u32::from(cell.refilled);
            census.fallback_cells += u32::from(cell.fallback);
            census.excluded_cells += u32::from(!cell.excluded.is_empty());
            census.rows += u64::from(cell.rows);
            census.ok_rows += u64::from(cell.ok_rows);
            census.failed_rows += u64::from(cell.failed_rows);
            census.skip_rows += u64::from(cell.skip_rows);
            if let Some(expected) = cell.expected_rows {
                census.expected_rows += u64::from(expected);
                census.observed_rows += u64::from(cell.rows);
            }
        }
        census
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_is_labelled_by_where_it_was_read() {
        let recorded = RunStart::recorded("2026-06-12T20:42:54Z".into(), "a/r.json", "date");
        assert_eq!(recorded.label(), "2026-06-12 20:42 UTC");
        assert!(recorded.explanation().contains("a/r.json (date)"));
        let file = RunStart {
            at: "2026-06-12T20:42:54Z".into(),
            source: RunStartSource::FileModified {
                file: "a/r.json".into(),
            },
        };
        assert_eq!(file.label(), "≤ 2026-06-12 20:42 (file time)");
        assert!(file.explanation().contains("no later than"));
        assert!(file.is_file_time() && !recorded.is_file_time());
        let id = RunStart {
            at: "2026-06-12T20:42:54Z".into(),
            source: RunStartSource::RunId {
                id: "20260612_204254".into(),
            },
        };
        assert_eq!(id.label(), "2026-06-12 20:42 (run id)");
        // A value that is not RFC 3339 is shown whole rather than cut.
        let odd = RunStart::recorded("soon".into(), "f", "k");
        assert_eq!(odd.label(), "soon UTC");
    }

    #[test]
    fn a_message_keeps_at_most_its_limit_and_says_what_it_left_out() {
        let long = "é".repeat(5000);
        let warning = Warning::error("x", long.clone());
        assert!(warning.message.len() <= MAX_MESSAGE_BYTES + 64);
        assert!(warning.message.starts_with("éé"));
        // 10,000 bytes in; 1,984 kept (a character boundary at or below 2,048 − 64).
        assert!(
            warning
                .message
                .ends_with("(8016 more bytes of this message left out)"),
            "{}",
            &warning.message[warning.message.len() - 60..]
        );
        assert_eq!(Warning::warn("x", "short").message, "short");
        assert_eq!(excerpt("abcdef", 3), "abc…");
        assert_eq!(excerpt("abc", 3), "abc");
    }
}
