//! Properties of the link codec: any valid view state survives `to_query` → `parse_query` unchanged and with
//! nothing ignored; any query string at all gives a valid state, and that state's own link reads back as it.

use cellscope_model::Load;
use cellscope_model::filter::LoadBound;
use cellscope_model::key::{CellKey, Dimension};
use cellscope_model::scaling::Criterion;
use cellscope_model::view_state::{
    Aggregation, AuditColumn, AuditSort, BandSpan, CompareChoice, Metric, View, ViewState, WhatIf,
    XAxis,
};
use proptest::prelude::*;

/// Text as dimension values come from CSV files: any characters, including the ones a URL treats specially.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9_.-]{1,12}",
        "[ -~]{1,10}",
        any::<String>().prop_filter("non-empty", |text| !text.is_empty()),
    ]
}

fn trimmed_text() -> impl Strategy<Value = String> {
    text()
        .prop_map(|text| text.trim().to_string())
        .prop_filter("non-empty after trimming", |text| !text.is_empty())
}

fn dimension() -> impl Strategy<Value = Dimension> {
    proptest::sample::select(Dimension::ALL.to_vec())
}

fn positive() -> impl Strategy<Value = f64> {
    prop_oneof![
        (1u32..200).prop_map(|hundredths| f64::from(hundredths) / 100.0),
        (f64::MIN_POSITIVE..1e12f64),
    ]
}

fn criterion() -> impl Strategy<Value = Criterion> {
    prop_oneof![
        Just(Criterion::V1),
        Just(Criterion::V3),
        (positive(), proptest::option::of(positive())).prop_map(
            |(efficiency_below, p95_multiplier_above)| Criterion::Custom {
                efficiency_below,
                p95_multiplier_above
            }
        ),
    ]
}

/// Every kind of load: any N, rates from tiny to unbounded, unstated.
fn load() -> impl Strategy<Value = Load> {
    prop_oneof![
        any::<u32>().prop_map(Load::Concurrency),
        (1u32..100_000).prop_map(|milli| Load::rate(f64::from(milli) / 1000.0).expect("a rate")),
        Just(Load::rate(f64::INFINITY).expect("a rate")),
        Just(Load::Unstated),
    ]
}

fn cell() -> impl Strategy<Value = CellKey> {
    (proptest::collection::vec(text(), 6), load(), any::<u32>()).prop_map(|(texts, load, rep)| {
        CellKey {
            run_id: texts[0].clone(),
            suite: texts[1].clone(),
            phase: texts[2].clone(),
            backend: texts[3].clone(),
            model: texts[4].clone(),
            workload: texts[5].clone(),
            config: Default::default(),
            load,
            rep,
        }
    })
}

fn filter_values(dimension: Dimension) -> BoxedStrategy<Vec<String>> {
    let item = if dimension == Dimension::Load {
        prop_oneof![
            any::<u32>().prop_map(|n| n.to_string()),
            load().prop_filter_map("a stated load", |load| {
                (load != Load::Unstated).then(|| load.to_string())
            }),
        ]
        .boxed()
    } else if dimension.is_numeric() {
        any::<u32>().prop_map(|n| n.to_string()).boxed()
    } else {
        trimmed_text().boxed()
    };
    proptest::collection::vec(item, 1..4)
        .prop_map(|mut values| {
            let mut seen = Vec::new();
            values.retain(|value| {
                let new = !seen.contains(value);
                seen.push(value.clone());
                new
            });
            values
        })
        .boxed()
}

fn view_state() -> impl Strategy<Value = ViewState> {
    let filters = proptest::sample::subsequence(
        Dimension::ALL
            .into_iter()
            .filter(|dimension| dimension.is_filterable())
            .collect::<Vec<_>>(),
        0..4,
    )
    .prop_flat_map(|dimensions| {
        dimensions
            .into_iter()
            .map(|dimension| filter_values(dimension).prop_map(move |values| (dimension, values)))
            .collect::<Vec<_>>()
    });
    let layout = (
        proptest::sample::select(View::ALL.to_vec()),
        proptest::sample::select(Metric::ALL.to_vec()),
        prop_oneof![
            (1u32..=1024).prop_map(Load::Concurrency),
            (1u32..10_000).prop_map(|centi| Load::rate(f64::from(centi) / 100.0).expect("a rate")),
            Just(Load::rate(f64::INFINITY).expect("a rate")),
        ],
        criterion(),
        dimension(),
        dimension(),
        dimension(),
        dimension(),
        proptest::option::of(dimension()),
        prop_oneof![Just(Aggregation::Mean), Just(Aggregation::Median)],
    );
    let rest = (
        proptest::option::of(
            (1u32..=51_200)
                .prop_map(|centi| LoadBound::new(f64::from(centi) / 100.0).expect("a bound")),
        ),
        proptest::option::of(
            (1u32..=51_200)
                .prop_map(|centi| LoadBound::new(f64::from(centi) / 100.0).expect("a bound")),
        ),
        proptest::option::of(cell()),
        (any::<bool>(), any::<bool>(), any::<bool>()),
        prop_oneof![Just(BandSpan::Cells), Just(BandSpan::Reps)],
        proptest::option::of(trimmed_text()),
        prop_oneof![Just(String::new()), text()],
        proptest::option::of((
            proptest::sample::select(AuditColumn::ALL.to_vec()),
            any::<bool>(),
        )),
        proptest::sample::select(XAxis::choices().collect::<Vec<_>>()),
        any::<bool>(),
    );
    let contrastable = || proptest::sample::select(cellscope_model::compare::CONTRASTABLE.to_vec());
    let compare = (
        contrastable(),
        proptest::option::of(trimmed_text()),
        proptest::option::of(trimmed_text()),
        proptest::option::of(contrastable()),
        prop_oneof![Just(0.05), Just(0.01), 0.001f64..0.999],
    )
        .prop_map(|(by, a, b, per, alpha)| CompareChoice {
            by,
            a,
            b,
            per,
            alpha,
        });
    (filters, layout, rest, compare).prop_map(
        |(
            filters,
            (view, metric, at_load, criterion, rows, cols, grid, color, facet, aggregation),
            (
                load_min,
                load_max,
                cell,
                (excluded, partial, pre_refill),
                band,
                at,
                query,
                sort,
                x,
                frontier,
            ),
            compare,
        )| {
            let mut state = ViewState {
                view,
                metric,
                at_load,
                criterion,
                rows,
                cols,
                grid,
                color,
                facet,
                aggregation,
                band,
                cell,
                what_if: WhatIf {
                    excluded,
                    partial,
                    pre_refill,
                },
                at,
                query,
                sort: sort.map(|(column, descending)| AuditSort { column, descending }),
                compare,
                x,
                frontier: if frontier {
                    cellscope_model::view_state::FrontierMode::Series
                } else {
                    cellscope_model::view_state::FrontierMode::Off
                },
                ..ViewState::default()
            };
            state.filter.load_min = load_min;
            state.filter.load_max = load_max;
            for (dimension, values) in filters {
                state.filter.values.insert(dimension, values);
            }
            state
        },
    )
}

/// Query strings as people and programs write them: known names with junk values, unknown names, broken
/// escapes, repeated parameters.
fn query() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        proptest::sample::select(vec![
            "view",
            "metric",
            "run",
            "suite",
            "phase",
            "backend",
            "model",
            "workload",
            "rep",
            "n",
            "n_min",
            "n_max",
            "at_n",
            "criterion",
            "eff_below",
            "p95_above",
            "rows",
            "cols",
            "grid",
            "color",
            "facet",
            "agg",
            "cell",
            "include",
            "omit",
            "q",
            "sort",
            "at",
            "x",
            "frontier",
        ])
        .prop_map(str::to_string),
        "[a-z_%+]{0,8}",
    ];
    let value = prop_oneof![
        proptest::sample::select(vec![
            "",
            "none",
            "v1",
            "v3",
            "custom",
            "NaN",
            "inf",
            "-1",
            "0",
            "0.7",
            "1e400",
            "16",
            "excluded,partial",
            "refilled",
            "-status",
            "mean",
            "median",
            "matrix",
            "n",
            "%zz",
            "a%2Cb,c",
            "r/s/p/b/m/w/n=1/rep=0",
            "+1",
            "1",
            "p95_ttft_ms",
            "aggregate_tps",
            "breakdown",
        ])
        .prop_map(str::to_string),
        "[ -~]{0,12}",
        any::<String>(),
    ];
    proptest::collection::vec((name, proptest::option::of(value)), 0..8).prop_map(|pairs| {
        pairs
            .into_iter()
            .map(|(name, value)| match value {
                Some(value) => format!("{name}={value}"),
                None => name,
            })
            .collect::<Vec<_>>()
            .join("&")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_valid_state_survives_its_link(state in view_state()) {
        prop_assert!(state.is_valid(), "{state:?}");
        let query = state.to_query();
        let (read, ignored) = ViewState::parse_query(&query);
        prop_assert!(ignored.is_empty(), "{query} ignored {ignored:?}");
        prop_assert_eq!(read, state, "{}", query);
    }

    #[test]
    fn any_query_gives_a_valid_state_whose_link_reads_back(query in query()) {
        let (state, _ignored) = ViewState::parse_query(&query);
        prop_assert!(state.is_valid(), "{query} → {state:?}");
        let (again, ignored) = ViewState::parse_query(&state.to_query());
        prop_assert!(ignored.is_empty(), "{ignored:?}");
        prop_assert_eq!(again, state);
    }
}
