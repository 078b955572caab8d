//! The head-to-head on the V3 demo data against the published V3 head-to-head table: vLLM vs SGLang
//! per workload on parallel efficiency in the scaling phase, the Mistral × long_prefill_8k exclusion applied.
//!
//! The pairing (n_pairs, the pairs the ledger drops, what "include excluded" restores) and the statistics are
//! asserted: the demo recipe is solved so that the mean deltas and the exact Wilcoxon statistics (hence the Holm p)
//! are the published ones; the bootstrap intervals, drawn from the demo's own pairs, are close to them.

use crate::common;
use cellscope_model::stat::Stat;

use cellscope_model::CellSummary;
use cellscope_model::compare::{CompareSpec, Verdict, compare};
use cellscope_model::key::{Dimension, Value};
use cellscope_model::metric::Metric;
use cellscope_model::view_state::WhatIf;
use common::demo_index;

/// One published row: workload, n_pairs, mean Δ (vLLM − SGLang), bootstrap 95% CI, Holm p, verdict.
struct Row {
    workload: &'static str,
    n_pairs: u32,
    mean_delta: f64,
    ci: (f64, f64),
    holm_p: f64,
    verdict: Verdict,
}

const PUBLISHED: [Row; 5] = [
    Row {
        workload: "short_decode",
        n_pairs: 25,
        mean_delta: -0.0349,
        ci: (-0.0544, -0.0176),
        holm_p: 0.001824,
        verdict: Verdict::BEdge,
    },
    Row {
        workload: "balanced_2k",
        n_pairs: 25,
        mean_delta: 0.0022,
        ci: (-0.0100, 0.0140),
        holm_p: 0.652841,
        verdict: Verdict::NoClearDifference,
    },
    Row {
        workload: "long_prefill_8k",
        n_pairs: 20,
        mean_delta: 0.0757,
        ci: (0.0546, 0.0961),
        holm_p: 0.000048,
        verdict: Verdict::AEdge,
    },
    Row {
        workload: "long_decode",
        n_pairs: 25,
        mean_delta: -0.0349,
        ci: (-0.0570, -0.0172),
        holm_p: 0.000649,
        verdict: Verdict::BEdge,
    },
    Row {
        workload: "repeated_prefix",
        n_pairs: 25,
        mean_delta: -0.0148,
        ci: (-0.0227, -0.0076),
        holm_p: 0.001289,
        verdict: Verdict::BEdge,
    },
];

fn spec() -> CompareSpec {
    CompareSpec {
        by: Dimension::Backend,
        a: "vllm".into(),
        b: "sglang".into(),
        per: Some(Dimension::Workload),
        metric: Metric::Stat(Stat::Efficiency),
        alpha: 0.05,
        slo: String::new(),
    }
}

#[test]
fn the_v3_head_to_head_is_the_published_table_and_names_the_ledger_drops() {
    let index = demo_index();
    let scaling: Vec<&CellSummary> = index
        .cells
        .iter()
        .filter(|cell| cell.key.phase == "scaling")
        .collect();
    let comparison = compare(&scaling, &spec(), &WhatIf::DEFAULT);
    assert_eq!(comparison.groups.len(), 5);
    for row in &PUBLISHED {
        let workload = row.workload;
        let group = comparison
            .groups
            .iter()
            .find(|group| group.group == Some(Value::Text(workload.into())))
            .unwrap_or_else(|| panic!("no group {workload}"));
        assert_eq!(group.n_pairs, row.n_pairs, "{workload}");
        let mean = group.mean_delta.unwrap();
        assert!(
            (mean - row.mean_delta).abs() < 0.005,
            "{workload}: mean Δ {mean} vs {}",
            row.mean_delta
        );
        // Holm p as published (6 dp): the exact Wilcoxon p depends only on the ranks, which the recipe sets.
        let holm_p = group.holm_p.unwrap();
        assert!(
            (holm_p - row.holm_p).abs() < 5e-7,
            "{workload}: Holm p {holm_p} vs {}",
            row.holm_p
        );
        assert_eq!(group.verdict, row.verdict, "{workload}");
        let (low, high) = group.ci.unwrap();
        // The four edges' intervals exclude zero on the side of the published mean; the tie's straddles it.
        if row.verdict == Verdict::NoClearDifference {
            assert!(low < 0.0 && high > 0.0, "{workload}: [{low}, {high}]");
        } else {
            assert_eq!(
                low > 0.0,
                row.mean_delta > 0.0,
                "{workload}: [{low}, {high}]"
            );
            assert_eq!(
                high > 0.0,
                row.mean_delta > 0.0,
                "{workload}: [{low}, {high}]"
            );
        }
        assert!(
            (low - row.ci.0).abs() < 0.01 && (high - row.ci.1).abs() < 0.01,
            "{workload}: [{low}, {high}] vs {:?}",
            row.ci
        );
    }
    // The five pairs the ledger drops are named with its entry, on both sides.
    let long_prefill = comparison
        .groups
        .iter()
        .find(|group| group.group == Some(Value::Text("long_prefill_8k".into())))
        .unwrap();
    assert_eq!(long_prefill.dropped.len(), 5);
    assert!(long_prefill.dropped.iter().all(|dropped| {
        dropped.describe(&spec())
            == "excluded by the ledger (mistral-long-prefill-tokenizer) on both sides"
    }));
    // With the exclusion lifted, Mistral pairs again.
    let included = compare(
        &scaling,
        &spec(),
        &WhatIf {
            excluded: true,
            ..WhatIf::DEFAULT
        },
    );
    let long_prefill = included
        .groups
        .iter()
        .find(|group| group.group == Some(Value::Text("long_prefill_8k".into())))
        .unwrap();
    assert_eq!((long_prefill.n_pairs, long_prefill.dropped.len()), (25, 0));
}

/// Without a phase filter (the view's default), each (model, workload, N) is one pair whose sides average both
/// phases' reps: counted independently of the comparison code, from the cells themselves.
#[test]
fn the_default_comparison_pairs_each_configuration_once_over_its_phases_and_reps() {
    let index = demo_index();
    let cells: Vec<&CellSummary> = index.cells.iter().collect();
    let comparison = compare(&cells, &spec(), &WhatIf::DEFAULT);
    assert_eq!(
        comparison.pair_pooling(),
        "each pair: mean of phase scaling, ttft × rep 0, 1, 2 per side"
    );
    let side_mean = |backend: &str, model: &str, workload: &str, n: u32| -> f64 {
        let values: Vec<f64> = index
            .cells
            .iter()
            .filter(|cell| {
                cell.key.backend == backend
                    && cell.key.model == model
                    && cell.key.workload == workload
                    && cell.key.n().expect("a concurrency") == n
                    && cell.excluded.is_empty()
            })
            .filter_map(|cell| cell.efficiency)
            .collect();
        assert_eq!(values.len(), 6, "{backend} {model} {workload} N={n}");
        values.iter().sum::<f64>() / 6.0
    };
    assert_eq!(comparison.groups.len(), 5);
    for group in &comparison.groups {
        let workload = group.label();
        // Five models, five N > 1; the ledger takes Mistral out of long_prefill_8k on both sides.
        let expected_pairs = if workload == "long_prefill_8k" {
            20
        } else {
            25
        };
        assert_eq!(group.n_pairs, expected_pairs, "{workload}");
        let mut seen = std::collections::BTreeSet::new();
        for pair in &group.pairs {
            let value = |dimension: Dimension| {
                pair.coordinates
                    .iter()
                    .find(|(of, _)| *of == dimension)
                    .map(|(_, value)| value.to_string())
                    .unwrap_or_else(|| panic!("no {dimension:?} in {:?}", pair.coordinates))
            };
            let (model, n) = (value(Dimension::Model), value(Dimension::Load));
            assert!(
                seen.insert((model.clone(), n.clone())),
                "{workload}: {model} N={n} twice"
            );
            assert!(
                pair.coordinates
                    .iter()
                    .all(|(dimension, _)| *dimension != Dimension::Phase),
                "the phase is averaged, not matched"
            );
            let n: u32 = n.parse().unwrap();
            let a = side_mean("vllm", &model, &workload, n);
            let b = side_mean("sglang", &model, &workload, n);
            assert!(
                (pair.a - a).abs() < 1e-12 && (pair.b - b).abs() < 1e-12,
                "{workload} {model} N={n}"
            );
        }
    }
    // The scaling phase alone is still the published table's pairing.
    let scaling: Vec<&CellSummary> = cells
        .iter()
        .copied()
        .filter(|cell| cell.key.phase == "scaling")
        .collect();
    let published = compare(&scaling, &spec(), &WhatIf::DEFAULT);
    assert_eq!(
        published.pair_pooling(),
        "each pair: mean of rep 0, 1, 2 per side"
    );
}
