//! The capacity of a configuration under an SLO: judged on the rep-mean of each load level, found between the
//! highest level where the SLO holds and the next measured level, with the range of the reps' own capacities.

use super::Slo;
use crate::load::LoadKind;
use crate::order::{sort_floats, sorted_distinct};

/// One rep's values at one level: the statistic of each bound of the SLO, in the SLO's bound order. `None` (or a
/// NaN) means the statistic is missing, so the SLO cannot be judged for this rep at this level.
#[derive(Clone, Debug, PartialEq)]
pub struct RepValues {
    /// The rep, which identifies it across levels.
    pub rep: u32,
    /// One value per bound, in [`Slo::bounds`] order.
    pub values: Vec<Option<f64>>,
}

/// One measured load level of a configuration: its load and its reps.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    /// The load: a concurrency N or an offered rate in req/s; `f64::INFINITY` for all requests at once.
    pub load: f64,
    /// The reps measured at this load.
    pub reps: Vec<RepValues>,
}

/// The smallest and largest of the reps' own capacities.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RepRange {
    /// The smallest rep capacity.
    pub low: f64,
    /// The largest rep capacity.
    pub high: f64,
    /// How many reps (each with a complete series) the range is over.
    pub reps: usize,
}

/// What an SLO says about a configuration's loads.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The SLO holds up to `load`, found between the highest level where it holds and the next one, where it fails.
    Capacity {
        /// The interpolated capacity; the lower end of `bracket` when the next level is all at once.
        load: f64,
        /// The range of the reps' own capacities, when at least two reps have a complete series.
        interval: Option<RepRange>,
        /// The highest level where the SLO holds and the next measured level, where it fails.
        bracket: (f64, f64),
        /// Whether the SLO fails at some level below the one where it last holds: the curve crossed back.
        non_monotone: bool,
    },
    /// The SLO holds at the highest measured level: the capacity is at least `up_to`.
    NotReached {
        /// The highest measured level.
        up_to: f64,
        /// Whether the SLO fails at some lower level.
        non_monotone: bool,
    },
    /// The SLO holds at no measured level, the lowest included.
    NeverMet {
        /// The lowest measured level.
        lowest: f64,
    },
    /// No level has every bound's statistic.
    Unjudged {
        /// Why, in words.
        reason: &'static str,
    },
}

/// What the loads are, for the labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadAxis {
    /// A concurrency N (`N=5.3`).
    Concurrency,
    /// An offered rate (`5.3 req/s`).
    RequestRate,
}

impl LoadAxis {
    /// The kind of load the axis holds.
    pub fn kind(self) -> LoadKind {
        match self {
            LoadAxis::Concurrency => LoadKind::Concurrency,
            LoadAxis::RequestRate => LoadKind::Rate,
        }
    }

    /// A load on this axis to a reader's precision: `N=5.3`, `5.3 req/s`, `all at once`.
    pub fn text(self, load: f64) -> String {
        load_text(load, self)
    }
}

/// Where an outcome sits on a scale of loads: a capacity found between two measured levels, a lower bound, or
/// no load at all. A lower bound is drawn as one, never as if the capacity had been measured there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Placed {
    /// Found between the highest level where the SLO holds and the next, where it fails.
    Measured(f64),
    /// At least this load: the SLO holds at the highest measured level (`f64::INFINITY` when that is all at
    /// once), or the next level is all at once, where nothing is interpolated.
    AtLeast(f64),
    /// The SLO holds at no measured level.
    NeverMet,
    /// No level has every bound's statistic.
    Unjudged,
}

impl Outcome {
    /// Where the outcome sits on a scale of loads ([`Placed`]).
    pub fn placed(&self) -> Placed {
        match self {
            Outcome::Capacity { load, bracket, .. } if bracket.1.is_infinite() => {
                Placed::AtLeast(*load)
            }
            Outcome::Capacity { load, .. } => Placed::Measured(*load),
            Outcome::NotReached { up_to, .. } => Placed::AtLeast(*up_to),
            Outcome::NeverMet { .. } => Placed::NeverMet,
            Outcome::Unjudged { .. } => Placed::Unjudged,
        }
    }
}

/// A level judged on its rep-means: the load and each bound's mean.
struct Judged {
    load: f64,
    means: Vec<f64>,
}

impl Slo {
    /// The capacity of a configuration measured at `levels` (in any order; levels of equal load are one level).
    pub fn capacity(&self, levels: &[Level]) -> Outcome {
        let judged = self.judge(levels, None);
        let mut outcome = self.outcome(&judged, levels.is_empty());
        if let Outcome::Capacity { interval, .. } = &mut outcome {
            *interval = self.rep_range(levels);
        }
        outcome
    }

    /// The outcome of judged levels, without the rep range.
    fn outcome(&self, judged: &[Judged], no_levels: bool) -> Outcome {
        let Some(lowest) = judged.first() else {
            let reason = if no_levels {
                "no measured level"
            } else {
                "no level has every bound's statistic"
            };
            return Outcome::Unjudged { reason };
        };
        let holds: Vec<bool> = judged.iter().map(|level| self.holds(level)).collect();
        let Some(highest) = holds.iter().rposition(|holds| *holds) else {
            return Outcome::NeverMet {
                lowest: lowest.load,
            };
        };
        let non_monotone = holds[..highest].iter().any(|holds| !holds);
        let Some(failing) = judged.get(highest + 1) else {
            return Outcome::NotReached {
                up_to: judged[highest].load,
                non_monotone,
            };
        };
        let holding = &judged[highest];
        Outcome::Capacity {
            load: self.crossing(holding, failing),
            interval: None,
            bracket: (holding.load, failing.load),
            non_monotone,
        }
    }

    /// Whether every bound holds on the level's means.
    fn holds(&self, level: &Judged) -> bool {
        self.bounds
            .iter()
            .zip(&level.means)
            .all(|(bound, mean)| *mean <= bound.max)
    }

    /// The smallest load in [holding, failing] where a bound violated at `failing` reaches its maximum, each
    /// statistic linear in load between the two; `holding`'s load when `failing` is all at once.
    fn crossing(&self, holding: &Judged, failing: &Judged) -> f64 {
        if failing.load.is_infinite() {
            return holding.load;
        }
        let span = failing.load - holding.load;
        self.bounds
            .iter()
            .enumerate()
            .filter(|(bound, spec)| failing.means[*bound] > spec.max)
            .map(|(bound, spec)| {
                let (low, high) = (holding.means[bound], failing.means[bound]);
                holding.load + (spec.max - low) / (high - low) * span
            })
            .fold(failing.load, f64::min)
    }

    /// The levels in increasing load with each bound's mean over the reps that have every value there (only
    /// `rep` when given); levels where no rep does are left out.
    fn judge(&self, levels: &[Level], rep: Option<u32>) -> Vec<Judged> {
        let mut loads: Vec<f64> = levels.iter().map(|level| level.load).collect();
        loads.retain(|load| !load.is_nan());
        sort_floats(&mut loads);
        loads.dedup();
        loads
            .into_iter()
            .filter_map(|load| {
                let complete: Vec<Vec<f64>> = levels
                    .iter()
                    .filter(|level| level.load == load)
                    .flat_map(|level| &level.reps)
                    .filter(|values| rep.is_none_or(|rep| values.rep == rep))
                    .filter_map(|values| self.complete(values))
                    .collect();
                means(&complete, self.bounds.len()).map(|means| Judged { load, means })
            })
            .collect()
    }

    /// A rep's values when it has one for every bound.
    fn complete(&self, values: &RepValues) -> Option<Vec<f64>> {
        if values.values.len() != self.bounds.len() {
            return None;
        }
        values
            .values
            .iter()
            .map(|value| value.filter(|value| !value.is_nan()))
            .collect()
    }

    /// The [min, max] of the capacities of the reps with every value at every level, when there are two or more:
    /// a rep whose SLO holds at every level counts as the highest level, one that never holds as the lowest.
    fn rep_range(&self, levels: &[Level]) -> Option<RepRange> {
        let reps = self.complete_reps(levels);
        if reps.len() < 2 {
            return None;
        }
        let capacities: Vec<f64> = reps
            .iter()
            .filter_map(
                |rep| match self.outcome(&self.judge(levels, Some(*rep)), false) {
                    Outcome::Capacity { load, .. } => Some(load),
                    Outcome::NotReached { up_to, .. } => Some(up_to),
                    Outcome::NeverMet { lowest } => Some(lowest),
                    Outcome::Unjudged { .. } => None,
                },
            )
            .collect();
        Some(RepRange {
            low: capacities.iter().copied().fold(f64::INFINITY, f64::min),
            high: capacities.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            reps: capacities.len(),
        })
    }

    /// The reps with every bound's value at every load, in rep order.
    fn complete_reps(&self, levels: &[Level]) -> Vec<u32> {
        let mut reps = sorted_distinct(
            levels
                .iter()
                .flat_map(|level| level.reps.iter().map(|values| values.rep)),
        );
        let measured: Vec<f64> = levels
            .iter()
            .map(|level| level.load)
            .filter(|load| !load.is_nan())
            .collect();
        reps.retain(|rep| {
            measured.iter().all(|load| {
                levels
                    .iter()
                    .filter(|level| level.load == *load)
                    .flat_map(|level| &level.reps)
                    .any(|values| values.rep == *rep && self.complete(values).is_some())
            })
        });
        reps
    }
}

/// Each bound's mean over complete reps; `None` when there is no rep.
fn means(reps: &[Vec<f64>], bounds: usize) -> Option<Vec<f64>> {
    if reps.is_empty() {
        return None;
    }
    let count = reps.len() as f64;
    Some(
        (0..bounds)
            .map(|bound| reps.iter().map(|values| values[bound]).sum::<f64>() / count)
            .collect(),
    )
}

impl Outcome {
    /// The outcome for a reader: `≈ 5.3 req/s (4–8)`, `≥ N=16 (not reached)`, `never met (fails at N=1)`.
    pub fn label(&self, axis: LoadAxis) -> String {
        match self {
            Outcome::Capacity {
                load,
                interval,
                bracket,
                non_monotone,
            } => {
                let mut notes = vec![if bracket.1.is_infinite() {
                    "fails all at once, not interpolated".to_string()
                } else {
                    format!("{}–{}", number(bracket.0), number(bracket.1))
                }];
                if let Some(range) = interval {
                    notes.push(format!(
                        "range over {} reps {}–{}",
                        range.reps,
                        number(range.low),
                        number(range.high)
                    ));
                }
                let sign = if bracket.1.is_infinite() {
                    "≥"
                } else {
                    "≈"
                };
                with_notes(
                    format!("{sign} {}", load_text(*load, axis)),
                    notes,
                    *non_monotone,
                )
            }
            Outcome::NotReached {
                up_to,
                non_monotone,
            } => with_notes(
                format!("≥ {}", load_text(*up_to, axis)),
                vec!["not reached".to_string()],
                *non_monotone,
            ),
            Outcome::NeverMet { lowest } => {
                format!("never met (fails at {})", load_text(*lowest, axis))
            }
            Outcome::Unjudged { reason } => format!("not judged: {reason}"),
        }
    }
}

/// `head (note; note)`, with the crossing-back note last.
fn with_notes(head: String, mut notes: Vec<String>, non_monotone: bool) -> String {
    if non_monotone {
        notes.push("crosses back".to_string());
    }
    format!("{head} ({})", notes.join("; "))
}

/// A load with its axis: `N=5.3`, `5.3 req/s`, `all at once`.
fn load_text(load: f64, axis: LoadAxis) -> String {
    if load.is_infinite() {
        return "all at once".to_string();
    }
    match axis {
        LoadAxis::Concurrency => format!("N={}", number(load)),
        LoadAxis::RequestRate => format!("{} req/s", number(load)),
    }
}

impl LoadAxis {
    /// The kind of load most of `loads` are (concurrency on a tie): the one a capacity is read over.
    pub fn most_of(loads: impl IntoIterator<Item = crate::load::Load>) -> LoadAxis {
        let (mut rates, mut concurrencies) = (0usize, 0usize);
        for load in loads {
            match load.kind() {
                crate::load::LoadKind::Rate => rates += 1,
                crate::load::LoadKind::Concurrency => concurrencies += 1,
                crate::load::LoadKind::Unstated => {}
            }
        }
        if rates > concurrencies {
            LoadAxis::RequestRate
        } else {
            LoadAxis::Concurrency
        }
    }

    /// A load of this kind: `N=5.3`, `5.3 req/s`, `all at once`.
    pub fn value_text(self, load: f64) -> String {
        load_text(load, self)
    }

    /// A difference of two loads of this kind, signed: `+2.6 N`, `-1.7 req/s`, `0 N`.
    pub fn delta_text(self, delta: f64) -> String {
        let symbol = match self {
            LoadAxis::Concurrency => "N",
            LoadAxis::RequestRate => "req/s",
        };
        if delta.abs() < 1e-9 {
            return format!("0 {symbol}");
        }
        let sign = if delta < 0.0 { "-" } else { "+" };
        format!("{sign}{} {symbol}", number(delta.abs()))
    }
}

/// A load to a reader's precision: whole numbers as they are, else one decimal (two below 1, none from 100).
fn number(value: f64) -> String {
    if value.is_infinite() {
        return "∞".to_string();
    }
    let decimals = match value.abs() {
        magnitude if magnitude >= 100.0 => 0,
        magnitude if magnitude >= 1.0 => 1,
        _ => 2,
    };
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slo() -> Slo {
        "p99_ttft_ms<=2000,p99_tpot_ms<=100".parse().unwrap()
    }

    /// One rep per level, both statistics given.
    fn levels(points: &[(f64, f64, f64)]) -> Vec<Level> {
        points
            .iter()
            .map(|(load, ttft, tpot)| Level {
                load: *load,
                reps: vec![RepValues {
                    rep: 1,
                    values: vec![Some(*ttft), Some(*tpot)],
                }],
            })
            .collect()
    }

    #[test]
    fn the_capacity_is_the_smallest_crossing_between_the_last_holding_and_the_first_failing_level()
    {
        // TTFT crosses 2000 at 4 + 4 × 1100/1700 ≈ 6.6; TPOT crosses 100 at 4 + 4 × 60/160 = 5.5, the smaller.
        let outcome = slo().capacity(&levels(&[
            (1.0, 300.0, 20.0),
            (4.0, 900.0, 40.0),
            (8.0, 2600.0, 200.0),
        ]));
        let Outcome::Capacity {
            load,
            bracket,
            non_monotone,
            interval,
        } = outcome
        else {
            panic!("{outcome:?}");
        };
        assert!((load - 5.5).abs() < 1e-12);
        assert_eq!((bracket, non_monotone, interval), ((4.0, 8.0), false, None));
    }

    #[test]
    fn a_value_at_its_bound_holds_and_gives_the_holding_level() {
        let outcome = slo().capacity(&levels(&[(2.0, 2000.0, 100.0), (4.0, 2500.0, 100.0)]));
        assert_eq!(
            outcome,
            Outcome::Capacity {
                load: 2.0,
                interval: None,
                bracket: (2.0, 4.0),
                non_monotone: false
            }
        );
        assert_eq!(outcome.label(LoadAxis::Concurrency), "≈ N=2 (2–4)");
    }

    #[test]
    fn all_at_once_is_not_interpolated() {
        let outcome = slo().capacity(&levels(&[
            (1.5, 300.0, 20.0),
            (f64::INFINITY, 9000.0, 20.0),
        ]));
        assert_eq!(
            outcome,
            Outcome::Capacity {
                load: 1.5,
                interval: None,
                bracket: (1.5, f64::INFINITY),
                non_monotone: false
            }
        );
        assert_eq!(
            outcome.label(LoadAxis::RequestRate),
            "≥ 1.5 req/s (fails all at once, not interpolated)"
        );
        let holds = slo().capacity(&levels(&[(1.0, 300.0, 20.0), (f64::INFINITY, 900.0, 20.0)]));
        assert_eq!(
            holds.label(LoadAxis::RequestRate),
            "≥ all at once (not reached)"
        );
    }

    #[test]
    fn a_curve_that_crosses_back_keeps_the_highest_holding_level_and_says_so() {
        let outcome = slo().capacity(&levels(&[
            (1.0, 300.0, 20.0),
            (4.0, 2100.0, 20.0),
            (8.0, 1900.0, 20.0),
            (16.0, 2300.0, 20.0),
        ]));
        assert_eq!(
            outcome.label(LoadAxis::Concurrency),
            "≈ N=10 (8–16; crosses back)"
        );
        let reached = slo().capacity(&levels(&[(1.0, 2100.0, 20.0), (2.0, 1900.0, 20.0)]));
        assert_eq!(
            reached,
            Outcome::NotReached {
                up_to: 2.0,
                non_monotone: true
            }
        );
    }

    #[test]
    fn not_reached_never_met_and_unjudged_are_told_apart() {
        let not_reached = slo().capacity(&levels(&[(1.0, 300.0, 20.0), (16.0, 1900.0, 90.0)]));
        assert_eq!(
            not_reached.label(LoadAxis::Concurrency),
            "≥ N=16 (not reached)"
        );
        assert_eq!(
            not_reached.label(LoadAxis::RequestRate),
            "≥ 16 req/s (not reached)"
        );
        let never = slo().capacity(&levels(&[(1.0, 2300.0, 20.0), (2.0, 2400.0, 20.0)]));
        assert_eq!(never, Outcome::NeverMet { lowest: 1.0 });
        assert_eq!(
            never.label(LoadAxis::Concurrency),
            "never met (fails at N=1)"
        );
        assert_eq!(
            slo().capacity(&[]).label(LoadAxis::Concurrency),
            "not judged: no measured level"
        );
        let mut missing = levels(&[(1.0, 300.0, 20.0)]);
        missing[0].reps[0].values[1] = Some(f64::NAN);
        assert_eq!(
            slo().capacity(&missing),
            Outcome::Unjudged {
                reason: "no level has every bound's statistic"
            }
        );
    }

    #[test]
    fn the_interval_ranges_over_the_reps_with_complete_series() {
        let mut measured = levels(&[(4.0, 1000.0, 20.0), (8.0, 3000.0, 20.0)]);
        for (level, ttft) in measured.iter_mut().zip([1000.0, 2500.0]) {
            level.reps.push(RepValues {
                rep: 2,
                values: vec![Some(ttft), Some(20.0)],
            });
        }
        let outcome = slo().capacity(&measured);
        let label = outcome.label(LoadAxis::RequestRate);
        assert_eq!(label, "≈ 6.3 req/s (4–8; range over 2 reps 6–6.7)");
        let Outcome::Capacity {
            interval: Some(range),
            ..
        } = outcome
        else {
            panic!("{outcome:?}");
        };
        assert_eq!(
            (range.low, range.high, range.reps),
            (6.0, 4.0 + 4.0 * 2.0 / 3.0, 2)
        );
    }

    #[test]
    fn numbers_keep_a_readers_precision() {
        let texts: Vec<String> = [0.126, 0.5, 5.333, 16.0, 123.4, f64::INFINITY]
            .into_iter()
            .map(number)
            .collect();
        assert_eq!(texts, ["0.13", "0.5", "5.3", "16", "123", "∞"]);
    }

    #[test]
    fn lower_bounds_are_placed_as_bounds_apart_from_measured_capacities() {
        let measured = slo().capacity(&levels(&[(1.0, 300.0, 20.0), (8.0, 2600.0, 20.0)]));
        // 1 + 7 × 1700/2300 = 6.1739…: found between two measured levels.
        let Placed::Measured(load) = measured.placed() else {
            panic!("{measured:?}");
        };
        assert!((load - (1.0 + 7.0 * 1700.0 / 2300.0)).abs() < 1e-12);
        // Holds at the largest measured N: at least N = 32.
        let not_reached = slo().capacity(&levels(&[(1.0, 300.0, 20.0), (32.0, 900.0, 20.0)]));
        assert_eq!(not_reached.placed(), Placed::AtLeast(32.0));
        assert_eq!(
            not_reached.label(LoadAxis::Concurrency),
            "≥ N=32 (not reached)"
        );
        // Fails only all at once: at least the last finite rate, never interpolated towards ∞.
        let at_once = slo().capacity(&levels(&[
            (4.0, 300.0, 20.0),
            (f64::INFINITY, 9000.0, 20.0),
        ]));
        assert_eq!(at_once.placed(), Placed::AtLeast(4.0));
        // Holds even all at once: at least ∞, kept infinite.
        let always = slo().capacity(&levels(&[(4.0, 300.0, 20.0), (f64::INFINITY, 900.0, 20.0)]));
        assert_eq!(always.placed(), Placed::AtLeast(f64::INFINITY));
        let never = slo().capacity(&levels(&[(1.0, 2300.0, 20.0)]));
        assert_eq!(never.placed(), Placed::NeverMet);
        assert_eq!(slo().capacity(&[]).placed(), Placed::Unjudged);
        assert_eq!(LoadAxis::RequestRate.kind(), LoadKind::Rate);
        assert_eq!(LoadAxis::Concurrency.text(5.333), "N=5.3");
    }
}
