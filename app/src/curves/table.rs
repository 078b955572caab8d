//! The numbers behind the curves, as a table: each series' points, breakdown N, SLO capacity, end and what it
//! leaves out.

use crate::perf;
use cellscope_model::explore::{Facet, points_kind};
use cellscope_model::view_state::{Metric, XAxis};
use leptos::prelude::*;

/// The numbers behind the chart, as a table (readable without the canvas, and checked by the browser tests).
#[allow(unreachable_pub)] // `#[component]` makes the props type `pub` whatever the function's visibility.
#[component]
pub(super) fn SeriesTable(
    facets: Memo<Vec<Facet>>,
    chart_metric: Memo<Metric>,
    x: Memo<XAxis>,
) -> impl IntoView {
    let frontier = move || {
        facets.with(|facets| {
            facets
                .iter()
                .flat_map(|facet| &facet.series)
                .any(|series| series.frontier.is_some())
        })
    };
    let capacity = move || {
        facets.with(|facets| {
            facets.iter().any(|facet| {
                facet
                    .series
                    .iter()
                    .any(|series| series.slo_capacity.is_some())
            })
        })
    };
    view! {
        // The capacity column is there under an SLO only (the class shows it).
        <table class="series-table" id="series-table" class:capacity=capacity>
            <thead><tr><th>"facet"</th><th>"series"</th><th>{move || {
                    let metric = chart_metric.get();
                    let in_ms = |metric: Metric| if metric.unit() == cellscope_model::metric::Unit::Milliseconds { " in ms" } else { "" };
                    match x.get() {
                        XAxis::Load => format!("points (load: {}{})", metric.label_at(facets.with(|facets| points_kind(facets, XAxis::Load))), in_ms(metric)),
                        XAxis::Metric(x) => format!("points (load: {}{} → {}{})", x.label(), in_ms(x), metric.label(), in_ms(metric)),
                    }
                }}</th><th>"breakdown / saturation"</th><th>"ends"</th><th>"left out"</th>
                {move || frontier().then(|| view! { <th>"frontier (loads)"</th> })}<th class="slo-capacity">"SLO capacity"</th></tr></thead>
            <tbody>
                {move || perf::timed("series-table-view", || facets.get().into_iter().flat_map(|facet| {
                    let title = facet.title.as_ref().map(ToString::to_string).unwrap_or_default();
                    let x = x.get();
                    facet.series.into_iter().map(move |series| {
                        let points: Vec<String> = series.points.iter().map(|point| point.table_text(x)).collect();
                        let partial = series.points.iter().filter(|point| point.partial > 0).map(|point| point.load.short_label()).collect::<Vec<_>>().join(",");
                        let ends = series.skipped_at.map(|load| format!("skipped at {}", load.label())).unwrap_or_default();
                        let left_out = if series.without_value > 0 {
                            format!("{} ({} without a value)", series.left_out, series.without_value)
                        } else {
                            series.left_out.to_string()
                        };
                        let frontier = series.frontier.is_some().then(|| series.frontier_loads().iter().map(|load| load.short_label()).collect::<Vec<_>>().join(","));
                        let frontier_cell = frontier.clone();
                        view! {
                            <tr data-facet=title.clone() data-series=series.label.to_string() data-skipped-at=series.skipped_at.map(|load| load.short_label()).unwrap_or_default()
                                data-frontier=frontier data-partial=partial>
                                <td>{title.clone()}</td>
                                <td>{series.legend.clone()}{series.badge.clone().map(|badge| view! { " " <span class="badge pools">{badge}</span> })}</td>
                                <td class="points">{points.join(" · ")}</td>
                                <td>{series.breakdown_label()}</td>
                                <td class="ends">{ends}</td>
                                <td>{left_out}</td>
                                {frontier_cell.map(|ns| view! { <td class="frontier">{ns}</td> })}
                                <td class="slo-capacity">{series.slo_capacity.clone()}</td>
                            </tr>
                        }
                    })
                }).collect_view())}
            </tbody>
        </table>
    }
}
