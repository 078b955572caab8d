//! The Compare view's charts, drawn with plotters on any backend (the page's canvas, PNG and SVG exports): the
//! forest plot (each group's mean Δ with its bootstrap interval, the zero line, the verdict's colour) and the
//! paired view (each pair's a against b with the y = x line, one panel per group).

use crate::chart::{Hit, facet_columns, rgb};
use crate::palette::{CATEGORICAL, Marker};
use cellscope_model::compare::text::{coordinates, delta, delta_interval, p_value};
use cellscope_model::compare::{CompareSpec, Comparison, Group, Pair, Verdict};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The colour of one of the two compared values: Okabe–Ito blue for the first in name order, vermillion for the
/// other, so a value keeps its colour when a and b are swapped. Told apart by every common colour-vision
/// deficiency, and by the marker (hollow when no direction is claimed) in greyscale.
pub fn value_color(spec: &CompareSpec, value: &str) -> (u8, u8, u8) {
    let first = spec.a.as_str().min(spec.b.as_str());
    if value == first {
        CATEGORICAL[0]
    } else {
        CATEGORICAL[5]
    }
}

/// The colour of a verdict: its winning value's colour, black when no direction is claimed.
pub fn verdict_color(spec: &CompareSpec, verdict: Verdict) -> (u8, u8, u8) {
    match verdict {
        Verdict::AEdge => value_color(spec, &spec.a),
        Verdict::BEdge => value_color(spec, &spec.b),
        Verdict::NoClearDifference | Verdict::TooFewPairs | Verdict::NoPairs => CATEGORICAL[7],
    }
}

/// The legend of both charts, for the page and the exports.
pub fn legend(comparison: &Comparison) -> Vec<(String, (u8, u8, u8), Marker)> {
    let spec = &comparison.spec;
    [Verdict::AEdge, Verdict::BEdge, Verdict::NoClearDifference]
        .into_iter()
        .map(|verdict| {
            (
                verdict.describe(spec),
                verdict_color(spec, verdict),
                Marker::Circle,
            )
        })
        .collect()
}

/// Height in CSS pixels of a forest plot of `groups` rows.
pub fn forest_height(groups: usize) -> f64 {
    90.0 + 36.0 * groups.max(1) as f64
}

/// The groups the paired view draws: those with a pair (a group without one would be an empty frame; the forest
/// plot and the table list it).
pub fn paired_groups(comparison: &Comparison) -> Vec<&Group> {
    comparison
        .groups
        .iter()
        .filter(|group| !group.pairs.is_empty())
        .collect()
}

/// Height in CSS pixels of the paired view of `groups` panels ([`paired_groups`]), up to three a row.
pub fn paired_height(groups: usize, width: f64) -> f64 {
    let columns = facet_columns(groups);
    let rows = groups.div_ceil(columns).max(1);
    (width / columns as f64 * 0.85).clamp(220.0, 360.0) * rows as f64
}

/// `[low, high]` padded so that zero and every interval fit with room for the markers.
fn delta_range(groups: &[Group]) -> (f64, f64) {
    let mut low: f64 = 0.0;
    let mut high: f64 = 0.0;
    for group in groups {
        for value in group
            .mean_delta
            .into_iter()
            .chain(group.ci.map(|ci| ci.0))
            .chain(group.ci.map(|ci| ci.1))
        {
            low = low.min(value);
            high = high.max(value);
        }
    }
    let pad = ((high - low) * 0.12).max(1e-9);
    (low - pad, high + pad)
}

/// A tick of the Δ axis with as many decimals as its steps need, and zero written `0` (never `-0.000`).
fn delta_tick(value: f64, span: f64) -> String {
    // About seven ticks: the decimals of one step of span / 7.
    let decimals = if span > 0.0 {
        (-(span / 7.0).log10().floor()).clamp(0.0, 6.0) as usize
    } else {
        3
    };
    let rounded = format!("{value:+.decimals$}");
    if rounded
        .trim_start_matches(['+', '-'])
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        "0".into()
    } else {
        rounded
    }
}

fn err(error: impl std::fmt::Display) -> String {
    error.to_string()
}

/// Draws the forest plot: one row per group, top to bottom in the table's order.
pub fn draw_forest<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    comparison: &Comparison,
    scale: f64,
) -> Result<Vec<Hit>, String> {
    let px = |value: f64| (value * scale).round() as i32;
    let font = |size: f64| ("sans-serif", px(size));
    root.fill(&WHITE).map_err(err)?;
    let spec = &comparison.spec;
    let measure = comparison.measure();
    let groups = &comparison.groups;
    let rows = groups.len().max(1) as f64;
    let (low, high) = delta_range(groups);
    let better = |a_side: bool| {
        let name = if a_side { &spec.a } else { &spec.b };
        format!("{name} better")
    };
    // Which way along Δ = a − b each side wins: right for a when higher is better.
    let (left_note, right_note) = if spec.metric.lower_is_better() {
        (better(true), better(false))
    } else {
        (better(false), better(true))
    };
    let mut chart = ChartBuilder::on(root)
        .margin(px(10.0))
        .margin_right(px(24.0))
        .x_label_area_size(px(40.0))
        .y_label_area_size(px(190.0))
        .build_cartesian_2d(low..high, 0.0..rows)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(7)
        .x_label_formatter(&|x| {
            if spec.metric.is_absolute() {
                delta(Some(*x), spec.metric)
            } else {
                delta_tick(*x, high - low)
            }
        })
        .x_desc(format!(
            "Δ = {} − {} ({}); ← {left_note} · {right_note} →",
            spec.a,
            spec.b,
            measure.label()
        ))
        .label_style(font(11.0))
        .axis_desc_style(font(11.0))
        .light_line_style(RGBColor(240, 240, 240))
        .bold_line_style(RGBColor(220, 220, 220))
        .draw()
        .map_err(err)?;
    // The zero line: no difference.
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(0.0, 0.0), (0.0, rows)],
            ShapeStyle::from(&RGBColor(90, 90, 90)).stroke_width(px(1.5).max(1) as u32),
        )))
        .map_err(err)?;
    // The chart maps values to the backend's pixels; `root.draw` takes pixels relative to `root`, which an
    // export places below its header.
    let base = root.get_base_pixel();
    let local = |(x, y): (i32, i32)| (x - base.0, y - base.1);
    let mut hits = Vec::new();
    for (index, group) in groups.iter().enumerate() {
        let y = rows - index as f64 - 0.5;
        let color = rgb(verdict_color(spec, group.verdict));
        let (left, centre) = (
            local(chart.backend_coord(&(low, y))),
            local(chart.backend_coord(&(0.0, y))),
        );
        root.draw(&Text::new(
            format!("{} · {} pairs", group.label(), group.n_pairs),
            (left.0 - px(8.0), left.1),
            font(12.0)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(err)?;
        if let Some((ci_low, ci_high)) = group.ci {
            let line = ShapeStyle::from(&color).stroke_width(px(2.0).max(1) as u32);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(ci_low, y), (ci_high, y)],
                    line,
                )))
                .map_err(err)?;
            for end in [ci_low, ci_high] {
                let (x, y) = local(chart.backend_coord(&(end, y)));
                root.draw(&PathElement::new(
                    vec![(x, y - px(6.0)), (x, y + px(6.0))],
                    line,
                ))
                .map_err(err)?;
            }
        }
        let Some(mean) = group.mean_delta else {
            root.draw(&Text::new(
                "no pairs",
                (centre.0 + px(6.0), centre.1),
                font(11.0)
                    .into_font()
                    .color(&RGBColor(90, 90, 90))
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(err)?;
            continue;
        };
        let at = chart.backend_coord(&(mean, y));
        let (marker_x, marker_y) = local(at);
        // A direction claimed: a filled marker; none: hollow, so greyscale prints keep the distinction.
        let marker = if matches!(group.verdict, Verdict::AEdge | Verdict::BEdge) {
            Circle::new((marker_x, marker_y), px(6.0), color.filled())
        } else {
            Circle::new(
                (marker_x, marker_y),
                px(6.0),
                ShapeStyle::from(&color).stroke_width(px(2.0).max(1) as u32),
            )
        };
        root.draw(&marker).map_err(err)?;
        hits.push(Hit {
            x: f64::from(at.0) / scale,
            y: f64::from(at.1) / scale,
            text: format!(
                "{}: {} pairs, mean Δ {} {}, Holm p {}\n{}",
                group.label(),
                group.n_pairs,
                delta(group.mean_delta, measure),
                delta_interval(group.ci, measure),
                p_value(group.holm_p),
                group.describe_verdict(spec)
            ),
            keys: Vec::new().into(),
            cells: 0,
            point: None,
        });
    }
    Ok(hits)
}

/// Which side a pair favours: a, b, or neither (equal values).
fn favours(pair: &Pair, lower_is_better: bool) -> Verdict {
    let a_better = if lower_is_better {
        pair.a < pair.b
    } else {
        pair.a > pair.b
    };
    if pair.a == pair.b {
        Verdict::NoClearDifference
    } else if a_better {
        Verdict::AEdge
    } else {
        Verdict::BEdge
    }
}

/// A pair in words: its coordinates (those that vary within the group), both values and Δ.
pub fn describe_pair(pair: &Pair, comparison: &Comparison) -> String {
    let spec = &comparison.spec;
    let measure = comparison.measure();
    format!(
        "{}\n{} {} · {} {} · Δ {}",
        coordinates(&pair.coordinates, spec.per),
        spec.a,
        measure.value(pair.a),
        spec.b,
        measure.value(pair.b),
        delta(Some(pair.delta), measure)
    )
}

/// Draws the paired view: per group, each pair as a point (a on x, b on y) coloured by the side it favours, and
/// the y = x line where the two sides are equal.
pub fn draw_paired<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    comparison: &Comparison,
    scale: f64,
) -> Result<Vec<Hit>, String> {
    let px = |value: f64| (value * scale).round() as i32;
    let font = |size: f64| ("sans-serif", px(size));
    root.fill(&WHITE).map_err(err)?;
    let spec = &comparison.spec;
    let measure = comparison.measure();
    let groups = paired_groups(comparison);
    let columns = facet_columns(groups.len());
    let rows = groups.len().div_ceil(columns).max(1);
    let panels = root.split_evenly((rows, columns));
    let mut hits = Vec::new();
    for (group, panel) in groups.iter().zip(panels.iter()) {
        let values = group.pairs.iter().flat_map(|pair| [pair.a, pair.b]);
        let (mut low, mut high) = values
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), value| {
                (low.min(value), high.max(value))
            });
        if !low.is_finite() {
            (low, high) = (0.0, 1.0);
        }
        let pad = ((high - low) * 0.08).max(high.abs() * 0.01).max(1e-9);
        let range = (low - pad)..(high + pad);
        let mut chart = ChartBuilder::on(panel)
            .caption(
                format!("{} · {} pairs", group.label(), group.n_pairs),
                font(13.0),
            )
            .margin(px(8.0))
            .x_label_area_size(px(34.0))
            .y_label_area_size(px(52.0))
            .build_cartesian_2d(range.clone(), range.clone())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_labels(5)
            .y_labels(5)
            .x_label_formatter(&|x| measure.value(*x))
            .y_label_formatter(&|y| measure.value(*y))
            .x_desc(format!("{} (a)", spec.a))
            .y_desc(format!("{} (b)", spec.b))
            .label_style(font(10.0))
            .axis_desc_style(font(11.0))
            .max_light_lines(1)
            .light_line_style(RGBColor(242, 242, 242))
            .bold_line_style(RGBColor(222, 222, 222))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(range.start, range.start), (range.end, range.end)],
                ShapeStyle::from(&RGBColor(120, 120, 120)).stroke_width(px(1.0).max(1) as u32),
            )))
            .map_err(err)?;
        for pair in &group.pairs {
            let color = rgb(verdict_color(
                spec,
                favours(pair, spec.metric.lower_is_better()),
            ));
            let at = chart.backend_coord(&(pair.a, pair.b));
            panel
                .draw(&Circle::new(
                    (
                        at.0 - panel.get_base_pixel().0,
                        at.1 - panel.get_base_pixel().1,
                    ),
                    px(3.5),
                    color.filled(),
                ))
                .map_err(err)?;
            hits.push(Hit {
                x: f64::from(at.0) / scale,
                y: f64::from(at.1) / scale,
                text: describe_pair(pair, comparison),
                keys: pair
                    .a_cells
                    .iter()
                    .chain(&pair.b_cells)
                    .cloned()
                    .collect::<Vec<_>>()
                    .into(),
                cells: pair.a_cells.len() + pair.b_cells.len(),
                point: None,
            });
        }
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::{draw_frame, export_header_height};
    use cellscope_model::Dimension;
    use cellscope_model::key::Value;
    use cellscope_model::metric::Metric;
    use cellscope_model::stat::Stat;

    fn group(name: &str, mean: f64, ci: (f64, f64), verdict: Verdict) -> Group {
        Group {
            group: Some(Value::Text(name.into())),
            n_pairs: 25,
            mean_delta: Some(mean),
            median_delta: Some(mean),
            ci: Some(ci),
            wilcoxon: None,
            holm_p: Some(0.01),
            effect_size: None,
            ratio: None,
            wins: 20,
            losses: 5,
            ties: 0,
            verdict,
            pairs: Vec::new(),
            dropped: Vec::new(),
        }
    }

    /// Five groups whose intervals all have different widths, so each row is known by its width alone.
    fn comparison(a: &str, b: &str) -> Comparison {
        Comparison {
            spec: CompareSpec {
                by: Dimension::Backend,
                a: a.into(),
                b: b.into(),
                per: Some(Dimension::Workload),
                metric: Metric::Stat(Stat::Efficiency),
                alpha: 0.05,
                slo: String::new(),
            },
            groups: vec![
                group("w1", -0.035, (-0.054, -0.018), Verdict::BEdge),
                group("w2", 0.002, (-0.010, 0.014), Verdict::NoClearDifference),
                group("w3", 0.076, (0.055, 0.096), Verdict::AEdge),
                group("w4", -0.035, (-0.057, -0.005), Verdict::BEdge),
                group("w5", -0.015, (-0.023, -0.008), Verdict::BEdge),
            ],
        }
    }

    /// The value of `name="…"` in one SVG element.
    fn attribute<'a>(element: &'a str, name: &str) -> Option<&'a str> {
        let start = element.find(&format!(" {name}=\""))? + name.len() + 3;
        Some(&element[start..start + element[start..].find('"')?])
    }

    /// Each horizontal two-point polyline of the SVG as (y, x from, x to).
    fn horizontal_lines(svg: &str) -> Vec<(f64, f64, f64)> {
        svg.split("<polyline")
            .skip(1)
            .filter_map(|element| {
                let points: Vec<(f64, f64)> = attribute(element, "points")?
                    .split_whitespace()
                    .filter_map(|point| {
                        let (x, y) = point.split_once(',')?;
                        Some((x.parse().ok()?, y.parse().ok()?))
                    })
                    .collect();
                match points.as_slice() {
                    [(x0, y0), (x1, y1)] if y0 == y1 && x0 != x1 => Some((*y0, *x0, *x1)),
                    _ => None,
                }
            })
            .collect()
    }

    /// The y of the text element that starts with `prefix`.
    fn text_y(svg: &str, prefix: &str) -> Option<f64> {
        svg.split("<text").skip(1).find_map(|element| {
            let body = element[element.find('>')? + 1..].trim_start();
            body.starts_with(prefix)
                .then(|| attribute(element, "y")?.parse().ok())
                .flatten()
        })
    }

    /// The forest plot exported under a three-line header, as the app's SVG and PNG exports draw it.
    fn exported_svg(comparison: &Comparison, width: u32) -> (String, u32) {
        let lines: Vec<String> = ["cellscope compare", "filters: none", "snapshot s"]
            .map(String::from)
            .to_vec();
        let legend = legend(comparison);
        let height = (forest_height(comparison.groups.len())
            + export_header_height(
                &lines,
                &legend
                    .iter()
                    .map(|(label, ..)| label.as_str())
                    .collect::<Vec<_>>(),
                f64::from(width),
            )) as i32;
        let mut svg = String::new();
        {
            let root =
                SVGBackend::with_string(&mut svg, (width, height as u32)).into_drawing_area();
            let chart = draw_frame(&root, &lines, &legend, 1.0).unwrap();
            draw_forest(&chart, comparison, 1.0).unwrap();
        }
        (svg, height as u32)
    }

    #[test]
    fn every_exported_interval_sits_on_its_own_labels_row_inside_the_image() {
        let comparison = comparison("vllm", "sglang");
        let (svg, height) = exported_svg(&comparison, 900);
        let lines = horizontal_lines(&svg);
        let widths: Vec<f64> = comparison
            .groups
            .iter()
            .map(|group| group.ci.map_or(0.0, |(low, high)| high - low))
            .collect();
        let mut rows = Vec::new();
        for (group, width) in comparison.groups.iter().zip(&widths) {
            let label = format!("{} · ", group.label());
            let y = text_y(&svg, &label).unwrap_or_else(|| panic!("no label {label}"));
            assert!(
                y > 0.0 && y < f64::from(height),
                "{label} at y={y} is clipped"
            );
            // The interval drawn on the label's row, known by its width relative to the first group's.
            let (_, x0, x1) = lines
                .iter()
                .find(|(line_y, ..)| (line_y - y).abs() <= 1.0)
                .unwrap_or_else(|| panic!("no interval on {label}'s row y={y}: {lines:?}"));
            rows.push((x1 - x0, *width));
        }
        let (first_px, first_width) = rows[0];
        for (pixels, width) in &rows {
            let expected = first_px * width / first_width;
            assert!(
                (pixels - expected).abs() <= 2.0,
                "an interval of {pixels} px where its label's group spans {expected} px"
            );
        }
    }

    #[test]
    fn delta_ticks_are_signed_without_negative_zero_and_with_the_decimals_the_span_needs() {
        assert_eq!(delta_tick(-1e-17, 0.15), "0");
        assert_eq!(delta_tick(0.0, 0.15), "0");
        assert_eq!(delta_tick(-0.05, 0.15), "-0.05");
        assert_eq!(delta_tick(0.025, 0.15), "+0.03");
        assert_eq!(delta_tick(250.0, 900.0), "+250");
        assert_eq!(delta_tick(0.004, 0.012), "+0.004");
    }

    #[test]
    fn a_value_keeps_its_colour_when_a_and_b_swap() {
        let forward = comparison("vllm", "sglang");
        let swapped = comparison("sglang", "vllm");
        let vllm_forward = verdict_color(&forward.spec, Verdict::AEdge);
        let vllm_swapped = verdict_color(&swapped.spec, Verdict::BEdge);
        assert_eq!(vllm_forward, vllm_swapped);
        assert_ne!(
            verdict_color(&forward.spec, Verdict::AEdge),
            verdict_color(&forward.spec, Verdict::BEdge)
        );
    }
}
