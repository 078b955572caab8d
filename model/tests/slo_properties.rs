//! Every SLO survives its text form: `Display` then `FromStr` gives the same bounds.

use cellscope_model::slo::{COLUMNS, Slo, SloBound};
use proptest::prelude::*;

fn max_ms() -> impl Strategy<Value = f64> {
    prop_oneof![
        (0u32..100_000).prop_map(f64::from),
        0.0f64..1e4,
        any::<f64>().prop_filter("finite and not negative", |max| max.is_finite()
            && *max >= 0.0),
    ]
}

fn slo() -> impl Strategy<Value = Slo> {
    proptest::sample::subsequence(COLUMNS.to_vec(), 1..=COLUMNS.len())
        .prop_shuffle()
        .prop_flat_map(|columns| {
            let count = columns.len();
            (Just(columns), proptest::collection::vec(max_ms(), count))
        })
        .prop_map(|(columns, maxes)| Slo {
            bounds: columns
                .into_iter()
                .zip(maxes)
                .map(|(column, max)| SloBound { column, max })
                .collect(),
        })
}

proptest! {
    #[test]
    fn the_text_form_round_trips(slo in slo()) {
        let text = slo.to_string();
        prop_assert_eq!(text.parse::<Slo>(), Ok(slo));
    }
}
