//! When a History counts as regressed: its latest change point is toward worse and lies within the last `k`
//! runs, or its latest run is worse than the band of the `k` runs before it.

use super::changepoint::Shift;
use super::choice::HistoryChoice;
use super::point::{HistoryChangePoint, HistoryPoint};
use crate::stat::Better;
use serde::{Deserialize, Serialize};

/// Why a History is flagged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Regression {
    /// The latest change point is toward worse, within the last `k` runs.
    ChangePoint {
        /// The first run after the change.
        run: String,
        /// mean after / mean before − 1.
        relative_change: Option<f64>,
    },
    /// The latest run lies on the worse side of the band of the runs before it.
    OutsideBand {
        /// The latest run.
        run: String,
        /// Its value.
        value: f64,
        /// The band's lower edge.
        low: f64,
        /// The band's upper edge.
        high: f64,
        /// The mean of the runs the band is made from.
        mean: f64,
        /// How many runs it is made from.
        runs: usize,
    },
}

impl Regression {
    /// value / mean − 1 of the flagged step: the size a regressions list sorts by.
    pub fn relative_change(&self) -> Option<f64> {
        match self {
            Regression::ChangePoint {
                relative_change, ..
            } => *relative_change,
            Regression::OutsideBand { value, mean, .. } => {
                (*mean != 0.0).then(|| value / mean - 1.0)
            }
        }
    }
}

/// The rule applied to a History's points and change points, for a metric whose good direction is `better`.
pub(super) fn regression(
    points: &[HistoryPoint],
    change_points: &[HistoryChangePoint],
    better: Better,
    choice: &HistoryChoice,
) -> Option<Regression> {
    let recent_from = points.len().saturating_sub(choice.k);
    if let Some(latest) = change_points.last()
        && latest.direction == Some(Shift::Regression)
        && latest.index >= recent_from
    {
        return Some(Regression::ChangePoint {
            run: latest.run.clone(),
            relative_change: latest.relative_change,
        });
    }
    outside_band(points, better, choice)
}

/// The latest run against the mean ± band of the `k` runs with a value before it (at least two).
fn outside_band(
    points: &[HistoryPoint],
    better: Better,
    choice: &HistoryChoice,
) -> Option<Regression> {
    let (latest, earlier) = points.split_last()?;
    let value = latest.value?;
    let before: Vec<f64> = earlier
        .iter()
        .rev()
        .filter_map(|point| point.value)
        .take(choice.k)
        .collect();
    if before.len() < 2 {
        return None;
    }
    let count = before.len() as f64;
    let mean = before.iter().sum::<f64>() / count;
    let variance = before.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (count - 1.0);
    let half = choice.band.half_width(mean, variance.sqrt());
    let (low, high) = (mean - half, mean + half);
    let worse = match better {
        Better::Lower => value > high,
        Better::Higher => value < low,
    };
    worse.then(|| Regression::OutsideBand {
        run: latest.run.clone(),
        value,
        low,
        high,
        mean,
        runs: before.len(),
    })
}
