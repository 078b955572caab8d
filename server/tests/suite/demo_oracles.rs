//! Golden tests on the demo data: the numbers the indexer computes from the raw CSV reproduce the published
//! TR164 results (`cellscope_demo::published`), and the census matches the documented counts exactly.

use crate::common;

use cellscope_demo::published::APPENDIX_D;
use cellscope_model::curve::{CurveOptions, series_curves};
use cellscope_model::{CellStatus, Criterion};
use common::demo_index;
use std::collections::BTreeMap;

const V1: &str = "20260531_120428_552237";
const VLLM: &str = "20260612_204254_036590";
const SGLANG: &str = "20260612_212816_266127";
const REFILL: &str = "20260613_055519_963364";

fn count_by<'a>(
    cells: impl Iterator<Item = &'a cellscope_model::CellSummary>,
    key: impl Fn(&cellscope_model::CellSummary) -> String,
) -> BTreeMap<String, u32> {
    let mut counts = BTreeMap::new();
    for cell in cells {
        *counts.entry(key(cell)).or_default() += 1;
    }
    counts
}

fn map(pairs: &[(&str, u32)]) -> BTreeMap<String, u32> {
    pairs
        .iter()
        .map(|(key, value)| (key.to_string(), *value))
        .collect()
}

#[test]
fn v1_census_matches_ss1_and_the_7_2_placement() {
    let index = demo_index();
    let v1: Vec<_> = index
        .cells
        .iter()
        .filter(|cell| cell.key.run_id == V1)
        .collect();
    assert_eq!(v1.len(), 360);
    let real = || v1.iter().copied().filter(|cell| cell.has_data());
    assert_eq!(real().count(), 346);
    let by_status = count_by(v1.iter().copied(), |cell| cell.status.as_str().to_string());
    assert_eq!(by_status.get("skipped"), Some(&14));
    assert_eq!(by_status.get("partial"), Some(&1));
    assert_eq!(by_status.get("failed"), None);
    assert_eq!(by_status.get("not_run"), None);
    assert_eq!(v1.iter().map(|cell| cell.skip_rows).sum::<u32>(), 14);
    assert_eq!(
        count_by(real(), |cell| cell
            .key
            .n()
            .expect("a concurrency")
            .to_string()),
        map(&[("1", 72), ("2", 72), ("4", 72), ("8", 72), ("16", 58)])
    );
    assert_eq!(
        count_by(real(), |cell| cell.key.phase.clone()),
        map(&[("scaling", 174), ("ttft", 172)])
    );
    assert_eq!(
        count_by(real(), |cell| cell.key.workload.clone()),
        map(&[
            ("short_decode", 90),
            ("balanced_2k", 88),
            ("long_decode", 84),
            ("repeated_prefix", 84)
        ])
    );
    assert_eq!(
        count_by(real(), |cell| cell.key.model.clone()),
        map(&[
            ("llama3.2-1b", 120),
            ("qwen2.5-1.5b", 120),
            ("llama3.2-3b", 106)
        ])
    );
    let partial = v1
        .iter()
        .find(|cell| cell.status == CellStatus::Partial)
        .unwrap();
    assert_eq!(
        (
            partial.key.phase.as_str(),
            partial.key.model.as_str(),
            partial.key.workload.as_str(),
            partial.key.n().expect("a concurrency"),
            partial.key.rep
        ),
        ("ttft", "llama3.2-3b", "balanced_2k", 16, 0)
    );
    assert!(partial.rows < 192 && partial.expected_rows == Some(192));
    assert_eq!(v1.iter().filter(|cell| cell.fallback).count(), 3);
}

#[test]
fn v1_breaks_at_n2_everywhere_with_appendix_d_values() {
    let index = demo_index();
    let v1_curves = series_curves(
        index.cells.iter().filter(|cell| cell.key.run_id == V1),
        &CurveOptions::default(),
    );
    assert_eq!(v1_curves.len(), 24);
    for (phase, model, workload, efficiency, p95_multiplier) in APPENDIX_D {
        let curve = v1_curves
            .iter()
            .find(|curve| {
                curve.group.phase == phase
                    && curve.group.model == model
                    && curve.group.workload == workload
            })
            .unwrap_or_else(|| panic!("no curve for {phase} {model} {workload}"));
        assert_eq!(
            curve.breakdown(&Criterion::V1).n(),
            Some(2),
            "{phase} {model} {workload}"
        );
        let at_2 = curve.point(cellscope_model::Load::Concurrency(2)).unwrap();
        assert_eq!(at_2.cells, 3);
        let measured = at_2.efficiency().unwrap().value;
        assert!(
            (measured - efficiency).abs() <= 0.02,
            "{phase} {model} {workload}: efficiency {measured} vs {efficiency}"
        );
        let measured_p95 = at_2.p95_multiplier().unwrap().value;
        assert!(
            (measured_p95 - p95_multiplier).abs() <= 0.05,
            "{phase} {model} {workload}: p95x {measured_p95} vs {p95_multiplier}"
        );
    }
    // llama3.2-3b long_decode ends in skipped cells at N=16 on both phases.
    let long_decode = v1_curves
        .iter()
        .find(|curve| curve.group.model == "llama3.2-3b" && curve.group.workload == "long_decode")
        .unwrap();
    let last = long_decode
        .point(cellscope_model::Load::Concurrency(16))
        .unwrap();
    assert_eq!((last.skipped, last.cells, last.efficiency()), (3, 0, None));
}

#[test]
fn v3_counts_and_refill_lineage() {
    let index = demo_index();
    assert_eq!(
        index.cells.len(),
        360 + 900 + 900,
        "the refill run's cells belong to its master"
    );
    for run in [VLLM, SGLANG] {
        let cells: Vec<_> = index
            .cells
            .iter()
            .filter(|cell| cell.key.run_id == run)
            .collect();
        assert_eq!(cells.len(), 900, "{run}");
        assert_eq!(
            cells
                .iter()
                .map(|cell| u64::from(cell.ok_rows))
                .sum::<u64>(),
            94_500,
            "{run}"
        );
        assert_eq!(
            cells
                .iter()
                .map(|cell| u64::from(cell.failed_rows))
                .sum::<u64>(),
            0,
            "{run}"
        );
        assert!(
            cells.iter().all(|cell| cell.status == CellStatus::Clean),
            "{run}"
        );
    }
    let refilled: Vec<_> = index.cells.iter().filter(|cell| cell.refilled).collect();
    assert_eq!(refilled.len(), 36);
    assert!(refilled.iter().all(|cell| cell.key.run_id == SGLANG
        && cell.key.backend == "sglang"
        && cell.key.model == "mistral-7b"
        && cell.key.workload == "long_prefill_8k"
        && cell.source_run_id.as_deref() == Some(REFILL)));
    let refill_run = index.run(REFILL).unwrap();
    assert_eq!(refill_run.role, cellscope_model::api::RunRole::Refill);
    assert_eq!(refill_run.refill_of.as_deref(), Some(SGLANG));
    assert_eq!(refill_run.census.cells, 36);
    let master = index.run(SGLANG).unwrap();
    let backup = &master.backups[0];
    let diff = backup.diff.as_ref().unwrap();
    assert_eq!(diff.replaced_rows, 3_780);
    assert_eq!(diff.replaced_backup_status.get("http_400"), Some(&3_780));
    assert_eq!(diff.replaced_backup_status.len(), 1);
    assert_eq!(diff.problem_count, 0);
    assert_eq!(diff.replacement_run_ids.get(REFILL), Some(&3_780));
    assert_eq!(master.refill.as_ref().unwrap().refilled_cells, 36);
    assert!(
        index
            .warnings
            .iter()
            .all(|warning| warning.severity != cellscope_model::api::Severity::Error),
        "{:#?}",
        index.warnings
    );
    // Hashes are there for every metrics.csv.
    assert!(
        index
            .runs
            .iter()
            .all(|run| run.metrics.md5.as_ref().is_some_and(|md5| md5.len() == 32))
    );
    // The comparison exclusion matches the Mistral × long_prefill_8k cells of both backends.
    let excluded = index
        .cells
        .iter()
        .filter(|cell| cell.excluded == ["mistral-long-prefill-tokenizer"])
        .count();
    assert_eq!(excluded, 72);
}

/// Per-model efficiency at N=32 (the V3 report's 4-dp table): (model, vLLM, SGLang).
const PER_MODEL_N32: [(&str, f64, f64); 5] = [
    ("qwen2.5-7b", 0.4997, 0.5290),
    ("llama3.1-8b", 0.4876, 0.4777),
    ("mistral-7b", 0.4701, 0.4713),
    ("qwen2.5-14b", 0.6118, 0.6000),
    ("phi-4", 0.6189, 0.5952),
];

#[test]
fn v3_per_model_n32_efficiency_matches_the_published_table() {
    let index = demo_index();
    for (model, vllm, sglang) in PER_MODEL_N32 {
        for (run, published) in [(VLLM, vllm), (SGLANG, sglang)] {
            let values: Vec<f64> = index
                .cells
                .iter()
                .filter(|cell| {
                    cell.key.run_id == run
                        && cell.key.model == model
                        && cell.key.n().expect("a concurrency") == 32
                })
                .filter_map(|cell| cell.efficiency)
                .collect();
            assert_eq!(values.len(), 30, "5 workloads × 3 reps × 2 phases");
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            assert!(
                (mean - published).abs() <= 0.01,
                "{run} {model}: {mean:.4} vs {published}"
            );
        }
    }
}

/// `first_n_below_0.65` per (model, workload): vLLM, SGLang; `None` = never.
const FIRST_N_BELOW: [(&str, &str, Option<u32>, Option<u32>); 25] = [
    ("qwen2.5-7b", "short_decode", Some(16), Some(32)),
    ("qwen2.5-7b", "balanced_2k", Some(32), Some(32)),
    ("qwen2.5-7b", "long_prefill_8k", Some(16), Some(8)),
    ("qwen2.5-7b", "long_decode", None, None),
    ("qwen2.5-7b", "repeated_prefix", Some(32), Some(32)),
    ("llama3.1-8b", "short_decode", Some(16), Some(32)),
    ("llama3.1-8b", "balanced_2k", Some(32), Some(32)),
    ("llama3.1-8b", "long_prefill_8k", Some(16), Some(8)),
    ("llama3.1-8b", "long_decode", None, None),
    ("llama3.1-8b", "repeated_prefix", Some(32), Some(32)),
    ("mistral-7b", "short_decode", Some(16), Some(16)),
    ("mistral-7b", "balanced_2k", Some(16), Some(16)),
    ("mistral-7b", "long_prefill_8k", Some(16), Some(16)),
    ("mistral-7b", "long_decode", Some(16), Some(32)),
    ("mistral-7b", "repeated_prefix", Some(16), Some(32)),
    ("qwen2.5-14b", "short_decode", Some(32), Some(32)),
    ("qwen2.5-14b", "balanced_2k", Some(32), Some(32)),
    ("qwen2.5-14b", "long_prefill_8k", Some(16), Some(16)),
    ("qwen2.5-14b", "long_decode", None, None),
    ("qwen2.5-14b", "repeated_prefix", Some(32), Some(32)),
    ("phi-4", "short_decode", Some(32), Some(32)),
    ("phi-4", "balanced_2k", None, Some(32)),
    ("phi-4", "long_prefill_8k", Some(16), Some(16)),
    ("phi-4", "long_decode", None, None),
    ("phi-4", "repeated_prefix", Some(32), Some(32)),
];

#[test]
fn v3_first_n_below_065_equals_the_published_50_cell_table_in_both_phases() {
    let index = demo_index();
    let v3_curves = series_curves(
        index
            .cells
            .iter()
            .filter(|cell| cell.key.run_id == VLLM || cell.key.run_id == SGLANG),
        &CurveOptions::default(),
    );
    assert_eq!(v3_curves.len(), 2 * 25 * 2);
    for (model, workload, vllm, sglang) in FIRST_N_BELOW {
        for (run, published) in [(VLLM, vllm), (SGLANG, sglang)] {
            for phase in ["scaling", "ttft"] {
                let curve = v3_curves
                    .iter()
                    .find(|curve| {
                        curve.group.run_id == run
                            && curve.group.phase == phase
                            && curve.group.model == model
                            && curve.group.workload == workload
                    })
                    .unwrap();
                assert_eq!(
                    curve.breakdown(&Criterion::V3).n(),
                    published,
                    "{run} {phase} {model} {workload}"
                );
            }
        }
    }
}

/// `workload_boundary.*.mean_efficiency_at_n32`: (workload, vLLM, SGLang).
const WORKLOAD_N32: [(&str, f64, f64); 5] = [
    ("short_decode", 0.4493, 0.5388),
    ("balanced_2k", 0.5733, 0.5514),
    ("long_prefill_8k", 0.3875, 0.2812),
    ("long_decode", 0.7151, 0.7231),
    ("repeated_prefix", 0.5629, 0.5788),
];

#[test]
fn v3_workload_n32_means_match_the_published_table() {
    let index = demo_index();
    for (workload, vllm, sglang) in WORKLOAD_N32 {
        for (run, published) in [(VLLM, vllm), (SGLANG, sglang)] {
            let values: Vec<f64> = index
                .cells
                .iter()
                .filter(|cell| {
                    cell.key.run_id == run
                        && cell.key.workload == workload
                        && cell.key.n().expect("a concurrency") == 32
                })
                .filter_map(|cell| cell.efficiency)
                .collect();
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            assert!(
                (mean - published).abs() <= 0.01,
                "{run} {workload}: {mean:.4} vs {published}"
            );
        }
    }
}

/// The audit's breakdown table and the app's matrix give the same breakdown N for every V1 and V3 series under
/// both named criteria: one curve engine. The matrix is fed exactly as the browser feeds it: the cells table
/// through Arrow IPC, decoded, with the what-if working set recomputed.
#[test]
fn the_audit_table_and_the_app_matrix_agree_on_every_breakdown() {
    use cellscope_model::Dimension;
    use cellscope_model::curve::Breakdown;
    use cellscope_model::explore::{Value, matrix, working_cells};
    use cellscope_model::schema::cells_from_ipc;
    use cellscope_model::view_state::{Metric, ViewState, WhatIf};

    let index = demo_index();
    let arrow = cellscope::export::encode(&index.cells, cellscope::export::Format::Arrow).unwrap();
    let decoded = cells_from_ipc(&arrow).unwrap();
    let browser_cells = working_cells(&decoded, &[], &WhatIf::default());
    for criterion in [Criterion::V1, Criterion::V3] {
        let report = cellscope::audit::report(index, &criterion);
        assert_eq!(report.breakdown.len(), 24 + 100);
        let mut compared = 0;
        let mut kinds: BTreeMap<&str, u32> = BTreeMap::new();
        for row in &report.breakdown {
            let mut state = ViewState {
                metric: Metric::Breakdown,
                criterion,
                rows: Dimension::Model,
                cols: Dimension::Workload,
                grid: Dimension::Backend,
                ..ViewState::default()
            };
            state.select_only(Dimension::Run, &row.series.run_id);
            state.select_only(Dimension::Phase, &row.series.phase);
            let grids = matrix(&browser_cells, &state);
            let grid = grids
                .iter()
                .find(|grid| grid.title == Value::Text(row.series.backend.clone()))
                .unwrap();
            let r = grid
                .rows
                .iter()
                .position(|value| value == &Value::Text(row.series.model.clone()));
            let c = grid
                .cols
                .iter()
                .position(|value| value == &Value::Text(row.series.workload.clone()));
            let square = grid.squares[r.unwrap()][c.unwrap()].as_ref().unwrap();
            let from_matrix = match (square.value, square.never_within) {
                (Some(n), _) => Breakdown::At {
                    load: cellscope_model::Load::Concurrency(n as u32),
                },
                (None, Some(max)) => Breakdown::Never { max },
                (None, None) => Breakdown::NoData,
            };
            let from_audit = row.breakdown;
            assert_eq!(
                from_matrix,
                from_audit,
                "{} {} {} {} {} under {}",
                row.series.run_id,
                row.series.phase,
                row.series.backend,
                row.series.model,
                row.series.workload,
                criterion.name()
            );
            *kinds
                .entry(match from_audit {
                    Breakdown::At { .. } => "at",
                    Breakdown::Never { .. } => "never",
                    Breakdown::NoData => "no data",
                })
                .or_default() += 1;
            compared += 1;
        }
        assert_eq!(compared, 124);
        // Both outcomes occur, so the comparison is not vacuous.
        assert!(
            kinds.get("at").copied().unwrap_or(0) > 0
                && kinds.get("never").copied().unwrap_or(0) > 0,
            "{kinds:?}"
        );
    }
}

/// TPOT of one V1 cell against numpy on the raw metrics.csv: the `ok` rows of (scaling, pytorch_direct,
/// llama3.2-1b, balanced_2k, n_agents 8, rep 0) that are not skip sentinels, each with a TTFT and more than one
/// completion token, give `(wall_ms - ttft_ms) / (completion_tokens - 1)`; `numpy.percentile(tpot, 95)`,
/// `numpy.mean(tpot)` and `numpy.median(1000 / tpot)`. TR164 rows have no inter-token gaps: no ITL.
#[test]
fn tpot_of_a_tr164_cell_matches_numpy_on_the_raw_csv() {
    let cell = demo_index()
        .cells
        .iter()
        .find(|cell| {
            let key = &cell.key;
            key.run_id == V1
                && key.phase == "scaling"
                && key.backend == "pytorch_direct"
                && key.model == "llama3.2-1b"
                && key.workload == "balanced_2k"
                && key.n() == Some(8)
                && key.rep == 0
        })
        .expect("the V1 cell");
    let close = |got: Option<f64>, want: f64| {
        got.is_some_and(|got| (got - want).abs() <= 1e-9 * want.abs())
    };
    let stats = &cell.stats;
    assert!(
        close(stats.p95_tpot_ms, 102.07271628989811),
        "{:?}",
        stats.p95_tpot_ms
    );
    assert!(
        close(stats.mean_tpot_ms, 46.149389220404636),
        "{:?}",
        stats.mean_tpot_ms
    );
    assert!(
        close(stats.p50_interactivity_tps, 24.820597637131538),
        "{:?}",
        stats.p50_interactivity_tps
    );
    assert_eq!((stats.mean_itl_ms, stats.p99_itl_ms), (None, None));
    assert!(cell.origin.is_empty());
}
