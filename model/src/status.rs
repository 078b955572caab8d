//! The cell-status vocabulary (docs/definitions.md#statuses) and the rule that assigns one status per cell.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Exactly one status per cell; flags (`refilled`, `fallback`, `excluded`) are carried separately.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CellStatus {
    /// All expected requests present and `ok`.
    Clean,
    /// Fewer real rows than expected (a hang with partial progress, an interrupted run); real data.
    Partial,
    /// Some or all real rows have a non-`ok` status; those rows never enter statistics.
    Failed,
    /// Only a synthetic skip row (the V1 all-zero sentinel); no data.
    Skipped,
    /// Planned by the execution plan or manifest but absent from metrics.csv.
    NotRun,
}

impl CellStatus {
    /// Every status, in declaration order.
    pub const ALL: [CellStatus; 5] = [
        CellStatus::Clean,
        CellStatus::Partial,
        CellStatus::Failed,
        CellStatus::Skipped,
        CellStatus::NotRun,
    ];

    /// The status's stable name (`clean`, `not_run`, …), as it is serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            CellStatus::Clean => "clean",
            CellStatus::Partial => "partial",
            CellStatus::Failed => "failed",
            CellStatus::Skipped => "skipped",
            CellStatus::NotRun => "not_run",
        }
    }

    /// The status with this stable name; `None` for any other text.
    pub fn parse(text: &str) -> Option<CellStatus> {
        CellStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == text)
    }

    /// Decides the status of a cell from its row census.
    ///
    /// Precedence: no real rows → `skipped` (a sentinel exists) or `not_run`; any non-ok row → `failed`
    /// (failures are the most important thing to surface, even in a short cell); fewer rows than expected →
    /// `partial`; otherwise `clean`. More rows than expected is still `clean` here; the indexer warns about it.
    pub fn classify(census: RowCensus) -> CellStatus {
        if census.rows == 0 {
            if census.skip_rows > 0 {
                CellStatus::Skipped
            } else {
                CellStatus::NotRun
            }
        } else if census.failed_rows > 0 {
            CellStatus::Failed
        } else if census
            .expected_rows
            .is_some_and(|expected| census.rows < expected)
        {
            CellStatus::Partial
        } else {
            CellStatus::Clean
        }
    }
}

impl fmt::Display for CellStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many rows of each kind a cell has; the input of [`CellStatus::classify`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowCensus {
    /// Rows the cell should have, when a source says (docs/definitions.md#expected-rows).
    pub expected_rows: Option<u32>,
    /// Real request rows (skip sentinels excluded).
    pub rows: u32,
    /// Real rows with status `ok`.
    pub ok_rows: u32,
    /// Real rows with any other status.
    pub failed_rows: u32,
    /// Skip-sentinel rows (the V1 all-zero row).
    pub skip_rows: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn census(expected: Option<u32>, ok: u32, failed: u32, skip: u32) -> RowCensus {
        RowCensus {
            expected_rows: expected,
            rows: ok + failed,
            ok_rows: ok,
            failed_rows: failed,
            skip_rows: skip,
        }
    }

    #[test]
    fn status_follows_the_documented_precedence() {
        assert_eq!(
            CellStatus::classify(census(Some(12), 12, 0, 0)),
            CellStatus::Clean
        );
        assert_eq!(
            CellStatus::classify(census(Some(192), 37, 0, 0)),
            CellStatus::Partial
        );
        assert_eq!(
            CellStatus::classify(census(Some(320), 0, 320, 0)),
            CellStatus::Failed
        );
        // A short cell with failures reports the failures first.
        assert_eq!(
            CellStatus::classify(census(Some(320), 10, 5, 0)),
            CellStatus::Failed
        );
        assert_eq!(
            CellStatus::classify(census(Some(192), 0, 0, 1)),
            CellStatus::Skipped
        );
        assert_eq!(
            CellStatus::classify(census(Some(192), 0, 0, 0)),
            CellStatus::NotRun
        );
        // Real rows win over a sentinel that collided with them.
        assert_eq!(
            CellStatus::classify(census(Some(192), 20, 0, 1)),
            CellStatus::Partial
        );
        // Without an expectation a cell cannot be short.
        assert_eq!(
            CellStatus::classify(census(None, 3, 0, 0)),
            CellStatus::Clean
        );
    }

    #[test]
    fn names_round_trip() {
        for status in CellStatus::ALL {
            assert_eq!(CellStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(CellStatus::parse("skip-marked"), None);
    }
}
