//! Tests of the curves view: facets, series, loads on the axis and frontiers.

use super::*;

#[test]
fn the_pareto_view_draws_one_point_per_configuration_and_load() {
    // Two engines × tp 1, 2 × two workloads × N 1, 2 × 3 reps, all on h100s.
    let mut cells = Vec::new();
    for backend in ["vllm", "sglang"] {
        for tp in ["1", "2"] {
            for workload in ["w1", "w2"] {
                for mut cell in sweep(backend, workload, &[(1, 1.0), (2, 0.9)]) {
                    cell.key.config.insert("accelerator", "h100").unwrap();
                    cell.key.config.insert("tp", tp).unwrap();
                    cells.push(cell);
                }
            }
        }
    }
    crate::summary::fill_output_per_accelerator(&mut cells);
    fill_scaling(&mut cells);
    let slice: Vec<&CellSummary> = cells.iter().collect();
    let mut state = ViewState::default();
    show_pareto(&mut state, &slice);
    assert_eq!(
        (state.color, state.facet, state.metric),
        (
            Dimension::Configuration,
            Some(Dimension::Workload),
            Metric::Stat(Stat::OutputTpsPerAccelerator)
        )
    );
    // The test's cells have no interactivity: plot throughput against p95 wall time instead.
    state.metric = Metric::Stat(Stat::AggregateTps);
    state.x = XAxis::Metric(Metric::Stat(Stat::P95WallMs));
    let facets = curves(&cells, &state, state.metric);
    assert_eq!(facets.len(), 2);
    for facet in &facets {
        let legends: Vec<&str> = facet
            .series
            .iter()
            .map(|series| series.legend.as_str())
            .collect();
        assert_eq!(
            legends,
            [
                "sglang · tp 1",
                "sglang · tp 2",
                "vllm · tp 1",
                "vllm · tp 2"
            ]
        );
        for series in &facet.series {
            assert_eq!(series.points.len(), 2);
            assert!(series.frontier.is_some() && series.frontier_withheld.is_none());
            for point in &series.points {
                // Each point: one configuration's three reps at one load.
                assert_eq!(point.cells, 3);
                assert_eq!(
                    point.pooling.describe(state.aggregation),
                    "mean of 3 cells: rep 0, 1, 2"
                );
            }
        }
    }
    assert_eq!(frontier_withheld(&facets, &state), None);
    // Coloured by backend instead, each point pools tp 1 and 2: no frontier is drawn, and both the note and
    // the panels say why with the values pooled.
    let by_backend = ViewState {
        color: Dimension::Backend,
        ..state.clone()
    };
    let facets = curves(&cells, &by_backend, state.metric);
    assert!(
        facets
            .iter()
            .flat_map(|facet| &facet.series)
            .all(|series| series.frontier.is_none())
    );
    let why = frontier_withheld(&facets, &by_backend).unwrap();
    assert!(
        why.starts_with("4 of 4 series pool several configurations at a point (up to tp 1, 2)"),
        "{why}"
    );
    assert_eq!(
        panel_notes(&facets, &[], &by_backend)[0],
        ["no frontier through sglang, vllm: points pool tp 1, 2"]
    );
}

#[test]
fn the_frontier_across_configurations_joins_single_configuration_points_of_every_series() {
    // Three configurations at one workload; throughput against p95 wall time (lower is better on x).
    let mut cells = Vec::new();
    for (tp, scale) in [("1", 1.0), ("2", 1.6), ("4", 0.8)] {
        for mut cell in sweep("vllm", "w", &[(1, 1.0), (2, 0.9), (4, 0.6)]) {
            cell.key.config.insert("tp", tp).unwrap();
            cell.stats.aggregate_tps = cell.stats.aggregate_tps.map(|tps| tps * scale);
            cells.push(cell);
        }
    }
    fill_scaling(&mut cells);
    let state = ViewState {
        view: View::Curves,
        metric: Metric::Stat(Stat::AggregateTps),
        x: XAxis::Metric(Metric::Stat(Stat::P95WallMs)),
        color: Dimension::Configuration,
        facet: None,
        frontier: crate::view_state::FrontierMode::Panel,
        ..ViewState::default()
    };
    let facets = curves(&cells, &state, Metric::Stat(Stat::AggregateTps));
    let series = &facets[0].series;
    assert_eq!(
        series
            .iter()
            .map(|series| series.legend.as_str())
            .collect::<Vec<_>>(),
        ["tp 1", "tp 2", "tp 4"]
    );
    // tp 2 beats the others at every load (same p95, 1.6× the throughput): the whole frontier is its.
    let members: Vec<Vec<usize>> = series
        .iter()
        .map(|series| series.frontier.as_ref().unwrap().members.clone())
        .collect();
    assert_eq!(members, [vec![], vec![0, 1, 2], vec![]]);
    assert!(
        series
            .iter()
            .all(|series| series.frontier.as_ref().unwrap().across_series)
    );
    assert!(series[0].is_dominated(0) && !series[1].is_dominated(0));
    assert!(!facets[0].frontier_steps.is_empty());
    assert_eq!(frontier_withheld(&facets, &state), None);
}

#[test]
fn the_load_axis_holds_one_kind_and_says_what_it_leaves_out() {
    // vllm at N = 1, 2 (6 cells); sglang at 1, 2, 4 req/s (9 cells); one cell with no stated load.
    let mut cells = sweep("vllm", "w", &[(1, 1.0), (2, 0.9)]);
    let mut rated = sweep("sglang", "w", &[(1, 1.0), (2, 0.9), (4, 0.8)]);
    for cell in &mut rated {
        cell.key.load = Load::rate(f64::from(cell.key.n().unwrap())).unwrap();
    }
    cells.extend(rated);
    let mut unstated = cell("tgi", "w", 1, 0, 100.0, 1000.0);
    unstated.key.load = Load::Unstated;
    cells.push(unstated);
    fill_scaling(&mut cells);
    let slice: Vec<&CellSummary> = cells.iter().collect();
    let state = ViewState {
        view: View::Curves,
        ..ViewState::default()
    };
    // Most cells are at a rate: the axis holds rates, every series is sglang's.
    assert_eq!(load_kind_on_x(&slice, &state), Some(LoadKind::Rate));
    let facets = curves_of(
        &slice,
        BTreeSet::new(),
        &state,
        Metric::Stat(Stat::P95WallMs),
    );
    let loads: BTreeSet<LoadKind> = facets
        .iter()
        .flat_map(|facet| &facet.series)
        .flat_map(|series| &series.points)
        .map(|point| point.load.kind())
        .collect();
    assert_eq!(loads, BTreeSet::from([LoadKind::Rate]));
    assert_eq!(
        off_the_load_axis(&slice, &state).unwrap(),
        "6 cells at a concurrency N and 1 cell with no stated load not on this axis: it holds one kind of \
         load (offered rate (req/s)). Choose the kind above, or plot against a metric to see every cell."
    );
    // The link chooses concurrency; against a metric every cell is a point and nothing is left out.
    let concurrency = ViewState {
        load_kind: Some(LoadKind::Concurrency),
        ..state.clone()
    };
    assert_eq!(
        load_kind_on_x(&slice, &concurrency),
        Some(LoadKind::Concurrency)
    );
    let against_ttft = ViewState {
        x: XAxis::Metric(Metric::Stat(Stat::P50TtftMs)),
        ..state
    };
    assert_eq!(load_kind_on_x(&slice, &against_ttft), None);
    assert_eq!(off_the_load_axis(&slice, &against_ttft), None);
}

#[test]
fn a_deployment_parameter_splits_the_matrix_the_curves_and_the_filter() {
    let mut cells = deployment("4", &[(1, 1.0), (16, 0.5)]);
    cells.extend(deployment("8", &[(1, 1.0), (16, 0.8)]));
    crate::order::sort_stable_by(&mut cells, |a, b| a.key.cmp(&b.key));
    fill_scaling(&mut cells);
    // Each deployment is normalised against its own N = 1: never pooled with the other as reps.
    let (state, ignored) =
        ViewState::parse_query("view=matrix&grid=tp&rows=workload&cols=load&at_load=16");
    assert!(ignored.is_empty(), "{ignored:?}");
    assert_eq!(
        ViewState::parse_query(&state.to_query()),
        (state.clone(), vec![])
    );
    let grids = matrix(&cells, &state);
    let titles: Vec<&Value> = grids.iter().map(|grid| &grid.title).collect();
    assert_eq!(titles, [&Value::Number(4), &Value::Number(8)]);
    let at_16 = |grid: &MatrixGrid| {
        let row = &grid.squares[0];
        row.iter().flatten().last().and_then(|square| square.value)
    };
    assert!((at_16(&grids[0]).unwrap() - 0.5).abs() < 1e-12);
    assert!((at_16(&grids[1]).unwrap() - 0.8).abs() < 1e-12);
    let (curves_state, _) = ViewState::parse_query("view=curves&color=tp&metric=efficiency");
    let facets = curves(&cells, &curves_state, Metric::Stat(Stat::Efficiency));
    let labels: Vec<&Value> = facets[0]
        .series
        .iter()
        .map(|series| &series.label)
        .collect();
    assert_eq!(labels, [&Value::Number(4), &Value::Number(8)]);
    let (filtered_state, ignored) = ViewState::parse_query("view=curves&tp=8");
    assert!(ignored.is_empty(), "{ignored:?}");
    let kept = filtered(&cells, &filtered_state);
    assert_eq!(kept.len(), 6);
    assert!(
        kept.iter()
            .all(|cell| cell.key.config.get("tp") == Some("8"))
    );
    let counts = crate::filter::faceted_counts(&cells, &filtered_state.filter);
    let tp = Dimension::parse("tp").unwrap();
    assert_eq!(counts[&tp][&Value::Number(4)], 6);
}

#[test]
fn a_frontier_is_drawn_over_one_configuration_and_withheld_over_pooled_models() {
    // Throughput against p95: one model's reps are a real operating point at each N.
    let one = sweep("vllm", "w", &[(1, 1.0), (2, 0.9), (4, 0.5)]);
    let state = ViewState {
        view: View::Curves,
        metric: Metric::Stat(Stat::AggregateTps),
        x: XAxis::Metric(Metric::Stat(Stat::P95WallMs)),
        facet: None,
        frontier: crate::view_state::FrontierMode::Series,
        ..ViewState::default()
    };
    let facets = curves(&one, &state, Metric::Stat(Stat::AggregateTps));
    assert!(facets[0].series[0].frontier.is_some());
    assert_eq!(frontier_withheld(&facets, &state), None);
    // Two models pooled into each point: their mean is no configuration anyone ran.
    let mut two = of_model(one.clone(), "a");
    two.extend(of_model(
        sweep("vllm", "w", &[(1, 1.0), (2, 0.6), (4, 0.3)]),
        "b",
    ));
    let facets = curves(&two, &state, Metric::Stat(Stat::AggregateTps));
    let series = &facets[0].series[0];
    assert!(series.frontier.is_none(), "no frontier over pooled models");
    assert!(!series.is_dominated(1), "no point is called dominated");
    let why = frontier_withheld(&facets, &state).unwrap();
    assert!(
        why.starts_with("1 of 1 series pool several configurations at a point (up to model a, b)"),
        "{why}"
    );
    assert_eq!(
        panel_notes(&facets, &[], &state),
        [vec![
            "no frontier through vllm: points pool model a, b".to_string()
        ]]
    );
    // Coloured by model, each series is one configuration again.
    let by_model = ViewState {
        color: Dimension::Model,
        ..state.clone()
    };
    let facets = curves(&two, &by_model, Metric::Stat(Stat::AggregateTps));
    assert!(
        facets[0]
            .series
            .iter()
            .all(|series| series.frontier.is_some())
    );
    assert_eq!(frontier_withheld(&facets, &by_model), None);
}

#[test]
fn series_pooling_different_model_sets_are_named() {
    let mut cells = of_model(sweep("vllm", "w", &[(1, 1.0), (2, 0.5)]), "llama");
    cells.extend(of_model(
        sweep("vllm", "w", &[(1, 1.0), (2, 0.5)]),
        "mistral",
    ));
    cells.extend(of_model(
        sweep("sglang", "w", &[(1, 1.0), (2, 0.4)]),
        "llama",
    ));
    cells.extend(of_model(
        sweep("sglang", "w", &[(1, 1.0), (2, 0.4)]),
        "mistral",
    ));
    fill_scaling(&mut cells);
    let state = ViewState {
        facet: None,
        ..ViewState::default()
    };
    let slice: Vec<&CellSummary> = cells.iter().collect();
    assert_eq!(unequal_sets(&slice, BTreeSet::new(), &state), []);
    // A ledger entry takes sglang's mistral out of every aggregate: the two sides now pool different sets.
    for cell in cells
        .iter_mut()
        .filter(|cell| cell.key.backend == "sglang" && cell.key.model == "mistral")
    {
        cell.excluded = vec!["tokenizer".into()];
        cell.exclusion_scope = Some(ExclusionScope::All);
    }
    let slice: Vec<&CellSummary> = cells.iter().collect();
    let unequal = unequal_sets(&slice, BTreeSet::new(), &state);
    assert_eq!(unequal.len(), 1, "{unequal:?}");
    assert_eq!(unequal[0].dimension, Dimension::Model);
    assert_eq!(
        unequal[0].short(),
        "⚠ series pool different model sets: sglang 1 model, vllm 2"
    );
    let long = unequal[0].long();
    assert!(
        long.contains("sglang pools llama; vllm pools llama, mistral"),
        "{long}"
    );
    let facets = curves(&cells, &state, Metric::Stat(Stat::Efficiency));
    assert_eq!(
        panel_notes(&facets, &unequal, &state),
        [vec![unequal[0].short()]]
    );
    // Panels whose series pool the same sets share one sentence naming them all.
    let in_panel = |facet: &str| UnequalSets {
        facet: Some(Value::Text(facet.into())),
        ..unequal[0].clone()
    };
    let sentences = unequal_sentences(&[in_panel("w1"), in_panel("w2"), in_panel("w3")]);
    assert_eq!(sentences.len(), 1, "{sentences:?}");
    assert!(
        sentences[0].starts_with("In w1, w2 and w3, the series pool different model sets"),
        "{sentences:?}"
    );
    // Coloured by model, models are not pooled: nothing to say.
    let by_model = ViewState {
        color: Dimension::Model,
        ..state
    };
    assert_eq!(unequal_sets(&slice, BTreeSet::new(), &by_model), []);
}

#[test]
fn a_series_ending_in_skipped_cells_says_where() {
    let mut cells = sweep(
        "pytorch_direct",
        "long_decode",
        &[(1, 1.0), (2, 0.5), (4, 0.3)],
    );
    for rep in 0..3 {
        let mut skipped = CellSummary::empty(
            CellKey {
                load: crate::Load::Concurrency(16),
                rep,
                ..cells[0].key.clone()
            },
            CellStatus::Skipped,
        );
        skipped.skip_rows = 1;
        cells.push(skipped);
    }
    fill_scaling(&mut cells);
    let facets = curves(
        &cells,
        &ViewState::default(),
        Metric::Stat(Stat::Efficiency),
    );
    let series = &facets[0].series[0];
    assert_eq!(series.points.last().unwrap().load.concurrency().unwrap(), 4);
    assert_eq!(series.skipped_at, Some(crate::Load::Concurrency(16)));
    assert_eq!(series.skipped_cells.len(), 3);
    assert_eq!(
        series.breakdown,
        Breakdown::At {
            load: crate::Load::Concurrency(2)
        }
    );
}

#[test]
fn with_a_metric_on_x_points_sit_at_its_pooled_value_and_each_series_has_its_own_frontier() {
    // vllm, two reps per N; the rep means are (p95 ms, tok/s): N=1 (105, 51), N=2 (125, 91), N=4 (205, 86),
    // N=8 (405, 161). N=4 is beaten by N=2 (faster and more), so the frontier is N = 1, 2, 8.
    let mut cells = Vec::new();
    for (n, p95, tps) in [
        (1, 100.0, 50.0),
        (2, 120.0, 90.0),
        (4, 200.0, 85.0),
        (8, 400.0, 160.0),
        (16, 900.0, 150.0),
    ] {
        for rep in 0..2 {
            let spread = f64::from(rep);
            cells.push(cell(
                "vllm",
                "w",
                n,
                rep,
                tps + 2.0 * spread,
                p95 + 10.0 * spread,
            ));
        }
    }
    // N=16 has throughput but no p95 latency: it has no place on the chart.
    for cell in cells.iter_mut().filter(|cell| cell.key.n().unwrap() == 16) {
        cell.stats.p95_wall_ms = None;
    }
    // sglang's one point would beat every vllm point, but frontiers are per series.
    cells.push(cell("sglang", "w", 1, 0, 500.0, 50.0));
    fill_scaling(&mut cells);
    let mut state = ViewState {
        view: View::Curves,
        metric: Metric::Stat(Stat::AggregateTps),
        x: XAxis::Metric(Metric::Stat(Stat::P95WallMs)),
        facet: None,
        frontier: crate::view_state::FrontierMode::Series,
        ..ViewState::default()
    };
    let facets = curves(&cells, &state, Metric::Stat(Stat::AggregateTps));
    let [sglang, vllm] = facets[0].series.as_slice() else {
        panic!("two series: {facets:?}");
    };
    // Points stay in N order, each at the pooled value of both metrics, the x band over the cells.
    let placed: Vec<(u32, f64, f64)> = vllm
        .points
        .iter()
        .map(|point| (point.load.concurrency().unwrap(), point.x, point.value))
        .collect();
    assert_eq!(
        placed,
        [
            (1, 105.0, 51.0),
            (2, 125.0, 91.0),
            (4, 205.0, 86.0),
            (8, 405.0, 161.0)
        ]
    );
    assert_eq!((vllm.points[0].x_min, vllm.points[0].x_max), (100.0, 110.0));
    assert_eq!(vllm.without_value, 1);
    assert_eq!(
        without_value_note(&facets, Metric::Stat(Stat::AggregateTps), state.x).as_deref(),
        Some(
            "1 point without a value of p95 latency or output tok/s left out (never drawn as zero)"
        )
    );
    assert_eq!(
        vllm.frontier_loads(),
        [1, 2, 8].map(crate::Load::Concurrency)
    );
    assert!(vllm.is_dominated(2) && !vllm.is_dominated(1));
    let frontier = vllm.frontier.as_ref().unwrap();
    assert_eq!(
        frontier.steps,
        [
            (105.0, 51.0),
            (125.0, 51.0),
            (125.0, 91.0),
            (405.0, 91.0),
            (405.0, 161.0)
        ]
    );
    assert_eq!(sglang.frontier_loads(), [crate::Load::Concurrency(1)]);
    // Without the frontier toggle no point is dominated; with N on x, points sit at N and nothing is
    // missing but the latency-less N=16 point's plotted value, which it has.
    state.frontier = crate::view_state::FrontierMode::Off;
    let facets = curves(&cells, &state, Metric::Stat(Stat::AggregateTps));
    assert!(facets[0].series[1].frontier.is_none());
    assert!(!facets[0].series[1].is_dominated(2));
    state.x = XAxis::Load;
    state.frontier = crate::view_state::FrontierMode::Series;
    let facets = curves(&cells, &state, Metric::Stat(Stat::AggregateTps));
    let vllm = &facets[0].series[1];
    assert!(vllm.frontier.is_none(), "no frontier against N");
    assert_eq!(vllm.points.len(), 5);
    assert_eq!(vllm.without_value, 0);
    assert_eq!(
        vllm.points.iter().map(|point| point.x).collect::<Vec<_>>(),
        [1.0, 2.0, 4.0, 8.0, 16.0]
    );
    // A missing plotted value counts whatever the x axis; skipped cells are no point at all.
    assert_eq!(
        curves(&cells, &state, Metric::Stat(Stat::P95WallMs))[0].series[1].without_value,
        1
    );
    assert_eq!(
        without_value_note(&facets, Metric::Stat(Stat::AggregateTps), XAxis::Load),
        None
    );
}
