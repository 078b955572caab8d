//! The head-to-head on the V3 demo data against the published table (TR164 V3 §13, 001:L99-105): vLLM vs SGLang
//! per workload on parallel efficiency in the scaling phase, the Mistral × long_prefill_8k exclusion applied.
//!
//! The pairing (n_pairs, the pairs the ledger drops, what "include excluded" restores) and the statistics are
//! asserted: the demo recipe is solved so that the mean deltas and the exact Wilcoxon statistics (hence the Holm p)
//! are the published ones; the bootstrap intervals, drawn from the demo's own pairs, are close to them.

use crate::common;

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
        metric: Metric::Efficiency,
        alpha: 0.05,
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
