//! The curves' Pareto frontiers and configuration legends: which points a frontier may join (one
//! configuration's reps, never a pool of configurations), each series' frontier or each panel's across its
//! series, and the notes that say where one is withheld. The drawing and the words read the same fields
//! ([`Series::frontier`], [`Series::frontier_withheld`], [`Facet::frontier_steps`]), so they cannot disagree.

use super::{Facet, Frontier, Series, SeriesPoint, Value};
use crate::frontier::{Better, staircase};
use crate::key::Dimension;
use crate::metric::Metric;
use crate::pooling::Pooling;
use crate::view_state::{FrontierMode, ViewState, XAxis};

/// Whether a point pools more than the reps of one configuration (models, parameters, workloads, phases, runs).
pub(super) fn pools_beyond_reps(point: &SeriesPoint) -> bool {
    point.pooling.pools_series()
}

/// The widest pooling among `points` that pool beyond reps; `None` when every point is one configuration's.
pub(super) fn widest_pooled(points: &[SeriesPoint]) -> Option<Pooling> {
    points
        .iter()
        .filter(|point| pools_beyond_reps(point))
        .max_by_key(|point| point.pooling.cells)
        .map(|point| point.pooling.clone())
}

/// A series' frontier and why it is withheld, as the view asks: with [`FrontierMode::Series`] the frontier of
/// its points when none pools configurations; with [`FrontierMode::Panel`] only what it pools (the panel's
/// frontier is filled later, [`fill_panel_frontiers`]).
pub(super) fn series_frontier(
    points: &[SeriesPoint],
    state: &ViewState,
    metric: Metric,
) -> (Option<Frontier>, Option<Pooling>) {
    let XAxis::Metric(x) = state.x else {
        return (None, None);
    };
    let withheld = widest_pooled(points);
    match state.frontier {
        FrontierMode::Off => (None, None),
        FrontierMode::Series if withheld.is_none() => (Some(frontier_of(points, x, metric)), None),
        FrontierMode::Series | FrontierMode::Panel => (None, withheld),
    }
}

/// The Pareto frontier of a series' points with `x` on the x axis and `metric` on y, each axis better the way
/// its metric is.
fn frontier_of(points: &[SeriesPoint], x: Metric, metric: Metric) -> Frontier {
    let (x, y) = (Better::of(x), Better::of(metric));
    let placed: Vec<(f64, f64)> = points.iter().map(|point| (point.x, point.value)).collect();
    let members = crate::frontier::frontier(&placed, x, y);
    let front: Vec<(f64, f64)> = members.iter().map(|index| placed[*index]).collect();
    Frontier {
        steps: staircase(&front, x, y),
        members,
        across_series: false,
    }
}

/// With [`FrontierMode::Panel`], each panel's frontier across all its series: over every point that is one
/// configuration's (points pooling configurations take no part), its staircase on the facet and each series'
/// members on the series.
pub(super) fn fill_panel_frontiers(facets: &mut [Facet], state: &ViewState, metric: Metric) {
    let (FrontierMode::Panel, XAxis::Metric(x)) = (state.frontier, state.x) else {
        return;
    };
    let (x, y) = (Better::of(x), Better::of(metric));
    for facet in facets {
        let candidates: Vec<(usize, usize)> = facet
            .series
            .iter()
            .enumerate()
            .flat_map(|(series, of)| {
                of.points
                    .iter()
                    .enumerate()
                    .filter(|(_, point)| !pools_beyond_reps(point))
                    .map(move |(index, _)| (series, index))
            })
            .collect();
        let placed: Vec<(f64, f64)> = candidates
            .iter()
            .map(|&(series, index)| {
                let point = &facet.series[series].points[index];
                (point.x, point.value)
            })
            .collect();
        let members = crate::frontier::frontier(&placed, x, y);
        let front: Vec<(f64, f64)> = members.iter().map(|member| placed[*member]).collect();
        facet.frontier_steps = staircase(&front, x, y);
        for (series_index, series) in facet.series.iter_mut().enumerate() {
            let mine = members
                .iter()
                .map(|member| candidates[*member])
                .filter(|(series, _)| *series == series_index)
                .map(|(_, index)| index)
                .collect();
            series.frontier = Some(Frontier {
                members: mine,
                steps: Vec::new(),
                across_series: true,
            });
        }
    }
}

/// Why the Pareto frontier asked for is not drawn through some series: their points pool several
/// configurations (a mean over tp 4 and 8 is no operating point anyone can run). Names the series and what the
/// widest point pools, by dimension and value. `None` when no frontier is asked for, it needs a metric on x
/// first, or every series' points are single configurations.
pub fn frontier_withheld(facets: &[Facet], state: &ViewState) -> Option<String> {
    if !state.frontier.is_on() || state.x == XAxis::Load {
        return None;
    }
    let (withheld, parts) = withheld(facets.iter().flat_map(|facet| &facet.series));
    if parts.is_empty() {
        return None;
    }
    let which = match state.frontier {
        FrontierMode::Panel => {
            "their pooled points are left out of the frontier across configurations"
        }
        _ => "no frontier is drawn through them",
    };
    Some(format!(
        "{} of {} series pool several configurations at a point (up to {}): {which}, since a frontier joins \
         single configurations (one configuration's reps). Colour by configuration, or filter to one value of \
         each.",
        withheld.len(),
        facets.iter().map(|facet| facet.series.len()).sum::<usize>(),
        parts.join(" × ")
    ))
}

/// The series whose frontier is withheld, and what their widest point pools besides reps, by dimension and value.
fn withheld<'a>(series: impl IntoIterator<Item = &'a Series>) -> (Vec<&'a Series>, Vec<String>) {
    let withheld: Vec<&Series> = series
        .into_iter()
        .filter(|series| series.frontier_withheld.is_some())
        .collect();
    let poolings: Vec<Pooling> = withheld
        .iter()
        .filter_map(|series| series.frontier_withheld.clone())
        .collect();
    let parts = Pooling::widest(&poolings)
        .spans
        .iter()
        .filter(|span| span.dimension != Dimension::Rep)
        .map(crate::pooling::Span::text)
        .collect();
    (withheld, parts)
}

/// What a panel says inside its chart when its frontier leaves series out: `no frontier through sglang, vllm:
/// points pool tp 4, 8`. `None` when none does.
pub(super) fn withheld_in_panel(facet: &Facet) -> Option<String> {
    let (withheld, parts) = withheld(&facet.series);
    (!parts.is_empty()).then(|| {
        let names: Vec<&str> = withheld
            .iter()
            .map(|series| series.legend.as_str())
            .collect();
        format!(
            "no frontier through {}: points pool {}",
            names.join(", "),
            parts.join(" × ")
        )
    })
}

/// With the series coloured by configuration, each series' legend names only the parts of its configuration
/// that tell the series drawn apart (`sglang · tp 4`), since the full text repeats what every series shares.
/// `parts` holds each series' configuration as (part, value) pairs, in the order of `facets`' series. A part
/// only some series state is left out unless the legends would then name two configurations alike.
pub(super) fn fill_configuration_legends(facets: &mut [Facet], parts: &[Vec<(String, String)>]) {
    let labels: Vec<&Value> = facets
        .iter()
        .flat_map(|facet| &facet.series)
        .map(|series| &series.label)
        .collect();
    let stated_apart = legends(parts, 2);
    let legends = if tells_apart(&labels, &stated_apart) {
        stated_apart
    } else {
        legends(parts, 1)
    };
    for (series, legend) in facets
        .iter_mut()
        .flat_map(|facet| facet.series.iter_mut())
        .zip(legends)
    {
        series.legend = legend;
    }
}

/// Each series' legend from the parts that vary: those with at least `stated` distinct stated values among the
/// series and, with `stated` 1, also those some series leave unstated.
fn legends(parts: &[Vec<(String, String)>], stated: usize) -> Vec<String> {
    let names: Vec<&String> = crate::order::sorted_distinct(
        parts
            .iter()
            .flat_map(|series| series.iter().map(|(name, _)| name)),
    );
    let varying: Vec<&String> = names
        .into_iter()
        .filter(|name| {
            let values: Vec<Option<&String>> = parts
                .iter()
                .map(|series| {
                    series
                        .iter()
                        .find(|(part, _)| part == *name)
                        .map(|(_, value)| value)
                })
                .collect();
            let distinct = crate::order::sorted_distinct(values.iter().flatten()).len();
            let varies = distinct >= stated.max(2)
                || (stated == 1 && values.contains(&None) && distinct > 0);
            varies && !repeats_the_backend(parts, name)
        })
        .collect();
    parts
        .iter()
        .map(|series| {
            let shown: Vec<String> = series
                .iter()
                .filter(|(name, _)| varying.contains(&name))
                .map(|(name, value)| match name.as_str() {
                    "backend" | "model" => value.clone(),
                    _ => format!("{name} {value}"),
                })
                .collect();
            if shown.is_empty() {
                series
                    .iter()
                    .take(2)
                    .map(|(_, value)| value.as_str())
                    .collect::<Vec<_>>()
                    .join(" · ")
            } else {
                shown.join(" · ")
            }
        })
        .collect()
}

/// Whether a parameter only repeats the backend (an `engine` parameter naming the engine the backend already
/// names), so the legend would say it twice.
fn repeats_the_backend(parts: &[Vec<(String, String)>], name: &str) -> bool {
    let value = |series: &[(String, String)], part: &str| {
        series
            .iter()
            .find(|(named, _)| named == part)
            .map(|(_, value)| value.clone())
    };
    name != "backend"
        && parts.iter().all(|series| {
            value(series, name).is_none_or(|stated| Some(stated) == value(series, "backend"))
        })
}

/// Whether two different labels never share a legend.
fn tells_apart(labels: &[&Value], legends: &[String]) -> bool {
    let pairs = crate::order::sorted_distinct(labels.iter().zip(legends));
    let names = crate::order::sorted_distinct(pairs.iter().map(|(_, legend)| *legend));
    pairs.len() == names.len()
}

/// A series whose points pool several deployments carries a badge (`pools tp 4, 8`), which the legend and the
/// table show beside its name, so it is on screen wherever the series is named, not only in a tooltip.
pub(super) fn badge_pooled_deployments(facets: &mut [Facet]) {
    for series in facets.iter_mut().flat_map(|facet| facet.series.iter_mut()) {
        let pooled: Vec<Pooling> = series
            .points
            .iter()
            .map(|point| point.pooling.clone())
            .filter(|pooling| pooling.configuration_badge().is_some())
            .collect();
        series.badge = Pooling::widest(&pooled).configuration_badge();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }

    #[test]
    fn legends_name_what_tells_configurations_apart() {
        let series = [
            parts(&[
                ("backend", "sglang"),
                ("model", "m"),
                ("tp", "4"),
                ("ep", "1"),
            ]),
            parts(&[
                ("backend", "sglang"),
                ("model", "m"),
                ("tp", "8"),
                ("ep", "1"),
            ]),
            parts(&[("backend", "vllm"), ("model", "m"), ("tp", "4")]),
        ];
        // `ep` is stated once (1) and left unstated by vllm: it tells nothing apart.
        assert_eq!(
            legends(&series, 2),
            ["sglang · tp 4", "sglang · tp 8", "vllm · tp 4"]
        );
        // An `engine` parameter naming each series' backend says nothing the backend does not.
        let engines: Vec<Vec<(String, String)>> = series
            .iter()
            .map(|parts| {
                let backend = parts[0].1.clone();
                let mut parts = parts.clone();
                parts.push(("engine".to_string(), backend));
                parts
            })
            .collect();
        assert_eq!(
            legends(&engines, 2),
            ["sglang · tp 4", "sglang · tp 8", "vllm · tp 4"]
        );
        // Two configurations told apart only by a part one of them leaves unstated: that part is named.
        let twins = [
            parts(&[("backend", "vllm"), ("model", "m"), ("tp", "1")]),
            parts(&[
                ("backend", "vllm"),
                ("model", "m"),
                ("tp", "1"),
                ("precision", "bf16"),
            ]),
        ];
        let labels = [Value::Text("a".into()), Value::Text("b".into())];
        let labels: Vec<&Value> = labels.iter().collect();
        assert!(!tells_apart(&labels, &legends(&twins, 2)));
        assert_eq!(legends(&twins, 1), ["vllm · m", "precision bf16"]);
        assert!(tells_apart(&labels, &legends(&twins, 1)));
    }
}
