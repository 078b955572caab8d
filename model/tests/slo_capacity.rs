//! SLO capacities against the ones an independent numpy implementation of the same definition produced
//! (`tests/vectors/slo_capacity.py`): every outcome, bracket, rep range and crossing-back flag, no Python needed.

use cellscope_model::slo::{Level, Outcome, RepRange, RepValues, Slo, SloBound};
use serde_json::Value;

fn load(value: &Value) -> f64 {
    match value.as_str() {
        Some("inf") => f64::INFINITY,
        _ => value.as_f64().expect("a load"),
    }
}

fn levels(case: &Value) -> Vec<Level> {
    let levels = case["levels"].as_array().expect("levels");
    levels
        .iter()
        .map(|level| Level {
            load: load(&level["load"]),
            reps: level["reps"]
                .as_array()
                .expect("reps")
                .iter()
                .map(|rep| RepValues {
                    rep: u32::try_from(rep["rep"].as_u64().expect("a rep")).expect("small"),
                    values: rep["values"]
                        .as_array()
                        .expect("values")
                        .iter()
                        .map(Value::as_f64)
                        .collect(),
                })
                .collect(),
        })
        .collect()
}

/// Bounds on `p99_ttft_ms` then `p99_tpot_ms`, the statistics the cases give.
fn slo(case: &Value) -> Slo {
    let maxes = case["maxes"].as_array().expect("maxes");
    Slo {
        bounds: ["p99_ttft_ms", "p99_tpot_ms"]
            .into_iter()
            .zip(maxes)
            .map(|(column, max)| SloBound {
                column,
                max: max.as_f64().expect("a max"),
            })
            .collect(),
    }
}

fn expected(value: &Value) -> Outcome {
    let flag = || value["non_monotone"].as_bool().expect("a flag");
    match value["kind"].as_str().expect("a kind") {
        "capacity" => Outcome::Capacity {
            load: load(&value["load"]),
            interval: (!value["interval"].is_null()).then(|| RepRange {
                low: load(&value["interval"]["low"]),
                high: load(&value["interval"]["high"]),
                reps: usize::try_from(value["interval"]["reps"].as_u64().expect("a count"))
                    .expect("small"),
            }),
            bracket: (load(&value["bracket"][0]), load(&value["bracket"][1])),
            non_monotone: flag(),
        },
        "not_reached" => Outcome::NotReached {
            up_to: load(&value["up_to"]),
            non_monotone: flag(),
        },
        "never_met" => Outcome::NeverMet {
            lowest: load(&value["lowest"]),
        },
        _ => Outcome::Unjudged {
            reason: "no level has every bound's statistic",
        },
    }
}

fn close(got: f64, want: f64) -> bool {
    got == want || (got - want).abs() <= 1e-12 * want.abs().max(got.abs())
}

/// Equal outcomes, loads equal to 1e-12 relative (numpy's mean sums in another order).
fn same(got: &Outcome, want: &Outcome) -> bool {
    match (got, want) {
        (
            Outcome::Capacity {
                load,
                interval,
                bracket,
                non_monotone,
            },
            Outcome::Capacity {
                load: want_load,
                interval: want_interval,
                bracket: want_bracket,
                non_monotone: want_non_monotone,
            },
        ) => {
            let ranges = match (interval, want_interval) {
                (Some(got), Some(want)) => {
                    close(got.low, want.low) && close(got.high, want.high) && got.reps == want.reps
                }
                (None, None) => true,
                _ => false,
            };
            close(*load, *want_load)
                && ranges
                && bracket == want_bracket
                && non_monotone == want_non_monotone
        }
        _ => got == want,
    }
}

#[test]
fn capacities_equal_the_numpy_oracles() {
    let vectors: Value = serde_json::from_str(include_str!("vectors/slo_capacity.json"))
        .expect("the vectors are JSON");
    let cases = vectors["cases"].as_array().expect("cases");
    assert!(cases.len() >= 19);
    let mut failures = Vec::new();
    for case in cases {
        let got = slo(case).capacity(&levels(case));
        let want = expected(&case["expected"]);
        if !same(&got, &want) {
            failures.push(format!("{}: {got:?}, numpy {want:?}", case["name"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
