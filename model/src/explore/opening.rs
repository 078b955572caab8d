//! The metric a view opens on when its link names none (one the data can show), and the throughput–
//! interactivity view's choices for a slice.
//!
//! Parallel efficiency, the default, means something only where a series was measured at two or more
//! concurrencies (or at an offered rate, where it is achieved/offered). A folder of single-load results (one
//! InferenceX run per configuration, a lone `vllm bench serve`) would open on a matrix of 1.000s; such data
//! opens on output throughput instead, and the page says why.

use crate::key::{Dimension, SeriesKey};
use crate::load::{Load, LoadKind};
use crate::metric::Metric;
use crate::summary::CellSummary;
use crate::view_state::ViewState;
use std::collections::{BTreeMap, BTreeSet};

/// The metric to open on instead of the default, and the sentence saying why; `None` when the default
/// (efficiency) has something to show.
pub fn opening_metric(cells: &[CellSummary]) -> Option<(Metric, String)> {
    if efficiency_shows_something(cells) {
        return None;
    }
    // Not the p95 multiplier either: it is measured against the same baseline.
    let metric = [Metric::AggregateTps]
        .into_iter()
        .chain(Metric::curves())
        .filter(|metric| !matches!(metric, Metric::Efficiency | Metric::P95Multiplier))
        .find(|metric| cells.iter().any(|cell| metric.of_cell(cell).is_some()))?;
    let why = if cells.iter().any(|cell| cell.efficiency.is_some()) {
        "no series was measured at two loads, so parallel efficiency would be 1.000 for every cell"
    } else {
        "no cell has a parallel efficiency (it needs a concurrency sweep or an offered rate)"
    };
    Some((
        metric,
        format!(
            "Opened on {}: {why}. Choose another metric above.",
            metric.label()
        ),
    ))
}

/// Whether some cell's efficiency says something: at an offered rate (achieved/offered), or in a series with
/// efficiency at two or more concurrencies.
fn efficiency_shows_something(cells: &[CellSummary]) -> bool {
    let mut loads: BTreeMap<(SeriesKey, LoadKind), BTreeSet<Load>> = BTreeMap::new();
    for cell in cells.iter().filter(|cell| cell.efficiency.is_some()) {
        if matches!(cell.key.load, Load::Rate(_)) {
            return true;
        }
        let series = (cell.key.series(), cell.key.load.kind());
        let seen = loads.entry(series).or_default();
        seen.insert(cell.key.load);
        if seen.len() >= 2 {
            return true;
        }
    }
    false
}

/// The load the matrix opens at when its link names none and no cell is at the default (N = 16): the finite
/// load most cells share, the larger on a tie, so that a root of other tools' sweeps does not open on an empty
/// matrix; `None` when the default has cells or nothing has a finite load.
pub fn opening_at_load(cells: &[CellSummary]) -> Option<Load> {
    let default = ViewState::DEFAULT.at_load;
    if cells.iter().any(|cell| cell.key.load == default) {
        return None;
    }
    let mut counts: BTreeMap<Load, usize> = BTreeMap::new();
    for cell in cells {
        if cell.key.load.value().is_some_and(f64::is_finite) {
            *counts.entry(cell.key.load).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .max_by(|(left_load, left), (right_load, right)| {
            left.cmp(right).then(left_load.cmp(right_load))
        })
        .map(|(load, _)| load)
}

/// Turns `state` into the throughput–interactivity view of `cells` ([`ViewState::show_pareto`]): per
/// accelerator where any cell knows its count, coloured by configuration (so each point is one measured
/// configuration at one load, whatever parameters vary), faceted by the first of workload, phase, suite and run
/// that takes two or more values among them (so a point pools none of them either, where one facet can do it).
pub fn show_pareto(state: &mut ViewState, cells: &[&CellSummary]) {
    let per_accelerator = cells
        .iter()
        .any(|cell| cell.stats.output_tps_per_accelerator.is_some());
    let facet = [
        Dimension::Workload,
        Dimension::Phase,
        Dimension::Suite,
        Dimension::Run,
    ]
    .into_iter()
    .find(|dimension| {
        let mut values = cells.iter().map(|cell| cell.key.value(*dimension));
        let first = values.next();
        values.any(|value| Some(value) != first)
    });
    state.show_pareto(per_accelerator, facet);
}
