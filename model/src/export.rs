//! What an export of a view carries so it can be read away from the app: the view described in words (metric,
//! filters, criterion, pooling, what-if toggles, snapshot, link), the plotted series as CSV under that
//! description, and a file name that says which view and snapshot it is.

use crate::explore::Facet;
use crate::metric::Metric;
use crate::schema::csv_field;
use crate::view_state::{View, ViewState};

/// The view in a few lines, for the header of an image export and the comment lines of a CSV export.
pub fn describe_view(state: &ViewState, metric: Metric, link: &str) -> Vec<String> {
    let mut layout = format!("cellscope {}: {}", state.view.name(), metric.label());
    match state.view {
        View::Curves => {
            layout.push_str(&format!(" vs N, colour by {}", state.color.name()));
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
        View::Inspector | View::Audit => {}
    }
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
    let method = if state.view == View::Compare {
        vec![format!(
            "pairs: cells agreeing on every dimension but {}, rep and run, each side the mean of its reps; \
             Δ = a − b; bootstrap 95% CI of the mean Δ ({} resamples, seed {}); two-sided Wilcoxon signed-rank, \
             Holm across the groups",
            state.compare.by.name(),
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
    let mut lines = vec![layout, format!("filters: {}", state.filter.describe())];
    lines.extend(method);
    lines.extend([
        format!("cells: {}", included.join(", ")),
        format!(
            "snapshot: {}",
            state.at.as_deref().unwrap_or("latest (not pinned)")
        ),
        format!("link: {link}"),
    ]);
    lines
}

/// A comparison as CSV: the view's description as `#` comment lines, then one row per group with its
/// statistics in full precision, its verdict and its dropped pairs with their reasons.
pub fn comparison_csv(comparison: &crate::compare::Comparison, header: &[String]) -> String {
    let spec = &comparison.spec;
    let mut out = String::new();
    for line in header {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&format!(
        "{},n_pairs,mean_delta,median_delta,ci_low,ci_high,wilcoxon_statistic,p_value,holm_p,rank_biserial,wins,losses,ties,verdict,dropped\n",
        spec.per.map_or("group", |per| per.name())
    ));
    let number = |value: Option<f64>| value.map(|value| value.to_string()).unwrap_or_default();
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
        let fields = [
            group.label(),
            group.n_pairs.to_string(),
            number(group.mean_delta),
            number(group.median_delta),
            number(group.ci.map(|ci| ci.0)),
            number(group.ci.map(|ci| ci.1)),
            number(group.wilcoxon.map(|test| test.statistic)),
            number(group.wilcoxon.and_then(|test| test.p_value)),
            number(group.holm_p),
            number(group.effect_size),
            group.wins.to_string(),
            group.losses.to_string(),
            group.ties.to_string(),
            group.verdict.describe(spec),
            dropped.join("; "),
        ];
        for (index, field) in fields.iter().enumerate() {
            if index > 0 {
                out.push(',');
            }
            csv_field(&mut out, field);
        }
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
    let facet_name = state.facet.map_or("facet", |facet| facet.name());
    out.push_str(&format!(
        "{facet_name},{},n,{},band_min,band_max,cells,series,partial_cells,ok_rows,expected_rows,pooling,breakdown\n",
        state.color.name(),
        metric.name()
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
            for point in &series.points {
                csv_field(&mut out, &title);
                out.push(',');
                csv_field(&mut out, &label);
                out.push_str(&format!(
                    ",{},{},{},{},{},{},{},{},{},",
                    point.n,
                    point.value,
                    point.min,
                    point.max,
                    point.cells,
                    point.series,
                    point.partial,
                    point.ok_rows,
                    point.expected_rows
                ));
                csv_field(&mut out, &point.pooling.describe(state.aggregation));
                out.push(',');
                csv_field(&mut out, &breakdown);
                out.push('\n');
            }
        }
    }
    out
}

/// `cellscope-curves-p95_wall_ms-1a2b3c4d-5e6f70.csv`: the view, the metric, the snapshot (first 8 characters)
/// and a short digest of the whole view state, so two different views of one snapshot never share a name.
pub fn file_name(state: &ViewState, metric: Metric, extension: &str) -> String {
    let snapshot: String = state
        .at
        .as_deref()
        .unwrap_or("latest")
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(8)
        .collect();
    format!(
        "cellscope-{}-{}-{snapshot}-{:06x}.{extension}",
        state.view.name(),
        metric.name(),
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
        let lines = describe_view(&state(), Metric::P95WallMs, "http://h/?view=curves");
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
            n: 2,
            value: 812.5,
            min: 700.0,
            max: 900.0,
            efficiency: Some(0.5),
            p95_multiplier: Some(1.5),
            cells: 18,
            series: 6,
            ok_rows: 360,
            expected_rows: 360,
            keys: Vec::new(),
            partial: 1,
            pooling: crate::pooling::Pooling {
                cells: 18,
                spans: vec![
                    (Dimension::Model, 3),
                    (Dimension::Phase, 2),
                    (Dimension::Rep, 3),
                ],
            },
        };
        let facets = vec![Facet {
            title: Some(Value::Text("long, prefill".into())),
            series: vec![Series {
                label: Value::Text("vllm".into()),
                points: vec![point],
                breakdown: crate::curve::Breakdown::Never { max_n: 32 },
                skipped_at: None,
                skipped_cells: Vec::new(),
                left_out: 0,
            }],
        }];
        let csv = series_csv(&facets, &state(), Metric::P95WallMs, &["view".into()]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "# view");
        assert_eq!(
            lines[1],
            "workload,backend,n,p95_wall_ms,band_min,band_max,cells,series,partial_cells,ok_rows,expected_rows,pooling,breakdown"
        );
        assert_eq!(
            lines[2],
            "\"long, prefill\",vllm,2,812.5,700,900,18,6,1,360,360,mean of 18 cells: 3 models × 2 phases × 3 reps,never within N ≤ 32"
        );
    }

    #[test]
    fn file_names_say_view_metric_and_snapshot_and_differ_between_views() {
        let a = state();
        let name = file_name(&a, Metric::Efficiency, "png");
        assert!(
            name.starts_with("cellscope-curves-efficiency-20260613-"),
            "{name}"
        );
        assert!(name.ends_with(".png"));
        let mut b = a.clone();
        b.select_only(Dimension::Backend, "vllm");
        assert_ne!(name, file_name(&b, Metric::Efficiency, "png"));
    }
}
