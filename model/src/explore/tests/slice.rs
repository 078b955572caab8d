//! Tests of the working cells, the slice, comparisons and the cell picker.

use super::*;

#[test]
fn comparison_exclusions_apply_only_when_backends_are_set_against_each_other() {
    let mut cells = sweep("vllm", "long_prefill_8k", &[(1, 1.0), (2, 0.5)]);
    cells.extend(sweep("sglang", "long_prefill_8k", &[(1, 1.0), (2, 0.4)]));
    for cell in cells.iter_mut().filter(|cell| cell.key.backend == "sglang") {
        cell.excluded = vec!["x".into()];
        cell.exclusion_scope = Some(ExclusionScope::Comparison);
    }
    fill_scaling(&mut cells);
    let mut state = ViewState {
        facet: None,
        ..ViewState::default()
    };
    let facets = curves(&cells, &state, Metric::Stat(Stat::Efficiency));
    let sglang = &facets[0].series[0];
    assert_eq!(sglang.label, Value::Text("sglang".into()));
    assert!(sglang.points.is_empty(), "left out of the comparison");
    assert_eq!(sglang.left_out, 6);
    state.what_if.excluded = true;
    let facets = curves(&cells, &state, Metric::Stat(Stat::Efficiency));
    assert_eq!(facets[0].series[0].points.len(), 2);
    // A single-backend view keeps them.
    state.what_if.excluded = false;
    state
        .filter
        .values
        .insert(Dimension::Backend, vec!["sglang".into()]);
    assert_eq!(
        curves(&cells, &state, Metric::Stat(Stat::Efficiency))[0].series[0]
            .points
            .len(),
        2
    );
}

#[test]
fn empty_results_name_the_filter_that_removed_everything() {
    let cells = sweep("vllm", "long_decode", &[(1, 1.0)]);
    let mut state = ViewState::default();
    state
        .filter
        .values
        .insert(Dimension::Backend, vec!["sglang".into()]);
    assert_eq!(
        empty_reason(&cells, &state).unwrap(),
        "no cell matches; the filter backend=sglang removes everything"
    );
    state.filter.values.clear();
    assert_eq!(empty_reason(&cells, &state), None);
}

#[test]
fn pre_refill_what_if_swaps_cells_and_recomputes() {
    let mut cells = sweep("sglang", "w", &[(1, 1.0), (2, 0.5)]);
    fill_scaling(&mut cells);
    let mut before = cells[1].clone();
    before.status = CellStatus::Failed;
    before.ok_rows = 0;
    before.failed_rows = 20;
    before.stats = CellStats::default();
    let mut state = ViewState::default();
    assert_eq!(
        working_cells(&cells, &[before.clone()], &state.what_if)[1].efficiency,
        cells[1].efficiency
    );
    state.what_if.pre_refill = true;
    let working = working_cells(&cells, &[before], &state.what_if);
    assert_eq!(working[1].status, CellStatus::Failed);
    assert_eq!(working[1].efficiency, None);
}

#[test]
fn the_slice_follows_the_partial_and_excluded_toggles() {
    let mut cells = sweep("vllm", "long_prefill_8k", &[(1, 1.0), (2, 0.5)]);
    cells.extend(sweep("sglang", "long_prefill_8k", &[(1, 1.0), (2, 0.4)]));
    cells[1].status = CellStatus::Partial;
    for cell in cells.iter_mut().filter(|cell| cell.key.backend == "sglang") {
        cell.excluded = vec!["x".into()];
        cell.exclusion_scope = Some(ExclusionScope::Comparison);
    }
    let mut state = ViewState::default();
    // The matrix grids by backend: a comparison, so the sglang cells are left out of the slice.
    assert_eq!(slice(&cells, &state).len(), 6);
    state.what_if.partial = false;
    assert_eq!(slice(&cells, &state).len(), 5);
    state.what_if.excluded = true;
    assert_eq!(slice(&cells, &state).len(), 11);
    // One backend alone is no comparison.
    state.grid = Dimension::Model;
    state.rows = Dimension::Phase;
    state.what_if.excluded = false;
    assert_eq!(slice(&cells, &state).len(), 11);
}

#[test]
fn a_comparison_exclusion_applies_whatever_dimension_sets_the_backends_apart() {
    let mut cells = sweep("vllm", "long_prefill_8k", &[(1, 1.0), (2, 0.5)]);
    cells.extend(sweep("sglang", "long_prefill_8k", &[(1, 1.0), (2, 0.4)]));
    for cell in &mut cells {
        // Each backend ran in its own run directory.
        cell.key.run_id = format!("run-{}", cell.key.backend);
        cell.excluded = vec!["mistral".into()];
        cell.exclusion_scope = Some(ExclusionScope::Comparison);
    }
    fill_scaling(&mut cells);
    let left_out = |state: &ViewState| -> u32 {
        curves(&cells, state, Metric::Stat(Stat::Efficiency))
            .iter()
            .flat_map(|facet| &facet.series)
            .map(|series| series.left_out)
            .sum()
    };
    let by_run = ViewState {
        view: View::Curves,
        color: Dimension::Run,
        facet: None,
        ..ViewState::default()
    };
    assert_eq!(
        left_out(&by_run),
        12,
        "colouring by run sets the backends apart"
    );
    let by_backend_facet = ViewState {
        color: Dimension::Model,
        facet: Some(Dimension::Backend),
        ..by_run.clone()
    };
    assert_eq!(left_out(&by_backend_facet), 12);
    // Both backends pooled into one curve per model: nothing is set against anything, the cells stay.
    let pooled = ViewState {
        color: Dimension::Model,
        facet: Some(Dimension::Phase),
        ..by_run.clone()
    };
    assert_eq!(left_out(&pooled), 0);
    // The same rule in the matrix (runs as columns) and for the slice the CSV writes.
    let matrix_by_run = ViewState {
        cols: Dimension::Run,
        grid: Dimension::Phase,
        ..ViewState::default()
    };
    assert!(slice(&cells, &matrix_by_run).is_empty());
    let grids = matrix(
        &cells,
        &ViewState {
            at_load: crate::Load::Concurrency(2),
            ..matrix_by_run
        },
    );
    assert!(
        grids[0].squares[0]
            .iter()
            .all(|square| square.as_ref().unwrap().value.is_none())
    );
}

#[test]
fn a_cell_that_is_not_in_the_data_is_named_with_the_first_part_no_cell_shares() {
    let mut cells = sweep("vllm", "a", &[(1, 1.0), (2, 0.9)]);
    cells.extend(sweep("sglang", "b", &[(1, 1.0), (4, 0.8)]));
    let asked = |text: &str| -> CellKey { text.parse().unwrap() };
    assert_eq!(missing_cell(&cells, &cells[1].key), None);
    assert_eq!(
        missing_cell(&cells, &asked("x/s/scaling/vllm/m/a/n=2/rep=0")).as_deref(),
        Some("No cell x/s/scaling/vllm/m/a/n=2/rep=0 in this data: no cell has run=x.")
    );
    // vllm measured workload a at N = 1 and 2 (reps 0–2): N = 4 is sglang's only.
    assert_eq!(
        missing_cell(&cells, &asked("r/s/scaling/vllm/m/a/n=4/rep=0")).as_deref(),
        Some(
            "No cell r/s/scaling/vllm/m/a/n=4/rep=0 in this data: the cells of its run, suite, phase, \
             backend, model and workload have no n=4 (they have n=1, n=2)."
        )
    );
    assert_eq!(
        missing_cell(&cells, &asked("r/s/scaling/tgi/m/a/n=1/rep=0")).as_deref(),
        Some(
            "No cell r/s/scaling/tgi/m/a/n=1/rep=0 in this data: the cells of its run, suite and phase have \
             no backend=tgi (they have sglang, vllm)."
        )
    );
    assert_eq!(
        missing_cell(&cells, &asked("r/s/scaling/vllm/m/a/n=1/rep=7")).as_deref(),
        Some(
            "No cell r/s/scaling/vllm/m/a/n=1/rep=7 in this data: the cells of its run, suite, phase, backend, \
             model, workload and load have no rep=7 (they have 0, 1, 2)."
        )
    );
    // A configuration no cell of the series states.
    assert_eq!(
        missing_cell(&cells, &asked("r/s/scaling/vllm/m/a/tp=8/n=1/rep=0")).as_deref(),
        Some(
            "No cell r/s/scaling/vllm/m/a/tp=8/n=1/rep=0 in this data: the cells of its run, suite, phase, \
             backend, model and workload have no configuration tp=8 (they have none)."
        )
    );
}

#[test]
fn the_picker_offers_only_choices_that_lead_to_a_cell_and_keeps_what_it_can() {
    let mut cells = sweep("vllm", "a", &[(1, 1.0), (2, 0.9)]);
    cells.extend(sweep("sglang", "b", &[(1, 1.0), (4, 0.8)]));
    let current = cells[1].key.clone(); // vllm, a, n=2, rep 0
    assert_eq!(
        picker_choices(&cells, &current, Dimension::Load),
        vec![Value::Number(1), Value::Number(2)]
    );
    assert_eq!(
        picker_choices(&cells, &current, Dimension::Backend).len(),
        2
    );
    // Switching backend: workload a does not exist for sglang, so it moves to b; N=2 neither, so N=1.
    let picked = pick(&cells, &current, Dimension::Backend, "sglang").unwrap();
    assert_eq!(
        (
            picked.backend.as_str(),
            picked.workload.as_str(),
            picked.load.concurrency().unwrap(),
            picked.rep
        ),
        ("sglang", "b", 1, 0)
    );
    // Switching rep keeps everything else.
    let picked = pick(&cells, &current, Dimension::Rep, "2").unwrap();
    assert_eq!((picked.load.concurrency().unwrap(), picked.rep), (2, 2));
    assert_eq!(pick(&cells, &current, Dimension::Rep, "7"), None);
}
