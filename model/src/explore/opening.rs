//! The metric a view opens on when its link names none (one the data can show), and the throughput–
//! interactivity view's choices for a slice.
//!
//! Parallel efficiency, the default, means something only where a series was measured at two or more
//! concurrencies (or at an offered rate, where it is achieved/offered); a one-load series has none. A folder of
//! mostly single-load results (one InferenceX run per configuration, a lone `vllm bench serve`) opens on the
//! metric most of its cells have instead, and the page says why.

use crate::key::Dimension;
use crate::load::{Load, LoadKind};
use crate::metric::Metric;
use crate::stat::Stat;
use crate::summary::CellSummary;
use crate::view_state::ViewState;
use std::collections::BTreeMap;

/// The metric to open on instead of the default, and the sentence saying why; `None` when the default
/// (efficiency) shows a number for at least half the cells with data, or no other metric shows more.
///
/// So a root that is mostly one-load results (one InferenceX run per configuration, a lone `vllm bench serve`)
/// opens on the metric most of its cells have, while a root of sweeps keeps efficiency and marks its one-load
/// cells "one load" ([`one_load_note`]).
pub fn opening_metric(cells: &[CellSummary]) -> Option<(Metric, String)> {
    let with_data: Vec<&CellSummary> = cells.iter().filter(|cell| cell.has_data()).collect();
    let shows = |metric: Metric| {
        with_data
            .iter()
            .filter(|cell| metric.of_cell(cell).is_some())
            .count()
    };
    let efficiency = shows(Metric::Stat(Stat::Efficiency));
    if with_data.is_empty() || 2 * efficiency >= with_data.len() {
        return None;
    }
    // Not the p95 multiplier either: it is measured against the same baseline. The first of the most shown.
    let (metric, count) = [Metric::Stat(Stat::AggregateTps)]
        .into_iter()
        .chain(Metric::curves())
        .filter(|metric| {
            !matches!(
                metric,
                Metric::Stat(Stat::Efficiency) | Metric::Stat(Stat::P95Multiplier)
            )
        })
        .map(|metric| (metric, shows(metric)))
        .fold(
            None,
            |best: Option<(Metric, usize)>, (metric, count)| match best {
                Some((_, most)) if most >= count => best,
                _ => Some((metric, count)),
            },
        )?;
    if count <= efficiency {
        return None;
    }
    let one_load = one_load_cells(&with_data);
    let why = if one_load > 0 {
        format!(
            "{efficiency} of {} cells with data have a parallel efficiency ({one_load} are the one load their \
             series was measured at: one load, no scaling), {count} have {}",
            with_data.len(),
            metric.label()
        )
    } else {
        format!(
            "{efficiency} of {} cells with data have a parallel efficiency (it needs a concurrency sweep or an \
             offered rate), {count} have {}",
            with_data.len(),
            metric.label()
        )
    };
    Some((
        metric,
        format!(
            "Opened on {}: {why}. Choose another metric above.",
            metric.label()
        ),
    ))
}

/// Cells with data that are the one concurrency their series was measured at.
fn one_load_cells(cells: &[&CellSummary]) -> usize {
    let single = crate::summary::single_load_series(cells.iter().copied());
    cells
        .iter()
        .filter(|cell| {
            cell.has_data()
                && cell.key.load.kind() == LoadKind::Concurrency
                && single.contains(&cell.key.series())
        })
        .count()
}

/// What a view of a scaling metric says about the cells it cannot scale: `12 cells are the one load their
/// series was measured at: one load, no scaling (no parallel efficiency or p95 multiplier; shown as "one
/// load")`. `None` for other metrics or when no cell is.
pub fn one_load_note(cells: &[&CellSummary], metric: Metric) -> Option<String> {
    if !matches!(
        metric,
        Metric::Stat(Stat::Efficiency) | Metric::Stat(Stat::P95Multiplier)
    ) {
        return None;
    }
    let count = one_load_cells(cells);
    (count > 0).then(|| {
        format!(
            "{count} cell{} {} the one load {} series was measured at: one load, no scaling (no parallel \
             efficiency or p95 multiplier, shown as \"one load\", never as 1.000).",
            if count == 1 { "" } else { "s" },
            if count == 1 { "is" } else { "are" },
            if count == 1 { "its" } else { "their" },
        )
    })
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
