//! The axes of the curves: linear from zero or log₁₀, with the ticks a log axis gets by hand and their labels.

use cellscope_model::metric::{TimeUnit, Unit, with_thousands};
use cellscope_model::view_state::Metric;

/// How an axis reads a metric: linear from zero, or log₁₀ for values that span orders of magnitude
/// (multipliers and times, [`Metric::log_scale`]), with ticks at values a reader can name (1×, 2×, 4×; 100 ms,
/// 200 ms, 500 ms, 1 s). The y axis always reads the plotted metric; the x axis reads the x metric when there is
/// one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Axis {
    Linear { low: f64, high: f64 },
    Log { low: f64, high: f64 },
}

impl Axis {
    pub(super) fn for_metric(metric: Metric, smallest: f64, largest: f64) -> Axis {
        let (smallest, largest) = if smallest.is_finite() && largest.is_finite() {
            (smallest, largest)
        } else {
            (1.0, 1.0)
        };
        match metric.unit() {
            Unit::Ratio => Axis::Linear {
                low: 0.0,
                high: (largest * 1.05).max(1.08),
            },
            Unit::Multiple => Axis::Log {
                low: smallest.min(0.8),
                high: largest.max(2.0) * 1.3,
            },
            Unit::Milliseconds => Axis::Log {
                low: (smallest / 1.3).max(1e-3),
                high: (largest * 1.3).max(smallest * 2.0).max(1e-2),
            },
            _ => Axis::Linear {
                low: 0.0,
                high: (largest * 1.1).max(1.0),
            },
        }
    }

    /// The plotted coordinate of a value.
    pub(super) fn at(self, value: f64) -> f64 {
        match self {
            Axis::Linear { .. } => value,
            Axis::Log { .. } => value.max(1e-6).log10(),
        }
    }

    pub(super) fn range(self) -> std::ops::Range<f64> {
        match self {
            Axis::Linear { low, high } | Axis::Log { low, high } => self.at(low)..self.at(high),
        }
    }

    /// The ticks drawn by hand on a log axis (plotters would put them at round logarithms): powers of two
    /// for multipliers, 1-2-5 steps for times; every other one when they would crowd.
    pub(super) fn log_ticks(self, metric: Metric) -> Vec<f64> {
        let Axis::Log { low, high } = self else {
            return Vec::new();
        };
        let mut ticks = Vec::new();
        if metric.unit() == Unit::Multiple {
            let mut tick = 2f64.powi(low.log2().ceil() as i32);
            while tick <= high {
                ticks.push(tick);
                tick *= 2.0;
            }
        } else {
            let mut decade = 10f64.powi(low.log10().floor() as i32);
            while decade <= high {
                for step in [1.0, 2.0, 5.0] {
                    let tick = decade * step;
                    if tick >= low && tick <= high {
                        ticks.push(tick);
                    }
                }
                decade *= 10.0;
            }
        }
        while ticks.len() > 9 {
            ticks = ticks.into_iter().step_by(2).collect();
        }
        ticks
    }
}

/// A tick label: `4×`, `0.5×`, `200 ms`, `1.5 s`, `2 min`; linear axes as the metric writes its numbers.
pub(super) fn tick_label(metric: Metric, value: f64) -> String {
    let trimmed = |value: f64| {
        let text = format!("{value:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    match metric.unit() {
        Unit::Multiple => format!("{}×", trimmed(value)),
        // Ticks stay in seconds past a minute: 1-2-5 steps of seconds (100 s, 200 s, 500 s) read better than
        // the same values in minutes (1.67 min, 3.33 min, 8.33 min).
        Unit::Milliseconds => {
            let unit = match TimeUnit::fitting(value) {
                TimeUnit::Milliseconds => TimeUnit::Milliseconds,
                _ => TimeUnit::Seconds,
            };
            format!("{} {}", trimmed(value / unit.ms()), unit.symbol())
        }
        Unit::Ratio => format!("{value:.2}"),
        _ => with_thousands(value, 0),
    }
}
