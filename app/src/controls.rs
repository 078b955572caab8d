//! Controls several views share: the criterion and aggregation inputs, dimension pickers, the slice count, the
//! CSV export of the slice and the "filters left nothing" notice.

use crate::state::ctx;
use crate::{browser, perf};
use cellscope_model::Dimension;
use cellscope_model::explore::{empty_reason, slice, slice_of};
use cellscope_model::export::{cells_csv, cells_file_name};
use cellscope_model::scaling::Criterion;
use cellscope_model::view_state::{Aggregation, ViewState};
use leptos::prelude::*;

/// Criterion and thresholds, shared by the matrix (breakdown N) and the curves (threshold line, breakdown ring).
pub(crate) fn criterion_controls() -> impl IntoView {
    let ctx = ctx();
    let criterion = ctx.part(|state| state.criterion);
    let criterion = move || criterion.get();
    view! {
        <label>"criterion "
            <select id="criterion" on:change=move |event| {
                let name = event_target_value(&event);
                ctx.update(|state| {
                    state.criterion = Criterion::named(&name).unwrap_or(Criterion::Custom {
                        efficiency_below: state.criterion.efficiency_below(),
                        p95_multiplier_above: state.criterion.p95_multiplier_above(),
                    });
                });
            }>
                {Criterion::NAMES.into_iter().map(|name| view! {
                    <option value=name selected=move || criterion().name() == name>{name}</option>
                }).collect_view()}
            </select>
        </label>
        <label>"efficiency < "
            <input id="eff-threshold" type="number" step="0.01" min="0" max="1"
                prop:value=move || criterion().efficiency_below().to_string()
                on:change=move |event| {
                    if let Ok(value) = event_target_value(&event).parse::<f64>()
                        && value.is_finite() && value > 0.0
                    {
                        ctx.update(|state| state.criterion = state.criterion.with_efficiency_below(value));
                    }
                }/>
        </label>
        <label>"or p95× > "
            <input id="p95-threshold" type="number" step="0.1" min="1" placeholder="off"
                prop:value=move || criterion().p95_multiplier_above().map(|value| value.to_string()).unwrap_or_default()
                on:change=move |event| {
                    let text = event_target_value(&event);
                    let value = text.parse::<f64>().ok().filter(|value| value.is_finite() && *value > 0.0);
                    ctx.update(|state| state.criterion = state.criterion.with_p95_multiplier_above(value));
                }/>
        </label>
    }
}

/// How reps (then pooled series) are aggregated.
pub(crate) fn aggregation_control() -> impl IntoView {
    let ctx = ctx();
    let aggregation = ctx.part(|state| state.aggregation);
    view! {
        <label>"reps "
            <select id="aggregation" on:change=move |event| {
                let value = event_target_value(&event);
                ctx.update(|state| state.aggregation = Aggregation::parse(&value).unwrap_or_default());
            }>
                <option value="mean" selected=move || aggregation.get() == Aggregation::Mean>"mean"</option>
                <option value="median" selected=move || aggregation.get() == Aggregation::Median>"median"</option>
            </select>
        </label>
    }
}

/// A `<select>` of dimensions bound to one field of the view state.
pub(crate) fn dimension_select(
    label: &'static str,
    id: &'static str,
    choices: &'static [Dimension],
    get: fn(&ViewState) -> Dimension,
    set: fn(&mut ViewState, Dimension),
) -> impl IntoView {
    let ctx = ctx();
    let current = ctx.part(get);
    view! {
        <label>{label} " "
            <select id=id on:change=move |event| {
                if let Some(dimension) = Dimension::parse(&event_target_value(&event)) { ctx.update(|state| set(state, dimension)); }
            }>
                {move || ctx.dimension_choices(choices).into_iter().map(|dimension| {
                    view! {
                        <option value=dimension.name() selected=move || current.get() == dimension>{dimension.name()}</option>
                    }
                }).collect_view()}
            </select>
        </label>
    }
}

/// `<p class="empty">` with the reason the filters left nothing, or nothing.
pub(crate) fn empty_notice() -> impl IntoView {
    let ctx = ctx();
    move || {
        let message = ctx.with_filtered(|cells, filtered| {
            if filtered.is_empty() {
                ctx.state.with(|state| empty_reason(cells, state))
            } else {
                None
            }
        });
        message.map(|message| view! { <p class="empty" id="empty-reason">{message}</p> })
    }
}

/// "N cells in view": the slice of the current view (filters, what-if toggles and exclusions applied), which is
/// what the CSV export writes.
pub(crate) fn slice_count() -> impl IntoView {
    let ctx = ctx();
    // A memo, so that a change which keeps the count (a metric, an axis) leaves the element alone; it reads the
    // what-if toggles through a memo of their own, so such a change does not count the slice again either.
    let what_if = ctx.part(|state| state.what_if);
    let cells = Memo::new(move |_| {
        perf::timed("slice-count", || {
            let comparisons = ctx.comparisons.get();
            ctx.with_filtered(|_, filtered| {
                what_if.with(|what_if| slice_of(filtered, comparisons, what_if).len())
            })
        })
    });
    view! {
        <span class="count" id="slice-count" data-cells=move || cells.get().to_string()>
            {move || format!("{} cells in view", cells.get())}
        </span>
    }
}

/// Downloads the slice of the current view as CSV, under `#` lines saying which view it is, in a file named
/// after the view, its filters and its snapshot.
pub(crate) fn export_slice_csv() {
    let ctx = ctx();
    let (name, csv) = ctx.working.with_untracked(|cells| {
        ctx.state.with_untracked(|state| {
            let slice: Vec<_> = slice(cells, state).into_iter().cloned().collect();
            (
                cells_file_name(state),
                cells_csv(&slice, state, &browser::href()),
            )
        })
    });
    browser::download(&name, "text/csv", csv.as_bytes());
}

/// "Compare these": opens the Compare view on this view's slice, contrasting the dimension that splits it.
pub(crate) fn compare_these_button() -> impl IntoView {
    let ctx = ctx();
    let target = ctx.part(cellscope_model::compare::compare_these);
    let target = move || target.get();
    view! {
        <a class="button" id="compare-these" href=move || target().href()
            title="Open the Compare view on this slice: paired statistics between the values this view splits by"
            on:click=move |event| { event.prevent_default(); ctx.go(target()); }>"compare these"</a>
    }
}

/// The SLO the capacity is judged by: bounds such as `p99_ttft_ms<=2000,p99_tpot_ms<=100`, or a preset's name.
/// A text that is no SLO is said beside the box and leaves the view as it is.
pub(crate) fn slo_control() -> impl IntoView {
    let ctx = ctx();
    let error = RwSignal::new(None::<String>);
    let current = ctx.part(|state| state.slo().to_string());
    view! {
        <label title="Every bound must hold; a preset name (llama3.1-8b, …) gives MLPerf's Server bounds">"SLO "
            <input type="text" id="slo" size="34" prop:value=move || current.get()
                on:change=move |event| {
                    let text = event_target_value(&event);
                    match cellscope_model::slo::Slo::from_link(text.trim()) {
                        Ok(_) => {
                            error.set(None);
                            ctx.update(|state| state.slo = text.trim().to_string());
                        }
                        Err(reason) => error.set(Some(reason.to_string())),
                    }
                }/>
        </label>
        {move || error.get().map(|reason| view! { <span class="notice" id="slo-error">{reason}</span> })}
    }
}
