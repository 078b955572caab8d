//! The boundary matrix: rows × columns from the dimensions, one grid per value of a third, each square
//! coloured by the chosen metric, with status glyphs and the reasons on hover.

use crate::controls::{
    aggregation_control, compare_these_button, criterion_controls, dimension_select, empty_notice,
    export_slice_csv, slice_count,
};
use crate::perf;
use crate::state::ctx;
use cellscope_draw::matrix::{ColourScale, grids_html};
use cellscope_model::explore::{MatrixBase, MatrixGrid, MatrixLayout, one_load_note, uses_at_load};
use cellscope_model::pooling::Drawn;
use cellscope_model::view_state::{Metric, ViewState};
use cellscope_model::{Dimension, Load, LoadKind};

use leptos::prelude::*;

/// The dimensions a matrix axis can take.
const AXES: [Dimension; 8] = [
    Dimension::Model,
    Dimension::Workload,
    Dimension::Backend,
    Dimension::Phase,
    Dimension::Run,
    Dimension::Load,
    Dimension::Rep,
    Dimension::Suite,
];

#[allow(unreachable_pub)] // `#[component]` makes the props type `pub` whatever the function's visibility.
#[component]
pub(crate) fn MatrixView() -> impl IntoView {
    let ctx = ctx();
    // The matrix in two steps: the base (squares, pooled curves, flags) depends on the filter, the layout and
    // the inclusion, not on the metric or the criterion, so changing those only reads new values off it. At
    // 61,560 cells pooling every N for breakdown was most of a metric change's repaint.
    let layout = ctx.part(MatrixLayout::of);
    // A new base always counts as changed: it is built only when the layout, the filtered cells or the comparisons
    // changed, so it almost never equals the last one, and comparing two bases square by square is code the WASM
    // would carry for nothing (about 0.5 KB gzipped).
    let base = Memo::new_with_compare(
        move |_| {
            perf::timed("matrix-base", || {
                let comparisons = ctx.comparisons.get();
                layout.with(|layout| {
                    ctx.with_filtered(|cells, filtered| {
                        MatrixBase::of(cells, filtered, comparisons, layout)
                    })
                })
            })
        },
        |_, _| true,
    );
    let grids = Memo::new(move |_| {
        perf::timed("grids", || {
            base.with(|base| ctx.state.with(|state| base.grids(state)))
        })
    });
    let max_n = Memo::new(move |_| {
        ctx.working.with(|cells| {
            cells
                .iter()
                .filter_map(|cell| cell.key.n())
                .max()
                .unwrap_or(1)
        })
    });
    // Every stated load of the working cells, in load order (concurrencies, then rates).
    let loads = Memo::new(move |_| {
        ctx.working.with(|cells| {
            let loads: std::collections::BTreeSet<Load> = cells
                .iter()
                .map(|cell| cell.key.load)
                .filter(|load| *load != Load::Unstated)
                .collect();
            loads.into_iter().collect::<Vec<Load>>()
        })
    });
    // A sweep of concurrencies alone reads "at N" as it always has.
    let at_label = move || {
        if loads.with(|loads| {
            loads
                .iter()
                .all(|load| load.kind() == LoadKind::Concurrency)
        }) {
            "at N "
        } else {
            "at load "
        }
    };
    // The browser tests' mark of the first paint (repaints are measured by `Ctx::update`).
    Effect::new(move |_| {
        grids.track();
        request_animation_frame(perf::mark_first_chart);
    });
    let metric = ctx.part(|state| state.metric);
    let at_load = ctx.part(|state| state.at_load);
    let metric = move || metric.get();
    let colour_scale =
        Memo::new(move |_| grids.with(|grids| ColourScale::of(metric(), max_n.get(), grids)));
    view! {
        <section class="controls">
            <label>"colour by "
                <select id="metric" on:change=move |event| { if let Some(metric) = Metric::parse(&event_target_value(&event)) { ctx.update(|state| state.metric = metric); } }>
                    {Metric::ALL.into_iter().map(|option_metric| view! {
                        <option value=option_metric.name() selected=move || metric() == option_metric>{option_metric.label()}</option>
                    }).collect_view()}
                </select>
            </label>
            // Only what applies to the metric and layout is shown: one N for metrics read at one N (not when N is
            // an axis), the criterion for breakdown N, the aggregation for anything but the ok rate.
            <Show when=move || ctx.state.with(uses_at_load)>
                <label>{at_label}
                    <select id="at-n" on:change=move |event| { if let Ok(load) = event_target_value(&event).parse::<Load>() { ctx.update(|state| state.at_load = load); } }>
                        {move || loads.get().into_iter().map(|load| view! {
                            <option value=load.to_string() selected=move || at_load.get() == load>{load.label()}</option>
                        }).collect_view()}
                    </select>
                </label>
            </Show>
            <Show when=move || metric() == Metric::Breakdown>{criterion_controls()}</Show>
            <Show when=move || metric() == Metric::SloCapacity>{crate::controls::slo_control()}</Show>
            <Show when=move || metric() != Metric::OkRate>{aggregation_control()}</Show>
            {dimension_select("rows", "rows", &AXES, |state| state.rows, |state, dimension| state.rows = dimension)}
            {dimension_select("columns", "cols", &AXES, |state| state.cols, |state, dimension| state.cols = dimension)}
            {dimension_select("grid per", "grid", &AXES, |state| state.grid, |state, dimension| state.grid = dimension)}
            {slice_count()}
            {compare_these_button()}
            <span class="exports"><button id="export-csv" on:click=move |_| export_slice_csv()>"CSV"</button></span>
        </section>
        {empty_notice()}
        <div class="legend" id="matrix-legend">
            {move || {
                let (low, high) = colour_scale.get().legend();
                view! {
                    <span>{low}</span>
                    <span class="ramp"></span>
                    <span>{high}</span>
                    <span class="glyph-key">"⊘ skipped · ✕ failed · ◐ partial · ∅ not run · ↻ refilled · ⊖ excluded · ⤳ fallback · † reported by the tool · ‡ derived (hover a square for details)"</span>
                }
            }}
        </div>
        <p class="pooling-note" id="matrix-pooling">{move || {
            let aggregation = ctx.state.with(|state| state.aggregation);
            grids.with(|grids| Drawn::Squares.pooling_note(squares(grids), aggregation))
        }}</p>
        <p class="pooling-note deployments" id="matrix-deployments">{move || grids.with(|grids| Drawn::Squares.deployment_note(squares(grids)))}</p>
        <p class="pooling-note" id="matrix-one-load">{move || ctx.with_filtered(|_, filtered| one_load_note(filtered, metric()))}</p>
        // The grids are one piece of HTML, set at once: built node by node, their few thousand elements and
        // attributes were that many calls from WebAssembly into the page, most of a repaint. One listener on the
        // container follows a square's link (its `href` is the whole target state, so middle-click, copy link
        // and the keyboard work as with any link).
        <div class="grids" on:click=follow_square_link inner_html=move || perf::timed("grids-view", || {
            ctx.state.with(|state| grids.with(|grids| grids_html(grids, colour_scale.get(), state)))
        })></div>
    }
}

/// The poolings of every square of the grids.
fn squares(grids: &[MatrixGrid]) -> impl Iterator<Item = &cellscope_model::pooling::Pooling> {
    grids
        .iter()
        .flat_map(|grid| grid.squares.iter().flatten().flatten())
        .map(|square| &square.pooling)
}

/// A click in the grids that lands on a square's link goes to the view it names, within the app.
fn follow_square_link(event: web_sys::MouseEvent) {
    use wasm_bindgen::JsCast;
    // A modified click (new tab or window) is the browser's to follow.
    if event.ctrl_key() || event.meta_key() || event.shift_key() || event.button() != 0 {
        return;
    }
    let link = event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
        .and_then(|element| {
            element
                .closest("a.square-link, a.square-history")
                .ok()
                .flatten()
        });
    let Some(query) = link.and_then(|link| link.get_attribute("href")) else {
        return;
    };
    event.prevent_default();
    let (target, _) = ViewState::parse_query(&query);
    ctx().go(target);
}
