//! Change points against the vectors Apache Otava 0.8.0 itself produced (`tests/vectors/changepoint_otava.py`):
//! the same indices in every case, and the same p-values, means and deviations to 1e-9 (relative where a value
//! exceeds 1), no Python needed.

use cellscope_model::history::changepoint::{ChangePoint, Hunter};
use serde_json::Value;

fn vectors() -> Value {
    serde_json::from_str(include_str!("vectors/changepoint_otava.json"))
        .expect("the vectors are JSON")
}

fn number(value: &Value, key: &str) -> f64 {
    value[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} in {value}"))
}

fn close(got: f64, want: f64) -> bool {
    got == want || (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

fn series(case: &Value) -> Vec<Option<f64>> {
    case["series"]
        .as_array()
        .expect("a series")
        .iter()
        .map(Value::as_f64)
        .collect()
}

fn hunter(case: &Value) -> Hunter {
    let window_len = case["window_len"].as_u64().expect("a window") as usize;
    Hunter::new(
        window_len,
        number(case, "max_pvalue"),
        number(case, "min_magnitude"),
    )
    .expect("valid parameters")
}

/// Every difference between one computed change point and Otava's.
fn differences(got: &ChangePoint, want: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let mut check = |what: &str, got: f64, want: f64| {
        if !close(got, want) {
            found.push(format!("{what} {got:e}, Otava {want:e}"));
        }
    };
    check("p", got.p_value, number(want, "p_value"));
    check("mean before", got.mean_before, number(want, "mean_before"));
    check("mean after", got.mean_after, number(want, "mean_after"));
    check(
        "stddev before",
        got.stddev_before,
        number(want, "stddev_before"),
    );
    check(
        "stddev after",
        got.stddev_after,
        number(want, "stddev_after"),
    );
    check("magnitude", got.magnitude, number(want, "magnitude"));
    // Otava writes 0 for the relative change over a zero mean, where cellscope has none.
    check(
        "relative change",
        got.relative_change.unwrap_or(0.0),
        number(want, "forward_rel_change"),
    );
    if got.relative_change.is_none() != (got.mean_before == 0.0) {
        found.push("a relative change over a zero mean".into());
    }
    found
}

#[test]
fn change_points_equal_otavas() {
    let vectors = vectors();
    assert_eq!(vectors["otava"], "0.8.0");
    let cases = vectors["cases"].as_array().expect("cases");
    assert!(cases.len() >= 100);
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().expect("a name");
        let got = hunter(case).change_points(&series(case));
        let want = case["change_points"].as_array().expect("change points");
        let indices = |points: &mut dyn Iterator<Item = usize>| points.collect::<Vec<_>>();
        let (got_indices, want_indices) = (
            indices(&mut got.iter().map(|point| point.index)),
            indices(
                &mut want
                    .iter()
                    .map(|point| point["index"].as_u64().expect("an index") as usize),
            ),
        );
        if got_indices != want_indices {
            failures.push(format!(
                "{name}: indices {got_indices:?}, Otava {want_indices:?}"
            ));
            continue;
        }
        for (got, want) in got.iter().zip(want) {
            for difference in differences(got, want) {
                failures.push(format!("{name}, index {}: {difference}", got.index));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
