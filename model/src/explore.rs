//! The explorer's views as data: the filtered slice, the what-if cell set, matrix grids and curve facets.
//!
//! Everything the browser draws is computed here, natively testable, from the same cell summaries and
//! metric math the server and CLI use. Curves and matrix squares come from the one curve engine
//! ([`crate::curve`]); the app only turns these structures into DOM and pixels.

mod curves;
mod matrix;
mod notes;
mod opening;
mod pareto;
mod slice;
#[cfg(test)]
mod tests;

pub use crate::key::Value;
pub use curves::{
    Facet, Frontier, Series, SeriesPoint, curves, curves_of, load_kind_on_x, off_the_load_axis,
    on_curves, point_keys,
};
use curves::{behind_point, curves_split_by};
pub use matrix::{
    CAPACITY_MARKS, Flags, LoadScale, MatrixBase, MatrixCell, MatrixGrid, MatrixLayout, matrix,
    matrix_of, uses_at_load,
};
pub use notes::{
    UnequalSets, empty_notes, marks_note, panel_notes, points_kind, slo_line, table_number,
    unequal_sentences, unequal_sets, value_text, without_value_note,
};
pub use opening::{one_load_note, opening_at_load, opening_metric, show_pareto};
pub use pareto::frontier_withheld;
pub use slice::{
    PICKER_ORDER, applied_comparisons, curve_options, empty_reason, filtered, inclusion,
    inclusion_of, missing_cell, pick, picker_choices, slice, slice_of, split_dimensions,
    view_comparisons, working_cells,
};
use slice::{curve_dimensions, matrix_dimensions, part_of};
