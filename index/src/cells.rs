//! Stages 4 and 5 of indexing: each run's cells (status, expected rows, flags, exclusions, provenance, where
//! their rows are) and the run's facts (census, refill, backups), once lineage has said which cells belong to
//! which run.

use super::lineage::Relations;
use crate::ledger;
use crate::run::RunRead;
use crate::run::expected::ManifestCell;
use crate::run::parsed::ParsedMetrics;
use crate::run::rows::{CellRows, ExternalRows};
use cellscope_model::api::{
    CellProvenance, Census, HistoryEvent, LedgerEntry, RefillFacts, RunFacts, RunRole, Warning,
};
use cellscope_model::exclusions::ExclusionScope;
use cellscope_model::key::CellCoordinates;
use cellscope_model::origin::tally_inferred;
use cellscope_model::status::RowCensus;
use cellscope_model::summary::{ExpectedSource, expected_rows, inferred_requests_per_agent};
use cellscope_model::{CellKey, CellStatus, CellSummary};
use std::collections::{BTreeMap, BTreeSet};

/// One run's contribution to the index.
#[derive(Default)]
pub(crate) struct RunCells {
    /// Cells of the main table (a refill run keeps here the cells that were not spliced into its master).
    pub own: Vec<CellSummary>,
    /// A refill run's cells that stand in its master, kept for provenance.
    pub spliced: Vec<CellSummary>,
    /// Refilled cells as they were before the refill, from the master's backup.
    pub pre_refill: Vec<CellSummary>,
    /// The statuses of the non-ok rows the refilled cells had before the refill, from the backup.
    pub pre_refill_failed: Vec<(CellKey, BTreeMap<String, u32>)>,
    pub provenance: BTreeMap<CellKey, CellProvenance>,
    /// Each cell's row locators (one per cell), sorted by key: the index puts all runs' into one map at once, so
    /// a map per run would only be built to be taken apart.
    pub rows: Vec<(CellKey, CellRows)>,
    pub warnings: Vec<Warning>,
}

/// The cells of one run. `ledger` entries that match a cell of the main table count it.
///
/// Each cell's row offsets are moved out of `read` into the index's [`CellRows`] (they are the largest part of
/// a parse, 8 bytes a row, and nothing after this stage reads them from `read`).
pub(crate) fn run_cells(
    read: &mut RunRead,
    relations: &Relations,
    ledger: &mut [LedgerEntry],
) -> RunCells {
    let mut out = RunCells::default();
    if relations.lineage.copy_of.contains_key(read.id.as_str()) {
        return out;
    }
    let (mut row_offsets, mut histories) = take_offsets_and_histories(read);
    let empty = ParsedMetrics::default();
    let run = Run::new(read, relations, &empty);
    run.warn_skip_rows_with_data(&mut out.warnings);
    let mut cells = run.cells_with_rows(&mut row_offsets, &mut out.provenance);
    run.add_not_run(&mut cells);
    run.expect_and_classify(&mut cells, &mut histories, ledger, &mut out);
    run.pre_refill(&cells, &mut out);
    // Taken in order of coordinates, which within one run is the order of keys: the row locators come out sorted,
    // as the index's merge of every run's expects (see `assemble`).
    out.rows.reserve(run.parsed.cells.len());
    for (coordinates, RunCell { summary, parsed }) in cells {
        if let Some((_, rows)) = parsed {
            out.rows.push((summary.key.clone(), rows));
        }
        if run.spliced_away(&coordinates) {
            out.spliced.push(summary);
        } else {
            out.own.push(summary);
        }
    }
    out
}

/// Each parsed cell's row offsets, and each manifest cell's history, moved out of `read`: the offsets go to the
/// row locators, the histories to the cells' provenance, and nothing after this stage reads either from `read`
/// (copying every event's texts was a tenth of this stage). Histories are in the manifest's order (by
/// coordinates), so that the walk over the run's cells finds each by the manifest cell's position.
fn take_offsets_and_histories(read: &mut RunRead) -> (Vec<Vec<u64>>, Vec<Vec<HistoryEvent>>) {
    let row_offsets = read.metrics.as_mut().map_or_else(
        |_| Vec::new(),
        |parsed| {
            parsed
                .cells
                .iter_mut()
                .map(|(_, cell)| std::mem::take(&mut cell.row_offsets))
                .collect()
        },
    );
    let histories = read
        .manifest
        .as_mut()
        .map(|manifest| {
            manifest
                .cells
                .values_mut()
                .map(|cell| std::mem::take(&mut cell.history))
                .collect()
        })
        .unwrap_or_default();
    (row_offsets, histories)
}

/// One run while its cells are made: its read, its parse (empty when its file was rejected) and what lineage
/// says of it.
struct Run<'r> {
    read: &'r RunRead,
    relations: &'r Relations,
    parsed: &'r ParsedMetrics,
    run_id: &'r str,
    rows_file: String,
}

impl<'r> Run<'r> {
    fn new(read: &'r RunRead, relations: &'r Relations, empty: &'r ParsedMetrics) -> Run<'r> {
        Run {
            read,
            relations,
            parsed: read.metrics.as_ref().unwrap_or(empty),
            run_id: read.id.as_str(),
            rows_file: read.rows_file.clone(),
        }
    }

    /// Whether a refill run's cell at `coordinates` is spliced into its master (and so not in the main table).
    fn spliced_away(&self, coordinates: &CellCoordinates) -> bool {
        self.relations.lineage.is_spliced(self.run_id, coordinates)
    }

    /// A cell with a skip sentinel and real rows: said, and its real rows used.
    fn warn_skip_rows_with_data(&self, warnings: &mut Vec<Warning>) {
        for (coordinates, parsed_cell) in &self.parsed.cells {
            if parsed_cell.skip_rows > 0 && parsed_cell.rows > 0 {
                warnings.push(
                    Warning::warn(
                        "skip_row_with_data",
                        format!(
                            "cell {} has a skip sentinel and {} real rows; the real rows are used",
                            CellKey::new(self.run_id, coordinates),
                            parsed_cell.rows
                        ),
                    )
                    .run(self.run_id)
                    .file(&self.rows_file)
                    .line(parsed_cell.first_line),
                );
            }
        }
    }

    /// The run's cells with rows, by coordinates, each with where its rows are and its place in the parse (for
    /// naming the first of them in a warning); another tool's cells' origin and every failed cell's statuses go
    /// to `provenance`.
    ///
    /// Made in order of coordinates, so that the run's cells can be walked beside the plan's and the manifest's
    /// (all three sorted) instead of being looked up in each other cell by cell. The parse's order is sorted by
    /// position (the summaries are too large to move about in a sort). A TR164 parse holds each cell once;
    /// another tool's files can name one twice, and then the later one stands, as in a map filled in parse order
    /// (the stable sort keeps parse order among equals, and the last of them is kept).
    fn cells_with_rows(
        &self,
        row_offsets: &mut [Vec<u64>],
        provenance: &mut BTreeMap<CellKey, CellProvenance>,
    ) -> Vec<(CellCoordinates, RunCell)> {
        let cells = &self.parsed.cells;
        let mut order: Vec<usize> = (0..cells.len()).collect();
        order.sort_by(|&left, &right| cells[left].0.cmp(&cells[right].0));
        order.dedup_by(|later, earlier| {
            let same = cells[*later].0 == cells[*earlier].0;
            if same {
                *earlier = *later;
            }
            same
        });
        let refills: BTreeSet<&String> = self.relations.lineage.refills_of(self.run_id).collect();
        order
            .into_iter()
            .map(|parse_index| {
                let offsets = std::mem::take(&mut row_offsets[parse_index]);
                let cell = self.cell_with_rows(parse_index, offsets, &refills, provenance);
                (cells[parse_index].0.clone(), cell)
            })
            .collect()
    }

    /// The cell at `parse_index` of the parse, with its rows at `offsets`.
    fn cell_with_rows(
        &self,
        parse_index: usize,
        offsets: Vec<u64>,
        refills: &BTreeSet<&String>,
        provenance: &mut BTreeMap<CellKey, CellProvenance>,
    ) -> RunCell {
        let (coordinates, parsed_cell) = &self.parsed.cells[parse_index];
        let mut summary =
            CellSummary::empty(CellKey::new(self.run_id, coordinates), CellStatus::NotRun);
        summary.rows = parsed_cell.rows;
        summary.ok_rows = parsed_cell.ok_rows;
        summary.failed_rows = parsed_cell.failed_rows;
        summary.skip_rows = parsed_cell.skip_rows;
        summary.stats = parsed_cell.stats;
        if let Some(external) = &parsed_cell.external {
            summary.origin = external.figures.clone();
        }
        // Refilled: rows of a refill run of this master stand in it, spliced whole.
        summary.source_run_id = parsed_cell
            .row_run_ids
            .keys()
            .find(|id| refills.contains(id) && self.relations.lineage.is_spliced(id, coordinates))
            .cloned();
        summary.refilled = summary.source_run_id.is_some();
        let rows = self.rows_of(coordinates, parse_index, offsets, summary.refilled);
        if let Some(external) = &parsed_cell.external {
            provenance.entry(summary.key.clone()).or_default().origin =
                Some(external.origin.clone());
        }
        if !parsed_cell.failed_by_status.is_empty() {
            provenance
                .entry(summary.key.clone())
                .or_default()
                .failed_by_status = parsed_cell.failed_by_status.clone();
        }
        RunCell {
            summary,
            parsed: Some((parse_index, rows)),
        }
    }

    /// Where the rows of the cell at `parse_index` are: its rows of the metrics file (and, refilled, those the
    /// refill replaced in the backup), or the record of another tool's file that holds them.
    fn rows_of(
        &self,
        coordinates: &CellCoordinates,
        parse_index: usize,
        offsets: Vec<u64>,
        refilled: bool,
    ) -> CellRows {
        let parsed_cell = &self.parsed.cells[parse_index].1;
        if let Some(external) = &parsed_cell.external {
            return CellRows {
                format: external.format,
                file: external.file.clone(),
                file_bytes: external.file_bytes,
                offsets,
                first_line: None,
                backup: None,
                external: Some(ExternalRows {
                    format: external.format,
                    run_id: self.run_id.to_string(),
                    file: external.file.clone(),
                    record: external.record,
                }),
            };
        }
        let backup = self
            .relations
            .replaced
            .get(self.run_id)
            .filter(|_| refilled)
            .and_then(|(path, bytes, offsets)| {
                offsets
                    .get(coordinates)
                    .map(|offsets| (path.clone(), *bytes, offsets.clone()))
            });
        CellRows {
            format: self.read.format,
            file: self.rows_file.clone(),
            file_bytes: self.read.digest.bytes,
            first_line: (!offsets.is_empty()).then_some(parsed_cell.first_row_line),
            offsets,
            backup,
            external: None,
        }
    }

    /// Planned and manifest cells that the metrics file lacks: added as `not_run`, in order of coordinates.
    fn add_not_run(&self, cells: &mut Vec<(CellCoordinates, RunCell)>) {
        let planned = self.read.plan.iter().flat_map(|plan| plan.cells.keys());
        let in_manifest = self
            .read
            .manifest
            .iter()
            .flat_map(|manifest| manifest.cells.keys());
        let mut missing: Vec<&CellCoordinates> = Vec::new();
        not_among(cells, planned, &mut missing);
        not_among(cells, in_manifest, &mut missing);
        if missing.is_empty() {
            return;
        }
        missing.sort_unstable();
        missing.dedup();
        cells.extend(missing.into_iter().map(|coordinates| {
            (
                coordinates.clone(),
                RunCell {
                    summary: CellSummary::empty(
                        CellKey::new(self.run_id, coordinates),
                        CellStatus::NotRun,
                    ),
                    parsed: None,
                },
            )
        }));
        cells.sort_by(|left, right| left.0.cmp(&right.0));
    }

    /// The request count another tool's file states for each cell (the first cell read at those coordinates),
    /// looked up once per cell: a scan of the run's cells for each would cost a TR164 sweep of 900 cells 800,000
    /// comparisons, and TR164 files state none.
    fn expected_in_file(&self) -> BTreeMap<&'r CellCoordinates, Option<u32>> {
        let mut expected: BTreeMap<&CellCoordinates, Option<u32>> = BTreeMap::new();
        if self
            .parsed
            .cells
            .iter()
            .any(|(_, cell)| cell.external.is_some())
        {
            for (coordinates, cell) in &self.parsed.cells {
                expected.entry(coordinates).or_insert_with(|| {
                    cell.external
                        .as_ref()
                        .and_then(|external| external.expected_rows)
                });
            }
        }
        expected
    }

    /// Every cell's expected rows, status, fallback, manifest status and history and exclusions, walking the run's
    /// cells beside the plan's and the manifest's; cells with rows that the plan does not list are said in one
    /// warning, before the walk's own.
    fn expect_and_classify(
        &self,
        cells: &mut [(CellCoordinates, RunCell)],
        histories: &mut [Vec<HistoryEvent>],
        ledger: &mut [LedgerEntry],
        out: &mut RunCells,
    ) {
        // A cell that lost rows as malformed counts as one with failures: its remaining rows say nothing about
        // how many the run meant each agent to send. Another tool's records expect only the count they state:
        // their cells are independent runs, so one cell's size says nothing about another's.
        let external = self
            .parsed
            .cells
            .iter()
            .any(|(_, cell)| cell.external.is_some());
        let inferred = if external {
            None
        } else {
            inferred_requests_per_agent(self.parsed.cells.iter().map(|(coordinates, cell)| {
                (
                    coordinates.load.concurrency().unwrap_or(0),
                    cell.rows,
                    cell.failed_rows + cell.malformed_rows,
                )
            }))
        };
        let expected_in_file = self.expected_in_file();
        let has_plan = self
            .read
            .plan
            .as_ref()
            .is_some_and(|plan| !plan.cells.is_empty());
        let unplanned_at = out.warnings.len();
        // How many cells ran unplanned, and the place in the parse of the first of them in the file.
        let mut unplanned_cells = 0usize;
        let mut first_unplanned: Option<usize> = None;
        let mut manifest_cells =
            SortedLookup::new(self.read.manifest.as_ref().map(|manifest| &manifest.cells));
        let mut plan_cells = SortedLookup::new(self.read.plan.as_ref().map(|plan| &plan.cells));
        for (coordinates, RunCell { summary, parsed }) in cells.iter_mut() {
            let manifest_cell: Option<&ManifestCell> = manifest_cells.get(coordinates);
            let in_plan = plan_cells.get(coordinates);
            if has_plan
                && in_plan.is_none()
                && let Some((parse_index, _)) = parsed
            {
                unplanned_cells += 1;
                first_unplanned =
                    Some(first_unplanned.map_or(*parse_index, |first| first.min(*parse_index)));
            }
            let expected = Expected {
                from_plan: in_plan.copied().flatten(),
                // Another tool's own request count (vLLM `num_prompts`) stands where a manifest's would.
                from_file: expected_in_file.get(coordinates).copied().flatten(),
                inferred,
            };
            self.classify(
                summary,
                coordinates,
                manifest_cell,
                expected,
                &mut out.warnings,
            );
            if let Some(cell) = manifest_cell {
                let history = histories
                    .get_mut(manifest_cells.passed.saturating_sub(1))
                    .map(std::mem::take)
                    .unwrap_or_default();
                let provenance = out.provenance.entry(summary.key.clone()).or_default();
                provenance.manifest_status = cell.status.clone();
                provenance.history = history;
            }
            self.exclude(summary, coordinates, ledger);
        }
        if let Some(first) = first_unplanned {
            out.warnings
                .insert(unplanned_at, self.unplanned(unplanned_cells, first));
        }
    }

    /// A cell's expected rows (from the plan, the manifest or the file, else inferred), fallback and status, with
    /// a warning when it has more rows than expected.
    fn classify(
        &self,
        summary: &mut CellSummary,
        coordinates: &CellCoordinates,
        manifest_cell: Option<&ManifestCell>,
        expected: Expected,
        warnings: &mut Vec<Warning>,
    ) {
        (summary.expected_rows, summary.expected_source) = expected_rows(
            expected.from_plan,
            manifest_cell
                .and_then(|cell| cell.expected_rows)
                .or(expected.from_file),
            expected.inferred,
            coordinates.load.concurrency().unwrap_or(0),
        );
        if expected.from_file.is_some() && summary.expected_source == ExpectedSource::Manifest {
            summary.expected_source = ExpectedSource::File;
        }
        summary.fallback = manifest_cell.is_some_and(|cell| cell.fallback);
        summary.status = CellStatus::classify(RowCensus {
            expected_rows: summary.expected_rows,
            rows: summary.rows,
            ok_rows: summary.ok_rows,
            failed_rows: summary.failed_rows,
            skip_rows: summary.skip_rows,
        });
        // A tool's figures without a request count (an aggregate row) are a measurement, not a cell never run.
        if summary.status == CellStatus::NotRun
            && summary.rows == 0
            && !summary.origin.reported.is_empty()
        {
            summary.status = CellStatus::Clean;
        }
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
                .run(self.run_id)
                .file(&self.rows_file),
            );
        }
    }

    /// The ledger entries that apply to a cell, each counting it when the cell is in the main table.
    fn exclude(
        &self,
        summary: &mut CellSummary,
        coordinates: &CellCoordinates,
        ledger: &mut [LedgerEntry],
    ) {
        let in_main_table = !self.spliced_away(coordinates);
        let mut matched: Vec<(String, ExclusionScope)> = Vec::new();
        for entry in ledger.iter_mut() {
            if ledger::applies_to(&entry.applies_under, &self.read.root)
                && entry.entry.matches(&summary.key)
            {
                entry.matched_cells += u32::from(in_main_table);
                matched.push((entry.entry.id.clone(), entry.entry.scope));
            }
        }
        summary.excluded = matched.iter().map(|(id, _)| id.clone()).collect();
        summary.exclusion_scope = matched.iter().map(|(_, scope)| *scope).max();
    }

    /// The warning that `count` cells have rows but are not in the plan, naming the first in the file.
    fn unplanned(&self, count: usize, first: usize) -> Warning {
        let (coordinates, first_cell) = &self.parsed.cells[first];
        Warning::warn(
            "unplanned_cells",
            format!(
                "{count} cell(s) have rows but are not in execution_plan.json (the first: {}); they are indexed \
                 from their rows, with expected rows from the manifest or inferred",
                CellKey::new(self.run_id, coordinates)
            ),
        )
        .run(self.run_id)
        .file(&self.rows_file)
        .line(first_cell.first_row_line)
    }

    /// Refilled cells as they were before the refill, from the master's backup, with the statuses of their
    /// non-ok rows then.
    fn pre_refill(&self, cells: &[(CellCoordinates, RunCell)], out: &mut RunCells) {
        let Some(backup) = self.relations.backup_cells.get(self.run_id) else {
            return;
        };
        for (coordinates, parsed_cell) in &backup.cells {
            let Ok(at) = cells.binary_search_by(|(candidate, _)| candidate.cmp(coordinates)) else {
                continue;
            };
            let current = &cells[at].1.summary;
            if !current.refilled {
                continue;
            }
            if !parsed_cell.failed_by_status.is_empty() {
                out.pre_refill_failed
                    .push((current.key.clone(), parsed_cell.failed_by_status.clone()));
            }
            let mut before = current.clone();
            before.rows = parsed_cell.rows;
            before.ok_rows = parsed_cell.ok_rows;
            before.failed_rows = parsed_cell.failed_rows;
            before.skip_rows = parsed_cell.skip_rows;
            before.stats = parsed_cell.stats;
            before.refilled = false;
            before.source_run_id = None;
            before.efficiency = None;
            before.p95_multiplier = None;
            before.baseline_fallback = false;
            before.status = CellStatus::classify(RowCensus {
                expected_rows: before.expected_rows,
                rows: before.rows,
                ok_rows: before.ok_rows,
                failed_rows: before.failed_rows,
                skip_rows: before.skip_rows,
            });
            out.pre_refill.push(before);
        }
    }
}

/// Where a cell's expected rows may come from besides its manifest: the plan, another tool's file, the run's
/// inferred requests per agent.
#[derive(Clone, Copy)]
struct Expected {
    from_plan: Option<u32>,
    from_file: Option<u32>,
    inferred: Option<u32>,
}

/// Pushes to `missing` each of `listed` (ascending) that is not among `cells` (sorted by coordinates): one walk
/// of both instead of a search per listed cell.
fn not_among<'a>(
    cells: &[(CellCoordinates, RunCell)],
    listed: impl Iterator<Item = &'a CellCoordinates>,
    missing: &mut Vec<&'a CellCoordinates>,
) {
    let mut with_rows = cells.iter().map(|(coordinates, _)| coordinates).peekable();
    for coordinates in listed {
        while with_rows
            .next_if(|candidate| *candidate < coordinates)
            .is_some()
        {}
        if with_rows.peek() != Some(&coordinates) {
            missing.push(coordinates);
        }
    }
}

/// One cell of a run while its run's cells are made: the summary, and for a cell with rows its place in the parse
/// and where its rows are.
struct RunCell {
    summary: CellSummary,
    parsed: Option<(usize, CellRows)>,
}

/// Finds keys in a sorted map when they are asked for in ascending order, walking the map once.
struct SortedLookup<'a, K, V> {
    entries: Option<std::iter::Peekable<std::collections::btree_map::Iter<'a, K, V>>>,
    /// How many entries were passed: after [`SortedLookup::get`] found one, its position in the map plus one.
    passed: usize,
}

impl<'a, K: Ord, V> SortedLookup<'a, K, V> {
    fn new(map: Option<&'a BTreeMap<K, V>>) -> Self {
        SortedLookup {
            entries: map.map(|map| map.iter().peekable()),
            passed: 0,
        }
    }

    /// The value at `key`; every key asked for must be greater than the one before.
    fn get(&mut self, key: &K) -> Option<&'a V> {
        let entries = self.entries.as_mut()?;
        while let Some((candidate, _)) = entries.peek() {
            match (*candidate).cmp(key) {
                std::cmp::Ordering::Less => {
                    entries.next();
                    self.passed += 1;
                }
                std::cmp::Ordering::Equal => {
                    self.passed += 1;
                    return entries.next().map(|(_, value)| value);
                }
                std::cmp::Ordering::Greater => return None,
            }
        }
        None
    }
}

/// The facts of one run: census over all its cells, refill lineage, backups and ledger matches.
pub(crate) fn run_facts(read: &RunRead, cells: &RunCells, relations: &Relations) -> RunFacts {
    let run_id = read.id.as_str();
    let all: Vec<&CellSummary> = cells.own.iter().chain(&cells.spliced).collect();
    let (malformed_rows, failed_by_status) = match &read.metrics {
        Ok(parsed) => {
            let mut failed: BTreeMap<String, u64> = BTreeMap::new();
            for (_, cell) in &parsed.cells {
                for (status, count) in &cell.failed_by_status {
                    *failed.entry(status.clone()).or_default() += u64::from(*count);
                }
            }
            (parsed.malformed_rows, failed)
        }
        Err(_) => (0, BTreeMap::new()),
    };
    let copy_of = relations.lineage.copy_of.get(run_id).cloned();
    let census = if copy_of.is_some() {
        Census::of([], 0, BTreeMap::new())
    } else {
        Census::of(all.iter().copied(), malformed_rows, failed_by_status)
    };
    let mut exclusions: BTreeMap<String, u32> = BTreeMap::new();
    for cell in &all {
        for id in &cell.excluded {
            *exclusions.entry(id.clone()).or_default() += 1;
        }
    }
    let mut suites: Vec<String> = all.iter().map(|cell| cell.key.suite.clone()).collect();
    suites.sort();
    suites.dedup();
    let refill_runs: Vec<String> = relations.lineage.refills_of(run_id).cloned().collect();
    let backups = relations.backups.get(run_id).cloned().unwrap_or_default();
    let refill_ids = &refill_runs;
    let refill_rows: u64 = read.metrics.as_ref().map_or(0, |parsed| {
        parsed
            .cells
            .iter()
            .flat_map(|(coordinates, cell)| {
                cell.row_run_ids.iter().filter(move |(id, _)| {
                    refill_ids.contains(id) && relations.lineage.is_spliced(id, coordinates)
                })
            })
            .map(|(_, count)| u64::from(count.rows))
            .sum()
    });
    let refill =
        (!refill_runs.is_empty() || read.note.is_some() || !backups.is_empty()).then(|| {
            RefillFacts {
                refilled_cells: all.iter().filter(|cell| cell.refilled).count() as u32,
                refill_runs: refill_runs.clone(),
                refill_rows,
                note: read.note.as_ref().map(|note| note.text.clone()),
            }
        });
    let refill_of = relations.lineage.refill_of.get(run_id).cloned();
    let role = match (&refill_of, &copy_of) {
        (_, Some(_)) => RunRole::Copy,
        (Some(_), None) => RunRole::Refill,
        (None, None) => RunRole::Run,
    };
    RunFacts {
        run_id: run_id.to_string(),
        path: read.root.clone(),
        role,
        refill_of,
        copy_of,
        manifest_status: read
            .manifest
            .as_ref()
            .and_then(|manifest| manifest.status.clone()),
        has_plan: read.plan.is_some(),
        census,
        metrics: read.digest.clone(),
        files: read.files.clone(),
        refill,
        backups,
        exclusions,
        suites,
        environment: read.environment.clone(),
        inferred: tally_inferred(
            cells
                .provenance
                .values()
                .filter_map(|provenance| provenance.origin.as_ref()),
        ),
        started: read.started.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lineage;
    use crate::run::{IndexOptions, RunRead};
    use crate::storage::LocalDisk;
    use cellscope_model::exclusions::{ExclusionEntry, Selector, SelectorValue};

    const HEADER: &str = "run_id,suite,phase,backend,model,workload,n_agents,rep,agent_id,request_id,request_sequence,wall_ms,prompt_tokens,completion_tokens,submit_time_s,complete_time_s,status";

    fn row(n: u32, agent: u32, status: &str) -> String {
        format!("r1,s,scaling,b,m,w,{n},0,{agent},{agent},{agent},100.0,10,10,1.0,2.0,{status}")
    }

    /// A run with a clean N=1 cell, a short N=2 cell, a failed N=4 cell and a planned N=8 cell without rows.
    fn run() -> (tempfile::TempDir, RunRead) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("r1");
        std::fs::create_dir(&dir).unwrap();
        let mut rows = vec![HEADER.to_string(), row(1, 1, "ok")];
        rows.push(row(2, 1, "ok"));
        rows.extend((1..=4).map(|agent| row(4, agent, if agent == 1 { "http_400" } else { "ok" })));
        std::fs::write(dir.join("metrics.csv"), rows.join("\n") + "\n").unwrap();
        std::fs::write(
            dir.join("execution_plan.json"),
            r#"{"cells": [{"suite": "s", "phase": "scaling", "backend": "b", "model": "m", "workload": "w", "n_agents": 8, "rep": 0}]}"#,
        )
        .unwrap();
        let read = read_r1(root.path());
        (root, read)
    }

    /// The run directory `r1`, the only run under `root`, read as an index reads it, with every option.
    fn read_r1(root: &std::path::Path) -> RunRead {
        let mut reads = crate::read::read_root(root, &IndexOptions::default());
        assert_eq!(reads.runs.len(), 1);
        let read = reads.runs.remove(0);
        assert_eq!(read.id, "r1");
        read
    }

    #[test]
    fn a_runs_cells_get_statuses_expectations_exclusions_and_facts() {
        let (root, mut read) = run();
        assert!(read.warnings.is_empty(), "{:?}", read.warnings);
        let disk = LocalDisk::new(root.path());
        let relations = lineage::relate(&disk, std::slice::from_ref(&read), Vec::new());
        let mut ledger = vec![LedgerEntry {
            entry: ExclusionEntry {
                id: "n4".into(),
                select: [("n".to_string(), Selector::One(SelectorValue::Number(4)))]
                    .into_iter()
                    .collect(),
                scope: ExclusionScope::All,
                reason: String::new(),
                source: None,
                decided: None,
            },
            file: "exclusions.toml".into(),
            applies_under: String::new(),
            matched_cells: 0,
        }];
        let cells = run_cells(&mut read, &relations, &mut ledger);
        let by_n: BTreeMap<u32, &CellSummary> = cells
            .own
            .iter()
            .map(|cell| (cell.key.n().unwrap(), cell))
            .collect();
        // One request per agent, inferred from the clean N=1 cell (the uneven N=2 and the failed N=4 do not
        // vote): the N=2 cell is short.
        assert_eq!(by_n[&1].status, CellStatus::Clean);
        assert_eq!(
            (by_n[&2].status, by_n[&2].expected_rows),
            (CellStatus::Partial, Some(2))
        );
        assert_eq!(by_n[&4].status, CellStatus::Failed);
        assert_eq!(by_n[&4].exclusion_scope, Some(ExclusionScope::All));
        assert_eq!(by_n[&8].status, CellStatus::NotRun);
        assert_eq!(ledger[0].matched_cells, 1);
        assert!(cells.spliced.is_empty() && cells.pre_refill.is_empty());
        let rows_of = |key: &CellKey| {
            cells
                .rows
                .iter()
                .find(|(rows_key, _)| rows_key == key)
                .map(|(_, rows)| rows)
        };
        assert_eq!(
            rows_of(&by_n[&4].key).map(|rows| rows.offsets.len()),
            Some(4)
        );
        let facts = run_facts(&read, &cells, &relations);
        assert_eq!(facts.role, RunRole::Run);
        assert_eq!((facts.census.cells, facts.census.failed_rows), (4, 1));
        assert_eq!(facts.census.failed_by_status["http_400"], 1);
        assert_eq!(facts.exclusions["n4"], 1);
        assert!(facts.has_plan && facts.refill.is_none());
    }

    #[test]
    fn cells_out_of_order_in_the_file_are_walked_by_coordinates_with_their_plan_manifest_and_first_unplanned()
     {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("r1");
        std::fs::create_dir(&dir).unwrap();
        // The file holds N=4, then N=1, then N=2: not in the order of coordinates.
        let rows = [
            HEADER.to_string(),
            row(4, 1, "ok"),
            row(1, 1, "ok"),
            row(2, 1, "ok"),
        ];
        std::fs::write(dir.join("metrics.csv"), rows.join("\n") + "\n").unwrap();
        // The plan lists N=2 and N=8 only: N=4 and N=1 ran unplanned, N=4 first in the file.
        let cell = |n: u32| {
            format!(
                r#"{{"suite": "s", "phase": "scaling", "backend": "b", "model": "m", "workload": "w", "n_agents": {n}, "rep": 0}}"#
            )
        };
        std::fs::write(
            dir.join("execution_plan.json"),
            format!(r#"{{"cells": [{}, {}]}}"#, cell(8), cell(2)),
        )
        .unwrap();
        // The manifest has a history for N=1 and for N=8 (which has no rows), none for N=2 and N=4.
        let with_history = |n: u32, event: &str| {
            cell(n).replacen(
                '{',
                &format!(r#"{{"status": "completed", "history": [{{"event": "{event}"}}], "#),
                1,
            )
        };
        std::fs::write(
            dir.join("manifest.json"),
            format!(
                r#"{{"cells": [{}, {}]}}"#,
                with_history(8, "never_started"),
                with_history(1, "fallback_completed")
            ),
        )
        .unwrap();
        let mut read = read_r1(root.path());
        let disk = LocalDisk::new(root.path());
        let relations = lineage::relate(&disk, std::slice::from_ref(&read), Vec::new());
        let cells = run_cells(&mut read, &relations, &mut []);
        let ns: Vec<u32> = cells.own.iter().map(|cell| cell.key.n().unwrap()).collect();
        assert_eq!(ns, [1, 2, 4, 8]);
        // The row locators come out sorted by key, one per cell with rows.
        let located: Vec<u32> = cells.rows.iter().map(|(key, _)| key.n().unwrap()).collect();
        assert_eq!(located, [1, 2, 4]);
        let status = |n: u32| {
            cells
                .own
                .iter()
                .find(|cell| cell.key.n().unwrap() == n)
                .unwrap()
        };
        assert_eq!(status(8).status, CellStatus::NotRun);
        assert!(status(1).fallback && !status(2).fallback);
        let events = |n: u32| -> Vec<String> {
            cells
                .provenance
                .iter()
                .find(|(key, _)| key.n().unwrap() == n)
                .map(|(_, provenance)| {
                    provenance
                        .history
                        .iter()
                        .map(|event| event.event.clone())
                        .collect()
                })
                .unwrap_or_default()
        };
        assert_eq!(events(1), ["fallback_completed"]);
        assert_eq!(events(8), ["never_started"]);
        assert!(events(2).is_empty() && events(4).is_empty());
        let unplanned: Vec<&Warning> = cells
            .warnings
            .iter()
            .filter(|warning| warning.kind == "unplanned_cells")
            .collect();
        assert_eq!(unplanned.len(), 1);
        assert!(
            unplanned[0].message.starts_with("2 cell(s) have rows")
                && unplanned[0]
                    .message
                    .contains("the first: r1/s/scaling/b/m/w/n=4/rep=0"),
            "{}",
            unplanned[0].message
        );
        // The line of N=4's first row: the second line of the file.
        assert_eq!(unplanned[0].line, Some(2));
    }
}
