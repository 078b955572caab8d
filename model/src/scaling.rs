//! Scaling metrics against the N=1 baseline: parallel efficiency, p95 multiplier, rep aggregation and
//! breakdown N under a named criterion (docs/definitions.md#efficiency, #breakdown).

use crate::load::{Load, LoadKind};
use serde::{Deserialize, Serialize};

/// `aggregate_tps(N) / (N × aggregate_tps(N=1))`.
pub fn efficiency(aggregate_tps: f64, n: u32, baseline_tps: f64) -> Option<f64> {
    let denominator = f64::from(n) * baseline_tps;
    (denominator > 0.0).then(|| aggregate_tps / denominator)
}

/// Achieved over offered request rate; `None` for an unbounded offered rate, which nothing keeps up with.
pub fn achieved_over_offered(achieved_rps: f64, offered_rps: f64) -> Option<f64> {
    (offered_rps.is_finite() && offered_rps > 0.0).then(|| achieved_rps / offered_rps)
}

/// `p95(wall_ms at N) / p95(wall_ms at N=1)`.
pub fn p95_multiplier(p95_wall_ms: f64, baseline_p95_wall_ms: f64) -> Option<f64> {
    (baseline_p95_wall_ms > 0.0).then(|| p95_wall_ms / baseline_p95_wall_ms)
}

/// One N=1 cell of a series as a baseline candidate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BaselineCandidate {
    /// The repetition this N=1 cell belongs to.
    pub rep: u32,
    /// The cell's aggregate throughput, tokens/s; `None` when undefined.
    pub aggregate_tps: Option<f64>,
    /// The cell's p95 end-to-end latency, ms; `None` without an ok row.
    pub p95_wall_ms: Option<f64>,
}

/// The N=1 values a cell is normalised against.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Baseline {
    /// N=1 aggregate throughput, tokens/s, that efficiency divides by; `None` when no N=1 cell has one.
    pub aggregate_tps: Option<f64>,
    /// N=1 p95 end-to-end latency, ms, that the p95 multiplier divides by; `None` when no N=1 cell has one.
    pub p95_wall_ms: Option<f64>,
    /// True when the same-rep N=1 value was missing and the mean of the available N=1 reps was used.
    pub fallback: bool,
}

/// Picks the baseline for `rep`: the N=1 cell with the same rep, else the mean of the available N=1 reps.
///
/// The two metrics fall back independently, because a same-rep N=1 cell can have a p95 without a
/// throughput (a single request has no span).
pub fn baseline(rep: u32, candidates: &[BaselineCandidate]) -> Baseline {
    let same_rep = candidates.iter().find(|candidate| candidate.rep == rep);
    let mut fallback = false;
    let mut pick = |value: fn(&BaselineCandidate) -> Option<f64>| -> Option<f64> {
        if let Some(value) = same_rep.and_then(value) {
            return Some(value);
        }
        let available: Vec<f64> = candidates.iter().filter_map(value).collect();
        if available.is_empty() {
            return None;
        }
        fallback = true;
        Some(available.iter().sum::<f64>() / available.len() as f64)
    };
    let aggregate_tps = pick(|candidate| candidate.aggregate_tps);
    let p95_wall_ms = pick(|candidate| candidate.p95_wall_ms);
    Baseline {
        aggregate_tps,
        p95_wall_ms,
        fallback,
    }
}

/// A breakdown criterion: the curve "breaks" at the first N where efficiency falls below a threshold, or (when
/// the criterion has one) the p95 multiplier exceeds a threshold. The two published definitions are named; any
/// other pair of thresholds is `Custom`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Criterion {
    /// TR164 V1 H1: efficiency < 0.65 OR p95 multiplier > 2.0.
    V1,
    /// TR164 V3 `first_n_below_0.65`: efficiency < 0.65 only.
    V3,
    /// Any other pair of thresholds.
    Custom {
        /// The curve breaks at the first N whose efficiency is below this.
        efficiency_below: f64,
        /// `None`: the tail never breaks a curve.
        p95_multiplier_above: Option<f64>,
    },
}

impl Criterion {
    /// Every criterion's name, as [`Criterion::name`] spells it.
    pub const NAMES: [&'static str; 3] = ["v1", "v3", "custom"];

    /// The criterion's name: `v1`, `v3` or `custom`.
    pub fn name(&self) -> &'static str {
        match self {
            Criterion::V1 => "v1",
            Criterion::V3 => "v3",
            Criterion::Custom { .. } => "custom",
        }
    }

    /// A published criterion by name (`v1`, `v3`).
    pub fn named(name: &str) -> Option<Criterion> {
        match name {
            "v1" => Some(Criterion::V1),
            "v3" => Some(Criterion::V3),
            _ => None,
        }
    }

    /// The efficiency below which a curve breaks (0.65 for both published criteria).
    pub fn efficiency_below(&self) -> f64 {
        match self {
            Criterion::V1 | Criterion::V3 => 0.65,
            Criterion::Custom {
                efficiency_below, ..
            } => *efficiency_below,
        }
    }

    /// The p95 multiplier above which a curve breaks; `None` when only efficiency counts.
    pub fn p95_multiplier_above(&self) -> Option<f64> {
        match self {
            Criterion::V1 => Some(2.0),
            Criterion::V3 => None,
            Criterion::Custom {
                p95_multiplier_above,
                ..
            } => *p95_multiplier_above,
        }
    }

    /// The same thresholds with the efficiency one changed: a custom criterion, unless the result is a named one.
    pub fn with_efficiency_below(&self, efficiency_below: f64) -> Criterion {
        Criterion::from_thresholds(efficiency_below, self.p95_multiplier_above())
    }

    /// The same thresholds with the p95 one changed (`None` = off).
    pub fn with_p95_multiplier_above(&self, p95_multiplier_above: Option<f64>) -> Criterion {
        Criterion::from_thresholds(self.efficiency_below(), p95_multiplier_above)
    }

    /// The named criterion with exactly these thresholds, else a custom one.
    pub fn from_thresholds(efficiency_below: f64, p95_multiplier_above: Option<f64>) -> Criterion {
        [Criterion::V1, Criterion::V3]
            .into_iter()
            .find(|named| {
                named.efficiency_below() == efficiency_below
                    && named.p95_multiplier_above() == p95_multiplier_above
            })
            .unwrap_or(Criterion::Custom {
                efficiency_below,
                p95_multiplier_above,
            })
    }

    /// `efficiency < 0.65 or p95 multiplier > 2`.
    pub fn describe(&self) -> String {
        let mut text = format!("efficiency < {}", self.efficiency_below());
        if let Some(above) = self.p95_multiplier_above() {
            text.push_str(&format!(" or p95 multiplier > {above}"));
        }
        text
    }

    /// Whether the criterion holds at a point. An undefined metric never makes it hold.
    pub fn holds(&self, efficiency: Option<f64>, p95_multiplier: Option<f64>) -> bool {
        let efficiency_breaks = efficiency.is_some_and(|value| value < self.efficiency_below());
        let tail_breaks = match (self.p95_multiplier_above(), p95_multiplier) {
            (Some(threshold), Some(value)) => value > threshold,
            _ => false,
        };
        efficiency_breaks || tail_breaks
    }

    /// Whether a rate point is saturated: achieved/offered below [`RATE_SATURATION`], or the p95 multiplier
    /// (against the lowest rate) above the criterion's threshold.
    pub fn saturates(
        &self,
        achieved_over_offered: Option<f64>,
        p95_multiplier: Option<f64>,
    ) -> bool {
        let behind = achieved_over_offered.is_some_and(|value| value < RATE_SATURATION);
        let tail_breaks = match (self.p95_multiplier_above(), p95_multiplier) {
            (Some(threshold), Some(value)) => value > threshold,
            _ => false,
        };
        behind || tail_breaks
    }
}

/// An open-loop server keeps up with an offered rate while it completes at least this share of it.
pub const RATE_SATURATION: f64 = 0.9;

/// The first N, in ascending order, at which `criterion` holds on the rep-mean values; `None` = never within
/// the measured N. Curves can be non-monotone, so this is a first crossing, not a threshold search.
pub fn breakdown_n(
    points: &[(u32, Option<f64>, Option<f64>)],
    criterion: &Criterion,
) -> Option<u32> {
    // The smallest N among the points where it holds is the first in ascending order: no sorted copy needed.
    points
        .iter()
        .filter(|(_, efficiency, p95_multiplier)| criterion.holds(*efficiency, *p95_multiplier))
        .map(|(n, _, _)| *n)
        .min()
}

/// [`breakdown_n`] over loads: at a concurrency the criterion as stated; at an offered rate the curve saturates
/// where achieved/offered falls below [`RATE_SATURATION`] or the p95 multiplier passes the criterion's threshold.
pub fn breakdown_load(
    points: &[(Load, Option<f64>, Option<f64>)],
    criterion: &Criterion,
) -> Option<Load> {
    points
        .iter()
        .filter(|(load, efficiency, p95_multiplier)| match load.kind() {
            LoadKind::Concurrency => criterion.holds(*efficiency, *p95_multiplier),
            LoadKind::Rate => criterion.saturates(*efficiency, *p95_multiplier),
            LoadKind::Unstated => false,
        })
        .map(|(load, _, _)| *load)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efficiency_is_aggregate_over_n_times_baseline() {
        // A fully serialising dispatcher scores 1/N.
        assert_eq!(efficiency(40.0, 16, 40.0), Some(1.0 / 16.0));
        assert_eq!(efficiency(72.0, 2, 40.0), Some(0.9));
        assert_eq!(efficiency(72.0, 2, 0.0), None);
        assert_eq!(p95_multiplier(3000.0, 1500.0), Some(2.0));
    }

    #[test]
    fn baseline_prefers_the_same_rep_and_falls_back_to_the_rep_mean() {
        let candidates = [
            BaselineCandidate {
                rep: 0,
                aggregate_tps: Some(40.0),
                p95_wall_ms: Some(100.0),
            },
            BaselineCandidate {
                rep: 2,
                aggregate_tps: Some(44.0),
                p95_wall_ms: Some(140.0),
            },
        ];
        assert_eq!(
            baseline(0, &candidates),
            Baseline {
                aggregate_tps: Some(40.0),
                p95_wall_ms: Some(100.0),
                fallback: false
            }
        );
        assert_eq!(
            baseline(1, &candidates),
            Baseline {
                aggregate_tps: Some(42.0),
                p95_wall_ms: Some(120.0),
                fallback: true
            }
        );
        assert_eq!(baseline(1, &[]), Baseline::default());
    }

    #[test]
    fn criteria_match_the_published_definitions() {
        assert!(Criterion::V1.holds(Some(0.70), Some(2.046)));
        assert!(!Criterion::V3.holds(Some(0.70), Some(2.046)));
        assert!(Criterion::V3.holds(Some(0.649), None));
        assert!(!Criterion::V3.holds(Some(0.65), None));
        assert!(!Criterion::V1.holds(None, None));
    }

    #[test]
    fn thresholds_that_equal_a_named_criterion_are_that_criterion() {
        assert_eq!(Criterion::from_thresholds(0.65, None), Criterion::V3);
        assert_eq!(
            Criterion::V3.with_p95_multiplier_above(Some(2.0)),
            Criterion::V1
        );
        assert_eq!(
            Criterion::V1.with_efficiency_below(0.7),
            Criterion::Custom {
                efficiency_below: 0.7,
                p95_multiplier_above: Some(2.0)
            }
        );
        assert_eq!(
            Criterion::V1.describe(),
            "efficiency < 0.65 or p95 multiplier > 2"
        );
    }

    #[test]
    fn breakdown_is_the_first_crossing_even_when_the_curve_recovers() {
        // vLLM mistral-7b × long_decode: below 0.65 at N=16, 0.651 at N=32 → breaks at 16.
        let points = [
            (32, Some(0.651), None),
            (1, Some(1.0), None),
            (2, Some(0.95), None),
            (4, Some(0.88), None),
            (8, Some(0.78), None),
            (16, Some(0.62), None),
        ];
        assert_eq!(breakdown_n(&points, &Criterion::V3), Some(16));
        let never = [(1, Some(1.0), None), (32, Some(0.78), Some(1.28))];
        assert_eq!(breakdown_n(&never, &Criterion::V3), None);
        // V1 also breaks on the tail alone.
        let tail = [(1, Some(1.0), Some(1.0)), (2, Some(0.7), Some(2.1))];
        assert_eq!(breakdown_n(&tail, &Criterion::V1), Some(2));
    }
}
