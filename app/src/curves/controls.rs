//! The curves' controls: what is plotted against what, the frontier, colour and small multiples, the criterion,
//! pooling and band, and the exports.

use super::Curves;
use super::export::Export;
use crate::controls::{
    aggregation_control, compare_these_button, criterion_controls, export_slice_csv, slice_count,
};
use cellscope_model::explore::{load_kind_on_x, show_pareto};
use cellscope_model::view_state::{BandSpan, FrontierMode, Metric, XAxis};
use cellscope_model::{Dimension, LoadKind};
use leptos::prelude::*;

pub(super) fn controls(curves: Curves) -> impl IntoView {
    let ctx = curves.ctx;
    let x_axis = curves.x_axis;
    let frontier = ctx.part(|state| state.frontier);
    let facet = ctx.part(|state| state.facet);
    view! {
        <section class="controls">
            {metric_choice(curves)}
            {x_choice(curves)}
            {load_kind_choice(curves)}
            // The frontier needs a metric on x: against N every point is a different load, not a trade-off.
            <label title=move || if x_axis.get() == XAxis::Load { "Choose a metric for x to draw a Pareto frontier" } else { "The points no other point beats on both axes: each series' own, or across every configuration of a panel" }>
                "frontier "
                <select id="curve-frontier"
                    prop:disabled=move || x_axis.get() == XAxis::Load
                    on:change=move |event| {
                        if let Ok(mode) = FrontierMode::parse(&event_target_value(&event)) {
                            ctx.update(|state| state.frontier = mode);
                        }
                    }>
                    {FrontierMode::ALL.into_iter().map(|mode| view! {
                        <option value=mode.name() selected=move || frontier.get() == mode>{mode.label()}</option>
                    }).collect_view()}
                </select>
            </label>
            <button id="curve-pareto"
                title="Output tok/s per accelerator against p50 interactivity, one series per configuration, each with its Pareto frontier"
                on:click=move |_| {
                    let mut state = ctx.state.get_untracked();
                    ctx.with_filtered_untracked(|_, cells| show_pareto(&mut state, cells));
                    ctx.go(state);
                }>"throughput vs interactivity"</button>
            {dimension_choice(curves, facet, "color", "colour by", false)}
            {dimension_choice(curves, facet, "facet", "small multiples by", true)}
            // The criterion sets the threshold line of efficiency and p95× and the breakdown rings of every metric.
            {criterion_controls()}
            // Against the load, an SLO typed here marks each series' capacity in its panel.
            <Show when=move || x_axis.get() == XAxis::Load>{crate::controls::slo_control()}</Show>
            {aggregation_control()}
            {band_choice(curves)}
            {slice_count()}
            {compare_these_button()}
            <span class="exports">
                <button id="export-series-csv" title="The plotted series, with the view in comment lines" on:click=move |_| curves.export(Export::SeriesCsv)>"series CSV"</button>
                <button id="export-csv" title="Every cell of the slice" on:click=move |_| export_slice_csv()>"cells CSV"</button>
                <button id="export-png" on:click=move |_| curves.export(Export::Png)>"PNG"</button>
                <button id="export-svg" on:click=move |_| curves.export(Export::Svg)>"SVG"</button>
            </span>
        </section>
    }
}

/// The metric plotted.
fn metric_choice(curves: Curves) -> impl IntoView {
    let Curves {
        ctx, chart_metric, ..
    } = curves;
    view! {
        <label>"plot "
            <select id="curve-metric" on:change=move |event| {
                if let Some(metric) = Metric::parse(&event_target_value(&event)) {
                    ctx.update(|state| state.metric = metric);
                }
            }>
                {Metric::curves().map(|metric| view! {
                    <option value=metric.name() selected=move || chart_metric.get() == metric>{metric.label()}</option>
                }).collect_view()}
            </select>
        </label>
    }
}

/// What the x axis shows: N, or a metric.
fn x_choice(curves: Curves) -> impl IntoView {
    let Curves { ctx, x_axis, .. } = curves;
    view! {
        <label>"against "
            <select id="curve-x" on:change=move |event| {
                if let Ok(x) = XAxis::parse(&event_target_value(&event)) {
                    ctx.update(|state| state.x = x);
                }
            }>
                {XAxis::choices().map(|x| view! {
                    <option value=x.name() selected=move || x_axis.get() == x>{match x {
                        XAxis::Load => "load (log₂)",
                        XAxis::Metric(metric) => metric.label(),
                    }}</option>
                }).collect_view()}
            </select>
        </label>
    }
}

/// Which kind of load the x axis holds, offered only when the slice has cells at a concurrency and at a rate.
fn load_kind_choice(curves: Curves) -> impl IntoView {
    let Curves { ctx, x_axis, .. } = curves;
    let shown = Memo::new(move |_| {
        ctx.with_filtered(|_, filtered| {
            let both = [LoadKind::Concurrency, LoadKind::Rate]
                .iter()
                .all(|kind| filtered.iter().any(|cell| cell.key.load.kind() == *kind));
            both.then(|| ctx.state.with(|state| load_kind_on_x(filtered, state)))
                .flatten()
        })
    });
    move || {
        let current = shown.get().filter(|_| x_axis.get() == XAxis::Load)?;
        Some(view! {
            <label>"load kind "
                <select id="curve-load-kind" on:change=move |event| {
                    let kind = LoadKind::parse(&event_target_value(&event));
                    ctx.update(|state| state.load_kind = kind);
                }>
                    {[LoadKind::Concurrency, LoadKind::Rate].map(|kind| view! {
                        <option value=kind.name() selected=current == kind>{kind.axis_label()}</option>
                    }).collect_view()}
                </select>
            </label>
        })
    }
}

/// The dimension that colours the series (`color`) or splits the panels (`facet`, which may be none).
fn dimension_choice(
    curves: Curves,
    facet: Memo<Option<Dimension>>,
    id: &'static str,
    label: &'static str,
    optional: bool,
) -> impl IntoView {
    let Curves {
        ctx,
        color_dimension,
        ..
    } = curves;
    let choices = [
        Dimension::Configuration,
        Dimension::Backend,
        Dimension::Model,
        Dimension::Workload,
        Dimension::Phase,
        Dimension::Run,
        Dimension::Rep,
        Dimension::Suite,
    ];
    view! {
        <label>{label} " "
            <select id=id on:change=move |event| {
                let value = event_target_value(&event);
                let dimension = Dimension::parse(&value);
                ctx.update(|state| if id == "color" { if let Some(dimension) = dimension { state.color = dimension; } } else { state.facet = dimension; });
            }>
                {optional.then(|| view! { <option value="none" selected=move || facet.get().is_none()>"none"</option> })}
                {move || ctx.dimension_choices(&choices).into_iter().map(|dimension| view! {
                    <option value=dimension.name() selected=move || if id == "color" { color_dimension.get() == dimension } else { facet.get() == Some(dimension) }>{dimension.name()}</option>
                }).collect_view()}
            </select>
        </label>
    }
}

/// What a point's band spans: all its cells, or its reps only.
fn band_choice(curves: Curves) -> impl IntoView {
    let ctx = curves.ctx;
    let band = ctx.part(|state| state.band);
    view! {
        <label>"band "
            <select id="band" on:change=move |event| {
                if let Some(band) = BandSpan::parse(&event_target_value(&event)) {
                    ctx.update(|state| state.band = band);
                }
            }>
                <option value="cells" selected=move || band.get() == BandSpan::Cells>"over all cells"</option>
                <option value="reps" selected=move || band.get() == BandSpan::Reps>"over reps only"</option>
            </select>
        </label>
    }
}
