//! Sums added in the order numpy adds them, so a piece's mean and deviation, and every Q-hat, round as the
//! reference implementation's do and its ties break the same way.

/// The length up to which numpy sums a block with eight running totals rather than splitting it in two.
const BLOCK: usize = 128;

/// `np.sum` of a contiguous (or a single strided column of) `float64`: numpy's pairwise summation.
pub(super) fn pairwise(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 8 {
        return values.iter().fold(0.0, |total, value| total + value);
    }
    if n > BLOCK {
        let half = n / 2;
        let half = half - half % 8;
        return pairwise(&values[..half]) + pairwise(&values[half..]);
    }
    let mut totals = [0.0; 8];
    totals.copy_from_slice(&values[..8]);
    let whole = n - n % 8;
    for chunk in values[8..whole].chunks_exact(8) {
        for (total, value) in totals.iter_mut().zip(chunk) {
            *total += value;
        }
    }
    let [t0, t1, t2, t3, t4, t5, t6, t7] = totals;
    let blocks = ((t0 + t1) + (t2 + t3)) + ((t4 + t5) + (t6 + t7));
    values[whole..]
        .iter()
        .fold(blocks, |total, value| total + value)
}

/// `np.mean`: the pairwise sum divided by the count.
pub(super) fn mean(values: &[f64]) -> f64 {
    pairwise(values) / values.len() as f64
}

/// `np.std` (ddof = 0): the square root of the mean squared deviation from `mean`, each sum pairwise.
pub(super) fn std(values: &[f64], mean: f64) -> f64 {
    let squares: Vec<f64> = values
        .iter()
        .map(|value| {
            let deviation = value - mean;
            deviation * deviation
        })
        .collect();
    (pairwise(&squares) / values.len() as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    // The expected sums are numpy 2.2's `np.sum(np.full(n, 0.1))`; left to right gives other roundings.
    #[test]
    fn ten_tenths_sum_as_numpy_sums_them() {
        let values = [0.1; 10];
        assert_eq!(
            values.iter().fold(0.0, |total, value| total + value),
            0.9999999999999999
        );
        assert_eq!(pairwise(&values), 1.0);
    }

    #[test]
    fn two_hundred_tenths_split_in_two_as_numpy_splits_them() {
        let values = [0.1; 200];
        assert_eq!(
            values.iter().fold(0.0, |total, value| total + value),
            20.000000000000014
        );
        assert_eq!(pairwise(&values), 20.0);
    }

    #[test]
    fn fewer_than_eight_add_left_to_right() {
        assert_eq!(pairwise(&[1e16, 1.0, 1.0, -1e16]), 0.0);
        assert_eq!(pairwise(&[]), 0.0);
    }

    #[test]
    fn mean_and_std_of_a_hand_counted_piece() {
        let piece = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&piece), 5.0);
        assert_eq!(std(&piece, 5.0), 2.0);
    }
}
