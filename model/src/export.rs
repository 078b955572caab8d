//! What an export of a view carries so it can be read away from the app: the view described in words (metric,
//! filters, criterion, pooling, what-if toggles, snapshot, link), the plotted series as CSV under that
//! description, and a file name that says which view and snapshot it is.

use crate::explore::{Facet, without_value_note};
use crate::frontier::Better;
use crate::key::Dimension;
use crate::load::LoadKind;
use crate::metric::Metric;
use crate::schema::csv_field;
use crate::view_state::{FrontierMode, View, ViewState, XAxis};

/// The view in a few lines, for the header of an image export and the comment lines of a CSV export; `load_kind`
/// is the kind of load on the curves' x axis ([`crate::explore::load_kind_on_x`]), which names it.
pub fn describe_view(
    state: &ViewState,
    metric: Metric,
    load_kind: Option<LoadKind>,
    link: &str,
) -> Vec<String> {
    let mut layout = format!(
        "cellscope {}: {}",
        state.view.name(),
        metric.label_at(load_kind)
    );
    match state.view {
        View::Curves => {
            let x = match (state.x, load_kind) {
                (XAxis::Load, Some(LoadKind::Rate)) => "offered rate (req/s)",
                (XAxis::Load, _) => "N",
                (XAxis::Metric(x), _) => x.label(),
            };
            layout.push_str(&format!(" vs {x}, colour by {}", state.color.name()));
            if let Some(facet) = state.facet {
                layout.push_str(&format!(", small multiples by {}", facet.name()));
            }
        }
        View::Matrix => layout.push_str(&format!(
            ", rows {} × columns {}, one grid per {}",
            state.rows.name(),
            state.cols.name(),
            state.grid.name()
        )),
        View::Compare => {
            let choice = &state.compare;
            let side = |side: &Option<String>| side.clone().unwrap_or_else(|| "?".into());
            layout.push_str(&format!(
                ", {} − {} by {}, {}, α = {}",
                side(&choice.a),
                side(&choice.b),
                choice.by.name(),
                choice
                    .per
                    .map_or("one group".to_string(), |per| format!("per {}", per.name())),
                choice.alpha
            ));
        }
        View::History => {
            let choice = &state.history;
            layout.push_str(&format!(
                ", change points by E-divisive means (window {}, p ≤ {}), regressed against the last {} runs \
                 within {}",
                choice.window, choice.max_pvalue, choice.k, choice.band
            ));
            if let Some(since) = &choice.since {
                layout.push_str(&format!(", runs since {since}"));
            }
        }
        View::Inspector | View::Audit => {}
    }
    let included = included_line(state);
    let method = if state.view == View::Compare {
        let repeated: Vec<&str> =
            crate::compare::repeated_dimensions(state.compare.by, state.compare.per)
                .into_iter()
                .map(Dimension::name)
                .collect();
        vec![format!(
            "pairs: one per configuration, its two sides agreeing on every dimension but {} and {}, each side \
             the mean of its cells over {}; Δ = a − b; bootstrap 95% CI of the mean Δ ({} resamples, seed {}); \
             two-sided Wilcoxon signed-rank, Holm across the groups",
            state.compare.by.name(),
            repeated.join(", "),
            repeated.join(", "),
            crate::metric::thousands(crate::paired::BOOTSTRAP_RESAMPLES as u64),
            crate::paired::BOOTSTRAP_SEED
        )]
    } else {
        vec![
            format!(
                "criterion: {} ({})",
                state.criterion.name(),
                state.criterion.describe()
            ),
            format!(
                "aggregation: {} of each series' reps, then of the series; {}",
                state.aggregation.name(),
                state.band.label()
            ),
        ]
    };
    let mut lines = vec![layout];
    if state.view == View::Curves {
        lines.extend(frontier_line(state, metric));
    }
    lines.push(format!("filters: {}", state.filter.describe()));
    lines.extend(method);
    lines.extend([included, snapshot_line(state), format!("link: {link}")]);
    lines
}

/// `cells: partial cells in, ledger exclusions applied`: which cells the view's what-if toggles let in.
fn included_line(state: &ViewState) -> String {
    let what_if = &state.what_if;
    let mut included = vec![if what_if.partial {
        "partial cells in"
    } else {
        "partial cells out"
    }];
    included.push(if what_if.excluded {
        "ledger exclusions put back"
    } else {
        "ledger exclusions applied"
    });
    if what_if.pre_refill {
        included.push("refilled cells shown pre-refill");
    }
    format!("cells: {}", included.join(", "))
}

/// `snapshot: <id>`, or that the view is not pinned to one.
fn snapshot_line(state: &ViewState) -> String {
    format!(
        "snapshot: {}",
        state.at.as_deref().unwrap_or("latest (not pinned)")
    )
}

/// The cells CSV of a view's slice: `#` lines saying which view, filters, included cells, snapshot and link it
/// was made from, then the cells table (the same columns as `cellscope cells` and `/api/cells`, which carry no
/// such lines: they are asked for by their filters).
pub fn cells_csv(cells: &[crate::summary::CellSummary], state: &ViewState, link: &str) -> String {
    let lines = [
        format!(
            "cellscope cells of the {} view: {} cell{}",
            state.view.name(),
            cells.len(),
            if cells.len() == 1 { "" } else { "s" }
        ),
        format!("filters: {}", state.filter.describe()),
        included_line(state),
        snapshot_line(state),
        format!("link: {link}"),
    ];
    let mut out = String::new();
    for line in lines {
        out.push_str("# ");
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&crate::schema::cells_to_csv(cells));
    out
}

/// A History's table as CSV under `#` lines: the History's configuration × workload × load, the view in words
/// (`lines`, from [`describe_view`]: metric, method parameters, snapshot, link), then per run its start and how
/// that is known, value, reps and their range, what changed from the run before and the change point it starts.
pub fn history_csv(series: &crate::history::HistorySeries, lines: &[String]) -> String {
    let mut out = format!("# history: {}\n", series.label);
    for line in lines {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("run,started,time_source,value,reps,low,high,changed,change_point\n");
    let number = |value: Option<f64>| value.map_or(String::new(), |value| value.to_string());
    for (index, point) in series.points.iter().enumerate() {
        let changed: Vec<String> = point
            .changed
            .iter()
            .map(|change| change.describe())
            .collect();
        let change = series
            .change_points
            .iter()
            .find(|change| change.index == index)
            .map_or(String::new(), |change| change.sentence.clone());
        let source = point.time_source.map_or("", |source| source.name());
        let fields = [
            point.run.clone(),
            point.time.clone().unwrap_or_default(),
            source.to_string(),
            number(point.value),
            point.reps.to_string(),
            number(point.low),
            number(point.high),
            changed.join("; "),
            change,
        ];
        for (position, field) in fields.iter().enumerate() {
            if position > 0 {
                out.push(',');
            }
            csv_field(&mut out, field);
        }
        out.push('\n');
    }
    out
}

/// `cellscope-cells-curves-model=mistral-7b,workload=long_prefill_8k-20260613-1a2b3c.csv`: the view, the filters
/// (`all` without any; cut short when long, the digest telling such names apart), the snapshot and a short digest
/// of the whole view state, like the figure exports.
pub fn cells_file_name(state: &ViewState) -> String {
    let safe = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '-'
                }
            })
            .collect()
    };
    let mut parts: Vec<String> = state
        .filter
        .values
        .iter()
        .map(|(dimension, values)| {
            let values: Vec<String> = values.iter().map(|value| safe(value)).collect();
            format!("{}={}", dimension.name(), values.join("+"))
        })
        .collect();
    match (state.filter.load_min, state.filter.load_max) {
        (None, None) => {}
        (low, high) => parts.push(format!(
            "load={}-{}",
            low.map(|n| n.to_string()).unwrap_or_default(),
            high.map(|n| n.to_string()).unwrap_or_default()
        )),
    }
    let mut filters = if parts.is_empty() {
        "all".to_string()
    } else {
        parts.join(",")
    };
    if filters.len() > 80 {
        filters.truncate(80);
    }
    format!(
        "cellscope-cells-{}-{filters}-{}-{:06x}.csv",
        state.view.name(),
        snapshot_part(state),
        fnv1a(state.to_query().as_bytes()) & 0xff_ffff
    )
}

/// The first 8 letters and digits of the pinned snapshot, or `latest`.
fn snapshot_part(state: &ViewState) -> String {
    state
        .at
        .as_deref()
        .unwrap_or("latest")
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(8)
        .collect()
}

/// What the curves say about the Pareto frontier: shown (and which way each axis is better), off, or asked for
/// with N on x, where it means nothing. `None` with N on x and the frontier off, as before there was one.
fn frontier_line(state: &ViewState, metric: Metric) -> Option<String> {
    let better = |metric: Metric| match Better::of(metric) {
        Better::Higher => format!("higher {}", metric.label()),
        Better::Lower => format!("lower {}", metric.label()),
    };
    match (state.x, state.frontier) {
        (XAxis::Load, FrontierMode::Off) => None,
        (XAxis::Load, _) => Some("frontier: not drawn (it needs a metric on x, not N)".into()),
        (XAxis::Metric(_), FrontierMode::Off) => {
            Some("frontier: off; points joined in load order".into())
        }
        (XAxis::Metric(x), FrontierMode::Series) => Some(format!(
            "frontier: each series' Pareto frontier drawn bold, dominated points hollow (better: {}, {}); \
             points joined in load order",
            better(x),
            better(metric)
        )),
        (XAxis::Metric(x), FrontierMode::Panel) => Some(format!(
            "frontier: each panel's Pareto frontier across its configurations drawn bold, points off it hollow \
             (better: {}, {}); points joined in load order",
            better(x),
            better(metric)
        )),
    }
}

/// A comparison as CSV: the view's description as `#` comment lines, then one row per group with its
/// statistics in full precision, its verdict and its dropped pairs with their reasons.
pub fn comparison_csv(comparison: &crate::compare::Comparison, header: &[String]) -> String {
    let spec = &comparison.spec;
    let mut out = String::new();
    for line in header.iter().chain([&comparison.pair_pooling()]) {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&format!(
        "{},n_pairs,mean_delta,median_delta,ci_low,ci_high,wilcoxon_statistic,p_value,holm_p,rank_biserial,wins,losses,ties,verdict,dropped,ratio_a_to_b\n",
        spec.per.map_or("group", |per| per.name())
    ));
    for group in &comparison.groups {
        let dropped: Vec<String> = group
            .dropped
            .iter()
            .map(|dropped| {
                format!(
                    "{}: {}",
                    crate::compare::text::coordinates(&dropped.coordinates, None),
                    dropped.describe(spec)
                )
            })
            .collect();
        let counts = |out: &mut String, counts: &[u32]| {
            for count in counts {
                out.push_str(&format!("{count},"));
            }
        };
        // Numbers are written as numbers (a negative Δ is no formula), texts through the formula guard.
        // A figure is written as a float even when it is whole (`-1.0`, `2.0`), so that a reader typing columns
        // by their values, as pandas does, types each figure column as floats whatever the data.
        let figure = |out: &mut String, value: Option<f64>| {
            if let Some(value) = value {
                out.push_str(&format!("{value:?}"));
            }
        };
        csv_field(&mut out, &group.label());
        out.push(',');
        counts(&mut out, &[group.n_pairs]);
        for value in [
            group.mean_delta,
            group.median_delta,
            group.ci.map(|ci| ci.0),
            group.ci.map(|ci| ci.1),
            group.wilcoxon.map(|test| test.statistic),
            group.wilcoxon.and_then(|test| test.p_value),
            group.holm_p,
            group.effect_size,
        ] {
            figure(&mut out, value);
            out.push(',');
        }
        counts(&mut out, &[group.wins, group.losses, group.ties]);
        csv_field(&mut out, &group.describe_verdict(spec));
        out.push(',');
        csv_field(&mut out, &dropped.join("; "));
        out.push(',');
        figure(&mut out, group.ratio);
        out.push('\n');
    }
    out
}

/// The plotted series as CSV: the view's description as `#` comment lines, then one row per point with the
/// value, its band, what it pools and how much of it is partial.
pub fn series_csv(
    facets: &[Facet],
    state: &ViewState,
    metric: Metric,
    header: &[String],
) -> String {
    let mut out = String::new();
    for line in header {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    let notes = without_value_note(facets, metric, state.x)
        .into_iter()
        .chain(crate::explore::marks_note(facets));
    for note in notes {
        out.push_str("# ");
        out.push_str(&note);
        out.push('\n');
    }
    let facet_name = state.facet.map_or("facet", |facet| facet.name());
    // With a metric on x, its value and band follow N; with the frontier shown, whether each point is on it.
    let x_metric = state.x.metric();
    let frontier = x_metric.is_some() && state.frontier.is_on();
    // Under an SLO, each row carries its series' capacity in words, as the series table shows it.
    let capacity = facets
        .iter()
        .flat_map(|facet| &facet.series)
        .any(|series| series.slo_capacity.is_some());
    out.push_str(&format!("{facet_name},{},n,", state.color.name()));
    if let Some(x) = x_metric {
        out.push_str(&format!("{},x_band_min,x_band_max,", x.name()));
    }
    out.push_str(&format!(
        "{},band_min,band_max,cells,series,partial_cells,failed_cells,reported_cells,derived_cells,ok_rows,expected_rows,pooling,breakdown{}{}\n",
        metric.name(),
        if capacity { ",slo_capacity" } else { "" },
        if frontier { ",on_frontier" } else { "" }
    ));
    for facet in facets {
        let title = facet
            .title
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        for series in &facet.series {
            let label = series.label.to_string();
            let breakdown = series.breakdown_label();
            for (index, point) in series.points.iter().enumerate() {
                csv_field(&mut out, &title);
                out.push(',');
                csv_field(&mut out, &label);
                out.push_str(&format!(
                    ",{},",
                    crate::key::DimensionValue::Load(point.load)
                ));
                if x_metric.is_some() {
                    out.push_str(&format!("{},{},{},", point.x, point.x_min, point.x_max));
                }
                out.push_str(&format!(
                    "{},{},{},{},{},{},{},{},{},{},{},",
                    point.value,
                    point.min,
                    point.max,
                    point.cells,
                    point.series,
                    point.partial,
                    point.failed,
                    point.reported,
                    point.derived,
                    point.ok_rows,
                    point.expected_rows
                ));
                csv_field(&mut out, &point.pooling.describe(state.aggregation));
                out.push(',');
                csv_field(&mut out, &breakdown);
                if capacity {
                    out.push(',');
                    csv_field(&mut out, series.slo_capacity.as_deref().unwrap_or(""));
                }
                if frontier {
                    // Empty where the series' frontier is withheld: such a point is on none.
                    out.push_str(match &series.frontier {
                        None => ",",
                        Some(_) if series.is_dominated(index) => ",false",
                        Some(_) => ",true",
                    });
                }
                out.push('\n');
            }
        }
    }
    out
}

/// `cellscope-curves-p95_wall_ms-1a2b3c4d-5e6f70.csv`: the view, the metric (`aggregate_tps-vs-p95_ttft_ms` when
/// the curves have a metric on x), the snapshot (first 8 characters) and a short digest of the whole view
/// state, so two different views of one snapshot never share a name.
pub fn file_name(state: &ViewState, metric: Metric, extension: &str) -> String {
    let snapshot = snapshot_part(state);
    let plotted = match state.x {
        XAxis::Metric(x) if state.view == View::Curves => {
            format!("{}-vs-{}", metric.name(), x.name())
        }
        _ => metric.name().to_string(),
    };
    format!(
        "cellscope-{}-{plotted}-{snapshot}-{:06x}.{extension}",
        state.view.name(),
        fnv1a(state.to_query().as_bytes()) & 0xff_ffff
    )
}

/// FNV-1a, 64 bits: a stable digest for file names (not for security).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::{Series, SeriesPoint, Value};
    use crate::key::Dimension;
    use crate::stat::Stat;

    fn state() -> ViewState {
        let mut state = ViewState {
            view: View::Curves,
            at: Some("20260613-abcdef".into()),
            ..ViewState::default()
        };
        state.select_only(Dimension::Workload, "long_prefill_8k");
        state
    }

    #[test]
    fn the_description_names_everything_that_shapes_the_figure() {
        let lines = describe_view(
            &state(),
            Metric::Stat(Stat::P95WallMs),
            None,
            "http://h/?view=curves",
        );
        assert_eq!(
            lines[0],
            "cellscope curves: p95 latency vs N, colour by backend, small multiples by workload"
        );
        assert_eq!(lines[1], "filters: workload = long_prefill_8k");
        assert_eq!(
            lines[2],
            "criterion: v1 (efficiency < 0.65 or p95 multiplier > 2)"
        );
        assert!(lines[3].contains("min–max over the cells"));
        assert_eq!(lines[5], "snapshot: 20260613-abcdef");
        assert_eq!(lines[6], "link: http://h/?view=curves");
    }

    #[test]
    fn series_csv_has_the_view_as_comments_and_one_row_per_point() {
        let point = SeriesPoint {
            load: crate::Load::Concurrency(2),
            x: 2.0,
            x_min: 2.0,
            x_max: 2.0,
            value: 812.5,
            min: 700.0,
            max: 900.0,
            efficiency: Some(0.5),
            p95_multiplier: Some(1.5),
            cells: 18,
            series: 6,
            ok_rows: 360,
            expected_rows: 360,
            partial: 1,
            failed: 2,
            reported: 2,
            derived: 0,
            pooling: crate::pooling::Pooling {
                cells: 18,
                spans: [
                    (Dimension::Model, &["a", "b", "c"][..]),
                    (Dimension::Phase, &["scaling", "ttft"][..]),
                    (Dimension::Rep, &["0", "1", "2"][..]),
                ]
                .into_iter()
                .map(|(dimension, values)| crate::pooling::Span {
                    dimension,
                    count: values.len() as u32,
                    values: values.iter().map(ToString::to_string).collect(),
                })
                .collect(),
            },
        };
        let facets = vec![Facet {
            title: Some(Value::Text("long, prefill".into())),
            frontier_steps: Vec::new(),
            series: vec![Series {
                label: Value::Text("vllm".into()),
                legend: "vllm".into(),
                badge: None,
                points: vec![point],
                breakdown: crate::curve::Breakdown::Never {
                    max: crate::Load::Concurrency(32),
                },
                skipped_at: None,
                skipped_cells: Vec::new(),
                left_out: 0,
                without_value: 0,
                frontier: None,
                frontier_withheld: None,
                slo_capacity: Some("≥ N=2 (not reached)".into()),
            }],
        }];
        let csv = series_csv(
            &facets,
            &state(),
            Metric::Stat(Stat::P95WallMs),
            &["view".into()],
        );
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "# view");
        // The point rests on 2 cells' reported figures: said once above the table, counted in its row.
        assert_eq!(
            lines[1],
            "# 1 point rests on figures the tool reported (†), not recomputed from request rows"
        );
        assert_eq!(
            lines[2],
            "workload,backend,n,p95_wall_ms,band_min,band_max,cells,series,partial_cells,failed_cells,reported_cells,derived_cells,ok_rows,expected_rows,pooling,breakdown,slo_capacity"
        );
        // The series' SLO capacity, a lower bound, keeps its ≥ and its words.
        assert_eq!(
            lines[3],
            "\"long, prefill\",vllm,2,812.5,700,900,18,6,1,2,2,0,360,360,\"mean of 18 cells: model a, b, c × phase scaling, ttft × rep 0, 1, 2\",never within N ≤ 32,≥ N=2 (not reached)"
        );
    }

    #[test]
    fn series_csv_guards_formula_like_names_and_writes_negative_values_as_numbers() {
        let point = SeriesPoint {
            load: crate::Load::Concurrency(2),
            x: 2.0,
            x_min: 2.0,
            x_max: 2.0,
            value: -0.0123,
            min: -0.02,
            max: -1.5e-3,
            efficiency: None,
            p95_multiplier: None,
            cells: 1,
            series: 1,
            ok_rows: 10,
            expected_rows: 10,
            partial: 0,
            failed: 0,
            reported: 0,
            derived: 0,
            pooling: crate::pooling::Pooling::default(),
        };
        let facets = vec![Facet {
            title: Some(Value::Text("@SUM(A1:A9)".into())),
            frontier_steps: Vec::new(),
            series: vec![Series {
                label: Value::Text("-cmd".into()),
                legend: "-cmd".into(),
                badge: None,
                points: vec![point],
                breakdown: crate::curve::Breakdown::Never {
                    max: crate::Load::Concurrency(2),
                },
                skipped_at: None,
                skipped_cells: Vec::new(),
                left_out: 0,
                without_value: 0,
                frontier: None,
                frontier_withheld: None,
                slo_capacity: None,
            }],
        }];
        let csv = series_csv(&facets, &state(), Metric::Stat(Stat::P95WallMs), &[]);
        let row = csv.lines().nth(1).expect("a row");
        assert!(
            row.starts_with("'@SUM(A1:A9),'-cmd,2,-0.0123,-0.02,-0.0015,"),
            "{row}"
        );
    }

    #[test]
    fn an_export_with_a_metric_on_x_names_it_and_the_frontier() {
        use crate::view_state::XAxis;
        let mut state = ViewState {
            x: XAxis::Metric(Metric::Stat(Stat::P95TtftMs)),
            frontier: crate::view_state::FrontierMode::Series,
            ..state()
        };
        let lines = describe_view(&state, Metric::Stat(Stat::AggregateTps), None, "http://h/");
        assert_eq!(
            lines[0],
            "cellscope curves: output tok/s vs p95 time to first token, colour by backend, small multiples by workload"
        );
        assert_eq!(
            lines[1],
            "frontier: each series' Pareto frontier drawn bold, dominated points hollow (better: lower p95 time to first token, higher output tok/s); points joined in load order"
        );
        assert_eq!(lines[2], "filters: workload = long_prefill_8k");
        let point = |n: u32, x: f64, value: f64| SeriesPoint {
            load: crate::Load::Concurrency(n),
            x,
            x_min: x - 1.0,
            x_max: x + 1.0,
            value,
            min: value,
            max: value,
            efficiency: None,
            p95_multiplier: None,
            cells: 1,
            series: 1,
            ok_rows: 10,
            expected_rows: 10,
            partial: 0,
            failed: 0,
            reported: 0,
            derived: 0,
            pooling: crate::pooling::Pooling::default(),
        };
        let facets = vec![Facet {
            title: Some(Value::Text("long_prefill_8k".into())),
            frontier_steps: Vec::new(),
            series: vec![Series {
                label: Value::Text("vllm".into()),
                legend: "vllm".into(),
                badge: None,
                points: vec![point(1, 100.0, 50.0), point(2, 90.0, 40.0)],
                breakdown: crate::curve::Breakdown::Never {
                    max: crate::Load::Concurrency(2),
                },
                skipped_at: None,
                skipped_cells: Vec::new(),
                left_out: 0,
                without_value: 2,
                frontier: Some(crate::explore::Frontier {
                    members: vec![0],
                    steps: Vec::new(),
                    across_series: false,
                }),
                frontier_withheld: None,
                slo_capacity: None,
            }],
        }];
        let csv = series_csv(&facets, &state, Metric::Stat(Stat::AggregateTps), &[]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "# 2 points without a value of p95 time to first token or output tok/s left out (never drawn as zero)"
        );
        assert_eq!(
            lines[1],
            "workload,backend,n,p95_ttft_ms,x_band_min,x_band_max,aggregate_tps,band_min,band_max,cells,series,partial_cells,failed_cells,reported_cells,derived_cells,ok_rows,expected_rows,pooling,breakdown,on_frontier"
        );
        assert_eq!(
            lines[2],
            "long_prefill_8k,vllm,1,100,99,101,50,50,50,1,1,0,0,0,0,10,10,no cells with data,never within N ≤ 2,true"
        );
        assert!(lines[3].ends_with(",false"), "{}", lines[3]);
        let name = file_name(&state, Metric::Stat(Stat::AggregateTps), "svg");
        assert!(
            name.starts_with("cellscope-curves-aggregate_tps-vs-p95_ttft_ms-20260613-"),
            "{name}"
        );
        // Frontier off: said so, and no column for it.
        state.frontier = crate::view_state::FrontierMode::Off;
        let lines = describe_view(&state, Metric::Stat(Stat::AggregateTps), None, "http://h/");
        assert_eq!(lines[1], "frontier: off; points joined in load order");
        let csv = series_csv(&facets, &state, Metric::Stat(Stat::AggregateTps), &[]);
        assert!(
            csv.lines()
                .nth(1)
                .is_some_and(|header| header.ends_with(",breakdown"))
        );
    }

    #[test]
    fn the_cells_csv_says_its_view_above_the_plain_table_and_its_name_says_view_filters_and_snapshot()
     {
        let mut state = state();
        state.select_only(Dimension::Model, "mistral-7b");
        state.filter.load_min = Some(2.into());
        state.filter.load_max = Some(16.into());
        let key: crate::CellKey =
            "20260612_212816_266127/cloud_core/scaling/vllm/mistral-7b/long_prefill_8k/n=2/rep=0"
                .parse()
                .unwrap();
        let cells = [crate::summary::CellSummary::empty(
            key,
            crate::status::CellStatus::Clean,
        )];
        let csv = cells_csv(&cells, &state, "http://h/?view=curves");
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            &lines[..5],
            [
                "# cellscope cells of the curves view: 1 cell",
                "# filters: model = mistral-7b; workload = long_prefill_8k; load 2–16",
                "# cells: partial cells in, ledger exclusions applied",
                "# snapshot: 20260613-abcdef",
                "# link: http://h/?view=curves",
            ]
        );
        // Below the comments, exactly what `cellscope cells --format csv` writes for the same cells.
        assert_eq!(
            lines[5..].join("\n") + "\n",
            crate::schema::cells_to_csv(&cells)
        );
        let name = cells_file_name(&state);
        assert!(
            name.starts_with(
                "cellscope-cells-curves-model=mistral-7b,workload=long_prefill_8k,load=2-16-20260613-"
            ),
            "{name}"
        );
        assert!(name.ends_with(".csv"), "{name}");
        let mut other = state.clone();
        other.filter.load_max = None;
        assert_ne!(cells_file_name(&other), name);
        assert!(
            cells_file_name(&ViewState::default())
                .starts_with("cellscope-cells-matrix-all-latest-"),
            "{}",
            cells_file_name(&ViewState::default())
        );
    }

    /// A group of hand-chosen figures: negative deltas and interval ends, a group named like a formula.
    fn negative_comparison() -> crate::compare::Comparison {
        use crate::compare::{CompareSpec, Comparison, Group, Verdict};
        let group = Group {
            group: Some(Value::Text("=cmd|' /C calc'!A0".into())),
            n_pairs: 6,
            mean_delta: Some(-0.0123),
            median_delta: Some(-1.5e-3),
            ci: Some((-0.02, -0.0045)),
            wilcoxon: Some(crate::paired::Wilcoxon {
                statistic: 0.0,
                rank_sum_positive: 0.0,
                rank_sum_negative: 21.0,
                p_value: Some(0.03125),
                method: crate::paired::WilcoxonMethod::Exact,
            }),
            holm_p: Some(0.03125),
            effect_size: Some(-1.0),
            ratio: None,
            wins: 0,
            losses: 6,
            ties: 0,
            verdict: Verdict::BEdge,
            pairs: Vec::new(),
            dropped: Vec::new(),
        };
        Comparison {
            spec: CompareSpec {
                by: Dimension::Backend,
                a: "vllm".into(),
                b: "-sglang".into(),
                per: Some(Dimension::Workload),
                metric: Metric::Stat(Stat::Efficiency),
                alpha: 0.05,
                slo: String::new(),
            },
            groups: vec![group],
        }
    }

    #[test]
    fn the_comparison_csv_writes_negative_figures_as_numbers_and_guards_its_texts() {
        let csv = comparison_csv(&negative_comparison(), &["view".into()]);
        let rows: Vec<&str> = csv.lines().filter(|line| !line.starts_with('#')).collect();
        let header: Vec<&str> = rows[0].split(',').collect();
        let row: Vec<&str> = rows[1].split(',').collect();
        assert_eq!(header.len(), row.len(), "{csv}");
        let field = |name: &str| row[header.iter().position(|column| *column == name).unwrap()];
        // Every figure column reads back as the number it is, as a CSV reader typing columns would take it.
        for (name, expected) in [
            ("n_pairs", 6.0),
            ("mean_delta", -0.0123),
            ("median_delta", -0.0015),
            ("ci_low", -0.02),
            ("ci_high", -0.0045),
            ("wilcoxon_statistic", 0.0),
            ("p_value", 0.03125),
            ("holm_p", 0.03125),
            ("rank_biserial", -1.0),
            ("losses", 6.0),
        ] {
            assert_eq!(
                field(name).parse::<f64>().ok(),
                Some(expected),
                "{name}: {csv}"
            );
        }
        assert_eq!(field("ratio_a_to_b"), "");
        // Whole figures are written as floats, so a column of them is still typed as floats.
        assert_eq!(field("rank_biserial"), "-1.0");
        assert_eq!(field("wilcoxon_statistic"), "0.0");
        assert_eq!(field("n_pairs"), "6");
        // The group's name and the verdict naming side b are texts a spreadsheet would run: guarded.
        assert_eq!(field("workload"), "'=cmd|' /C calc'!A0");
        assert_eq!(
            field("verdict"),
            "'-sglang edge (higher parallel efficiency)"
        );
    }

    #[test]
    fn file_names_say_view_metric_and_snapshot_and_differ_between_views() {
        let a = state();
        let name = file_name(&a, Metric::Stat(Stat::Efficiency), "png");
        assert!(
            name.starts_with("cellscope-curves-efficiency-20260613-"),
            "{name}"
        );
        assert!(name.ends_with(".png"));
        let mut b = a.clone();
        b.select_only(Dimension::Backend, "vllm");
        assert_ne!(name, file_name(&b, Metric::Stat(Stat::Efficiency), "png"));
    }
    #[test]
    fn a_history_csv_has_its_context_lines_and_one_row_per_run_with_its_change_point() {
        use crate::history::{
            HistoryChangePoint, HistoryKey, HistoryPoint, HistorySeries, TimeSource,
        };
        let cell = |run: &str| -> crate::key::CellKey {
            format!("{run}/nightly/scaling/sglang/llama3.1-8b/short_decode/n=8/rep=0")
                .parse()
                .unwrap()
        };
        let point = |run: &str, value: f64, source: Option<TimeSource>| HistoryPoint {
            run: run.into(),
            time: source.map(|_| "2026-11-12T02:40:00Z".to_string()),
            time_source: source,
            value: Some(value),
            low: Some(value - 1.0),
            high: Some(value + 1.0),
            reps: 2,
            cell: cell(run),
            excluded: false,
            changed: Vec::new(),
        };
        let series = HistorySeries {
            key: HistoryKey::of(&cell("r1")),
            label: "sglang · llama3.1-8b · short_decode · N=8".into(),
            metric: Metric::Stat(Stat::P50TtftMs),
            points: vec![
                point("r1", 208.0, None),
                point("r2", 259.0, Some(TimeSource::RunId)),
            ],
            change_points: vec![HistoryChangePoint {
                run: "r2".into(),
                time: None,
                index: 1,
                p_value: 1e-9,
                mean_before: 208.0,
                mean_after: 259.0,
                relative_change: Some(0.245),
                direction: None,
                sentence: "worse by 24.5%, since r2".into(),
            }],
            regressed: false,
            regression: None,
        };
        let csv = history_csv(&series, &["metric: p50".to_string()]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines,
            [
                "# history: sglang · llama3.1-8b · short_decode · N=8",
                "# metric: p50",
                "run,started,time_source,value,reps,low,high,changed,change_point",
                "r1,,,208,2,207,209,,",
                "r2,2026-11-12T02:40:00Z,run_id,259,2,258,260,,\"worse by 24.5%, since r2\"",
            ]
        );
    }
}
