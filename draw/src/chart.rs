//! Charts drawn with plotters on any backend: the page's canvas, PNG and SVG exports. Drawing returns the pixel
//! position of every point so the page can show a tooltip for the nearest one.

mod axis;
mod curves;
mod distribution;
mod labels;

pub use curves::draw_curves;
pub use distribution::{Sample, draw_cdf, draw_histogram};

use crate::header::Header;
use crate::palette;
use cellscope_model::LoadKind;
use cellscope_model::explore::{Facet, Series, value_text};
use cellscope_model::metric::Threshold;
use cellscope_model::stat::Stat;
use cellscope_model::view_state::{Aggregation, BandSpan, Metric, XAxis};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::BTreeMap;

/// A drawn point, in CSS pixels of the drawing, with what the tooltip says about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub x: f64,
    pub y: f64,
    /// The tooltip. Empty for a curve point: its text is written when it is hovered ([`curve_point_text`]), since
    /// a chart has hundreds of points, is drawn on every change, and shows one tooltip at a time.
    pub text: String,
    /// The cells behind the point (clicking opens them in the inspector); empty for a curve point, whose cells
    /// the view asks the model for when it is clicked (`point`).
    pub keys: std::sync::Arc<[cellscope_model::CellKey]>,
    /// How many cells stand behind the point.
    pub cells: usize,
    /// A curve point's facet, series and point index in the facets drawn.
    pub point: Option<[usize; 3]>,
}

/// What a curves chart shows.
pub struct CurveSpec<'a> {
    pub facets: &'a [Facet],
    pub metric: Metric,
    /// What the x axis shows: N, or a metric (each point then sits at its value of it).
    pub x: XAxis,
    /// The kind of load on x ([`cellscope_model::explore::load_kind_on_x`]): it names the axis even when no point
    /// is drawn; `None` against a metric.
    pub load_kind: Option<LoadKind>,
    /// The horizontal threshold line ([`Metric::threshold`]: 0.65 efficiency, 0.9 achieved/offered, 2.0
    /// multiplier) with its words.
    pub threshold: Option<Threshold>,
    /// The link's SLO bound on the plotted statistic ([`cellscope_model::explore::slo_line`]), drawn across.
    pub slo_line: Option<Threshold>,
    /// Series label → colour and marker.
    pub styles: &'a BTreeMap<String, ((u8, u8, u8), palette::Marker)>,
    /// Series label → skip reason shown at its end marker.
    pub skip_reason: &'a dyn Fn(&Series) -> String,
    /// Device pixels per CSS pixel (2 on a high-DPI screen); sizes scale with it.
    pub scale: f64,
    /// What each panel says inside the chart, in the order of `facets` ([`cellscope_model::explore::panel_notes`]):
    /// that its series pool different sets, that the frontier is withheld.
    pub notes: &'a [Vec<String>],
}

/// Facets per row of small multiples.
pub fn facet_columns(facets: usize) -> usize {
    facets.clamp(1, 3)
}

/// Height in CSS pixels of a chart with `facets` panels and the given width.
pub fn curves_height(facets: usize, width: f64) -> f64 {
    let columns = facet_columns(facets);
    let rows = facets.div_ceil(columns).max(1);
    let panel = (width / columns as f64 * 0.72).clamp(220.0, 380.0);
    panel * rows as f64
}

pub fn rgb((red, green, blue): (u8, u8, u8)) -> RGBColor {
    RGBColor(red, green, blue)
}

/// Where a tooltip of `size` (width, height) for the point at `point` goes inside a chart of `area` (all in CSS
/// pixels from the chart's top left): below and right of the point, flipped to its left near the right edge and
/// above it near the bottom edge, and kept inside the chart whatever its size, so it never covers what is above
/// the chart (the legend) or leaves it. Its top left corner.
pub fn tooltip_position(point: (f64, f64), size: (f64, f64), area: (f64, f64)) -> (f64, f64) {
    /// The gap between the point and the tooltip, so the point stays visible.
    const GAP: f64 = 12.0;
    let place = |at: f64, size: f64, area: f64| {
        let after = at + GAP;
        let chosen = if after + size <= area {
            after
        } else {
            at - GAP - size
        };
        chosen.min(area - size).max(0.0)
    };
    (
        place(point.0, size.0, area.0),
        place(point.1, size.1, area.1),
    )
}

/// What the view shows that a curve point's tooltip names: the metric, the x axis, and how the point was pooled.
#[derive(Clone, Copy, Debug)]
pub struct PointWords {
    pub metric: Metric,
    pub x: XAxis,
    pub aggregation: Aggregation,
    pub band: BandSpan,
}

/// The tooltip of the curve point at `[facet, series, point]` of `facets` (a [`Hit`]'s `point`), or `None` when
/// the facets drawn have no such point.
pub fn curve_point_text(
    facets: &[Facet],
    [facet, series, index]: [usize; 3],
    words: PointWords,
) -> Option<String> {
    let series = facets.get(facet)?.series.get(series)?;
    series.points.get(index)?;
    Some(point_text(series, index, words))
}

fn point_text(series: &Series, index: usize, words: PointWords) -> String {
    let point = &series.points[index];
    let metric = words.metric;
    let value = |value: Option<f64>, metric: Metric| {
        value.map_or("—".to_string(), |value| metric.format(value))
    };
    let partial = if point.partial > 0 {
        let mark = if series.frontier.is_some() {
            "◐"
        } else {
            "◐ hollow"
        };
        format!(
            "\n{mark}: {} of the cells are partial, the value rests on fewer rows than planned",
            point.partial
        )
    } else {
        String::new()
    };
    let failed = if point.failed > 0 {
        format!(
            "\n✕ crossed: {} of the cells failed, some of their requests not ok (only ok requests enter the value)",
            point.failed
        )
    } else {
        String::new()
    };
    let spread = match words.band {
        BandSpan::Cells => "over the cells",
        BandSpan::Reps => "over reps",
    };
    let band = |metric: Metric, min: f64, max: f64| {
        if point.cells > 1 {
            format!(
                " (band {}–{}, {spread})",
                metric.format(min),
                metric.format(max)
            )
        } else {
            String::new()
        }
    };
    // Against a metric, the x value is the second number that places the point.
    let x = words.x.metric().map_or_else(String::new, |x| {
        format!(
            "\n{} {}{}",
            x.label(),
            x.format(point.x),
            band(x, point.x_min, point.x_max)
        )
    });
    let frontier = match &series.frontier {
        None if series.frontier_withheld.is_some() && point.pooling.pools_series() => {
            "\non no frontier: this point pools several configurations"
        }
        None => "",
        Some(frontier) if frontier.across_series && series.is_dominated(index) => {
            "\nhollow: off the frontier (another configuration or load is better on both axes)"
        }
        Some(frontier) if frontier.across_series => {
            "\non the Pareto frontier across the panel's configurations"
        }
        Some(_) if series.is_dominated(index) => {
            "\nhollow: dominated (another load of this series is better on both axes)"
        }
        Some(_) => "\non the Pareto frontier of this series",
    };
    let origin: String = point
        .origin_lines()
        .into_iter()
        .map(|line| format!("\n{line}"))
        .collect();
    // A legend naming only what differs between the series is completed by the whole configuration.
    let label = series.label.to_string();
    let whole = if label == series.legend {
        String::new()
    } else {
        format!("\nconfiguration {label}")
    };
    format!(
        "{} · {}{whole}\n{} {}{}{x}{frontier}\n{}\nefficiency {} · p95× {}\nok rows {}/{} expected{partial}{failed}{origin}",
        series.legend,
        point.load.label(),
        metric.label_at(Some(point.load.kind())),
        value_text(metric, point.value),
        band(metric, point.min, point.max),
        point.pooling.describe(words.aggregation),
        value(point.efficiency, Metric::Stat(Stat::Efficiency)),
        value(point.p95_multiplier, Metric::Stat(Stat::P95Multiplier)),
        point.ok_rows,
        point.expected_rows
    )
}

/// What an exported image carries above the chart: the view in words and the legend.
pub struct ExportFrame<'a> {
    pub lines: &'a [String],
}

/// Draws the curves with the export frame (description lines and legend) above them.
pub fn draw_export<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    spec: &CurveSpec<'_>,
    frame: &ExportFrame<'_>,
) -> Result<Vec<Hit>, String> {
    let legend: Vec<(String, (u8, u8, u8), palette::Marker)> = spec
        .styles
        .iter()
        .map(|(label, (color, marker))| (label.clone(), *color, *marker))
        .collect();
    let chart = draw_frame(root, frame.lines, &legend, spec.scale)?;
    draw_curves(&chart, spec)
}

/// Draws an export's frame (the description lines wrapped to the image's width, then a legend of markers in
/// their colours, left to right in as many rows as it needs) and returns the area below it, where the chart goes.
pub fn draw_frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    lines: &[String],
    legend: &[(String, (u8, u8, u8), palette::Marker)],
    scale: f64,
) -> Result<DrawingArea<DB, Shift>, String> {
    let px = |value: f64| (value * scale).round() as i32;
    root.fill(&WHITE).map_err(|error| error.to_string())?;
    let width = f64::from(root.dim_in_pixel().0) / scale;
    let labels: Vec<&str> = legend.iter().map(|(label, ..)| label.as_str()).collect();
    let header = Header::layout(lines, &labels, width);
    let (top, chart) = root.split_vertically(px(header.height));
    for (line, size, y) in &header.lines {
        top.draw(&Text::new(
            line.clone(),
            (px(crate::header::MARGIN), px(*y)),
            ("sans-serif", px(*size))
                .into_font()
                .color(&RGBColor(30, 30, 30)),
        ))
        .map_err(|error| error.to_string())?;
    }
    for ((label, color, marker), (x, y)) in legend.iter().zip(&header.legend) {
        let (x, y) = (px(*x), px(*y));
        let color = rgb(*color);
        let at = (x + px(5.0), y);
        let size = px(4.0);
        match marker {
            palette::Marker::Circle => top.draw(&Circle::new(at, size, color.filled())),
            palette::Marker::Square => top.draw(&Rectangle::new(
                [(at.0 - size, at.1 - size), (at.0 + size, at.1 + size)],
                color.filled(),
            )),
            palette::Marker::Triangle => {
                top.draw(&TriangleMarker::new(at, size + 1, color.filled()))
            }
        }
        .map_err(|error| error.to_string())?;
        top.draw(&Text::new(
            label.clone(),
            (x + px(14.0), y),
            ("sans-serif", px(11.0))
                .into_font()
                .color(&RGBColor(30, 30, 30))
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(|error| error.to_string())?;
    }
    Ok(chart)
}

/// CSS pixels above the chart in an export `width` CSS pixels wide with `lines` of description and a legend of
/// `legend` labels ([`Header::layout`]).
pub fn export_header_height(lines: &[String], legend: &[&str], width: f64) -> f64 {
    Header::layout(lines, legend, width).height
}

/// The colour and marker of each series of `facets`, keyed by its legend: its value's position among all values
/// of the coloured dimension in the data (`all_values`, in the index's order), so a backend keeps its look
/// across views; values the list lacks take distinct looks after them.
pub fn series_styles(
    facets: &[Facet],
    all_values: &[String],
) -> BTreeMap<String, ((u8, u8, u8), palette::Marker)> {
    let mut unknown: Vec<String> = Vec::new();
    cellscope_model::order::btree_map(facets.iter().flat_map(|facet| &facet.series).map(|series| {
        let value = series.label.to_string();
        // A value the data's list lacks (a configuration, which is no listed dimension) still gets a look of
        // its own, after every listed value's.
        let position = match all_values.iter().position(|known| *known == value) {
            Some(position) => position,
            None => {
                let place = unknown
                    .iter()
                    .position(|seen| *seen == value)
                    .unwrap_or_else(|| {
                        unknown.push(value.clone());
                        unknown.len() - 1
                    });
                all_values.len() + place
            }
        };
        (series.legend.clone(), palette::style(position))
    }))
}

#[cfg(test)]
mod tests {
    use super::axis::{Axis, tick_label};
    use super::labels::{LabelPlacer, Rect, text_width};
    use super::*;
    use cellscope_model::Criterion;
    use cellscope_model::explore::{SeriesPoint, Value};

    fn point(n: u32, value: f64) -> SeriesPoint {
        SeriesPoint {
            load: cellscope_model::Load::Concurrency(n),
            x: f64::from(n),
            x_min: f64::from(n),
            x_max: f64::from(n),
            value,
            min: value - 0.02,
            max: value + 0.02,
            efficiency: Some(value),
            p95_multiplier: Some(1.0 / value),
            cells: 3,
            series: 1,
            ok_rows: 36,
            expected_rows: 36,
            partial: 0,
            failed: 0,
            reported: 0,
            derived: 0,
            pooling: cellscope_model::pooling::Pooling::default(),
        }
    }

    /// The curves drawn to SVG against N (with the export frame when given), at the 0.65 threshold, and their
    /// hits.
    fn svg_of(
        facets: &[Facet],
        styles: &BTreeMap<String, ((u8, u8, u8), palette::Marker)>,
        reason: &dyn Fn(&Series) -> String,
        metric: Metric,
        size: (u32, u32),
        frame: Option<&ExportFrame<'_>>,
    ) -> (String, Vec<Hit>) {
        svg_against(facets, styles, reason, (XAxis::Load, metric), size, frame)
    }

    /// The curves drawn to SVG with `x` on the x axis and `metric` plotted.
    fn svg_against(
        facets: &[Facet],
        styles: &BTreeMap<String, ((u8, u8, u8), palette::Marker)>,
        reason: &dyn Fn(&Series) -> String,
        (x, metric): (XAxis, Metric),
        size: (u32, u32),
        frame: Option<&ExportFrame<'_>>,
    ) -> (String, Vec<Hit>) {
        svg_with_notes(facets, styles, reason, (x, metric), size, frame, &[])
    }

    /// [`svg_against`] with notes inside the panels.
    fn svg_with_notes(
        facets: &[Facet],
        styles: &BTreeMap<String, ((u8, u8, u8), palette::Marker)>,
        reason: &dyn Fn(&Series) -> String,
        (x, metric): (XAxis, Metric),
        size: (u32, u32),
        frame: Option<&ExportFrame<'_>>,
        notes: &[Vec<String>],
    ) -> (String, Vec<Hit>) {
        let kind = (x == XAxis::Load).then(|| kind_of(facets));
        let lines = (kind, metric.threshold(&Criterion::V1, kind), None);
        svg_drawn(
            facets,
            styles,
            reason,
            (x, metric),
            size,
            frame,
            notes,
            lines,
        )
    }

    /// The kind of load of the facets' first point (concurrency without one).
    fn kind_of(facets: &[Facet]) -> LoadKind {
        facets
            .iter()
            .flat_map(|facet| &facet.series)
            .flat_map(|series| &series.points)
            .map(|point| point.load.kind())
            .next()
            .unwrap_or(LoadKind::Concurrency)
    }

    /// The curves drawn to SVG with everything a spec says: the kind of load on x, the threshold and the SLO's
    /// line.
    #[allow(clippy::too_many_arguments)]
    fn svg_drawn(
        facets: &[Facet],
        styles: &BTreeMap<String, ((u8, u8, u8), palette::Marker)>,
        reason: &dyn Fn(&Series) -> String,
        (x, metric): (XAxis, Metric),
        size: (u32, u32),
        frame: Option<&ExportFrame<'_>>,
        notes: &[Vec<String>],
        (load_kind, threshold, slo_line): (Option<LoadKind>, Option<Threshold>, Option<Threshold>),
    ) -> (String, Vec<Hit>) {
        let mut svg = String::new();
        let hits = {
            let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
            let spec = CurveSpec {
                facets,
                metric,
                x,
                load_kind,
                threshold,
                slo_line,
                styles,
                skip_reason: reason,
                scale: 1.0,
                notes,
            };
            match frame {
                Some(frame) => draw_export(&root, &spec, frame),
                None => draw_curves(&root, &spec),
            }
            .unwrap()
        };
        (svg, hits)
    }

    #[test]
    fn curves_draw_to_svg_with_hits_for_every_point_and_the_skip_marker() {
        let series = Series {
            label: Value::Text("pytorch_direct".into()),
            legend: "pytorch_direct".into(),
            badge: None,
            points: vec![point(1, 1.0), point(2, 0.5), point(4, 0.3), point(8, 0.1)],
            breakdown: cellscope_model::curve::Breakdown::At {
                load: cellscope_model::Load::Concurrency(2),
            },
            skipped_at: Some(cellscope_model::Load::Concurrency(16)),
            skipped_cells: Vec::new(),
            left_out: 0,
            without_value: 0,
            frontier: None,
            frontier_withheld: None,
            slo_capacity: None,
        };
        let facets = vec![Facet {
            title: Some(Value::Text("long_decode".into())),
            frontier_steps: Vec::new(),
            series: vec![series],
        }];
        let styles = series_styles(&facets, &["pytorch_direct".to_string()]);
        let reason = |_: &Series| "hang".to_string();
        for metric in [
            Metric::Stat(Stat::Efficiency),
            Metric::Stat(Stat::P95Multiplier),
            Metric::Stat(Stat::P95WallMs),
        ] {
            let (svg, hits) = svg_of(&facets, &styles, &reason, metric, (800, 400), None);
            assert_eq!(hits.len(), 5, "four points and the skip marker");
            assert!(svg.contains("skipped: hang"));
            assert!(svg.contains("N*=2"));
            let texts: Vec<&str> = svg.lines().map(str::trim).collect();
            if metric == Metric::Stat(Stat::P95Multiplier) {
                // Values 0.08–1.02 (band included): ticks at powers of two, 0.12× to 2×.
                for tick in ["0.12×", "0.25×", "0.5×", "1×", "2×"] {
                    assert!(texts.contains(&tick), "{tick} missing");
                }
            }
            if metric == Metric::Stat(Stat::P95WallMs) {
                for tick in ["0.1 ms", "0.2 ms", "0.5 ms", "1 ms"] {
                    assert!(texts.contains(&tick), "{tick} missing");
                }
            }
        }
    }

    #[test]
    fn every_series_drawn_has_a_look_of_its_own_listed_or_not() {
        let series = |label: &str| Series {
            label: Value::Text(label.into()),
            legend: label.into(),
            badge: None,
            points: vec![point(1, 1.0)],
            breakdown: cellscope_model::curve::Breakdown::Never {
                max: cellscope_model::Load::Concurrency(1),
            },
            skipped_at: None,
            skipped_cells: Vec::new(),
            left_out: 0,
            without_value: 0,
            frontier: None,
            frontier_withheld: None,
            slo_capacity: None,
        };
        // Two listed engines and two values the data's list lacks (configurations are no listed dimension).
        let facets = vec![Facet {
            title: None,
            frontier_steps: Vec::new(),
            series: ["sglang", "vllm", "sglang · tp 4", "vllm · tp 8"]
                .into_iter()
                .map(series)
                .collect(),
        }];
        let styles = series_styles(&facets, &["sglang".into(), "trtllm".into(), "vllm".into()]);
        assert_eq!(styles["sglang"], palette::style(0));
        assert_eq!(styles["vllm"], palette::style(2));
        let looks: Vec<_> = styles.values().collect();
        for (index, look) in looks.iter().enumerate() {
            assert!(!looks[index + 1..].contains(look), "{styles:?}");
        }
    }

    #[test]
    fn an_export_carries_the_view_and_the_legend() {
        let facets = vec![Facet {
            title: None,
            frontier_steps: Vec::new(),
            series: vec![Series {
                label: Value::Text("vllm".into()),
                legend: "vllm".into(),
                badge: None,
                points: vec![point(1, 1.0), point(2, 0.5)],
                breakdown: cellscope_model::curve::Breakdown::At {
                    load: cellscope_model::Load::Concurrency(2),
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
        let styles = series_styles(&facets, &["sglang".into(), "vllm".into()]);
        let reason = |_: &Series| String::new();
        let lines = vec![
            "cellscope curves: parallel efficiency vs N, colour by backend".to_string(),
            "filters: workload = long_decode".to_string(),
            "snapshot: 1a2b3c4d".to_string(),
            "link: http://127.0.0.1:8080/?view=curves".to_string(),
        ];
        let frame = ExportFrame { lines: &lines };
        let (svg, _) = svg_of(
            &facets,
            &styles,
            &reason,
            Metric::Stat(Stat::Efficiency),
            (800, 500),
            Some(&frame),
        );
        let texts: Vec<&str> = svg.lines().map(str::trim).collect();
        for line in &lines {
            assert!(texts.contains(&line.as_str()), "{line} missing");
        }
        // The legend names the series, in its colour (vllm is the second backend: Okabe–Ito orange).
        assert!(texts.contains(&"vllm"));
        assert!(
            svg.contains("#E69F00"),
            "the legend marker in vllm's colour"
        );
    }

    #[test]
    fn against_a_metric_the_frontier_is_drawn_and_dominated_points_say_so() {
        // x = p95 TTFT, y = throughput: N=4 (200 ms, 85) is beaten by N=2 (120 ms, 90).
        let placed = [
            (1, 100.0, 50.0),
            (2, 120.0, 90.0),
            (4, 200.0, 85.0),
            (8, 400.0, 160.0),
        ];
        let points: Vec<SeriesPoint> = placed
            .iter()
            .map(|(n, x, y)| SeriesPoint {
                x: *x,
                x_min: x - 5.0,
                x_max: x + 5.0,
                ..point(*n, *y)
            })
            .collect();
        let steps = [
            (100.0, 50.0),
            (120.0, 50.0),
            (120.0, 90.0),
            (400.0, 90.0),
            (400.0, 160.0),
        ];
        let series = Series {
            label: Value::Text("vllm".into()),
            legend: "vllm".into(),
            badge: None,
            points,
            breakdown: cellscope_model::curve::Breakdown::Never {
                max: cellscope_model::Load::Concurrency(8),
            },
            skipped_at: Some(cellscope_model::Load::Concurrency(16)),
            skipped_cells: Vec::new(),
            left_out: 0,
            without_value: 0,
            frontier: Some(cellscope_model::explore::Frontier {
                members: vec![0, 1, 3],
                steps: steps.to_vec(),
                across_series: false,
            }),
            frontier_withheld: None,
            slo_capacity: None,
        };
        let facets = vec![Facet {
            title: None,
            frontier_steps: Vec::new(),
            series: vec![series],
        }];
        let styles = series_styles(&facets, &["vllm".to_string()]);
        let reason = |_: &Series| "hang".to_string();
        let (svg, hits) = svg_against(
            &facets,
            &styles,
            &reason,
            (
                XAxis::Metric(Metric::Stat(Stat::P95TtftMs)),
                Metric::Stat(Stat::AggregateTps),
            ),
            (900, 420),
            None,
        );
        let texts: Vec<&str> = svg.lines().map(str::trim).collect();
        for text in ["p95 time to first token", "output tok/s", "N=1", "N=8"] {
            assert!(texts.contains(&text), "{text} missing");
        }
        // The x axis is a log time axis ticked by hand; the skipped end stands beside the last point.
        for tick in ["100 ms", "200 ms"] {
            assert!(texts.contains(&tick), "{tick} missing");
        }
        assert!(svg.contains("skipped at N=16: hang"));
        assert_eq!(hits.len(), 5, "four points and the skip marker");
        // Points are placed left to right by TTFT; N=4 sits right of N=2 and is dominated.
        // A curve point's tooltip is written on demand from the facets drawn and the point's place in them.
        let words = PointWords {
            metric: Metric::Stat(Stat::AggregateTps),
            x: XAxis::Metric(Metric::Stat(Stat::P95TtftMs)),
            aggregation: Aggregation::Mean,
            band: BandSpan::Cells,
        };
        let text_of = |hit: &Hit| {
            hit.point
                .and_then(|at| curve_point_text(&facets, at, words))
                .unwrap_or_else(|| hit.text.clone())
        };
        assert!(
            hits.iter()
                .all(|hit| hit.point.is_none() || hit.text.is_empty())
        );
        let at = |n: u32| {
            hits.iter()
                .find(|hit| text_of(hit).starts_with(&format!("vllm · N={n}\n")))
                .unwrap()
        };
        assert!(at(1).x < at(2).x && at(2).x < at(4).x && at(4).x < at(8).x);
        assert!(
            text_of(at(4)).contains("hollow: dominated"),
            "{}",
            text_of(at(4))
        );
        assert!(
            text_of(at(2)).contains("on the Pareto frontier"),
            "{}",
            text_of(at(2))
        );
        assert!(
            text_of(at(2)).contains("p95 time to first token 120 ms"),
            "{}",
            text_of(at(2))
        );
        assert_eq!(curve_point_text(&facets, [0, 0, 4], words), None);
        assert_eq!(curve_point_text(&facets, [1, 0, 0], words), None);
        // The frontier is one bold polyline through the five corners of its staircase.
        assert!(svg.contains(r#"stroke-width="4""#), "a bold line");
    }

    #[test]
    fn log_axes_tick_at_values_a_reader_can_name() {
        let multiples = Axis::for_metric(Metric::Stat(Stat::P95Multiplier), 1.0, 1446.67);
        let ticks: Vec<String> = multiples
            .log_ticks(Metric::Stat(Stat::P95Multiplier))
            .into_iter()
            .map(|tick| tick_label(Metric::Stat(Stat::P95Multiplier), tick))
            .collect();
        // 1× to 1024× is eleven powers of two: every other one is kept, never more than nine.
        assert_eq!(ticks, ["1×", "4×", "16×", "64×", "256×", "1024×"]);
        let times = Axis::for_metric(Metric::Stat(Stat::P95WallMs), 420.0, 9_500.0);
        let ticks: Vec<String> = times
            .log_ticks(Metric::Stat(Stat::P95WallMs))
            .into_iter()
            .map(|tick| tick_label(Metric::Stat(Stat::P95WallMs), tick))
            .collect();
        assert_eq!(ticks, ["500 ms", "1 s", "2 s", "5 s", "10 s"]);
        assert_eq!(
            tick_label(Metric::Stat(Stat::P95WallMs), 200_000.0),
            "200 s"
        );
        assert!(
            Axis::for_metric(Metric::Stat(Stat::Efficiency), 0.1, 0.9)
                .log_ticks(Metric::Stat(Stat::Efficiency))
                .is_empty()
        );
    }

    /// Every text of an SVG drawing with its box as the chart estimates text (backend pixels), from the
    /// `x`, `y`, `text-anchor`, `dy` and `font-size` plotters writes.
    fn text_boxes(svg: &str) -> Vec<(String, Rect)> {
        let attribute = |tag: &str, name: &str| -> Option<String> {
            let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
            Some(tag[start..].split('"').next()?.to_string())
        };
        let mut boxes = Vec::new();
        let mut rest = svg;
        while let Some(start) = rest.find("<text") {
            let tag_end = start + rest[start..].find('>').unwrap();
            let tag = &rest[start..tag_end];
            let close = tag_end + rest[tag_end..].find("</text>").unwrap();
            let text = rest[tag_end + 1..close].trim().to_string();
            rest = &rest[close..];
            let number = |name: &str| attribute(tag, name).and_then(|v| v.parse::<f64>().ok());
            let (Some(x), Some(y), Some(size)) = (number("x"), number("y"), number("font-size"))
            else {
                continue;
            };
            if attribute(tag, "transform").is_some() {
                // The rotated y-axis description stands apart, left of the ticks.
                continue;
            }
            // Plotters writes font sizes in points (px × 0.806); the chart places text in pixels.
            let size = (size / 0.806).round() as i32;
            let width = text_width(&text, size);
            let left = match attribute(tag, "text-anchor").as_deref() {
                Some("middle") => x as i32 - width / 2,
                Some("end") => x as i32 - width,
                _ => x as i32,
            };
            let dy = attribute(tag, "dy").unwrap_or_default();
            // `dy` moves the text so that y is its top (0.76em), centre (0.5ex) or baseline (none).
            let top = if dy.ends_with("em") {
                y as i32
            } else if dy.ends_with("ex") {
                y as i32 - size / 2
            } else {
                y as i32 - size
            };
            boxes.push((text, (left, top, left + width, top + size)));
        }
        boxes
    }

    #[test]
    fn replaced_rows_get_their_own_axes_and_ticks_read_cleanly_inside_the_chart() {
        // 300 current rows between 1,000 and 1,300 ms; 320 replaced rows that all timed out near 30 s.
        let current: Vec<f64> = (0..300).map(|index| 1000.0 + f64::from(index)).collect();
        let replaced = vec![30_000.0; 320];
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (540, 260)).into_drawing_area();
            draw_histogram(
                &root,
                "request latency histogram",
                &[("wall (current)", &current, (0, 114, 178))],
                Some(("wall (replaced)", &replaced, (213, 94, 0))),
                1.0,
            )
            .unwrap();
        }
        let boxes = text_boxes(&svg);
        let texts: Vec<&str> = boxes.iter().map(|(text, _)| text.as_str()).collect();
        assert!(texts.contains(&"replaced: 320 rows"), "{texts:?}");
        // The current rows keep an axis of their own range: no tick of theirs reaches the replaced 30 s.
        let main: Vec<f64> = boxes
            .iter()
            .filter(|(_, rect)| rect.0 < 300)
            .filter_map(|(text, _)| text.replace(',', "").parse::<f64>().ok())
            .collect();
        assert!(
            main.iter().any(|tick| (1000.0..=1300.0).contains(tick)),
            "{main:?}"
        );
        assert!(main.iter().all(|tick| *tick < 5000.0), "{main:?}");
        for (text, rect) in &boxes {
            // No float noise in a tick, and every label inside the image.
            assert!(
                !text.contains("0000000") && !text.contains("9999999"),
                "{text}"
            );
            assert!(rect.0 >= 0 && rect.2 <= 540, "{text} {rect:?} is cut off");
        }
        // A CDF's x ticks over an awkward range: round values, the last one inside.
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (540, 260)).into_drawing_area();
            let values = [0.1, 0.2, 0.30000000000000004, 1199.9999999998];
            draw_cdf(
                &root,
                "request latency CDF",
                &[("wall (current)", &values, (0, 114, 178))],
                &[],
                1.0,
            )
            .unwrap();
        }
        for (text, rect) in text_boxes(&svg) {
            assert!(
                !text.contains("0000000") && !text.contains("9999999"),
                "{text}"
            );
            assert!(rect.0 >= 0 && rect.2 <= 540, "{text} {rect:?} is cut off");
        }
    }

    #[test]
    fn no_label_covers_a_point_of_any_series() {
        // Two series against a metric whose points interleave: each point's label (N=…, the breakdown ring's
        // N*=…) wants the spot where the other series has a point.
        let series = |label: &str, shift: f64| Series {
            label: Value::Text(label.into()),
            legend: label.into(),
            badge: None,
            points: [
                (1, 100.0, 50.0),
                (2, 110.0, 52.0),
                (4, 120.0, 54.0),
                (8, 130.0, 56.0),
            ]
            .into_iter()
            .map(|(n, x, y)| SeriesPoint {
                x: x + shift,
                x_min: x + shift,
                x_max: x + shift,
                ..point(n, y + shift / 10.0)
            })
            .collect(),
            breakdown: cellscope_model::curve::Breakdown::At {
                load: cellscope_model::Load::Concurrency(4),
            },
            skipped_at: None,
            skipped_cells: Vec::new(),
            left_out: 0,
            without_value: 0,
            frontier: None,
            frontier_withheld: None,
            slo_capacity: None,
        };
        let facets = vec![Facet {
            title: None,
            frontier_steps: Vec::new(),
            series: vec![series("tp 4", 0.0), series("tp 8", 6.0)],
        }];
        let styles = series_styles(&facets, &[]);
        let reason = |_: &Series| String::new();
        let (svg, _) = svg_against(
            &facets,
            &styles,
            &reason,
            (
                XAxis::Metric(Metric::Stat(Stat::P95TtftMs)),
                Metric::Stat(Stat::AggregateTps),
            ),
            (420, 300),
            None,
        );
        let attribute = |tag: &str, name: &str| -> Option<f64> {
            let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
            tag[start..].split('"').next()?.parse().ok()
        };
        let markers: Vec<Rect> = svg
            .split("<circle")
            .skip(1)
            .filter_map(|tag| {
                let (x, y, r) = (
                    attribute(tag, "cx")?,
                    attribute(tag, "cy")?,
                    attribute(tag, "r")?,
                );
                Some((
                    (x - r) as i32,
                    (y - r) as i32,
                    (x + r) as i32,
                    (y + r) as i32,
                ))
            })
            .collect();
        assert!(markers.len() >= 8, "{} markers", markers.len());
        let overlaps = |a: &Rect, b: &Rect| a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
        let labels: Vec<(String, Rect)> = text_boxes(&svg)
            .into_iter()
            .filter(|(text, _)| text.starts_with("N"))
            .collect();
        assert!(!labels.is_empty(), "no point label drawn");
        for (text, rect) in &labels {
            for marker in &markers {
                assert!(
                    !overlaps(rect, marker),
                    "{text:?} {rect:?} covers a point at {marker:?}"
                );
            }
        }
    }

    #[test]
    fn crowded_labels_titles_and_notes_never_overlap() {
        // Four series breaking down at the same N and ending at the same skipped N with the same value, in
        // panels titled by long run ids, with a partial point and a note: every label wants the same spot.
        let series = |label: &str| Series {
            label: Value::Text(label.into()),
            legend: label.into(),
            badge: None,
            points: vec![
                point(1, 1.0),
                point(2, 0.5),
                point(4, 0.3),
                SeriesPoint {
                    partial: 1,
                    ..point(8, 0.0004)
                },
            ],
            breakdown: cellscope_model::curve::Breakdown::At {
                load: cellscope_model::Load::Concurrency(2),
            },
            skipped_at: Some(cellscope_model::Load::Concurrency(16)),
            skipped_cells: Vec::new(),
            left_out: 0,
            without_value: 0,
            frontier: None,
            frontier_withheld: None,
            slo_capacity: None,
        };
        let labels = ["vllm", "sglang", "tgi", "pytorch_direct"];
        let facets: Vec<Facet> = [
            "external/aiperf/qwen2.5-7b-long_prefill_8k/trial_0001",
            "20260612_204254_036590_with_a_long_suffix",
            "20260612_212816_266127_with_a_long_suffix",
        ]
        .into_iter()
        .map(|title| Facet {
            title: Some(Value::Text(title.into())),
            frontier_steps: Vec::new(),
            series: labels.iter().map(|label| series(label)).collect(),
        })
        .collect();
        let styles = series_styles(&facets, &[]);
        let reason = |_: &Series| "hang: the server stopped answering".to_string();
        let notes = vec![
            vec!["⚠ series pool different model sets: pytorch_direct 3 models, sglang 4, tgi 2, vllm 4".to_string()];
            3
        ];
        let (svg, _) = svg_with_notes(
            &facets,
            &styles,
            &reason,
            (XAxis::Load, Metric::Stat(Stat::Efficiency)),
            (900, 300),
            None,
            &notes,
        );
        let boxes = text_boxes(&svg);
        let overlaps = |a: &Rect, b: &Rect| a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
        for (index, (text, rect)) in boxes.iter().enumerate() {
            for (other, other_rect) in &boxes[index + 1..] {
                assert!(
                    !overlaps(rect, other_rect),
                    "{text:?} {rect:?} overlaps {other:?} {other_rect:?}"
                );
            }
        }
        let texts: Vec<&str> = boxes.iter().map(|(text, _)| text.as_str()).collect();
        assert!(
            texts
                .iter()
                .any(|text| text.starts_with("⚠ series pool different model set"))
        );
        assert!(texts.iter().any(|text| text.starts_with("N*=2")));
        assert!(texts.iter().any(|text| text.starts_with("skipped: hang")));
        // The partial point stands hollow at its value, which is written beside it, not as zero.
        assert!(texts.contains(&"◐ 0.00040"), "{texts:?}");
        // Run ids too long for a panel are shortened in the middle, each within its own panel.
        assert!(
            texts
                .iter()
                .any(|text| text.starts_with("external/") && text.contains('…'))
        );
    }

    #[test]
    fn a_panel_without_points_says_why_in_its_middle_whole() {
        let series = |label: &str, points: Vec<SeriesPoint>| Series {
            label: Value::Text(label.into()),
            legend: label.into(),
            badge: None,
            points,
            breakdown: cellscope_model::curve::Breakdown::NoData,
            skipped_at: None,
            skipped_cells: Vec::new(),
            left_out: 0,
            without_value: 0,
            frontier: None,
            frontier_withheld: None,
            slo_capacity: None,
        };
        let facets = vec![
            Facet {
                title: Some(Value::Text("sglang".into())),
                frontier_steps: Vec::new(),
                series: vec![series("mistral-7b", Vec::new())],
            },
            Facet {
                title: Some(Value::Text("vllm".into())),
                frontier_steps: Vec::new(),
                series: vec![series("mistral-7b", vec![point(1, 1.0), point(2, 0.5)])],
            },
        ];
        let why = "all 36 cells excluded by the ledger (mistral-long-prefill-tokenizer)";
        let notes = vec![vec![why.to_string()], Vec::new()];
        let styles = series_styles(&facets, &[]);
        let reason = |_: &Series| String::new();
        let (svg, _) = svg_with_notes(
            &facets,
            &styles,
            &reason,
            (XAxis::Load, Metric::Stat(Stat::Efficiency)),
            (700, 300),
            None,
            &notes,
        );
        let boxes = text_boxes(&svg);
        // The first panel's plot spans about x 72–336 and y 30–260: the reason's lines sit in its middle band.
        let lines: Vec<&(String, Rect)> = boxes
            .iter()
            .filter(|(text, _)| {
                why.contains(text.as_str()) && text.chars().any(char::is_alphabetic)
            })
            .collect();
        let said: Vec<&str> = lines.iter().map(|(text, _)| text.as_str()).collect();
        assert_eq!(said.join(" "), why, "said whole, over lines: {said:?}");
        for (text, rect) in &lines {
            assert!(
                rect.0 >= 60 && rect.2 <= 350,
                "{text} {rect:?} leaves its panel"
            );
            assert!(
                rect.1 >= 100 && rect.3 <= 200,
                "{text} {rect:?} is not in the middle"
            );
        }
    }

    #[test]
    fn a_tooltip_stays_inside_the_chart_flipping_near_its_edges() {
        let area = (600.0, 400.0);
        let size = (200.0, 80.0);
        let inside = |(left, top): (f64, f64)| {
            left >= 0.0 && top >= 0.0 && left + size.0 <= area.0 && top + size.1 <= area.1
        };
        // Room below right: there, 12 px off the point.
        assert_eq!(tooltip_position((100.0, 100.0), size, area), (112.0, 112.0));
        // Near the right edge it goes left of the point, near the bottom above it, in the corner both.
        assert_eq!(tooltip_position((550.0, 100.0), size, area), (338.0, 112.0));
        assert_eq!(tooltip_position((100.0, 380.0), size, area), (112.0, 288.0));
        assert_eq!(tooltip_position((590.0, 395.0), size, area), (378.0, 303.0));
        // Near the top left, never above or left of the chart.
        assert_eq!(tooltip_position((2.0, 2.0), size, area), (14.0, 14.0));
        // With room on neither side, it is kept inside, covering the point rather than leaving the chart.
        for point in [(0.0, 0.0), (300.0, 200.0), (600.0, 400.0), (210.0, 350.0)] {
            assert!(
                inside(tooltip_position(point, size, area)),
                "{point:?}: {:?}",
                tooltip_position(point, size, area)
            );
        }
        let wide = (580.0, 80.0);
        assert_eq!(tooltip_position((300.0, 100.0), wide, area).0, 0.0);
    }

    #[test]
    fn labels_that_would_overlap_are_moved_apart_and_stay_inside_the_plot() {
        let mut placer = LabelPlacer::new((0, 0, 600, 400));
        let overlaps = |a: Rect, b: Rect| a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
        let first = placer.place("N*=16", (100, 100), 10).unwrap();
        let second = placer.place("N*=16", (104, 102), 10).unwrap();
        let third = placer.place("skipped: hang", (90, 100), 10).unwrap();
        assert_eq!(first.0, (100, 100));
        assert!(!overlaps(first.1, second.1), "{first:?} {second:?}");
        assert!(!overlaps(third.1, first.1) && !overlaps(third.1, second.1));
        // Far away, a label keeps its own spot.
        assert_eq!(
            placer.place("threshold 0.65", (400, 300), 10).unwrap().0,
            (400, 300)
        );
        // Near the right edge a label moves left into the plot; near the top it steps down.
        let (_, edge) = placer.place("skipped at N=64: hang", (590, 3), 10).unwrap();
        assert!(edge.2 <= 600 && edge.1 >= 0, "{edge:?}");
        // With every spot near it taken, a label is left out rather than drawn over another.
        let mut full = LabelPlacer::new((0, 0, 100, 14));
        assert!(full.place("N*=2", (0, 7), 10).is_some());
        assert_eq!(full.place("N*=2", (0, 7), 10), None);
    }

    /// A point at an offered rate (`inf` for all at once), placed at the rate on x.
    fn rate_point(rps: f64, value: f64) -> SeriesPoint {
        SeriesPoint {
            load: cellscope_model::Load::rate(rps).unwrap(),
            x: rps,
            x_min: rps,
            x_max: rps,
            ..point(1, value)
        }
    }

    fn series_of(label: &str, points: Vec<SeriesPoint>) -> Series {
        Series {
            label: Value::Text(label.into()),
            legend: label.into(),
            badge: None,
            points,
            breakdown: cellscope_model::curve::Breakdown::NoData,
            skipped_at: None,
            skipped_cells: Vec::new(),
            left_out: 0,
            without_value: 0,
            frontier: None,
            frontier_withheld: None,
            slo_capacity: None,
        }
    }

    /// The attributes of every `<tag …/>` of an SVG drawing, by name.
    fn tags(svg: &str, tag: &str) -> Vec<BTreeMap<String, String>> {
        svg.split(&format!("<{tag} "))
            .skip(1)
            .map(|rest| {
                let body = rest.split("/>").next().unwrap_or("");
                body.split("\" ")
                    .filter_map(|pair| {
                        let (name, value) = pair.split_once("=\"")?;
                        Some((
                            name.trim().to_string(),
                            value.trim_end_matches('"').to_string(),
                        ))
                    })
                    .collect()
            })
            .collect()
    }

    /// The y of the dashed polylines drawn in `stroke` (a threshold's dashes, all at one height).
    fn dashes_y(svg: &str, stroke: &str) -> Vec<f64> {
        tags(svg, "polyline")
            .into_iter()
            .filter(|attributes| attributes.get("stroke").map(String::as_str) == Some(stroke))
            .filter_map(|attributes| {
                let points = attributes.get("points")?.clone();
                let ys: Vec<f64> = points
                    .split_whitespace()
                    .filter_map(|pair| pair.split_once(',')?.1.parse().ok())
                    .collect();
                // A horizontal dash: both ends at one height.
                (ys.len() == 2 && ys[0] == ys[1]).then_some(ys[0])
            })
            .collect()
    }

    #[test]
    fn load_axes_tick_every_power_of_two_and_put_an_unbounded_rate_past_a_break() {
        let texts = |layout: super::curves::LoadLayout| -> Vec<String> {
            layout.ticks().into_iter().map(|(_, text)| text).collect()
        };
        // Rates 1 … 64 req/s and all at once: seven powers of two, then ∞ one step right, the break halfway.
        let sweep = super::curves::LoadLayout::of(1.0, 64.0, true);
        assert_eq!(
            texts(sweep),
            ["1", "2", "4", "8", "16", "32", "64", "∞"].map(String::from)
        );
        assert_eq!(sweep.ticks().last().map(|(at, _)| *at), Some(7.0));
        assert_eq!(sweep.axis_break(), Some(6.5));
        // One finite rate and all at once: the axis still starts at 1 and ∞ stands past 4.
        let single = super::curves::LoadLayout::of(4.0, 4.0, true);
        assert_eq!(texts(single), ["1", "2", "4", "∞"].map(String::from));
        assert_eq!(single.axis_break(), Some(2.5));
        // All at once alone: its slot and nothing else, no break and no finite tick.
        let only = super::curves::LoadLayout::of(f64::INFINITY, 0.0, true);
        assert_eq!(texts(only), ["∞"]);
        assert_eq!(only.axis_break(), None);
        // Rates below 1 req/s, and no unbounded rate: no ∞ and no break.
        let slow = super::curves::LoadLayout::of(0.25, 2.0, false);
        assert_eq!(texts(slow), ["0.25", "0.5", "1", "2"].map(String::from));
        assert_eq!(slow.axis_break(), None);
        // N = 1 … 1024: eleven powers of two thinned to every other one.
        let wide = super::curves::LoadLayout::of(1.0, 1024.0, false);
        assert_eq!(
            texts(wide),
            ["1", "4", "16", "64", "256", "1024"].map(String::from)
        );
    }

    /// A vLLM-like rate sweep of achieved/offered at 1, 2, 4 req/s and all at once, with one failed cell at
    /// 4 req/s: drawn against the offered rate.
    fn rate_sweep_svg(metric: Metric, slo_line: Option<Threshold>) -> (String, Vec<Hit>) {
        let points = vec![
            rate_point(1.0, 0.99),
            rate_point(2.0, 0.9),
            SeriesPoint {
                failed: 1,
                ..rate_point(4.0, 0.6)
            },
            rate_point(f64::INFINITY, 0.3),
        ];
        let facets = vec![Facet {
            title: None,
            frontier_steps: Vec::new(),
            series: vec![series_of("vllm", points)],
        }];
        let styles = series_styles(&facets, &["vllm".to_string()]);
        let reason = |_: &Series| String::new();
        let kind = Some(LoadKind::Rate);
        svg_drawn(
            &facets,
            &styles,
            &reason,
            (XAxis::Load, metric),
            (800, 400),
            None,
            &[],
            (kind, metric.threshold(&Criterion::V1, kind), slo_line),
        )
    }

    #[test]
    fn a_rate_chart_reads_achieved_over_offered_against_the_saturation_line_with_inf_apart() {
        let (svg, hits) = rate_sweep_svg(Metric::Stat(Stat::Efficiency), None);
        let unescaped = svg.replace("&lt;", "<");
        let texts: Vec<&str> = unescaped.lines().map(str::trim).collect();
        for text in [
            "∞",
            "//",
            "achieved / offered rate",
            "offered rate (req/s, log₂)",
            "saturation: achieved < 0.9 × offered",
        ] {
            assert!(texts.contains(&text), "{text} missing");
        }
        assert!(!texts.contains(&"parallel efficiency"));
        assert!(!texts.contains(&"threshold 0.65"));
        // The point at 2 req/s has the value 0.9: the threshold's dashes are drawn at its height.
        let at_2 = &hits[1];
        let dashes = dashes_y(&svg, "#787878");
        assert!(!dashes.is_empty());
        for y in dashes {
            assert!(
                (y - at_2.y).abs() <= 1.0,
                "a dash at {y}, 0.9 is at {}",
                at_2.y
            );
        }
        // ∞ sits one step right of 4 req/s as 4 sits right of 2, past the break.
        let (at_4, at_inf) = (&hits[2], &hits[3]);
        assert!(
            ((at_inf.x - at_4.x) - (at_4.x - at_2.x)).abs() <= 1.0,
            "{hits:?}"
        );
        // The line's solid stroke runs through the finite rates only: no solid polyline joins another x to ∞'s
        // (its band's whisker stands upright in its slot).
        let xs = |points: &str| -> Vec<f64> {
            points
                .split_whitespace()
                .filter_map(|pair| pair.split_once(',')?.0.parse().ok())
                .collect()
        };
        let solid: Vec<Vec<f64>> = tags(&svg, "polyline")
            .into_iter()
            .filter(|attributes| attributes.get("stroke-width").map(String::as_str) == Some("2"))
            .filter_map(|attributes| Some(xs(attributes.get("points")?)))
            .collect();
        let joins_inf = |xs: &Vec<f64>| {
            xs.iter().any(|x| (x - at_inf.x).abs() <= 1.0)
                && xs.iter().any(|x| (x - at_inf.x).abs() > 1.0)
        };
        assert!(
            solid.iter().any(|xs| xs.len() == 3),
            "the solid line through 1, 2 and 4 req/s: {solid:?}"
        );
        assert!(
            !solid.iter().any(joins_inf),
            "a solid line into ∞: {solid:?}"
        );
    }

    #[test]
    fn a_failed_point_is_crossed_and_the_others_are_not() {
        let (svg, hits) = rate_sweep_svg(Metric::Stat(Stat::Efficiency), None);
        // Plotters draws a cross as two diagonals: each crossed point has two lines whose midpoint is on it.
        let crossed = |hit: &Hit| {
            tags(&svg, "line")
                .iter()
                .filter(|attributes| {
                    let number = |name: &str| -> f64 {
                        attributes
                            .get(name)
                            .and_then(|value| value.parse().ok())
                            .unwrap_or(f64::NAN)
                    };
                    let middle = (
                        (number("x1") + number("x2")) / 2.0,
                        (number("y1") + number("y2")) / 2.0,
                    );
                    (middle.0 - hit.x).abs() <= 1.0 && (middle.1 - hit.y).abs() <= 1.0
                })
                .count()
        };
        assert_eq!(crossed(&hits[2]), 2, "the failed point at 4 req/s");
        for clean in [&hits[0], &hits[1], &hits[3]] {
            assert_eq!(crossed(clean), 0, "{clean:?}");
        }
        // Its tooltip says what the cross means.
        let words = PointWords {
            metric: Metric::Stat(Stat::Efficiency),
            x: XAxis::Load,
            aggregation: Aggregation::Mean,
            band: BandSpan::Cells,
        };
        let facets = vec![Facet {
            title: None,
            frontier_steps: Vec::new(),
            series: vec![series_of(
                "vllm",
                vec![SeriesPoint {
                    failed: 1,
                    ..rate_point(4.0, 0.6)
                }],
            )],
        }];
        let text = curve_point_text(&facets, [0, 0, 0], words).unwrap();
        assert!(
            text.starts_with("vllm · 4 req/s\nachieved / offered rate 0.600"),
            "{text}"
        );
        assert!(text.contains("✕ crossed: 1 of the cells failed"), "{text}");
    }

    #[test]
    fn a_latency_curve_draws_the_slo_bound_as_a_labelled_line() {
        // p99 TTFT at 1, 2, 4 req/s and all at once; the SLO bounds it at 0.9 s, the value at 2 req/s.
        let slo = Threshold {
            value: 0.9,
            label: "SLO p99_ttft_ms ≤ 0.9 ms".into(),
        };
        let (svg, hits) = rate_sweep_svg(Metric::Stat(Stat::P99TtftMs), Some(slo));
        let texts: Vec<&str> = svg.lines().map(str::trim).collect();
        assert!(texts.contains(&"SLO p99_ttft_ms ≤ 0.9 ms"), "{texts:?}");
        let dashes = dashes_y(&svg, "#BE3C14");
        assert!(!dashes.is_empty());
        for y in dashes {
            assert!(
                (y - hits[1].y).abs() <= 1.0,
                "a dash at {y}, the bound at {}",
                hits[1].y
            );
        }
        // No threshold for a latency.
        assert!(!texts.iter().any(|text| text.starts_with("threshold")));
    }

    #[test]
    fn an_empty_rate_chart_keeps_its_rate_axis() {
        let facets = vec![Facet {
            title: None,
            frontier_steps: Vec::new(),
            series: vec![series_of("vllm", Vec::new())],
        }];
        let styles = series_styles(&facets, &[]);
        let reason = |_: &Series| String::new();
        let notes = vec![vec![
            "no cell has a value of p99 time to first token".to_string(),
        ]];
        let kind = Some(LoadKind::Rate);
        let (svg, _) = svg_drawn(
            &facets,
            &styles,
            &reason,
            (XAxis::Load, Metric::Stat(Stat::Efficiency)),
            (600, 300),
            None,
            &notes,
            (
                kind,
                Metric::Stat(Stat::Efficiency).threshold(&Criterion::V1, kind),
                None,
            ),
        );
        let texts: Vec<&str> = svg.lines().map(str::trim).collect();
        assert!(texts.contains(&"offered rate (req/s, log₂)"), "{texts:?}");
        assert!(texts.contains(&"achieved / offered rate"));
        assert!(!texts.iter().any(|text| text.starts_with("concurrency N")));
    }
}
