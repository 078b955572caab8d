//! The boundary matrix as data: one square per (grid, row, column) value, each a curve of the engine over its
//! cells. It is built in two steps so a change of the metric shown costs only the second: [`MatrixBase`] holds
//! what the metric does not change (the squares, their pooled curves, flags and marks), and
//! [`MatrixBase::grids`] reads the values of the metric and criterion off it.

use super::{Value, applied_comparisons, filtered, inclusion_of, matrix_dimensions, part_of};
use crate::curve::BandSpan;
use crate::curve::{Breakdown, Curve, CurveOptions, CurvePoint, curves_with_cells};
use crate::key::{CellKey, Dimension, DimensionValue};
use crate::load::{Load, LoadKind};
use crate::metric::Metric;
use crate::order::sorted_distinct;
use crate::origin::Mark;
use crate::pooling::Aggregation;
use crate::pooling::Pooling;
use crate::query::WhatIf;
use crate::reasons::ScalingAbsent;
use crate::slo::{LoadAxis, Outcome, Placed, Slo};
use crate::stat::Stat;
use crate::status::CellStatus;
use crate::summary::CellSummary;
use crate::view_state::ViewState;
use std::collections::{BTreeMap, BTreeSet};

mod scale;
pub use scale::{CAPACITY_MARKS, LoadScale};

/// Status and flag counts of a group of cells, for glyphs and hover text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Flags {
    /// Skipped cells.
    pub skipped: u32,
    /// Partial cells.
    pub partial: u32,
    /// Failed cells.
    pub failed: u32,
    /// Cells planned but not run.
    pub not_run: u32,
    /// Refilled cells.
    pub refilled: u32,
    /// Cells completed through a fallback path.
    pub fallback: u32,
    /// Cells an exclusion ledger entry matches.
    pub excluded: u32,
    /// Cells with data that the current view leaves out (exclusions, the partial toggle).
    pub left_out: u32,
}

impl Flags {
    /// Counts one cell; `admitted` says whether the view lets it enter aggregates.
    pub fn count(&mut self, cell: &CellSummary, admitted: bool) {
        match cell.status {
            CellStatus::Skipped => self.skipped += 1,
            CellStatus::Partial => self.partial += 1,
            CellStatus::Failed => self.failed += 1,
            CellStatus::NotRun => self.not_run += 1,
            CellStatus::Clean => {}
        }
        self.refilled += u32::from(cell.refilled);
        self.fallback += u32::from(cell.fallback);
        self.excluded += u32::from(!cell.excluded.is_empty());
        self.left_out += u32::from(cell.has_data() && !admitted);
    }

    /// `(glyph, text)` pairs for the non-clean parts, most important first.
    pub fn glyphs(&self) -> Vec<(&'static str, String)> {
        let mut glyphs = Vec::new();
        let mut add = |count: u32, glyph: &'static str, what: &str| {
            if count > 0 {
                glyphs.push((glyph, format!("{count} {what}")));
            }
        };
        add(self.skipped, "⊘", "skipped");
        add(self.failed, "✕", "failed");
        add(self.partial, "◐", "partial");
        add(self.not_run, "∅", "not run");
        add(self.refilled, "↻", "refilled");
        add(self.excluded, "⊖", "excluded by the ledger");
        add(self.fallback, "⤳", "completed via fallback");
        glyphs
    }
}

/// One square of the matrix.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatrixCell {
    /// The colour value; for `breakdown`, the N (as a number).
    pub value: Option<f64>,
    /// For `breakdown`: the load the curve breaks (or, for a rate series, saturates) at.
    pub breakdown_at: Option<Load>,
    /// For `breakdown`: data exist and the criterion never holds within the measured loads; the largest load
    /// measured.
    pub never_within: Option<Load>,
    /// Admitted cells with data that fed the value.
    pub cells: u32,
    /// What they span.
    pub pooling: crate::pooling::Pooling,
    /// Σ ok rows of the pooled cells.
    pub ok_rows: u64,
    /// Σ expected rows of the pooled cells.
    pub expected_rows: u64,
    /// Status and flag counts of the square's cells.
    pub flags: Flags,
    /// The square's one cell, when it holds exactly one (it then opens in the inspector).
    pub only_cell: Option<CellKey>,
    /// The latest cell of the square's shown load when all its cells there follow one History (they differ by
    /// run and rep only): the square then links to that History.
    pub history_cell: Option<CellKey>,
    /// How many of the pooled cells show the metric as the tool's reported figure, and how many as a derived
    /// one ([`Mark`]): the square carries the sign so reported and recomputed figures are never mixed silently.
    pub reported: u32,
    /// How many show it as a derived one.
    pub derived: u32,
    /// Why a scaling metric is absent where the cells have data (no N = 1 cell in the series, …).
    pub absent: Option<ScalingAbsent>,
    /// What the scaling metric shown is measured against when not N = 1 (`vs N=4`).
    pub baseline: Option<String>,
    /// For `slo_capacity`: the capacity in words (`≈ 5.3 req/s (4–8)`, `never met (fails at N=1)`).
    pub capacity: Option<String>,
    /// For `slo_capacity`: the kind of load the square was judged at and where its outcome sits on that kind's
    /// scale ([`LoadScale`]), a lower bound kept apart from a capacity found between two levels.
    pub capacity_placed: Option<(LoadKind, Placed)>,
}

impl MatrixCell {
    /// Why the square shows no value, as it says it: its cells are left out of this view ("excluded"), or none
    /// has data ("no data"). `None` when it has a value or never breaks.
    pub fn missing(&self) -> Option<&'static str> {
        if self.value.is_some() || self.never_within.is_some() {
            None
        } else if let Some(absent) = &self.absent {
            Some(absent.short())
        } else if self.flags.left_out > 0 {
            Some("excluded")
        } else {
            Some("no data")
        }
    }

    /// The sign after the value (`†` reported, `‡` derived; `†‡` when the pooled cells mix both), empty when
    /// every pooled figure is recomputed.
    pub fn sign(&self) -> String {
        Mark::signs(self.reported, self.derived)
    }

    /// Hover lines for the signs and for an absent scaling metric, in the words of [`Mark`] and
    /// [`ScalingAbsent`].
    pub fn origin_lines(&self, metric: Metric) -> Vec<String> {
        let mut lines = Mark::group_lines(self.reported, self.derived, self.cells);
        if let Some(absent) = &self.absent {
            lines.push(format!("{} {}", metric.label(), absent.sentence()));
        }
        if let Some(note) = &self.baseline {
            lines.push(crate::reasons::baseline_sentence(metric, note));
        }
        lines
    }

    /// What the square prints: `0.482`, `3.21×`, `845 ms`, `N=16`, `never`, `excluded`, `no data`.
    pub fn label(&self, metric: Metric) -> String {
        if let Some(capacity) = &self.capacity {
            return capacity.clone();
        }
        match (self.value, self.never_within) {
            (Some(_), _)
                if self
                    .breakdown_at
                    .is_some_and(|at| at.kind() != LoadKind::Concurrency) =>
            {
                self.breakdown_at.map_or_else(String::new, Load::label)
            }
            (Some(value), _) => match &self.baseline {
                Some(note) => format!("{} {note}", metric.format(value)),
                None => metric.format(value),
            },
            (None, Some(_)) => "never".into(),
            (None, None) => self.missing().unwrap_or("no data").into(),
        }
    }

    /// The value as the hover says it, with the qualifier the square has no room for ("never within the
    /// measured N (≤ 32)").
    pub fn describe(&self, metric: Metric) -> String {
        match (self.value, self.never_within) {
            (None, Some(Load::Concurrency(max_n))) => {
                format!("never within the measured N (≤ {max_n})")
            }
            (None, Some(max)) => format!("never within the measured rates (≤ {})", max.label()),
            _ => self.label(metric),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
/// One matrix grid: a value of the grid dimension, its rows and columns, and a square where a cell has those values.
pub struct MatrixGrid {
    /// The grid's value of the grid dimension.
    pub title: Value,
    /// The rows' values.
    pub rows: Vec<Value>,
    /// The columns' values.
    pub cols: Vec<Value>,
    /// `squares[row][col]`; `None` where no cell has these values.
    pub squares: Vec<Vec<Option<MatrixCell>>>,
}

/// Whether the matrix shows one load (`at_load`): for metrics read at one load, unless the load is itself an
/// axis or the grid, in which case every load is shown.
pub fn uses_at_load(state: &ViewState) -> bool {
    !matches!(
        state.metric,
        Metric::Breakdown | Metric::OkRate | Metric::SloCapacity
    ) && ![state.rows, state.cols, state.grid].contains(&Dimension::Load)
}

/// The matrix: one grid per value of `state.grid`, rows × cols inside, coloured by `state.metric`. Each square
/// is one curve of the engine (its cells pooled), so a square holding one series shows exactly what the audit's
/// breakdown table says for that series.
pub fn matrix(cells: &[CellSummary], state: &ViewState) -> Vec<MatrixGrid> {
    let slice = filtered(cells, state);
    let comparisons = applied_comparisons(&slice, part_of(&matrix_dimensions(state)));
    matrix_of(cells, &slice, comparisons, state)
}

/// [`matrix`] from the cells already filtered (`slice`, a subset of `cells`) and the comparison entries that
/// apply to them in the matrix ([`super::view_comparisons`] of a matrix view).
pub fn matrix_of(
    cells: &[CellSummary],
    slice: &[&CellSummary],
    comparisons: BTreeSet<String>,
    state: &ViewState,
) -> Vec<MatrixGrid> {
    MatrixBase::of(cells, slice, comparisons, &MatrixLayout::of(state)).grids(state)
}

/// What the metric-independent part of the matrix depends on in the view state, besides the filtered cells and
/// the comparison entries: two states with the same layout share one [`MatrixBase`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixLayout {
    /// One grid per value of this dimension.
    pub grid: Dimension,
    /// The rows' dimension.
    pub rows: Dimension,
    /// The columns' dimension.
    pub cols: Dimension,
    /// The one load shown ([`uses_at_load`]); `None` when every load is.
    pub at_load: Option<Load>,
    /// Whether the metric shown is read off each cell ([`Metric::per_cell`]). Then the base keeps the value of
    /// every per-cell metric, so switching among them reads the same base; breakdown N and the ok rate need
    /// only efficiency and the p95 multiplier, at every N.
    pub per_cell: bool,
    /// How reps, then series, are pooled.
    pub aggregation: Aggregation,
    /// The SLO the squares' capacity is judged by, when the metric is [`Metric::SloCapacity`] (its text form).
    pub slo: Option<String>,
    /// The what-if toggles: partial cells and ledger exclusions decide which cells are pooled. (The pre-refill
    /// toggle changes the cells themselves, which rebuilds the base anyway.)
    pub what_if: WhatIf,
}

impl MatrixLayout {
    /// The layout of a view state.
    pub fn of(state: &ViewState) -> MatrixLayout {
        MatrixLayout {
            grid: state.grid,
            rows: state.rows,
            cols: state.cols,
            at_load: uses_at_load(state).then_some(state.at_load),
            per_cell: state.metric.per_cell(),
            aggregation: state.aggregation,
            slo: (state.metric == Metric::SloCapacity).then(|| state.slo().to_string()),
            what_if: state.what_if,
        }
    }

    /// The metrics whose values the squares keep.
    fn metrics(&self) -> Vec<Metric> {
        if self.per_cell {
            Metric::curves().collect()
        } else {
            vec![
                Metric::Stat(Stat::Efficiency),
                Metric::Stat(Stat::P95Multiplier),
            ]
        }
    }

    /// The metrics whose reported and derived figures the squares count: what they can show ([`shown`]).
    fn marked(&self) -> Vec<Metric> {
        if self.per_cell {
            Metric::curves().collect()
        } else {
            vec![Metric::Stat(Stat::Efficiency)]
        }
    }

    /// The point of a square's curve a per-cell metric is read at: the one N shown, or, with N on an axis, the
    /// square's one N.
    fn point<'p>(&self, points: &'p [CurvePoint]) -> Option<&'p CurvePoint> {
        match self.at_load {
            Some(load) => points.iter().find(|point| point.load == load),
            None => points.first(),
        }
    }
}

/// The figures whose marks a square of `metric` carries: breakdown N is read off efficiency (and the p95
/// multiplier), so its cells carry the marks of efficiency; the ok rate has none.
fn shown(metric: Metric) -> Option<Metric> {
    match metric {
        Metric::Breakdown => Some(Metric::Stat(Stat::Efficiency)),
        metric if metric.per_cell() => Some(metric),
        _ => None,
    }
}

/// The part of the matrix a change of metric (within one [`MatrixLayout`]) or of the breakdown criterion keeps:
/// the grids' rows and columns and, per square, its pooled curve, flags, pooling and marks. It owns all of it,
/// so the browser keeps it across such changes.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixBase {
    layout: MatrixLayout,
    grids: Vec<BaseGrid>,
}

#[derive(Clone, Debug, PartialEq)]
struct BaseGrid {
    title: Value,
    rows: Vec<Value>,
    cols: Vec<Value>,
    /// `squares[row][col]`; `None` where no cell has these values.
    squares: Vec<Vec<Option<BaseSquare>>>,
}

/// The latest of `pooled`'s cells at `load` when every one of them there follows the same History.
fn one_history(pooled: &[&CellSummary], load: Option<Load>) -> Option<CellKey> {
    let mut at = pooled
        .iter()
        .filter(|cell| Some(cell.key.load) == load)
        .map(|cell| &cell.key);
    let first = at.next()?;
    let history = crate::history::HistoryKey::of(first);
    at.try_fold(first, |latest, key| {
        history.holds(key).then(|| latest.max(key))
    })
    .cloned()
}

#[derive(Clone, Debug, PartialEq)]
struct BaseSquare {
    /// The square's curve: its cells pooled at each N.
    curve: Curve<()>,
    flags: Flags,
    /// What the admitted cells with data span.
    pooling: Pooling,
    /// The square's one cell, when it holds exactly one.
    only_cell: Option<CellKey>,
    /// The latest cell at the shown load, when the cells there follow one History.
    history_cell: Option<CellKey>,
    /// Per marked metric ([`MatrixLayout::marked`]): how many pooled cells show its reported and its derived
    /// figure.
    marks: Vec<(Metric, u32, u32)>,
    /// Why a scaling metric the square has no value of is absent.
    absent: Vec<(Metric, ScalingAbsent)>,
    /// What each scaling metric at the shown load is measured against, when not N = 1.
    baselines: Vec<(Metric, String)>,
    /// The capacity under the layout's SLO, when it has one.
    capacity: Option<(Outcome, LoadAxis)>,
}

/// Where a cell sits in the matrix: its grid, row and column values.
type Position<'a> = (DimensionValue<'a>, DimensionValue<'a>, DimensionValue<'a>);

impl MatrixBase {
    /// The base of the matrix of `layout` over `slice` (filtered from `cells`, which the reasons for an absent
    /// scaling metric look through) with the `comparisons` that apply to it.
    pub fn of<'a>(
        cells: &'a [CellSummary],
        slice: &[&'a CellSummary],
        comparisons: BTreeSet<String>,
        layout: &MatrixLayout,
    ) -> MatrixBase {
        let options = CurveOptions {
            aggregation: layout.aggregation,
            inclusion: inclusion_of(&layout.what_if, comparisons),
            // A square shows a value, never its band.
            band: BandSpan::default(),
            metrics: Some(layout.metrics()),
            skip_point_pooling: true,
        };
        // Grouped by the borrowed values (no text copied per cell); each square owns its values.
        let position = |cell: &'a CellSummary| -> Position<'a> {
            (
                cell.key.value(layout.grid),
                cell.key.value(layout.rows),
                cell.key.value(layout.cols),
            )
        };
        let relevant = slice
            .iter()
            .copied()
            .filter(|cell| layout.at_load.is_none_or(|load| cell.key.load == load));
        let marked = layout.marked();
        let mut squares: BTreeMap<Value, BTreeMap<(Value, Value), BaseSquare>> = BTreeMap::new();
        // Cells by series, built only when a square needs to say why a scaling metric is absent.
        let mut by_series: Option<BTreeMap<crate::key::SeriesParts<'_>, Vec<&CellSummary>>> = None;
        for grouped in curves_with_cells(relevant, position, &options) {
            let mut flags = Flags::default();
            let mut pooled: Vec<&CellSummary> = Vec::new();
            for cell in grouped.cells.iter().flatten().copied() {
                let admitted = options.inclusion.admits(cell);
                flags.count(cell, admitted);
                if admitted && cell.has_data() {
                    pooled.push(cell);
                }
            }
            let only_cell = match grouped.cells.as_slice() {
                [only] if only.len() == 1 => only.first().map(|cell| cell.key.clone()),
                _ => None,
            };
            let marks = marked
                .iter()
                .map(|metric| {
                    let (mut reported, mut derived) = (0, 0);
                    for cell in &pooled {
                        match Mark::of(&cell.origin, metric.name()) {
                            Mark::Reported => reported += 1,
                            Mark::Derived => derived += 1,
                            Mark::Recomputed => {}
                        }
                    }
                    (*metric, reported, derived)
                })
                .collect();
            let curve = Curve {
                group: (),
                points: grouped.curve.points,
            };
            let mut absent = Vec::new();
            if layout.per_cell {
                let shown_point = layout.point(&curve.points);
                for metric in [
                    Metric::Stat(Stat::Efficiency),
                    Metric::Stat(Stat::P95Multiplier),
                ] {
                    if shown_point.and_then(|point| point.band(metric)).is_some() {
                        continue;
                    }
                    let by_series = by_series.get_or_insert_with(|| cells_by_series(cells));
                    if let Some(reason) = pooled.iter().find_map(|cell| {
                        let series = by_series.get(&cell.key.series_parts())?;
                        ScalingAbsent::of(metric, cell, series)
                    }) {
                        absent.push((metric, reason));
                    }
                }
            }
            let shown_load = layout.point(&curve.points).map(|point| point.load);
            let history_cell = one_history(&pooled, shown_load);
            let baselines = [
                Metric::Stat(Stat::Efficiency),
                Metric::Stat(Stat::P95Multiplier),
            ]
            .into_iter()
            .filter_map(|metric| {
                let at_shown = pooled
                    .iter()
                    .copied()
                    .filter(|cell| Some(cell.key.load) == shown_load);
                Some((metric, crate::reasons::baseline_note(metric, at_shown)?))
            })
            .collect();
            let capacity = layout.slo.as_ref().map(|text| {
                Slo::from_link(text)
                    .unwrap_or(Slo { bounds: Vec::new() })
                    .capacity_of(&pooled)
            });
            let (grid, row, col) = grouped.curve.group;
            squares.entry(Value::from(grid)).or_default().insert(
                (Value::from(row), Value::from(col)),
                BaseSquare {
                    curve,
                    flags,
                    pooling: Pooling::of(pooled.iter().map(|cell| &cell.key)),
                    only_cell,
                    history_cell,
                    marks,
                    absent,
                    baselines,
                    capacity,
                },
            );
        }
        let grids = squares
            .into_iter()
            .map(|(title, mut squares)| {
                let rows: Vec<Value> = sorted_distinct(squares.keys().map(|(row, _)| row.clone()));
                let cols: Vec<Value> = sorted_distinct(squares.keys().map(|(_, col)| col.clone()));
                let table = rows
                    .iter()
                    .map(|row| {
                        cols.iter()
                            .map(|col| squares.remove(&(row.clone(), col.clone())))
                            .collect()
                    })
                    .collect();
                BaseGrid {
                    title,
                    rows,
                    cols,
                    squares: table,
                }
            })
            .collect();
        MatrixBase {
            layout: layout.clone(),
            grids,
        }
    }

    /// The layout the base was built for.
    pub fn layout(&self) -> &MatrixLayout {
        &self.layout
    }

    /// The grids coloured by `state.metric` (under `state.criterion` for breakdown N). `state` must have the
    /// base's layout ([`MatrixLayout::of`]); its other parts (the filter, comparisons) are the base's.
    pub fn grids(&self, state: &ViewState) -> Vec<MatrixGrid> {
        debug_assert_eq!(
            MatrixLayout::of(state),
            self.layout,
            "a base of another layout"
        );
        self.grids
            .iter()
            .map(|grid| MatrixGrid {
                title: grid.title.clone(),
                rows: grid.rows.clone(),
                cols: grid.cols.clone(),
                squares: grid
                    .squares
                    .iter()
                    .map(|row| {
                        row.iter()
                            .map(|square| square.as_ref().map(|square| self.square(square, state)))
                            .collect()
                    })
                    .collect(),
            })
            .collect()
    }

    fn square(&self, base: &BaseSquare, state: &ViewState) -> MatrixCell {
        let points = &base.curve.points;
        let mut square = MatrixCell {
            flags: base.flags.clone(),
            cells: points.iter().map(|point| point.cells).sum(),
            ok_rows: points.iter().map(|point| point.ok_rows).sum(),
            expected_rows: points.iter().map(|point| point.expected_rows).sum(),
            pooling: base.pooling.clone(),
            only_cell: base.only_cell.clone(),
            history_cell: base.history_cell.clone(),
            ..MatrixCell::default()
        };
        match state.metric {
            Metric::Breakdown => match base.curve.breakdown(&state.criterion) {
                Breakdown::At { load } => {
                    square.value = load.value();
                    square.breakdown_at = Some(load);
                }
                Breakdown::Never { max } => square.never_within = Some(max),
                Breakdown::NoData => {}
            },
            Metric::SloCapacity => {
                if let Some((outcome, axis)) = &base.capacity {
                    square.value = match outcome {
                        Outcome::Capacity { load, .. } => Some(*load),
                        Outcome::NotReached { up_to, .. } => Some(*up_to),
                        Outcome::NeverMet { .. } | Outcome::Unjudged { .. } => None,
                    };
                    square.capacity = Some(outcome.label(*axis));
                    square.capacity_placed = Some((axis.kind(), outcome.placed()));
                }
            }
            Metric::OkRate => {
                square.value = (square.expected_rows > 0)
                    .then(|| square.ok_rows as f64 / square.expected_rows as f64)
            }
            metric => {
                square.value = self
                    .layout
                    .point(points)
                    .and_then(|point| point.band(metric))
                    .map(|band| band.value);
            }
        }
        if let Some(shown) = shown(state.metric)
            && let Some((_, reported, derived)) =
                base.marks.iter().find(|(metric, _, _)| *metric == shown)
        {
            square.reported = *reported;
            square.derived = *derived;
        }
        square.baseline = base
            .baselines
            .iter()
            .find(|(metric, _)| *metric == state.metric)
            .map(|(_, note)| note.clone());
        if square.value.is_none() && square.never_within.is_none() {
            square.absent = base
                .absent
                .iter()
                .find(|(metric, _)| *metric == state.metric)
                .map(|(_, reason)| reason.clone());
        }
        square
    }
}

/// `cells` by series, keyed by borrowed components, each run of consecutive cells of one series added at once:
/// the cells are sorted by key, so this is one comparison per cell and no copied text.
fn cells_by_series(
    cells: &[CellSummary],
) -> BTreeMap<crate::key::SeriesParts<'_>, Vec<&CellSummary>> {
    let mut by_series: BTreeMap<crate::key::SeriesParts<'_>, Vec<&CellSummary>> = BTreeMap::new();
    for run in cells.chunk_by(|left, right| left.key.series_parts() == right.key.series_parts()) {
        if let Some(first) = run.first() {
            by_series
                .entry(first.key.series_parts())
                .or_default()
                .extend(run);
        }
    }
    by_series
}
