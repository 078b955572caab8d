//! The wording of why a cell is not clean: one sentence per status, used by the provenance body, the audit
//! table, the curves' end markers and the inspector, so the same cell reads the same everywhere.

use crate::api::HistoryEvent;
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
