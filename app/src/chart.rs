//! Charts drawn with plotters on any backend: the canvas for the page, SVG for export. Drawing returns the
//! pixel position of every point so the page can show a tooltip for the nearest one.

use crate::palette;
use cellscope_model::distribution::{Histogram, cdf, extent};
use cellscope_model::explore::{Facet, Series, SeriesPoint};
use cellscope_model::view_state::Metric;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::BTreeMap;

/// A drawn point, in CSS pixels of the drawing, with what the tooltip says about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub x: f64,
    pub y: f64,
    pub text: String,
    /// The cells behind the point (clicking opens them in the inspector).
    pub keys: Vec<cellscope_model::CellKey>,
}

/// What a curves chart shows.
pub struct CurveSpec<'a> {
    pub facets: &'a [Facet],
    pub metric: Metric,
    /// The horizontal threshold line (0.65 efficiency, 2.0 multiplier).
    pub threshold: Option<f64>,
    /// Series label → colour and marker.
    pub styles: &'a BTreeMap<String, ((u8, u8, u8), palette::Marker)>,
    /// Series label → skip reason shown at its end marker.
    pub skip_reason: &'a dyn Fn(&Series) -> String,
    /// Device pixels per CSS pixel (2 on a high-DPI screen); sizes scale with it.
    pub scale: f64,
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

fn rgb((red, green, blue): (u8, u8, u8)) -> RGBColor {
    RGBColor(red, green, blue)
}

/// The plotted y of a value: p95 multipliers span three orders of magnitude in V1, so they use log10.
fn y_of(metric: Metric, value: f64) -> f64 {
    if metric == Metric::P95Multiplier {
        value.max(1e-3).log10()
    } else {
        value
    }
}

fn y_label(metric: Metric, y: f64) -> String {
    if metric == Metric::P95Multiplier {
        let value = 10f64.powf(y);
        if value >= 10.0 {
            format!("{value:.0}×")
        } else {
            format!("{value:.2}×")
        }
    } else {
        format!("{y:.2}")
    }
}

fn point_text(series: &Series, point: &SeriesPoint, metric: Metric) -> String {
    let value = |value: Option<f64>| value.map_or("—".to_string(), |value| format!("{value:.3}"));
    let partial = if point.partial > 0 {
        format!(
            "\n◐ {} of the cells are partial: the value rests on fewer rows than planned",
            point.partial
        )
    } else {
        String::new()
    };
    format!(
        "{} · N={}\n{} {:.3} (band {:.3}–{:.3})\nefficiency {} · p95× {}\n{} cells · ok rows {}/{} expected{partial}",
        series.label,
        point.n,
        metric.label(),
        point.value,
        point.min,
        point.max,
        value(point.efficiency),
        value(point.p95_multiplier),
        point.cells,
        point.ok_rows,
        point.expected_rows
    )
}

/// Draws the curves (small multiples) on `root`.
pub fn draw_curves<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    spec: &CurveSpec<'_>,
) -> Result<Vec<Hit>, String> {
    let scale = spec.scale;
    let px = |value: f64| (value * scale).round() as i32;
    root.fill(&WHITE).map_err(|error| error.to_string())?;
    let columns = facet_columns(spec.facets.len());
    let rows = spec.facets.len().div_ceil(columns).max(1);
    let panels = root.split_evenly((rows, columns));
    let max_n = spec
        .facets
        .iter()
        .flat_map(|facet| &facet.series)
        .flat_map(|series| {
            series
                .points
                .iter()
                .map(|point| point.n)
                .chain(series.skipped_at)
        })
        .max()
        .unwrap_or(1)
        .max(2);
    let x_max = f64::from(max_n).log2();
    let (y_min, y_max) = match spec.metric {
        Metric::P95Multiplier => {
            let largest = spec
                .facets
                .iter()
                .flat_map(|facet| &facet.series)
                .flat_map(|series| series.points.iter().map(|point| point.max))
                .fold(2.0f64, f64::max);
            (y_of(spec.metric, 0.8), y_of(spec.metric, largest * 1.3))
        }
        _ => (0.0, 1.08),
    };
    let mut hits = Vec::new();
    for (facet, panel) in spec.facets.iter().zip(panels.iter()) {
        let title = facet
            .title
            .as_ref()
            .map_or_else(|| spec.metric.label().to_string(), ToString::to_string);
        let mut chart = ChartBuilder::on(panel)
            .caption(title, ("sans-serif", px(14.0)))
            .margin(px(8.0))
            .x_label_area_size(px(32.0))
            .y_label_area_size(px(48.0))
            .build_cartesian_2d(-0.25..x_max + 0.35, y_min..y_max)
            .map_err(|error| error.to_string())?;
        chart
            .configure_mesh()
            .x_labels(max_n.ilog2() as usize + 1)
            .x_label_formatter(&|x| {
                if (x - x.round()).abs() < 1e-6 && *x >= 0.0 {
                    format!("{}", 2u32.pow(x.round() as u32))
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|y| y_label(spec.metric, *y))
            .x_desc("concurrency N (log₂)")
            .y_desc(spec.metric.label())
            .label_style(("sans-serif", px(11.0)))
            .axis_desc_style(("sans-serif", px(11.0)))
            // Fine mesh lines cost a canvas call each and add little on a log₂ axis: one between labels is enough.
            .max_light_lines(1)
            .y_labels(6)
            .light_line_style(RGBColor(240, 240, 240))
            .bold_line_style(RGBColor(215, 215, 215))
            .draw()
            .map_err(|error| error.to_string())?;
        if let Some(threshold) = spec.threshold {
            let y = y_of(spec.metric, threshold);
            let style = ShapeStyle {
                color: RGBColor(120, 120, 120).to_rgba(),
                filled: false,
                stroke_width: px(1.0).max(1) as u32,
            };
            let dashes: Vec<_> = (0..40)
                .map(|index| {
                    let start = -0.25 + (x_max + 0.6) * f64::from(index) / 40.0;
                    PathElement::new(vec![(start, y), (start + (x_max + 0.6) / 80.0, y)], style)
                })
                .collect();
            chart
                .draw_series(dashes)
                .map_err(|error| error.to_string())?;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("threshold {threshold}"),
                    (x_max - 0.9, y),
                    ("sans-serif", px(10.0))
                        .into_font()
                        .color(&RGBColor(90, 90, 90)),
                )))
                .map_err(|error| error.to_string())?;
        }
        for series in &facet.series {
            let (color, marker) = spec
                .styles
                .get(&series.label.to_string())
                .copied()
                .unwrap_or(((0, 0, 0), palette::Marker::Circle));
            let color = rgb(color);
            let xy = |point: &SeriesPoint, value: f64| {
                (f64::from(point.n).log2(), y_of(spec.metric, value))
            };
            if series.points.len() > 1 {
                let mut band: Vec<(f64, f64)> = series
                    .points
                    .iter()
                    .map(|point| xy(point, point.max))
                    .collect();
                band.extend(series.points.iter().rev().map(|point| xy(point, point.min)));
                chart
                    .draw_series(std::iter::once(Polygon::new(band, color.mix(0.18))))
                    .map_err(|error| error.to_string())?;
            }
            let line_style = ShapeStyle {
                color: color.to_rgba(),
                filled: false,
                stroke_width: px(2.0) as u32,
            };
            chart
                .draw_series(LineSeries::new(
                    series.points.iter().map(|point| xy(point, point.value)),
                    line_style,
                ))
                .map_err(|error| error.to_string())?;
            // A point resting on partial cells is hollow: its value comes from fewer rows than planned.
            for point in &series.points {
                let at = xy(point, point.value);
                let style = if point.partial > 0 {
                    color.stroke_width(px(1.5).max(1) as u32)
                } else {
                    color.filled()
                };
                let size = px(3.5);
                let drawn = match marker {
                    palette::Marker::Circle => {
                        chart.draw_series(std::iter::once(Circle::new(at, size, style).into_dyn()))
                    }
                    palette::Marker::Square => chart.draw_series(std::iter::once(
                        EmptyElement::at(at)
                            + Rectangle::new([(-size, -size), (size, size)], style),
                    )),
                    palette::Marker::Triangle => chart.draw_series(std::iter::once(
                        TriangleMarker::new(at, size + 1, style).into_dyn(),
                    )),
                };
                drawn.map_err(|error| error.to_string())?;
                if point.partial > 0 {
                    // The hollow centre is the background, not the band behind it.
                    chart
                        .draw_series(std::iter::once(Circle::new(
                            at,
                            (size - 2).max(1),
                            WHITE.filled(),
                        )))
                        .map_err(|error| error.to_string())?;
                }
            }
            if let Some(breakdown) = series.breakdown.n()
                && let Some(point) = series.points.iter().find(|point| point.n == breakdown)
            {
                let at = xy(point, point.value);
                let ring = ShapeStyle {
                    color: color.to_rgba(),
                    filled: false,
                    stroke_width: px(2.0) as u32,
                };
                chart
                    .draw_series(std::iter::once(Circle::new(at, px(7.0), ring)))
                    .map_err(|error| error.to_string())?;
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("N*={breakdown}"),
                        at,
                        ("sans-serif", px(10.0)).into_font().color(&color),
                    )))
                    .map_err(|error| error.to_string())?;
            }
            if let (Some(skipped_at), Some(last)) = (series.skipped_at, series.points.last()) {
                // The curve ends at a skipped cell: a dotted stub at the last value and a cross, never a drop to 0.
                let from = xy(last, last.value);
                let to = (f64::from(skipped_at).log2(), from.1);
                let dotted = ShapeStyle {
                    color: color.mix(0.7),
                    filled: false,
                    stroke_width: px(1.0).max(1) as u32,
                };
                let steps = 12;
                let segments: Vec<_> = (0..steps)
                    .filter(|step| step % 2 == 0)
                    .map(|step| {
                        let a = from.0 + (to.0 - from.0) * f64::from(step) / f64::from(steps);
                        let b = from.0 + (to.0 - from.0) * f64::from(step + 1) / f64::from(steps);
                        PathElement::new(vec![(a, to.1), (b, to.1)], dotted)
                    })
                    .collect();
                chart
                    .draw_series(segments)
                    .map_err(|error| error.to_string())?;
                chart
                    .draw_series(std::iter::once(Cross::new(
                        to,
                        px(6.0),
                        ShapeStyle {
                            color: color.to_rgba(),
                            filled: false,
                            stroke_width: px(2.0) as u32,
                        },
                    )))
                    .map_err(|error| error.to_string())?;
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("skipped: {}", (spec.skip_reason)(series)),
                        (to.0 - 0.9, to.1 + (y_max - y_min) * 0.06),
                        ("sans-serif", px(10.0))
                            .into_font()
                            .color(&RGBColor(60, 60, 60)),
                    )))
                    .map_err(|error| error.to_string())?;
                let (x, y) = chart.backend_coord(&to);
                hits.push(Hit {
                    x: f64::from(x) / scale,
                    y: f64::from(y) / scale,
                    text: format!(
                        "{} · N={skipped_at}\nskipped: {}",
                        series.label,
                        (spec.skip_reason)(series)
                    ),
                    keys: series.skipped_cells.clone(),
                });
            }
            for point in &series.points {
                let (x, y) = chart.backend_coord(&xy(point, point.value));
                hits.push(Hit {
                    x: f64::from(x) / scale,
                    y: f64::from(y) / scale,
                    text: point_text(series, point, spec.metric),
                    keys: point.keys.clone(),
                });
            }
        }
    }
    root.present().map_err(|error| error.to_string())?;
    Ok(hits)
}

/// A labelled sample of values with its colour.
pub type Sample<'a> = (&'a str, &'a [f64], (u8, u8, u8));

/// The frame of a distribution chart: caption, axes and mesh over `x` × `y`.
/// A distribution chart's axes: x in ms, y with its description and how its labels read.
type Axes<'a> = (
    std::ops::Range<f64>,
    std::ops::Range<f64>,
    &'a str,
    fn(&f64) -> String,
);

fn distribution_frame<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
    (x, y, y_desc, y_label): Axes<'_>,
    scale: f64,
) -> Result<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>, String> {
    let px = |value: f64| (value * scale).round() as i32;
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", px(13.0)))
        .margin(px(8.0))
        .x_label_area_size(px(30.0))
        .y_label_area_size(px(40.0))
        .build_cartesian_2d(x, y)
        .map_err(|error| error.to_string())?;
    chart
        .configure_mesh()
        .label_style(("sans-serif", px(10.0)))
        .x_desc("ms")
        .y_desc(y_desc)
        .y_label_formatter(&y_label)
        .axis_desc_style(("sans-serif", px(10.0)))
        .draw()
        .map_err(|error| error.to_string())?;
    Ok(chart)
}

/// Draws the legend of a distribution chart and presents the drawing.
fn finish_distribution<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    root: &DrawingArea<DB, Shift>,
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
    scale: f64,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(position)
        .label_font(("sans-serif", (10.0 * scale).round() as i32))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|error| error.to_string())?;
    root.present().map_err(|error| error.to_string())
}

/// A histogram of request latencies: current rows, and (when given) the rows a refill replaced.
pub fn draw_histogram<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    groups: &[Sample<'_>],
    scale: f64,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(|error| error.to_string())?;
    let samples: Vec<&[f64]> = groups.iter().map(|(_, values, _)| *values).collect();
    let Some(histogram) = Histogram::of(&samples, 30) else {
        return root.present().map_err(|error| error.to_string());
    };
    let (low, width) = (histogram.low, histogram.bin_width);
    let top = histogram.top().max(1);
    let y = 0.0..f64::from(top + top / 10 + 1);
    let axes: Axes<'_> = (low..histogram.high(), y, "requests", |count| {
        format!("{count:.0}")
    });
    let mut chart = distribution_frame(root, title, axes, scale)?;
    for ((label, _, color), counts) in groups.iter().zip(&histogram.counts) {
        let fill = rgb(*color).mix(0.55).filled();
        chart
            .draw_series(
                counts
                    .iter()
                    .enumerate()
                    .filter(|(_, count)| **count > 0)
                    .map(|(bin, count)| {
                        let x0 = low + width * bin as f64;
                        Rectangle::new([(x0, 0.0), (x0 + width, f64::from(*count))], fill)
                    }),
            )
            .map_err(|error| error.to_string())?
            .label(*label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], fill));
    }
    finish_distribution(root, &mut chart, SeriesLabelPosition::UpperRight, scale)
}

/// Empirical CDFs of several samples, with vertical marks (`(label, x)`: p50, p95, p99).
pub fn draw_cdf<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    groups: &[Sample<'_>],
    marks: &[(&str, f64)],
    scale: f64,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(|error| error.to_string())?;
    let samples: Vec<&[f64]> = groups.iter().map(|(_, values, _)| *values).collect();
    let Some((low, high)) = extent(&samples) else {
        return root.present().map_err(|error| error.to_string());
    };
    let x = low..high.max(low + 1e-9);
    let axes: Axes<'_> = (x, 0.0..1.0, "fraction ≤ x", |fraction| {
        format!("{fraction:.1}")
    });
    let mut chart = distribution_frame(root, title, axes, scale)?;
    for (label, values, color) in groups {
        let style = ShapeStyle {
            color: rgb(*color).to_rgba(),
            filled: false,
            stroke_width: (2.0 * scale).round() as u32,
        };
        let line_color = rgb(*color);
        chart
            .draw_series(LineSeries::new(cdf(values), style))
            .map_err(|error| error.to_string())?
            .label(*label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], line_color));
    }
    let mark_color = RGBColor(90, 90, 90);
    for (position, (label, x)) in marks.iter().enumerate() {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(*x, 0.0), (*x, 1.0)],
                mark_color
                    .mix(0.6)
                    .stroke_width((1.0 * scale).round() as u32),
            )))
            .map_err(|error| error.to_string())?;
        // Labels step down so that close marks (p95 and p99 often are) do not overlap, and sit on the side of
        // the line that has room, so none is cut off at the chart's edge.
        let y = 0.95 - 0.08 * position as f64;
        let side = if *x > (low + high) / 2.0 {
            HPos::Right
        } else {
            HPos::Left
        };
        chart
            .draw_series(std::iter::once(Text::new(
                format!(" {label} {x:.0} ms "),
                (*x, y),
                ("sans-serif", (10.0 * scale).round() as i32)
                    .into_font()
                    .color(&mark_color)
                    .pos(Pos::new(side, VPos::Center)),
            )))
            .map_err(|error| error.to_string())?;
    }
    finish_distribution(root, &mut chart, SeriesLabelPosition::LowerRight, scale)
}

/// The colour and marker of each series label: the label's position among all values of the coloured
/// dimension in the data (`all_values`, in the index's order), so a backend keeps its look across views.
pub fn series_styles(
    labels: impl IntoIterator<Item = String>,
    all_values: &[String],
) -> BTreeMap<String, ((u8, u8, u8), palette::Marker)> {
    labels
        .into_iter()
        .map(|label| {
            let position = all_values
                .iter()
                .position(|value| *value == label)
                .unwrap_or(all_values.len());
            (label, palette::style(position))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellscope_model::explore::Value;

    fn point(n: u32, value: f64) -> SeriesPoint {
        SeriesPoint {
            n,
            value,
            min: value - 0.02,
            max: value + 0.02,
            efficiency: Some(value),
            p95_multiplier: Some(1.0 / value),
            cells: 3,
            series: 1,
            ok_rows: 36,
            expected_rows: 36,
            keys: Vec::new(),
            partial: 0,
        }
    }

    #[test]
    fn curves_draw_to_svg_with_hits_for_every_point_and_the_skip_marker() {
        let series = Series {
            label: Value::Text("pytorch_direct".into()),
            points: vec![point(1, 1.0), point(2, 0.5), point(4, 0.3), point(8, 0.1)],
            breakdown: cellscope_model::curve::Breakdown::At { n: 2 },
            skipped_at: Some(16),
            skipped_cells: Vec::new(),
            left_out: 0,
        };
        let facets = vec![Facet {
            title: Some(Value::Text("long_decode".into())),
            series: vec![series],
        }];
        let styles = series_styles(
            ["pytorch_direct".to_string()],
            &["pytorch_direct".to_string()],
        );
        let reason = |_: &Series| "hang".to_string();
        for metric in [Metric::Efficiency, Metric::P95Multiplier] {
            let mut svg = String::new();
            let hits = {
                let root = SVGBackend::with_string(&mut svg, (800, 400)).into_drawing_area();
                let spec = CurveSpec {
                    facets: &facets,
                    metric,
                    threshold: Some(0.65),
                    styles: &styles,
                    skip_reason: &reason,
                    scale: 1.0,
                };
                draw_curves(&root, &spec).unwrap()
            };
            assert_eq!(hits.len(), 5, "four points and the skip marker");
            assert!(svg.contains("skipped: hang"));
            assert!(svg.contains("N*=2"));
        }
    }
}
