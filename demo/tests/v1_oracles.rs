//! TR164 V1 oracles (the published V1 tables of `cellscope_demo::published`), checked on rows read back from the generated metrics.csv.

mod support;

use cellscope_demo::published::APPENDIX_D;
use cellscope_model::summary::CellSummary;
use cellscope_model::{CellStatus, Criterion};
use support::*;

fn v1() -> Vec<CellSummary> {
    summaries(V1_RUN, 12)
}

fn count(cells: &[CellSummary], filter: impl Fn(&CellSummary) -> bool) -> usize {
    cells
        .iter()
        .filter(|cell| cell.has_data() && filter(cell))
        .count()
}

#[test]
fn census_matches_ss1() {
    let cells = v1();
    assert_eq!(cells.len(), 360, "cell keys");
    assert_eq!(count(&cells, |_| true), 346, "real cells");
    assert_eq!(
        cells
            .iter()
            .filter(|c| c.status == CellStatus::Skipped)
            .count(),
        14,
        "skip-marked cells"
    );
    let skip_rows: u32 = cells.iter().map(|c| c.skip_rows).sum();
    assert_eq!(skip_rows, 14, "skip rows");
    let partial: Vec<&CellSummary> = cells
        .iter()
        .filter(|c| c.status == CellStatus::Partial)
        .collect();
    assert_eq!(partial.len(), 1, "partial cells");
    let p = &partial[0].key;
    assert_eq!(
        (
            p.phase.as_str(),
            p.model.as_str(),
            p.workload.as_str(),
            p.n().expect("a concurrency"),
            p.rep
        ),
        ("ttft", "llama3.2-3b", "balanced_2k", 16, 0)
    );
    assert!(partial[0].rows < 192 && partial[0].ok_rows == partial[0].rows);
    for (n, expected) in [(1, 72), (2, 72), (4, 72), (8, 72), (16, 58)] {
        assert_eq!(
            count(&cells, |c| c.key.n().expect("a concurrency") == n),
            expected,
            "real cells at N={n}"
        );
    }
    assert_eq!(count(&cells, |c| c.key.phase == "scaling"), 174);
    assert_eq!(count(&cells, |c| c.key.phase == "ttft"), 172);
    for (workload, expected) in [
        ("short_decode", 90),
        ("balanced_2k", 88),
        ("long_decode", 84),
        ("repeated_prefix", 84),
    ] {
        assert_eq!(
            count(&cells, |c| c.key.workload == workload),
            expected,
            "{workload}"
        );
    }
    for (model, expected) in [
        ("llama3.2-1b", 120),
        ("qwen2.5-1.5b", 120),
        ("llama3.2-3b", 106),
    ] {
        assert_eq!(count(&cells, |c| c.key.model == model), expected, "{model}");
    }
    for (model, expected) in [
        ("llama3.2-1b", 24),
        ("qwen2.5-1.5b", 24),
        ("llama3.2-3b", 10),
    ] {
        assert_eq!(
            count(&cells, |c| c.key.model == model
                && c.key.n().expect("a concurrency") == 16),
            expected,
            "{model} at N=16"
        );
    }
    // Every real row is ok (SS1: status='ok' rate 1.000, 0 err) and full cells have 12N rows.
    assert!(cells.iter().all(|c| c.failed_rows == 0));
    assert!(
        cells
            .iter()
            .filter(|c| c.status == CellStatus::Clean)
            .all(|c| c.rows == 12 * c.key.n().expect("a concurrency"))
    );
}

#[test]
fn appendix_d_n2_values_are_reproduced() {
    let cells = v1();
    let curves = curves_by_series(&cells);
    let mut worst: (f64, f64) = (0.0, 0.0);
    for (phase, model, workload, efficiency, p95x) in APPENDIX_D {
        let got_e = mean_efficiency(&curves, phase, model, workload, 2);
        let got_p = mean_p95x(&curves, phase, model, workload, 2);
        worst.0 = worst.0.max((got_e - efficiency).abs());
        worst.1 = worst.1.max((got_p - p95x).abs());
        assert!(
            (got_e - efficiency).abs() < 0.02,
            "{phase}/{model}/{workload}: efficiency {got_e} vs {efficiency}"
        );
        assert!(
            (got_p - p95x).abs() < 0.02,
            "{phase}/{model}/{workload}: p95x {got_p} vs {p95x}"
        );
    }
    eprintln!(
        "App. D max |error|: efficiency {:.2e}, p95 multiplier {:.2e}",
        worst.0, worst.1
    );
}

#[test]
fn every_combination_breaks_at_n2_under_v1() {
    let cells = v1();
    let curves = curves_by_series(&cells);
    assert_eq!(curves.len(), 24);
    for ((phase, model, workload), curve) in &curves {
        assert_eq!(
            curve.breakdown(&Criterion::V1).n(),
            Some(2),
            "{phase}/{model}/{workload}"
        );
    }
}

fn pooled(
    cells: &[CellSummary],
    n: u32,
    value: impl Fn(&CellSummary) -> Option<f64>,
) -> (f64, f64, f64, f64, f64) {
    let mut values: Vec<f64> = cells
        .iter()
        .filter(|c| c.key.n().expect("a concurrency") == n)
        .filter_map(value)
        .collect();
    values.sort_by(f64::total_cmp);
    let count = values.len() as f64;
    let mean = values.iter().sum::<f64>() / count;
    let std = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (count - 1.0)).sqrt();
    let median = cellscope_model::quantile_linear(&values, 0.5).unwrap_or(f64::NAN);
    (mean, std, values[0], median, values[values.len() - 1])
}

#[test]
fn efficiency_and_tail_distributions_follow_ss4_and_ss5() {
    let cells = v1();
    // SS4 and SS5: mean, std, min, median, max over the real cells at N.
    let ss4 = [
        (2, (0.536, 0.093, 0.282, 0.547, 0.733)),
        (4, (0.281, 0.053, 0.142, 0.295, 0.379)),
        (8, (0.104, 0.052, 0.004, 0.127, 0.253)),
        (16, (0.047, 0.023, 0.001, 0.056, 0.095)),
    ];
    let ss5 = [
        (2, (1.96, 0.70, 0.86, 1.83, 5.39)),
        (4, (3.80, 1.20, 1.97, 3.52, 7.30)),
        (8, (36.99, 89.93, 3.61, 7.92, 512.65)),
        (16, (88.89, 266.94, 6.86, 17.36, 1446.67)),
    ];
    for (n, published) in ss4 {
        let got = pooled(&cells, n, |c| c.efficiency);
        eprintln!("N={n} efficiency {got:.4?} published {published:?}");
        assert!((got.0 - published.0).abs() < 0.01, "N={n} mean");
        assert!((got.3 - published.3).abs() < 0.01, "N={n} median");
        assert!(
            (got.2 - published.2).abs() < 0.006 && (got.4 - published.4).abs() < 0.01,
            "N={n} min/max"
        );
    }
    for (n, published) in ss5 {
        let got = pooled(&cells, n, |c| c.p95_multiplier);
        eprintln!("N={n} p95x {got:.3?} published {published:?}");
        assert!((got.3 / published.3 - 1.0).abs() < 0.15, "N={n} median");
        assert!((got.4 / published.4 - 1.0).abs() < 0.05, "N={n} max");
    }
}

#[test]
fn appendix_i_n16_means_are_followed() {
    // Appendix I, executed combinations.
    let published = [
        ("scaling", "llama3.2-1b", "short_decode", 0.061),
        ("scaling", "llama3.2-1b", "balanced_2k", 0.014),
        ("scaling", "llama3.2-1b", "long_decode", 0.060),
        ("scaling", "llama3.2-1b", "repeated_prefix", 0.033),
        ("ttft", "llama3.2-1b", "short_decode", 0.058),
        ("ttft", "llama3.2-1b", "balanced_2k", 0.014),
        ("ttft", "llama3.2-1b", "long_decode", 0.059),
        ("ttft", "llama3.2-1b", "repeated_prefix", 0.032),
        ("scaling", "qwen2.5-1.5b", "short_decode", 0.063),
        ("scaling", "qwen2.5-1.5b", "balanced_2k", 0.058),
        ("scaling", "qwen2.5-1.5b", "long_decode", 0.063),
        ("scaling", "qwen2.5-1.5b", "repeated_prefix", 0.060),
        ("ttft", "qwen2.5-1.5b", "short_decode", 0.062),
        ("ttft", "qwen2.5-1.5b", "balanced_2k", 0.057),
        ("ttft", "qwen2.5-1.5b", "long_decode", 0.060),
        ("ttft", "qwen2.5-1.5b", "repeated_prefix", 0.061),
        ("scaling", "llama3.2-3b", "short_decode", 0.052),
        ("scaling", "llama3.2-3b", "balanced_2k", 0.018),
        ("ttft", "llama3.2-3b", "short_decode", 0.050),
    ];
    let curves = curves_by_series(&v1());
    for (phase, model, workload, value) in published {
        let got = mean_efficiency(&curves, phase, model, workload, 16);
        assert!(
            (got - value).abs() < 0.004,
            "{phase}/{model}/{workload}: {got} vs {value}"
        );
    }
}

#[test]
fn n1_throughput_is_near_the_published_medians() {
    let cells = v1();
    let median = |filter: &dyn Fn(&CellSummary) -> bool| {
        let mut values: Vec<f64> = cells
            .iter()
            .filter(|c| c.key.n().expect("a concurrency") == 1 && filter(c))
            .filter_map(|c| c.stats.aggregate_tps)
            .collect();
        values.sort_by(f64::total_cmp);
        cellscope_model::quantile_linear(&values, 0.5).unwrap_or(f64::NAN)
    };
    // SS2 and SS3 N=1 medians.
    for (model, value) in [
        ("llama3.2-1b", 42.04),
        ("qwen2.5-1.5b", 32.80),
        ("llama3.2-3b", 27.71),
    ] {
        let got = median(&|c| c.key.model == model);
        assert!(
            (got / value - 1.0).abs() < 0.05,
            "{model}: {got} vs {value}"
        );
    }
    for (workload, value) in [
        ("balanced_2k", 29.77),
        ("long_decode", 32.49),
        ("repeated_prefix", 27.47),
        ("short_decode", 35.14),
    ] {
        let got = median(&|c| c.key.workload == workload);
        assert!(
            (got / value - 1.0).abs() < 0.08,
            "{workload}: {got} vs {value}"
        );
    }
}
