//! The matrix's colour scale of loads (breakdown N and SLO capacity), one range per kind of load, and what its
//! marks of a lower bound mean.

use super::{MatrixCell, MatrixGrid};
use crate::load::{Load, LoadKind};
use crate::metric::Metric;
use crate::slo::{LoadAxis, Placed};

/// A colour scale of loads with one range per kind, so a concurrency and a rate never share a scale (N = 8 and
/// 8 req/s are different things): each kind's loads are placed on log₂ between its own ends, higher is better,
/// and an unbounded rate is the top of the rate scale, never a large finite number.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LoadScale {
    /// The smallest and largest finite concurrency in view.
    pub concurrency: Option<(f64, f64)>,
    /// The smallest and largest finite rate in view, req/s.
    pub rate: Option<(f64, f64)>,
}

impl LoadScale {
    /// The scale spanning `loads` (finite ones; an unbounded rate alone makes the rate scale, with nothing below
    /// its top).
    pub fn spanning(loads: impl IntoIterator<Item = (LoadKind, f64)>) -> LoadScale {
        let mut scale = LoadScale::default();
        for (kind, load) in loads {
            let range = match kind {
                LoadKind::Concurrency => &mut scale.concurrency,
                LoadKind::Rate => &mut scale.rate,
                LoadKind::Unstated => continue,
            };
            if !load.is_finite() {
                range.get_or_insert((f64::INFINITY, f64::NEG_INFINITY));
                continue;
            }
            let (low, high) = range.get_or_insert((load, load));
            *low = low.min(load);
            *high = high.max(load);
        }
        scale
    }

    /// The scale of the squares' SLO capacities: every capacity found and every lower bound, by kind.
    pub fn of_capacities(grids: &[MatrixGrid]) -> LoadScale {
        let mut loads = Vec::new();
        for square in squares(grids) {
            if let Some((kind, Placed::Measured(load) | Placed::AtLeast(load))) =
                square.capacity_placed
            {
                loads.push((kind, load));
            }
        }
        LoadScale::spanning(loads)
    }

    /// The scale of the squares' breakdown loads: concurrencies from N = 1 to `max_n` (the largest N of the
    /// data), rates over the saturation rates and the largest rates measured in view.
    pub fn of_breakdowns(grids: &[MatrixGrid], max_n: u32) -> LoadScale {
        let mut rates = Vec::new();
        for square in squares(grids) {
            if let Some(Load::Rate(rate)) = square.breakdown_at.or(square.never_within) {
                rates.push((LoadKind::Rate, rate.get()));
            }
        }
        LoadScale {
            concurrency: Some((1.0, f64::from(max_n.max(2)))),
            ..LoadScale::spanning(rates)
        }
    }

    /// Where `load` of `kind` sits in [0, 1]: log₂ between its kind's ends, 1 for an unbounded rate and for a
    /// kind whose ends are one load. `None` for a kind the scale does not span.
    pub fn position(&self, kind: LoadKind, load: f64) -> Option<f64> {
        let (low, high) = match kind {
            LoadKind::Concurrency => self.concurrency?,
            LoadKind::Rate => self.rate?,
            LoadKind::Unstated => return None,
        };
        if load.is_infinite() || high <= low {
            return Some(1.0);
        }
        Some(((load.log2() - low.log2()) / (high.log2() - low.log2())).clamp(0.0, 1.0))
    }

    /// The kinds the scale spans with their finite ends (`None` when only an unbounded rate is in view), in load
    /// order: one legend ramp each.
    pub fn ranges(&self) -> Vec<(LoadKind, Option<(f64, f64)>)> {
        [
            (LoadKind::Concurrency, self.concurrency),
            (LoadKind::Rate, self.rate),
        ]
        .into_iter()
        .filter_map(|(kind, range)| {
            let (low, high) = range?;
            Some((kind, (low <= high).then_some((low, high))))
        })
        .collect()
    }
}

impl LoadScale {
    /// The legend's worst and best ends for squares of `metric` (breakdown N or SLO capacity), each kind's end
    /// side by side on the one ramp: `N=3 · 1.5 req/s (lowest in view)` … `N=8 · 4 req/s (highest)`, `breaks at
    /// N=1 · saturates at 2 req/s` … `N=64 · 8 req/s · all at once and never = brightest`.
    pub fn legend(&self, metric: Metric) -> (String, String) {
        let breakdown = metric == Metric::Breakdown;
        let (mut low, mut high) = (String::new(), String::new());
        for (kind, range) in self.ranges() {
            let (axis, verb) = match kind {
                LoadKind::Rate => (LoadAxis::RequestRate, "saturates at "),
                _ => (LoadAxis::Concurrency, "breaks at "),
            };
            let (from, to) = range.unwrap_or((f64::INFINITY, f64::INFINITY));
            if !low.is_empty() {
                low.push_str(" · ");
                high.push_str(" · ");
            }
            if breakdown {
                low.push_str(verb);
            }
            low.push_str(&axis.text(from));
            high.push_str(&axis.text(to));
        }
        if !breakdown {
            low.push_str(" (lowest in view)");
            high.push_str(" (highest)");
        } else if self.rate.is_some() {
            high.push_str(" · all at once and never = brightest");
        } else {
            high.push_str(" · never = brightest");
        }
        (low, high)
    }
}

/// What the marks of a matrix coloured by SLO capacity mean, beside its legend.
pub const CAPACITY_MARKS: &str = "≥ and hatched = a lower bound: the SLO holds at the largest load measured, so \
     the capacity is at least that · dark grey = never met, the SLO fails at the lowest load · light grey = no \
     data · each kind of load has its own scale";

/// Every square of the grids.
fn squares(grids: &[MatrixGrid]) -> Vec<&MatrixCell> {
    let mut squares = Vec::new();
    for grid in grids {
        for row in &grid.squares {
            for square in row.iter().filter_map(Option::as_ref) {
                squares.push(square);
            }
        }
    }
    squares
}
