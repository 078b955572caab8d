//! The per-cell summary row (the `cells` table of the CLI, the HTTP API and the browser), its scaling metrics
//! and the inclusion policy that decides which cells enter aggregates.

use crate::exclusions::ExclusionScope;
use crate::key::{CellKey, SeriesKey};
use crate::load::{Load, LoadKind};
use crate::scaling::{self, BaselineCandidate};
use crate::stat::{FigureOrigin, Stat};
use crate::stats::CellStats;
use crate::status::CellStatus;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Where a cell's expected row count comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectedSource {
    /// `execution_plan.json`.
    Plan,
    /// `manifest.json`.
    Manifest,
    /// The request count another tool's result file states (vLLM `num_prompts`).
    File,
    /// requests-per-agent × N, with requests-per-agent the modal value over the run's complete cells.
    Inferred,
    /// Nothing to infer from (no plan, no manifest, no complete cell).
    Unknown,
}

impl ExpectedSource {
    /// The name the `expected_source` column holds.
    pub fn as_str(self) -> &'static str {
        match self {
            ExpectedSource::Plan => "plan",
            ExpectedSource::Manifest => "manifest",
            ExpectedSource::File => "file",
            ExpectedSource::Inferred => "inferred",
            ExpectedSource::Unknown => "unknown",
        }
    }

    /// The source a name names.
    pub fn parse(text: &str) -> Option<ExpectedSource> {
        match text {
            "plan" => Some(ExpectedSource::Plan),
            "manifest" => Some(ExpectedSource::Manifest),
            "file" => Some(ExpectedSource::File),
            "inferred" => Some(ExpectedSource::Inferred),
            "unknown" => Some(ExpectedSource::Unknown),
            _ => None,
        }
    }
}

/// The expected row count of a cell at concurrency `n` and where it comes from, by the precedence of
/// docs/definitions.md#expected-rows: the execution plan, else the manifest, else requests-per-agent × N inferred from the run.
pub fn expected_rows(
    from_plan: Option<u32>,
    from_manifest: Option<u32>,
    inferred_requests_per_agent: Option<u32>,
    n: u32,
) -> (Option<u32>, ExpectedSource) {
    match (from_plan, from_manifest, inferred_requests_per_agent) {
        (Some(expected), _, _) => (Some(expected), ExpectedSource::Plan),
        (None, Some(expected), _) => (Some(expected), ExpectedSource::Manifest),
        (None, None, Some(per_agent)) => {
            (Some(per_agent.saturating_mul(n)), ExpectedSource::Inferred)
        }
        (None, None, None) => (None, ExpectedSource::Unknown),
    }
}

/// The modal rows-per-agent over a run's cells that have rows and no failures and whose rows divide evenly by
/// N (ties go to the value more cells share, then to the smaller value): the expectation when neither plan nor
/// manifest says. Each item is `(n, real rows, failed rows)` of one cell.
pub fn inferred_requests_per_agent(
    cells: impl IntoIterator<Item = (u32, u32, u32)>,
) -> Option<u32> {
    let mut counts: BTreeMap<u32, u32> = BTreeMap::new();
    for (n, rows, failed_rows) in cells {
        if rows > 0 && failed_rows == 0 && n > 0 && rows % n == 0 {
            *counts.entry(rows / n).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .max_by(|(left_value, left), (right_value, right)| {
            left.cmp(right).then(right_value.cmp(left_value))
        })
        .map(|(value, _)| value)
}

/// One cell: key, status and flags, row census, request statistics over `ok` rows, and scaling metrics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellSummary {
    /// The cell's key.
    pub key: CellKey,
    /// One status from its row census.
    pub status: CellStatus,
    /// The cell's rows were replaced by a targeted re-run (lineage in `source_run_id` and the backup).
    pub refilled: bool,
    /// Completed through a fallback path (from the manifest).
    pub fallback: bool,
    /// Ids of the exclusion-ledger entries that match this cell.
    pub excluded: Vec<String>,
    /// The widest scope among the matching entries (`all` wins over `comparison`).
    pub exclusion_scope: Option<ExclusionScope>,
    /// Rows the plan or manifest expects, when it says.
    pub expected_rows: Option<u32>,
    /// Where `expected_rows` came from.
    pub expected_source: ExpectedSource,
    /// Real request rows; skip sentinels are not counted.
    pub rows: u32,
    /// Requests with an ok status.
    pub ok_rows: u32,
    /// Requests with a failing status.
    pub failed_rows: u32,
    /// Skip sentinel rows.
    pub skip_rows: u32,
    /// Statistics over the ok rows.
    pub stats: CellStats,
    /// Parallel efficiency against the series' N = 1 cell.
    pub efficiency: Option<f64>,
    /// The p95 multiplier against the series' N = 1 cell.
    pub p95_multiplier: Option<f64>,
    /// The same-rep N=1 baseline was missing; the mean of the available N=1 reps was used.
    pub baseline_fallback: bool,
    /// The load the scaling metrics are normalised against when it is not N=1: the lowest N of a concurrency
    /// series without an N=1 cell, the lowest rate of a rate series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_load: Option<Load>,
    /// For refilled cells: the run whose rows now stand in this cell.
    pub source_run_id: Option<String>,
    /// Which figures are a tool's reported aggregates or rest on a reconstructed value, and which key parts were
    /// inferred (empty for TR164 cells).
    #[serde(default)]
    pub origin: FigureOrigin,
}

impl CellSummary {
    /// A cell with no rows at all (planned but not run); statistics are empty.
    pub fn empty(key: CellKey, status: CellStatus) -> CellSummary {
        CellSummary {
            key,
            status,
            refilled: false,
            fallback: false,
            excluded: Vec::new(),
            exclusion_scope: None,
            expected_rows: None,
            expected_source: ExpectedSource::Unknown,
            rows: 0,
            ok_rows: 0,
            failed_rows: 0,
            skip_rows: 0,
            stats: CellStats::default(),
            efficiency: None,
            p95_multiplier: None,
            baseline_fallback: false,
            baseline_load: None,
            source_run_id: None,
            origin: FigureOrigin::default(),
        }
    }

    /// The value of one statistic column: a request statistic or a scaling metric.
    pub fn stat(&self, stat: Stat) -> Option<f64> {
        match stat {
            Stat::Efficiency => self.efficiency,
            Stat::P95Multiplier => self.p95_multiplier,
            other => self.stats.get(other),
        }
    }

    /// Whether the cell carries data that can enter statistics: successful requests, or a tool's figures for a
    /// measurement whose requests it did not count (an aggregate row, a LoadGen summary).
    pub fn has_data(&self) -> bool {
        self.stats.ok_rows > 0
            || self.rows == 0
                && self.status == CellStatus::Clean
                && !self.origin.reported.is_empty()
    }

    /// Whether the cell can serve as an N = 1 baseline of its series: the one rule behind the scaling metrics
    /// ([`fill_scaling`]) and the reasons they are absent (`reasons::ScalingAbsent`).
    pub fn is_baseline(&self) -> bool {
        self.key.n() == Some(1) && self.has_data()
    }
}

/// The serving statistics (TTFT, TPOT, ITL, throughputs, interactivity, goodput) that some of `cells` have, in
/// table order: the columns a table of those cells adds to wall latency and output throughput, so that it shows
/// every figure the cells have and no column that is empty throughout.
pub fn serving_stats_of<'a>(cells: impl IntoIterator<Item = &'a CellSummary> + Clone) -> Vec<Stat> {
    Stat::SERVING
        .into_iter()
        .filter(|stat| {
            cells
                .clone()
                .into_iter()
                .any(|cell| cell.stat(*stat).is_some())
        })
        .collect()
}

/// The cell's load in words, with what was achieved where the rows say: the offered load, the request
/// throughput achieved (and its share of an offered rate) and the mean requests in flight by Little's law
/// (achieved rate × mean latency), which for a concurrency N stays at or below N.
pub fn load_line(cell: &CellSummary) -> String {
    let mut parts = vec![match cell.key.load {
        Load::Concurrency(n) => format!("N={n} concurrent requests"),
        Load::Rate(rate) if rate.is_infinite() => "every request sent at once (rate ∞)".to_string(),
        Load::Rate(rate) => format!("{rate} req/s offered"),
        Load::Unstated => "the file states no load".to_string(),
    }];
    if let Some(achieved) = cell.stats.request_throughput_rps {
        let share = match cell.key.load {
            Load::Rate(rate) if !rate.is_infinite() => {
                format!(" ({:.2} of offered)", achieved / rate.get())
            }
            _ => String::new(),
        };
        parts.push(format!("{achieved:.2} req/s achieved{share}"));
    }
    if let Some(in_flight) = cell.stats.mean_in_flight() {
        parts.push(format!(
            "{in_flight:.1} requests in flight on average (Little's law: achieved rate × mean latency)"
        ));
    }
    format!("Load: {}.", parts.join("; "))
}

/// The load each series (with its load kind) is normalised against: N=1 for a concurrency series that has an
/// N=1 cell (with data or not, so a failed N=1 leaves the series without scaling metrics, as TR164 reads it),
/// else the lowest load with data. Unstated loads have none.
fn baseline_loads(cells: &[CellSummary]) -> BTreeMap<(SeriesKey, LoadKind), Load> {
    let mut lowest: BTreeMap<(SeriesKey, LoadKind), Load> = BTreeMap::new();
    for cell in cells {
        let kind = cell.key.load.kind();
        let has_n1 = cell.key.n() == Some(1);
        if kind == LoadKind::Unstated || !(has_n1 || cell.has_data()) {
            continue;
        }
        let entry = lowest
            .entry((cell.key.series(), kind))
            .or_insert(cell.key.load);
        if has_n1 || (entry.concurrency() != Some(1) && cell.key.load < *entry) {
            *entry = cell.key.load;
        }
    }
    lowest
}

/// The concurrency series whose cells with data are all at one load: measured against itself, such a cell
/// would read as perfect scaling (efficiency 1, p95 multiplier 1), so it has neither
/// (docs/definitions.md#one-load).
pub fn single_load_series<'a>(
    cells: impl IntoIterator<Item = &'a CellSummary>,
) -> BTreeSet<SeriesKey> {
    let mut loads: BTreeMap<SeriesKey, (Load, bool)> = BTreeMap::new();
    for cell in cells.into_iter().filter(|cell| cell.has_data()) {
        if cell.key.load.kind() != LoadKind::Concurrency {
            continue;
        }
        let (first, several) = loads
            .entry(cell.key.series())
            .or_insert((cell.key.load, false));
        *several |= *first != cell.key.load;
    }
    loads
        .into_iter()
        .filter(|(_, (_, several))| !several)
        .map(|(series, _)| series)
        .collect()
}

/// Fills `efficiency`, `p95_multiplier`, `baseline_fallback` and `baseline_load` of every cell from its series'
/// baseline cells ([`baseline_loads`]). At an offered rate the efficiency is achieved/offered (the request
/// throughput over the offered rate), which needs no baseline; an unbounded rate has none. A concurrency series
/// measured at one load has no scaling metrics ([`single_load_series`]).
pub fn fill_scaling(cells: &mut [CellSummary]) {
    let bases = baseline_loads(cells);
    let single = single_load_series(cells.iter());
    let mut baselines: BTreeMap<(SeriesKey, LoadKind), Vec<BaselineCandidate>> = BTreeMap::new();
    for cell in cells.iter().filter(|cell| cell.has_data()) {
        let series = (cell.key.series(), cell.key.load.kind());
        if bases.get(&series) == Some(&cell.key.load) {
            baselines
                .entry(series)
                .or_default()
                .push(BaselineCandidate {
                    rep: cell.key.rep,
                    aggregate_tps: cell.stats.aggregate_tps,
                    p95_wall_ms: cell.stats.p95_wall_ms,
                });
        }
    }
    for cell in cells.iter_mut() {
        cell.efficiency = None;
        cell.p95_multiplier = None;
        cell.baseline_fallback = false;
        cell.baseline_load = None;
        if !cell.has_data() {
            continue;
        }
        let series = (cell.key.series(), cell.key.load.kind());
        let Some(candidates) = baselines.get(&series) else {
            continue;
        };
        if series.1 == LoadKind::Concurrency && single.contains(&series.0) {
            continue;
        }
        let base_load = bases[&series];
        cell.baseline_load = (base_load != Load::Concurrency(1)).then_some(base_load);
        let baseline = scaling::baseline(cell.key.rep, candidates);
        cell.efficiency = match (cell.key.load, base_load) {
            (Load::Concurrency(n), Load::Concurrency(base_n)) => cell
                .stats
                .aggregate_tps
                .zip(baseline.aggregate_tps)
                .and_then(|(tps, base)| {
                    scaling::efficiency(tps, n, base * f64::from(base_n).recip())
                }),
            (Load::Rate(offered), _) => cell
                .stats
                .request_throughput_rps
                .and_then(|achieved| scaling::achieved_over_offered(achieved, offered.get())),
            _ => None,
        };
        cell.p95_multiplier = cell
            .stats
            .p95_wall_ms
            .zip(baseline.p95_wall_ms)
            .and_then(|(p95, base)| scaling::p95_multiplier(p95, base));
        cell.baseline_fallback =
            baseline.fallback && (cell.efficiency.is_some() || cell.p95_multiplier.is_some());
    }
}

/// Fills every cell's output throughput per accelerator from its throughput and its configuration's accelerator
/// count; a figure the tool reported stays where either is unknown. Done once by the indexer: the figure depends
/// on the cell alone, so the browser's recomputation of the scaling metrics need not repeat it.
pub fn fill_output_per_accelerator(cells: &mut [CellSummary]) {
    for cell in cells {
        // A tool's own per-accelerator figure stays: its denominator is the tool's to define.
        let column = Stat::OutputTpsPerAccelerator.name();
        if cell.origin.reported.iter().any(|name| name == column) {
            continue;
        }
        let computed = cell
            .stats
            .aggregate_tps
            .zip(cell.key.config.accelerator_count())
            .map(|(tps, count)| tps / f64::from(count));
        if computed.is_some() {
            cell.stats.output_tps_per_accelerator = computed;
        }
    }
}

/// Which cells enter curves and aggregates. The defaults (docs/definitions.md#inclusion): partial cells are included,
/// `all`-scope exclusions are out, a `comparison`-scope exclusion is out where the view sets the backends it
/// separates against each other (`comparisons`, decided per view by [`crate::explore::applied_comparisons`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inclusion {
    /// Partial cells enter (the default).
    pub partial: bool,
    /// The what-if "include excluded cells": every ledger exclusion is lifted.
    pub excluded: bool,
    /// Ids of the `comparison`-scope ledger entries that apply in this view.
    pub comparisons: BTreeSet<String>,
}

impl Default for Inclusion {
    fn default() -> Self {
        Inclusion {
            partial: true,
            excluded: false,
            comparisons: BTreeSet::new(),
        }
    }
}

impl Inclusion {
    /// Whether a cell enters aggregates.
    pub fn admits(&self, cell: &CellSummary) -> bool {
        if cell.status == CellStatus::Partial && !self.partial {
            return false;
        }
        match cell.exclusion_scope {
            Some(_) if self.excluded => true,
            Some(ExclusionScope::All) => false,
            Some(ExclusionScope::Comparison) => {
                !cell.excluded.iter().any(|id| self.comparisons.contains(id))
            }
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::CellStats;

    #[test]
    fn the_load_line_says_what_was_offered_and_achieved() {
        let mut at_rate = cell(1, 0, Some(100.0), Some(900.0), CellStatus::Clean);
        at_rate.key.load = Load::rate(4.0).unwrap();
        at_rate.stats.request_throughput_rps = Some(3.9);
        at_rate.stats.mean_wall_ms = Some(1600.0);
        // 3.9 req/s × 1.6 s = 6.24 in flight; 3.9 / 4 = 0.975 of offered.
        assert_eq!(
            load_line(&at_rate),
            "Load: 4 req/s offered; 3.90 req/s achieved (0.97 of offered); 6.2 requests in flight on average \
             (Little's law: achieved rate × mean latency)."
        );
        let closed = cell(16, 0, None, None, CellStatus::Clean);
        assert_eq!(load_line(&closed), "Load: N=16 concurrent requests.");
    }

    #[test]
    fn a_reps_table_adds_the_serving_figures_some_rep_has() {
        let mut first = cell(1, 0, Some(100.0), Some(900.0), CellStatus::Clean);
        let mut second = cell(1, 1, Some(100.0), Some(900.0), CellStatus::Clean);
        first.stats.p99_tpot_ms = Some(8.25);
        second.stats.mean_ttft_ms = Some(120.0);
        second.stats.p50_interactivity_tps = Some(41.0);
        second.stats.request_throughput_rps = Some(3.9);
        // In table order, and none that no rep has (the wall and TTFT quantiles are no serving columns).
        assert_eq!(
            serving_stats_of([&first, &second]),
            [
                Stat::MeanTtftMs,
                Stat::P99TpotMs,
                Stat::P50InteractivityTps,
                Stat::RequestThroughputRps
            ]
        );
        assert!(
            serving_stats_of([&cell(2, 0, Some(1.0), Some(2.0), CellStatus::Clean)]).is_empty()
        );
    }

    fn cell(
        n: u32,
        rep: u32,
        tps: Option<f64>,
        p95: Option<f64>,
        status: CellStatus,
    ) -> CellSummary {
        let mut cell = CellSummary::empty(
            CellKey {
                run_id: "r".into(),
                suite: "local_core".into(),
                phase: "scaling".into(),
                backend: "pytorch_direct".into(),
                model: "llama3.2-1b".into(),
                workload: "balanced_2k".into(),
                config: Default::default(),
                load: crate::Load::Concurrency(n),
                rep,
            },
            status,
        );
        if tps.is_some() || p95.is_some() {
            cell.ok_rows = 12 * n;
            cell.rows = 12 * n;
            cell.stats = CellStats {
                ok_rows: 12 * n,
                aggregate_tps: tps,
                p95_wall_ms: p95,
                ..CellStats::default()
            };
        }
        cell.expected_rows = Some(12 * n);
        cell
    }

    #[test]
    fn scaling_uses_the_same_rep_baseline_and_flags_the_fallback() {
        let mut cells = vec![
            cell(1, 0, Some(40.0), Some(1000.0), CellStatus::Clean),
            cell(1, 1, Some(44.0), Some(1200.0), CellStatus::Clean),
            cell(2, 0, Some(40.0), Some(2000.0), CellStatus::Clean),
            cell(2, 2, Some(42.0), Some(2200.0), CellStatus::Clean),
        ];
        fill_scaling(&mut cells);
        assert_eq!(cells[0].efficiency, Some(1.0));
        assert_eq!(cells[0].p95_multiplier, Some(1.0));
        assert_eq!(cells[2].efficiency, Some(0.5));
        assert_eq!(cells[2].p95_multiplier, Some(2.0));
        assert!(!cells[2].baseline_fallback);
        // rep 2 has no N=1 cell: baseline = mean(40, 44) = 42 tps, mean(1000, 1200) = 1100 ms.
        assert_eq!(cells[3].efficiency, Some(0.5));
        assert_eq!(cells[3].p95_multiplier, Some(2.0));
        assert!(cells[3].baseline_fallback);
    }

    #[test]
    fn curves_end_at_skipped_cells_without_inventing_values() {
        let mut cells = vec![
            cell(1, 0, Some(40.0), Some(1000.0), CellStatus::Clean),
            cell(2, 0, Some(40.0), Some(2500.0), CellStatus::Clean),
            cell(16, 0, None, None, CellStatus::Skipped),
        ];
        cells[2].skip_rows = 1;
        fill_scaling(&mut cells);
        let curves = crate::curve::series_curves(&cells, &crate::curve::CurveOptions::default());
        assert_eq!(curves.len(), 1);
        let last = curves[0].point(crate::Load::Concurrency(16)).unwrap();
        assert_eq!((last.efficiency(), last.skipped, last.cells), (None, 1, 0));
        let at_2 = crate::curve::Breakdown::At {
            load: crate::Load::Concurrency(2),
        };
        assert_eq!(curves[0].breakdown(&crate::Criterion::V1), at_2);
        assert_eq!(curves[0].breakdown(&crate::Criterion::V3), at_2);
    }

    #[test]
    fn expected_rows_follow_plan_then_manifest_then_inference() {
        assert_eq!(
            expected_rows(Some(120), Some(100), Some(12), 10),
            (Some(120), ExpectedSource::Plan)
        );
        assert_eq!(
            expected_rows(None, Some(100), Some(12), 10),
            (Some(100), ExpectedSource::Manifest)
        );
        assert_eq!(
            expected_rows(None, None, Some(12), 10),
            (Some(120), ExpectedSource::Inferred)
        );
        assert_eq!(
            expected_rows(None, None, None, 10),
            (None, ExpectedSource::Unknown)
        );
        // 12 per agent in two cells beats 10 per agent in one; a failed or uneven cell does not vote.
        let cells = [(1, 12, 0), (2, 24, 0), (4, 40, 0), (4, 48, 3), (3, 10, 0)];
        assert_eq!(inferred_requests_per_agent(cells), Some(12));
        assert_eq!(
            inferred_requests_per_agent([(1, 10, 0), (1, 12, 0)]),
            Some(10)
        );
        assert_eq!(inferred_requests_per_agent([]), None);
    }

    #[test]
    fn a_tools_figures_without_a_request_count_are_data_but_a_cell_never_run_is_not() {
        let mut aggregate = cell(4, 0, None, None, CellStatus::Clean);
        aggregate.expected_rows = None;
        assert!(!aggregate.has_data());
        aggregate.stats.p50_ttft_ms = Some(120.0);
        aggregate.origin.reported = vec!["p50_ttft_ms".to_string()];
        assert!(aggregate.has_data());
        aggregate.status = CellStatus::NotRun;
        assert!(!aggregate.has_data());
    }

    #[test]
    fn inclusion_applies_exclusion_scopes() {
        let mut excluded = cell(2, 0, Some(40.0), Some(2000.0), CellStatus::Clean);
        excluded.exclusion_scope = Some(ExclusionScope::Comparison);
        let single = Inclusion::default();
        excluded.excluded = vec!["x".into()];
        let comparison = Inclusion {
            comparisons: BTreeSet::from(["x".to_string()]),
            ..Inclusion::default()
        };
        let what_if = Inclusion {
            excluded: true,
            ..comparison.clone()
        };
        let another = Inclusion {
            comparisons: BTreeSet::from(["y".to_string()]),
            ..Inclusion::default()
        };
        assert!(
            another.admits(&excluded),
            "only the entries that apply leave cells out"
        );
        assert!(single.admits(&excluded));
        assert!(!comparison.admits(&excluded));
        assert!(what_if.admits(&excluded));
        excluded.exclusion_scope = Some(ExclusionScope::All);
        assert!(!single.admits(&excluded));
        let partial = cell(2, 1, Some(40.0), Some(2000.0), CellStatus::Partial);
        assert!(single.admits(&partial));
        assert!(
            !Inclusion {
                partial: false,
                ..Inclusion::default()
            }
            .admits(&partial)
        );
    }
}
