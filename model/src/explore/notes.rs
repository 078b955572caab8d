//! What the views say beside their figures: unequal pooled sets, empty panels, values without a number, the
//! SLO line, and the marks of reported and derived figures.

use super::{
    Facet, Series, SeriesPoint, Value, behind_point, curves_split_by, frontier_withheld, inclusion,
    on_curves, pareto,
};
use crate::key::{Dimension, DimensionValue};
use crate::load::LoadKind;
use crate::metric::{Metric, Threshold};
use crate::origin::Mark;
use crate::reasons::NoPoint;
use crate::summary::CellSummary;
use crate::view_state::{ViewState, XAxis};
use std::collections::{BTreeMap, BTreeSet};

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
