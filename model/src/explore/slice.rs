//! The cells a view works on: the what-if cell set, the filtered slice and its comparisons, and the inspector's
//! cell picker with what it says of a cell the data lacks.

use super::Value;
use crate::curve::CurveOptions;
use crate::exclusions::ExclusionScope;
use crate::key::{CellKey, Dimension, DimensionValue};
use crate::query::WhatIf;
use crate::summary::{CellSummary, Inclusion, fill_scaling};
use crate::view_state::{View, ViewState};
use std::collections::{BTreeMap, BTreeSet};

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
        View::Inspector | View::Audit | View::History => Vec::new(),
    }
}

pub(super) fn matrix_dimensions(state: &ViewState) -> Vec<Option<Dimension>> {
    vec![Some(state.grid), Some(state.rows), Some(state.cols)]
}

pub(super) fn curve_dimensions(state: &ViewState) -> Vec<Option<Dimension>> {
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
pub(super) fn part_of<'a>(
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
