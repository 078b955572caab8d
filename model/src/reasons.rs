//! The wording of why a cell is not clean: one sentence per status, used by the provenance body, the audit
//! table, the curves' end markers and the inspector, so the same cell reads the same everywhere.

use crate::exclusions::ExclusionScope;
use crate::facts::HistoryEvent;
use crate::load::{Load, LoadKind};
use crate::metric::Metric;
use crate::stat::Stat;
use crate::status::CellStatus;
use crate::summary::{CellSummary, Inclusion};
use std::collections::BTreeSet;

/// Why a skipped or not-run cell has no data: the latest manifest event that says, else what the files show.
pub fn skip_reason(status: CellStatus, history: &[HistoryEvent]) -> String {
    history
        .iter()
        .rev()
        .find_map(|event| event.detail.clone())
        .unwrap_or_else(|| match status {
            CellStatus::NotRun => "planned but absent from metrics.csv".into(),
            _ => "skip sentinel row in metrics.csv".into(),
        })
}

/// Why a cell with data has no efficiency or p95 multiplier: both are measured against the N = 1 cell of the
/// same series (same run, suite, phase, backend, model and workload), so the sweep must have one, and the
/// figure they compare must exist on both sides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScalingAbsent {
    /// The series was measured at this one concurrency only: no scaling to show, rather than a cell measured
    /// against itself.
    OneLoad {
        /// The load.
        load: Load,
    },
    /// The series has no N = 1 cell with data.
    NoBaseline {
        /// The series' smallest measured N.
        smallest_n: u32,
    },
    /// The cell itself has no value of the figure the metric is computed from.
    NoOwnFigure {
        /// Aggregate throughput or p95 wall latency.
        column: Stat,
    },
    /// The N = 1 cell has no value of the figure the metric is computed from.
    NoBaselineFigure {
        /// Aggregate throughput or p95 wall latency.
        column: Stat,
    },
}

impl ScalingAbsent {
    /// Why `cell`'s value of a scaling metric (`efficiency` → aggregate tps, `p95_multiplier` → p95 wall) is
    /// absent, given the cells of its series (`series_cells`; others are ignored). `None` when the cell has the
    /// value, has no data, or `metric` is not a scaling metric.
    pub fn of(
        metric: Metric,
        cell: &CellSummary,
        series_cells: &[&CellSummary],
    ) -> Option<ScalingAbsent> {
        let (value, column) = match metric {
            Metric::Stat(Stat::Efficiency) | Metric::Stat(Stat::P95Multiplier) => {
                (metric.of_cell(cell), metric.stat()?.source())
            }
            _ => return None,
        };
        if value.is_some() || !cell.has_data() {
            return None;
        }
        let series = cell.key.series_parts();
        let in_series: Vec<&CellSummary> = series_cells
            .iter()
            .copied()
            .filter(|other| other.key.series_parts() == series && other.has_data())
            .collect();
        let concurrency = |other: &&&CellSummary| other.key.load.kind() == LoadKind::Concurrency;
        if cell.key.load.kind() == LoadKind::Concurrency
            && in_series
                .iter()
                .filter(concurrency)
                .all(|other| other.key.load == cell.key.load)
        {
            return Some(ScalingAbsent::OneLoad {
                load: cell.key.load,
            });
        }
        let baselines: Vec<&&CellSummary> = in_series
            .iter()
            .filter(|other| other.is_baseline())
            .collect();
        if baselines.is_empty() {
            let smallest_n = in_series
                .iter()
                .filter_map(|other| other.key.n())
                .min()
                .or(cell.key.n())
                .unwrap_or(0);
            return Some(ScalingAbsent::NoBaseline { smallest_n });
        }
        if cell.stats.get(column).is_none() {
            return Some(ScalingAbsent::NoOwnFigure { column });
        }
        if baselines
            .iter()
            .all(|base| base.stats.get(column).is_none())
        {
            return Some(ScalingAbsent::NoBaselineFigure { column });
        }
        None
    }

    /// What a matrix square has room for.
    pub fn short(&self) -> &'static str {
        match self {
            ScalingAbsent::OneLoad { .. } => "one load",
            ScalingAbsent::NoBaseline { .. } => "no N=1",
            ScalingAbsent::NoOwnFigure { column } | ScalingAbsent::NoBaselineFigure { column } => {
                if *column == Stat::AggregateTps {
                    "no tps"
                } else {
                    "no p95"
                }
            }
        }
    }

    /// The sentence the hover text and the inspector show.
    pub fn sentence(&self) -> String {
        let what = |column: &Stat| {
            if *column == Stat::AggregateTps {
                "aggregate throughput (the file has neither per-request tokens and times nor the tool's throughput)"
            } else {
                "p95 wall latency (the file has neither per-request latencies nor the tool's p95)"
            }
        };
        match self {
            ScalingAbsent::OneLoad { load } => format!(
                "absent: one load, no scaling (the series was measured at {} only, and a cell measured against \
                 itself says nothing)",
                load.label()
            ),
            ScalingAbsent::NoBaseline { smallest_n } => format!(
                "absent: it is measured against the N = 1 cell of the same series, and this \
                 sweep starts at N = {smallest_n}"
            ),
            ScalingAbsent::NoOwnFigure { column } => {
                format!("absent: this cell has no {}", what(column))
            }
            ScalingAbsent::NoBaselineFigure { column } => {
                format!("absent: the series' N = 1 cell has no {}", what(column))
            }
        }
    }
}

/// Why a group of cells (a panel or a series of the curves) draws no point, from the cells of the group: the
/// first that holds of no data, left out by the view (the ledger, the partial toggle), no N = 1 baseline for a
/// scaling metric, no value of the plotted metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoPoint {
    /// No cell has a successful row (skipped, failed, not run).
    NoData {
        /// How many cells the group has.
        cells: usize,
    },
    /// Every cell with data is left out by the view.
    LeftOut {
        /// Cells the ledger leaves out.
        excluded: usize,
        /// The ledger entries that do.
        entries: Vec<String>,
        /// Partial cells the what-if toggle leaves out.
        partial: usize,
    },
    /// A scaling metric, and no series of the group has an N = 1 cell.
    NoBaseline {
        /// The scaling metric.
        metric: Metric,
        /// How many series the group has.
        series: usize,
        /// The smallest measured N among them.
        smallest_n: u32,
    },
    /// A scaling metric, and every series of the group was measured at one load.
    OneLoad {
        /// The scaling metric.
        metric: Metric,
        /// How many cells.
        cells: usize,
    },
    /// The admitted cells have no value of the plotted metrics.
    NoValue {
        /// The metrics' labels, joined.
        of: String,
        /// How many admitted cells there are.
        cells: usize,
    },
}

impl NoPoint {
    /// Why `cells` give no point of `metric` (against the metric `x` when there is one) in a view admitting
    /// cells by `inclusion`. `None` when some admitted cell with data has a value of both.
    pub fn of(
        cells: &[&CellSummary],
        inclusion: &Inclusion,
        metric: Metric,
        x: Option<Metric>,
    ) -> Option<NoPoint> {
        let with_data: Vec<&CellSummary> = cells
            .iter()
            .copied()
            .filter(|cell| cell.has_data())
            .collect();
        if with_data.is_empty() {
            return Some(NoPoint::NoData { cells: cells.len() });
        }
        let admitted: Vec<&CellSummary> = with_data
            .iter()
            .copied()
            .filter(|cell| inclusion.admits(cell))
            .collect();
        if admitted.is_empty() {
            // Partial cells admitted: whoever is still out is out by the ledger.
            let ledger_only = Inclusion {
                partial: true,
                ..inclusion.clone()
            };
            let (excluded, partial): (Vec<&CellSummary>, Vec<&CellSummary>) =
                with_data.iter().partition(|cell| !ledger_only.admits(cell));
            let entries = crate::order::btree_set(excluded.iter().flat_map(|cell| {
                cell.excluded.iter().filter(|id| {
                    cell.exclusion_scope != Some(ExclusionScope::Comparison)
                        || inclusion.comparisons.contains(*id)
                })
            }));
            return Some(NoPoint::LeftOut {
                excluded: excluded.len(),
                entries: entries.into_iter().cloned().collect(),
                partial: partial.len(),
            });
        }
        let metrics: Vec<Metric> = std::iter::once(metric)
            .chain(x.filter(|x| *x != metric))
            .collect();
        if admitted
            .iter()
            .any(|cell| metrics.iter().all(|metric| metric.of_cell(cell).is_some()))
        {
            return None;
        }
        // A scaling metric absent from every admitted cell for want of a second load or an N = 1 cell: said as
        // such.
        for scaling in metrics.iter().copied() {
            let absent: Vec<ScalingAbsent> = admitted
                .iter()
                .filter_map(|cell| ScalingAbsent::of(scaling, cell, cells))
                .collect();
            if absent.len() == admitted.len()
                && absent
                    .iter()
                    .all(|why| matches!(why, ScalingAbsent::OneLoad { .. }))
            {
                return Some(NoPoint::OneLoad {
                    metric: scaling,
                    cells: admitted.len(),
                });
            }
            if absent.len() == admitted.len()
                && absent
                    .iter()
                    .all(|why| matches!(why, ScalingAbsent::NoBaseline { .. }))
            {
                let series =
                    crate::order::btree_set(admitted.iter().map(|cell| cell.key.series_parts()));
                let smallest_n = admitted
                    .iter()
                    .filter_map(|cell| cell.key.n())
                    .min()
                    .unwrap_or(1);
                return Some(NoPoint::NoBaseline {
                    metric: scaling,
                    series: series.len(),
                    smallest_n,
                });
            }
        }
        let labels: Vec<&str> = metrics.iter().map(|metric| metric.label()).collect();
        Some(NoPoint::NoValue {
            of: labels.join(" or "),
            cells: admitted.len(),
        })
    }

    /// The line the chart draws inside the empty panel (or beside an empty series' label).
    pub fn text(&self) -> String {
        let cells = |count: usize| format!("{count} cell{}", if count == 1 { "" } else { "s" });
        match self {
            NoPoint::NoData { cells: count } => format!(
                "no data: {} without a successful request (skipped, failed or not run)",
                if *count == 1 {
                    "its cell is".to_string()
                } else {
                    format!("all {} are", cells(*count))
                }
            ),
            NoPoint::LeftOut {
                excluded,
                entries,
                partial,
            } => {
                let ledger = format!("excluded by the ledger ({})", entries.join(", "));
                let all = |count: usize| {
                    if count == 1 {
                        "the 1 cell".to_string()
                    } else {
                        format!("all {}", cells(count))
                    }
                };
                match (*excluded, *partial) {
                    (excluded, 0) => format!("{} {ledger}", all(excluded)),
                    (0, partial) => {
                        format!("{} partial, and partial cells are left out", all(partial))
                    }
                    (excluded, partial) => format!(
                        "{} left out: {excluded} {ledger}, {partial} partial (partial cells are left out)",
                        all(excluded + partial)
                    ),
                }
            }
            NoPoint::NoBaseline {
                metric,
                series,
                smallest_n,
            } => format!(
                "no {}: no N = 1 cell in {} (measured from N = {smallest_n})",
                metric.label(),
                if *series == 1 {
                    "this series".to_string()
                } else {
                    format!("any of these {series} series")
                }
            ),
            NoPoint::OneLoad {
                metric,
                cells: count,
            } => format!(
                "one load, no scaling: no {} ({} the one load its series was measured at)",
                metric.label(),
                if *count == 1 {
                    "its cell is".to_string()
                } else {
                    format!("each of its {} is", cells(*count))
                }
            ),
            NoPoint::NoValue { of, cells: count } => {
                format!(
                    "no value of {of} in {}",
                    if *count == 1 {
                        "its cell".to_string()
                    } else {
                        format!("any of its {}", cells(*count))
                    }
                )
            }
        }
    }
}

/// Whether the audit lists a cell: anything but a plain clean cell (not clean, refilled, fallback-completed or
/// matched by the exclusion ledger).
pub fn needs_audit(cell: &CellSummary) -> bool {
    cell.status != CellStatus::Clean || cell.refilled || cell.fallback || !cell.excluded.is_empty()
}

/// The audit's one-line reason for a cell that is not clean, refilled or fallback-completed. `skip_reason` is
/// the provenance's reason for skipped and not-run cells.
pub fn cell_reason(cell: &CellSummary, skip_reason: Option<&str>) -> String {
    match cell.status {
        CellStatus::Skipped | CellStatus::NotRun => skip_reason
            .map(str::to_string)
            .unwrap_or_else(|| self::skip_reason(cell.status, &[])),
        CellStatus::Partial => format!(
            "{} of {} expected rows",
            cell.rows,
            cell.expected_rows.unwrap_or(0)
        ),
        CellStatus::Failed => format!("{} of {} rows failed", cell.failed_rows, cell.rows),
        CellStatus::Clean if cell.refilled => format!(
            "rows replaced by refill run {}",
            cell.source_run_id.as_deref().unwrap_or("(unnamed)")
        ),
        CellStatus::Clean if cell.fallback => "completed through the fallback path".into(),
        CellStatus::Clean if !cell.excluded.is_empty() => {
            format!("excluded by the ledger: {}", cell.excluded.join(", "))
        }
        CellStatus::Clean => "clean".into(),
    }
}

/// What `metric` over `cells` is measured against when it is not N = 1: `vs N=4` (or `vs 1 req/s`), or
/// `vs each series' lowest load` when the cells' baselines differ; `None` for N = 1, for metrics without a
/// baseline, and for efficiency at an offered rate (achieved/offered, which needs none).
pub fn baseline_note<'a>(
    metric: Metric,
    cells: impl IntoIterator<Item = &'a CellSummary>,
) -> Option<String> {
    let baselines: BTreeSet<Option<Load>> = cells
        .into_iter()
        .filter(|cell| match metric {
            Metric::Stat(Stat::Efficiency) => {
                cell.efficiency.is_some() && cell.key.load.kind() == LoadKind::Concurrency
            }
            Metric::Stat(Stat::P95Multiplier) => cell.p95_multiplier.is_some(),
            _ => false,
        })
        .map(|cell| cell.baseline_load)
        .collect();
    match baselines.iter().collect::<Vec<_>>().as_slice() {
        [] | [None] => None,
        [Some(load)] => Some(format!("vs {}", load.label())),
        _ => Some("vs N=1 or each series' lowest load".to_string()),
    }
}

/// The sentence that explains a [`baseline_note`] in a hover or beside a chart.
pub fn baseline_sentence(metric: Metric, note: &str) -> String {
    format!(
        "{} {note}: no N = 1 cell in the series, so it is measured against the lowest load",
        metric.label()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::CellKey;

    #[test]
    fn the_manifest_says_why_before_the_files_do() {
        let history = vec![
            HistoryEvent {
                at: None,
                event: "hang".into(),
                generation: None,
                pid: None,
                detail: Some("dispatcher hang at 3/192 rows".into()),
            },
            HistoryEvent {
                at: None,
                event: "skip".into(),
                generation: None,
                pid: None,
                detail: None,
            },
        ];
        assert_eq!(
            skip_reason(CellStatus::Skipped, &history),
            "dispatcher hang at 3/192 rows"
        );
        assert_eq!(
            skip_reason(CellStatus::NotRun, &[]),
            "planned but absent from metrics.csv"
        );
        let key: CellKey = "r/s/p/b/m/w/n=16/rep=0".parse().unwrap();
        let mut cell = CellSummary::empty(key, CellStatus::Partial);
        cell.rows = 12;
        cell.expected_rows = Some(192);
        assert_eq!(cell_reason(&cell, None), "12 of 192 expected rows");
    }
}
