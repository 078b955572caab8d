//! The curves chart: small multiples of each series against log₂ N or against a metric, with bands, the
//! threshold, breakdown rings, explicit ends at skipped cells, Pareto frontiers, and labels placed apart.

use super::axis::{Axis, tick_label};
use super::labels::{LabelPlacer, Rect, fit_text, text_width, wrap_text};
use super::{CurveSpec, Hit, facet_columns, rgb};
use crate::palette;
use cellscope_model::explore::{Facet, Series, SeriesPoint, value_text};
use cellscope_model::metric::Threshold;
use cellscope_model::view_state::Metric;
use cellscope_model::{Load, LoadKind};
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;

/// Draws the curves (small multiples) on `root`: against log₂ N, or with a metric on x as throughput–latency
/// charts, each series' points joined in N order and, when the series carries one, its Pareto frontier drawn
/// bold with the points it dominates hollow.
pub fn draw_curves<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    spec: &CurveSpec<'_>,
) -> Result<Vec<Hit>, String> {
    root.fill(&WHITE).map_err(|error| error.to_string())?;
    let columns = facet_columns(spec.facets.len());
    let rows = spec.facets.len().div_ceil(columns).max(1);
    let panels = root.split_evenly((rows, columns));
    let curves = Curves::of(spec);
    let mut hits = Vec::new();
    for (facet_index, (facet, area)) in spec.facets.iter().zip(panels.iter()).enumerate() {
        draw_panel(area, &curves, facet_index, facet, &mut hits)?;
    }
    root.present().map_err(|error| error.to_string())?;
    Ok(hits)
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

/// A curves chart being drawn: its spec and what every panel shares, the axes with their ranges and ticks.
struct Curves<'s> {
    spec: &'s CurveSpec<'s>,
    /// The y axis, which reads the plotted metric, and its range as plotted.
    axis: Axis,
    y_min: f64,
    y_max: f64,
    /// The ticks drawn by hand on a log y axis (none on a linear one).
    ticks: Vec<f64>,
    /// The x metric and its axis, or `None` against N.
    x_axis: Option<(Metric, Axis)>,
    x_lo: f64,
    x_hi: f64,
    /// The ticks drawn by hand on a log x axis.
    x_ticks: Vec<f64>,
    /// Against the load: the log₂ of the smallest load (at most 0, so N starts at 1), and where an unbounded
    /// rate sits (one step right of the largest finite load, past a break in the axis), when a point is at one.
    load_lo: f64,
    inf_at: Option<f64>,
    /// Against the load: its ticks, by hand (`1`, `2`, `4`, …, `∞`), and where the axis breaks before `∞`.
    load_ticks: Vec<(f64, String)>,
    axis_break: Option<f64>,
    /// Against the load: its kind, which names the axis.
    load_kind: LoadKind,
}

/// Where loads sit on a log₂ axis: the log₂ of the smallest finite load (at most 0), of the largest (at least
/// 1, so an axis spans N = 1 to 2 at least; `None` when every load is unbounded), and the unbounded rate's slot,
/// one step right of the largest finite load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct LoadLayout {
    pub(super) lo: f64,
    pub(super) hi: Option<f64>,
    pub(super) inf_at: Option<f64>,
}

impl LoadLayout {
    /// The layout of loads whose finite values run from `low` to `high` (`low` infinite when there is none),
    /// with or without an unbounded rate.
    pub(super) fn of(low: f64, high: f64, inf: bool) -> LoadLayout {
        let finite = low.is_finite();
        let lo = if finite { low.log2().min(0.0) } else { 0.0 };
        // An axis of unbounded rates alone has no finite slot: the ∞ slot stands alone.
        let hi = (finite || !inf).then(|| high.max(2.0).log2());
        let inf_at = inf.then(|| hi.map_or(lo, |hi| hi + 1.0));
        LoadLayout { lo, hi, inf_at }
    }

    /// The ticks: each power of two from the smallest to the largest finite load (every other one past nine),
    /// then `∞` at the unbounded rate's slot.
    pub(super) fn ticks(self) -> Vec<(f64, String)> {
        let mut ticks: Vec<(f64, String)> = Vec::new();
        if let Some(hi) = self.hi {
            let mut step = self.lo.ceil() as i32;
            while f64::from(step) <= hi + 1e-9 {
                ticks.push((f64::from(step), format!("{}", 2f64.powi(step))));
                step += 1;
            }
        }
        while ticks.len() > 9 {
            ticks = ticks.into_iter().step_by(2).collect();
        }
        ticks.extend(self.inf_at.map(|at| (at, "∞".to_string())));
        ticks
    }

    /// Where the axis breaks: halfway between the largest finite load and the ∞ slot, when there are both.
    pub(super) fn axis_break(self) -> Option<f64> {
        Some((self.hi? + self.inf_at?) / 2.0)
    }

    /// The x range plotted, with a little room either side.
    fn range(self) -> Range<f64> {
        let right = self.inf_at.or(self.hi).unwrap_or(self.lo);
        self.lo - 0.25..right + 0.35
    }
}

/// The loads on x over every point and skipped end: the smallest and largest finite value, whether an unbounded
/// rate is among them, and the kind of the first (a chart holds one kind).
fn load_extent(spec: &CurveSpec<'_>) -> (f64, f64, bool, LoadKind) {
    let loads = spec
        .facets
        .iter()
        .flat_map(|facet| &facet.series)
        .flat_map(|series| {
            series
                .points
                .iter()
                .map(|point| point.load)
                .chain(series.skipped_at)
        });
    let (mut low, mut high, mut inf, mut kind) = (f64::INFINITY, 0.0f64, false, None);
    for load in loads {
        kind.get_or_insert(load.kind());
        match load.value() {
            Some(value) if value.is_infinite() => inf = true,
            Some(value) => {
                low = low.min(value);
                high = high.max(value);
            }
            None => {}
        }
    }
    (low, high, inf, kind.unwrap_or(LoadKind::Concurrency))
}

impl<'s> Curves<'s> {
    fn of(spec: &'s CurveSpec<'s>) -> Curves<'s> {
        let (low, high, inf, points_kind) = load_extent(spec);
        let layout = LoadLayout::of(low, high, inf);
        let (mut smallest, mut largest) = extent_of(spec.facets);
        // The SLO's bound is on the chart even where every series is far below it.
        if let Some(line) = &spec.slo_line {
            smallest = smallest.min(line.value);
            largest = largest.max(line.value);
        }
        let axis = Axis::for_metric(spec.metric, smallest, largest);
        let y_range = axis.range();
        let ticks = axis.log_ticks(spec.metric);
        // The x axis: log₂ N with a little room either side, or the x metric's own axis (linear or log).
        let x_axis = spec.x.metric().map(|x| {
            let (smallest, largest) = x_extent_of(spec.facets);
            (x, Axis::for_metric(x, smallest, largest))
        });
        let x_range = match x_axis {
            None => layout.range(),
            Some((_, x_axis)) => x_axis.range(),
        };
        let x_ticks = x_axis.map_or_else(Vec::new, |(x, x_axis)| x_axis.log_ticks(x));
        Curves {
            spec,
            axis,
            y_min: y_range.start,
            y_max: y_range.end,
            ticks,
            x_axis,
            x_lo: x_range.start,
            x_hi: x_range.end,
            x_ticks,
            load_lo: layout.lo,
            inf_at: layout.inf_at,
            load_ticks: layout.ticks(),
            axis_break: layout.axis_break(),
            load_kind: spec.load_kind.unwrap_or(points_kind),
        }
    }

    /// Backend pixels of `value` CSS pixels.
    fn px(&self, value: f64) -> i32 {
        (value * self.spec.scale).round() as i32
    }

    fn font(&self, size: f64) -> (&'static str, i32) {
        ("sans-serif", self.px(size))
    }

    /// The plotted x of a point's x: log₂ N, or on the x metric's axis.
    fn x_of(&self, value: f64) -> f64 {
        match self.x_axis {
            None if value.is_infinite() => self.inf_at.unwrap_or(0.0),
            None => value.max(f64::MIN_POSITIVE).log2().max(self.load_lo),
            Some((_, x_axis)) => x_axis.at(value),
        }
    }

    /// Where `point` is plotted with `value` on y.
    fn xy(&self, point: &SeriesPoint, value: f64) -> (f64, f64) {
        (self.x_of(point.x), self.axis.at(value))
    }

    /// A series' points joined step by step, and against the load its point at an unbounded rate (the last, in
    /// load order), which sits apart in its own slot.
    fn split_unbounded<'p>(
        &self,
        points: &'p [SeriesPoint],
    ) -> (&'p [SeriesPoint], Option<&'p SeriesPoint>) {
        match points.split_last() {
            Some((last, steps)) if self.x_axis.is_none() && last.x.is_infinite() => {
                (steps, Some(last))
            }
            _ => (points, None),
        }
    }
}

/// A panel's plot: x (log₂ N or the x metric's axis) and y as plotted.
type Plot<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A label placed at a free spot near what it names (backend pixels): its text, left-centre point, box and colour.
type Placed = (String, (i32, i32), Rect, RGBColor);

/// One panel being drawn: its area, its plot, and its labels, placed as they come and drawn last.
struct Panel<'a, DB: DrawingBackend> {
    area: &'a DrawingArea<DB, Shift>,
    chart: Plot<'a, DB>,
    /// The area's top left corner in backend pixels: what is drawn on the area is placed relative to it.
    base: (i32, i32),
    /// The plotting area in backend pixels.
    plot_x: Range<i32>,
    plot_y: Range<i32>,
    labels: LabelPlacer,
    /// The panel's labels are drawn together after its series, so that no label's backing covers another
    /// label or a later series' line.
    pending: Vec<Placed>,
}

/// Draws one facet on its panel: axes and ticks, notes, threshold, each series, then the labels.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    curves: &Curves<'_>,
    facet_index: usize,
    facet: &Facet,
    hits: &mut Vec<Hit>,
) -> Result<(), String> {
    let mut panel = Panel::new(area, curves, facet)?;
    panel.draw_ticks(curves)?;
    // The panel's notes first, along its top, so that no other label covers them; a panel without a point
    // says them in its middle instead, whole, as what it shows.
    let notes = curves
        .spec
        .notes
        .get(facet_index)
        .map_or(&[][..], Vec::as_slice);
    let empty = facet.series.iter().all(|series| series.points.is_empty());
    if empty && !notes.is_empty() {
        panel.draw_empty_notes(curves, notes)?;
    }
    for (index, note) in notes.iter().enumerate().filter(|_| !empty) {
        let width = panel.plot_x.end - panel.plot_x.start - curves.px(8.0);
        let at = (
            panel.plot_x.start + curves.px(4.0),
            panel.plot_y.start + curves.px(9.0) + curves.px(14.0) * index as i32,
        );
        panel.label(
            curves,
            fit_text(note, width, curves.px(10.0), false),
            at,
            0,
            RGBColor(150, 60, 0),
        );
    }
    if let Some(threshold) = &curves.spec.threshold {
        panel.draw_threshold(curves, threshold, RGBColor(120, 120, 120))?;
    }
    if let Some(slo) = &curves.spec.slo_line {
        panel.draw_threshold(curves, slo, RGBColor(190, 60, 20))?;
    }
    // The frontier across the panel's configurations goes under the series, dark, so every series' markers
    // stay visible on it.
    if !facet.frontier_steps.is_empty() {
        let steps = facet.frontier_steps.iter();
        panel.draw_line(
            steps.map(|(x, y)| (curves.x_of(*x), curves.axis.at(*y))),
            RGBColor(40, 40, 40).stroke_width(curves.px(3.0) as u32),
        )?;
    }
    panel.reserve_markers(curves, facet);
    for (series_index, series) in facet.series.iter().enumerate() {
        panel.draw_series(curves, series, [facet_index, series_index], hits)?;
    }
    panel.draw_labels(curves)
}

impl<'a, DB: DrawingBackend> Panel<'a, DB> {
    /// The panel's plot with its title, axes, descriptions and mesh drawn.
    fn new(
        area: &'a DrawingArea<DB, Shift>,
        curves: &Curves<'_>,
        facet: &Facet,
    ) -> Result<Panel<'a, DB>, String> {
        let spec = curves.spec;
        let px = |value: f64| curves.px(value);
        let base = area.get_base_pixel();
        let title = facet.title.as_ref().map_or_else(
            || spec.metric.label_at(spec.load_kind).to_string(),
            ToString::to_string,
        );
        // A long title (a run id, a file path) is shortened in its middle to its panel's width, so that neighbouring
        // panels' titles never run into each other.
        let (panel_x, _) = area.get_pixel_range();
        let title = fit_text(
            &title,
            panel_x.end - panel_x.start - px(16.0),
            px(14.0),
            true,
        );
        let mut chart = ChartBuilder::on(area)
            .caption(title, curves.font(14.0))
            .margin(px(8.0))
            .margin_right(px(14.0))
            .x_label_area_size(px(32.0))
            .y_label_area_size(px(64.0))
            .build_cartesian_2d(curves.x_lo..curves.x_hi, curves.y_min..curves.y_max)
            .map_err(|error| error.to_string())?;
        draw_mesh(&mut chart, curves)?;
        let (plot_x, plot_y) = chart.plotting_area().get_pixel_range();
        let labels = LabelPlacer::new((
            plot_x.start + px(2.0),
            plot_y.start + px(1.0),
            plot_x.end - px(2.0),
            plot_y.end - px(1.0),
        ));
        Ok(Panel {
            area,
            chart,
            base,
            plot_x,
            plot_y,
            labels,
            pending: Vec::new(),
        })
    }

    /// Keeps every point's marker of the panel free of labels, so that no label placed for one series covers a
    /// point of a series drawn after it.
    fn reserve_markers(&mut self, curves: &Curves<'_>, facet: &Facet) {
        let size = curves.px(5.0);
        for point in facet.series.iter().flat_map(|series| &series.points) {
            let (x, y) = self.chart.backend_coord(&curves.xy(point, point.value));
            self.labels
                .reserve((x - size, y - size, x + size, y + size));
        }
    }

    /// Places a label of `text` at a free spot near `(x + dx, y)`; it is drawn with the panel's other labels.
    fn label(
        &mut self,
        curves: &Curves<'_>,
        text: String,
        (x, y): (i32, i32),
        dx: i32,
        color: RGBColor,
    ) {
        if let Some((at, rect)) = self.labels.place(&text, (x + dx, y), curves.px(10.0)) {
            self.pending.push((text, at, rect, color));
        }
    }

    /// A text at `at` (backend pixels) on the panel's area.
    fn text(&self, text: String, at: (i32, i32), font: TextStyle<'_>) -> Result<(), String> {
        self.area
            .draw(&Text::new(
                text,
                (at.0 - self.base.0, at.1 - self.base.1),
                font,
            ))
            .map_err(|error| error.to_string())
    }

    /// The ticks of log axes, drawn by hand with their grid lines: on y, and on x against a metric.
    fn draw_ticks(&mut self, curves: &Curves<'_>) -> Result<(), String> {
        let (x_lo, x_hi) = (curves.x_lo, curves.x_hi);
        for tick in &curves.ticks {
            let y = curves.axis.at(*tick);
            self.chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x_lo, y), (x_hi, y)],
                    RGBColor(215, 215, 215),
                )))
                .map_err(|error| error.to_string())?;
            let (x, y) = self.chart.backend_coord(&(x_lo, y));
            self.text(
                tick_label(curves.spec.metric, *tick),
                (x - curves.px(5.0), y),
                curves
                    .font(11.0)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Right, VPos::Center)),
            )?;
        }
        let x_ticks: Vec<(f64, String)> = match curves.x_axis {
            None => curves.load_ticks.clone(),
            Some((x_metric, x_axis)) => curves
                .x_ticks
                .iter()
                .map(|tick| (x_axis.at(*tick), tick_label(x_metric, *tick)))
                .collect(),
        };
        for (x, label) in x_ticks {
            self.chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, curves.y_min), (x, curves.y_max)],
                    RGBColor(215, 215, 215),
                )))
                .map_err(|error| error.to_string())?;
            let (x, y) = self.chart.backend_coord(&(x, curves.y_min));
            self.text(
                label,
                (x, y + curves.px(5.0)),
                curves
                    .font(11.0)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Center, VPos::Top)),
            )?;
        }
        if let Some(at) = curves.axis_break {
            self.draw_axis_break(curves, at)?;
        }
        Ok(())
    }

    /// The break in a load axis before the unbounded rate's slot: the axis line cut and `//` across it, so `∞`
    /// never reads as the next step after the largest finite rate.
    fn draw_axis_break(&mut self, curves: &Curves<'_>, at: f64) -> Result<(), String> {
        let px = |value: f64| curves.px(value);
        let (x, y) = self.chart.backend_coord(&(at, curves.y_min));
        let base = self.base;
        self.area
            .draw(&Rectangle::new(
                [
                    (x - px(5.0) - base.0, y - px(3.0) - base.1),
                    (x + px(5.0) - base.0, y + px(3.0) - base.1),
                ],
                WHITE.filled(),
            ))
            .map_err(|error| error.to_string())?;
        self.text(
            "//".to_string(),
            (x, y),
            curves
                .font(12.0)
                .into_font()
                .color(&RGBColor(60, 60, 60))
                .pos(Pos::new(HPos::Center, VPos::Center)),
        )
    }

    /// The notes of a panel without a point, whole, over lines in its middle; their boxes are taken from the
    /// labels' room.
    fn draw_empty_notes(&mut self, curves: &Curves<'_>, notes: &[String]) -> Result<(), String> {
        let px = |value: f64| curves.px(value);
        let (plot_x, plot_y) = (self.plot_x.clone(), self.plot_y.clone());
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
            self.labels.placed.push((
                centre - text_width(&line, px(12.0)) / 2,
                y - line_height / 2,
                centre + text_width(&line, px(12.0)) / 2,
                y + line_height / 2,
            ));
            self.text(
                line,
                (centre, y),
                curves
                    .font(12.0)
                    .into_font()
                    .color(&RGBColor(150, 60, 0))
                    .pos(Pos::new(HPos::Center, VPos::Center)),
            )?;
        }
        Ok(())
    }

    /// A threshold (the criterion's, or the SLO's bound) as a dashed line across the panel in `color`, labelled
    /// with its words at its left end.
    fn draw_threshold(
        &mut self,
        curves: &Curves<'_>,
        threshold: &Threshold,
        color: RGBColor,
    ) -> Result<(), String> {
        let (x_lo, x_hi) = (curves.x_lo, curves.x_hi);
        let y = curves.axis.at(threshold.value);
        let style = color.stroke_width(curves.px(1.0).max(1) as u32);
        let width = x_hi - x_lo;
        let dashes: Vec<_> = (0..40)
            .map(|index| {
                let start = x_lo + width * f64::from(index) / 40.0;
                PathElement::new(vec![(start, y), (start + width / 80.0, y)], style)
            })
            .collect();
        self.chart
            .draw_series(dashes)
            .map_err(|error| error.to_string())?;
        // Above the dashed line, at its left end, where curves start high and rarely pass.
        let (x, y) = self.chart.backend_coord(&(x_lo + width * 0.01, y));
        self.label(
            curves,
            threshold.label.clone(),
            (x, y - curves.px(8.0)),
            0,
            color,
        );
        Ok(())
    }

    /// One series: its band, line, frontier and markers, its labels, breakdown ring and skipped end, and a hit
    /// for each point (`at` is its facet and series index).
    fn draw_series(
        &mut self,
        curves: &Curves<'_>,
        series: &Series,
        at: [usize; 2],
        hits: &mut Vec<Hit>,
    ) -> Result<(), String> {
        let (color, marker) = curves
            .spec
            .styles
            .get(&series.legend)
            .copied()
            .unwrap_or(((0, 0, 0), palette::Marker::Circle));
        let color = rgb(color);
        self.draw_band(curves, series, color)?;
        self.draw_lines(curves, series, color)?;
        self.draw_markers(curves, series, color, marker)?;
        self.label_points(curves, series, color);
        self.draw_breakdown(curves, series, color)?;
        if let (Some(skipped_at), Some(last)) = (series.skipped_at, series.points.last()) {
            let hit = self.draw_skipped_end(curves, series, (skipped_at, last), color)?;
            hits.push(hit);
        }
        let scale = curves.spec.scale;
        for (index, point) in series.points.iter().enumerate() {
            let (x, y) = self.chart.backend_coord(&curves.xy(point, point.value));
            hits.push(Hit {
                x: f64::from(x) / scale,
                y: f64::from(y) / scale,
                text: String::new(),
                keys: Vec::new().into(),
                cells: point.cells as usize,
                point: Some([at[0], at[1], index]),
            });
        }
        Ok(())
    }

    /// The band of a series: a filled area against N; against a metric, where the points do not follow x in
    /// order, a cross of whiskers at each point: the plotted value's band upright, the x metric's across.
    fn draw_band(
        &mut self,
        curves: &Curves<'_>,
        series: &Series,
        color: RGBColor,
    ) -> Result<(), String> {
        let xy = |point: &SeriesPoint, value: f64| curves.xy(point, value);
        let (steps, unbounded) = curves.split_unbounded(&series.points);
        if curves.x_axis.is_none() && steps.len() > 1 {
            let mut band: Vec<(f64, f64)> =
                steps.iter().map(|point| xy(point, point.max)).collect();
            band.extend(steps.iter().rev().map(|point| xy(point, point.min)));
            self.chart
                .draw_series(std::iter::once(Polygon::new(band, color.mix(0.18))))
                .map_err(|error| error.to_string())?;
        }
        // The unbounded rate's band is its own: an upright whisker in its slot, never joined to the others.
        if let Some(point) = unbounded.filter(|point| point.cells > 1) {
            let whisker = color.mix(0.4).stroke_width(curves.px(2.0).max(1) as u32);
            self.chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![xy(point, point.min), xy(point, point.max)],
                    whisker,
                )))
                .map_err(|error| error.to_string())?;
        }
        if curves.x_axis.is_some() {
            let whisker = color.mix(0.4).stroke_width(curves.px(1.0).max(1) as u32);
            let whiskers: Vec<_> = series
                .points
                .iter()
                .filter(|point| point.cells > 1)
                .flat_map(|point| {
                    let y = curves.axis.at(point.value);
                    [
                        PathElement::new(vec![xy(point, point.min), xy(point, point.max)], whisker),
                        PathElement::new(
                            vec![(curves.x_of(point.x_min), y), (curves.x_of(point.x_max), y)],
                            whisker,
                        ),
                    ]
                })
                .collect();
            self.chart
                .draw_series(whiskers)
                .map_err(|error| error.to_string())?;
        }
        Ok(())
    }

    /// The line joining a series' points in N order and, when it carries one, its frontier drawn bold.
    fn draw_lines(
        &mut self,
        curves: &Curves<'_>,
        series: &Series,
        color: RGBColor,
    ) -> Result<(), String> {
        let px = |value: f64| curves.px(value);
        let frontier = series.frontier.as_ref();
        // With a frontier the points' N order steps back (thin and light) behind the bold frontier.
        let line_style = if frontier.is_some() {
            color.mix(0.45).stroke_width(px(1.0).max(1) as u32)
        } else {
            color.stroke_width(px(2.0) as u32)
        };
        let (steps, unbounded) = curves.split_unbounded(&series.points);
        self.draw_line(
            steps.iter().map(|point| curves.xy(point, point.value)),
            line_style,
        )?;
        // All at once is not the next step after the largest finite rate: a dashed segment across the axis' break.
        if let (Some(last), Some(point)) = (steps.last(), unbounded) {
            let from = curves.xy(last, last.value);
            self.draw_dashed(curves, from, curves.xy(point, point.value), color)?;
        }
        if let Some(frontier) = frontier {
            let steps = frontier.steps.iter();
            let bold = color.stroke_width(px(3.5) as u32);
            self.draw_line(
                steps.map(|(x, y)| (curves.x_of(*x), curves.axis.at(*y))),
                bold,
            )?;
        }
        Ok(())
    }

    /// A line through `points` (plot coordinates).
    fn draw_line(
        &mut self,
        points: impl Iterator<Item = (f64, f64)>,
        style: ShapeStyle,
    ) -> Result<(), String> {
        self.chart
            .draw_series(LineSeries::new(points, style))
            .map_err(|error| error.to_string())?;
        Ok(())
    }

    /// Each point's marker. A point resting on partial cells is hollow: its value comes from fewer rows than
    /// planned. With a frontier, hollow means dominated, and partial cells are marked ◐ beside the point instead.
    /// A point resting on failed cells (some requests not ok) is hollow and crossed ✕, as the matrix marks them.
    fn draw_markers(
        &mut self,
        curves: &Curves<'_>,
        series: &Series,
        color: RGBColor,
        marker: palette::Marker,
    ) -> Result<(), String> {
        let px = |value: f64| curves.px(value);
        let frontier = series.frontier.as_ref();
        for (index, point) in series.points.iter().enumerate() {
            let at = curves.xy(point, point.value);
            let hollow = if frontier.is_some() {
                series.is_dominated(index)
            } else {
                point.partial > 0 || point.failed > 0
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
            let chart = &mut self.chart;
            let drawn = match marker {
                palette::Marker::Circle => {
                    chart.draw_series(std::iter::once(Circle::new(at, size, style).into_dyn()))
                }
                palette::Marker::Square => chart.draw_series(std::iter::once(
                    EmptyElement::at(at) + Rectangle::new([(-size, -size), (size, size)], style),
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
            if point.failed > 0 {
                let cross = color.stroke_width(px(1.5).max(1) as u32);
                chart
                    .draw_series(std::iter::once(Cross::new(at, px(5.0), cross)))
                    .map_err(|error| error.to_string())?;
            }
        }
        Ok(())
    }

    /// The labels beside a series' points: the value of each point resting on partial cells, and against a
    /// metric the N of its first and last point.
    fn label_points(&mut self, curves: &Curves<'_>, series: &Series, color: RGBColor) {
        let px = |value: f64| curves.px(value);
        // A point resting on partial cells says so beside it, with its value: a hung cell's efficiency of
        // 0.0005 sits on the axis's zero line but is not zero.
        for point in series.points.iter().filter(|point| point.partial > 0) {
            let (x, y) = self.chart.backend_coord(&curves.xy(point, point.value));
            self.label(
                curves,
                format!("◐ {}", value_text(curves.spec.metric, point.value)),
                (x, y - px(10.0)),
                px(6.0),
                RGBColor(60, 60, 60),
            );
        }
        if curves.x_axis.is_some() {
            // Against a metric, where a series starts and ends in N is not where it sits on x: say it.
            let ends = match series.points.as_slice() {
                [] => Vec::new(),
                [only] => vec![only],
                [first, .., last] => vec![first, last],
            };
            // The breakdown ring's `N*=` label already names its N.
            for point in ends
                .into_iter()
                .filter(|point| series.breakdown.load() != Some(point.load))
            {
                let at = self.chart.backend_coord(&curves.xy(point, point.value));
                self.label(curves, point.load.label(), at, px(8.0), color);
            }
        }
    }

    /// The ring around the point where the series breaks down, labelled with its N.
    fn draw_breakdown(
        &mut self,
        curves: &Curves<'_>,
        series: &Series,
        color: RGBColor,
    ) -> Result<(), String> {
        let px = |value: f64| curves.px(value);
        if let Some(breakdown) = series.breakdown.load()
            && let Some(point) = series.points.iter().find(|point| point.load == breakdown)
        {
            let at = curves.xy(point, point.value);
            let ring = color.stroke_width(px(2.0) as u32);
            self.chart
                .draw_series(std::iter::once(Circle::new(at, px(7.0), ring)))
                .map_err(|error| error.to_string())?;
            let coord = self.chart.backend_coord(&at);
            let text = match breakdown {
                Load::Concurrency(n) => format!("N*={n}"),
                other => format!("saturates at {}", other.label()),
            };
            self.label(curves, text, coord, px(9.0), color);
        }
        Ok(())
    }

    /// The end of a series at a skipped cell: ⊘ (after a dotted stub against N) with the skip reason beside it;
    /// its hit.
    fn draw_skipped_end(
        &mut self,
        curves: &Curves<'_>,
        series: &Series,
        (skipped_at, last): (Load, &SeriesPoint),
        color: RGBColor,
    ) -> Result<Hit, String> {
        let px = |value: f64| curves.px(value);
        let spec = curves.spec;
        let stroke = color.stroke_width(px(2.0) as u32);
        let from = curves.xy(last, last.value);
        // The mark, in backend pixels: at the skipped N against N; against a metric the skipped cells
        // have no value to sit at, so it stands just right of the series' last point.
        let to = match curves.x_axis {
            None => {
                // The curve ends at a skipped cell: a dotted stub at the last value, never a drop to 0.
                let to = (curves.x_of(skipped_at.value().unwrap_or(1.0)), from.1);
                self.draw_dashed(curves, from, to, color)?;
                self.chart.backend_coord(&to)
            }
            Some(_) => {
                let (x, y) = self.chart.backend_coord(&from);
                (x + px(16.0), y)
            }
        };
        // ⊘, the matrix's mark of a skipped cell (✕ marks failed cells there and on the points).
        let (x, y) = (to.0 - self.base.0, to.1 - self.base.1);
        let (radius, slash) = (px(6.0), px(4.3));
        self.area
            .draw(&Circle::new((x, y), radius, stroke))
            .map_err(|error| error.to_string())?;
        self.area
            .draw(&PathElement::new(
                vec![(x - slash, y + slash), (x + slash, y - slash)],
                stroke,
            ))
            .map_err(|error| error.to_string())?;
        let text = match curves.x_axis {
            None => format!("skipped: {}", (spec.skip_reason)(series)),
            Some(_) => format!(
                "skipped at {}: {}",
                skipped_at.label(),
                (spec.skip_reason)(series)
            ),
        };
        // The reason sits on the side of the mark with room: left of it at the panel's right half (the
        // mark is at the right edge against N).
        let width = text_width(&text, px(10.0));
        let (left, _) = self.area.get_pixel_range();
        let right_half = to.0 > (left.start + left.end) / 2;
        self.label(
            curves,
            text,
            (to.0, to.1 - px(12.0)),
            if right_half {
                -width - px(8.0)
            } else {
                px(8.0)
            },
            RGBColor(60, 60, 60),
        );
        Ok(Hit {
            x: f64::from(to.0) / spec.scale,
            y: f64::from(to.1) / spec.scale,
            text: format!(
                "{} · {}\nskipped: {}",
                series.legend,
                skipped_at.label(),
                (spec.skip_reason)(series)
            ),
            keys: series.skipped_cells.as_slice().into(),
            cells: series.skipped_cells.len(),
            point: None,
        })
    }

    /// A dotted line from `from` to `to` (plot coordinates): every other of twelve steps.
    fn draw_dashed(
        &mut self,
        curves: &Curves<'_>,
        from: (f64, f64),
        to: (f64, f64),
        color: RGBColor,
    ) -> Result<(), String> {
        let dotted = color.mix(0.7).stroke_width(curves.px(1.0).max(1) as u32);
        let steps = 12;
        let at = |step: i32| {
            let share = f64::from(step) / f64::from(steps);
            (
                from.0 + (to.0 - from.0) * share,
                from.1 + (to.1 - from.1) * share,
            )
        };
        let segments: Vec<_> = (0..steps)
            .filter(|step| step % 2 == 0)
            .map(|step| PathElement::new(vec![at(step), at(step + 1)], dotted))
            .collect();
        self.chart
            .draw_series(segments)
            .map_err(|error| error.to_string())?;
        Ok(())
    }

    /// The panel's labels. A light backing keeps each readable where it crosses a line or a band; every
    /// backing goes down before any text, so none covers another label.
    fn draw_labels(self, curves: &Curves<'_>) -> Result<(), String> {
        let base = self.base;
        for (_, _, (left, top, right, bottom), _) in &self.pending {
            self.area
                .draw(&Rectangle::new(
                    [
                        (left - base.0, top - base.1),
                        (right - base.0, bottom - base.1),
                    ],
                    WHITE.mix(0.75).filled(),
                ))
                .map_err(|error| error.to_string())?;
        }
        for (text, at, _, color) in self.pending.iter().cloned() {
            self.text(
                text,
                at,
                curves
                    .font(10.0)
                    .into_font()
                    .color(&color)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            )?;
        }
        Ok(())
    }
}

/// Configures and draws a panel's mesh: axis descriptions and, on linear axes, plotters' own ticks (log axes and
/// the load axis get theirs by hand, [`Panel::draw_ticks`]).
fn draw_mesh<DB: DrawingBackend>(
    chart: &mut Plot<'_, DB>,
    curves: &Curves<'_>,
) -> Result<(), String> {
    let spec = curves.spec;
    let y_formatter = |y: &f64| tick_label(spec.metric, *y);
    let x_formatter = |x: &f64| {
        curves
            .x_axis
            .map_or_else(String::new, |(metric, _)| tick_label(metric, *x))
    };
    let kind = Some(curves.load_kind);
    let mut mesh = chart.configure_mesh();
    mesh.x_labels(6)
        .x_label_formatter(&x_formatter)
        .y_label_formatter(&y_formatter)
        .x_desc(spec.x.label_at(kind))
        .y_desc(spec.metric.label_at(spec.load_kind))
        .label_style(curves.font(11.0))
        .axis_desc_style(curves.font(11.0))
        // Fine mesh lines cost a canvas call each and add little: one between labels is enough.
        .max_light_lines(1)
        .y_labels(6)
        .light_line_style(RGBColor(240, 240, 240))
        .bold_line_style(RGBColor(215, 215, 215));
    if !curves.ticks.is_empty() {
        // Log axes get their ticks by hand.
        mesh.y_labels(0);
    }
    if !curves.x_ticks.is_empty() || curves.x_axis.is_none() {
        mesh.x_labels(0);
    }
    mesh.draw().map_err(|error| error.to_string())
}
