//! The Pareto frontier of a series drawn against two metrics: the points no other point of the series beats on
//! both axes, and the staircase that joins them.
//!
//! A sweep read as throughput against latency has a best trade-off at each latency budget; the frontier names
//! the N that reach it. Which way is better on each axis is the metric's own ([`Metric::lower_is_better`]), so
//! the frontier of p95 TTFT against throughput prefers low TTFT and high throughput without being told. It is
//! computed on the values the chart shows (after reps and series are pooled): a log axis changes no order, so
//! the frontier is the same on linear and log axes.

use crate::metric::Metric;
pub use crate::stat::Better;

impl Better {
    /// The metric's direction: lower for latencies and multipliers, higher for the rest.
    pub fn of(metric: Metric) -> Better {
        metric.better()
    }

    /// Whether `a` is at least as good as `b`.
    fn at_least(self, a: f64, b: f64) -> bool {
        match self {
            Better::Higher => a >= b,
            Better::Lower => a <= b,
        }
    }

    /// Of two values, the worse one.
    fn worse(self, a: f64, b: f64) -> f64 {
        match self {
            Better::Higher => a.min(b),
            Better::Lower => a.max(b),
        }
    }
}

/// Whether `a` dominates `b`: at least as good on both axes and not the same point (so strictly better on one).
fn dominates(a: (f64, f64), b: (f64, f64), x: Better, y: Better) -> bool {
    x.at_least(a.0, b.0) && y.at_least(a.1, b.1) && a != b
}

/// The indices of the points of `points` that no other point dominates, in ascending x (then y, then index).
/// Equal points do not dominate each other, so they are on the frontier together or not at all; a point with a
/// coordinate that is not a finite number is never on it and dominates nothing (callers leave such points out:
/// a missing value is never drawn, let alone as zero).
pub fn frontier(points: &[(f64, f64)], x: Better, y: Better) -> Vec<usize> {
    let finite = |point: &(f64, f64)| point.0.is_finite() && point.1.is_finite();
    let mut members: Vec<usize> = (0..points.len())
        .filter(|&index| {
            let point = points[index];
            finite(&point)
                && !points
                    .iter()
                    .any(|other| finite(other) && dominates(*other, point, x, y))
        })
        .collect();
    // O(n²) is plenty: a series has one point per N, a dozen at most.
    crate::order::sort_stable_by(&mut members, |&a, &b| {
        points[a]
            .0
            .total_cmp(&points[b].0)
            .then(points[a].1.total_cmp(&points[b].1))
    });
    members
}

/// The staircase through frontier points given in ascending x: between two neighbours it turns at the corner
/// made of the worse x and the worse y of the pair, so it bounds what the series reaches (every point the
/// series has lies on the staircase's worse side) without suggesting a trade-off between two runs that nobody
/// measured. Repeated corners are dropped.
pub fn staircase(front: &[(f64, f64)], x: Better, y: Better) -> Vec<(f64, f64)> {
    let mut path: Vec<(f64, f64)> = Vec::with_capacity(front.len() * 2);
    for (index, point) in front.iter().enumerate() {
        if index > 0 {
            let previous = front[index - 1];
            path.push((x.worse(previous.0, point.0), y.worse(previous.1, point.1)));
        }
        path.push(*point);
    }
    path.dedup();
    path
}

#[cfg(test)]
mod tests {
    use super::Better::{Higher, Lower};
    use super::*;
    use crate::stat::Stat;

    fn front(points: &[(f64, f64)], x: Better, y: Better) -> Vec<usize> {
        frontier(points, x, y)
    }

    #[test]
    fn latency_against_throughput_keeps_the_points_nothing_beats() {
        // x = p95 TTFT (lower better), y = throughput (higher better), one point per N of a sweep:
        //   N=1 (100 ms, 50), N=2 (120 ms, 90), N=4 (200 ms, 85), N=8 (400 ms, 160), N=16 (900 ms, 150).
        // N=4 is beaten by N=2 (faster and more), N=16 by N=8; the rest trade latency for throughput.
        let points = [
            (100.0, 50.0),
            (120.0, 90.0),
            (200.0, 85.0),
            (400.0, 160.0),
            (900.0, 150.0),
        ];
        assert_eq!(front(&points, Lower, Higher), [0, 1, 3]);
        // The staircase turns at (worse x, worse y) of each neighbouring pair: right along y = 50 to x = 120,
        // up to 90, right to x = 400, up to 160.
        let path = staircase(
            &[(100.0, 50.0), (120.0, 90.0), (400.0, 160.0)],
            Lower,
            Higher,
        );
        assert_eq!(
            path,
            [
                (100.0, 50.0),
                (120.0, 50.0),
                (120.0, 90.0),
                (400.0, 90.0),
                (400.0, 160.0)
            ]
        );
    }

    #[test]
    fn both_axes_higher_is_better() {
        // x = throughput per user, y = aggregate throughput (both higher better): the usual interactivity chart.
        // Per-user throughput falls as N grows while aggregate throughput rises, until saturation.
        let points = [(60.0, 60.0), (55.0, 110.0), (40.0, 160.0), (30.0, 150.0)];
        assert_eq!(front(&points, Higher, Higher), [2, 1, 0]);
        // Sorted by x, y falls: the corner of a pair is (smaller x, smaller y), below-left of both.
        assert_eq!(
            staircase(&[(40.0, 160.0), (55.0, 110.0)], Higher, Higher),
            [(40.0, 160.0), (40.0, 110.0), (55.0, 110.0)]
        );
    }

    #[test]
    fn both_axes_lower_is_better() {
        // p50 against p95 latency: (10, 30) beats (12, 31) on both; (9, 40) and (20, 25) trade one for the other.
        let points = [(10.0, 30.0), (12.0, 31.0), (9.0, 40.0), (20.0, 25.0)];
        assert_eq!(front(&points, Lower, Lower), [2, 0, 3]);
    }

    #[test]
    fn every_point_can_be_on_the_frontier() {
        // A pure trade-off: each step in N buys throughput with latency.
        let points = [(1.0, 1.0), (2.0, 2.0), (3.0, 3.0), (4.0, 4.0)];
        assert_eq!(front(&points, Lower, Higher), [0, 1, 2, 3]);
        // Read with both axes higher-better, the last point beats all the others.
        assert_eq!(front(&points, Higher, Higher), [3]);
    }

    #[test]
    fn a_single_point_is_its_own_frontier_and_nothing_is_empty() {
        assert_eq!(front(&[(5.0, 7.0)], Lower, Higher), [0]);
        assert_eq!(staircase(&[(5.0, 7.0)], Lower, Higher), [(5.0, 7.0)]);
        assert!(front(&[], Lower, Higher).is_empty());
        assert!(staircase(&[], Lower, Higher).is_empty());
    }

    #[test]
    fn ties() {
        // Equal points do not dominate each other: both stay, and both fall to a point that beats them.
        let points = [(100.0, 50.0), (100.0, 50.0), (150.0, 80.0)];
        assert_eq!(front(&points, Lower, Higher), [0, 1, 2]);
        assert_eq!(
            front(&[(100.0, 50.0), (100.0, 50.0), (90.0, 60.0)], Lower, Higher),
            [2]
        );
        // Equal on one axis, better on the other: the better one dominates.
        assert_eq!(front(&[(100.0, 50.0), (100.0, 60.0)], Lower, Higher), [1]);
        assert_eq!(front(&[(100.0, 50.0), (90.0, 50.0)], Lower, Higher), [1]);
        // Twin points give no repeated corner on the staircase.
        assert_eq!(
            staircase(
                &[(100.0, 50.0), (100.0, 50.0), (150.0, 80.0)],
                Lower,
                Higher
            ),
            [(100.0, 50.0), (150.0, 50.0), (150.0, 80.0)]
        );
    }

    #[test]
    fn missing_values_are_never_on_it_and_beat_nothing() {
        // A NaN (a value that is missing) or an infinity is not a position: it neither joins nor shadows.
        let points = [
            (f64::NAN, 1000.0),
            (100.0, 50.0),
            (f64::NEG_INFINITY, f64::INFINITY),
            (120.0, 40.0),
        ];
        assert_eq!(front(&points, Lower, Higher), [1]);
    }

    #[test]
    fn the_direction_comes_from_the_metric() {
        assert_eq!(Better::of(Metric::Stat(Stat::P95TtftMs)), Lower);
        assert_eq!(Better::of(Metric::Stat(Stat::P95Multiplier)), Lower);
        assert_eq!(Better::of(Metric::Stat(Stat::AggregateTps)), Higher);
        assert_eq!(Better::of(Metric::Stat(Stat::Efficiency)), Higher);
    }
}
