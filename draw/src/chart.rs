//! Charts drawn with plotters on any backend: the page's canvas, PNG and SVG exports. Drawing returns the pixel
//! position of every point so the page can show a tooltip for the nearest one.

use crate::palette;
use cellscope_model::distribution::{Histogram, Ticks, cdf, extent};
use cellscope_model::explore::{Facet, Series, SeriesPoint, value_text};
use cellscope_model::metric::{TimeUnit, Unit, with_thousands};
use cellscope_model::view_state::{Aggregation, BandSpan, Metric, XAxis};
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
    /// The horizontal threshold line (0.65 efficiency, 2.0 multiplier).
    pub threshold: Option<f64>,
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

/// How an axis reads a metric: linear from zero, or log₁₀ for values that span orders of magnitude
/// (multipliers and times, [`Metric::log_scale`]), with ticks at values a reader can name (1×, 2×, 4×; 100 ms,
/// 200 ms, 500 ms, 1 s). The y axis always reads the plotted metric; the x axis reads the x metric when there is
/// one.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Axis {
    Linear { low: f64, high: f64 },
    Log { low: f64, high: f64 },
}

impl Axis {
    fn for_metric(metric: Metric, smallest: f64, largest: f64) -> Axis {
        let (smallest, largest) = if smallest.is_finite() && largest.is_finite() {
            (smallest, largest)
        } else {
            (1.0, 1.0)
        };
        match metric.unit() {
            Unit::Ratio => Axis::Linear {
                low: 0.0,
                high: (largest * 1.05).max(1.08),
            },
            Unit::Multiple => Axis::Log {
                low: smallest.min(0.8),
                high: largest.max(2.0) * 1.3,
            },
            Unit::Milliseconds => Axis::Log {
                low: (smallest / 1.3).max(1e-3),
                high: (largest * 1.3).max(smallest * 2.0).max(1e-2),
            },
            _ => Axis::Linear {
                low: 0.0,
                high: (largest * 1.1).max(1.0),
            },
        }
    }

    /// The plotted coordinate of a value.
    fn at(self, value: f64) -> f64 {
        match self {
            Axis::Linear { .. } => value,
            Axis::Log { .. } => value.max(1e-6).log10(),
        }
    }

    fn range(self) -> std::ops::Range<f64> {
        match self {
            Axis::Linear { low, high } | Axis::Log { low, high } => self.at(low)..self.at(high),
        }
    }

    /// The ticks drawn by hand on a log axis (plotters would put them at round logarithms): powers of two
    /// for multipliers, 1-2-5 steps for times; every other one when they would crowd.
    fn log_ticks(self, metric: Metric) -> Vec<f64> {
        let Axis::Log { low, high } = self else {
            return Vec::new();
        };
        let mut ticks = Vec::new();
        if metric.unit() == Unit::Multiple {
            let mut tick = 2f64.powi(low.log2().ceil() as i32);
            while tick <= high {
                ticks.push(tick);
                tick *= 2.0;
            }
        } else {
            let mut decade = 10f64.powi(low.log10().floor() as i32);
            while decade <= high {
                for step in [1.0, 2.0, 5.0] {
                    let tick = decade * step;
                    if tick >= low && tick <= high {
                        ticks.push(tick);
                    }
                }
                decade *= 10.0;
            }
        }
        while ticks.len() > 9 {
            ticks = ticks.into_iter().step_by(2).collect();
        }
        ticks
    }
}

/// A tick label: `4×`, `0.5×`, `200 ms`, `1.5 s`, `2 min`; linear axes as the metric writes its numbers.
fn tick_label(metric: Metric, value: f64) -> String {
    let trimmed = |value: f64| {
        let text = format!("{value:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    match metric.unit() {
        Unit::Multiple => format!("{}×", trimmed(value)),
        // Ticks stay in seconds past a minute: 1-2-5 steps of seconds (100 s, 200 s, 500 s) read better than
        // the same values in minutes (1.67 min, 3.33 min, 8.33 min).
        Unit::Milliseconds => {
            let unit = match TimeUnit::fitting(value) {
                TimeUnit::Milliseconds => TimeUnit::Milliseconds,
                _ => TimeUnit::Seconds,
            };
            format!("{} {}", trimmed(value / unit.ms()), unit.symbol())
        }
        Unit::Ratio => format!("{value:.2}"),
        _ => with_thousands(value, 0),
    }
}

/// A box in backend pixels: left, top, right, bottom.
type Rect = (i32, i32, i32, i32);

/// The width of `text` in backend pixels at `font_px`, as the chart estimates it (a little wider than most
/// sans-serif text, so that estimated boxes that do not overlap are drawn apart).
fn text_width(text: &str, font_px: i32) -> i32 {
    (text.chars().count() as f64 * f64::from(font_px) * 0.6).ceil() as i32
}

/// Places chart labels so none covers another or leaves its panel's plotting area: each label tries its own
/// spot, then steps up and down by its height, then to the left, until it finds room; a label with no room
/// anywhere near is left out (its point's tooltip still says it) rather than drawn over another.
struct LabelPlacer {
    placed: Vec<Rect>,
    /// Where labels may go (the plotting area).
    bounds: Rect,
}

impl LabelPlacer {
    fn new(bounds: Rect) -> LabelPlacer {
        LabelPlacer {
            placed: Vec::new(),
            bounds,
        }
    }

    /// Where to put a label of `text` whose preferred left-centre point is `(x, y)` (backend pixels), and the
    /// box it takes; `None` when no spot near it is free.
    fn place(
        &mut self,
        text: &str,
        (x, y): (i32, i32),
        font_px: i32,
    ) -> Option<((i32, i32), Rect)> {
        let width = text_width(text, font_px);
        let height = font_px + 4;
        let overlaps = |a: &Rect, b: &Rect| a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
        let (left, top, right, bottom) = self.bounds;
        // Kept inside the plotting area: a label starting past its right edge moves left.
        let x = x.min(right - width).max(left);
        let rect_at = |(x, y): (i32, i32)| (x, y - height / 2, x + width, y + height / 2);
        let inside = |rect: &Rect| rect.1 >= top && rect.3 <= bottom;
        let spot = [0, -width - 12]
            .into_iter()
            .flat_map(|dx| {
                (0..9).map(move |step| {
                    (
                        dx,
                        if step % 2 == 0 {
                            step / 2
                        } else {
                            -(step + 1) / 2
                        },
                    )
                })
            })
            .map(|(dx, step)| ((x + dx).max(left), y + step * height))
            .find(|spot| {
                let rect = rect_at(*spot);
                inside(&rect) && !self.placed.iter().any(|other| overlaps(&rect, other))
            })?;
        let rect = rect_at(spot);
        self.placed.push(rect);
        Some((spot, rect))
    }
}

/// `text` shortened with `…` to fit `width` backend pixels at `font_px` (as [`text_width`] estimates it): in its
/// middle when `middle` (a run id's end tells it apart), else at its end; unchanged when it fits.
fn fit_text(text: &str, width: i32, font_px: i32, middle: bool) -> String {
    if text_width(text, font_px) <= width {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let keep = ((f64::from(width) / (f64::from(font_px) * 0.6)) as usize).saturating_sub(1);
    let head = if middle { keep.div_ceil(2) } else { keep };
    let tail = keep - head;
    let mut fitted: String = chars[..head.min(chars.len())].iter().collect();
    fitted.push('…');
    fitted.extend(&chars[chars.len() - tail.min(chars.len())..]);
    fitted
}

/// `text` broken at spaces into lines that fit `width` backend pixels at `font_px` (as [`text_width`] estimates
/// it); a word longer than a line is shortened with `…`.
fn wrap_text(text: &str, width: i32, font_px: i32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if text_width(&format!("{line} {word}"), font_px) <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(fit_text(word, width, font_px, true)),
        }
    }
    lines
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
        None => "",
        Some(_) if series.is_dominated(index) => {
            "\nhollow: dominated (another N of this series is better on both axes)"
        }
        Some(_) => "\non the Pareto frontier of this series",
    };
    let origin: String = point
        .origin_lines()
        .into_iter()
        .map(|line| format!("\n{line}"))
        .collect();
    format!(
        "{} · N={}\n{} {}{}{x}{frontier}\n{}\nefficiency {} · p95× {}\nok rows {}/{} expected{partial}{origin}",
        series.label,
        point.n,
        metric.label(),
        value_text(metric, point.value),
        band(metric, point.min, point.max),
        point.pooling.describe(words.aggregation),
        value(point.efficiency, Metric::Efficiency),
        value(point.p95_multiplier, Metric::P95Multiplier),
        point.ok_rows,
        point.expected_rows
    )
}

/// The smallest and largest plotted number (band included) of every series.
fn extent_of(facets: &[Facet]) -> (f64, f64) {
    facets
        .iter()
        .flat_map(|facet| &facet.series)
        .flat_map(|series| &series.points)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), point| {
            (
                low.min(point.min).min(point.value),
                high.max(point.max).max(point.value),
            )
        })
}

/// The smallest and largest x (band included) of every series' points.
fn x_extent_of(facets: &[Facet]) -> (f64, f64) {
    facets
        .iter()
        .flat_map(|facet| &facet.series)
        .flat_map(|series| &series.points)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), point| {
            (
                low.min(point.x_min).min(point.x),
                high.max(point.x_max).max(point.x),
            )
        })
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

/// Draws an export's frame (the description lines, then a legend of markers in their colours, left to right)
/// and returns the area below it, where the chart goes.
pub fn draw_frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    lines: &[String],
    legend: &[(String, (u8, u8, u8), palette::Marker)],
    scale: f64,
) -> Result<DrawingArea<DB, Shift>, String> {
    let px = |value: f64| (value * scale).round() as i32;
    root.fill(&WHITE).map_err(|error| error.to_string())?;
    let line_height = px(16.0);
    let header = export_header_height(lines.len(), scale);
    let (top, chart) = root.split_vertically(header);
    for (index, line) in lines.iter().enumerate() {
        let size = if index == 0 { 14.0 } else { 11.0 };
        top.draw(&Text::new(
            line.clone(),
            (px(10.0), px(8.0) + line_height * index as i32),
            ("sans-serif", px(size))
                .into_font()
                .color(&RGBColor(30, 30, 30)),
        ))
        .map_err(|error| error.to_string())?;
    }
    let mut x = px(10.0);
    let y = px(8.0) + line_height * lines.len() as i32 + px(6.0);
    for (label, color, marker) in legend {
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
        x += px(24.0) + px(6.5) * label.chars().count() as i32;
    }
    Ok(chart)
}

/// Backend pixels above the chart in an export with `lines` of description.
pub fn export_header_height(lines: usize, scale: f64) -> i32 {
    ((8.0 + 16.0 * lines as f64 + 22.0) * scale).round() as i32
}

/// Draws the curves (small multiples) on `root`: against log₂ N, or with a metric on x as throughput–latency
/// charts, each series' points joined in N order and, when the series carries one, its Pareto frontier drawn
/// bold with the points it dominates hollow.
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
    let (smallest, largest) = extent_of(spec.facets);
    let axis = Axis::for_metric(spec.metric, smallest, largest);
    let y_range = axis.range();
    let (y_min, y_max) = (y_range.start, y_range.end);
    let ticks = axis.log_ticks(spec.metric);
    // The x axis: log₂ N with a little room either side, or the x metric's own axis (linear or log).
    let x_axis = spec.x.metric().map(|x| {
        let (smallest, largest) = x_extent_of(spec.facets);
        (x, Axis::for_metric(x, smallest, largest))
    });
    let x_range = match x_axis {
        None => -0.25..f64::from(max_n).log2() + 0.35,
        Some((_, x_axis)) => x_axis.range(),
    };
    let (x_lo, x_hi) = (x_range.start, x_range.end);
    let x_ticks = x_axis.map_or_else(Vec::new, |(x, x_axis)| x_axis.log_ticks(x));
    let x_of = |value: f64| match x_axis {
        None => value.max(1.0).log2(),
        Some((_, x_axis)) => x_axis.at(value),
    };
    let font = |size: f64| ("sans-serif", px(size));
    let mut hits = Vec::new();
    for (facet_index, (facet, panel)) in spec.facets.iter().zip(panels.iter()).enumerate() {
        let base = panel.get_base_pixel();
        let title = facet
            .title
            .as_ref()
            .map_or_else(|| spec.metric.label().to_string(), ToString::to_string);
        // A long title (a run id, a file path) is shortened in its middle to its panel's width, so that neighbouring
        // panels' titles never run into each other.
        let (panel_x, _) = panel.get_pixel_range();
        let title = fit_text(
            &title,
            panel_x.end - panel_x.start - px(16.0),
            px(14.0),
            true,
        );
        let mut chart = ChartBuilder::on(panel)
            .caption(title, font(14.0))
            .margin(px(8.0))
            .margin_right(px(14.0))
            .x_label_area_size(px(32.0))
            .y_label_area_size(px(64.0))
            .build_cartesian_2d(x_lo..x_hi, y_min..y_max)
            .map_err(|error| error.to_string())?;
        let y_formatter = |y: &f64| tick_label(spec.metric, *y);
        let n_formatter = |x: &f64| {
            if (x - x.round()).abs() < 1e-6 && *x >= 0.0 {
                format!("{}", 2u32.pow(x.round() as u32))
            } else {
                String::new()
            }
        };
        let x_formatter = |x: &f64| match x_axis {
            None => n_formatter(x),
            Some((metric, _)) => tick_label(metric, *x),
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_labels(match x_axis {
            None => max_n.ilog2() as usize + 1,
            Some(_) => 6,
        })
        .x_label_formatter(&x_formatter)
        .y_label_formatter(&y_formatter)
        .x_desc(spec.x.label())
        .y_desc(spec.metric.label())
        .label_style(font(11.0))
        .axis_desc_style(font(11.0))
        // Fine mesh lines cost a canvas call each and add little on a log₂ axis: one between labels is enough.
        .max_light_lines(1)
        .y_labels(6)
        .light_line_style(RGBColor(240, 240, 240))
        .bold_line_style(RGBColor(215, 215, 215));
        if !ticks.is_empty() {
            // Log axes get their ticks by hand below.
            mesh.y_labels(0);
        }
        if !x_ticks.is_empty() {
            mesh.x_labels(0);
        }
        mesh.draw().map_err(|error| error.to_string())?;
        let (plot_x, plot_y) = chart.plotting_area().get_pixel_range();
        let mut labels = LabelPlacer::new((
            plot_x.start + px(2.0),
            plot_y.start + px(1.0),
            plot_x.end - px(2.0),
            plot_y.end - px(1.0),
        ));
        for tick in &ticks {
            let y = axis.at(*tick);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x_lo, y), (x_hi, y)],
                    RGBColor(215, 215, 215),
                )))
                .map_err(|error| error.to_string())?;
            let (x, y) = chart.backend_coord(&(x_lo, y));
            panel
                .draw(&Text::new(
                    tick_label(spec.metric, *tick),
                    (x - base.0 - px(5.0), y - base.1),
                    font(11.0)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Right, VPos::Center)),
                ))
                .map_err(|error| error.to_string())?;
        }
        if let Some((x_metric, x_axis)) = x_axis {
            for tick in &x_ticks {
                let x = x_axis.at(*tick);
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(x, y_min), (x, y_max)],
                        RGBColor(215, 215, 215),
                    )))
                    .map_err(|error| error.to_string())?;
                let (x, y) = chart.backend_coord(&(x, y_min));
                panel
                    .draw(&Text::new(
                        tick_label(x_metric, *tick),
                        (x - base.0, y - base.1 + px(5.0)),
                        font(11.0)
                            .into_font()
                            .color(&BLACK)
                            .pos(Pos::new(HPos::Center, VPos::Top)),
                    ))
                    .map_err(|error| error.to_string())?;
            }
        }
        // The panel's notes first, along its top, so that no other label covers them; a panel without a point
        // says them in its middle instead, whole, as what it shows.
        let notes = spec.notes.get(facet_index).map_or(&[][..], Vec::as_slice);
        let empty = facet.series.iter().all(|series| series.points.is_empty());
        if empty && !notes.is_empty() {
            let width = plot_x.end - plot_x.start - px(16.0);
            let lines: Vec<String> = notes
                .iter()
                .flat_map(|note| wrap_text(note, width, px(12.0)))
                .collect();
            let line_height = px(16.0);
            let top = (plot_y.start + plot_y.end) / 2 - line_height * lines.len() as i32 / 2;
            for (index, line) in lines.into_iter().enumerate() {
                let centre = (plot_x.start + plot_x.end) / 2;
                let y = top + line_height * index as i32 + line_height / 2;
                labels.placed.push((
                    centre - text_width(&line, px(12.0)) / 2,
                    y - line_height / 2,
                    centre + text_width(&line, px(12.0)) / 2,
                    y + line_height / 2,
                ));
                panel
                    .draw(&Text::new(
                        line,
                        (centre - base.0, y - base.1),
                        font(12.0)
                            .into_font()
                            .color(&RGBColor(150, 60, 0))
                            .pos(Pos::new(HPos::Center, VPos::Center)),
                    ))
                    .map_err(|error| error.to_string())?;
            }
        }
        // A label placed at a free spot near a point (backend pixels); the panel's labels are drawn together
        // after its series, so that no label's backing covers another label or a later series' line.
        let mut pending: Vec<(String, (i32, i32), Rect, RGBColor)> = Vec::new();
        let mut label = |text: String, (x, y): (i32, i32), dx: i32, color: RGBColor| {
            if let Some((at, rect)) = labels.place(&text, (x + dx, y), px(10.0)) {
                pending.push((text, at, rect, color));
            }
            Ok::<(), String>(())
        };
        for (index, note) in notes.iter().enumerate().filter(|_| !empty) {
            let width = plot_x.end - plot_x.start - px(8.0);
            label(
                fit_text(note, width, px(10.0), false),
                (
                    plot_x.start + px(4.0),
                    plot_y.start + px(9.0) + px(14.0) * index as i32,
                ),
                0,
                RGBColor(150, 60, 0),
            )?;
        }
        if let Some(threshold) = spec.threshold {
            let y = axis.at(threshold);
            let style = ShapeStyle {
                color: RGBColor(120, 120, 120).to_rgba(),
                filled: false,
                stroke_width: px(1.0).max(1) as u32,
            };
            let width = x_hi - x_lo;
            let dashes: Vec<_> = (0..40)
                .map(|index| {
                    let start = x_lo + width * f64::from(index) / 40.0;
                    PathElement::new(vec![(start, y), (start + width / 80.0, y)], style)
                })
                .collect();
            chart
                .draw_series(dashes)
                .map_err(|error| error.to_string())?;
            // Above the dashed line, at its left end, where curves start high and rarely pass.
            let (x, y) = chart.backend_coord(&(x_lo + width * 0.01, y));
            label(
                format!("threshold {threshold}"),
                (x, y - px(8.0)),
                0,
                RGBColor(90, 90, 90),
            )?;
        }
        for (series_index, series) in facet.series.iter().enumerate() {
            let (color, marker) = spec
                .styles
                .get(&series.label.to_string())
                .copied()
                .unwrap_or(((0, 0, 0), palette::Marker::Circle));
            let color = rgb(color);
            let xy = |point: &SeriesPoint, value: f64| (x_of(point.x), axis.at(value));
            let frontier = series.frontier.as_ref();
            if x_axis.is_none() && series.points.len() > 1 {
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
            if x_axis.is_some() {
                // Against a metric the points do not follow x in order, so each band is a cross of whiskers:
                // the plotted value's band upright, the x metric's across.
                let whisker = color.mix(0.4).stroke_width(px(1.0).max(1) as u32);
                let whiskers: Vec<_> = series
                    .points
                    .iter()
                    .filter(|point| point.cells > 1)
                    .flat_map(|point| {
                        let y = axis.at(point.value);
                        [
                            PathElement::new(
                                vec![xy(point, point.min), xy(point, point.max)],
                                whisker,
                            ),
                            PathElement::new(
                                vec![(x_of(point.x_min), y), (x_of(point.x_max), y)],
                                whisker,
                            ),
                        ]
                    })
                    .collect();
                chart
                    .draw_series(whiskers)
                    .map_err(|error| error.to_string())?;
            }
            // With a frontier the points' N order steps back (thin and light) behind the bold frontier.
            let line_style = if frontier.is_some() {
                color.mix(0.45).stroke_width(px(1.0).max(1) as u32)
            } else {
                ShapeStyle {
                    color: color.to_rgba(),
                    filled: false,
                    stroke_width: px(2.0) as u32,
                }
            };
            chart
                .draw_series(LineSeries::new(
                    series.points.iter().map(|point| xy(point, point.value)),
                    line_style,
                ))
                .map_err(|error| error.to_string())?;
            if let Some(frontier) = frontier {
                let bold = ShapeStyle {
                    color: color.to_rgba(),
                    filled: false,
                    stroke_width: px(3.5) as u32,
                };
                chart
                    .draw_series(LineSeries::new(
                        frontier.steps.iter().map(|(x, y)| (x_of(*x), axis.at(*y))),
                        bold,
                    ))
                    .map_err(|error| error.to_string())?;
            }
            // A point resting on partial cells is hollow: its value comes from fewer rows than planned. With a
            // frontier, hollow means dominated, and partial cells are marked ◐ beside the point instead.
            for (index, point) in series.points.iter().enumerate() {
                let at = xy(point, point.value);
                let hollow = if frontier.is_some() {
                    series.is_dominated(index)
                } else {
                    point.partial > 0
                };
                let style = if hollow {
                    color.stroke_width(px(1.5).max(1) as u32)
                } else {
                    color.filled()
                };
                let size = if frontier.is_some() && !hollow {
                    px(4.5)
                } else {
                    px(3.5)
                };
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
                if hollow {
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
            // A point resting on partial cells says so beside it, with its value: a hung cell's efficiency of
            // 0.0005 sits on the axis's zero line but is not zero.
            for point in series.points.iter().filter(|point| point.partial > 0) {
                let (x, y) = chart.backend_coord(&xy(point, point.value));
                label(
                    format!("◐ {}", value_text(spec.metric, point.value)),
                    (x, y - px(10.0)),
                    px(6.0),
                    RGBColor(60, 60, 60),
                )?;
            }
            if x_axis.is_some() {
                // Against a metric, where a series starts and ends in N is not where it sits on x: say it.
                let ends = match series.points.as_slice() {
                    [] => Vec::new(),
                    [only] => vec![only],
                    [first, .., last] => vec![first, last],
                };
                // The breakdown ring's `N*=` label already names its N.
                for point in ends
                    .into_iter()
                    .filter(|point| series.breakdown.n() != Some(point.n))
                {
                    label(
                        format!("N={}", point.n),
                        chart.backend_coord(&xy(point, point.value)),
                        px(8.0),
                        color,
                    )?;
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
                label(
                    format!("N*={breakdown}"),
                    chart.backend_coord(&at),
                    px(9.0),
                    color,
                )?;
            }
            if let (Some(skipped_at), Some(last)) = (series.skipped_at, series.points.last()) {
                let cross = ShapeStyle {
                    color: color.to_rgba(),
                    filled: false,
                    stroke_width: px(2.0) as u32,
                };
                let from = xy(last, last.value);
                // The cross, in backend pixels: at the skipped N against N; against a metric the skipped cells
                // have no value to sit at, so it stands just right of the series' last point.
                let to = match x_axis {
                    None => {
                        // The curve ends at a skipped cell: a dotted stub at the last value, never a drop to 0.
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
                                let a =
                                    from.0 + (to.0 - from.0) * f64::from(step) / f64::from(steps);
                                let b = from.0
                                    + (to.0 - from.0) * f64::from(step + 1) / f64::from(steps);
                                PathElement::new(vec![(a, to.1), (b, to.1)], dotted)
                            })
                            .collect();
                        chart
                            .draw_series(segments)
                            .map_err(|error| error.to_string())?;
                        chart.backend_coord(&to)
                    }
                    Some(_) => {
                        let (x, y) = chart.backend_coord(&from);
                        (x + px(16.0), y)
                    }
                };
                panel
                    .draw(&Cross::new((to.0 - base.0, to.1 - base.1), px(6.0), cross))
                    .map_err(|error| error.to_string())?;
                let text = match x_axis {
                    None => format!("skipped: {}", (spec.skip_reason)(series)),
                    Some(_) => format!("skipped at N={skipped_at}: {}", (spec.skip_reason)(series)),
                };
                // The reason sits on the side of the cross with room: left of it at the panel's right half (the
                // cross is at the right edge against N).
                let width = text_width(&text, px(10.0));
                let (left, _) = panel.get_pixel_range();
                let right_half = to.0 > (left.start + left.end) / 2;
                label(
                    text,
                    (to.0, to.1 - px(12.0)),
                    if right_half {
                        -width - px(8.0)
                    } else {
                        px(8.0)
                    },
                    RGBColor(60, 60, 60),
                )?;
                hits.push(Hit {
                    x: f64::from(to.0) / scale,
                    y: f64::from(to.1) / scale,
                    text: format!(
                        "{} · N={skipped_at}\nskipped: {}",
                        series.label,
                        (spec.skip_reason)(series)
                    ),
                    keys: series.skipped_cells.as_slice().into(),
                    cells: series.skipped_cells.len(),
                    point: None,
                });
            }
            for (index, point) in series.points.iter().enumerate() {
                let (x, y) = chart.backend_coord(&xy(point, point.value));
                hits.push(Hit {
                    x: f64::from(x) / scale,
                    y: f64::from(y) / scale,
                    text: String::new(),
                    keys: Vec::new().into(),
                    cells: point.cells as usize,
                    point: Some([facet_index, series_index, index]),
                });
            }
        }
        // A light backing keeps each label readable where it crosses a line or a band; every backing goes
        // down before any text, so none covers another label.
        for (_, _, (left, top, right, bottom), _) in &pending {
            panel
                .draw(&Rectangle::new(
                    [
                        (left - base.0, top - base.1),
                        (right - base.0, bottom - base.1),
                    ],
                    WHITE.mix(0.75).filled(),
                ))
                .map_err(|error| error.to_string())?;
        }
        for (text, (x, y), _, color) in pending {
            panel
                .draw(&Text::new(
                    text,
                    (x - base.0, y - base.1),
                    font(10.0)
                        .into_font()
                        .color(&color)
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                ))
                .map_err(|error| error.to_string())?;
        }
    }
    root.present().map_err(|error| error.to_string())?;
    Ok(hits)
}

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

/// The colour and marker of each series label: the label's position among all values of the coloured
/// dimension in the data (`all_values`, in the index's order), so a backend keeps its look across views.
pub fn series_styles(
    labels: impl IntoIterator<Item = String>,
    all_values: &[String],
) -> BTreeMap<String, ((u8, u8, u8), palette::Marker)> {
    cellscope_model::order::btree_map(labels.into_iter().map(|label| {
        let position = all_values
            .iter()
            .position(|value| *value == label)
            .unwrap_or(all_values.len());
        (label, palette::style(position))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellscope_model::explore::Value;

    fn point(n: u32, value: f64) -> SeriesPoint {
        SeriesPoint {
            n,
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
        svg_against(facets, styles, reason, (XAxis::N, metric), size, frame)
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
        let mut svg = String::new();
        let hits = {
            let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
            let spec = CurveSpec {
                facets,
                metric,
                x,
                threshold: Some(0.65),
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
            points: vec![point(1, 1.0), point(2, 0.5), point(4, 0.3), point(8, 0.1)],
            breakdown: cellscope_model::curve::Breakdown::At { n: 2 },
            skipped_at: Some(16),
            skipped_cells: Vec::new(),
            left_out: 0,
            without_value: 0,
            frontier: None,
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
        for metric in [Metric::Efficiency, Metric::P95Multiplier, Metric::P95WallMs] {
            let (svg, hits) = svg_of(&facets, &styles, &reason, metric, (800, 400), None);
            assert_eq!(hits.len(), 5, "four points and the skip marker");
            assert!(svg.contains("skipped: hang"));
            assert!(svg.contains("N*=2"));
            let texts: Vec<&str> = svg.lines().map(str::trim).collect();
            if metric == Metric::P95Multiplier {
                // Values 0.08–1.02 (band included): ticks at powers of two, 0.12× to 2×.
                for tick in ["0.12×", "0.25×", "0.5×", "1×", "2×"] {
                    assert!(texts.contains(&tick), "{tick} missing");
                }
            }
            if metric == Metric::P95WallMs {
                for tick in ["0.1 ms", "0.2 ms", "0.5 ms", "1 ms"] {
                    assert!(texts.contains(&tick), "{tick} missing");
                }
            }
        }
    }

    #[test]
    fn an_export_carries_the_view_and_the_legend() {
        let facets = vec![Facet {
            title: None,
            series: vec![Series {
                label: Value::Text("vllm".into()),
                points: vec![point(1, 1.0), point(2, 0.5)],
                breakdown: cellscope_model::curve::Breakdown::At { n: 2 },
                skipped_at: None,
                skipped_cells: Vec::new(),
                left_out: 0,
                without_value: 0,
                frontier: None,
            }],
        }];
        let styles = series_styles(["vllm".to_string()], &["sglang".into(), "vllm".into()]);
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
            Metric::Efficiency,
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
            points,
            breakdown: cellscope_model::curve::Breakdown::Never { max_n: 8 },
            skipped_at: Some(16),
            skipped_cells: Vec::new(),
            left_out: 0,
            without_value: 0,
            frontier: Some(cellscope_model::explore::Frontier {
                members: vec![0, 1, 3],
                steps: steps.to_vec(),
            }),
        };
        let facets = vec![Facet {
            title: None,
            series: vec![series],
        }];
        let styles = series_styles(["vllm".to_string()], &["vllm".to_string()]);
        let reason = |_: &Series| "hang".to_string();
        let (svg, hits) = svg_against(
            &facets,
            &styles,
            &reason,
            (XAxis::Metric(Metric::P95TtftMs), Metric::AggregateTps),
            (900, 420),
            None,
        );
        let texts: Vec<&str> = svg.lines().map(str::trim).collect();
        for text in [
            "p95 time to first token",
            "aggregate throughput (tok/s)",
            "N=1",
            "N=8",
        ] {
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
            metric: Metric::AggregateTps,
            x: XAxis::Metric(Metric::P95TtftMs),
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
        let multiples = Axis::for_metric(Metric::P95Multiplier, 1.0, 1446.67);
        let ticks: Vec<String> = multiples
            .log_ticks(Metric::P95Multiplier)
            .into_iter()
            .map(|tick| tick_label(Metric::P95Multiplier, tick))
            .collect();
        // 1× to 1024× is eleven powers of two: every other one is kept, never more than nine.
        assert_eq!(ticks, ["1×", "4×", "16×", "64×", "256×", "1024×"]);
        let times = Axis::for_metric(Metric::P95WallMs, 420.0, 9_500.0);
        let ticks: Vec<String> = times
            .log_ticks(Metric::P95WallMs)
            .into_iter()
            .map(|tick| tick_label(Metric::P95WallMs, tick))
            .collect();
        assert_eq!(ticks, ["500 ms", "1 s", "2 s", "5 s", "10 s"]);
        assert_eq!(tick_label(Metric::P95WallMs, 200_000.0), "200 s");
        assert!(
            Axis::for_metric(Metric::Efficiency, 0.1, 0.9)
                .log_ticks(Metric::Efficiency)
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
    fn crowded_labels_titles_and_notes_never_overlap() {
        // Four series breaking down at the same N and ending at the same skipped N with the same value, in
        // panels titled by long run ids, with a partial point and a note: every label wants the same spot.
        let series = |label: &str| Series {
            label: Value::Text(label.into()),
            points: vec![
                point(1, 1.0),
                point(2, 0.5),
                point(4, 0.3),
                SeriesPoint {
                    partial: 1,
                    ..point(8, 0.0004)
                },
            ],
            breakdown: cellscope_model::curve::Breakdown::At { n: 2 },
            skipped_at: Some(16),
            skipped_cells: Vec::new(),
            left_out: 0,
            without_value: 0,
            frontier: None,
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
            series: labels.iter().map(|label| series(label)).collect(),
        })
        .collect();
        let styles = series_styles(labels.iter().map(ToString::to_string), &[]);
        let reason = |_: &Series| "hang: the server stopped answering".to_string();
        let notes = vec![
            vec!["⚠ series pool different model sets: pytorch_direct 3 models, sglang 4, tgi 2, vllm 4".to_string()];
            3
        ];
        let (svg, _) = svg_with_notes(
            &facets,
            &styles,
            &reason,
            (XAxis::N, Metric::Efficiency),
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
            points,
            breakdown: cellscope_model::curve::Breakdown::NoData,
            skipped_at: None,
            skipped_cells: Vec::new(),
            left_out: 0,
            without_value: 0,
            frontier: None,
        };
        let facets = vec![
            Facet {
                title: Some(Value::Text("sglang".into())),
                series: vec![series("mistral-7b", Vec::new())],
            },
            Facet {
                title: Some(Value::Text("vllm".into())),
                series: vec![series("mistral-7b", vec![point(1, 1.0), point(2, 0.5)])],
            },
        ];
        let why = "all 36 cells excluded by the ledger (mistral-long-prefill-tokenizer)";
        let notes = vec![vec![why.to_string()], Vec::new()];
        let styles = series_styles(["mistral-7b".to_string()], &[]);
        let reason = |_: &Series| String::new();
        let (svg, _) = svg_with_notes(
            &facets,
            &styles,
            &reason,
            (XAxis::N, Metric::Efficiency),
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
}
