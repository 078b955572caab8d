//! Request-latency distributions of one cell for the inspector: a histogram with bins shared by every sample
//! (so current and replaced rows can be compared bar by bar) and the empirical CDF.

/// Counts per bin of several samples over one common set of equal-width bins.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    /// The lower edge of the first bin.
    pub low: f64,
    /// Width of every bin, in the samples' unit (ms for request latencies).
    pub bin_width: f64,
    /// `counts[sample][bin]`.
    pub counts: Vec<Vec<u32>>,
}

impl Histogram {
    /// Equal-width bins from the smallest to the largest value of all samples; the largest value falls in the
    /// last bin. `None` when no sample has a value.
    pub fn of(samples: &[&[f64]], bins: usize) -> Option<Histogram> {
        let bins = bins.max(1);
        let (low, high) = extent(samples)?;
        // A sample of identical values (every replaced row timed out at the same limit) still gets bins of a
        // visible, readable width: 2 % of the value, at least 1 ms, over all bins.
        let span = if high - low > low.abs() * 1e-9 {
            high - low
        } else {
            (low.abs() * 0.02).max(1.0)
        };
        let bin_width = span / bins as f64;
        let counts = samples
            .iter()
            .map(|sample| {
                let mut counts = vec![0u32; bins];
                for value in sample.iter() {
                    let bin = (((value - low) / bin_width) as usize).min(bins - 1);
                    counts[bin] += 1;
                }
                counts
            })
            .collect();
        Some(Histogram {
            low,
            bin_width,
            counts,
        })
    }

    /// How many bins the histogram has (0 when it holds no sample).
    pub fn bins(&self) -> usize {
        self.counts.first().map_or(0, Vec::len)
    }

    /// The upper edge of the last bin.
    pub fn high(&self) -> f64 {
        self.low + self.bin_width * self.bins() as f64
    }

    /// The largest count of any sample in any bin.
    pub fn top(&self) -> u32 {
        self.counts.iter().flatten().copied().max().unwrap_or(0)
    }
}

/// The smallest and largest value of all samples; `None` when there is none.
pub fn extent(samples: &[&[f64]]) -> Option<(f64, f64)> {
    let values = || samples.iter().flat_map(|sample| sample.iter().copied());
    let low = values().fold(f64::INFINITY, f64::min);
    let high = values().fold(f64::NEG_INFINITY, f64::max);
    (low.is_finite() && high.is_finite()).then_some((low, high))
}

/// The empirical CDF: each value in ascending order with the fraction of values at or below it (the i-th of n
/// sorted values at (i + 1) / n).
pub fn cdf(values: &[f64]) -> Vec<(f64, f64)> {
    let mut sorted = values.to_vec();
    crate::order::sort_floats(&mut sorted);
    let count = sorted.len() as f64;
    sorted
        .into_iter()
        .enumerate()
        .map(|(index, value)| (value, (index + 1) as f64 / count))
        .collect()
}

/// Ticks of a linear axis from `low` to `high`: about `target` values at a step of 1, 2 or 5 times a power of
/// ten, each written with the decimals its step needs and no more (`1200`, not `1200.0000000002`; `0.3`, not
/// `0.30000000000000004`). With `whole`, the step is at least 1 (counts).
#[derive(Clone, Debug, PartialEq)]
pub struct Ticks {
    /// The tick positions, ascending, each rounded to its step's decimals.
    pub values: Vec<f64>,
    /// Each tick's text, in the order of `values`.
    pub labels: Vec<String>,
}

impl Ticks {
    /// About `target` ticks from `low` to `high` (a single tick at `low` when the range is empty); with `whole`,
    /// a step of at least 1.
    pub fn linear(low: f64, high: f64, target: usize, whole: bool) -> Ticks {
        let span = (high - low).abs();
        if !span.is_finite() || span == 0.0 || target == 0 {
            return Ticks {
                values: vec![low],
                labels: vec![tick_text(low, 0)],
            };
        }
        let rough = span / target as f64;
        let power = 10f64.powf(rough.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .into_iter()
            .map(|factor| factor * power)
            .find(|step| *step >= rough)
            .unwrap_or(10.0 * power);
        let step = if whole { step.max(1.0).round() } else { step };
        let decimals = if whole {
            0
        } else {
            (-step.log10().floor()).max(0.0) as usize
        };
        let first = (low / step).ceil() as i64;
        let last = (high / step + 1e-9).floor() as i64;
        let values: Vec<f64> = (first..=last)
            .map(|index| {
                // Rounded to the step's decimals, so that the value drawn is the value written.
                let value = index as f64 * step;
                let scale = 10f64.powi(decimals as i32);
                (value * scale).round() / scale
            })
            .collect();
        let labels = values
            .iter()
            .map(|value| tick_text(*value, decimals))
            .collect();
        Ticks { values, labels }
    }
}

/// A tick value with `decimals` decimals and thousands grouped by a thin space; `-0` written as `0`.
fn tick_text(value: f64, decimals: usize) -> String {
    let value = if value == 0.0 { 0.0 } else { value };
    crate::metric::with_thousands(value, decimals)
}

/// What the inspector says instead of its distribution charts when the cell has no per-request rows: `tool`
/// (the format that wrote it, when known) reported only its own figures.
pub fn no_rows_message(tool: Option<&str>) -> String {
    match tool {
        Some(tool) => format!(
            "No per-request rows: {tool} reported only its own figures for this cell (shown above with †), so \
             there is no latency histogram or CDF to draw."
        ),
        None => "No per-request rows were read for this cell, so there is no latency histogram or CDF to \
                 draw."
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_shared_and_the_maximum_lands_in_the_last_bin() {
        let current = [10.0, 12.0, 19.0, 30.0];
        let replaced = [20.0];
        let histogram = Histogram::of(&[&current, &replaced], 4).unwrap();
        assert_eq!((histogram.low, histogram.bin_width), (10.0, 5.0));
        assert_eq!(histogram.counts[0], vec![2, 1, 0, 1]);
        assert_eq!(histogram.counts[1], vec![0, 0, 1, 0]);
        assert_eq!((histogram.high(), histogram.top()), (30.0, 2));
        assert_eq!(Histogram::of(&[&[]], 4), None);
        assert_eq!(
            Histogram::of(&[&[5.0, 5.0]], 3).unwrap().counts[0],
            vec![2, 0, 0]
        );
    }

    #[test]
    fn ticks_are_round_and_written_without_float_noise() {
        let ticks = Ticks::linear(0.1, 0.7, 6, false);
        assert_eq!(
            ticks.labels,
            ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7"]
        );
        assert_eq!(ticks.values[2], 0.3);
        let ticks = Ticks::linear(1000.0, 1300.0, 6, false);
        assert_eq!(
            ticks.values,
            [1000.0, 1050.0, 1100.0, 1150.0, 1200.0, 1250.0, 1300.0]
        );
        assert!(
            ticks.labels.iter().all(|label| !label.contains('.')),
            "{ticks:?}"
        );
        // Counts are whole: never a tick at 0.5 requests.
        assert_eq!(
            Ticks::linear(0.0, 3.0, 5, true).labels,
            ["0", "1", "2", "3"]
        );
        assert_eq!(
            Ticks::linear(0.0, 9.0, 5, true).values,
            [0.0, 2.0, 4.0, 6.0, 8.0]
        );
    }

    #[test]
    fn the_cdf_steps_by_one_over_n() {
        assert_eq!(
            cdf(&[3.0, 1.0, 2.0, 2.0]),
            vec![(1.0, 0.25), (2.0, 0.5), (2.0, 0.75), (3.0, 1.0)]
        );
        assert!(cdf(&[]).is_empty());
    }
}
