//! The distribution charts of the inspector: a histogram of request latencies and their empirical CDFs, with
//! ticks at round values.

use super::labels::text_width;
use super::rgb;
use cellscope_model::distribution::{Histogram, Ticks, cdf, extent};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A labelled sample of values with its colour.
pub type Sample<'a> = (&'a str, &'a [f64], (u8, u8, u8));

/// A distribution chart's axes: x in ms, y with its description and whether its values are whole (counts).
type Axes<'a> = (std::ops::Range<f64>, std::ops::Range<f64>, &'a str, bool);

/// The frame of a distribution chart: caption, axes and ticks over `x` × `y`. The ticks are drawn by hand
/// ([`Ticks::linear`]): at round values written with the decimals their step needs, and a label that would
/// run past the chart's edge is aligned to it instead of being cut off.
fn distribution_frame<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
    (x, y, y_desc, whole): Axes<'_>,
    scale: f64,
) -> Result<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>, String> {
    let px = |value: f64| (value * scale).round() as i32;
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", px(13.0)))
        .margin(px(8.0))
        .x_label_area_size(px(30.0))
        .y_label_area_size(px(44.0))
        .build_cartesian_2d(x.clone(), y.clone())
        .map_err(|error| error.to_string())?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(0)
        .y_labels(0)
        .label_style(("sans-serif", px(10.0)))
        .x_desc("ms")
        .y_desc(y_desc)
        .axis_desc_style(("sans-serif", px(10.0)))
        .draw()
        .map_err(|error| error.to_string())?;
    let base = root.get_base_pixel();
    let (edge, _) = root.get_pixel_range();
    let grid = RGBColor(232, 232, 232);
    let font = ("sans-serif", px(10.0));
    let x_ticks = Ticks::linear(x.start, x.end, 6, false);
    for (value, text) in x_ticks.values.iter().zip(&x_ticks.labels) {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(*value, y.start), (*value, y.end)],
                grid,
            )))
            .map_err(|error| error.to_string())?;
        let (at, bottom) = chart.backend_coord(&(*value, y.start));
        let half = text_width(text, px(10.0)) / 2;
        let (side, at) = if at + half > edge.end - px(2.0) {
            (HPos::Right, edge.end - px(2.0))
        } else if at - half < edge.start {
            (HPos::Left, edge.start)
        } else {
            (HPos::Center, at)
        };
        root.draw(&Text::new(
            text.clone(),
            (at - base.0, bottom - base.1 + px(4.0)),
            font.into_font()
                .color(&BLACK)
                .pos(Pos::new(side, VPos::Top)),
        ))
        .map_err(|error| error.to_string())?;
    }
    let y_ticks = Ticks::linear(y.start, y.end, 5, whole);
    for (value, text) in y_ticks.values.iter().zip(&y_ticks.labels) {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x.start, *value), (x.end, *value)],
                grid,
            )))
            .map_err(|error| error.to_string())?;
        let (left, at) = chart.backend_coord(&(x.start, *value));
        root.draw(&Text::new(
            text.clone(),
            (left - base.0 - px(4.0), at - base.1),
            font.into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(|error| error.to_string())?;
    }
    Ok(chart)
}

/// Draws the legend of a distribution chart.
fn distribution_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
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
        .map_err(|error| error.to_string())
}

/// A histogram of request latencies: current rows and, when given, the rows a refill replaced. The replaced
/// rows get a panel of their own beside the current ones, with their own bins and axes: a few hundred timed-out
/// rows in one bin would otherwise flatten every bar of the current rows.
pub fn draw_histogram<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    groups: &[Sample<'_>],
    replaced: Option<Sample<'_>>,
    scale: f64,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(|error| error.to_string())?;
    match replaced {
        None => histogram_panel(root, title, groups, scale)?,
        Some(replaced) => {
            let (width, _) = root.dim_in_pixel();
            let (main, side) = root.split_horizontally((f64::from(width) * 0.62).round() as i32);
            histogram_panel(&main, title, groups, scale)?;
            let side_title = format!("replaced: {} rows", replaced.1.len());
            histogram_panel(&side, &side_title, &[replaced], scale)?;
        }
    }
    root.present().map_err(|error| error.to_string())
}

/// One histogram over its own bins and axes, with its legend.
fn histogram_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    groups: &[Sample<'_>],
    scale: f64,
) -> Result<(), String> {
    let samples: Vec<&[f64]> = groups.iter().map(|(_, values, _)| *values).collect();
    let Some(histogram) = Histogram::of(&samples, 30) else {
        return Ok(());
    };
    let (low, width) = (histogram.low, histogram.bin_width);
    let top = histogram.top().max(1);
    let y = 0.0..f64::from(top + top / 10 + 1);
    let axes: Axes<'_> = (low..histogram.high(), y, "requests", true);
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
    distribution_legend(&mut chart, SeriesLabelPosition::UpperRight, scale)
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
    let axes: Axes<'_> = (x, 0.0..1.0, "fraction ≤ x", false);
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
    distribution_legend(&mut chart, SeriesLabelPosition::LowerRight, scale)?;
    root.present().map_err(|error| error.to_string())
}
