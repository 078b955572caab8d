//! The wording of why a cell is not clean: one sentence per status, used by the provenance body, the audit
//! table, the curves' end markers and the inspector, so the same cell reads the same everywhere.

use crate::api::HistoryEvent;
use crate::metric::Metric;
use crate::status::CellStatus;
use crate::summary::CellSummary;

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
    /// The series has no N = 1 cell with data; `smallest_n` is its smallest measured N.
    NoBaseline { smallest_n: u32 },
    /// The cell itself has no value of `column` (`aggregate_tps` or `p95_wall_ms`).
    NoOwnFigure { column: &'static str },
    /// The N = 1 cell has no value of `column`.
    NoBaselineFigure { column: &'static str },
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
            Metric::Efficiency => (cell.efficiency, "aggregate_tps"),
            Metric::P95Multiplier => (cell.p95_multiplier, "p95_wall_ms"),
            _ => return None,
        };
        if value.is_some() || !cell.has_data() {
            return None;
        }
        let series = cell.key.series_components();
        let in_series: Vec<&CellSummary> = series_cells
            .iter()
            .copied()
            .filter(|other| other.key.series_components() == series && other.has_data())
            .collect();
        let baselines: Vec<&&CellSummary> = in_series
            .iter()
            .filter(|other| other.is_baseline())
            .collect();
        if baselines.is_empty() {
            let smallest_n = in_series
                .iter()
                .map(|other| other.key.n)
                .min()
                .unwrap_or(cell.key.n);
            return Some(ScalingAbsent::NoBaseline { smallest_n });
        }
        if cell.stats.column(column).is_none() {
            return Some(ScalingAbsent::NoOwnFigure { column });
        }
        if baselines
            .iter()
            .all(|base| base.stats.column(column).is_none())
        {
            return Some(ScalingAbsent::NoBaselineFigure { column });
        }
        None
    }

    /// What a matrix square has room for.
    pub fn short(&self) -> &'static str {
        match self {
            ScalingAbsent::NoBaseline { .. } => "no N=1",
            ScalingAbsent::NoOwnFigure { column } | ScalingAbsent::NoBaselineFigure { column } => {
                if *column == "aggregate_tps" {
                    "no tps"
                } else {
                    "no p95"
                }
            }
        }
    }

    /// The sentence the hover text and the inspector show.
    pub fn sentence(&self) -> String {
        let what = |column: &str| {
            if column == "aggregate_tps" {
                "aggregate throughput (the file has neither per-request tokens and times nor the tool's throughput)"
            } else {
                "p95 wall latency (the file has neither per-request latencies nor the tool's p95)"
            }
        };
        match self {
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
