//! Tests of the matrix view: grids, squares, their scales and marks.

use super::*;

#[test]
fn two_deployments_at_one_load_each_fill_the_matrix() {
    let mut cells = vec![
        cell("vllm", "w", 4, 0, 400.0, 900.0),
        cell("vllm", "w", 4, 0, 700.0, 1500.0),
    ];
    cells[0].key.config.insert("tp", "4").unwrap();
    cells[1].key.config.insert("tp", "8").unwrap();
    fill_scaling(&mut cells);
    // Nothing at the default N = 16: the matrix opens at N = 4, where both deployments are, in one square.
    assert!(matrix(&cells, &ViewState::default()).is_empty());
    let at = opening_at_load(&cells).expect("another load");
    assert_eq!(at, Load::Concurrency(4));
    let state = ViewState {
        at_load: at,
        ..ViewState::default()
    };
    let grids = matrix(&cells, &state);
    assert_eq!(grids.len(), 1, "{grids:?}");
    // A TR164-like root with N = 16 keeps the default.
    let swept = sweep("vllm", "w", &[(1, 1.0), (16, 0.5)]);
    assert_eq!(opening_at_load(&swept), None);
    // A rate sweep opens at its largest finite rate when every rate has as many cells.
    let mut rated = sweep("sglang", "w", &[(1, 1.0), (2, 0.9), (4, 0.8)]);
    for cell in &mut rated {
        cell.key.load = Load::rate(f64::from(cell.key.n().unwrap())).unwrap();
    }
    assert_eq!(opening_at_load(&rated), Load::rate(4.0));
}

#[test]
fn the_matrix_colours_by_slo_capacity_and_the_link_sets_the_slo() {
    // One series at N = 1, 2, 4, 8, two reps: p99 TTFT 50, 80, 120, 400 ms (rep 1 10 ms higher).
    let mut cells = sweep("vllm", "w", &[(1, 1.0), (2, 0.9), (4, 0.8), (8, 0.5)]);
    cells.retain(|cell| cell.key.rep < 2);
    for cell in &mut cells {
        let ttft = match cell.key.n() {
            Some(1) => 50.0,
            Some(2) => 80.0,
            Some(4) => 120.0,
            _ => 400.0,
        };
        cell.stats.p99_ttft_ms = Some(ttft + 10.0 * f64::from(cell.key.rep));
    }
    fill_scaling(&mut cells);
    let square = |slo: &str| {
        let (state, ignored) = ViewState::parse_query(&format!(
            "metric=slo_capacity&slo={slo}&grid=backend&rows=model&cols=workload"
        ));
        assert!(ignored.is_empty(), "{ignored:?}");
        let grids = super::matrix::matrix(&cells, &state);
        let square = grids[0].squares[0][0].clone().unwrap();
        (square.value, square.label(Metric::SloCapacity))
    };
    // ≤ 100 ms: rep means 55, 85, 125, 405: holds at N = 2, fails at 4; 2 + (100 − 85)/(125 − 85) × 2 = 2.75.
    let (value, label) = square("p99_ttft_ms<=100");
    assert!((value.unwrap() - 2.75).abs() < 1e-12, "{value:?}");
    // Each rep's own capacity: rep 0 2 + 20/40 × 2 = 3, rep 1 (60, 90, 130 ms) 2 + 10/40 × 2 = 2.5.
    assert_eq!(label, "≈ N=2.8 (2–4; range over 2 reps 2.5–3)");
    // A looser SLO is not reached within the measured loads; a tighter one is never met.
    assert!(square("p99_ttft_ms<=1000").1.starts_with("≥ N=8"));
    let (never, label) = square("p99_ttft_ms<=10");
    assert_eq!(never, None);
    assert!(label.starts_with("never met"), "{label}");
}

#[test]
fn capacities_of_both_kinds_keep_a_scale_each_and_bounds_stay_bounds() {
    let rate = |rps: f64| Load::rate(rps).unwrap();
    let n = Load::Concurrency;
    let mut cells = Vec::new();
    // Under p99 TTFT ≤ 100 ms, worked by hand:
    // a: N = 1, 2, 4 at 50, 80, 120 ms → holds at 2, fails at 4: 2 + 20/40 × 2 = N=3.
    cells.extend(ttft_series(
        "a",
        &[(n(1), 50.0), (n(2), 80.0), (n(4), 120.0)],
    ));
    // b: N = 1 … 8 at 20 … 80 ms → holds at every N: at least N=8.
    cells.extend(ttft_series("b", &[(n(1), 20.0), (n(8), 80.0)]));
    // c: 1, 4 req/s and all at once at 60, 90, 900 ms → fails only all at once: at least 4 req/s.
    let unbounded = rate(f64::INFINITY);
    cells.extend(ttft_series(
        "c",
        &[(rate(1.0), 60.0), (rate(4.0), 90.0), (unbounded, 900.0)],
    ));
    // d: 1, 2 req/s at 70, 130 ms → 1 + 30/60 × 1 = 1.5 req/s.
    cells.extend(ttft_series("d", &[(rate(1.0), 70.0), (rate(2.0), 130.0)]));
    // e: N = 1 at 150 ms → never met.
    cells.extend(ttft_series("e", &[(n(1), 150.0)]));
    fill_scaling(&mut cells);
    let (state, ignored) = ViewState::parse_query(
        "metric=slo_capacity&slo=p99_ttft_ms%3C%3D100&grid=workload&rows=backend&cols=model",
    );
    assert!(ignored.is_empty(), "{ignored:?}");
    let grids = matrix(&cells, &state);
    let placed: Vec<Option<(LoadKind, crate::slo::Placed)>> = grids[0]
        .squares
        .iter()
        .map(|row| row[0].as_ref().and_then(|square| square.capacity_placed))
        .collect();
    use crate::slo::Placed::{AtLeast, Measured, NeverMet};
    assert_eq!(
        placed,
        [
            Some((LoadKind::Concurrency, Measured(3.0))),
            Some((LoadKind::Concurrency, AtLeast(8.0))),
            Some((LoadKind::Rate, AtLeast(4.0))),
            Some((LoadKind::Rate, Measured(1.5))),
            Some((LoadKind::Concurrency, NeverMet)),
        ]
    );
    // One scale per kind: N from 3 to 8, req/s from 1.5 to 4; a rate never lands on the N scale.
    let scale = LoadScale::of_capacities(&grids);
    assert_eq!(scale.concurrency, Some((3.0, 8.0)));
    assert_eq!(scale.rate, Some((1.5, 4.0)));
    // log₂: N = 4 sits (2 − log₂ 3) / (3 − log₂ 3) of the way; 3 req/s (log₂ 2 − log₂ 1.5)/(2 − log₂ 1.5).
    let within = |kind, load: f64, expected: f64| {
        let position = scale.position(kind, load).unwrap();
        assert!(
            (position - expected).abs() < 1e-12,
            "{load}: {position} ≠ {expected}"
        );
    };
    within(
        LoadKind::Concurrency,
        4.0,
        (2.0 - 3f64.log2()) / (3.0 - 3f64.log2()),
    );
    within(
        LoadKind::Rate,
        3.0,
        (3f64.log2() - 1.5f64.log2()) / (2.0 - 1.5f64.log2()),
    );
    within(LoadKind::Rate, f64::INFINITY, 1.0);
    assert_eq!(
        scale.legend(Metric::SloCapacity),
        (
            "N=3 · 1.5 req/s (lowest in view)".to_string(),
            "N=8 · 4 req/s (highest)".to_string()
        )
    );
    // The squares say the bound with its ≥.
    let labels: Vec<String> = grids[0]
        .squares
        .iter()
        .map(|row| row[0].as_ref().unwrap().label(Metric::SloCapacity))
        .collect();
    assert_eq!(labels[1], "≥ N=8 (not reached)");
    assert_eq!(labels[2], "≥ 4 req/s (fails all at once, not interpolated)");
    assert_eq!(labels[4], "never met (fails at N=1)");
}

#[test]
fn a_rate_breakdown_scale_never_puts_all_at_once_on_the_n_scale() {
    let scale = LoadScale {
        concurrency: Some((1.0, 64.0)),
        ..LoadScale::spanning([(LoadKind::Rate, 2.0), (LoadKind::Rate, 8.0)])
    };
    // N = 8 is half of log₂ 64; 4 req/s half of the rates' span; all at once the top of the rate scale.
    assert_eq!(scale.position(LoadKind::Concurrency, 8.0), Some(0.5));
    assert_eq!(scale.position(LoadKind::Rate, 4.0), Some(0.5));
    assert_eq!(scale.position(LoadKind::Rate, f64::INFINITY), Some(1.0));
    assert_eq!(
        scale.legend(Metric::Breakdown),
        (
            "breaks at N=1 · saturates at 2 req/s".to_string(),
            "N=64 · 8 req/s · all at once and never = brightest".to_string()
        )
    );
    // Only all at once in view: the rate scale exists, with no finite end.
    let alone = LoadScale::spanning([(LoadKind::Rate, f64::INFINITY)]);
    assert_eq!(alone.position(LoadKind::Rate, f64::INFINITY), Some(1.0));
    assert_eq!(alone.position(LoadKind::Concurrency, 4.0), None);
    assert_eq!(alone.ranges(), [(LoadKind::Rate, None)]);
}

#[test]
fn a_rate_series_counts_failed_cells_and_carries_its_slo_capacity() {
    let rate = |rps: f64| Load::rate(rps).unwrap();
    // 1, 2, 4 req/s at 60, 80, 140 ms p99 TTFT; the cell at 4 req/s failed (some rows not ok).
    let mut cells = ttft_series(
        "vllm",
        &[(rate(1.0), 60.0), (rate(2.0), 80.0), (rate(4.0), 140.0)],
    );
    cells[2].status = CellStatus::Failed;
    cells[2].rows += 3;
    fill_scaling(&mut cells);
    let slice: Vec<&CellSummary> = cells.iter().collect();
    let (state, _) = ViewState::parse_query(
        "view=curves&metric=p99_ttft_ms&slo=p99_ttft_ms%3C%3D100&facet=none",
    );
    let facets = curves_of(
        &slice,
        BTreeSet::new(),
        &state,
        Metric::Stat(Stat::P99TtftMs),
    );
    let series = &facets[0].series[0];
    let failed: Vec<u32> = series.points.iter().map(|point| point.failed).collect();
    assert_eq!(failed, [0, 0, 1]);
    assert_eq!(
        series.points[2].table_text(XAxis::Load),
        "4: 140.000 (✕ 1 of 1 cell failed)"
    );
    // Holds at 2 req/s (80 ms), fails at 4 (140 ms): 2 + 20/60 × 2 = 2.67 req/s.
    assert_eq!(series.slo_capacity.as_deref(), Some("≈ 2.7 req/s (2–4)"));
    let line = slo_line(&state, Metric::Stat(Stat::P99TtftMs)).unwrap();
    assert_eq!(
        (line.value, line.label.as_str()),
        (100.0, "SLO p99_ttft_ms ≤ 100 ms")
    );
    // No line for a statistic the SLO does not bound, nor without an SLO in the link.
    assert_eq!(slo_line(&state, Metric::Stat(Stat::P95TtftMs)), None);
    assert_eq!(
        slo_line(&ViewState::default(), Metric::Stat(Stat::P99TtftMs)),
        None
    );
    let without: Vec<Option<String>> = curves_of(
        &slice,
        BTreeSet::new(),
        &ViewState::default(),
        Metric::Stat(Stat::P99TtftMs),
    )
    .iter()
    .flat_map(|facet| {
        facet
            .series
            .iter()
            .map(|series| series.slo_capacity.clone())
    })
    .collect();
    assert_eq!(without, [None]);
}

#[test]
fn matrix_grids_follow_the_chosen_dimensions_and_metric() {
    let mut cells = sweep(
        "vllm",
        "long_decode",
        &[(1, 1.0), (2, 0.9), (16, 0.7), (32, 0.6)],
    );
    cells.extend(sweep(
        "sglang",
        "long_decode",
        &[(1, 1.0), (2, 0.95), (16, 0.8), (32, 0.66)],
    ));
    fill_scaling(&mut cells);
    let mut state = ViewState {
        at_load: crate::Load::Concurrency(32),
        ..ViewState::default()
    };
    let grids = matrix(&cells, &state);
    assert_eq!(grids.len(), 2);
    assert_eq!(grids[0].title, Value::Text("sglang".into()));
    let square = grids[1].squares[0][0].as_ref().unwrap();
    assert!((square.value.unwrap() - 0.6).abs() < 1e-12);
    assert_eq!(square.cells, 3);
    state.metric = Metric::Breakdown;
    state.criterion = crate::Criterion::V3;
    let grids = matrix(&cells, &state);
    assert_eq!(grids[1].squares[0][0].as_ref().unwrap().value, Some(32.0));
    let sglang = grids[0].squares[0][0].as_ref().unwrap();
    assert_eq!((sglang.value, sglang.never_within.is_some()), (None, true));
}

#[test]
fn squares_carry_the_signs_of_reported_figures_and_say_why_efficiency_is_absent() {
    // vllm's sweep starts at N = 2 (no baseline); sglang's N = 32 throughput is the tool's figure in one
    // rep and its p95 derived in another.
    let mut cells = sweep("vllm", "long_decode", &[(2, 0.9), (32, 0.6)]);
    cells.push(failed_at_1("vllm", "long_decode"));
    cells.extend(sweep("sglang", "long_decode", &[(1, 1.0), (32, 0.66)]));
    for cell in cells
        .iter_mut()
        .filter(|cell| cell.key.backend == "sglang" && cell.key.n().unwrap() == 32)
    {
        match cell.key.rep {
            0 => cell.origin.reported.push("aggregate_tps".into()),
            1 => cell.origin.derived.push("p95_wall_ms".into()),
            _ => {}
        }
    }
    fill_scaling(&mut cells);
    let state = ViewState {
        at_load: crate::Load::Concurrency(32),
        ..ViewState::default()
    };
    let grids = matrix(&cells, &state);
    let sglang = grids[0].squares[0][0].as_ref().unwrap();
    assert_eq!((sglang.reported, sglang.derived), (1, 0));
    assert_eq!(sglang.sign(), "†");
    assert_eq!(
        sglang.origin_lines(Metric::Stat(Stat::Efficiency)),
        [
            "† 1 of 3 cells: reported by the tool, not recomputed (the file has no request rows for it)"
        ]
    );
    let vllm = grids[1].squares[0][0].as_ref().unwrap();
    assert_eq!(vllm.value, None);
    assert_eq!(
        vllm.absent,
        Some(ScalingAbsent::NoBaseline { smallest_n: 2 })
    );
    assert_eq!(vllm.label(Metric::Stat(Stat::Efficiency)), "no N=1");
    assert!(
        vllm.origin_lines(Metric::Stat(Stat::Efficiency))[0]
            .ends_with("this sweep starts at N = 2")
    );
    // On p95 wall the derived rep is marked, the reported throughput is not.
    let p95 = ViewState {
        metric: Metric::Stat(Stat::P95WallMs),
        ..state
    };
    let sglang = matrix(&cells, &p95)[0].squares[0][0].clone().unwrap();
    assert_eq!(
        (sglang.reported, sglang.derived, sglang.sign().as_str()),
        (0, 1, "‡")
    );
    let vllm = matrix(&cells, &p95)[1].squares[0][0].clone().unwrap();
    assert_eq!((vllm.absent.clone(), vllm.sign().as_str()), (None, ""));
}

#[test]
fn a_matrix_base_built_for_one_metric_serves_every_metric_and_criterion_of_its_layout() {
    // vllm's sweep has no N = 1 (efficiency absent), sglang's N = 32 carries a reported and a derived
    // figure, one vllm cell failed and one is partial: every part of a square that a metric changes.
    let mut cells = sweep("vllm", "long_decode", &[(2, 0.9), (16, 0.7), (32, 0.6)]);
    cells.push(failed_at_1("vllm", "long_decode"));
    cells.extend(sweep(
        "sglang",
        "long_decode",
        &[(1, 1.0), (16, 0.8), (32, 0.66)],
    ));
    cells.extend(sweep("sglang", "short", &[(1, 1.0), (16, 0.5), (32, 0.3)]));
    for cell in &mut cells {
        match (
            cell.key.backend.as_str(),
            cell.key.n().unwrap(),
            cell.key.rep,
        ) {
            ("sglang", 32, 0) => cell.origin.reported.push("aggregate_tps".into()),
            ("sglang", 32, 1) => cell.origin.derived.push("p95_wall_ms".into()),
            ("vllm", 16, 2) => {
                cell.status = CellStatus::Failed;
                cell.ok_rows = 0;
                cell.stats = CellStats::default();
            }
            ("vllm", 32, 1) => cell.status = CellStatus::Partial,
            _ => {}
        }
    }
    fill_scaling(&mut cells);
    let layouts = [
        (Dimension::Backend, Dimension::Model, Dimension::Workload),
        (Dimension::Backend, Dimension::Workload, Dimension::Load),
        (Dimension::Load, Dimension::Backend, Dimension::Rep),
    ];
    let criteria = [crate::Criterion::V1, crate::Criterion::V3];
    let (mut reused, mut valued, mut absent, mut marked, mut never) = (0, 0, 0, 0, 0);
    for (grid, rows, cols) in layouts {
        for at_n in [16, 32] {
            for built_for in Metric::ALL {
                let first = ViewState {
                    grid,
                    rows,
                    cols,
                    at_load: crate::Load::Concurrency(at_n),
                    metric: built_for,
                    ..ViewState::default()
                };
                let layout = MatrixLayout::of(&first);
                let slice = filtered(&cells, &first);
                let comparisons = view_comparisons(&slice, &first);
                let base = MatrixBase::of(&cells, &slice, comparisons, &layout);
                // Every state that differs from the first in what the matrix shows or how it pools: the
                // base serves exactly those with the same layout.
                let seconds = Metric::ALL.into_iter().flat_map(|metric| {
                    let first = &first;
                    criteria.iter().flat_map(move |criterion| {
                        [Aggregation::Mean, Aggregation::Median]
                            .into_iter()
                            .flat_map(move |aggregation| {
                                [(BandSpan::Cells, true), (BandSpan::Reps, false)]
                                    .into_iter()
                                    .flat_map(move |(band, partial)| {
                                        [16, 32].into_iter().map(move |at_n| ViewState {
                                            metric,
                                            criterion: *criterion,
                                            aggregation,
                                            band,
                                            at_load: crate::Load::Concurrency(at_n),
                                            what_if: WhatIf {
                                                partial,
                                                ..WhatIf::DEFAULT
                                            },
                                            ..first.clone()
                                        })
                                    })
                            })
                    })
                });
                for second in seconds {
                    if MatrixLayout::of(&second) != layout {
                        continue;
                    }
                    let grids = base.grids(&second);
                    assert_eq!(grids, matrix(&cells, &second), "{built_for:?} → {second:?}");
                    // Where each square is one series, a per-cell metric's value is the mean of its reps
                    // at N, computed here from the cells alone.
                    if (grid, rows, cols) == layouts[0]
                        && second.metric.per_cell()
                        && second.aggregation == Aggregation::Mean
                    {
                        let admitted = inclusion(&second, BTreeSet::new());
                        for grid in &grids {
                            for (col, workload) in grid.cols.iter().enumerate() {
                                let values: Vec<f64> = cells
                                    .iter()
                                    .filter(|cell| {
                                        grid.title == Value::Text(cell.key.backend.clone())
                                            && *workload == Value::Text(cell.key.workload.clone())
                                            && cell.key.n().unwrap() == at_n
                                            && admitted.admits(cell)
                                    })
                                    .filter_map(|cell| second.metric.of_cell(cell))
                                    .collect();
                                let expected = (!values.is_empty())
                                    .then(|| values.iter().sum::<f64>() / values.len() as f64);
                                let square = grid.squares[0][col].as_ref().unwrap();
                                assert_eq!(square.value, expected, "{second:?}");
                                valued += u32::from(expected.is_some());
                            }
                        }
                    }
                    reused += u32::from(second.metric != built_for);
                    for square in grids
                        .iter()
                        .flat_map(|grid| grid.squares.iter().flatten().flatten())
                    {
                        absent += u32::from(square.absent.is_some());
                        marked += u32::from(square.reported + square.derived > 0);
                        never += u32::from(square.never_within.is_some());
                    }
                }
            }
        }
    }
    // Each metric's base served the other metrics of its kind, and the squares it served had reasons,
    // marks and a breakdown that never comes.
    assert!(reused > 300, "{reused} reuses");
    assert!(valued > 100, "{valued} values checked against the cells");
    assert!(
        absent > 0 && marked > 0 && never > 0,
        "{absent} {marked} {never}"
    );
}

#[test]
fn a_square_holding_one_series_shows_that_series_curve() {
    let mut cells = sweep("vllm", "a", &[(1, 1.0), (2, 0.9), (4, 0.6), (8, 0.7)]);
    cells.extend(sweep(
        "vllm",
        "b",
        &[(1, 1.0), (2, 0.9), (4, 0.8), (8, 0.7)],
    ));
    cells[7].status = CellStatus::Partial;
    fill_scaling(&mut cells);
    let state = ViewState {
        metric: Metric::Breakdown,
        criterion: crate::Criterion::V3,
        ..ViewState::default()
    };
    let per_series = crate::curve::series_curves(&cells, &curve_options(&state, BTreeSet::new()));
    let grid = &matrix(&cells, &state)[0];
    for (col, curve) in per_series.iter().enumerate() {
        let square = grid.squares[0][col].as_ref().unwrap();
        assert_eq!(
            square.value.map(|n| n as u32),
            curve.breakdown(&state.criterion).n()
        );
    }
    assert_eq!(grid.squares[0][0].as_ref().unwrap().value, Some(4.0));
    assert!(grid.squares[0][1].as_ref().unwrap().never_within.is_some());
}

#[test]
fn points_and_single_cell_squares_name_their_cells() {
    let mut cells = sweep("vllm", "a", &[(1, 1.0), (2, 0.9)]);
    fill_scaling(&mut cells);
    let state = ViewState {
        at_load: crate::Load::Concurrency(2),
        ..ViewState::default()
    };
    let facets = curves(&cells, &state, Metric::Stat(Stat::Efficiency));
    let (series, point) = (&facets[0].series[0], &facets[0].series[0].points[1]);
    let slice = filtered(&cells, &state);
    let in_curves = ViewState {
        view: View::Curves,
        ..state.clone()
    };
    let comparisons = view_comparisons(&slice, &in_curves);
    let keys = point_keys(
        &slice,
        comparisons,
        &state,
        facets[0].title.as_ref(),
        &series.label,
        point.load,
    );
    assert_eq!(keys.len(), 3, "three reps at N=2");
    assert_eq!(keys.len() as u32, point.cells);
    assert!(keys.iter().all(|key| key.n().unwrap() == 2));
    let mut by_rep = state.clone();
    by_rep.cols = Dimension::Rep;
    let grid = &matrix(&cells, &by_rep)[0];
    let square = grid.squares[0][1].as_ref().unwrap();
    assert_eq!(
        square
            .only_cell
            .as_ref()
            .map(|key| (key.n().unwrap(), key.rep)),
        Some((2, 1))
    );
    let pooled = &matrix(&cells, &state)[0].squares[0][0];
    assert_eq!(pooled.as_ref().unwrap().only_cell, None);
}

#[test]
fn n_as_columns_shows_every_n_whatever_at_n_says() {
    let mut cells = sweep("vllm", "a", &[(1, 1.0), (2, 0.9), (4, 0.8)]);
    fill_scaling(&mut cells);
    let state = ViewState {
        cols: Dimension::Load,
        at_load: crate::Load::Concurrency(16),
        ..ViewState::default()
    };
    assert!(!uses_at_load(&state));
    let grid = &matrix(&cells, &state)[0];
    assert_eq!(
        grid.cols,
        vec![Value::Number(1), Value::Number(2), Value::Number(4)]
    );
    assert!(
        grid.squares[0]
            .iter()
            .all(|square| square.as_ref().unwrap().value.is_some())
    );
}
