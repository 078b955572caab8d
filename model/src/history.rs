//! A configuration's metric across runs in time order: where it changed, and whether the change is a regression.
//!
//! The browser, the server and the CLI call the same functions, so they print the same change points and flag
//! the same Histories (docs/definitions.md#history).

pub mod changepoint;
mod choice;
mod query;
mod regression;
pub mod report;
mod series;

pub use choice::{Band, HistoryChoice};
pub use query::{DEFAULT_METRIC, HistoryQuery};
pub use regression::Regression;
pub use series::{
    EnvironmentChange, HistoryChangePoint, HistoryKey, HistoryPoint, HistorySeries, TimeSource,
    histories, run_time,
};

use serde::{Deserialize, Serialize};

/// `GET /api/history` and `cellscope history --json`: every History of the slice for one metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryBody {
    /// The metric followed.
    pub metric: crate::metric::Metric,
    /// The method's and the rule's parameters.
    pub choice: HistoryChoice,
    /// Every History, in key order.
    pub series: Vec<HistorySeries>,
}

impl HistoryBody {
    /// The Histories flagged as regressed or with a change point toward worse in the last `k` runs, largest
    /// relative change first: the regressions list.
    pub fn regressions(&self) -> Vec<&HistorySeries> {
        let mut listed: Vec<&HistorySeries> = self
            .series
            .iter()
            .filter(|series| series.regressed || recent_worse(series, self.choice.k).is_some())
            .collect();
        crate::order::sort_stable_by(&mut listed, |a, b| {
            size(b, self.choice.k)
                .total_cmp(&size(a, self.choice.k))
                .then(a.key.cmp(&b.key))
        });
        listed
    }
}

/// The last change point toward worse within the last `k` runs of a History.
pub fn recent_worse(series: &HistorySeries, k: usize) -> Option<&HistoryChangePoint> {
    let from = series.points.len().saturating_sub(k);
    series.change_points.iter().rev().find(|change| {
        change.index >= from && change.direction == Some(changepoint::Shift::Regression)
    })
}

/// How large a listed History's regression is: |relative change| of its flag, else of its recent worse change.
fn size(series: &HistorySeries, k: usize) -> f64 {
    series
        .regression
        .as_ref()
        .and_then(Regression::relative_change)
        .or_else(|| recent_worse(series, k).and_then(|change| change.relative_change))
        .map_or(0.0, f64::abs)
}
