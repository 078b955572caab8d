//! Change points of a metric across runs by the Hunter method, computed exactly as its reference implementation,
//! Apache Otava 0.8.0's `compute_change_points`, computes them (docs/definitions.md#change-points).
//!
//! The split step cuts the series into windows of `window_len` runs, `window_len / 2` apart, and splits each
//! window recursively at the point maximising the Q-hat statistic of Matteson and James, keeping a split while
//! the Student t-test of its two pieces passes a relaxed threshold; the merge step then drops the weakest of all
//! the points found, one at a time, until every one left passes `max_pvalue` and changes the mean by more than
//! `min_magnitude`. `model/tests/vectors/` holds the script and the vectors Otava itself produced that pin this.

mod qhat;
mod sum;
mod ttest;

use crate::stat::Better;
use serde::{Deserialize, Serialize};
use ttest::Pieces;

/// The parameters of the method; `Hunter::default()` is the reference implementation's defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hunter {
    window_len: usize,
    max_pvalue: f64,
    min_magnitude: f64,
}

impl Default for Hunter {
    /// A window of 50 runs, p ≤ 0.001, any magnitude.
    fn default() -> Self {
        Hunter {
            window_len: 50,
            max_pvalue: 0.001,
            min_magnitude: 0.0,
        }
    }
}

/// Parameters the method cannot run with.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum HunterError {
    /// A window shorter than two runs cannot be split.
    #[error("the window is {0} runs; it must hold at least 2")]
    WindowTooShort(usize),
    /// The p-value threshold is not a probability above zero.
    #[error("the p-value threshold is {0}; it must be above 0 and at most 1")]
    PValue(f64),
    /// The minimum magnitude is negative or not a number.
    #[error("the minimum relative change is {0}; it must be a number ≥ 0")]
    Magnitude(f64),
}

impl Hunter {
    /// Parameters checked: a window of at least 2 runs, 0 < `max_pvalue` ≤ 1 and `min_magnitude` ≥ 0 (a relative
    /// change, 0.05 for 5%).
    pub fn new(
        window_len: usize,
        max_pvalue: f64,
        min_magnitude: f64,
    ) -> Result<Hunter, HunterError> {
        if window_len < 2 {
            return Err(HunterError::WindowTooShort(window_len));
        }
        if !(max_pvalue > 0.0 && max_pvalue <= 1.0) {
            return Err(HunterError::PValue(max_pvalue));
        }
        if !(min_magnitude >= 0.0 && min_magnitude.is_finite()) {
            return Err(HunterError::Magnitude(min_magnitude));
        }
        Ok(Hunter {
            window_len,
            max_pvalue,
            min_magnitude,
        })
    }

    /// Runs per window of the split step.
    pub fn window_len(&self) -> usize {
        self.window_len
    }

    /// The largest p-value a change point may keep.
    pub fn max_pvalue(&self) -> f64 {
        self.max_pvalue
    }

    /// The relative change a change point must exceed.
    pub fn min_magnitude(&self) -> f64 {
        self.min_magnitude
    }

    /// The threshold of the split step: 10 × `max_pvalue` below 0.05, 2 × below 0.5, else `max_pvalue`.
    fn first_pass_pvalue(&self) -> f64 {
        let p = self.max_pvalue;
        if p < 0.05 {
            p * 10.0
        } else if p < 0.5 {
            p * 2.0
        } else {
            p
        }
    }

    /// The change points of `series`, the metric's values in run order (`None` for a run without one; a
    /// non-finite value counts as missing), in increasing index.
    pub fn change_points(&self, series: &[Option<f64>]) -> Vec<ChangePoint> {
        let Some(values) = fill_missing(series) else {
            return Vec::new();
        };
        let weak = split(&values, self.window_len, self.first_pass_pvalue());
        let points = weak
            .iter()
            .enumerate()
            .map(|(position, &index)| (index, pieces_at(&values, &weak, position)))
            .collect();
        merge(points, &values, self.max_pvalue, self.min_magnitude)
            .into_iter()
            .map(|(index, pieces)| ChangePoint::new(index, &pieces))
            .collect()
    }
}

/// A change point: the run it starts at and how the pieces either side of it compare.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    /// The first run after the change (0-based, in run order).
    pub index: usize,
    /// The two-sided p-value of the pieces' t-test.
    pub p_value: f64,
    /// The mean of the piece before the change.
    pub mean_before: f64,
    /// The mean of the piece from the change on.
    pub mean_after: f64,
    /// The standard deviation (ddof = 0) of the piece before.
    pub stddev_before: f64,
    /// The standard deviation (ddof = 0) of the piece after.
    pub stddev_after: f64,
    /// mean after / mean before − 1; `None` when the mean before is 0.
    pub relative_change: Option<f64>,
    /// The larger of |mean after / mean before − 1| and |mean before / mean after − 1|, a ratio over a zero mean
    /// counting as 0.
    pub magnitude: f64,
}

impl ChangePoint {
    fn new(index: usize, pieces: &Pieces) -> ChangePoint {
        ChangePoint {
            index,
            p_value: pieces.p_value,
            mean_before: pieces.mean_before,
            mean_after: pieces.mean_after,
            stddev_before: pieces.stddev_before,
            stddev_after: pieces.stddev_after,
            relative_change: (pieces.mean_before != 0.0)
                .then(|| pieces.mean_after / pieces.mean_before - 1.0),
            magnitude: pieces.magnitude(),
        }
    }

    /// Whether the change made the metric worse or better, for a metric where `better` is the good direction;
    /// `None` when the means are equal.
    pub fn shift(&self, better: Better) -> Option<Shift> {
        let up = match self.mean_after.partial_cmp(&self.mean_before)? {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal => return None,
        };
        Some(if up == (better == Better::Higher) {
            Shift::Improvement
        } else {
            Shift::Regression
        })
    }
}

impl ChangePoint {
    /// The change in words, naming the run it starts at: "worse by 25.0% since run r21 (p = 3.2e-7; mean 812 ms →
    /// 1,015 ms)", for a series of `metric`.
    pub fn since(&self, run: &str, metric: crate::metric::Metric) -> String {
        let way = match self.shift(metric.better()) {
            Some(Shift::Regression) => "worse",
            Some(Shift::Improvement) => "better",
            None => "unchanged",
        };
        let by = self.relative_change.map_or(String::new(), |change| {
            format!(" by {:.1}%", change.abs() * 100.0)
        });
        format!(
            "{way}{by} since run {run} (p = {:.1e}; mean {} → {})",
            self.p_value,
            metric.format(self.mean_before),
            metric.format(self.mean_after)
        )
    }
}

/// Which way a change point moved the metric, written `worse` or `better`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Shift {
    /// The metric moved the bad way: a latency up, a throughput down.
    #[serde(rename = "worse")]
    Regression,
    /// The metric moved the good way.
    #[serde(rename = "better")]
    Improvement,
}

impl Shift {
    /// `regression` or `improvement`.
    pub fn name(self) -> &'static str {
        match self {
            Shift::Regression => "regression",
            Shift::Improvement => "improvement",
        }
    }
}

/// The series with each missing run given the value before it, and leading missing runs the first value;
/// `None` when no run has a value.
fn fill_missing(series: &[Option<f64>]) -> Option<Vec<f64>> {
    let first = series.iter().flatten().copied().find(|x| x.is_finite())?;
    let mut last = first;
    Some(
        series
            .iter()
            .map(|value| {
                if let Some(x) = value.filter(|x| x.is_finite()) {
                    last = x;
                }
                last
            })
            .collect(),
    )
}

/// The split step: every window's change points, in increasing index, each once.
fn split(series: &[f64], window_len: usize, max_pvalue: f64) -> Vec<usize> {
    let step = window_len / 2;
    let mut found = Vec::new();
    let mut start = 0;
    while start < series.len() {
        let end = (start + window_len).min(series.len());
        let points = split_window(&series[start..end], max_pvalue);
        let last = points.last().map_or(0, |index| start + index);
        found.extend(points.iter().map(|index| start + index));
        start = last.max(start + step);
    }
    crate::order::sorted_distinct(found)
}

/// One window split recursively: the best candidate over all its pieces is kept while its t-test passes
/// `max_pvalue`; the first that does not ends the window. Indices are relative to the window.
fn split_window(window: &[f64], max_pvalue: f64) -> Vec<usize> {
    let mut points: Vec<usize> = Vec::new();
    if window.len() < 2 {
        return points;
    }
    let distances = qhat::Distances::new(window);
    loop {
        let mut best: Option<(qhat::Candidate, usize, usize)> = None;
        for (start, end) in intervals(&points, window.len()) {
            if end - start > 1 {
                let candidate = distances.candidate(start, end);
                // Python's `max`: a later candidate wins only with a greater Q-hat.
                if best.is_none_or(|(held, _, _)| candidate.qhat > held.qhat) {
                    best = Some((candidate, start, end));
                }
            }
        }
        let Some((candidate, start, end)) = best else {
            break;
        };
        let pieces = Pieces::compare(
            &window[start..candidate.index],
            &window[candidate.index..end],
        );
        // A NaN p-value passes no threshold.
        let passes = matches!(
            pieces.p_value.partial_cmp(&max_pvalue),
            Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
        );
        if !passes {
            break;
        }
        let at = points.partition_point(|&index| index < candidate.index);
        points.insert(at, candidate.index);
    }
    points
}

/// The pieces between consecutive change points of `points` (sorted) over `len` values.
fn intervals(points: &[usize], len: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    let starts = std::iter::once(0).chain(points.iter().copied());
    let ends = points.iter().copied().chain(std::iter::once(len));
    starts.zip(ends).filter(|(start, end)| start != end)
}

/// The pieces either side of the change point at `position` of `points` (sorted), compared.
fn pieces_at(series: &[f64], points: &[usize], position: usize) -> Pieces {
    let start = if position == 0 {
        0
    } else {
        points[position - 1]
    };
    let end = points.get(position + 1).copied().unwrap_or(series.len());
    let index = points[position];
    Pieces::compare(&series[start..index], &series[index..end])
}

/// The merge step: while some change point has p ≥ `max_pvalue` (the first of the highest p goes), or else the
/// smallest magnitude (the first of them) is at most `min_magnitude`, that one is dropped; the change point that
/// followed it and the next one are compared again over their pieces now, the one before it keeping its figures
/// as the reference implementation leaves them.
fn merge(
    mut points: Vec<(usize, Pieces)>,
    series: &[f64],
    max_pvalue: f64,
    min_magnitude: f64,
) -> Vec<(usize, Pieces)> {
    while !points.is_empty() {
        let mut weakest = first_extreme(&points, |pieces| pieces.p_value, |a, b| a > b);
        if points[weakest].1.p_value < max_pvalue {
            weakest = first_extreme(&points, Pieces::magnitude, |a, b| a < b);
            if points[weakest].1.magnitude() > min_magnitude {
                break;
            }
        }
        points.remove(weakest);
        let indices: Vec<usize> = points.iter().map(|(index, _)| *index).collect();
        for position in [weakest, weakest + 1] {
            if position < points.len() {
                points[position].1 = pieces_at(series, &indices, position);
            }
        }
    }
    points
}

/// The position of the first point whose key `beats` every earlier one's, as Python's `max` and `min` pick it
/// (a NaN neither beats nor is beaten).
fn first_extreme(
    points: &[(usize, Pieces)],
    key: impl Fn(&Pieces) -> f64,
    beats: impl Fn(f64, f64) -> bool,
) -> usize {
    let mut best = 0;
    for (position, (_, pieces)) in points.iter().enumerate().skip(1) {
        if beats(key(pieces), key(&points[best].1)) {
            best = position;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_out_of_range_are_refused() {
        assert_eq!(
            Hunter::new(1, 0.001, 0.0),
            Err(HunterError::WindowTooShort(1))
        );
        assert_eq!(Hunter::new(10, 0.0, 0.0), Err(HunterError::PValue(0.0)));
        assert!(matches!(
            Hunter::new(10, f64::NAN, 0.0),
            Err(HunterError::PValue(_))
        ));
        assert_eq!(
            Hunter::new(10, 0.01, -0.1),
            Err(HunterError::Magnitude(-0.1))
        );
        assert_eq!(Hunter::new(50, 0.001, 0.0), Ok(Hunter::default()));
    }

    #[test]
    fn the_first_pass_threshold_relaxes_by_ten_then_two() {
        let first = |p| Hunter::new(10, p, 0.0).map(|hunter| hunter.first_pass_pvalue());
        assert_eq!(first(0.001), Ok(0.01));
        assert_eq!(first(0.05), Ok(0.1));
        assert_eq!(first(0.6), Ok(0.6));
    }

    #[test]
    fn missing_runs_take_the_value_before_them() {
        let filled = fill_missing(&[None, Some(2.0), None, Some(f64::NAN), Some(5.0), None]);
        assert_eq!(filled, Some(vec![2.0, 2.0, 2.0, 2.0, 5.0, 5.0]));
        assert_eq!(fill_missing(&[None, Some(f64::INFINITY)]), None);
    }

    #[test]
    fn a_latency_up_is_a_regression_and_a_throughput_up_an_improvement() {
        let series: Vec<Option<f64>> = [10.0; 20]
            .iter()
            .chain(&[20.0; 20])
            .map(|x| Some(*x))
            .collect();
        let points = Hunter::default().change_points(&series);
        assert_eq!(points.len(), 1);
        let point = &points[0];
        assert_eq!((point.index, point.p_value), (20, 0.0));
        assert_eq!((point.relative_change, point.magnitude), (Some(1.0), 1.0));
        assert_eq!(point.shift(Better::Lower), Some(Shift::Regression));
        assert_eq!(point.shift(Better::Higher), Some(Shift::Improvement));
        assert_eq!(
            point.since(
                "r21",
                crate::metric::Metric::Stat(crate::stat::Stat::P99TtftMs)
            ),
            "worse by 100.0% since run r21 (p = 0.0e0; mean 10 ms → 20 ms)"
        );
        assert_eq!(
            point.since(
                "r21",
                crate::metric::Metric::Stat(crate::stat::Stat::AggregateTps)
            ),
            "better by 100.0% since run r21 (p = 0.0e0; mean 10 tok/s → 20 tok/s)"
        );
    }
}
