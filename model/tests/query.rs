//! The typed query: its text form reads back as it was written, old spellings read as the new ones, `cell=`
//! names the same cell as the dimensions do, and a bad value is refused with the same words on every endpoint
//! and in a link.

use cellscope_model::Load;
use cellscope_model::compare::{CompareError, CompareQuery, parse_query};
use cellscope_model::key::{CellKey, Dimension};
use cellscope_model::metric::Metric;
use cellscope_model::query::{
    CONTRASTABLE, CellRequest, CompareChoice, Endpoint, Format, Query, QueryError, WhatIf,
};
use cellscope_model::stat::Stat;
use cellscope_model::status::CellStatus;
use cellscope_model::view_state::ViewState;
use proptest::prelude::*;

fn cell() -> CellKey {
    "20260612_212816_266127/cloud_core/scaling/sglang/meta-llama%2FLlama 3,1/long_prefill_8k/n=32/rep=1"
        .parse()
        .expect("a cell key")
}

#[test]
fn a_query_reads_back_as_it_was_written() {
    let mut query = Query {
        status: vec![CellStatus::Failed, CellStatus::Clean],
        what_if: WhatIf {
            excluded: true,
            partial: false,
            pre_refill: true,
        },
        compare: CompareChoice {
            by: Dimension::Model,
            a: Some("a b".into()),
            b: Some("c,d".into()),
            per: None,
            alpha: 0.01,
        },
        metric: Metric::Stat(Stat::P95TtftMs),
        at: Some("0123456789abcdef".into()),
        format: Some(Format::Json),
        ..Query::DEFAULT
    };
    query
        .filter
        .accept(
            Dimension::Model,
            ["meta-llama/Llama 3,1".into(), "x".into()],
        )
        .unwrap();
    query
        .filter
        .accept(Dimension::Load, ["2".into(), "4".into()])
        .unwrap();
    let text = query.to_query();
    assert_eq!(
        text,
        "by=model&a=a+b&b=c%2Cd&per=none&metric=p95_ttft_ms&alpha=0.01&model=meta-llama/Llama+3%2C1,x&load=2,4\
         &status=failed,clean&include=excluded,pre_refill&omit=partial&at=0123456789abcdef&format=json"
    );
    // The compare endpoint takes all of it but `status`.
    let without_status = Query {
        status: Vec::new(),
        ..query.clone()
    };
    assert_eq!(
        Query::parse(&without_status.to_query(), Endpoint::Compare),
        Ok(without_status)
    );
    let refused = Query::parse(&text, Endpoint::Compare).unwrap_err();
    assert!(
        matches!(refused, QueryError::Unknown { ref name, .. } if name == "status"),
        "{refused}"
    );
    assert_eq!(Query::DEFAULT.to_query(), "");
    assert_eq!(Query::parse("", Endpoint::Cells), Ok(Query::DEFAULT));
    let cell_query = Query {
        cell: Some(cell()),
        ..Query::DEFAULT
    };
    assert_eq!(
        Query::parse(&cell_query.to_query(), Endpoint::Requests),
        Ok(cell_query)
    );
}

#[test]
fn lineage_is_include_under_its_older_name() {
    for (text, pre_refill) in [
        ("lineage=pre_refill", true),
        ("include=pre_refill", true),
        ("lineage=current", false),
        ("include=refilled", false),
        ("include=current,refilled", false),
    ] {
        let query = Query::parse(text, Endpoint::Cells).unwrap();
        assert_eq!(query.what_if.pre_refill, pre_refill, "{text}");
        assert!(query.what_if.partial && !query.what_if.excluded, "{text}");
    }
    // Written under the one name.
    let query = Query::parse("lineage=pre_refill", Endpoint::Cells).unwrap();
    assert_eq!(query.to_query(), "include=pre_refill");
    // A link reads it the same way.
    let (state, ignored) = ViewState::parse_query("lineage=pre_refill");
    assert!(ignored.is_empty());
    assert!(state.what_if.pre_refill);
    // The same refusal under either name, naming the name given.
    let bad = |text: &str| Query::parse(text, Endpoint::Cells).unwrap_err().to_string();
    assert_eq!(
        bad("lineage=replaced"),
        "`lineage=replaced`: expected excluded, partial, pre_refill, refilled or current"
    );
    assert_eq!(
        bad("include=replaced"),
        "`include=replaced`: expected excluded, partial, pre_refill, refilled or current"
    );
}

#[test]
fn cell_names_the_cell_the_dimensions_name() {
    let key = cell();
    let by_cell = Query::parse(
        &cellscope_model::requests::requests_query(&key),
        Endpoint::Requests,
    )
    .unwrap()
    .cell_request()
    .unwrap();
    assert_eq!(by_cell, CellRequest::exactly(&key));
    let eight = "run=20260612_212816_266127&suite=cloud_core&phase=scaling&backend=sglang\
                 &model=meta-llama/Llama+3%2C1&workload=long_prefill_8k&n=32&rep=1";
    let by_dimensions = Query::parse(eight, Endpoint::Requests)
        .unwrap()
        .cell_request()
        .unwrap();
    assert_eq!(by_dimensions, by_cell);
    assert!(by_cell.matches(&key));
    // Without suite and backend, the dimensions name every cell that shares the rest.
    let six = Query::parse(
        "run=20260612_212816_266127&phase=scaling&model=meta-llama/Llama+3%2C1&workload=long_prefill_8k&n=32&rep=1",
        Endpoint::Requests,
    )
    .unwrap()
    .cell_request()
    .unwrap();
    assert!(six.matches(&key) && six.suite.is_none() && six.backend.is_none());
    // Both at once, a part missing, or a part given twice is refused.
    let error = |text: &str| {
        Query::parse(text, Endpoint::Requests)
            .and_then(|query| query.cell_request())
            .unwrap_err()
    };
    let both = format!("{}&run=x", cellscope_model::requests::requests_query(&key));
    assert_eq!(error(&both).code(), "bad_parameter");
    let missing = error("run=x&phase=scaling");
    assert_eq!(missing.code(), "missing_parameter");
    assert!(
        missing
            .to_string()
            .starts_with("missing model, workload, load, rep; "),
        "{missing}"
    );
    assert_eq!(
        error("run=x&phase=p&model=m&workload=w&n=1,2&rep=0").to_string(),
        "`load=1,2`: takes one value"
    );
    assert_eq!(
        error("cell=a/b").to_string(),
        "`cell=a/b`: `a/b` is not a cell (expected run/suite/phase/backend/model/workload/n=N/rep=R)"
    );
}

#[test]
fn a_bad_value_gets_the_same_refusal_on_every_endpoint_and_in_a_link() {
    let everywhere = [
        Endpoint::Index,
        Endpoint::Provenance,
        Endpoint::Cells,
        Endpoint::Compare,
    ];
    for (parameter, endpoints, in_links) in [
        (
            "rep=one",
            &[Endpoint::Cells, Endpoint::Requests, Endpoint::Compare][..],
            true,
        ),
        ("include=bogus", &[Endpoint::Cells, Endpoint::Compare], true),
        ("omit=excluded", &[Endpoint::Cells, Endpoint::Compare], true),
        ("at=a&at=b", &everywhere, true),
        (
            "format=xml",
            &[Endpoint::Index, Endpoint::Cells, Endpoint::Requests],
            false,
        ),
    ] {
        let errors: Vec<QueryError> = endpoints
            .iter()
            .map(|endpoint| Query::parse(parameter, *endpoint).unwrap_err())
            .collect();
        assert!(
            errors
                .iter()
                .all(|error| *error == errors[0] && error.code() == "bad_parameter"),
            "{parameter}: {errors:?}"
        );
        // A link that takes the parameter lists the same reason.
        let QueryError::Bad(refused) = &errors[0] else {
            panic!("{parameter}: {:?}", errors[0]);
        };
        if in_links {
            let (_, ignored) = ViewState::parse_query(parameter);
            assert_eq!(ignored.first(), Some(refused), "{parameter}");
        }
    }
    // `by` and `per` are refused in a link and on the compare endpoint for the same reason.
    let refused = Query::parse("by=n", Endpoint::Compare).unwrap_err();
    let (_, ignored) = ViewState::parse_query("by=n");
    assert_eq!(refused, QueryError::Bad(ignored[0].clone()));
    // A format an endpoint does not answer in, and a parameter it does not take.
    assert_eq!(
        Query::parse("format=csv", Endpoint::Index)
            .unwrap_err()
            .to_string(),
        "`format=csv`: /api/index is JSON only (format=json)"
    );
    let unknown = Query::parse("colour=red", Endpoint::Cells).unwrap_err();
    assert_eq!(unknown.code(), "unknown_parameter");
    assert_eq!(
        unknown.to_string(),
        "unknown parameter `colour`; accepted: run, suite, phase, backend, model, workload, load, rep, status, include, \
         omit, at, format"
    );
    assert!(matches!(
        Query::parse("status=clean", Endpoint::Index),
        Err(QueryError::Unknown { .. })
    ));
}

#[test]
fn a_comparison_is_the_same_from_text_and_from_typed_values() {
    let from_text = parse_query(&[
        ("a".into(), "vllm".into()),
        ("b".into(), "sglang".into()),
        ("per".into(), "none".into()),
        ("lineage".into(), "pre_refill".into()),
        ("n".into(), "2,4".into()),
    ])
    .unwrap();
    let mut typed = Query {
        compare: CompareChoice {
            a: Some("vllm".into()),
            b: Some("sglang".into()),
            per: None,
            ..CompareChoice::DEFAULT
        },
        ..Query::DEFAULT
    };
    typed.what_if.pre_refill = true;
    typed
        .filter
        .accept(Dimension::Load, ["2".into(), "4".into()])
        .unwrap();
    assert_eq!(CompareQuery::from_query(&typed), Ok(from_text));
    // What typed values can hold but a comparison cannot take is refused as the text's choices are.
    let by_rep = Query {
        compare: CompareChoice {
            by: Dimension::Rep,
            ..typed.compare.clone()
        },
        ..typed.clone()
    };
    assert!(
        CompareQuery::from_query(&by_rep)
            .unwrap_err()
            .to_string()
            .starts_with("`by` must be one of backend")
    );
    let breakdown = Query {
        metric: Metric::Breakdown,
        ..typed
    };
    assert!(matches!(
        CompareQuery::from_query(&breakdown),
        Err(CompareError::UnknownChoice {
            parameter: "metric",
            ..
        })
    ));
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z0-9_.-]{1,12}", "[ -~]{1,10}", any::<String>()]
        .prop_map(|text| text.trim().to_string())
        .prop_filter("non-empty after trimming", |text| !text.is_empty())
}

fn values(dimension: Dimension) -> BoxedStrategy<Vec<String>> {
    let item = if dimension.is_numeric() {
        any::<u32>().prop_map(|n| n.to_string()).boxed()
    } else {
        text().boxed()
    };
    proptest::collection::btree_set(item, 1..4)
        .prop_map(|set| set.into_iter().collect())
        .boxed()
}

/// A query the compare endpoint takes: every parameter but `status`.
fn compare_query() -> impl Strategy<Value = Query> {
    let filters =
        proptest::sample::subsequence(Dimension::ALL.to_vec(), 0..4).prop_flat_map(|dimensions| {
            dimensions
                .into_iter()
                .map(|dimension| values(dimension).prop_map(move |values| (dimension, values)))
                .collect::<Vec<_>>()
        });
    let contrastable = || proptest::sample::select(CONTRASTABLE.to_vec());
    (
        filters,
        (any::<bool>(), any::<bool>(), any::<bool>()),
        (
            contrastable(),
            proptest::option::of(text()),
            proptest::option::of(text()),
            proptest::option::of(contrastable()),
            prop_oneof![Just(0.05), 0.001f64..0.999],
        ),
        proptest::sample::select(Metric::ALL.to_vec()),
        proptest::option::of("[0-9a-f]{16}"),
        proptest::option::of(proptest::sample::select(vec![Format::Json])),
    )
        .prop_map(
            |(
                filters,
                (excluded, partial, pre_refill),
                (by, a, b, per, alpha),
                metric,
                at,
                format,
            )| {
                let mut query = Query {
                    what_if: WhatIf {
                        excluded,
                        partial,
                        pre_refill,
                    },
                    compare: CompareChoice {
                        by,
                        a,
                        b,
                        per,
                        alpha,
                    },
                    metric,
                    at,
                    format,
                    ..Query::DEFAULT
                };
                for (dimension, values) in filters {
                    query
                        .filter
                        .accept(dimension, values)
                        .expect("whole numbers for numeric dimensions");
                }
                query
            },
        )
}

proptest! {
    #[test]
    fn any_compare_query_survives_its_text(query in compare_query()) {
        let text = query.to_query();
        prop_assert_eq!(Query::parse(&text, Endpoint::Compare), Ok(query), "{}", text);
    }

    #[test]
    fn any_text_is_read_or_refused_never_a_panic(text in "[a-z_=&,%+0-9.]{0,40}") {
        for endpoint in Endpoint::ALL {
            if let Ok(query) = Query::parse(&text, endpoint) {
                // What was read writes a text that reads back as it.
                prop_assert_eq!(Query::parse(&query.to_query(), endpoint), Ok(query));
            }
        }
    }
}

#[test]
fn the_pre_refill_cells_query_is_the_typed_query_with_pre_refill_on() {
    let query = Query {
        what_if: WhatIf {
            pre_refill: true,
            ..WhatIf::DEFAULT
        },
        ..Query::DEFAULT
    };
    assert_eq!(query.to_query(), cellscope_model::query::PRE_REFILL_CELLS);
    assert_eq!(
        Query::parse(cellscope_model::query::PRE_REFILL_CELLS, Endpoint::Cells),
        Ok(query)
    );
}

#[test]
fn links_written_before_the_load_axis_reopen_the_same_view() {
    // The load was `n`, its range `n_min`/`n_max`, the matrix's load `at_n` and the curves' x `n`.
    let (old, ignored) = ViewState::parse_query(
        "view=curves&n_min=2&n_max=16&at_n=32&x=n&model=m&cell=r/s/p/b/m/w/n=16/rep=0",
    );
    assert_eq!(ignored, []);
    let (new, ignored) = ViewState::parse_query(
        "view=curves&load_min=2&load_max=16&at_load=32&x=load&model=m&cell=r/s/p/b/m/w/n=16/rep=0",
    );
    assert_eq!(ignored, []);
    assert_eq!(old, new);
    assert_eq!(old.filter.load_min.map(f64::from), Some(2.0));
    assert_eq!(old.at_load, Load::Concurrency(32));
    assert_eq!(
        old.cell.as_ref().map(|cell| cell.load),
        Some(Load::Concurrency(16))
    );
    // Written back with the new names.
    let text = old.to_query();
    assert!(text.contains("load_min=2&load_max=16"), "{text}");
    assert!(text.contains("at_load=32"), "{text}");
    assert!(
        !text.contains("n_min") && !text.contains("at_n") && !text.contains("x=n"),
        "{text}"
    );
    // A rate sweep's loads read from links too, and an API call may still say `n=`.
    let (rates, ignored) = ViewState::parse_query("at_load=rate%3D2.5&load_min=0.5");
    assert_eq!(ignored, []);
    assert_eq!(rates.at_load, Load::rate(2.5).unwrap());
    assert_eq!(ViewState::parse_query(&rates.to_query()).0, rates);
    let old_api = Query::parse("n=4,rate=inf", Endpoint::Cells).unwrap();
    let new_api = Query::parse("load=4,rate=inf", Endpoint::Cells).unwrap();
    assert_eq!(old_api, new_api);
    assert_eq!(old_api.filter.values[&Dimension::Load], ["4", "rate=inf"]);
}

#[test]
fn a_link_names_a_choice_under_any_spelling_of_its_name() {
    use cellscope_model::query::names_any;
    assert!(names_any("?view=matrix&metric=p95_wall_ms", &["metric"]));
    assert!(names_any("at_n=8", &["at_load", "at_n"]));
    // Names are decoded as every surface decodes them; a value that mentions a name is no parameter.
    assert!(names_any("?%6Detric=aggregate_tps", &["metric"]));
    assert!(!names_any("?view=curves&x=metric", &["metric"]));
    assert!(!names_any("", &["metric"]));
}
