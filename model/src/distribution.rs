//! Request-latency distributions of one cell for the inspector: a histogram with bins shared by every sample
//! (so current and replaced rows can be compared bar by bar) and the empirical CDF.

/// Counts per bin of several samples over one common set of equal-width bins.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    /// The lower edge of the first bin.
    pub low: f64,
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
        // A sample of identical values still gets a visible bin.
        let bin_width = ((high - low) / bins as f64).max(1e-9);
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
    fn the_cdf_steps_by_one_over_n() {
        assert_eq!(
            cdf(&[3.0, 1.0, 2.0, 2.0]),
            vec![(1.0, 0.25), (2.0, 0.5), (2.0, 0.75), (3.0, 1.0)]
        );
        assert!(cdf(&[]).is_empty());
    }
}
