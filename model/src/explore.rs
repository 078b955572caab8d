//! The explorer's views as data: the filtered slice, the what-if cell set, matrix grids and curve facets.
//!
//! Everything the browser draws is computed here, natively testable, from the same cell summaries and
//! metric math the server and CLI use. The app only turns these structures into DOM and pixels.

use crate::key::{CellKey, Dimension, DimensionValue};
use crate::scaling::breakdown_n;
use crate::status::CellStatus;
use crate::summary::{CellSummary, Inclusion, fill_scaling};
use crate::view_state::{Include, Metric, ViewState};
use std::collections::{BTreeMap, BTreeSet};

/// A dimension value with an order: numbers numerically, text alphabetically.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    Number(u32),
    Text(String),
}

impl Value {
    pub fn of(key: &CellKey, dimension: Dimension) -> Value {
        match key.value(dimension) {
            DimensionValue::Number(number) => Value::Number(number),
            DimensionValue::Text(text) => Value::Text(text.to_string()),
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Number(number) => write!(f, "{number}"),
            Value::Text(text) => f.write_str(text),
        }
    }
}

/// The cells as the what-if toggles want them: refilled cells swapped for their pre-refill state when asked,
/// then efficiency and p95 multipliers recomputed against the (possibly changed) baselines.
pub fn working_cells(
    current: &[CellSummary],
    pre_refill: &[CellSummary],
    state: &ViewState,
) -> Vec<CellSummary> {
    let mut cells = current.to_vec();
    if state.includes(Include::PreRefill) && !pre_refill.is_empty() {
        let before: BTreeMap<&CellKey, &CellSummary> =
            pre_refill.iter().map(|cell| (&cell.key, cell)).collect();
        for cell in &mut cells {
            if let Some(original) = before.get(&cell.key) {
                *cell = (*original).clone();
            }
        }
    }
    fill_scaling(&mut cells);
    cells
}

/// The cells passing the filters and the N range.
pub fn filtered<'a>(cells: &'a [CellSummary], state: &ViewState) -> Vec<&'a CellSummary> {
    cells
        .iter()
        .filter(|cell| state.admits_key(&cell.key))
        .collect()
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
    for (dimension, values) in &state.filters {
        let mut lifted = state.clone();
        lifted.filters.remove(dimension);
        if !filtered(cells, &lifted).is_empty() {
            culprits.push(format!("{}={}", dimension.name(), values.join(",")));
        }
    }
    if state.n_min.is_some() || state.n_max.is_some() {
        let mut lifted = state.clone();
        lifted.n_min = None;
        lifted.n_max = None;
        if !filtered(cells, &lifted).is_empty() {
            culprits.push(format!(
                "N range {}–{}",
                state.n_min.map_or("1".into(), |n| n.to_string()),
                state.n_max.map_or("max".into(), |n| n.to_string())
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

/// Whether a view that splits by `dimensions` sets backends against each other.
pub fn is_comparison(cells: &[&CellSummary], dimensions: &[Option<Dimension>]) -> bool {
    dimensions.contains(&Some(Dimension::Backend))
        && cells
            .iter()
            .map(|cell| cell.key.backend.as_str())
            .collect::<BTreeSet<_>>()
            .len()
            > 1
}

pub fn inclusion(state: &ViewState, comparison_view: bool) -> Inclusion {
    Inclusion {
        partial: state.includes(Include::Partial),
        excluded: state.includes(Include::Excluded),
        comparison_view,
    }
}

/// Status and flag counts of a group of cells, for glyphs and hover text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Flags {
    pub skipped: u32,
    pub partial: u32,
    pub failed: u32,
    pub not_run: u32,
    pub refilled: u32,
    pub fallback: u32,
    pub excluded: u32,
    /// Excluded cells that the current view leaves out.
    pub left_out: u32,
}

impl Flags {
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
    /// For `breakdown`: data exist and the criterion never holds.
    pub never: bool,
    /// Admitted cells with data that fed the value.
    pub cells: u32,
    pub ok_rows: u64,
    pub expected_rows: u64,
    pub flags: Flags,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MatrixGrid {
    pub title: Value,
    pub rows: Vec<Value>,
    pub cols: Vec<Value>,
    /// `squares[row][col]`; `None` where no cell has these values.
    pub squares: Vec<Vec<Option<MatrixCell>>>,
}

/// Pooled curve of a group of admitted cells: `(n, efficiency, p95 multiplier)` aggregated per N.
fn pooled_points(
    cells: &[&CellSummary],
    state: &ViewState,
) -> Vec<(u32, Option<f64>, Option<f64>)> {
    let mut by_n: BTreeMap<u32, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for cell in cells {
        let entry = by_n.entry(cell.key.n).or_default();
        entry.0.extend(cell.efficiency);
        entry.1.extend(cell.p95_multiplier);
    }
    by_n.into_iter()
        .map(|(n, (efficiency, p95))| {
            (
                n,
                state.aggregation.apply(&efficiency),
                state.aggregation.apply(&p95),
            )
        })
        .collect()
}

/// The matrix: one grid per value of `state.grid`, rows × cols inside, coloured by `state.metric`.
pub fn matrix(cells: &[CellSummary], state: &ViewState) -> Vec<MatrixGrid> {
    let slice = filtered(cells, state);
    let comparison = is_comparison(&slice, &[Some(state.grid)]);
    let inclusion = inclusion(state, comparison);
    let mut grids: BTreeMap<Value, BTreeMap<(Value, Value), Vec<&CellSummary>>> = BTreeMap::new();
    for cell in &slice {
        grids
            .entry(Value::of(&cell.key, state.grid))
            .or_default()
            .entry((
                Value::of(&cell.key, state.rows),
                Value::of(&cell.key, state.cols),
            ))
            .or_default()
            .push(cell);
    }
    grids
        .into_iter()
        .map(|(title, squares)| {
            let rows: Vec<Value> = squares
                .keys()
                .map(|(row, _)| row.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let cols: Vec<Value> = squares
                .keys()
                .map(|(_, col)| col.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let table = rows
                .iter()
                .map(|row| {
                    cols.iter()
                        .map(|col| {
                            squares
                                .get(&(row.clone(), col.clone()))
                                .map(|group| square(group, state, &inclusion))
                        })
                        .collect()
                })
                .collect();
            MatrixGrid {
                title,
                rows,
                cols,
                squares: table,
            }
        })
        .collect()
}

fn square(group: &[&CellSummary], state: &ViewState, inclusion: &Inclusion) -> MatrixCell {
    let at_n_metric = matches!(state.metric, Metric::Efficiency | Metric::P95Multiplier);
    let relevant: Vec<&CellSummary> = group
        .iter()
        .copied()
        .filter(|cell| !at_n_metric || cell.key.n == state.at_n)
        .collect();
    let mut square = MatrixCell::default();
    for cell in &relevant {
        square.flags.count(cell, inclusion.admits(cell));
    }
    let admitted: Vec<&CellSummary> = relevant
        .iter()
        .copied()
        .filter(|cell| cell.has_data() && inclusion.admits(cell))
        .collect();
    square.cells = admitted.len() as u32;
    let counted: Vec<&CellSummary> = relevant
        .iter()
        .copied()
        .filter(|cell| inclusion.admits(cell))
        .collect();
    square.ok_rows = counted.iter().map(|cell| u64::from(cell.ok_rows)).sum();
    square.expected_rows = counted
        .iter()
        .filter_map(|cell| cell.expected_rows)
        .map(u64::from)
        .sum();
    match state.metric {
        Metric::Efficiency => {
            square.value = state.aggregation.apply(
                &admitted
                    .iter()
                    .filter_map(|cell| cell.efficiency)
                    .collect::<Vec<_>>(),
            )
        }
        Metric::P95Multiplier => {
            square.value = state.aggregation.apply(
                &admitted
                    .iter()
                    .filter_map(|cell| cell.p95_multiplier)
                    .collect::<Vec<_>>(),
            )
        }
        Metric::Breakdown => {
            let points = pooled_points(&admitted, state);
            let breakdown = breakdown_n(&points, &state.criterion());
            square.value = breakdown.map(f64::from);
            square.never =
                breakdown.is_none() && points.iter().any(|(_, efficiency, _)| efficiency.is_some());
        }
        Metric::OkRate => {
            square.value = (square.expected_rows > 0)
                .then(|| square.ok_rows as f64 / square.expected_rows as f64)
        }
    }
    square
}

/// One N of a plotted series.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesPoint {
    pub n: u32,
    /// The plotted metric: aggregate, and the band (min–max over the pooled cells).
    pub value: f64,
    pub min: f64,
    pub max: f64,
    pub efficiency: Option<f64>,
    pub p95_multiplier: Option<f64>,
    /// Cells (reps × pooled series) behind the value.
    pub cells: u32,
    pub ok_rows: u64,
    pub expected_rows: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: Value,
    pub points: Vec<SeriesPoint>,
    /// First N where the criterion holds on the aggregated curve.
    pub breakdown: Option<u32>,
    /// The first N past the last data point where the series' cells are skipped: the curve ends there.
    pub skipped_at: Option<u32>,
    pub skipped_cells: Vec<CellKey>,
    /// Cells with data the inclusion policy leaves out (exclusions, partial toggle).
    pub left_out: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Facet {
    pub title: Option<Value>,
    pub series: Vec<Series>,
}

/// Curves of `metric` (efficiency or p95 multiplier) vs N: one facet per `state.facet` value, one series per
/// `state.color` value, cells of a series pooled per N with the chosen aggregation and a min–max band.
pub fn curves(cells: &[CellSummary], state: &ViewState, metric: Metric) -> Vec<Facet> {
    let slice = filtered(cells, state);
    let comparison = is_comparison(&slice, &[Some(state.color), state.facet]);
    let inclusion = inclusion(state, comparison);
    let mut facets: BTreeMap<Option<Value>, BTreeMap<Value, Vec<&CellSummary>>> = BTreeMap::new();
    for cell in &slice {
        facets
            .entry(state.facet.map(|facet| Value::of(&cell.key, facet)))
            .or_default()
            .entry(Value::of(&cell.key, state.color))
            .or_default()
            .push(cell);
    }
    facets
        .into_iter()
        .map(|(title, groups)| Facet {
            title,
            series: groups
                .into_iter()
                .map(|(label, group)| series(label, &group, state, metric, &inclusion))
                .collect(),
        })
        .collect()
}

fn series(
    label: Value,
    group: &[&CellSummary],
    state: &ViewState,
    metric: Metric,
    inclusion: &Inclusion,
) -> Series {
    let mut by_n: BTreeMap<u32, Vec<&CellSummary>> = BTreeMap::new();
    for cell in group {
        by_n.entry(cell.key.n).or_default().push(cell);
    }
    let mut points = Vec::new();
    let mut left_out = 0;
    for (n, cells) in &by_n {
        let admitted: Vec<&CellSummary> = cells
            .iter()
            .copied()
            .filter(|cell| cell.has_data() && inclusion.admits(cell))
            .collect();
        left_out += cells
            .iter()
            .filter(|cell| cell.has_data() && !inclusion.admits(cell))
            .count() as u32;
        let efficiency: Vec<f64> = admitted.iter().filter_map(|cell| cell.efficiency).collect();
        let p95: Vec<f64> = admitted
            .iter()
            .filter_map(|cell| cell.p95_multiplier)
            .collect();
        let plotted = if metric == Metric::P95Multiplier {
            &p95
        } else {
            &efficiency
        };
        let Some(value) = state.aggregation.apply(plotted) else {
            continue;
        };
        points.push(SeriesPoint {
            n: *n,
            value,
            min: plotted.iter().copied().fold(f64::INFINITY, f64::min),
            max: plotted.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            efficiency: state.aggregation.apply(&efficiency),
            p95_multiplier: state.aggregation.apply(&p95),
            cells: admitted.len() as u32,
            ok_rows: admitted.iter().map(|cell| u64::from(cell.ok_rows)).sum(),
            expected_rows: admitted
                .iter()
                .filter_map(|cell| cell.expected_rows)
                .map(u64::from)
                .sum(),
        });
    }
    let last_n = points.last().map_or(0, |point| point.n);
    let skipped_at = by_n
        .iter()
        .filter(|(n, cells)| {
            **n > last_n && cells.iter().any(|cell| cell.status == CellStatus::Skipped)
        })
        .map(|(n, _)| *n)
        .next();
    let skipped_cells = skipped_at
        .map(|n| {
            by_n[&n]
                .iter()
                .filter(|cell| cell.status == CellStatus::Skipped)
                .map(|cell| cell.key.clone())
                .collect()
        })
        .unwrap_or_default();
    let breakdown = breakdown_n(
        &points
            .iter()
            .map(|point| (point.n, point.efficiency, point.p95_multiplier))
            .collect::<Vec<_>>(),
        &state.criterion(),
    );
    Series {
        label,
        points,
        breakdown,
        skipped_at,
        skipped_cells,
        left_out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exclusions::ExclusionScope;
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
                n,
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
            at_n: 32,
            ..ViewState::default()
        };
        let grids = matrix(&cells, &state);
        assert_eq!(grids.len(), 2);
        assert_eq!(grids[0].title, Value::Text("sglang".into()));
        let square = grids[1].squares[0][0].as_ref().unwrap();
        assert!((square.value.unwrap() - 0.6).abs() < 1e-12);
        assert_eq!(square.cells, 3);
        state.metric = Metric::Breakdown;
        state.set_criterion("v3");
        let grids = matrix(&cells, &state);
        assert_eq!(grids[1].squares[0][0].as_ref().unwrap().value, Some(32.0));
        let sglang = grids[0].squares[0][0].as_ref().unwrap();
        assert_eq!((sglang.value, sglang.never), (None, true));
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
        let facets = curves(&cells, &state, Metric::Efficiency);
        let sglang = &facets[0].series[0];
        assert_eq!(sglang.label, Value::Text("sglang".into()));
        assert!(sglang.points.is_empty(), "left out of the comparison");
        assert_eq!(sglang.left_out, 6);
        state.include.insert(Include::Excluded);
        let facets = curves(&cells, &state, Metric::Efficiency);
        assert_eq!(facets[0].series[0].points.len(), 2);
        // A single-backend view keeps them.
        state.include.remove(&Include::Excluded);
        state
            .filters
            .insert(Dimension::Backend, vec!["sglang".into()]);
        assert_eq!(
            curves(&cells, &state, Metric::Efficiency)[0].series[0]
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
                    n: 16,
                    rep,
                    ..cells[0].key.clone()
                },
                CellStatus::Skipped,
            );
            skipped.skip_rows = 1;
            cells.push(skipped);
        }
        fill_scaling(&mut cells);
        let facets = curves(&cells, &ViewState::default(), Metric::Efficiency);
        let series = &facets[0].series[0];
        assert_eq!(series.points.last().unwrap().n, 4);
        assert_eq!(series.skipped_at, Some(16));
        assert_eq!(series.skipped_cells.len(), 3);
        assert_eq!(series.breakdown, Some(2));
    }

    #[test]
    fn empty_results_name_the_filter_that_removed_everything() {
        let cells = sweep("vllm", "long_decode", &[(1, 1.0)]);
        let mut state = ViewState::default();
        state
            .filters
            .insert(Dimension::Backend, vec!["sglang".into()]);
        assert_eq!(
            empty_reason(&cells, &state).unwrap(),
            "no cell matches; the filter backend=sglang removes everything"
        );
        state.filters.clear();
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
            working_cells(&cells, &[before.clone()], &state)[1].efficiency,
            cells[1].efficiency
        );
        state.include.insert(Include::PreRefill);
        let working = working_cells(&cells, &[before], &state);
        assert_eq!(working[1].status, CellStatus::Failed);
        assert_eq!(working[1].efficiency, None);
    }
}
