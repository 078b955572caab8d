//! The explorer's views as data: the filtered slice, the what-if cell set, matrix grids and curve facets.
//!
//! Everything the browser draws is computed here, natively testable, from the same cell summaries and
//! metric math the server and CLI use. Curves and matrix squares come from the one curve engine
//! ([`crate::curve`]); the app only turns these structures into DOM and pixels.

use crate::curve::{Breakdown, CurveCells, CurveOptions, curves_with_cells};
use crate::exclusions::ExclusionScope;
use crate::key::{CellKey, Dimension, DimensionValue};
use crate::load::{Load, LoadKind};
use crate::metric::{Metric, Threshold};
use crate::origin::Mark;
use crate::query::WhatIf;
use crate::reasons::NoPoint;
use crate::stat::Stat;
use crate::status::CellStatus;
use crate::summary::{CellSummary, Inclusion, fill_scaling};
use crate::view_state::{View, ViewState, XAxis};
use std::collections::{BTreeMap, BTreeSet};

pub use crate::key::Value;
pub use matrix::{
    CAPACITY_MARKS, Flags, LoadScale, MatrixBase, MatrixCell, MatrixGrid, MatrixLayout, matrix,
    matrix_of, uses_at_load,
};

mod matrix;
mod opening;
mod pareto;
pub use opening::{one_load_note, opening_at_load, opening_metric, show_pareto};
pub use pareto::frontier_withheld;

/// The cells as the what-if toggles want them: refilled cells swapped for their pre-refill state when asked,
/// then efficiency and p95 multipliers recomputed against the (possibly changed) baselines.
pub fn working_cells(
    current: &[CellSummary],
    pre_refill: &[CellSummary],
    what_if: &WhatIf,
) -> Vec<CellSummary> {
    let mut cells = current.to_vec();
    if what_if.pre_refill && !pre_refill.is_empty() {
        let before: BTreeMap<&CellKey, &CellSummary> =
            crate::order::btree_map(pre_refill.iter().map(|cell| (&cell.key, cell)));
        for cell in &mut cells {
            if let Some(original) = before.get(&cell.key) {
                *cell = (*original).clone();
            }
        }
    }
    fill_scaling(&mut cells);
    cells
}

/// The cells passing the dimension filters and the N range.
pub fn filtered<'a>(cells: &'a [CellSummary], state: &ViewState) -> Vec<&'a CellSummary> {
    state.filter.apply(cells)
}

/// When the filters leave nothing: which filter(s) remove everything (each alone would leave cells if lifted).
pub fn empty_reason(cells: &[CellSummary], state: &ViewState) -> Option<String> {
    if cells.is_empty() {
        return Some("the index has no cells".into());
    }
    if !filtered(cells, state).is_empty() {
        return None;
    }
    let mut culprits = Vec::new();
    for (dimension, values) in &state.filter.values {
        let mut lifted = state.clone();
        lifted.filter.values.remove(dimension);
        if !filtered(cells, &lifted).is_empty() {
            culprits.push(format!("{}={}", dimension.name(), values.join(",")));
        }
    }
    if state.filter.load_min.is_some() || state.filter.load_max.is_some() {
        let mut lifted = state.clone();
        lifted.filter.load_min = None;
        lifted.filter.load_max = None;
        if !filtered(cells, &lifted).is_empty() {
            culprits.push(format!(
                "load range {}–{}",
                state
                    .filter
                    .load_min
                    .map_or("min".into(), |low| low.to_string()),
                state
                    .filter
                    .load_max
                    .map_or("max".into(), |high| high.to_string())
            ));
        }
    }
    Some(if culprits.is_empty() {
        "no cell matches the combination of filters (lifting any single one is not enough)".into()
    } else {
        format!(
            "no cell matches; the filter {} removes everything",
            culprits.join(" or ")
        )
    })
}

/// The `comparison`-scope ledger entries that apply in a view: those whose cells are set against another
/// backend's. `part` says where a cell is drawn (its grid, row and column, or its colour and facet); two
/// backends are set against each other when some part holds cells of one and not of the other, whatever
/// dimension carries them apart (the backend itself, the run, anything). An entry applies when its matched
/// cells of different backends are set apart, or when its cells are all of one backend and that backend is set
/// apart from another in the view; it then takes its cells out on every side. Cells of several backends pooled
/// into the same parts are not set against each other and stay in.
pub fn applied_comparisons<'a, P: Ord + Copy>(
    cells: &[&'a CellSummary],
    part: impl Fn(&'a CellSummary) -> P,
) -> BTreeSet<String> {
    // Without a `comparison`-scope cell no entry can apply: skip placing every cell.
    if !cells
        .iter()
        .any(|cell| cell.exclusion_scope == Some(ExclusionScope::Comparison))
    {
        return BTreeSet::new();
    }
    let mut matched: BTreeMap<&str, BTreeMap<&str, BTreeSet<P>>> = BTreeMap::new();
    let mut everyone: BTreeMap<&str, BTreeSet<P>> = BTreeMap::new();
    // Cells come in key order, so neighbours mostly share their backend and part: the part of the cell before
    // is already in the set, and looking it up again (thousands of text comparisons at 60,000 cells, on every
    // filter change) is skipped.
    let mut placed_last: Option<(&str, P)> = None;
    for cell in cells {
        let backend = cell.key.backend.as_str();
        let cell_part = part(cell);
        if cell.exclusion_scope == Some(ExclusionScope::Comparison) {
            for id in &cell.excluded {
                matched
                    .entry(id.as_str())
                    .or_default()
                    .entry(backend)
                    .or_default()
                    .insert(cell_part);
            }
        }
        if placed_last != Some((backend, cell_part)) {
            everyone.entry(backend).or_default().insert(cell_part);
            placed_last = Some((backend, cell_part));
        }
    }
    let apart = |parts: &[&BTreeSet<P>]| {
        parts
            .iter()
            .enumerate()
            .any(|(index, mine)| parts[index + 1..].iter().any(|theirs| mine != theirs))
    };
    let applied = matched
        .into_iter()
        .filter(
            |(_, by_backend)| match by_backend.keys().collect::<Vec<_>>().as_slice() {
                [only] => {
                    let theirs = &everyone[*only];
                    everyone
                        .iter()
                        .any(|(backend, parts)| backend != *only && apart(&[theirs, parts]))
                }
                _ => apart(&by_backend.values().collect::<Vec<_>>()),
            },
        )
        .map(|(id, _)| id.to_string());
    crate::order::btree_set(applied)
}

/// The dimensions that split the current view into parts shown side by side (matrix grids, rows and columns;
/// curve colours and facets): when backends are among them, the view is a comparison.
pub fn split_dimensions(state: &ViewState) -> Vec<Option<Dimension>> {
    match state.view {
        View::Matrix => matrix_dimensions(state),
        View::Curves => curve_dimensions(state),
        View::Compare => vec![Some(state.compare.by)],
        View::Inspector | View::Audit => Vec::new(),
    }
}

fn matrix_dimensions(state: &ViewState) -> Vec<Option<Dimension>> {
    vec![Some(state.grid), Some(state.rows), Some(state.cols)]
}

fn curve_dimensions(state: &ViewState) -> Vec<Option<Dimension>> {
    vec![Some(state.color), state.facet]
}

/// The inclusion policy of a view: the what-if toggles and the comparison entries that apply in it.
pub fn inclusion(state: &ViewState, comparisons: BTreeSet<String>) -> Inclusion {
    inclusion_of(&state.what_if, comparisons)
}

/// [`inclusion`] from the what-if toggles alone: what the matrix's base and the slice count depend on.
pub fn inclusion_of(what_if: &WhatIf, comparisons: BTreeSet<String>) -> Inclusion {
    Inclusion {
        partial: what_if.partial,
        excluded: what_if.excluded,
        comparisons,
    }
}

/// How the current view turns cells into curve values.
pub fn curve_options(state: &ViewState, comparisons: BTreeSet<String>) -> CurveOptions {
    CurveOptions {
        aggregation: state.aggregation,
        inclusion: inclusion(state, comparisons),
        band: state.band,
        metrics: None,
        skip_point_pooling: false,
    }
}

/// The most dimensions that split a view (the matrix's grid, rows and columns).
const SPLIT_DIMENSIONS_MAX: usize = 3;

/// Where a cell is drawn in a view split by `dimensions` (at most [`SPLIT_DIMENSIONS_MAX`]): its values of them,
/// then `None`s. Borrowed from the cell and kept in an array, not allocated: this runs for every cell of a view
/// on every filter change.
fn part_of<'a>(
    dimensions: &[Option<Dimension>],
) -> impl Fn(&'a CellSummary) -> [Option<DimensionValue<'a>>; SPLIT_DIMENSIONS_MAX] {
    let dimensions: Vec<Dimension> = dimensions.iter().flatten().copied().collect();
    debug_assert!(dimensions.len() <= SPLIT_DIMENSIONS_MAX);
    move |cell| {
        let mut part = [None; SPLIT_DIMENSIONS_MAX];
        for (place, dimension) in part.iter_mut().zip(&dimensions) {
            *place = Some(cell.key.value(*dimension));
        }
        part
    }
}

/// The slice of the current view: the filtered cells that its inclusion policy admits (the what-if toggles and
/// the exclusion ledger). This is what the slice count says and what the CSV export writes.
pub fn slice<'a>(cells: &'a [CellSummary], state: &ViewState) -> Vec<&'a CellSummary> {
    let filtered = filtered(cells, state);
    let comparisons = view_comparisons(&filtered, state);
    slice_of(&filtered, comparisons, &state.what_if)
}

/// The `comparison`-scope entries that apply in the view of `state` to its filtered cells. They depend only on
/// those cells and on the dimensions that split the view, so the browser computes them once per change of
/// either and hands them to [`slice_of`], [`matrix_of`] and [`curves_of`].
pub fn view_comparisons(filtered: &[&CellSummary], state: &ViewState) -> BTreeSet<String> {
    applied_comparisons(filtered, part_of(&split_dimensions(state)))
}

/// [`slice`] from the cells already filtered, the view's [`view_comparisons`] and its what-if toggles (the only
/// part of the view state the slice depends on besides the filter and the comparisons).
pub fn slice_of<'a>(
    filtered: &[&'a CellSummary],
    comparisons: BTreeSet<String>,
    what_if: &WhatIf,
) -> Vec<&'a CellSummary> {
    let inclusion = inclusion_of(what_if, comparisons);
    filtered
        .iter()
        .copied()
        .filter(|cell| inclusion.admits(cell))
        .collect()
}

/// The order the inspector's cell picker asks for a cell's dimensions: the key's own order.
pub const PICKER_ORDER: [Dimension; 8] = Dimension::ALL;

/// The choices of one dimension in the cell picker: the values of the cells that agree with `current` on every
/// dimension picked before it, so every choice leads to a cell that exists.
pub fn picker_choices(
    cells: &[CellSummary],
    current: &CellKey,
    dimension: Dimension,
) -> Vec<Value> {
    let before: Vec<Dimension> = PICKER_ORDER
        .into_iter()
        .take_while(|picked| *picked != dimension)
        .collect();
    let values = cells
        .iter()
        .filter(|cell| {
            before
                .iter()
                .all(|picked| cell.key.value(*picked) == current.value(*picked))
        })
        .map(|cell| Value::of(&cell.key, dimension));
    crate::order::sorted_distinct(values)
}

/// The cell the picker lands on when `dimension` is set to `value`: the current choices kept where a cell has
/// them, else the first cell (in key order) that agrees on everything picked up to `dimension`.
pub fn pick(
    cells: &[CellSummary],
    current: &CellKey,
    dimension: Dimension,
    value: &str,
) -> Option<CellKey> {
    let upto: Vec<Dimension> = PICKER_ORDER
        .into_iter()
        .take_while(|picked| *picked != dimension)
        .collect();
    let agrees = |cell: &&CellSummary| {
        cell.key.value(dimension).matches_text(value)
            && upto
                .iter()
                .all(|picked| cell.key.value(*picked) == current.value(*picked))
    };
    let candidates: Vec<&CellSummary> = cells.iter().filter(agrees).collect();
    // Keep as much of the current cell as exists: the candidate agreeing on the most later dimensions.
    candidates
        .iter()
        .max_by_key(|cell| {
            let later = PICKER_ORDER
                .into_iter()
                .skip_while(|picked| *picked != dimension)
                .skip(1);
            let agreeing: Vec<bool> = later
                .map(|picked| cell.key.value(picked) == current.value(picked))
                .collect();
            // Earlier dimensions weigh more: compare as a sequence, then keep the current deployment, then prefer
            // the first in key order.
            let same_config = cell.key.config == current.config;
            (agreeing, same_config, std::cmp::Reverse(&cell.key))
        })
        .map(|cell| cell.key.clone())
}

/// Why a link's cell is not shown when no cell of `cells` has its key, in words naming what was asked and the
/// first part of the key that the cells agreeing on the parts before it lack, with the values they have:
/// `No cell r/s/… in this data: the cells of its run, suite, phase, backend, model and workload have no load
/// N=99 (they have N=1, N=2, N=4).` `None` when the cell is there.
pub fn missing_cell(cells: &[CellSummary], key: &CellKey) -> Option<String> {
    if cells.iter().any(|cell| cell.key == *key) {
        return None;
    }
    let asked = format!("No cell {key} in this data");
    let mut agreeing: Vec<&CellSummary> = cells.iter().collect();
    let mut matched: Vec<&str> = Vec::new();
    let said = |matched: &[&str]| match matched {
        [] => "no cell has".to_string(),
        [only] => format!("the cells of its {only} have no"),
        [first @ .., last] => format!("the cells of its {} and {last} have no", first.join(", ")),
    };
    let listed = |values: Vec<String>| {
        let mut shown: Vec<String> = values.iter().take(6).cloned().collect();
        if values.len() > 6 {
            shown.push(format!("… {} in all", values.len()));
        }
        shown.join(", ")
    };
    for dimension in PICKER_ORDER {
        if dimension == Dimension::Load {
            // The deployment's configuration sits between the workload and the load in the key.
            let configs: Vec<&CellSummary> = agreeing
                .iter()
                .copied()
                .filter(|cell| cell.key.config == key.config)
                .collect();
            if configs.is_empty() {
                let had = crate::order::sorted_distinct(
                    agreeing.iter().map(|cell| cell.key.config.text()),
                );
                let had: Vec<String> = had
                    .into_iter()
                    .map(|text| if text.is_empty() { "none".into() } else { text })
                    .collect();
                let config = key.config.text();
                return Some(format!(
                    "{asked}: {} configuration {} (they have {}).",
                    said(&matched),
                    if config.is_empty() { "none" } else { &config },
                    listed(had)
                ));
            }
            agreeing = configs;
        }
        let wanted = key.value(dimension);
        let next: Vec<&CellSummary> = agreeing
            .iter()
            .copied()
            .filter(|cell| cell.key.value(dimension) == wanted)
            .collect();
        if next.is_empty() {
            let asked_value = Value::from(wanted).coordinate(dimension);
            if matched.is_empty() {
                return Some(format!("{asked}: no cell has {asked_value}."));
            }
            let had = crate::order::sorted_distinct(
                agreeing.iter().map(|cell| Value::of(&cell.key, dimension)),
            );
            // A load is written as one (`n=2`, `rate=2.5`); other values as they are.
            let had: Vec<String> = had
                .iter()
                .map(|value| match dimension {
                    Dimension::Load => value.coordinate(dimension),
                    _ => value.to_string(),
                })
                .collect();
            return Some(format!(
                "{asked}: {} {asked_value} (they have {}).",
                said(&matched),
                listed(had)
            ));
        }
        agreeing = next;
        matched.push(dimension.name());
    }
    Some(format!("{asked}."))
}

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
fn behind_point(cell: &CellSummary, inclusion: &Inclusion) -> bool {
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
fn curves_split_by(state: &ViewState, dimension: Dimension) -> bool {
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

/// Dimensions whose values a series may pool that make two series' curves unlike when their sets differ.
const POOLED_SET_DIMENSIONS: [Dimension; 3] =
    [Dimension::Model, Dimension::Workload, Dimension::Phase];

/// Within one panel of the curves, series that pool different sets of values of one dimension (after filters
/// and exclusions): one side's curve averages models the other's does not, so the two are not like for like.
#[derive(Clone, Debug, PartialEq)]
pub struct UnequalSets {
    /// The panel (facet value), `None` without facets.
    pub facet: Option<Value>,
    /// The dimension the series pool unequal sets of.
    pub dimension: Dimension,
    /// Each series with the values it pools, in series order.
    pub sets: Vec<(Value, Vec<Value>)>,
}

impl UnequalSets {
    /// What the chart says inside the panel: `⚠ series pool different model sets: sglang 4 models, tgi 2`.
    pub fn short(&self) -> String {
        let name = self.dimension.name();
        let counts: Vec<String> = self
            .sets
            .iter()
            .enumerate()
            .map(|(index, (series, values))| {
                let unit = if index == 0 {
                    format!(" {name}{}", if values.len() == 1 { "" } else { "s" })
                } else {
                    String::new()
                };
                format!("{series} {}{unit}", values.len())
            })
            .collect();
        format!("⚠ series pool different {name} sets: {}", counts.join(", "))
    }

    /// The whole sentence, with every set: said beside the chart and in its exports.
    pub fn long(&self) -> String {
        self.long_in(std::slice::from_ref(&self.facet))
    }

    /// [`UnequalSets::long`] for every panel in `facets`, whose series pool these same sets.
    fn long_in(&self, facets: &[Option<Value>]) -> String {
        let name = self.dimension.name();
        let panels: Vec<String> = facets.iter().flatten().map(ToString::to_string).collect();
        let start = match panels.as_slice() {
            [] => "The".to_string(),
            [one] => format!("In {one}, the"),
            [first @ .., last] => format!("In {} and {last}, the", first.join(", ")),
        };
        let sets: Vec<String> = self
            .sets
            .iter()
            .map(|(series, values)| {
                let values: Vec<String> = values.iter().map(ToString::to_string).collect();
                format!("{series} pools {}", values.join(", "))
            })
            .collect();
        format!(
            "{start} series pool different {name} sets, so their curves are not like for like: {}. Filter \
             {name} to compare the same {name}s.",
            sets.join("; ")
        )
    }
}

/// The panels of [`curves_of`] (same slice, comparisons and state) whose series pool different sets of models,
/// workloads or phases among the cells behind their points (exclusions applied). A dimension the view colours
/// or facets by is not pooled and not checked.
pub fn unequal_sets(
    slice: &[&CellSummary],
    comparisons: BTreeSet<String>,
    state: &ViewState,
) -> Vec<UnequalSets> {
    let slice = &on_curves(slice, state);
    type Sets<'a> = BTreeMap<Dimension, BTreeSet<DimensionValue<'a>>>;
    let inclusion = inclusion(state, comparisons);
    let dimensions: Vec<Dimension> = POOLED_SET_DIMENSIONS
        .into_iter()
        .filter(|dimension| !curves_split_by(state, *dimension))
        .collect();
    let mut panels: BTreeMap<Option<DimensionValue<'_>>, BTreeMap<DimensionValue<'_>, Sets<'_>>> =
        BTreeMap::new();
    for cell in slice.iter().filter(|cell| behind_point(cell, &inclusion)) {
        let sets = panels
            .entry(state.facet.map(|facet| cell.key.value(facet)))
            .or_default()
            .entry(cell.key.value(state.color))
            .or_default();
        for dimension in &dimensions {
            sets.entry(*dimension)
                .or_default()
                .insert(cell.key.value(*dimension));
        }
    }
    let mut unequal = Vec::new();
    for (facet, series) in &panels {
        for dimension in &dimensions {
            fn of<'a>(sets: &Sets<'a>, dimension: Dimension) -> BTreeSet<DimensionValue<'a>> {
                sets.get(&dimension).cloned().unwrap_or_default()
            }
            let mut all = series.values().map(|sets| of(sets, *dimension));
            let Some(first) = all.next() else { continue };
            if all.all(|set| set == first) {
                continue;
            }
            unequal.push(UnequalSets {
                facet: facet.map(Value::from),
                dimension: *dimension,
                sets: series
                    .iter()
                    .map(|(label, sets)| {
                        (
                            Value::from(*label),
                            of(sets, *dimension).into_iter().map(Value::from).collect(),
                        )
                    })
                    .collect(),
            });
        }
    }
    unequal
}

/// The sentences said beside the chart: one per distinct pooling, naming every panel whose series pool the same
/// sets, so that five panels with one difference say it once.
pub fn unequal_sentences(unequal: &[UnequalSets]) -> Vec<String> {
    let mut groups: Vec<(Vec<Option<Value>>, &UnequalSets)> = Vec::new();
    for sets in unequal {
        let same = groups
            .iter_mut()
            .find(|(_, first)| first.dimension == sets.dimension && first.sets == sets.sets);
        match same {
            Some((facets, _)) => facets.push(sets.facet.clone()),
            None => groups.push((vec![sets.facet.clone()], sets)),
        }
    }
    groups
        .into_iter()
        .map(|(facets, sets)| sets.long_in(&facets))
        .collect()
}

/// What each panel of the curves says inside the chart, in the order of `facets`: the series' unequal pooled
/// sets ([`unequal_sets`]) and that the frontier is withheld ([`frontier_withheld`] says why beside the chart).
pub fn panel_notes(
    facets: &[Facet],
    unequal: &[UnequalSets],
    state: &ViewState,
) -> Vec<Vec<String>> {
    facets
        .iter()
        .map(|facet| {
            unequal
                .iter()
                .filter(|sets| sets.facet == facet.title)
                .map(UnequalSets::short)
                .chain(
                    frontier_withheld(std::slice::from_ref(facet), state)
                        .and(pareto::withheld_in_panel(facet)),
                )
                .collect()
        })
        .collect()
}

/// Why panels of [`curves_of`] (same slice, comparisons, state and metric) draw nothing, in the order of
/// `facets`: for a panel without a point, the one line [`NoPoint`] gives for all its cells; for a panel where
/// only some series have no point, one line per such series (`tgi: …`). Drawn inside the panel, never a blank
/// frame. A panel whose scaling metric is measured against another load than N = 1 says so too.
pub fn empty_notes(
    slice: &[&CellSummary],
    comparisons: BTreeSet<String>,
    state: &ViewState,
    metric: Metric,
    facets: &[Facet],
) -> Vec<Vec<String>> {
    let slice = &on_curves(slice, state);
    let inclusion = inclusion(state, comparisons);
    let why = |cells: &[&CellSummary]| {
        NoPoint::of(cells, &inclusion, metric, state.x.metric()).map(|why| why.text())
    };
    facets
        .iter()
        .map(|facet| {
            let cells: Vec<&CellSummary> = slice
                .iter()
                .copied()
                .filter(|cell| {
                    state
                        .facet
                        .map(|facet| Value::of(&cell.key, facet))
                        .as_ref()
                        == facet.title.as_ref()
                })
                .collect();
            let baseline = crate::reasons::baseline_note(metric, cells.iter().copied())
                .map(|note| crate::reasons::baseline_sentence(metric, &note));
            let empty: Vec<&Series> = facet
                .series
                .iter()
                .filter(|series| series.points.is_empty())
                .collect();
            let mut notes: Vec<String> = if empty.is_empty() {
                Vec::new()
            } else if empty.len() == facet.series.len() {
                why(&cells).into_iter().collect()
            } else {
                empty
                    .iter()
                    .filter_map(|series| {
                        let of_series: Vec<&CellSummary> = cells
                            .iter()
                            .copied()
                            .filter(|cell| Value::of(&cell.key, state.color) == series.label)
                            .collect();
                        why(&of_series).map(|why| format!("{}: {why}", series.label))
                    })
                    .collect()
            };
            notes.extend(baseline);
            notes.extend(slo_capacity_note(state, facet));
            notes
        })
        .collect()
}

/// Each series' capacity under the link's SLO ([`Series::slo_capacity`]), as one line of its panel (`SLO capacity
/// (p99_ttft_ms<=2000): vllm ≥ 16 req/s (not reached); sglang ≈ 5.3 req/s (4–8)`).
fn slo_capacity_note(state: &ViewState, facet: &Facet) -> Option<String> {
    let parts: Vec<String> = facet
        .series
        .iter()
        .filter_map(|series| {
            let capacity = series.slo_capacity.as_ref()?;
            Some(format!("{} {capacity}", series.label))
        })
        .collect();
    (!parts.is_empty()).then(|| format!("SLO capacity ({}): {}", state.slo(), parts.join("; ")))
}

/// The line a curve of `metric` draws at the link's SLO bound on the plotted statistic (`SLO p99_ttft_ms ≤ 2000
/// ms` at 2000), so each series can be read against it; `None` when the link names no SLO or none of its bounds
/// is on this statistic.
pub fn slo_line(state: &ViewState, metric: Metric) -> Option<Threshold> {
    if state.slo.is_empty() {
        return None;
    }
    let column = metric.stat()?.name();
    let bound = state
        .slo()
        .bounds
        .into_iter()
        .find(|bound| bound.column == column)?;
    Some(Threshold {
        value: bound.max,
        label: format!("SLO {column} ≤ {} ms", bound.max),
    })
}

/// A number as the series table writes it: three decimals, or significant digits when three decimals would
/// write a value that is not zero as `0.000` (a hung cell's efficiency of 0.00047 is not zero).
pub fn table_number(value: f64) -> String {
    let written = format!("{value:.3}");
    if value != 0.0 && value.is_finite() && !written.chars().any(|c| ('1'..='9').contains(&c)) {
        let decimals = (1 - value.abs().log10().floor() as i32).max(0) as usize;
        return format!("{value:.decimals$}");
    }
    written
}

/// A plotted value as a tooltip writes it: as the metric writes its values, except that a ratio that is not
/// zero is never written as `0.000`.
pub fn value_text(metric: Metric, value: f64) -> String {
    if metric.unit() == crate::metric::Unit::Ratio {
        table_number(value)
    } else {
        metric.format(value)
    }
}

impl SeriesPoint {
    /// The point as the series table lists it: `16: 0.00047`, `4: 205.000 → 86.000`, followed by
    /// `(◐ 1 of 3 cells partial)` when some of its cells are partial (the value rests on fewer rows than planned)
    /// and `(✕ 1 of 3 cells failed)` when some failed (some of their requests were not ok).
    pub fn table_text(&self, x: XAxis) -> String {
        let placed = match x {
            XAxis::Load => format!("{}: {}", self.load.short_label(), table_number(self.value)),
            XAxis::Metric(_) => format!(
                "{}: {} → {}",
                self.load.short_label(),
                table_number(self.x),
                table_number(self.value)
            ),
        };
        let plural = if self.cells == 1 { "" } else { "s" };
        let mut marks = Vec::new();
        for (count, what) in [(self.partial, "◐"), (self.failed, "✕")] {
            if count > 0 {
                let state = if what == "◐" { "partial" } else { "failed" };
                marks.push(format!(
                    "{what} {count} of {} cell{plural} {state}",
                    self.cells
                ));
            }
        }
        if marks.is_empty() {
            placed
        } else {
            format!("{placed} ({})", marks.join("; "))
        }
    }
}

/// The kind of load of the points drawn against the load (every point is of one kind there, which names the
/// metric: achieved/offered at a rate); `None` against a metric or without a point.
pub fn points_kind(facets: &[Facet], x: XAxis) -> Option<LoadKind> {
    if x != XAxis::Load {
        return None;
    }
    for facet in facets {
        for series in &facet.series {
            if let Some(point) = series.points.first() {
                return Some(point.load.kind());
            }
        }
    }
    None
}

/// What the view says when points are left out for want of a value: "2 points without a value of p95 time to
/// first token or output tok/s left out (never drawn as zero)". `None` when none is.
pub fn without_value_note(facets: &[Facet], metric: Metric, x: XAxis) -> Option<String> {
    let count: u32 = facets
        .iter()
        .flat_map(|facet| &facet.series)
        .map(|series| series.without_value)
        .sum();
    let of = match x {
        XAxis::Metric(x) if x != metric => format!("{} or {}", x.label(), metric.label()),
        _ => metric.label_at(points_kind(facets, x)).to_string(),
    };
    (count > 0).then(|| {
        format!(
            "{count} point{} without a value of {of} left out (never drawn as zero)",
            if count == 1 { "" } else { "s" }
        )
    })
}

/// "3 points rest on figures the tool reported (†), not recomputed; 2 on derived ones (‡)": said under the
/// curves and in their exports, so reported and recomputed values are never mixed silently.
pub fn marks_note(facets: &[Facet]) -> Option<String> {
    let points = || {
        facets
            .iter()
            .flat_map(|facet| &facet.series)
            .flat_map(|series| &series.points)
    };
    let reported = points().filter(|point| point.reported > 0).count();
    let derived = points().filter(|point| point.derived > 0).count();
    let plural = |count: usize| {
        if count == 1 {
            "point rests"
        } else {
            "points rest"
        }
    };
    let mut parts = Vec::new();
    if reported > 0 {
        parts.push(format!(
            "{reported} {} on figures the tool reported ({}), not recomputed from request rows",
            plural(reported),
            Mark::Reported.sign()
        ));
    }
    if derived > 0 {
        parts.push(format!(
            "{derived} {} on derived wall latencies ({}: TTFT + Σ inter-token latencies)",
            plural(derived),
            Mark::Derived.sign()
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::BandSpan;
    use crate::exclusions::ExclusionScope;
    use crate::pooling::Aggregation;
    use crate::reasons::ScalingAbsent;
    use crate::stats::CellStats;

    fn cell(backend: &str, workload: &str, n: u32, rep: u32, tps: f64, p95: f64) -> CellSummary {
        let mut cell = CellSummary::empty(
            CellKey {
                run_id: "r".into(),
                suite: "s".into(),
                phase: "scaling".into(),
                backend: backend.into(),
                model: "m".into(),
                workload: workload.into(),
                config: Default::default(),
                load: crate::Load::Concurrency(n),
                rep,
            },
            CellStatus::Clean,
        );
        cell.rows = 10 * n;
        cell.ok_rows = 10 * n;
        cell.expected_rows = Some(10 * n);
        cell.stats = CellStats {
            ok_rows: 10 * n,
            aggregate_tps: Some(tps),
            p95_wall_ms: Some(p95),
            ..CellStats::default()
        };
        cell
    }

    fn sweep(backend: &str, workload: &str, efficiencies: &[(u32, f64)]) -> Vec<CellSummary> {
        let mut cells = Vec::new();
        for rep in 0..3 {
            for (n, efficiency) in efficiencies {
                cells.push(cell(
                    backend,
                    workload,
                    *n,
                    rep,
                    100.0 * f64::from(*n) * efficiency,
                    1000.0 * f64::from(*n).sqrt(),
                ));
            }
        }
        cells
    }

    #[test]
    fn the_pareto_view_draws_one_point_per_configuration_and_load() {
        // Two engines × tp 1, 2 × two workloads × N 1, 2 × 3 reps, all on h100s.
        let mut cells = Vec::new();
        for backend in ["vllm", "sglang"] {
            for tp in ["1", "2"] {
                for workload in ["w1", "w2"] {
                    for mut cell in sweep(backend, workload, &[(1, 1.0), (2, 0.9)]) {
                        cell.key.config.insert("accelerator", "h100").unwrap();
                        cell.key.config.insert("tp", tp).unwrap();
                        cells.push(cell);
                    }
                }
            }
        }
        crate::summary::fill_output_per_accelerator(&mut cells);
        fill_scaling(&mut cells);
        let slice: Vec<&CellSummary> = cells.iter().collect();
        let mut state = ViewState::default();
        show_pareto(&mut state, &slice);
        assert_eq!(
            (state.color, state.facet, state.metric),
            (
                Dimension::Configuration,
                Some(Dimension::Workload),
                Metric::Stat(Stat::OutputTpsPerAccelerator)
            )
        );
        // The test's cells have no interactivity: plot throughput against p95 wall time instead.
        state.metric = Metric::Stat(Stat::AggregateTps);
        state.x = XAxis::Metric(Metric::Stat(Stat::P95WallMs));
        let facets = curves(&cells, &state, state.metric);
        assert_eq!(facets.len(), 2);
        for facet in &facets {
            let legends: Vec<&str> = facet
                .series
                .iter()
                .map(|series| series.legend.as_str())
                .collect();
            assert_eq!(
                legends,
                [
                    "sglang · tp 1",
                    "sglang · tp 2",
                    "vllm · tp 1",
                    "vllm · tp 2"
                ]
            );
            for series in &facet.series {
                assert_eq!(series.points.len(), 2);
                assert!(series.frontier.is_some() && series.frontier_withheld.is_none());
                for point in &series.points {
                    // Each point: one configuration's three reps at one load.
                    assert_eq!(point.cells, 3);
                    assert_eq!(
                        point.pooling.describe(state.aggregation),
                        "mean of 3 cells: rep 0, 1, 2"
                    );
                }
            }
        }
        assert_eq!(frontier_withheld(&facets, &state), None);
        // Coloured by backend instead, each point pools tp 1 and 2: no frontier is drawn, and both the note and
        // the panels say why with the values pooled.
        let by_backend = ViewState {
            color: Dimension::Backend,
            ..state.clone()
        };
        let facets = curves(&cells, &by_backend, state.metric);
        assert!(
            facets
                .iter()
                .flat_map(|facet| &facet.series)
                .all(|series| series.frontier.is_none())
        );
        let why = frontier_withheld(&facets, &by_backend).unwrap();
        assert!(
            why.starts_with("4 of 4 series pool several configurations at a point (up to tp 1, 2)"),
            "{why}"
        );
        assert_eq!(
            panel_notes(&facets, &[], &by_backend)[0],
            ["no frontier through sglang, vllm: points pool tp 1, 2"]
        );
    }

    #[test]
    fn the_frontier_across_configurations_joins_single_configuration_points_of_every_series() {
        // Three configurations at one workload; throughput against p95 wall time (lower is better on x).
        let mut cells = Vec::new();
        for (tp, scale) in [("1", 1.0), ("2", 1.6), ("4", 0.8)] {
            for mut cell in sweep("vllm", "w", &[(1, 1.0), (2, 0.9), (4, 0.6)]) {
                cell.key.config.insert("tp", tp).unwrap();
                cell.stats.aggregate_tps = cell.stats.aggregate_tps.map(|tps| tps * scale);
                cells.push(cell);
            }
        }
        fill_scaling(&mut cells);
        let state = ViewState {
            view: View::Curves,
            metric: Metric::Stat(Stat::AggregateTps),
            x: XAxis::Metric(Metric::Stat(Stat::P95WallMs)),
            color: Dimension::Configuration,
            facet: None,
            frontier: crate::view_state::FrontierMode::Panel,
            ..ViewState::default()
        };
        let facets = curves(&cells, &state, Metric::Stat(Stat::AggregateTps));
        let series = &facets[0].series;
        assert_eq!(
            series
                .iter()
                .map(|series| series.legend.as_str())
                .collect::<Vec<_>>(),
            ["tp 1", "tp 2", "tp 4"]
        );
        // tp 2 beats the others at every load (same p95, 1.6× the throughput): the whole frontier is its.
        let members: Vec<Vec<usize>> = series
            .iter()
            .map(|series| series.frontier.as_ref().unwrap().members.clone())
            .collect();
        assert_eq!(members, [vec![], vec![0, 1, 2], vec![]]);
        assert!(
            series
                .iter()
                .all(|series| series.frontier.as_ref().unwrap().across_series)
        );
        assert!(series[0].is_dominated(0) && !series[1].is_dominated(0));
        assert!(!facets[0].frontier_steps.is_empty());
        assert_eq!(frontier_withheld(&facets, &state), None);
    }

    #[test]
    fn two_deployments_at_one_load_each_fill_the_matrix() {
        let mut cells = vec![
            cell("vllm", "w", 4, 0, 400.0, 900.0),
            cell("vllm", "w", 4, 0, 700.0, 1500.0),
        ];
        cells[0].key.config.insert("tp", "4").unwrap();
        cells[1].key.config.insert("tp", "8").unwrap();
        fill_scaling(&mut cells);
        // Nothing at the default N = 16: the matrix opens at N = 4, where both deployments are, in one square.
        assert!(matrix(&cells, &ViewState::default()).is_empty());
        let at = opening_at_load(&cells).expect("another load");
        assert_eq!(at, Load::Concurrency(4));
        let state = ViewState {
            at_load: at,
            ..ViewState::default()
        };
        let grids = matrix(&cells, &state);
        assert_eq!(grids.len(), 1, "{grids:?}");
        // A TR164-like root with N = 16 keeps the default.
        let swept = sweep("vllm", "w", &[(1, 1.0), (16, 0.5)]);
        assert_eq!(opening_at_load(&swept), None);
        // A rate sweep opens at its largest finite rate when every rate has as many cells.
        let mut rated = sweep("sglang", "w", &[(1, 1.0), (2, 0.9), (4, 0.8)]);
        for cell in &mut rated {
            cell.key.load = Load::rate(f64::from(cell.key.n().unwrap())).unwrap();
        }
        assert_eq!(opening_at_load(&rated), Load::rate(4.0));
    }

    #[test]
    fn single_load_results_open_on_throughput_and_say_why() {
        // A concurrency sweep keeps the default.
        let mut swept = sweep("vllm", "w", &[(1, 1.0), (4, 0.8)]);
        fill_scaling(&mut swept);
        assert_eq!(opening_metric(&swept), None);
        assert_eq!(
            one_load_note(
                &swept.iter().collect::<Vec<_>>(),
                Metric::Stat(Stat::Efficiency)
            ),
            None
        );
        // One concurrency per configuration (two workloads, one N each): measured against itself each would read
        // 1.000, so none has a scaling metric, and the view opens on output throughput.
        let mut single = vec![
            cell("vllm", "a", 4, 0, 400.0, 900.0),
            cell("vllm", "b", 8, 0, 700.0, 1500.0),
        ];
        fill_scaling(&mut single);
        assert!(
            single
                .iter()
                .all(|cell| cell.efficiency.is_none() && cell.p95_multiplier.is_none())
        );
        let slice: Vec<&CellSummary> = single.iter().collect();
        assert_eq!(
            crate::reasons::ScalingAbsent::of(Metric::Stat(Stat::Efficiency), &single[0], &slice)
                .map(|absent| absent.short()),
            Some("one load")
        );
        let (metric, why) = opening_metric(&single).expect("another metric");
        assert_eq!(metric, Metric::Stat(Stat::AggregateTps));
        assert_eq!(
            why,
            "Opened on output tok/s: 0 of 2 cells with data have a parallel efficiency (2 are the one load their \
             series was measured at: one load, no scaling), 2 have output tok/s. Choose another metric above."
        );
        assert_eq!(
            one_load_note(&slice, Metric::Stat(Stat::Efficiency)).as_deref(),
            Some(
                "2 cells are the one load their series was measured at: one load, no scaling (no parallel \
                 efficiency or p95 multiplier, shown as \"one load\", never as 1.000)."
            )
        );
        assert_eq!(
            one_load_note(&slice, Metric::Stat(Stat::AggregateTps)),
            None
        );
        // A panel of such cells draws no efficiency point and says why.
        let why = crate::reasons::NoPoint::of(
            &slice,
            &inclusion(&ViewState::default(), BTreeSet::new()),
            Metric::Stat(Stat::Efficiency),
            None,
        )
        .map(|why| why.text());
        assert_eq!(
            why.as_deref(),
            Some(
                "one load, no scaling: no parallel efficiency (each of its 2 cells is the one load its series was \
                 measured at)"
            )
        );
        // A root of mostly sweeps keeps efficiency, and its one-load cells are counted.
        let mut mixed = swept.clone();
        mixed.extend(single.clone());
        fill_scaling(&mut mixed);
        assert_eq!(opening_metric(&mixed), None);
        let mixed_slice: Vec<&CellSummary> = mixed.iter().collect();
        assert!(
            one_load_note(&mixed_slice, Metric::Stat(Stat::Efficiency))
                .unwrap()
                .starts_with("2 cells are")
        );
        // An offered rate has achieved/offered, which means something at one load.
        let mut rated = single.clone();
        for cell in &mut rated {
            cell.key.load = Load::rate(4.0).unwrap();
            cell.stats.request_throughput_rps = Some(3.5);
        }
        fill_scaling(&mut rated);
        assert_eq!(opening_metric(&rated), None);
        // No throughput: the first metric most cells have.
        for cell in &mut single {
            cell.stats.aggregate_tps = None;
        }
        fill_scaling(&mut single);
        let (metric, _) = opening_metric(&single).expect("another metric");
        assert_eq!(metric, Metric::Stat(Stat::P95WallMs));
    }

    #[test]
    fn the_load_axis_holds_one_kind_and_says_what_it_leaves_out() {
        // vllm at N = 1, 2 (6 cells); sglang at 1, 2, 4 req/s (9 cells); one cell with no stated load.
        let mut cells = sweep("vllm", "w", &[(1, 1.0), (2, 0.9)]);
        let mut rated = sweep("sglang", "w", &[(1, 1.0), (2, 0.9), (4, 0.8)]);
        for cell in &mut rated {
            cell.key.load = Load::rate(f64::from(cell.key.n().unwrap())).unwrap();
        }
        cells.extend(rated);
        let mut unstated = cell("tgi", "w", 1, 0, 100.0, 1000.0);
        unstated.key.load = Load::Unstated;
        cells.push(unstated);
        fill_scaling(&mut cells);
        let slice: Vec<&CellSummary> = cells.iter().collect();
        let state = ViewState {
            view: View::Curves,
            ..ViewState::default()
        };
        // Most cells are at a rate: the axis holds rates, every series is sglang's.
        assert_eq!(load_kind_on_x(&slice, &state), Some(LoadKind::Rate));
        let facets = curves_of(
            &slice,
            BTreeSet::new(),
            &state,
            Metric::Stat(Stat::P95WallMs),
        );
        let loads: BTreeSet<LoadKind> = facets
            .iter()
            .flat_map(|facet| &facet.series)
            .flat_map(|series| &series.points)
            .map(|point| point.load.kind())
            .collect();
        assert_eq!(loads, BTreeSet::from([LoadKind::Rate]));
        assert_eq!(
            off_the_load_axis(&slice, &state).unwrap(),
            "6 cells at a concurrency N and 1 cell with no stated load not on this axis: it holds one kind of \
             load (offered rate (req/s)). Choose the kind above, or plot against a metric to see every cell."
        );
        // The link chooses concurrency; against a metric every cell is a point and nothing is left out.
        let concurrency = ViewState {
            load_kind: Some(LoadKind::Concurrency),
            ..state.clone()
        };
        assert_eq!(
            load_kind_on_x(&slice, &concurrency),
            Some(LoadKind::Concurrency)
        );
        let against_ttft = ViewState {
            x: XAxis::Metric(Metric::Stat(Stat::P50TtftMs)),
            ..state
        };
        assert_eq!(load_kind_on_x(&slice, &against_ttft), None);
        assert_eq!(off_the_load_axis(&slice, &against_ttft), None);
    }

    #[test]
    fn the_matrix_colours_by_slo_capacity_and_the_link_sets_the_slo() {
        // One series at N = 1, 2, 4, 8, two reps: p99 TTFT 50, 80, 120, 400 ms (rep 1 10 ms higher).
        let mut cells = sweep("vllm", "w", &[(1, 1.0), (2, 0.9), (4, 0.8), (8, 0.5)]);
        cells.retain(|cell| cell.key.rep < 2);
        for cell in &mut cells {
            let ttft = match cell.key.n() {
                Some(1) => 50.0,
                Some(2) => 80.0,
                Some(4) => 120.0,
                _ => 400.0,
            };
            cell.stats.p99_ttft_ms = Some(ttft + 10.0 * f64::from(cell.key.rep));
        }
        fill_scaling(&mut cells);
        let square = |slo: &str| {
            let (state, ignored) = ViewState::parse_query(&format!(
                "metric=slo_capacity&slo={slo}&grid=backend&rows=model&cols=workload"
            ));
            assert!(ignored.is_empty(), "{ignored:?}");
            let grids = super::matrix::matrix(&cells, &state);
            let square = grids[0].squares[0][0].clone().unwrap();
            (square.value, square.label(Metric::SloCapacity))
        };
        // ≤ 100 ms: rep means 55, 85, 125, 405: holds at N = 2, fails at 4; 2 + (100 − 85)/(125 − 85) × 2 = 2.75.
        let (value, label) = square("p99_ttft_ms<=100");
        assert!((value.unwrap() - 2.75).abs() < 1e-12, "{value:?}");
        // Each rep's own capacity: rep 0 2 + 20/40 × 2 = 3, rep 1 (60, 90, 130 ms) 2 + 10/40 × 2 = 2.5.
        assert_eq!(label, "≈ N=2.8 (2–4; range over 2 reps 2.5–3)");
        // A looser SLO is not reached within the measured loads; a tighter one is never met.
        assert!(square("p99_ttft_ms<=1000").1.starts_with("≥ N=8"));
        let (never, label) = square("p99_ttft_ms<=10");
        assert_eq!(never, None);
        assert!(label.starts_with("never met"), "{label}");
    }

    /// One rep of `backend` at each `(load, p99 TTFT)`, a cell per load.
    fn ttft_series(backend: &str, points: &[(Load, f64)]) -> Vec<CellSummary> {
        points
            .iter()
            .map(|(load, ttft)| {
                let mut cell = cell(backend, "w", 1, 0, 100.0, 1000.0);
                cell.key.load = *load;
                cell.stats.p99_ttft_ms = Some(*ttft);
                cell
            })
            .collect()
    }

    #[test]
    fn capacities_of_both_kinds_keep_a_scale_each_and_bounds_stay_bounds() {
        let rate = |rps: f64| Load::rate(rps).unwrap();
        let n = Load::Concurrency;
        let mut cells = Vec::new();
        // Under p99 TTFT ≤ 100 ms, worked by hand:
        // a: N = 1, 2, 4 at 50, 80, 120 ms → holds at 2, fails at 4: 2 + 20/40 × 2 = N=3.
        cells.extend(ttft_series(
            "a",
            &[(n(1), 50.0), (n(2), 80.0), (n(4), 120.0)],
        ));
        // b: N = 1 … 8 at 20 … 80 ms → holds at every N: at least N=8.
        cells.extend(ttft_series("b", &[(n(1), 20.0), (n(8), 80.0)]));
        // c: 1, 4 req/s and all at once at 60, 90, 900 ms → fails only all at once: at least 4 req/s.
        let unbounded = rate(f64::INFINITY);
        cells.extend(ttft_series(
            "c",
            &[(rate(1.0), 60.0), (rate(4.0), 90.0), (unbounded, 900.0)],
        ));
        // d: 1, 2 req/s at 70, 130 ms → 1 + 30/60 × 1 = 1.5 req/s.
        cells.extend(ttft_series("d", &[(rate(1.0), 70.0), (rate(2.0), 130.0)]));
        // e: N = 1 at 150 ms → never met.
        cells.extend(ttft_series("e", &[(n(1), 150.0)]));
        fill_scaling(&mut cells);
        let (state, ignored) = ViewState::parse_query(
            "metric=slo_capacity&slo=p99_ttft_ms%3C%3D100&grid=workload&rows=backend&cols=model",
        );
        assert!(ignored.is_empty(), "{ignored:?}");
        let grids = matrix(&cells, &state);
        let placed: Vec<Option<(LoadKind, crate::slo::Placed)>> = grids[0]
            .squares
            .iter()
            .map(|row| row[0].as_ref().and_then(|square| square.capacity_placed))
            .collect();
        use crate::slo::Placed::{AtLeast, Measured, NeverMet};
        assert_eq!(
            placed,
            [
                Some((LoadKind::Concurrency, Measured(3.0))),
                Some((LoadKind::Concurrency, AtLeast(8.0))),
                Some((LoadKind::Rate, AtLeast(4.0))),
                Some((LoadKind::Rate, Measured(1.5))),
                Some((LoadKind::Concurrency, NeverMet)),
            ]
        );
        // One scale per kind: N from 3 to 8, req/s from 1.5 to 4; a rate never lands on the N scale.
        let scale = LoadScale::of_capacities(&grids);
        assert_eq!(scale.concurrency, Some((3.0, 8.0)));
        assert_eq!(scale.rate, Some((1.5, 4.0)));
        // log₂: N = 4 sits (2 − log₂ 3) / (3 − log₂ 3) of the way; 3 req/s (log₂ 2 − log₂ 1.5)/(2 − log₂ 1.5).
        let within = |kind, load: f64, expected: f64| {
            let position = scale.position(kind, load).unwrap();
            assert!(
                (position - expected).abs() < 1e-12,
                "{load}: {position} ≠ {expected}"
            );
        };
        within(
            LoadKind::Concurrency,
            4.0,
            (2.0 - 3f64.log2()) / (3.0 - 3f64.log2()),
        );
        within(
            LoadKind::Rate,
            3.0,
            (3f64.log2() - 1.5f64.log2()) / (2.0 - 1.5f64.log2()),
        );
        within(LoadKind::Rate, f64::INFINITY, 1.0);
        assert_eq!(
            scale.legend(Metric::SloCapacity),
            (
                "N=3 · 1.5 req/s (lowest in view)".to_string(),
                "N=8 · 4 req/s (highest)".to_string()
            )
        );
        // The squares say the bound with its ≥.
        let labels: Vec<String> = grids[0]
            .squares
            .iter()
            .map(|row| row[0].as_ref().unwrap().label(Metric::SloCapacity))
            .collect();
        assert_eq!(labels[1], "≥ N=8 (not reached)");
        assert_eq!(labels[2], "≥ 4 req/s (fails all at once, not interpolated)");
        assert_eq!(labels[4], "never met (fails at N=1)");
    }

    #[test]
    fn a_rate_breakdown_scale_never_puts_all_at_once_on_the_n_scale() {
        let scale = LoadScale {
            concurrency: Some((1.0, 64.0)),
            ..LoadScale::spanning([(LoadKind::Rate, 2.0), (LoadKind::Rate, 8.0)])
        };
        // N = 8 is half of log₂ 64; 4 req/s half of the rates' span; all at once the top of the rate scale.
        assert_eq!(scale.position(LoadKind::Concurrency, 8.0), Some(0.5));
        assert_eq!(scale.position(LoadKind::Rate, 4.0), Some(0.5));
        assert_eq!(scale.position(LoadKind::Rate, f64::INFINITY), Some(1.0));
        assert_eq!(
            scale.legend(Metric::Breakdown),
            (
                "breaks at N=1 · saturates at 2 req/s".to_string(),
                "N=64 · 8 req/s · all at once and never = brightest".to_string()
            )
        );
        // Only all at once in view: the rate scale exists, with no finite end.
        let alone = LoadScale::spanning([(LoadKind::Rate, f64::INFINITY)]);
        assert_eq!(alone.position(LoadKind::Rate, f64::INFINITY), Some(1.0));
        assert_eq!(alone.position(LoadKind::Concurrency, 4.0), None);
        assert_eq!(alone.ranges(), [(LoadKind::Rate, None)]);
    }

    #[test]
    fn a_rate_series_counts_failed_cells_and_carries_its_slo_capacity() {
        let rate = |rps: f64| Load::rate(rps).unwrap();
        // 1, 2, 4 req/s at 60, 80, 140 ms p99 TTFT; the cell at 4 req/s failed (some rows not ok).
        let mut cells = ttft_series(
            "vllm",
            &[(rate(1.0), 60.0), (rate(2.0), 80.0), (rate(4.0), 140.0)],
        );
        cells[2].status = CellStatus::Failed;
        cells[2].rows += 3;
        fill_scaling(&mut cells);
        let slice: Vec<&CellSummary> = cells.iter().collect();
        let (state, _) = ViewState::parse_query(
            "view=curves&metric=p99_ttft_ms&slo=p99_ttft_ms%3C%3D100&facet=none",
        );
        let facets = curves_of(
            &slice,
            BTreeSet::new(),
            &state,
            Metric::Stat(Stat::P99TtftMs),
        );
        let series = &facets[0].series[0];
        let failed: Vec<u32> = series.points.iter().map(|point| point.failed).collect();
        assert_eq!(failed, [0, 0, 1]);
        assert_eq!(
            series.points[2].table_text(XAxis::Load),
            "4: 140.000 (✕ 1 of 1 cell failed)"
        );
        // Holds at 2 req/s (80 ms), fails at 4 (140 ms): 2 + 20/60 × 2 = 2.67 req/s.
        assert_eq!(series.slo_capacity.as_deref(), Some("≈ 2.7 req/s (2–4)"));
        let line = slo_line(&state, Metric::Stat(Stat::P99TtftMs)).unwrap();
        assert_eq!(
            (line.value, line.label.as_str()),
            (100.0, "SLO p99_ttft_ms ≤ 100 ms")
        );
        // No line for a statistic the SLO does not bound, nor without an SLO in the link.
        assert_eq!(slo_line(&state, Metric::Stat(Stat::P95TtftMs)), None);
        assert_eq!(
            slo_line(&ViewState::default(), Metric::Stat(Stat::P99TtftMs)),
            None
        );
        let without: Vec<Option<String>> = curves_of(
            &slice,
            BTreeSet::new(),
            &ViewState::default(),
            Metric::Stat(Stat::P99TtftMs),
        )
        .iter()
        .flat_map(|facet| {
            facet
                .series
                .iter()
                .map(|series| series.slo_capacity.clone())
        })
        .collect();
        assert_eq!(without, [None]);
    }

    /// A failed N = 1 cell: the series has an N = 1 cell, so it is normalised against N = 1 and, without data
    /// there, has no scaling metrics (a series with no N = 1 cell at all is normalised against its lowest N).
    fn failed_at_1(backend: &str, workload: &str) -> CellSummary {
        let mut cell = cell(backend, workload, 1, 0, 0.0, 0.0);
        cell.status = CellStatus::Failed;
        cell.ok_rows = 0;
        cell.stats = CellStats::default();
        cell
    }

    #[test]
    fn matrix_grids_follow_the_chosen_dimensions_and_metric() {
        let mut cells = sweep(
            "vllm",
            "long_decode",
            &[(1, 1.0), (2, 0.9), (16, 0.7), (32, 0.6)],
        );
        cells.extend(sweep(
            "sglang",
            "long_decode",
            &[(1, 1.0), (2, 0.95), (16, 0.8), (32, 0.66)],
        ));
        fill_scaling(&mut cells);
        let mut state = ViewState {
            at_load: crate::Load::Concurrency(32),
            ..ViewState::default()
        };
        let grids = matrix(&cells, &state);
        assert_eq!(grids.len(), 2);
        assert_eq!(grids[0].title, Value::Text("sglang".into()));
        let square = grids[1].squares[0][0].as_ref().unwrap();
        assert!((square.value.unwrap() - 0.6).abs() < 1e-12);
        assert_eq!(square.cells, 3);
        state.metric = Metric::Breakdown;
        state.criterion = crate::Criterion::V3;
        let grids = matrix(&cells, &state);
        assert_eq!(grids[1].squares[0][0].as_ref().unwrap().value, Some(32.0));
        let sglang = grids[0].squares[0][0].as_ref().unwrap();
        assert_eq!((sglang.value, sglang.never_within.is_some()), (None, true));
    }

    /// `sweep`'s cells at tensor parallelism `tp`.
    fn deployment(tp: &str, efficiencies: &[(u32, f64)]) -> Vec<CellSummary> {
        let mut cells = sweep("vllm", "long_decode", efficiencies);
        for cell in &mut cells {
            cell.key.config.insert("tp", tp).unwrap();
        }
        cells
    }

    #[test]
    fn a_deployment_parameter_splits_the_matrix_the_curves_and_the_filter() {
        let mut cells = deployment("4", &[(1, 1.0), (16, 0.5)]);
        cells.extend(deployment("8", &[(1, 1.0), (16, 0.8)]));
        crate::order::sort_stable_by(&mut cells, |a, b| a.key.cmp(&b.key));
        fill_scaling(&mut cells);
        // Each deployment is normalised against its own N = 1: never pooled with the other as reps.
        let (state, ignored) =
            ViewState::parse_query("view=matrix&grid=tp&rows=workload&cols=load&at_load=16");
        assert!(ignored.is_empty(), "{ignored:?}");
        assert_eq!(
            ViewState::parse_query(&state.to_query()),
            (state.clone(), vec![])
        );
        let grids = matrix(&cells, &state);
        let titles: Vec<&Value> = grids.iter().map(|grid| &grid.title).collect();
        assert_eq!(titles, [&Value::Number(4), &Value::Number(8)]);
        let at_16 = |grid: &MatrixGrid| {
            let row = &grid.squares[0];
            row.iter().flatten().last().and_then(|square| square.value)
        };
        assert!((at_16(&grids[0]).unwrap() - 0.5).abs() < 1e-12);
        assert!((at_16(&grids[1]).unwrap() - 0.8).abs() < 1e-12);
        let (curves_state, _) = ViewState::parse_query("view=curves&color=tp&metric=efficiency");
        let facets = curves(&cells, &curves_state, Metric::Stat(Stat::Efficiency));
        let labels: Vec<&Value> = facets[0]
            .series
            .iter()
            .map(|series| &series.label)
            .collect();
        assert_eq!(labels, [&Value::Number(4), &Value::Number(8)]);
        let (filtered_state, ignored) = ViewState::parse_query("view=curves&tp=8");
        assert!(ignored.is_empty(), "{ignored:?}");
        let kept = filtered(&cells, &filtered_state);
        assert_eq!(kept.len(), 6);
        assert!(
            kept.iter()
                .all(|cell| cell.key.config.get("tp") == Some("8"))
        );
        let counts = crate::filter::faceted_counts(&cells, &filtered_state.filter);
        let tp = Dimension::parse("tp").unwrap();
        assert_eq!(counts[&tp][&Value::Number(4)], 6);
    }

    #[test]
    fn squares_carry_the_signs_of_reported_figures_and_say_why_efficiency_is_absent() {
        // vllm's sweep starts at N = 2 (no baseline); sglang's N = 32 throughput is the tool's figure in one
        // rep and its p95 derived in another.
        let mut cells = sweep("vllm", "long_decode", &[(2, 0.9), (32, 0.6)]);
        cells.push(failed_at_1("vllm", "long_decode"));
        cells.extend(sweep("sglang", "long_decode", &[(1, 1.0), (32, 0.66)]));
        for cell in cells
            .iter_mut()
            .filter(|cell| cell.key.backend == "sglang" && cell.key.n().unwrap() == 32)
        {
            match cell.key.rep {
                0 => cell.origin.reported.push("aggregate_tps".into()),
                1 => cell.origin.derived.push("p95_wall_ms".into()),
                _ => {}
            }
        }
        fill_scaling(&mut cells);
        let state = ViewState {
            at_load: crate::Load::Concurrency(32),
            ..ViewState::default()
        };
        let grids = matrix(&cells, &state);
        let sglang = grids[0].squares[0][0].as_ref().unwrap();
        assert_eq!((sglang.reported, sglang.derived), (1, 0));
        assert_eq!(sglang.sign(), "†");
        assert_eq!(
            sglang.origin_lines(Metric::Stat(Stat::Efficiency)),
            [
                "† 1 of 3 cells: reported by the tool, not recomputed (the file has no request rows for it)"
            ]
        );
        let vllm = grids[1].squares[0][0].as_ref().unwrap();
        assert_eq!(vllm.value, None);
        assert_eq!(
            vllm.absent,
            Some(ScalingAbsent::NoBaseline { smallest_n: 2 })
        );
        assert_eq!(vllm.label(Metric::Stat(Stat::Efficiency)), "no N=1");
        assert!(
            vllm.origin_lines(Metric::Stat(Stat::Efficiency))[0]
                .ends_with("this sweep starts at N = 2")
        );
        // On p95 wall the derived rep is marked, the reported throughput is not.
        let p95 = ViewState {
            metric: Metric::Stat(Stat::P95WallMs),
            ..state
        };
        let sglang = matrix(&cells, &p95)[0].squares[0][0].clone().unwrap();
        assert_eq!(
            (sglang.reported, sglang.derived, sglang.sign().as_str()),
            (0, 1, "‡")
        );
        let vllm = matrix(&cells, &p95)[1].squares[0][0].clone().unwrap();
        assert_eq!((vllm.absent.clone(), vllm.sign().as_str()), (None, ""));
    }

    #[test]
    fn a_matrix_base_built_for_one_metric_serves_every_metric_and_criterion_of_its_layout() {
        // vllm's sweep has no N = 1 (efficiency absent), sglang's N = 32 carries a reported and a derived
        // figure, one vllm cell failed and one is partial: every part of a square that a metric changes.
        let mut cells = sweep("vllm", "long_decode", &[(2, 0.9), (16, 0.7), (32, 0.6)]);
        cells.push(failed_at_1("vllm", "long_decode"));
        cells.extend(sweep(
            "sglang",
            "long_decode",
            &[(1, 1.0), (16, 0.8), (32, 0.66)],
        ));
        cells.extend(sweep("sglang", "short", &[(1, 1.0), (16, 0.5), (32, 0.3)]));
        for cell in &mut cells {
            match (
                cell.key.backend.as_str(),
                cell.key.n().unwrap(),
                cell.key.rep,
            ) {
                ("sglang", 32, 0) => cell.origin.reported.push("aggregate_tps".into()),
                ("sglang", 32, 1) => cell.origin.derived.push("p95_wall_ms".into()),
                ("vllm", 16, 2) => {
                    cell.status = CellStatus::Failed;
                    cell.ok_rows = 0;
                    cell.stats = CellStats::default();
                }
                ("vllm", 32, 1) => cell.status = CellStatus::Partial,
                _ => {}
            }
        }
        fill_scaling(&mut cells);
        let layouts = [
            (Dimension::Backend, Dimension::Model, Dimension::Workload),
            (Dimension::Backend, Dimension::Workload, Dimension::Load),
            (Dimension::Load, Dimension::Backend, Dimension::Rep),
        ];
        let criteria = [crate::Criterion::V1, crate::Criterion::V3];
        let (mut reused, mut valued, mut absent, mut marked, mut never) = (0, 0, 0, 0, 0);
        for (grid, rows, cols) in layouts {
            for at_n in [16, 32] {
                for built_for in Metric::ALL {
                    let first = ViewState {
                        grid,
                        rows,
                        cols,
                        at_load: crate::Load::Concurrency(at_n),
                        metric: built_for,
                        ..ViewState::default()
                    };
                    let layout = MatrixLayout::of(&first);
                    let slice = filtered(&cells, &first);
                    let comparisons = view_comparisons(&slice, &first);
                    let base = MatrixBase::of(&cells, &slice, comparisons, &layout);
                    // Every state that differs from the first in what the matrix shows or how it pools: the
                    // base serves exactly those with the same layout.
                    let seconds = Metric::ALL.into_iter().flat_map(|metric| {
                        let first = &first;
                        criteria.iter().flat_map(move |criterion| {
                            [Aggregation::Mean, Aggregation::Median]
                                .into_iter()
                                .flat_map(move |aggregation| {
                                    [(BandSpan::Cells, true), (BandSpan::Reps, false)]
                                        .into_iter()
                                        .flat_map(move |(band, partial)| {
                                            [16, 32].into_iter().map(move |at_n| ViewState {
                                                metric,
                                                criterion: *criterion,
                                                aggregation,
                                                band,
                                                at_load: crate::Load::Concurrency(at_n),
                                                what_if: WhatIf {
                                                    partial,
                                                    ..WhatIf::DEFAULT
                                                },
                                                ..first.clone()
                                            })
                                        })
                                })
                        })
                    });
                    for second in seconds {
                        if MatrixLayout::of(&second) != layout {
                            continue;
                        }
                        let grids = base.grids(&second);
                        assert_eq!(grids, matrix(&cells, &second), "{built_for:?} → {second:?}");
                        // Where each square is one series, a per-cell metric's value is the mean of its reps
                        // at N, computed here from the cells alone.
                        if (grid, rows, cols) == layouts[0]
                            && second.metric.per_cell()
                            && second.aggregation == Aggregation::Mean
                        {
                            let admitted = inclusion(&second, BTreeSet::new());
                            for grid in &grids {
                                for (col, workload) in grid.cols.iter().enumerate() {
                                    let values: Vec<f64> = cells
                                        .iter()
                                        .filter(|cell| {
                                            grid.title == Value::Text(cell.key.backend.clone())
                                                && *workload
                                                    == Value::Text(cell.key.workload.clone())
                                                && cell.key.n().unwrap() == at_n
                                                && admitted.admits(cell)
                                        })
                                        .filter_map(|cell| second.metric.of_cell(cell))
                                        .collect();
                                    let expected = (!values.is_empty())
                                        .then(|| values.iter().sum::<f64>() / values.len() as f64);
                                    let square = grid.squares[0][col].as_ref().unwrap();
                                    assert_eq!(square.value, expected, "{second:?}");
                                    valued += u32::from(expected.is_some());
                                }
                            }
                        }
                        reused += u32::from(second.metric != built_for);
                        for square in grids
                            .iter()
                            .flat_map(|grid| grid.squares.iter().flatten().flatten())
                        {
                            absent += u32::from(square.absent.is_some());
                            marked += u32::from(square.reported + square.derived > 0);
                            never += u32::from(square.never_within.is_some());
                        }
                    }
                }
            }
        }
        // Each metric's base served the other metrics of its kind, and the squares it served had reasons,
        // marks and a breakdown that never comes.
        assert!(reused > 300, "{reused} reuses");
        assert!(valued > 100, "{valued} values checked against the cells");
        assert!(
            absent > 0 && marked > 0 && never > 0,
            "{absent} {marked} {never}"
        );
    }

    /// `cells` with their model set to `model`.
    fn of_model(mut cells: Vec<CellSummary>, model: &str) -> Vec<CellSummary> {
        for cell in &mut cells {
            cell.key.model = model.into();
        }
        cells
    }

    #[test]
    fn a_frontier_is_drawn_over_one_configuration_and_withheld_over_pooled_models() {
        // Throughput against p95: one model's reps are a real operating point at each N.
        let one = sweep("vllm", "w", &[(1, 1.0), (2, 0.9), (4, 0.5)]);
        let state = ViewState {
            view: View::Curves,
            metric: Metric::Stat(Stat::AggregateTps),
            x: XAxis::Metric(Metric::Stat(Stat::P95WallMs)),
            facet: None,
            frontier: crate::view_state::FrontierMode::Series,
            ..ViewState::default()
        };
        let facets = curves(&one, &state, Metric::Stat(Stat::AggregateTps));
        assert!(facets[0].series[0].frontier.is_some());
        assert_eq!(frontier_withheld(&facets, &state), None);
        // Two models pooled into each point: their mean is no configuration anyone ran.
        let mut two = of_model(one.clone(), "a");
        two.extend(of_model(
            sweep("vllm", "w", &[(1, 1.0), (2, 0.6), (4, 0.3)]),
            "b",
        ));
        let facets = curves(&two, &state, Metric::Stat(Stat::AggregateTps));
        let series = &facets[0].series[0];
        assert!(series.frontier.is_none(), "no frontier over pooled models");
        assert!(!series.is_dominated(1), "no point is called dominated");
        let why = frontier_withheld(&facets, &state).unwrap();
        assert!(
            why.starts_with(
                "1 of 1 series pool several configurations at a point (up to model a, b)"
            ),
            "{why}"
        );
        assert_eq!(
            panel_notes(&facets, &[], &state),
            [vec![
                "no frontier through vllm: points pool model a, b".to_string()
            ]]
        );
        // Coloured by model, each series is one configuration again.
        let by_model = ViewState {
            color: Dimension::Model,
            ..state.clone()
        };
        let facets = curves(&two, &by_model, Metric::Stat(Stat::AggregateTps));
        assert!(
            facets[0]
                .series
                .iter()
                .all(|series| series.frontier.is_some())
        );
        assert_eq!(frontier_withheld(&facets, &by_model), None);
    }

    #[test]
    fn series_pooling_different_model_sets_are_named() {
        let mut cells = of_model(sweep("vllm", "w", &[(1, 1.0), (2, 0.5)]), "llama");
        cells.extend(of_model(
            sweep("vllm", "w", &[(1, 1.0), (2, 0.5)]),
            "mistral",
        ));
        cells.extend(of_model(
            sweep("sglang", "w", &[(1, 1.0), (2, 0.4)]),
            "llama",
        ));
        cells.extend(of_model(
            sweep("sglang", "w", &[(1, 1.0), (2, 0.4)]),
            "mistral",
        ));
        fill_scaling(&mut cells);
        let state = ViewState {
            facet: None,
            ..ViewState::default()
        };
        let slice: Vec<&CellSummary> = cells.iter().collect();
        assert_eq!(unequal_sets(&slice, BTreeSet::new(), &state), []);
        // A ledger entry takes sglang's mistral out of every aggregate: the two sides now pool different sets.
        for cell in cells
            .iter_mut()
            .filter(|cell| cell.key.backend == "sglang" && cell.key.model == "mistral")
        {
            cell.excluded = vec!["tokenizer".into()];
            cell.exclusion_scope = Some(ExclusionScope::All);
        }
        let slice: Vec<&CellSummary> = cells.iter().collect();
        let unequal = unequal_sets(&slice, BTreeSet::new(), &state);
        assert_eq!(unequal.len(), 1, "{unequal:?}");
        assert_eq!(unequal[0].dimension, Dimension::Model);
        assert_eq!(
            unequal[0].short(),
            "⚠ series pool different model sets: sglang 1 model, vllm 2"
        );
        let long = unequal[0].long();
        assert!(
            long.contains("sglang pools llama; vllm pools llama, mistral"),
            "{long}"
        );
        let facets = curves(&cells, &state, Metric::Stat(Stat::Efficiency));
        assert_eq!(
            panel_notes(&facets, &unequal, &state),
            [vec![unequal[0].short()]]
        );
        // Panels whose series pool the same sets share one sentence naming them all.
        let in_panel = |facet: &str| UnequalSets {
            facet: Some(Value::Text(facet.into())),
            ..unequal[0].clone()
        };
        let sentences = unequal_sentences(&[in_panel("w1"), in_panel("w2"), in_panel("w3")]);
        assert_eq!(sentences.len(), 1, "{sentences:?}");
        assert!(
            sentences[0].starts_with("In w1, w2 and w3, the series pool different model sets"),
            "{sentences:?}"
        );
        // Coloured by model, models are not pooled: nothing to say.
        let by_model = ViewState {
            color: Dimension::Model,
            ..state
        };
        assert_eq!(unequal_sets(&slice, BTreeSet::new(), &by_model), []);
    }

    #[test]
    fn a_panel_without_points_says_why_in_words() {
        let state = ViewState {
            view: View::Curves,
            facet: Some(Dimension::Backend),
            ..ViewState::default()
        };
        let notes = |cells: &[CellSummary], comparisons: BTreeSet<String>, state: &ViewState| {
            let slice: Vec<&CellSummary> = cells.iter().collect();
            let facets = curves_of(&slice, comparisons.clone(), state, state.metric);
            empty_notes(&slice, comparisons, state, state.metric, &facets)
        };
        // vllm is drawn; sglang's every cell is out by a comparison entry that applies, tgi starts at N = 4.
        let mut cells = sweep("vllm", "w", &[(1, 1.0), (2, 0.9)]);
        let mut excluded = sweep("sglang", "w", &[(1, 1.0), (2, 0.8)]);
        for cell in &mut excluded {
            cell.excluded = vec!["tokenizer".into()];
            cell.exclusion_scope = Some(ExclusionScope::Comparison);
        }
        cells.extend(excluded);
        cells.extend(sweep("tgi", "w", &[(4, 1.0), (8, 0.5)]));
        cells.push(failed_at_1("tgi", "w"));
        fill_scaling(&mut cells);
        let comparisons = BTreeSet::from(["tokenizer".to_string()]);
        // Facets in backend order: sglang, tgi, vllm.
        assert_eq!(
            notes(&cells, comparisons.clone(), &state),
            [
                vec!["all 6 cells excluded by the ledger (tokenizer)".to_string()],
                vec![
                    "no parallel efficiency: no N = 1 cell in this series (measured from N = 4)"
                        .to_string()
                ],
                vec![],
            ]
        );
        // The p95 multiplier needs the same baseline; throughput does not.
        let multiplier = ViewState {
            metric: Metric::Stat(Stat::P95Multiplier),
            ..state.clone()
        };
        assert_eq!(
            notes(&cells, comparisons.clone(), &multiplier)[1],
            ["no p95 latency multiplier: no N = 1 cell in this series (measured from N = 4)"]
        );
        let throughput = ViewState {
            metric: Metric::Stat(Stat::AggregateTps),
            ..state.clone()
        };
        assert_eq!(
            notes(&cells, comparisons.clone(), &throughput)[1],
            Vec::<String>::new()
        );
        // In one panel, only the empty series is named.
        let one_panel = ViewState {
            facet: None,
            ..state.clone()
        };
        assert_eq!(
            notes(&cells, comparisons, &one_panel),
            [vec![
                "sglang: all 6 cells excluded by the ledger (tokenizer)".to_string(),
                "tgi: no parallel efficiency: no N = 1 cell in this series (measured from N = 4)"
                    .to_string()
            ]]
        );
        // Cells without a successful row, and partial cells the toggle leaves out.
        let mut skipped = sweep("vllm", "w", &[(1, 1.0), (2, 0.9)]);
        for cell in &mut skipped {
            cell.status = CellStatus::Skipped;
            cell.stats.ok_rows = 0;
        }
        assert_eq!(
            notes(&skipped, BTreeSet::new(), &state),
            [vec![
                "no data: all 6 cells are without a successful request (skipped, failed or not run)"
                    .to_string()
            ]]
        );
        let mut partial = sweep("vllm", "w", &[(1, 1.0), (2, 0.9)]);
        for cell in &mut partial {
            cell.status = CellStatus::Partial;
        }
        fill_scaling(&mut partial);
        let mut no_partial = state.clone();
        no_partial.what_if.partial = false;
        assert_eq!(
            notes(&partial, BTreeSet::new(), &no_partial),
            [vec![
                "all 6 cells partial, and partial cells are left out".to_string()
            ]]
        );
    }

    #[test]
    fn a_near_zero_value_is_not_written_as_zero_and_partial_points_say_so() {
        assert_eq!(table_number(0.00046710905384226377), "0.00047");
        assert_eq!(table_number(0.5), "0.500");
        assert_eq!(table_number(0.0), "0.000");
        assert_eq!(
            value_text(Metric::Stat(Stat::Efficiency), 0.00046710905384226377),
            "0.00047"
        );
        assert_eq!(value_text(Metric::Stat(Stat::Efficiency), 0.9), "0.900");
        let mut cells = sweep("pytorch_direct", "balanced_2k", &[(1, 1.0), (16, 0.0004)]);
        cells.truncate(2);
        cells[1].status = CellStatus::Partial;
        fill_scaling(&mut cells);
        let state = ViewState {
            facet: None,
            ..ViewState::default()
        };
        let facets = curves(&cells, &state, Metric::Stat(Stat::Efficiency));
        let points = &facets[0].series[0].points;
        assert_eq!(points[0].table_text(XAxis::Load), "1: 1.000");
        assert_eq!(
            points[1].table_text(XAxis::Load),
            "16: 0.00040 (◐ 1 of 1 cell partial)"
        );
    }

    #[test]
    fn comparison_exclusions_apply_only_when_backends_are_set_against_each_other() {
        let mut cells = sweep("vllm", "long_prefill_8k", &[(1, 1.0), (2, 0.5)]);
        cells.extend(sweep("sglang", "long_prefill_8k", &[(1, 1.0), (2, 0.4)]));
        for cell in cells.iter_mut().filter(|cell| cell.key.backend == "sglang") {
            cell.excluded = vec!["x".into()];
            cell.exclusion_scope = Some(ExclusionScope::Comparison);
        }
        fill_scaling(&mut cells);
        let mut state = ViewState {
            facet: None,
            ..ViewState::default()
        };
        let facets = curves(&cells, &state, Metric::Stat(Stat::Efficiency));
        let sglang = &facets[0].series[0];
        assert_eq!(sglang.label, Value::Text("sglang".into()));
        assert!(sglang.points.is_empty(), "left out of the comparison");
        assert_eq!(sglang.left_out, 6);
        state.what_if.excluded = true;
        let facets = curves(&cells, &state, Metric::Stat(Stat::Efficiency));
        assert_eq!(facets[0].series[0].points.len(), 2);
        // A single-backend view keeps them.
        state.what_if.excluded = false;
        state
            .filter
            .values
            .insert(Dimension::Backend, vec!["sglang".into()]);
        assert_eq!(
            curves(&cells, &state, Metric::Stat(Stat::Efficiency))[0].series[0]
                .points
                .len(),
            2
        );
    }

    #[test]
    fn a_series_ending_in_skipped_cells_says_where() {
        let mut cells = sweep(
            "pytorch_direct",
            "long_decode",
            &[(1, 1.0), (2, 0.5), (4, 0.3)],
        );
        for rep in 0..3 {
            let mut skipped = CellSummary::empty(
                CellKey {
                    load: crate::Load::Concurrency(16),
                    rep,
                    ..cells[0].key.clone()
                },
                CellStatus::Skipped,
            );
            skipped.skip_rows = 1;
            cells.push(skipped);
        }
        fill_scaling(&mut cells);
        let facets = curves(
            &cells,
            &ViewState::default(),
            Metric::Stat(Stat::Efficiency),
        );
        let series = &facets[0].series[0];
        assert_eq!(series.points.last().unwrap().load.concurrency().unwrap(), 4);
        assert_eq!(series.skipped_at, Some(crate::Load::Concurrency(16)));
        assert_eq!(series.skipped_cells.len(), 3);
        assert_eq!(
            series.breakdown,
            Breakdown::At {
                load: crate::Load::Concurrency(2)
            }
        );
    }

    #[test]
    fn with_a_metric_on_x_points_sit_at_its_pooled_value_and_each_series_has_its_own_frontier() {
        // vllm, two reps per N; the rep means are (p95 ms, tok/s): N=1 (105, 51), N=2 (125, 91), N=4 (205, 86),
        // N=8 (405, 161). N=4 is beaten by N=2 (faster and more), so the frontier is N = 1, 2, 8.
        let mut cells = Vec::new();
        for (n, p95, tps) in [
            (1, 100.0, 50.0),
            (2, 120.0, 90.0),
            (4, 200.0, 85.0),
            (8, 400.0, 160.0),
            (16, 900.0, 150.0),
        ] {
            for rep in 0..2 {
                let spread = f64::from(rep);
                cells.push(cell(
                    "vllm",
                    "w",
                    n,
                    rep,
                    tps + 2.0 * spread,
                    p95 + 10.0 * spread,
                ));
            }
        }
        // N=16 has throughput but no p95 latency: it has no place on the chart.
        for cell in cells.iter_mut().filter(|cell| cell.key.n().unwrap() == 16) {
            cell.stats.p95_wall_ms = None;
        }
        // sglang's one point would beat every vllm point, but frontiers are per series.
        cells.push(cell("sglang", "w", 1, 0, 500.0, 50.0));
        fill_scaling(&mut cells);
        let mut state = ViewState {
            view: View::Curves,
            metric: Metric::Stat(Stat::AggregateTps),
            x: XAxis::Metric(Metric::Stat(Stat::P95WallMs)),
            facet: None,
            frontier: crate::view_state::FrontierMode::Series,
            ..ViewState::default()
        };
        let facets = curves(&cells, &state, Metric::Stat(Stat::AggregateTps));
        let [sglang, vllm] = facets[0].series.as_slice() else {
            panic!("two series: {facets:?}");
        };
        // Points stay in N order, each at the pooled value of both metrics, the x band over the cells.
        let placed: Vec<(u32, f64, f64)> = vllm
            .points
            .iter()
            .map(|point| (point.load.concurrency().unwrap(), point.x, point.value))
            .collect();
        assert_eq!(
            placed,
            [
                (1, 105.0, 51.0),
                (2, 125.0, 91.0),
                (4, 205.0, 86.0),
                (8, 405.0, 161.0)
            ]
        );
        assert_eq!((vllm.points[0].x_min, vllm.points[0].x_max), (100.0, 110.0));
        assert_eq!(vllm.without_value, 1);
        assert_eq!(
            without_value_note(&facets, Metric::Stat(Stat::AggregateTps), state.x).as_deref(),
            Some(
                "1 point without a value of p95 latency or output tok/s left out (never drawn as zero)"
            )
        );
        assert_eq!(
            vllm.frontier_loads(),
            [1, 2, 8].map(crate::Load::Concurrency)
        );
        assert!(vllm.is_dominated(2) && !vllm.is_dominated(1));
        let frontier = vllm.frontier.as_ref().unwrap();
        assert_eq!(
            frontier.steps,
            [
                (105.0, 51.0),
                (125.0, 51.0),
                (125.0, 91.0),
                (405.0, 91.0),
                (405.0, 161.0)
            ]
        );
        assert_eq!(sglang.frontier_loads(), [crate::Load::Concurrency(1)]);
        // Without the frontier toggle no point is dominated; with N on x, points sit at N and nothing is
        // missing but the latency-less N=16 point's plotted value, which it has.
        state.frontier = crate::view_state::FrontierMode::Off;
        let facets = curves(&cells, &state, Metric::Stat(Stat::AggregateTps));
        assert!(facets[0].series[1].frontier.is_none());
        assert!(!facets[0].series[1].is_dominated(2));
        state.x = XAxis::Load;
        state.frontier = crate::view_state::FrontierMode::Series;
        let facets = curves(&cells, &state, Metric::Stat(Stat::AggregateTps));
        let vllm = &facets[0].series[1];
        assert!(vllm.frontier.is_none(), "no frontier against N");
        assert_eq!(vllm.points.len(), 5);
        assert_eq!(vllm.without_value, 0);
        assert_eq!(
            vllm.points.iter().map(|point| point.x).collect::<Vec<_>>(),
            [1.0, 2.0, 4.0, 8.0, 16.0]
        );
        // A missing plotted value counts whatever the x axis; skipped cells are no point at all.
        assert_eq!(
            curves(&cells, &state, Metric::Stat(Stat::P95WallMs))[0].series[1].without_value,
            1
        );
        assert_eq!(
            without_value_note(&facets, Metric::Stat(Stat::AggregateTps), XAxis::Load),
            None
        );
    }

    #[test]
    fn empty_results_name_the_filter_that_removed_everything() {
        let cells = sweep("vllm", "long_decode", &[(1, 1.0)]);
        let mut state = ViewState::default();
        state
            .filter
            .values
            .insert(Dimension::Backend, vec!["sglang".into()]);
        assert_eq!(
            empty_reason(&cells, &state).unwrap(),
            "no cell matches; the filter backend=sglang removes everything"
        );
        state.filter.values.clear();
        assert_eq!(empty_reason(&cells, &state), None);
    }

    #[test]
    fn pre_refill_what_if_swaps_cells_and_recomputes() {
        let mut cells = sweep("sglang", "w", &[(1, 1.0), (2, 0.5)]);
        fill_scaling(&mut cells);
        let mut before = cells[1].clone();
        before.status = CellStatus::Failed;
        before.ok_rows = 0;
        before.failed_rows = 20;
        before.stats = CellStats::default();
        let mut state = ViewState::default();
        assert_eq!(
            working_cells(&cells, &[before.clone()], &state.what_if)[1].efficiency,
            cells[1].efficiency
        );
        state.what_if.pre_refill = true;
        let working = working_cells(&cells, &[before], &state.what_if);
        assert_eq!(working[1].status, CellStatus::Failed);
        assert_eq!(working[1].efficiency, None);
    }

    #[test]
    fn the_slice_follows_the_partial_and_excluded_toggles() {
        let mut cells = sweep("vllm", "long_prefill_8k", &[(1, 1.0), (2, 0.5)]);
        cells.extend(sweep("sglang", "long_prefill_8k", &[(1, 1.0), (2, 0.4)]));
        cells[1].status = CellStatus::Partial;
        for cell in cells.iter_mut().filter(|cell| cell.key.backend == "sglang") {
            cell.excluded = vec!["x".into()];
            cell.exclusion_scope = Some(ExclusionScope::Comparison);
        }
        let mut state = ViewState::default();
        // The matrix grids by backend: a comparison, so the sglang cells are left out of the slice.
        assert_eq!(slice(&cells, &state).len(), 6);
        state.what_if.partial = false;
        assert_eq!(slice(&cells, &state).len(), 5);
        state.what_if.excluded = true;
        assert_eq!(slice(&cells, &state).len(), 11);
        // One backend alone is no comparison.
        state.grid = Dimension::Model;
        state.rows = Dimension::Phase;
        state.what_if.excluded = false;
        assert_eq!(slice(&cells, &state).len(), 11);
    }

    #[test]
    fn a_square_holding_one_series_shows_that_series_curve() {
        let mut cells = sweep("vllm", "a", &[(1, 1.0), (2, 0.9), (4, 0.6), (8, 0.7)]);
        cells.extend(sweep(
            "vllm",
            "b",
            &[(1, 1.0), (2, 0.9), (4, 0.8), (8, 0.7)],
        ));
        cells[7].status = CellStatus::Partial;
        fill_scaling(&mut cells);
        let state = ViewState {
            metric: Metric::Breakdown,
            criterion: crate::Criterion::V3,
            ..ViewState::default()
        };
        let per_series =
            crate::curve::series_curves(&cells, &curve_options(&state, BTreeSet::new()));
        let grid = &matrix(&cells, &state)[0];
        for (col, curve) in per_series.iter().enumerate() {
            let square = grid.squares[0][col].as_ref().unwrap();
            assert_eq!(
                square.value.map(|n| n as u32),
                curve.breakdown(&state.criterion).n()
            );
        }
        assert_eq!(grid.squares[0][0].as_ref().unwrap().value, Some(4.0));
        assert!(grid.squares[0][1].as_ref().unwrap().never_within.is_some());
    }

    #[test]
    fn a_comparison_exclusion_applies_whatever_dimension_sets_the_backends_apart() {
        let mut cells = sweep("vllm", "long_prefill_8k", &[(1, 1.0), (2, 0.5)]);
        cells.extend(sweep("sglang", "long_prefill_8k", &[(1, 1.0), (2, 0.4)]));
        for cell in &mut cells {
            // Each backend ran in its own run directory.
            cell.key.run_id = format!("run-{}", cell.key.backend);
            cell.excluded = vec!["mistral".into()];
            cell.exclusion_scope = Some(ExclusionScope::Comparison);
        }
        fill_scaling(&mut cells);
        let left_out = |state: &ViewState| -> u32 {
            curves(&cells, state, Metric::Stat(Stat::Efficiency))
                .iter()
                .flat_map(|facet| &facet.series)
                .map(|series| series.left_out)
                .sum()
        };
        let by_run = ViewState {
            view: View::Curves,
            color: Dimension::Run,
            facet: None,
            ..ViewState::default()
        };
        assert_eq!(
            left_out(&by_run),
            12,
            "colouring by run sets the backends apart"
        );
        let by_backend_facet = ViewState {
            color: Dimension::Model,
            facet: Some(Dimension::Backend),
            ..by_run.clone()
        };
        assert_eq!(left_out(&by_backend_facet), 12);
        // Both backends pooled into one curve per model: nothing is set against anything, the cells stay.
        let pooled = ViewState {
            color: Dimension::Model,
            facet: Some(Dimension::Phase),
            ..by_run.clone()
        };
        assert_eq!(left_out(&pooled), 0);
        // The same rule in the matrix (runs as columns) and for the slice the CSV writes.
        let matrix_by_run = ViewState {
            cols: Dimension::Run,
            grid: Dimension::Phase,
            ..ViewState::default()
        };
        assert!(slice(&cells, &matrix_by_run).is_empty());
        let grids = matrix(
            &cells,
            &ViewState {
                at_load: crate::Load::Concurrency(2),
                ..matrix_by_run
            },
        );
        assert!(
            grids[0].squares[0]
                .iter()
                .all(|square| square.as_ref().unwrap().value.is_none())
        );
    }

    #[test]
    fn a_cell_that_is_not_in_the_data_is_named_with_the_first_part_no_cell_shares() {
        let mut cells = sweep("vllm", "a", &[(1, 1.0), (2, 0.9)]);
        cells.extend(sweep("sglang", "b", &[(1, 1.0), (4, 0.8)]));
        let asked = |text: &str| -> CellKey { text.parse().unwrap() };
        assert_eq!(missing_cell(&cells, &cells[1].key), None);
        assert_eq!(
            missing_cell(&cells, &asked("x/s/scaling/vllm/m/a/n=2/rep=0")).as_deref(),
            Some("No cell x/s/scaling/vllm/m/a/n=2/rep=0 in this data: no cell has run=x.")
        );
        // vllm measured workload a at N = 1 and 2 (reps 0–2): N = 4 is sglang's only.
        assert_eq!(
            missing_cell(&cells, &asked("r/s/scaling/vllm/m/a/n=4/rep=0")).as_deref(),
            Some(
                "No cell r/s/scaling/vllm/m/a/n=4/rep=0 in this data: the cells of its run, suite, phase, \
                 backend, model and workload have no n=4 (they have n=1, n=2)."
            )
        );
        assert_eq!(
            missing_cell(&cells, &asked("r/s/scaling/tgi/m/a/n=1/rep=0")).as_deref(),
            Some(
                "No cell r/s/scaling/tgi/m/a/n=1/rep=0 in this data: the cells of its run, suite and phase have \
                 no backend=tgi (they have sglang, vllm)."
            )
        );
        assert_eq!(
            missing_cell(&cells, &asked("r/s/scaling/vllm/m/a/n=1/rep=7")).as_deref(),
            Some(
                "No cell r/s/scaling/vllm/m/a/n=1/rep=7 in this data: the cells of its run, suite, phase, backend, \
                 model, workload and load have no rep=7 (they have 0, 1, 2)."
            )
        );
        // A configuration no cell of the series states.
        assert_eq!(
            missing_cell(&cells, &asked("r/s/scaling/vllm/m/a/tp=8/n=1/rep=0")).as_deref(),
            Some(
                "No cell r/s/scaling/vllm/m/a/tp=8/n=1/rep=0 in this data: the cells of its run, suite, phase, \
                 backend, model and workload have no configuration tp=8 (they have none)."
            )
        );
    }

    #[test]
    fn the_picker_offers_only_choices_that_lead_to_a_cell_and_keeps_what_it_can() {
        let mut cells = sweep("vllm", "a", &[(1, 1.0), (2, 0.9)]);
        cells.extend(sweep("sglang", "b", &[(1, 1.0), (4, 0.8)]));
        let current = cells[1].key.clone(); // vllm, a, n=2, rep 0
        assert_eq!(
            picker_choices(&cells, &current, Dimension::Load),
            vec![Value::Number(1), Value::Number(2)]
        );
        assert_eq!(
            picker_choices(&cells, &current, Dimension::Backend).len(),
            2
        );
        // Switching backend: workload a does not exist for sglang, so it moves to b; N=2 neither, so N=1.
        let picked = pick(&cells, &current, Dimension::Backend, "sglang").unwrap();
        assert_eq!(
            (
                picked.backend.as_str(),
                picked.workload.as_str(),
                picked.load.concurrency().unwrap(),
                picked.rep
            ),
            ("sglang", "b", 1, 0)
        );
        // Switching rep keeps everything else.
        let picked = pick(&cells, &current, Dimension::Rep, "2").unwrap();
        assert_eq!((picked.load.concurrency().unwrap(), picked.rep), (2, 2));
        assert_eq!(pick(&cells, &current, Dimension::Rep, "7"), None);
    }

    #[test]
    fn points_and_single_cell_squares_name_their_cells() {
        let mut cells = sweep("vllm", "a", &[(1, 1.0), (2, 0.9)]);
        fill_scaling(&mut cells);
        let state = ViewState {
            at_load: crate::Load::Concurrency(2),
            ..ViewState::default()
        };
        let facets = curves(&cells, &state, Metric::Stat(Stat::Efficiency));
        let (series, point) = (&facets[0].series[0], &facets[0].series[0].points[1]);
        let slice = filtered(&cells, &state);
        let in_curves = ViewState {
            view: View::Curves,
            ..state.clone()
        };
        let comparisons = view_comparisons(&slice, &in_curves);
        let keys = point_keys(
            &slice,
            comparisons,
            &state,
            facets[0].title.as_ref(),
            &series.label,
            point.load,
        );
        assert_eq!(keys.len(), 3, "three reps at N=2");
        assert_eq!(keys.len() as u32, point.cells);
        assert!(keys.iter().all(|key| key.n().unwrap() == 2));
        let mut by_rep = state.clone();
        by_rep.cols = Dimension::Rep;
        let grid = &matrix(&cells, &by_rep)[0];
        let square = grid.squares[0][1].as_ref().unwrap();
        assert_eq!(
            square
                .only_cell
                .as_ref()
                .map(|key| (key.n().unwrap(), key.rep)),
            Some((2, 1))
        );
        let pooled = &matrix(&cells, &state)[0].squares[0][0];
        assert_eq!(pooled.as_ref().unwrap().only_cell, None);
    }

    #[test]
    fn n_as_columns_shows_every_n_whatever_at_n_says() {
        let mut cells = sweep("vllm", "a", &[(1, 1.0), (2, 0.9), (4, 0.8)]);
        fill_scaling(&mut cells);
        let state = ViewState {
            cols: Dimension::Load,
            at_load: crate::Load::Concurrency(16),
            ..ViewState::default()
        };
        assert!(!uses_at_load(&state));
        let grid = &matrix(&cells, &state)[0];
        assert_eq!(
            grid.cols,
            vec![Value::Number(1), Value::Number(2), Value::Number(4)]
        );
        assert!(
            grid.squares[0]
                .iter()
                .all(|square| square.as_ref().unwrap().value.is_some())
        );
    }
}
