//! The curves view as data: one facet per panel, one series per colour, each point a pooled value of the curve
//! engine, on the load axis or against a metric.

use super::{
    Value, applied_comparisons, curve_dimensions, curve_options, filtered, inclusion, pareto,
    part_of,
};
use crate::curve::{Breakdown, CurveCells, CurveOptions, curves_with_cells};
use crate::key::{CellKey, Dimension, DimensionValue};
use crate::load::{Load, LoadKind};
use crate::metric::Metric;
use crate::origin::Mark;
use crate::stat::Stat;
use crate::status::CellStatus;
use crate::summary::{CellSummary, Inclusion};
use crate::view_state::{ViewState, XAxis};
use std::collections::{BTreeMap, BTreeSet};

/// One load of a plotted series.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesPoint {
    /// The load.
    pub load: Load,
    /// Where the point sits on the x axis ([`XAxis`]): N itself, or the x metric's aggregate and band, pooled
    /// like the plotted value.
    pub x: f64,
    /// The lower end of the x band.
    pub x_min: f64,
    /// The upper end of the x band.
    pub x_max: f64,
    /// The plotted metric: aggregate, and the band (min–max over the pooled cells).
    pub value: f64,
    /// The lower end of the band.
    pub min: f64,
    /// The upper end of the band.
    pub max: f64,
    /// The pooled efficiency.
    pub efficiency: Option<f64>,
    /// The pooled p95 multiplier.
    pub p95_multiplier: Option<f64>,
    /// Cells (reps × pooled series) behind the value.
    pub cells: u32,
    /// Series pooled at this N.
    pub series: u32,
    /// Σ ok rows of the cells behind it.
    pub ok_rows: u64,
    /// Σ expected rows of the cells behind it.
    pub expected_rows: u64,
    /// Partial cells among them (drawn hollow: the value rests on fewer rows than planned).
    pub partial: u32,
    /// Failed cells among them (drawn crossed: some of their requests were not ok, and only the ok ones count).
    pub failed: u32,
    /// What the value pools.
    pub pooling: crate::pooling::Pooling,
    /// Cells behind the point whose value on either axis is the tool's reported figure ([`Mark::Reported`]),
    /// and those resting on a derived one ([`Mark::Derived`]).
    pub reported: u32,
    /// Cells behind the point resting on a derived figure.
    pub derived: u32,
}

impl SeriesPoint {
    /// `†`, `‡`, both or nothing, as the matrix writes it.
    pub fn sign(&self) -> String {
        Mark::signs(self.reported, self.derived)
    }

    /// Hover lines for the point's signs (`† 1 of 3 cells: reported by the tool, …`).
    pub fn origin_lines(&self) -> Vec<String> {
        Mark::group_lines(self.reported, self.derived, self.cells)
    }
}

#[derive(Clone, Debug, PartialEq)]
/// One plotted series: a value of the colour dimension, with its points.
pub struct Series {
    /// The series' value of the colour dimension.
    pub label: Value,
    /// What the legend, the table and a tooltip call the series: its label, or, coloured by configuration, the
    /// parts of its configuration that differ between the series drawn.
    pub legend: String,
    /// What its points pool of deployments (`pools tp 4, 8`), shown beside its name; `None` when each point is
    /// one deployment's.
    pub badge: Option<String>,
    /// Its points, in ascending N.
    pub points: Vec<SeriesPoint>,
    /// Where the aggregated curve breaks under the criterion.
    pub breakdown: Breakdown,
    /// The first N past the last data point where the series' cells are skipped: the curve ends there.
    pub skipped_at: Option<Load>,
    /// The skipped cells there.
    pub skipped_cells: Vec<CellKey>,
    /// Cells with data the inclusion policy leaves out (exclusions, partial toggle).
    pub left_out: u32,
    /// Ns with admitted cells with data but no value of the plotted metric (or of the x metric): left out of
    /// `points`, never drawn as zero, and counted so the view can say so.
    pub without_value: u32,
    /// The series' Pareto frontier, when the view asks for it and has a metric on x: its own, or its points on
    /// the panel's frontier across series ([`Frontier::across_series`]).
    pub frontier: Option<Frontier>,
    /// When a frontier is asked for but some of the series' points pool several configurations: the widest of
    /// them. Such points are on no frontier, and the view says so.
    pub frontier_withheld: Option<crate::pooling::Pooling>,
    /// The series' capacity under the link's SLO in words (`≥ 4 req/s (not reached)`, `never met (fails at
    /// N=1)`), when the link names an SLO and the curves are against the load.
    pub slo_capacity: Option<String>,
}

/// The points of a series no other point of it beats on both axes ([`crate::frontier`]), in the chart's
/// coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct Frontier {
    /// Indices into the series' points, in ascending x.
    pub members: Vec<usize>,
    /// The staircase through them, `(x, value)` pairs to draw in order (empty across series: the panel draws
    /// its own, [`Facet::frontier_steps`]).
    pub steps: Vec<(f64, f64)>,
    /// Whether the members are on the panel's frontier across every series rather than the series' own.
    pub across_series: bool,
}

impl Series {
    /// Whether the point at `index` is beaten on both axes by another point of the series (drawn hollow when
    /// the frontier is shown); `false` when no frontier is computed.
    pub fn is_dominated(&self, index: usize) -> bool {
        self.frontier
            .as_ref()
            .is_some_and(|frontier| !frontier.members.contains(&index))
    }

    /// The loads of the frontier's points, in its order (ascending x).
    pub fn frontier_loads(&self) -> Vec<Load> {
        self.frontier.as_ref().map_or_else(Vec::new, |frontier| {
            frontier
                .members
                .iter()
                .map(|index| self.points[*index].load)
                .collect()
        })
    }

    /// The breakdown as the series table says it: at N, "never within N ≤ 32", "no data", or "excluded" when
    /// the view leaves every cell with data out.
    pub fn breakdown_label(&self) -> String {
        if self.points.is_empty() && self.left_out > 0 {
            "excluded".into()
        } else {
            self.breakdown.label()
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
/// One panel of the curves: a value of the facet dimension, with its series.
pub struct Facet {
    /// The facet's value, `None` without facets.
    pub title: Option<Value>,
    /// Its series.
    pub series: Vec<Series>,
    /// The staircase of the frontier across its series ([`crate::view_state::FrontierMode::Panel`]), empty
    /// otherwise.
    pub frontier_steps: Vec<(f64, f64)>,
}

/// Curves of `metric` against `state.x` (N, or another per-cell metric): one facet per `state.facet` value, one
/// series per `state.color` value, each a curve of the engine, its points in ascending N whatever the x axis.
/// With a metric on x, each point is placed at the x metric's value pooled exactly like the plotted one, and
/// with `state.frontier` each series carries its Pareto frontier in those coordinates.
pub fn curves(cells: &[CellSummary], state: &ViewState, metric: Metric) -> Vec<Facet> {
    let slice = filtered(cells, state);
    let comparisons = applied_comparisons(&slice, part_of(&curve_dimensions(state)));
    curves_of(&slice, comparisons, state, metric)
}

/// The kind of load the curves put on x: none against a metric (every cell is a point there), else the kind
/// the link names when the slice has it, else the kind most cells with a stated load have (concurrency on a
/// tie). One axis never mixes concurrencies and rates: N = 2 and 2 req/s are different things.
pub fn load_kind_on_x(slice: &[&CellSummary], state: &ViewState) -> Option<LoadKind> {
    if state.x != XAxis::Load {
        return None;
    }
    let count = |kind: LoadKind| {
        slice
            .iter()
            .filter(|cell| cell.key.load.kind() == kind)
            .count()
    };
    let (concurrency, rate) = (count(LoadKind::Concurrency), count(LoadKind::Rate));
    match state.load_kind {
        Some(LoadKind::Rate) if rate > 0 => Some(LoadKind::Rate),
        Some(LoadKind::Concurrency) if concurrency > 0 => Some(LoadKind::Concurrency),
        _ if rate > concurrency => Some(LoadKind::Rate),
        _ => Some(LoadKind::Concurrency),
    }
}

/// The cells the curves draw: against the load, only those of [`load_kind_on_x`].
pub fn on_curves<'a>(slice: &[&'a CellSummary], state: &ViewState) -> Vec<&'a CellSummary> {
    let kind = load_kind_on_x(slice, state);
    slice
        .iter()
        .copied()
        .filter(|cell| kind.is_none_or(|kind| cell.key.load.kind() == kind))
        .collect()
}

/// What the load axis leaves out, in words: `7 cells at offered rates and 2 with no stated load are not on this
/// axis (it holds one kind of load; plot against a metric to see every cell)`. `None` when nothing is left out.
pub fn off_the_load_axis(slice: &[&CellSummary], state: &ViewState) -> Option<String> {
    let shown = load_kind_on_x(slice, state)?;
    let parts: Vec<String> = LoadKind::ALL
        .into_iter()
        .filter(|kind| *kind != shown)
        .filter_map(|kind| {
            let count = slice
                .iter()
                .filter(|cell| cell.key.load.kind() == kind)
                .count();
            let plural = if count == 1 { "" } else { "s" };
            (count > 0).then(|| match kind {
                LoadKind::Concurrency => format!("{count} cell{plural} at a concurrency N"),
                LoadKind::Rate => format!("{count} cell{plural} at an offered rate"),
                LoadKind::Unstated => format!("{count} cell{plural} with no stated load"),
            })
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "{} not on this axis: it holds one kind of load ({}). Choose the kind above, or plot against a \
             metric to see every cell.",
            parts.join(" and "),
            shown.axis_label()
        )
    })
}

/// [`curves`] from the cells already filtered and the comparison entries that apply to them in the curves
/// ([`view_comparisons`] of a curves view).
pub fn curves_of<'a>(
    slice: &[&'a CellSummary],
    comparisons: BTreeSet<String>,
    state: &ViewState,
    metric: Metric,
) -> Vec<Facet> {
    let slice = &on_curves(slice, state);
    // A series shows its metric against N or the x metric, and says its efficiency, p95 multiplier and
    // breakdown: only these are pooled, not every per-cell metric at every point.
    let options = CurveOptions {
        metrics: Some(
            [
                metric,
                Metric::Stat(Stat::Efficiency),
                Metric::Stat(Stat::P95Multiplier),
            ]
            .into_iter()
            .chain(state.x.metric())
            .collect(),
        ),
        ..curve_options(state, comparisons)
    };
    // Grouped by the borrowed values (no text copied per cell); each series owns its label.
    let group = |cell: &'a CellSummary| -> CurveGroup<'a> {
        (
            state.facet.map(|facet| cell.key.value(facet)),
            cell.key.value(state.color),
        )
    };
    let mut facets: BTreeMap<Option<Value>, Vec<(Series, ConfigurationParts)>> = BTreeMap::new();
    for grouped in curves_with_cells(slice.iter().copied(), group, &options) {
        let series = series(&grouped, &options, state, metric);
        let parts = grouped
            .cells
            .iter()
            .flatten()
            .next()
            .map(|cell| configuration_parts(&cell.key))
            .unwrap_or_default();
        facets
            .entry(grouped.curve.group.0.map(Value::from))
            .or_default()
            .push((series, parts));
    }
    let mut parts = Vec::new();
    let mut facets: Vec<Facet> = facets
        .into_iter()
        .map(|(title, series)| Facet {
            title,
            series: series
                .into_iter()
                .map(|(series, of_series)| {
                    parts.push(of_series);
                    series
                })
                .collect(),
            frontier_steps: Vec::new(),
        })
        .collect();
    if state.color == Dimension::Configuration {
        pareto::fill_configuration_legends(&mut facets, &parts);
    }
    pareto::badge_pooled_deployments(&mut facets);
    pareto::fill_panel_frontiers(&mut facets, state, metric);
    facets
}

/// A configuration as (part, value) pairs: backend, model, then each deployment parameter.
type ConfigurationParts = Vec<(String, String)>;

/// The parts of one cell's configuration, in that order.
fn configuration_parts(key: &CellKey) -> ConfigurationParts {
    [
        ("backend".to_string(), key.backend.clone()),
        ("model".to_string(), key.model.clone()),
    ]
    .into_iter()
    .chain(
        key.config
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string())),
    )
    .collect()
}

/// A series' facet and colour values, borrowed from its cells.
type CurveGroup<'a> = (Option<DimensionValue<'a>>, DimensionValue<'a>);

fn series(
    grouped: &CurveCells<'_, CurveGroup<'_>>,
    options: &CurveOptions,
    state: &ViewState,
    metric: Metric,
) -> Series {
    let curve = &grouped.curve;
    let inclusion = &options.inclusion;
    // The cells behind the point at `index`: its group's admitted cells with data there, in slice order.
    let cells_at = |index: usize| -> Vec<&CellSummary> {
        grouped.cells[index]
            .iter()
            .copied()
            .filter(|cell| behind_point(cell, inclusion))
            .collect()
    };
    // A point is marked when either of its coordinates rests on a cell's reported (or derived) figure.
    let shown: Vec<&str> = std::iter::once(metric.name())
        .chain(state.x.metric().map(Metric::name))
        .collect();
    let marks_of = |cells: &[&CellSummary], mark: Mark| -> u32 {
        cells
            .iter()
            .filter(|cell| {
                shown
                    .iter()
                    .any(|column| Mark::of(&cell.origin, column) == mark)
            })
            .count() as u32
    };
    // A point needs a value on both axes: one without is left out and counted, never drawn at zero.
    let mut without_value = 0;
    let points: Vec<SeriesPoint> = curve
        .points
        .iter()
        .enumerate()
        .filter_map(|(index, point)| {
            let placed = point.band(metric).zip(match state.x {
                XAxis::Load => point.load.value().map(|value| crate::curve::Band {
                    value,
                    min: value,
                    max: value,
                }),
                XAxis::Metric(x) => point.band(x),
            });
            let Some((band, x)) = placed else {
                without_value += u32::from(point.cells > 0);
                return None;
            };
            let cells = cells_at(index);
            Some(SeriesPoint {
                reported: marks_of(&cells, Mark::Reported),
                derived: marks_of(&cells, Mark::Derived),
                load: point.load,
                x: x.value,
                x_min: x.min,
                x_max: x.max,
                value: band.value,
                min: band.min,
                max: band.max,
                efficiency: point.efficiency().map(|band| band.value),
                p95_multiplier: point.p95_multiplier().map(|band| band.value),
                pooling: point.pooling.clone(),
                cells: point.cells,
                series: point.series,
                ok_rows: point.ok_rows,
                expected_rows: point.expected_rows,
                partial: point.partial,
                failed: point.failed,
            })
        })
        .collect();
    // A frontier joins real operating points: over values pooled across configurations it would name
    // trade-offs nobody measured, so it is withheld ([`frontier_withheld`] says why).
    let (frontier, frontier_withheld) = pareto::series_frontier(&points, state, metric);
    let last = points.last().map(|point| point.load);
    let skipped = curve
        .points
        .iter()
        .position(|point| last.is_none_or(|last| point.load > last) && point.skipped > 0);
    let skipped_at = skipped.map(|index| curve.points[index].load);
    let skipped_cells = skipped
        .map(|index| {
            grouped.cells[index]
                .iter()
                .filter(|cell| cell.status == CellStatus::Skipped)
                .map(|cell| cell.key.clone())
                .collect()
        })
        .unwrap_or_default();
    let label = Value::from(curve.group.1);
    // The capacity is judged over every admitted cell with data, as a matrix square of the series judges it.
    let slo_capacity = (!state.slo.is_empty() && state.x == XAxis::Load).then(|| {
        let mut behind: Vec<&CellSummary> = Vec::new();
        for index in 0..curve.points.len() {
            behind.extend(cells_at(index));
        }
        let (outcome, axis) = state.slo().capacity_of(&behind);
        outcome.label(axis)
    });
    Series {
        legend: label.to_string(),
        badge: None,
        label,
        breakdown: curve.breakdown(&state.criterion),
        points,
        skipped_at,
        skipped_cells,
        left_out: curve.points.iter().map(|point| point.left_out).sum(),
        without_value,
        frontier,
        frontier_withheld,
        slo_capacity,
    }
}

/// Whether a cell of a point's group at its N stands behind the point: it has data and the view admits it.
pub(super) fn behind_point(cell: &CellSummary, inclusion: &Inclusion) -> bool {
    cell.has_data() && inclusion.admits(cell)
}

/// The keys of the cells behind one point of [`curves_of`] (given the same slice, comparisons and state): the
/// cells of the series `label` in the facet `title` at `n` that stand behind it, in slice order. A chart asks
/// for them when a point is clicked, rather than every point carrying a copy of its cells' keys (tens of
/// thousands of them on a large sweep).
pub fn point_keys(
    slice: &[&CellSummary],
    comparisons: BTreeSet<String>,
    state: &ViewState,
    title: Option<&Value>,
    label: &Value,
    load: Load,
) -> Vec<CellKey> {
    let inclusion = inclusion(state, comparisons);
    slice
        .iter()
        .filter(|cell| {
            cell.key.load == load
                && state
                    .facet
                    .map(|facet| Value::of(&cell.key, facet))
                    .as_ref()
                    == title
                && Value::of(&cell.key, state.color) == *label
                && behind_point(cell, &inclusion)
        })
        .map(|cell| cell.key.clone())
        .collect()
}

/// Whether the curves give each value of `dimension` series or panels of its own: it is the colour or the
/// facet, or a part of the configuration one of them is.
pub(super) fn curves_split_by(state: &ViewState, dimension: Dimension) -> bool {
    let part_of_configuration = matches!(
        dimension,
        Dimension::Backend | Dimension::Model | Dimension::Param(_)
    );
    [Some(state.color), state.facet]
        .into_iter()
        .flatten()
        .any(|split| {
            split == dimension || (split == Dimension::Configuration && part_of_configuration)
        })
}
