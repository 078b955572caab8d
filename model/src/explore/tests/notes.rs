//! Tests of the notes beside the views and of the opening metric.

use super::*;

#[test]
fn single_load_results_open_on_throughput_and_say_why() {
    // A concurrency sweep keeps the default.
    let mut swept = sweep("vllm", "w", &[(1, 1.0), (4, 0.8)]);
    fill_scaling(&mut swept);
    assert_eq!(opening_metric(&swept), None);
    assert_eq!(
        one_load_note(
            &swept.iter().collect::<Vec<_>>(),
            Metric::Stat(Stat::Efficiency)
        ),
        None
    );
    // One concurrency per configuration (two workloads, one N each): measured against itself each would read
    // 1.000, so none has a scaling metric, and the view opens on output throughput.
    let mut single = vec![
        cell("vllm", "a", 4, 0, 400.0, 900.0),
        cell("vllm", "b", 8, 0, 700.0, 1500.0),
    ];
    fill_scaling(&mut single);
    assert!(
        single
            .iter()
            .all(|cell| cell.efficiency.is_none() && cell.p95_multiplier.is_none())
    );
    let slice: Vec<&CellSummary> = single.iter().collect();
    assert_eq!(
        crate::reasons::ScalingAbsent::of(Metric::Stat(Stat::Efficiency), &single[0], &slice)
            .map(|absent| absent.short()),
        Some("one load")
    );
    let (metric, why) = opening_metric(&single).expect("another metric");
    assert_eq!(metric, Metric::Stat(Stat::AggregateTps));
    assert_eq!(
        why,
        "Opened on output tok/s: 0 of 2 cells with data have a parallel efficiency (2 are the one load their \
         series was measured at: one load, no scaling), 2 have output tok/s. Choose another metric above."
    );
    assert_eq!(
        one_load_note(&slice, Metric::Stat(Stat::Efficiency)).as_deref(),
        Some(
            "2 cells are the one load their series was measured at: one load, no scaling (no parallel \
             efficiency or p95 multiplier, shown as \"one load\", never as 1.000)."
        )
    );
    assert_eq!(
        one_load_note(&slice, Metric::Stat(Stat::AggregateTps)),
        None
    );
    // A panel of such cells draws no efficiency point and says why.
    let why = crate::reasons::NoPoint::of(
        &slice,
        &inclusion(&ViewState::default(), BTreeSet::new()),
        Metric::Stat(Stat::Efficiency),
        None,
    )
    .map(|why| why.text());
    assert_eq!(
        why.as_deref(),
        Some(
            "one load, no scaling: no parallel efficiency (each of its 2 cells is the one load its series was \
             measured at)"
        )
    );
    // A root of mostly sweeps keeps efficiency, and its one-load cells are counted.
    let mut mixed = swept.clone();
    mixed.extend(single.clone());
    fill_scaling(&mut mixed);
    assert_eq!(opening_metric(&mixed), None);
    let mixed_slice: Vec<&CellSummary> = mixed.iter().collect();
    assert!(
        one_load_note(&mixed_slice, Metric::Stat(Stat::Efficiency))
            .unwrap()
            .starts_with("2 cells are")
    );
    // An offered rate has achieved/offered, which means something at one load.
    let mut rated = single.clone();
    for cell in &mut rated {
        cell.key.load = Load::rate(4.0).unwrap();
        cell.stats.request_throughput_rps = Some(3.5);
    }
    fill_scaling(&mut rated);
    assert_eq!(opening_metric(&rated), None);
    // No throughput: the first metric most cells have.
    for cell in &mut single {
        cell.stats.aggregate_tps = None;
    }
    fill_scaling(&mut single);
    let (metric, _) = opening_metric(&single).expect("another metric");
    assert_eq!(metric, Metric::Stat(Stat::P95WallMs));
}

#[test]
fn a_panel_without_points_says_why_in_words() {
    let state = ViewState {
        view: View::Curves,
        facet: Some(Dimension::Backend),
        ..ViewState::default()
    };
    let notes = |cells: &[CellSummary], comparisons: BTreeSet<String>, state: &ViewState| {
        let slice: Vec<&CellSummary> = cells.iter().collect();
        let facets = curves_of(&slice, comparisons.clone(), state, state.metric);
        empty_notes(&slice, comparisons, state, state.metric, &facets)
    };
    // vllm is drawn; sglang's every cell is out by a comparison entry that applies, tgi starts at N = 4.
    let mut cells = sweep("vllm", "w", &[(1, 1.0), (2, 0.9)]);
    let mut excluded = sweep("sglang", "w", &[(1, 1.0), (2, 0.8)]);
    for cell in &mut excluded {
        cell.excluded = vec!["tokenizer".into()];
        cell.exclusion_scope = Some(ExclusionScope::Comparison);
    }
    cells.extend(excluded);
    cells.extend(sweep("tgi", "w", &[(4, 1.0), (8, 0.5)]));
    cells.push(failed_at_1("tgi", "w"));
    fill_scaling(&mut cells);
    let comparisons = BTreeSet::from(["tokenizer".to_string()]);
    // Facets in backend order: sglang, tgi, vllm.
    assert_eq!(
        notes(&cells, comparisons.clone(), &state),
        [
            vec!["all 6 cells excluded by the ledger (tokenizer)".to_string()],
            vec![
                "no parallel efficiency: no N = 1 cell in this series (measured from N = 4)"
                    .to_string()
            ],
            vec![],
        ]
    );
    // The p95 multiplier needs the same baseline; throughput does not.
    let multiplier = ViewState {
        metric: Metric::Stat(Stat::P95Multiplier),
        ..state.clone()
    };
    assert_eq!(
        notes(&cells, comparisons.clone(), &multiplier)[1],
        ["no p95 latency multiplier: no N = 1 cell in this series (measured from N = 4)"]
    );
    let throughput = ViewState {
        metric: Metric::Stat(Stat::AggregateTps),
        ..state.clone()
    };
    assert_eq!(
        notes(&cells, comparisons.clone(), &throughput)[1],
        Vec::<String>::new()
    );
    // In one panel, only the empty series is named.
    let one_panel = ViewState {
        facet: None,
        ..state.clone()
    };
    assert_eq!(
        notes(&cells, comparisons, &one_panel),
        [vec![
            "sglang: all 6 cells excluded by the ledger (tokenizer)".to_string(),
            "tgi: no parallel efficiency: no N = 1 cell in this series (measured from N = 4)"
                .to_string()
        ]]
    );
    // Cells without a successful row, and partial cells the toggle leaves out.
    let mut skipped = sweep("vllm", "w", &[(1, 1.0), (2, 0.9)]);
    for cell in &mut skipped {
        cell.status = CellStatus::Skipped;
        cell.stats.ok_rows = 0;
    }
    assert_eq!(
        notes(&skipped, BTreeSet::new(), &state),
        [vec![
            "no data: all 6 cells are without a successful request (skipped, failed or not run)"
                .to_string()
        ]]
    );
    let mut partial = sweep("vllm", "w", &[(1, 1.0), (2, 0.9)]);
    for cell in &mut partial {
        cell.status = CellStatus::Partial;
    }
    fill_scaling(&mut partial);
    let mut no_partial = state.clone();
    no_partial.what_if.partial = false;
    assert_eq!(
        notes(&partial, BTreeSet::new(), &no_partial),
        [vec![
            "all 6 cells partial, and partial cells are left out".to_string()
        ]]
    );
}

#[test]
fn a_near_zero_value_is_not_written_as_zero_and_partial_points_say_so() {
    assert_eq!(table_number(0.00046710905384226377), "0.00047");
    assert_eq!(table_number(0.5), "0.500");
    assert_eq!(table_number(0.0), "0.000");
    assert_eq!(
        value_text(Metric::Stat(Stat::Efficiency), 0.00046710905384226377),
        "0.00047"
    );
    assert_eq!(value_text(Metric::Stat(Stat::Efficiency), 0.9), "0.900");
    let mut cells = sweep("pytorch_direct", "balanced_2k", &[(1, 1.0), (16, 0.0004)]);
    cells.truncate(2);
    cells[1].status = CellStatus::Partial;
    fill_scaling(&mut cells);
    let state = ViewState {
        facet: None,
        ..ViewState::default()
    };
    let facets = curves(&cells, &state, Metric::Stat(Stat::Efficiency));
    let points = &facets[0].series[0].points;
    assert_eq!(points[0].table_text(XAxis::Load), "1: 1.000");
    assert_eq!(
        points[1].table_text(XAxis::Load),
        "16: 0.00040 (◐ 1 of 1 cell partial)"
    );
}
