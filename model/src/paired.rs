//! Paired statistics of the Compare view: the Wilcoxon signed-rank test exactly as `scipy.stats.wilcoxon(d)`
//! computes it with SciPy 1.17's defaults, Holm's step-down adjustment, the matched-pairs rank-biserial
//! correlation and a percentile bootstrap of the mean with a specified generator, so the browser, the CLI and
//! the server print the same numbers.
//!
//! SciPy's defaults: zeros are dropped (`zero_method="wilcox"`), no continuity correction, `method="auto"`:
//! the exact null distribution when n ≤ 50 and there are neither ties nor zeros; with ties or zeros, the
//! exhaustive sign-flip permutation test when n ≤ 13, else the normal approximation with the tie correction.
//! n counts the zeros for these choices. `model/tests/vectors/` holds the script and the vectors that pin this.

use serde::{Deserialize, Serialize};

/// How the p-value was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WilcoxonMethod {
    /// The exact null distribution (n ≤ 50, neither ties nor zeros).
    Exact,
    /// The exhaustive sign-flip permutation test (ties or zeros, n ≤ 13).
    Permutation,
    /// The normal approximation with the tie correction (every other case).
    Normal,
}

/// The Wilcoxon signed-rank test of paired deltas, as `scipy.stats.wilcoxon(d)` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Wilcoxon {
    /// min(R+, R−), SciPy's two-sided statistic.
    pub statistic: f64,
    /// Sum of the ranks of the positive deltas.
    pub rank_sum_positive: f64,
    /// Sum of the ranks of the negative deltas.
    pub rank_sum_negative: f64,
    /// Two-sided p-value; `None` where SciPy has none (no deltas, one zero delta, or only zeros with n > 13).
    pub p_value: Option<f64>,
    /// How `p_value` was obtained.
    pub method: WilcoxonMethod,
}

/// Average ranks (1-based) of `values` and the sizes of the groups of equal values, as `scipy.stats.rankdata`.
fn average_ranks(values: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let order =
        crate::order::sorted_positions(values.len(), &|a, b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut groups = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // Ranks start..end (1-based start+1..=end) share their average.
        let average = (start + 1 + end) as f64 / 2.0;
        for index in &order[start..end] {
            ranks[*index] = average;
        }
        groups.push(end - start);
        start = end;
    }
    (ranks, groups)
}

/// The two-sided Wilcoxon signed-rank test of the deltas `d` (NaN-free).
pub fn wilcoxon(d: &[f64]) -> Wilcoxon {
    let n = d.len();
    let zeros = d.iter().filter(|delta| **delta == 0.0).count();
    let nonzero: Vec<f64> = d.iter().copied().filter(|delta| *delta != 0.0).collect();
    let magnitudes: Vec<f64> = nonzero.iter().map(|delta| delta.abs()).collect();
    let (ranks, groups) = average_ranks(&magnitudes);
    let rank_sum = |positive: bool| -> f64 {
        nonzero
            .iter()
            .zip(&ranks)
            .filter(|(delta, _)| (**delta > 0.0) == positive)
            .map(|(_, rank)| rank)
            .sum()
    };
    let (r_plus, r_minus) = (rank_sum(true), rank_sum(false));
    let has_ties = groups.iter().any(|size| *size > 1);
    let method = if n > 50 {
        WilcoxonMethod::Normal
    } else if !has_ties && zeros == 0 {
        WilcoxonMethod::Exact
    } else if n <= 13 {
        WilcoxonMethod::Permutation
    } else {
        WilcoxonMethod::Normal
    };
    let p_value = match method {
        _ if n == 0 => None,
        WilcoxonMethod::Exact => Some(exact_p(n, r_plus)),
        WilcoxonMethod::Permutation => permutation_p(&nonzero, &ranks, n, r_plus),
        WilcoxonMethod::Normal => normal_p(nonzero.len(), &groups, r_plus),
    };
    Wilcoxon {
        statistic: r_plus.min(r_minus),
        rank_sum_positive: r_plus,
        rank_sum_negative: r_minus,
        p_value,
        method,
    }
}

/// The null distribution of R+ for n deltas without ties, built as SciPy builds it (halving and shifting).
fn exact_distribution(n: usize) -> Vec<f64> {
    let mut pmf = vec![1.0];
    for k in 1..=n {
        let mut next = vec![0.0; k * (k + 1) / 2 + 1];
        let m = pmf.len();
        for (index, value) in pmf.iter().enumerate() {
            next[index] = value * 0.5;
        }
        let offset = next.len() - m;
        for (index, value) in pmf.iter().enumerate() {
            next[offset + index] += value * 0.5;
        }
        pmf = next;
    }
    pmf
}

fn exact_p(n: usize, r_plus: f64) -> f64 {
    let pmf = exact_distribution(n);
    let mean = (n * (n + 1)) as f64 / 4.0;
    let sum = |range: std::ops::Range<usize>| -> f64 {
        pmf.get(range.start.min(pmf.len())..range.end.min(pmf.len()))
            .map_or(0.0, |slice| slice.iter().sum())
    };
    // P(R+ ≤ k) and P(R+ ≥ k), each summed from the tail nearer k, as SciPy does.
    let cdf = |k: i64| -> f64 {
        if k < 0 {
            0.0
        } else if (k as f64) <= mean {
            sum(0..k as usize + 1)
        } else {
            1.0 - sum(k as usize + 1..pmf.len())
        }
    };
    let sf = |k: i64| -> f64 {
        if (k as f64) <= mean {
            sum(k.max(0) as usize..pmf.len())
        } else {
            1.0 - if k < 1 { 0.0 } else { sum(0..k as usize) }
        }
    };
    let p = 2.0 * sf(r_plus.floor() as i64).min(cdf(r_plus.ceil() as i64));
    p.clamp(0.0, 1.0)
}

/// Every one of the 2ⁿ sign flips (zeros included, as SciPy's one-sample permutation test counts them),
/// compared with SciPy's relative tolerance of 100 ε.
fn permutation_p(nonzero: &[f64], ranks: &[f64], n: usize, observed: f64) -> Option<f64> {
    if n < 2 {
        return None;
    }
    let gamma = (f64::EPSILON * 100.0 * observed).abs();
    let total = 1u64 << n;
    let (mut less, mut greater) = (0u64, 0u64);
    for flips in 0..total {
        // The zeros are the last n − nonzero positions: flipping them changes nothing but still counts.
        let statistic: f64 = nonzero
            .iter()
            .zip(ranks)
            .enumerate()
            .filter(|(index, (delta, _))| {
                let flipped = flips >> index & 1 == 1;
                (**delta > 0.0) != flipped
            })
            .map(|(_, (_, rank))| rank)
            .sum();
        less += u64::from(statistic <= observed + gamma);
        greater += u64::from(statistic >= observed - gamma);
    }
    let p = 2.0 * (less.min(greater) as f64 / total as f64);
    Some(p.clamp(0.0, 1.0))
}

/// The normal approximation with the tie correction, no continuity correction.
fn normal_p(count: usize, groups: &[usize], r_plus: f64) -> Option<f64> {
    let count = count as f64;
    let mean = count * (count + 1.0) * 0.25;
    let variance = count * (count + 1.0) * (2.0 * count + 1.0);
    let tie_correction: f64 = groups
        .iter()
        .map(|size| {
            let t = *size as f64;
            t * t * t - t
        })
        .sum();
    let se = ((variance - tie_correction / 2.0) / 24.0).sqrt();
    let z = (r_plus - mean) / se;
    z.is_finite().then(|| 2.0 * standard_normal_cdf(-z.abs()))
}

/// Φ(x), written as Cephes' `ndtr` (SciPy's `special.ndtr`): erf near zero, erfc in the tails.
pub fn standard_normal_cdf(x: f64) -> f64 {
    let scaled = x * std::f64::consts::FRAC_1_SQRT_2;
    let magnitude = scaled.abs();
    if magnitude < std::f64::consts::FRAC_1_SQRT_2 {
        0.5 + 0.5 * libm::erf(scaled)
    } else {
        let tail = 0.5 * libm::erfc(magnitude);
        if scaled > 0.0 { 1.0 - tail } else { tail }
    }
}

/// Holm's step-down adjustment of a family of p-values: sorted ascending, the i-th (0-based) of m is
/// multiplied by m − i, clamped to 1, and made monotone; returned in the input order.
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    // Equal p-values keep their order (the result is the same either way).
    let order = crate::order::sorted_positions(m, &|a, b| p_values[a].total_cmp(&p_values[b]));
    let mut adjusted = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, index) in order.into_iter().enumerate() {
        running = running.max(((m - rank) as f64 * p_values[index]).min(1.0));
        adjusted[index] = running;
    }
    adjusted
}

/// The matched-pairs rank-biserial correlation (R+ − R−) / (R+ + R−) over the non-zero deltas, in [−1, 1];
/// `None` when every delta is zero.
pub fn rank_biserial(test: &Wilcoxon) -> Option<f64> {
    let total = test.rank_sum_positive + test.rank_sum_negative;
    (total > 0.0).then(|| (test.rank_sum_positive - test.rank_sum_negative) / total)
}

/// SplitMix64 (Steele, Lea and Flood 2014): the bootstrap's generator, specified so every platform draws the
/// same resamples.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose state starts at `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64-bit output: the state advances by the golden-ratio increment and is mixed.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// An index in `0..n`: the high 64 bits of the 128-bit product (Lemire), no division.
    pub fn index(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// How many resamples the head-to-head bootstrap draws (docs/definitions.md#head-to-head).
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;
/// The seed of the bootstrap's [`SplitMix64`], so every platform draws the same resamples.
pub const BOOTSTRAP_SEED: u64 = 164;

/// Percentile bootstrap 95% interval of the mean of `d`: `resamples` resamples of `d.len()` indices drawn
/// with [`SplitMix64`] seeded with `seed`, each mean summed in draw order, and the 2.5th and 97.5th
/// percentiles of the sorted means interpolated linearly (numpy's default). `None` for no deltas.
pub fn bootstrap_mean_ci(d: &[f64], resamples: usize, seed: u64) -> Option<(f64, f64)> {
    if d.is_empty() || resamples == 0 {
        return None;
    }
    let mut generator = SplitMix64::new(seed);
    let n = d.len();
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            let mut sum = 0.0;
            for _ in 0..n {
                sum += d[generator.index(n)];
            }
            sum / n as f64
        })
        .collect();
    crate::order::sort_floats(&mut means);
    Some((
        crate::stats::quantile_linear(&means, 0.025)?,
        crate::stats::quantile_linear(&means, 0.975)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_average_over_ties() {
        let (ranks, groups) = average_ranks(&[3.0, 1.0, 2.0, 2.0]);
        assert_eq!(ranks, vec![4.0, 1.0, 2.5, 2.5]);
        assert_eq!(groups, vec![1, 2, 1]);
    }

    #[test]
    fn the_normal_cdf_is_symmetric_and_has_its_known_values() {
        assert_eq!(standard_normal_cdf(0.0), 0.5);
        assert!((standard_normal_cdf(1.959963984540054) - 0.975).abs() < 1e-15);
        assert!((standard_normal_cdf(-3.0) + standard_normal_cdf(3.0) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn holm_is_monotone_at_least_the_raw_p_and_at_most_one() {
        let raw = [0.04, 0.0001, 0.3, 0.004, 0.02];
        let adjusted = holm(&raw);
        for (raw, adjusted) in raw.iter().zip(&adjusted) {
            assert!(adjusted >= raw && *adjusted <= 1.0);
        }
        let mut by_raw: Vec<(f64, f64)> = raw.iter().copied().zip(adjusted).collect();
        crate::order::sort_stable_by(&mut by_raw, |a, b| a.0.total_cmp(&b.0));
        assert!(by_raw.windows(2).all(|pair| pair[0].1 <= pair[1].1));
    }

    #[test]
    fn rank_biserial_is_one_when_every_delta_is_positive() {
        let test = wilcoxon(&[0.1, 0.2, 0.3]);
        assert_eq!(rank_biserial(&test), Some(1.0));
        assert_eq!(rank_biserial(&wilcoxon(&[0.0, 0.0])), None);
    }
}
