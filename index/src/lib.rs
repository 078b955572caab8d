//! The index: every run under a data root, its cells with statuses and metrics, provenance and warnings.
//!
//! Indexing never fails as a whole. [`build`] returns an [`Index`] plus warnings naming run, file and line;
//! only a missing data root is an error. It runs in named stages, each in its own modules with their own tests:
//! discover (one list of the runs every format finds, backups among them, with ledgers and `cellscope.toml`) → read
//! every run and backup through its format (one module per format, the records they give made into cells once for
//! all of them, with the [`cache`] of read results) → relate them: refill lineage, copies, backup comparisons →
//! each run's cells and facts → the assembled, scaled index. Below every stage are the [`storage`] seam every file
//! is read through, by its path relative to the data root, the readers several formats share and the types the
//! stages hand each other. A module imports only from its own stage or the ones below it. Files are parsed in
//! parallel; the data root is only ever read.
//!
//! The public surface is what the server, the CLI, the tests and `fuzz/` use:
//! - [`build`] and [`build_cached`] with [`IndexOptions`] and [`Progress`] (or [`Quiet`]), giving an [`Index`] or
//!   an [`IndexError`]; [`read_rows`] reads a cell's rows back by its [`CellRows`], failing with [`RowsError`];
//! - [`explain`] (`cellscope index --explain`), [`relative_path`], [`format_names`] and [`READ_CODE`];
//! - [`storage`] (the [`storage::Storage`] seam and [`storage::LocalDisk`]), [`cache`] (the [`cache::RunCache`],
//!   its [`cache::CacheStore`] seam, [`cache::Trust`] and [`cache::CacheReport`]) and [`hex`];
//! - `fuzzing`, the fuzz targets' bodies, with the `fuzzing` feature.
//!
//! Every other module is the crate's own.

pub mod cache;
mod cells;
mod discover;
mod formats;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod hex;
mod ledger;
mod lineage;
mod mapping;
mod parse;
mod read;
mod records;
mod run;
pub mod storage;

pub use cache::READ_CODE;
pub use discover::relative_path;
pub use read::explain;
pub use run::rows::{CellRows, RowsError};
pub use run::{IndexOptions, Progress, Quiet};

use cellscope_model::api::{CellProvenance, LedgerEntry, RunFacts, Warning};
use cellscope_model::summary::{fill_output_per_accelerator, fill_scaling};
use cellscope_model::{CellKey, CellSummary};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Errors that stop indexing altogether.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("data directory {0} does not exist")]
    RootMissing(PathBuf),
    #[error("{0} is not a directory")]
    RootNotDirectory(PathBuf),
}

/// The request rows of one cell, read back by the format that indexed it.
pub fn read_rows(
    storage: &dyn storage::Storage,
    cell: &CellRows,
) -> Result<Vec<cellscope_model::requests::RequestRow>, RowsError> {
    formats::by_name(cell.format)
        .ok_or_else(|| RowsError::Malformed {
            path: cell.file.clone(),
            message: format!("no reader for the format {}", cell.format),
        })?
        .read_rows(storage, cell)
}

/// The name of every format the index reads, as the audit, the inspector and `cellscope index --explain` show it.
pub fn format_names() -> impl Iterator<Item = &'static str> {
    formats::all().map(|format| format.name())
}

pub struct Index {
    pub root: PathBuf,
    pub runs: Vec<RunFacts>,
    /// One row per cell of every run, sorted by key; cells a refill spliced into a master are the master's.
    pub cells: Vec<CellSummary>,
    /// The cells of refill runs that stand in their masters, kept for provenance (their rows are already in
    /// the masters' cells).
    pub refill_cells: Vec<CellSummary>,
    /// Refilled cells as they were before the refill (from the backup), keyed like the master's cells; for the
    /// "use pre-refill rows" what-if. Scaling metrics are left empty: the browser recomputes them.
    pub pre_refill_cells: Vec<CellSummary>,
    /// The statuses of the non-ok rows each refilled cell had before the refill (second stage only, like
    /// `pre_refill_cells`; kept apart from `provenance` so that stage does not change the snapshot id).
    pub pre_refill_failed: BTreeMap<CellKey, BTreeMap<String, u32>>,
    pub provenance: BTreeMap<CellKey, CellProvenance>,
    pub exclusions: Vec<LedgerEntry>,
    pub warnings: Vec<Warning>,
    pub rows: BTreeMap<CellKey, CellRows>,
    pub elapsed: Duration,
    /// What the index did with the cache of read results, when it had one.
    pub cache: Option<cache::CacheReport>,
}

impl Index {
    pub fn run(&self, run_id: &str) -> Option<&RunFacts> {
        self.runs.iter().find(|run| run.run_id == run_id)
    }
}

/// Builds the index of everything under `root`.
pub fn build(
    root: &Path,
    options: &IndexOptions,
    progress: &dyn Progress,
) -> Result<Index, IndexError> {
    build_with(root, options, progress, None)
}

/// [`build`] taking each run's and backup's read from `cache` when its entry is trusted as `trust` says, and
/// saving the reads it makes (when `options` ask for everything). The index equals the one [`build`] gives.
pub fn build_cached(
    root: &Path,
    options: &IndexOptions,
    progress: &dyn Progress,
    cache: &cache::RunCache,
    trust: cache::Trust,
) -> Result<Index, IndexError> {
    build_with(root, options, progress, Some((cache, trust)))
}

fn build_with(
    root: &Path,
    options: &IndexOptions,
    progress: &dyn Progress,
    cache: Option<(&cache::RunCache, cache::Trust)>,
) -> Result<Index, IndexError> {
    let started = Instant::now();
    if !root.exists() {
        return Err(IndexError::RootMissing(root.to_path_buf()));
    }
    if !root.is_dir() {
        return Err(IndexError::RootNotDirectory(root.to_path_buf()));
    }
    let disk = storage::LocalDisk::new(root);
    let discovery = discover::discover(&disk, &formats::Registry);
    let mut warnings = discovery.warnings.clone();
    let mapping = discovery
        .mapping
        .as_deref()
        .map(|text| mapping::Mapping::parse(text, "cellscope.toml", &mut warnings))
        .unwrap_or_default();
    let files = discovery.runs.iter().flat_map(|run| &run.files);
    let total_bytes: u64 = files
        .clone()
        .filter_map(|file| storage::Storage::stat(&disk, file).ok())
        .map(|meta| meta.bytes)
        .sum();
    progress.files_found(files.count() as u64, total_bytes);
    let session =
        cache.map(|(cache, trust)| cache::Session::new(cache, trust, discovery.mapping.as_deref()));
    let context = run::ReadContext {
        storage: &disk,
        mapping: &mapping,
        options,
        progress,
    };
    let reads = read::read_all(&discovery.runs, &context, session.as_ref());
    warnings.extend(reads.warnings.iter().cloned());
    let report = session.map(|session| {
        let (report, stale) = session.finish();
        warnings.extend(stale);
        report
    });
    let relations = lineage::relate(&disk, &reads.runs, reads.backups);
    warnings.extend(relations.warnings.iter().cloned());
    let mut exclusions = ledger::load_all(&disk, &discovery.ledgers, &mut warnings);
    let mut index = assemble(root, reads.runs, &relations, &mut exclusions, warnings);
    index.exclusions = exclusions;
    index.cache = report;
    index.elapsed = started.elapsed();
    Ok(index)
}

/// The last stage: every run's cells and facts into one index, sorted, with scaling metrics filled in.
fn assemble(
    root: &Path,
    mut runs: Vec<run::RunRead>,
    relations: &lineage::Relations,
    ledger: &mut [LedgerEntry],
    mut warnings: Vec<Warning>,
) -> Index {
    let mut index = Index {
        root: root.to_path_buf(),
        runs: Vec::with_capacity(runs.len()),
        cells: Vec::new(),
        refill_cells: Vec::new(),
        pre_refill_cells: Vec::new(),
        pre_refill_failed: BTreeMap::new(),
        provenance: BTreeMap::new(),
        exclusions: Vec::new(),
        warnings: Vec::new(),
        rows: BTreeMap::new(),
        elapsed: Duration::ZERO,
        cache: None,
    };
    // Sized once: growing a vector of tens of thousands of summaries copied it several times over.
    index.cells.reserve(
        runs.iter()
            .map(|read| read.metrics.as_ref().map_or(0, |parsed| parsed.cells.len()))
            .sum(),
    );
    // Runs are independent here (lineage has related them): each run's cells and facts are made in parallel, each
    // counting its own ledger matches, then put together in run order, so the index is the same as one run after
    // another would give.
    use rayon::prelude::*;
    let per_run: Vec<(cells::RunCells, RunFacts, Vec<u32>)> = runs
        .par_iter_mut()
        .map(|read| {
            let mut own_ledger = ledger.to_vec();
            for entry in &mut own_ledger {
                entry.matched_cells = 0;
            }
            let run_cells = cells::run_cells(read, relations, &mut own_ledger);
            let facts = cells::run_facts(read, &run_cells, relations);
            let matched = own_ledger.iter().map(|entry| entry.matched_cells).collect();
            (run_cells, facts, matched)
        })
        .collect();
    let mut spent = Vec::with_capacity(runs.len());
    let mut cells_of_runs = Vec::with_capacity(runs.len());
    for (mut read, (mut run_cells, facts, matched)) in runs.into_iter().zip(per_run) {
        warnings.append(&mut read.warnings);
        warnings.append(&mut run_cells.warnings);
        index.runs.push(facts);
        for (entry, count) in ledger.iter_mut().zip(matched) {
            entry.matched_cells += count;
        }
        cells_of_runs.push((read.id.clone(), run_cells));
        spent.push(read);
    }
    // Every key a run's cells carry starts with its run id, and each run's cells, provenance and row locators are
    // sorted by key: taken in run-id order they are sorted as a whole, and the sorts below only check that.
    // (In discovery order they were not, and sorting the 61,560 cells' entries of `--scale 34` moved and
    // compared each as often as the sort's depth, on one thread: about 100 ms of a 1.2 s warm start in a
    // profile.) A stable sort keeps runs of one id in discovery order, so equal keys meet in the same order as
    // before and the maps keep the same one of them.
    cells_of_runs.sort_by(|left, right| left.0.cmp(&right.0));
    // Every run's provenance and row locators are gathered first and made into their maps once: appending each
    // run's map to the growing one rebuilt it every time (`BTreeMap::append` walks both), which at 103 runs and
    // 61,560 cells moved a quarter of a million entries per run, a fifth of the cold index.
    let mut provenance: Vec<(CellKey, CellProvenance)> = Vec::with_capacity(
        cells_of_runs
            .iter()
            .map(|(_, run_cells)| run_cells.provenance.len())
            .sum(),
    );
    let mut rows: Vec<(CellKey, CellRows)> = Vec::with_capacity(
        cells_of_runs
            .iter()
            .map(|(_, run_cells)| run_cells.rows.len())
            .sum(),
    );
    for (_, run_cells) in cells_of_runs {
        index.cells.extend(run_cells.own);
        index.refill_cells.extend(run_cells.spliced);
        index.pre_refill_cells.extend(run_cells.pre_refill);
        index.pre_refill_failed.extend(run_cells.pre_refill_failed);
        provenance.extend(run_cells.provenance);
        rows.extend(run_cells.rows);
    }
    // `from_iter` sorts (here: finds the sequence sorted) and builds the tree in one pass.
    index.provenance = provenance.into_iter().collect();
    index.rows = rows.into_iter().collect();
    // Freeing what was read (every cell's maps and buffers) took 40% of this loop's time; nothing waits for it.
    std::thread::spawn(move || drop(spent));
    index.cells.sort_by(|left, right| left.key.cmp(&right.key));
    index
        .refill_cells
        .sort_by(|left, right| left.key.cmp(&right.key));
    index
        .pre_refill_cells
        .sort_by(|left, right| left.key.cmp(&right.key));
    for cells in [
        &mut index.cells,
        &mut index.refill_cells,
        &mut index.pre_refill_cells,
    ] {
        fill_output_per_accelerator(cells);
    }
    fill_scaling(&mut index.cells);
    fill_scaling(&mut index.refill_cells);
    warnings.sort_by(|left, right| {
        (&left.run, &left.file, left.line).cmp(&(&right.run, &right.file, right.line))
    });
    warnings.dedup();
    index.warnings = warnings;
    index
}
