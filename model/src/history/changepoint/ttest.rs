//! The two-sided Student t-test of the pieces either side of a change point, as the reference implementation
//! calls SciPy's `ttest_ind_from_stats`: equal variances, each piece's deviation with ddof = 0.

use super::sum;
use statrs::function::beta::checked_beta_reg;

/// Two pieces compared: their means, deviations and the p-value that they share a mean.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Pieces {
    pub mean_before: f64,
    pub mean_after: f64,
    pub stddev_before: f64,
    pub stddev_after: f64,
    /// NaN when both pieces are constant at one value (0 / 0), 0 when they are constant at two.
    pub p_value: f64,
}

impl Pieces {
    /// Compares `before` with `after`, both non-empty.
    pub(super) fn compare(before: &[f64], after: &[f64]) -> Pieces {
        let (mean_before, mean_after) = (sum::mean(before), sum::mean(after));
        let deviation = |piece: &[f64], mean: f64| {
            if piece.len() >= 2 {
                sum::std(piece, mean)
            } else {
                0.0
            }
        };
        let (stddev_before, stddev_after) =
            (deviation(before, mean_before), deviation(after, mean_after));
        let p_value = if before.len() + after.len() > 2 {
            pooled_p_value(
                (mean_before, stddev_before, before.len()),
                (mean_after, stddev_after, after.len()),
            )
        } else {
            1.0
        };
        Pieces {
            mean_before,
            mean_after,
            stddev_before,
            stddev_after,
            p_value,
        }
    }

    /// The relative change the merge step weighs: the larger of |after / before − 1| and |before / after − 1|,
    /// each taken as 0 where its denominator is 0.
    pub(super) fn magnitude(&self) -> f64 {
        let ratio = |numerator: f64, denominator: f64| {
            if denominator == 0.0 {
                0.0
            } else {
                numerator / denominator - 1.0
            }
        };
        let forward = ratio(self.mean_after, self.mean_before).abs();
        let backward = ratio(self.mean_before, self.mean_after).abs();
        // Python's `max(forward, backward)`: the first unless the second is greater.
        if backward > forward {
            backward
        } else {
            forward
        }
    }
}

/// `ttest_ind_from_stats(mean1, std1, n1, mean2, std2, n2)`, equal variances, two-sided, in SciPy's order of
/// operations.
fn pooled_p_value(
    (mean1, std1, n1): (f64, f64, usize),
    (mean2, std2, n2): (f64, f64, usize),
) -> f64 {
    let variance = |std: f64, n: usize| if n == 1 { 0.0 } else { std * std };
    let (v1, v2) = (variance(std1, n1), variance(std2, n2));
    let (n1, n2) = (n1 as f64, n2 as f64);
    let freedom = n1 + n2 - 2.0;
    let pooled = ((n1 - 1.0) * v1 + (n2 - 1.0) * v2) / freedom;
    let denominator = (pooled * (1.0 / n1 + 1.0 / n2)).sqrt();
    two_sided_p((mean1 - mean2) / denominator, freedom)
}

/// 2 · P(T > |t|) for Student's t with `freedom` degrees of freedom: I_x(ν/2, 1/2) with x = ν / (ν + t²).
///
/// Near t = 0 it is 1 − I_z(1/2, ν/2) with z = t² / (ν + t²) instead, the form whose continued fraction needs
/// no reflection there, so both ends keep their precision.
pub(super) fn two_sided_p(t: f64, freedom: f64) -> f64 {
    if t.is_nan() {
        return f64::NAN;
    }
    let square = t * t;
    if square.is_infinite() {
        return 0.0;
    }
    let half = freedom / 2.0;
    let z = square / (freedom + square);
    let value = if z < 1.5 / (half + 2.5) {
        checked_beta_reg(0.5, half, z).map(|lower| 1.0 - lower)
    } else {
        checked_beta_reg(half, 0.5, freedom / (freedom + square))
    };
    value.unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected p-values are SciPy 1.16's `2 * scipy.stats.t.sf(abs(t), df)`; the log-gamma terms of the
    // incomplete beta cost some digits at a thousand degrees of freedom, hence 1e-11.
    #[test]
    fn p_values_equal_scipys() {
        for (t, freedom, scipy) in [
            (0.9051358093310269, 22.0, 0.3751996797581487),
            (2.0, 10.0, 0.07338803477074039),
            (-3.5, 5.0, 0.017284431785293354),
            (1e-8, 100.0, 0.9999999920410763),
            (12.0, 998.0, 4.362269491888038e-31),
            (40.0, 3.0, 3.438068078915854e-05),
            (3.0, 2000.0, 0.002733143762032797),
            (0.5, 1.0, 0.7048327646991336),
            (1e-3, 1.0, 0.9993633804398389),
            (300.0, 1.0, 0.0021220580484409717),
            (0.0, 7.0, 1.0),
        ] {
            let got = two_sided_p(t, freedom);
            assert!(
                (got - scipy).abs() <= 1e-11 * scipy,
                "t {t}, df {freedom}: {got} vs {scipy}"
            );
        }
    }

    #[test]
    fn zero_spread_gives_zero_or_no_p_value() {
        // SciPy: d / 0 is ±inf (p = 0) for different means and NaN (p = NaN) for equal ones.
        let constant = Pieces::compare(&[5.0, 5.0, 5.0], &[7.0, 7.0]);
        assert_eq!(constant.p_value, 0.0);
        assert!(
            Pieces::compare(&[5.0, 5.0], &[5.0, 5.0, 5.0])
                .p_value
                .is_nan()
        );
        assert_eq!(Pieces::compare(&[5.0], &[7.0]).p_value, 1.0);
    }

    #[test]
    fn a_hand_counted_comparison() {
        // Means 2 and 5, deviations √(2/3) and √(2/3) (ddof 0), pooled variance (2·2/3 + 2·2/3) / 4 = 2/3,
        // t = −3 / √(2/3 · 2/3) = −4.5 on 4 degrees of freedom; SciPy's p is 0.010822550462608247.
        let pieces = Pieces::compare(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
        assert_eq!((pieces.mean_before, pieces.mean_after), (2.0, 5.0));
        assert!((pieces.stddev_before - (2.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert!((pieces.p_value - 0.010822550462608247).abs() < 1e-14);
        assert_eq!(pieces.magnitude(), 1.5);
    }
}
