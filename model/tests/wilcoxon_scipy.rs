//! The Wilcoxon signed-rank test and Holm's adjustment against the vectors SciPy 1.17 produced
//! (`tests/vectors/wilcoxon_vectors.py`): every p-value equal to 1e-12 relative, no Python needed; and the
//! bootstrap against the same specification written independently in Python.

use cellscope_model::paired::{holm, wilcoxon};
use serde_json::Value;

fn vectors() -> Value {
    serde_json::from_str(include_str!("vectors/wilcoxon_vectors.json"))
        .expect("the vectors are JSON")
}

fn numbers(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|number| number.as_f64().expect("a number"))
        .collect()
}

fn close(got: f64, want: f64) -> bool {
    got == want || (got - want).abs() <= 1e-12 * want.abs().max(got.abs())
}

#[test]
fn wilcoxon_p_values_equal_scipys() {
    let vectors = vectors();
    let cases = vectors["wilcoxon"].as_array().expect("cases");
    assert!(cases.len() >= 90);
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().expect("a name");
        let d = numbers(&case["d"]);
        let test = wilcoxon(&d);
        match (test.p_value, case["p_value"].as_f64()) {
            (Some(got), Some(want)) if close(got, want) => {}
            (None, None) => {}
            (got, want) => failures.push(format!(
                "{name}: p {got:?}, SciPy {want:?} ({:?})",
                test.method
            )),
        }
        if let Some(want) = case["statistic"].as_f64()
            && !close(test.statistic, want)
        {
            failures.push(format!(
                "{name}: statistic {}, SciPy {want}",
                test.statistic
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn holm_equals_the_reference() {
    let vectors = vectors();
    for case in vectors["holm"].as_array().expect("cases") {
        let got = holm(&numbers(&case["p"]));
        let want = numbers(&case["adjusted"]);
        assert_eq!(got.len(), want.len());
        for (got, want) in got.iter().zip(&want) {
            assert!(close(*got, *want), "{}: {got} vs {want}", case["name"]);
        }
    }
}

#[test]
fn the_bootstrap_draws_what_its_specification_says() {
    let vectors = vectors();
    let mut generator = cellscope_model::paired::SplitMix64::new(164);
    for want in vectors["splitmix64_seed_164"].as_array().expect("draws") {
        assert_eq!(Some(generator.next_u64()), want.as_u64());
    }
    for case in vectors["bootstrap"].as_array().expect("cases") {
        let d = numbers(&case["d"]);
        let want = numbers(&case["ci"]);
        let (low, high) = cellscope_model::paired::bootstrap_mean_ci(
            &d,
            cellscope_model::paired::BOOTSTRAP_RESAMPLES,
            cellscope_model::paired::BOOTSTRAP_SEED,
        )
        .expect("an interval");
        assert!(
            close(low, want[0]) && close(high, want[1]),
            "{}: ({low}, {high}) vs {want:?}",
            case["name"]
        );
    }
}
