//! The index: every run under a data root, its cells with statuses and metrics, provenance and warnings.
//!
//! Indexing never fails as a whole. [`build`] returns an [`Index`] plus warnings naming run, file and line;
//! only a missing data root is an error. Files are parsed in parallel; the data root is only ever read.

pub mod discover;
pub mod ledger;
pub mod metrics_csv;
pub mod rows;
pub mod run_files;
pub mod splice;
pub mod warning;

use cellscope_model::exclusions::ExclusionScope;
use cellscope_model::status::RowCensus;
use cellscope_model::summary::{ExpectedSource, fill_scaling};
use cellscope_model::{CellKey, CellStatus, CellSummary};
use discover::{BackupDir, RunDir};
use ledger::LedgerEntry;
use metrics_csv::{ParsedMetrics, RowCellKey};
use rayon::prelude::*;
use run_files::{HistoryEvent, Manifest, ManifestCell, Plan};
use serde::Serialize;
use splice::SpliceDiff;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use warning::Warning;

/// Errors that stop indexing altogether.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("data directory {0} does not exist")]
    RootMissing(PathBuf),
    #[error("{0} is not a directory")]
    RootNotDirectory(PathBuf),
}

/// What to compute besides the cells.
#[derive(Clone, Copy, Debug)]
pub struct IndexOptions {
    /// md5 and sha256 of every metrics.csv.
    pub hashes: bool,
    /// Compare spliced masters with their backups row by row.
    pub backup_diff: bool,
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

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FileDigest {
    /// Relative to the data root.
    pub path: String,
    pub bytes: u64,
    pub md5: Option<String>,
    pub sha256: Option<String>,
}

/// Cells and rows of one run by status.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Census {
    pub cells: u32,
    /// Every status, zero counts included, so a reader sees what is absent.
    pub cells_by_status: BTreeMap<String, u32>,
    pub refilled_cells: u32,
    pub fallback_cells: u32,
    pub excluded_cells: u32,
    /// Real request rows (skip sentinels excluded).
    pub rows: u64,
    pub ok_rows: u64,
    pub failed_rows: u64,
    pub failed_by_status: BTreeMap<String, u64>,
    pub skip_rows: u64,
    /// Rows left out as malformed.
    pub malformed_rows: u64,
    /// Σ expected rows over the cells that have an expectation, and Σ real rows of those cells.
    pub expected_rows: u64,
    pub observed_rows: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunRole {
    /// An ordinary run (or a master that received a refill).
    Run,
    /// A targeted re-run whose rows were spliced into a master; its cells belong to the master.
    Refill,
}

/// A backup of a master and what the row-by-row comparison found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BackupInfo {
    pub path: String,
    pub label: String,
    pub metrics: FileDigest,
    pub diff: Option<SpliceDiff>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RefillInfo {
    /// Refill runs whose rows stand in this master.
    pub refill_runs: Vec<String>,
    pub refilled_cells: u32,
    /// Rows in this master that carry a refill run's id.
    pub refill_rows: u64,
    /// `REFILL_NOTE.md` as written (markdown).
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunInfo {
    pub run_id: String,
    /// Relative to the data root.
    pub path: String,
    pub role: RunRole,
    /// For a refill run: the master it was spliced into.
    pub refill_of: Option<String>,
    pub manifest_status: Option<String>,
    pub has_plan: bool,
    pub census: Census,
    pub metrics: FileDigest,
    /// Names of the files in the run directory (sub-directories end with `/`), for the inventory.
    pub files: Vec<String>,
    pub refill: Option<RefillInfo>,
    pub backups: Vec<BackupInfo>,
    /// Exclusion ledger id → cells of this run it matches.
    pub exclusions: BTreeMap<String, u32>,
    pub suites: Vec<String>,
}

/// Per-cell provenance beyond the summary row: the manifest's status and history.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CellProvenance {
    pub manifest_status: Option<String>,
    pub history: Vec<HistoryEvent>,
}

/// Where a cell's rows are, so `/api/requests` can read exactly them back without re-parsing whole files.
#[derive(Clone, Debug, Default)]
pub struct CellRows {
    pub file: PathBuf,
    /// The file length when indexed; a different length means the file changed since.
    pub file_bytes: u64,
    pub offsets: Vec<u64>,
    /// The backup file and the offsets of the rows a refill replaced, for refilled cells.
    pub backup: Option<(PathBuf, u64, Vec<u64>)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Index {
    pub root: PathBuf,
    pub runs: Vec<RunInfo>,
    /// One row per cell of every run except refill runs, sorted by key.
    pub cells: Vec<CellSummary>,
    /// The cells of refill runs, kept for provenance (their rows are already in the masters' cells).
    pub refill_cells: Vec<CellSummary>,
    /// Refilled cells as they were before the refill (from the backup), keyed like the master's cells; for the
    /// "use pre-refill rows" what-if. Scaling metrics are left empty: the browser recomputes them.
    pub pre_refill_cells: Vec<CellSummary>,
    pub provenance: BTreeMap<CellKey, CellProvenance>,
    pub exclusions: Vec<LedgerEntry>,
    pub warnings: Vec<Warning>,
    #[serde(skip)]
    pub rows: BTreeMap<CellKey, CellRows>,
    #[serde(skip)]
    pub elapsed: Duration,
}

impl Index {
    pub fn run(&self, run_id: &str) -> Option<&RunInfo> {
        self.runs.iter().find(|run| run.run_id == run_id)
    }
}

/// A master's backup file, its length, and the byte offsets of the rows a refill replaced, per cell.
type ReplacedRows = (PathBuf, u64, BTreeMap<RowCellKey, Vec<u64>>);

/// Everything read from one run directory, before cross-run assembly.
struct RunRead {
    dir: RunDir,
    metrics: Result<ParsedMetrics, metrics_csv::FileRejected>,
    digest: FileDigest,
    manifest: Option<Manifest>,
    plan: Option<Plan>,
    refill_note: Option<String>,
    files: Vec<String>,
    warnings: Vec<Warning>,
}

fn digest(relative: String, bytes: &[u8], hashes: bool) -> FileDigest {
    use md5::Digest as _;
    let (md5, sha256) = if hashes {
        let md5 = md5::Md5::digest(bytes);
        let sha256 = sha2::Sha256::digest(bytes);
        (Some(to_hex(&md5)), Some(to_hex(&sha256)))
    } else {
        (None, None)
    };
    FileDigest {
        path: relative,
        bytes: bytes.len() as u64,
        md5,
        sha256,
    }
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn list_files(path: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(path) else {
        return Vec::new();
    };
    let mut files: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                format!("{name}/")
            } else {
                name
            }
        })
        .collect();
    files.sort();
    files
}

fn read_run(dir: RunDir, options: &IndexOptions, progress: &dyn Progress) -> RunRead {
    let run_id = dir.run_id.clone();
    let metrics_relative = format!("{}/metrics.csv", dir.relative);
    let mut warnings = Vec::new();
    let bytes = match std::fs::read(dir.path.join("metrics.csv")) {
        Ok(bytes) => bytes,
        Err(error) => {
            warnings.push(
                Warning::error("unreadable_file", format!("cannot read the file: {error}"))
                    .run(&run_id)
                    .file(&metrics_relative),
            );
            Vec::new()
        }
    };
    let mut row_warnings = Vec::new();
    let metrics = metrics_csv::parse(&bytes, &mut row_warnings);
    for warning in row_warnings {
        warnings.push(warning.run(&run_id).file(&metrics_relative));
    }
    if let Err(rejected) = &metrics {
        let mut warning = Warning::error(rejected.kind, rejected.message.clone())
            .run(&run_id)
            .file(&metrics_relative);
        warning.line = rejected.line;
        warnings.push(warning);
    } else if let Ok(parsed) = &metrics
        && parsed.records == 0
    {
        warnings.push(
            Warning::warn(
                "header_only",
                "the file has a header but no rows; no cell of this run has data",
            )
            .run(&run_id)
            .file(&metrics_relative),
        );
    }
    let digest = digest(metrics_relative, &bytes, options.hashes);
    progress.file_done(bytes.len() as u64);
    drop(bytes);

    let mut read_json = |name: &str| -> Option<Vec<u8>> {
        let path = dir.path.join(name);
        if !path.is_file() {
            return None;
        }
        match std::fs::read(&path) {
            Ok(bytes) => Some(bytes),
            Err(error) => {
                warnings.push(
                    Warning::error("unreadable_file", format!("cannot read the file: {error}"))
                        .run(&run_id)
                        .file(&format!("{}/{name}", dir.relative)),
                );
                None
            }
        }
    };
    let manifest_bytes = read_json("manifest.json");
    let plan_bytes = read_json("execution_plan.json");
    let note_bytes = read_json("REFILL_NOTE.md");
    let manifest = manifest_bytes.and_then(|bytes| match run_files::parse_manifest(&bytes) {
        Ok(manifest) => Some(manifest),
        Err(problem) => {
            warnings.push(
                Warning::error(
                    "invalid_manifest",
                    format!(
                        "manifest.json is not a valid manifest (column {}): {}; the run is indexed without it",
                        problem.column, problem.message
                    ),
                )
                .run(&run_id)
                .file(&format!("{}/manifest.json", dir.relative))
                .line(problem.line),
            );
            None
        }
    });
    let plan = plan_bytes.and_then(|bytes| match run_files::parse_plan(&bytes) {
        Ok(plan) => Some(plan),
        Err(problem) => {
            warnings.push(
                Warning::error(
                    "invalid_plan",
                    format!(
                        "execution_plan.json is not a valid plan (column {}): {}; the run is indexed without it",
                        problem.column, problem.message
                    ),
                )
                .run(&run_id)
                .file(&format!("{}/execution_plan.json", dir.relative))
                .line(problem.line),
            );
            None
        }
    });
    let refill_note = note_bytes.map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    let files = list_files(&dir.path);
    RunRead {
        dir,
        metrics,
        digest,
        manifest,
        plan,
        refill_note,
        files,
        warnings,
    }
}

struct BackupRead {
    dir: BackupDir,
    digest: FileDigest,
    diff: Option<Result<SpliceDiff, String>>,
    /// The backup's own cells, for the pre-refill what-if.
    parsed: Option<ParsedMetrics>,
}

fn read_backup(
    dir: BackupDir,
    master: Option<&RunDir>,
    options: &IndexOptions,
    progress: &dyn Progress,
) -> BackupRead {
    let relative = format!("{}/metrics.csv", dir.relative);
    // Neither a hash nor the comparison is wanted (`--cells-only`): the backup's bytes are not needed at all.
    let bytes = if options.hashes || options.backup_diff {
        std::fs::read(dir.path.join("metrics.csv")).unwrap_or_default()
    } else {
        Vec::new()
    };
    let mut digest = digest(relative, &bytes, options.hashes);
    if bytes.is_empty() {
        digest.bytes =
            std::fs::metadata(dir.path.join("metrics.csv")).map_or(0, |metadata| metadata.len());
    }
    let diff = match master {
        Some(master) if options.backup_diff => Some(
            std::fs::read(master.path.join("metrics.csv"))
                .map_err(|error| format!("cannot read the master metrics.csv: {error}"))
                .and_then(|master_bytes| splice::diff(&master_bytes, &bytes)),
        ),
        _ => None,
    };
    let parsed = options
        .backup_diff
        .then(|| metrics_csv::parse(&bytes, &mut Vec::new()).ok())
        .flatten();
    progress.file_done(digest.bytes);
    BackupRead {
        dir,
        digest,
        diff,
        parsed,
    }
}

/// Mentions of run ids (`YYYYMMDD_HHMMSS_ffffff` or `YYYYMMDD_HHMMSS`) in a note.
fn run_ids_in(text: &str) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let mut found = BTreeSet::new();
    let digits = |start: usize, count: usize| {
        bytes
            .get(start..start + count)
            .is_some_and(|slice| slice.iter().all(u8::is_ascii_digit))
    };
    let mut start = 0;
    while start + 15 <= bytes.len() {
        let boundary_before = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
        if boundary_before && digits(start, 8) && bytes[start + 8] == b'_' && digits(start + 9, 6) {
            let mut end = start + 15;
            if bytes.get(end) == Some(&b'_') && digits(end + 1, 6) {
                end += 7;
            }
            found.insert(text[start..end].to_string());
            start = end;
        } else {
            start += 1;
        }
    }
    found
}

fn cell_key(run_id: &str, key: &RowCellKey) -> CellKey {
    CellKey {
        run_id: run_id.to_string(),
        suite: key.suite.clone(),
        phase: key.phase.clone(),
        backend: key.backend.clone(),
        model: key.model.clone(),
        workload: key.workload.clone(),
        n: key.n,
        rep: key.rep,
    }
}

/// The modal rows-per-agent over the cells with data and no failures (ties go to the larger count of cells,
/// then to the smaller value), the fallback expectation when neither plan nor manifest says.
fn inferred_requests_per_agent(parsed: &ParsedMetrics) -> Option<u32> {
    let mut counts: BTreeMap<u32, u32> = BTreeMap::new();
    for (key, cell) in &parsed.cells {
        if cell.rows > 0 && cell.failed_rows == 0 && key.n > 0 && cell.rows % key.n == 0 {
            *counts.entry(cell.rows / key.n).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .max_by(|(left_value, left), (right_value, right)| {
            left.cmp(right).then(right_value.cmp(left_value))
        })
        .map(|(value, _)| value)
}

/// Builds the index of everything under `root`.
pub fn build(
    root: &Path,
    options: &IndexOptions,
    progress: &dyn Progress,
) -> Result<Index, IndexError> {
    let started = Instant::now();
    if !root.exists() {
        return Err(IndexError::RootMissing(root.to_path_buf()));
    }
    if !root.is_dir() {
        return Err(IndexError::RootNotDirectory(root.to_path_buf()));
    }
    let discovery = discover::discover(root);
    let mut warnings = discovery.warnings;
    let total_bytes: u64 = discovery
        .runs
        .iter()
        .map(|run| &run.path)
        .chain(discovery.backups.iter().map(|backup| &backup.path))
        .filter_map(|path| std::fs::metadata(path.join("metrics.csv")).ok())
        .map(|metadata| metadata.len())
        .sum();
    progress.files_found(
        (discovery.runs.len() + discovery.backups.len()) as u64,
        total_bytes,
    );

    let runs_by_id: BTreeMap<String, RunDir> = discovery
        .runs
        .iter()
        .map(|run| (run.run_id.clone(), run.clone()))
        .collect();
    let (reads, backup_reads): (Vec<RunRead>, Vec<BackupRead>) = rayon::join(
        || {
            discovery
                .runs
                .clone()
                .into_par_iter()
                .map(|dir| read_run(dir, options, progress))
                .collect()
        },
        || {
            discovery
                .backups
                .clone()
                .into_par_iter()
                .map(|dir| {
                    let master = runs_by_id.get(&dir.master_run_id);
                    read_backup(dir, master, options, progress)
                })
                .collect()
        },
    );

    // Refill relations: rows of a master carrying another run's id, or a REFILL_NOTE.md naming a run.
    let mut refill_of: BTreeMap<String, String> = BTreeMap::new();
    for read in &reads {
        let master = &read.dir.run_id;
        let mut refills: BTreeSet<String> = BTreeSet::new();
        if let Ok(parsed) = &read.metrics {
            for (_, cell) in &parsed.cells {
                refills.extend(
                    cell.row_run_ids
                        .keys()
                        .filter(|id| *id != master && runs_by_id.contains_key(*id))
                        .cloned(),
                );
            }
        }
        if let Some(note) = &read.refill_note {
            refills.extend(
                run_ids_in(note)
                    .into_iter()
                    .filter(|id| id != master && runs_by_id.contains_key(id)),
            );
        }
        for refill in refills {
            if let Some(previous) = refill_of.insert(refill.clone(), master.clone()) {
                warnings.push(
                    Warning::error(
                        "refill_claimed_twice",
                        format!(
                            "run {refill} is named as the refill of both {previous} and {master}"
                        ),
                    )
                    .run(&refill),
                );
            }
        }
    }

    let mut backups_by_master: BTreeMap<String, Vec<BackupInfo>> = BTreeMap::new();
    let mut replaced_rows_by_master: BTreeMap<String, ReplacedRows> = BTreeMap::new();
    let mut replaced_cells_by_master: BTreeMap<String, BTreeMap<RowCellKey, u32>> = BTreeMap::new();
    let mut backup_cells_by_master: BTreeMap<String, ParsedMetrics> = BTreeMap::new();
    for mut backup in backup_reads {
        let master = backup.dir.master_run_id.clone();
        if let Some(parsed) = backup.parsed.take() {
            backup_cells_by_master.insert(master.clone(), parsed);
        }
        let file = backup.digest.path.clone();
        if !runs_by_id.contains_key(&master) {
            warnings.push(
                Warning::warn(
                    "orphan_backup",
                    format!("backup of run {master}, but no run directory {master} exists under the data root"),
                )
                .file(&file),
            );
        }
        let diff = match backup.diff {
            Some(Ok(diff)) => {
                if diff.problem_count > 0 {
                    for (line, message) in &diff.problems {
                        let warning = Warning::error(
                            "splice_problem",
                            format!("splice audit against the backup: {message}"),
                        )
                        .run(&master)
                        .file(&format!(
                            "{}/metrics.csv",
                            runs_by_id
                                .get(&master)
                                .map_or("", |run| run.relative.as_str())
                        ));
                        warnings.push(if *line > 0 {
                            warning.line(*line)
                        } else {
                            warning
                        });
                    }
                    if diff.problem_count > diff.problems.len() as u64 {
                        warnings.push(
                            Warning::error(
                                "splice_problem",
                                format!(
                                    "{} further splice problems (only the first {} are listed)",
                                    diff.problem_count - diff.problems.len() as u64,
                                    diff.problems.len()
                                ),
                            )
                            .run(&master),
                        );
                    }
                }
                replaced_cells_by_master
                    .entry(master.clone())
                    .or_default()
                    .extend(diff.replaced_cells.clone());
                replaced_rows_by_master.insert(
                    master.clone(),
                    (
                        backup.dir.path.join("metrics.csv"),
                        backup.digest.bytes,
                        diff.replaced_offsets.clone(),
                    ),
                );
                Some(diff)
            }
            Some(Err(message)) => {
                warnings.push(
                    Warning::error(
                        "splice_unreadable",
                        format!("cannot compare the master with this backup: {message}"),
                    )
                    .run(&master)
                    .file(&file),
                );
                None
            }
            None => None,
        };
        backups_by_master
            .entry(master)
            .or_default()
            .push(BackupInfo {
                path: backup.dir.relative.clone(),
                label: backup.dir.label.clone(),
                metrics: backup.digest,
                diff,
            });
    }

    // Ledgers.
    let mut exclusions: Vec<LedgerEntry> = Vec::new();
    for (applies_under, path) in &discovery.ledgers {
        let file = discover::relative_path(root, path);
        match std::fs::read_to_string(path) {
            Ok(text) => exclusions.extend(ledger::load(&text, &file, applies_under, &mut warnings)),
            Err(error) => warnings.push(
                Warning::error("unreadable_file", format!("cannot read the file: {error}"))
                    .file(&file),
            ),
        }
    }
    let mut seen_ids = BTreeSet::new();
    for entry in &exclusions {
        if !seen_ids.insert(entry.entry.id.clone()) {
            warnings.push(
                Warning::warn(
                    "duplicate_exclusion_id",
                    format!(
                        "exclusion id `{}` is used by more than one entry",
                        entry.entry.id
                    ),
                )
                .file(&entry.file),
            );
        }
    }

    let mut runs = Vec::new();
    let mut cells = Vec::new();
    let mut refill_cells = Vec::new();
    let mut provenance = BTreeMap::new();
    let mut locators = BTreeMap::new();
    let mut pre_refill_cells = Vec::new();
    for read in reads {
        warnings.extend(read.warnings.iter().cloned());
        let run_id = read.dir.run_id.clone();
        let role = if refill_of.contains_key(&run_id) {
            RunRole::Refill
        } else {
            RunRole::Run
        };
        let empty = ParsedMetrics::default();
        let parsed = read.metrics.as_ref().unwrap_or(&empty);
        let inferred = inferred_requests_per_agent(parsed);
        let replaced = replaced_cells_by_master.get(&run_id);
        let note_refills: Vec<String> = read
            .refill_note
            .as_deref()
            .map(run_ids_in)
            .unwrap_or_default()
            .into_iter()
            .filter(|id| refill_of.get(id) == Some(&run_id))
            .collect();

        let mut run_cells: BTreeMap<RowCellKey, CellSummary> = BTreeMap::new();
        let mut foreign_ids: BTreeMap<String, u64> = BTreeMap::new();
        let mut refill_rows = 0u64;
        let mut refill_runs: BTreeSet<String> = BTreeSet::new();
        for (row_key, parsed_cell) in &parsed.cells {
            let key = cell_key(&run_id, row_key);
            let mut summary = CellSummary::empty(key, CellStatus::NotRun);
            summary.rows = parsed_cell.rows;
            summary.ok_rows = parsed_cell.ok_rows;
            summary.failed_rows = parsed_cell.failed_rows;
            summary.skip_rows = parsed_cell.skip_rows;
            summary.stats = parsed_cell.stats;
            let mut sources: Vec<(&String, &u32)> = parsed_cell
                .row_run_ids
                .iter()
                .filter(|(id, _)| *id != &run_id)
                .collect();
            sources.sort_by(|left, right| right.1.cmp(left.1));
            for (id, count) in &sources {
                if refill_of.get(*id) == Some(&run_id) {
                    refill_rows += u64::from(**count);
                    refill_runs.insert((*id).clone());
                } else {
                    *foreign_ids.entry((*id).clone()).or_default() += u64::from(**count);
                }
            }
            if let Some((id, _)) = sources
                .iter()
                .find(|(id, _)| refill_of.get(*id) == Some(&run_id))
            {
                summary.refilled = true;
                summary.source_run_id = Some((*id).clone());
            } else if replaced.is_some_and(|cells| cells.contains_key(row_key)) {
                summary.refilled = true;
                summary.source_run_id = note_refills.first().cloned();
            }
            if parsed_cell.skip_rows > 0 && parsed_cell.rows > 0 {
                warnings.push(
                    Warning::warn(
                        "skip_row_with_data",
                        format!(
                            "cell {} has a skip sentinel and {} real rows; the real rows are used",
                            summary.key, parsed_cell.rows
                        ),
                    )
                    .run(&run_id)
                    .file(&read.digest.path)
                    .line(parsed_cell.first_line),
                );
            }
            let backup = replaced_rows_by_master
                .get(&run_id)
                .and_then(|(path, bytes, offsets)| {
                    offsets
                        .get(row_key)
                        .map(|offsets| (path.clone(), *bytes, offsets.clone()))
                });
            locators.insert(
                summary.key.clone(),
                CellRows {
                    file: read.dir.path.join("metrics.csv"),
                    file_bytes: read.digest.bytes,
                    offsets: parsed_cell.row_offsets.clone(),
                    backup,
                },
            );
            run_cells.insert(row_key.clone(), summary);
        }
        for (id, count) in foreign_ids {
            warnings.push(
                Warning::warn(
                    "foreign_run_id",
                    format!("{count} rows carry run_id `{id}`, which is neither this directory's name nor a run directory under the data root; they count for run {run_id}"),
                )
                .run(&run_id)
                .file(&read.digest.path),
            );
        }
        // Planned and manifest cells that metrics.csv lacks are `not_run`.
        let planned = read.plan.iter().flat_map(|plan| plan.cells.keys());
        let in_manifest = read
            .manifest
            .iter()
            .flat_map(|manifest| manifest.cells.keys());
        for row_key in planned.chain(in_manifest) {
            run_cells.entry(row_key.clone()).or_insert_with(|| {
                CellSummary::empty(cell_key(&run_id, row_key), CellStatus::NotRun)
            });
        }
        for (row_key, summary) in run_cells.iter_mut() {
            let manifest_cell: Option<&ManifestCell> = read
                .manifest
                .as_ref()
                .and_then(|manifest| manifest.cells.get(row_key));
            let from_plan = read
                .plan
                .as_ref()
                .and_then(|plan| plan.cells.get(row_key).copied().flatten());
            let from_manifest = manifest_cell.and_then(|cell| cell.expected_rows);
            (summary.expected_rows, summary.expected_source) =
                match (from_plan, from_manifest, inferred) {
                    (Some(expected), _, _) => (Some(expected), ExpectedSource::Plan),
                    (None, Some(expected), _) => (Some(expected), ExpectedSource::Manifest),
                    (None, None, Some(per_agent)) => {
                        (Some(per_agent * row_key.n), ExpectedSource::Inferred)
                    }
                    (None, None, None) => (None, ExpectedSource::Unknown),
                };
            summary.fallback = manifest_cell.is_some_and(|cell| cell.fallback);
            summary.status = CellStatus::classify(RowCensus {
                expected_rows: summary.expected_rows,
                rows: summary.rows,
                ok_rows: summary.ok_rows,
                failed_rows: summary.failed_rows,
                skip_rows: summary.skip_rows,
            });
            if let Some(expected) = summary.expected_rows
                && summary.rows > expected
            {
                warnings.push(
                    Warning::warn(
                        "more_rows_than_expected",
                        format!(
                            "cell {} has {} rows, {} expected ({})",
                            summary.key,
                            summary.rows,
                            expected,
                            summary.expected_source.as_str()
                        ),
                    )
                    .run(&run_id)
                    .file(&read.digest.path),
                );
            }
            if let Some(cell) = manifest_cell {
                provenance.insert(
                    summary.key.clone(),
                    CellProvenance {
                        manifest_status: cell.status.clone(),
                        history: cell.history.clone(),
                    },
                );
            }
            let mut run_exclusions: Vec<(String, ExclusionScope)> = Vec::new();
            for entry in exclusions.iter_mut() {
                if ledger::applies_to(&entry.applies_under, &read.dir.relative)
                    && entry.entry.matches(&summary.key)
                {
                    entry.matched_cells += u32::from(role == RunRole::Run);
                    run_exclusions.push((entry.entry.id.clone(), entry.entry.scope));
                }
            }
            summary.excluded = run_exclusions.iter().map(|(id, _)| id.clone()).collect();
            summary.exclusion_scope = run_exclusions.iter().map(|(_, scope)| *scope).max();
        }
        if let Some(backup) = backup_cells_by_master.get(&run_id) {
            for (row_key, parsed_cell) in &backup.cells {
                let Some(current) = run_cells.get(row_key).filter(|cell| cell.refilled) else {
                    continue;
                };
                let mut before = CellSummary::empty(current.key.clone(), CellStatus::NotRun);
                before.rows = parsed_cell.rows;
                before.ok_rows = parsed_cell.ok_rows;
                before.failed_rows = parsed_cell.failed_rows;
                before.skip_rows = parsed_cell.skip_rows;
                before.stats = parsed_cell.stats;
                before.expected_rows = current.expected_rows;
                before.expected_source = current.expected_source;
                before.fallback = current.fallback;
                before.excluded = current.excluded.clone();
                before.exclusion_scope = current.exclusion_scope;
                before.status = CellStatus::classify(RowCensus {
                    expected_rows: before.expected_rows,
                    rows: before.rows,
                    ok_rows: before.ok_rows,
                    failed_rows: before.failed_rows,
                    skip_rows: before.skip_rows,
                });
                pre_refill_cells.push(before);
            }
        }
        let run_cells: Vec<CellSummary> = run_cells.into_values().collect();
        let mut census = census(&run_cells, parsed.malformed_rows);
        for (_, parsed_cell) in &parsed.cells {
            for (status, count) in &parsed_cell.failed_by_status {
                *census.failed_by_status.entry(status.clone()).or_default() += u64::from(*count);
            }
        }
        let mut exclusion_counts: BTreeMap<String, u32> = BTreeMap::new();
        for cell in &run_cells {
            for id in &cell.excluded {
                *exclusion_counts.entry(id.clone()).or_default() += 1;
            }
        }
        let mut suites: Vec<String> = run_cells
            .iter()
            .map(|cell| cell.key.suite.clone())
            .collect();
        suites.sort();
        suites.dedup();
        let refill = (!refill_runs.is_empty() || read.refill_note.is_some() || replaced.is_some())
            .then(|| RefillInfo {
                refill_runs: refill_runs
                    .iter()
                    .cloned()
                    .chain(note_refills.iter().cloned())
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect(),
                refilled_cells: run_cells.iter().filter(|cell| cell.refilled).count() as u32,
                refill_rows,
                note: read.refill_note.clone(),
            });
        runs.push(RunInfo {
            run_id: run_id.clone(),
            path: read.dir.relative.clone(),
            role,
            refill_of: refill_of.get(&run_id).cloned(),
            manifest_status: read
                .manifest
                .as_ref()
                .and_then(|manifest| manifest.status.clone()),
            has_plan: read.plan.is_some(),
            census,
            metrics: read.digest.clone(),
            files: read.files.clone(),
            refill,
            backups: backups_by_master.remove(&run_id).unwrap_or_default(),
            exclusions: exclusion_counts,
            suites,
        });
        match role {
            RunRole::Run => cells.extend(run_cells),
            RunRole::Refill => refill_cells.extend(run_cells),
        }
    }

    // A refill run's cells must stand in its master; otherwise its data is in neither table.
    for run in &runs {
        let (RunRole::Refill, Some(master)) = (run.role, &run.refill_of) else {
            continue;
        };
        let landed: BTreeSet<(&str, &str, &str, &str, &str, u32, u32)> = cells
            .iter()
            .filter(|cell| &cell.key.run_id == master && cell.refilled)
            .map(|cell| {
                (
                    cell.key.suite.as_str(),
                    cell.key.phase.as_str(),
                    cell.key.backend.as_str(),
                    cell.key.model.as_str(),
                    cell.key.workload.as_str(),
                    cell.key.n,
                    cell.key.rep,
                )
            })
            .collect();
        let missing: Vec<&CellSummary> = refill_cells
            .iter()
            .filter(|cell| cell.key.run_id == run.run_id && cell.has_data())
            .filter(|cell| {
                !landed.contains(&(
                    cell.key.suite.as_str(),
                    cell.key.phase.as_str(),
                    cell.key.backend.as_str(),
                    cell.key.model.as_str(),
                    cell.key.workload.as_str(),
                    cell.key.n,
                    cell.key.rep,
                ))
            })
            .collect();
        if !missing.is_empty() {
            warnings.push(
                Warning::error(
                    "refill_not_spliced",
                    format!(
                        "{} cell(s) of this refill run are not spliced into master {master} (first: {}); their rows are in neither table",
                        missing.len(),
                        missing[0].key
                    ),
                )
                .run(&run.run_id),
            );
        }
    }
    for (master, _) in backups_by_master {
        // Backups whose master is missing were already reported as orphans.
        let _ = master;
    }
    cells.sort_by(|left, right| left.key.cmp(&right.key));
    refill_cells.sort_by(|left, right| left.key.cmp(&right.key));
    pre_refill_cells.sort_by(|left, right| left.key.cmp(&right.key));
    fill_scaling(&mut cells);
    fill_scaling(&mut refill_cells);
    warnings.sort_by(|left, right| {
        (&left.run, &left.file, left.line).cmp(&(&right.run, &right.file, right.line))
    });
    warnings.dedup();
    Ok(Index {
        root: root.to_path_buf(),
        runs,
        cells,
        refill_cells,
        pre_refill_cells,
        provenance,
        exclusions,
        warnings,
        rows: locators,
        elapsed: started.elapsed(),
    })
}

fn census(cells: &[CellSummary], malformed_rows: u64) -> Census {
    let mut census = Census {
        cells_by_status: CellStatus::ALL
            .iter()
            .map(|status| (status.as_str().to_string(), 0))
            .collect(),
        malformed_rows,
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
