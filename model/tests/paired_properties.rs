//! Properties of the paired statistics: swapping the sides (negating every delta) negates the mean and the
//! interval and keeps the p-value; Holm's adjustment is monotone in the raw p, never below it, never above 1.

use cellscope_model::paired::{bootstrap_mean_ci, holm, wilcoxon};
use proptest::prelude::*;

fn deltas() -> impl Strategy<Value = Vec<f64>> {
    // Rounded values so ties and zeros occur, as with efficiencies written to three decimals.
    proptest::collection::vec(
        (-40i32..=40).prop_map(|milli| f64::from(milli) / 1000.0),
        1..40,
    )
}

proptest! {
    #[test]
    fn swapping_the_sides_negates_the_interval_and_keeps_the_p_value(d in deltas()) {
        let negated: Vec<f64> = d.iter().map(|delta| -delta).collect();
        prop_assert_eq!(wilcoxon(&d).p_value, wilcoxon(&negated).p_value);
        let (low, high) = bootstrap_mean_ci(&d, 500, 164).unwrap();
        let (negated_low, negated_high) = bootstrap_mean_ci(&negated, 500, 164).unwrap();
        prop_assert!((low + negated_high).abs() < 1e-12, "{low} vs {negated_high}");
        prop_assert!((high + negated_low).abs() < 1e-12, "{high} vs {negated_low}");
    }

    #[test]
    fn holm_is_monotone_and_between_the_raw_p_and_one(p in proptest::collection::vec(0.0f64..=1.0, 0..12)) {
        let adjusted = holm(&p);
        let mut pairs: Vec<(f64, f64)> = p.iter().copied().zip(adjusted).collect();
        for (raw, adjusted) in &pairs {
            prop_assert!(adjusted >= raw && *adjusted <= 1.0);
        }
        cellscope_model::order::sort_stable_by(&mut pairs, |a, b| a.0.total_cmp(&b.0));
        prop_assert!(pairs.windows(2).all(|pair| pair[0].1 <= pair[1].1));
    }
}
