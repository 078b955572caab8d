//! The app shell: loading the data, the view state and its URL, the header, the filter bar and the tabs.

use crate::api::{self, Dataset};
use crate::browser;
use crate::perf;
use cellscope_model::explore::{Value, empty_reason, filtered, working_cells};
use cellscope_model::view_state::{FILTER_DIMENSIONS, Include, View, ViewState};
use cellscope_model::{CellSummary, Dimension};
use leptos::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

/// Shared state, provided as context to every view.
#[derive(Clone, Copy)]
pub struct Ctx {
    pub state: RwSignal<ViewState>,
    pub data: RwSignal<Option<Arc<Dataset>>>,
    /// The cells after the what-if toggles, with scaling metrics recomputed in the browser.
    pub working: Memo<Arc<Vec<CellSummary>>>,
    /// A newer snapshot announced by the server.
    pub newer: RwSignal<Option<String>>,
    pub error: RwSignal<Option<String>>,
}

pub fn ctx() -> Ctx {
    use_context::<Ctx>().expect("the app context is provided by App")
}

impl Ctx {
    /// Changes the view state (one history entry) and marks the time for the repaint measurement.
    pub fn update(&self, change: impl FnOnce(&mut ViewState)) {
        perf::clear("filter-change");
        perf::mark("filter-change");
        self.state.update(change);
    }
}

fn load_into(ctx: Ctx, pin_snapshot: bool) {
    leptos::task::spawn_local(async move {
        match api::load().await {
            Ok(dataset) => {
                let snapshot = dataset.snapshot.clone();
                ctx.data.set(Some(Arc::new(dataset)));
                ctx.newer.set(None);
                ctx.error.set(None);
                if pin_snapshot {
                    ctx.state.update(|state| state.at = Some(snapshot.clone()));
                }
                match api::load_details().await {
                    Ok((provenance, pre_refill)) => ctx.data.update(|data| {
                        if let Some(data) = data.as_mut().filter(|data| data.snapshot == snapshot) {
                            let details = Arc::make_mut(data);
                            details.provenance = provenance;
                            details.pre_refill = pre_refill;
                        }
                    }),
                    Err(error) => ctx.error.set(Some(error)),
                }
            }
            Err(error) => ctx.error.set(Some(error)),
        }
    });
}

fn listen_for_snapshots(ctx: Ctx) {
    let Ok(source) = web_sys::EventSource::new("/api/events") else {
        return;
    };
    let on_snapshot =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            let Some(id) = event.data().as_string() else {
                return;
            };
            let current = ctx
                .data
                .with_untracked(|data| data.as_ref().map(|data| data.snapshot.clone()));
            if current.is_some_and(|current| current != id) {
                ctx.newer.set(Some(id));
            }
        });
    let _ =
        source.add_event_listener_with_callback("snapshot", on_snapshot.as_ref().unchecked_ref());
    // The listener lives as long as the page.
    on_snapshot.forget();
    std::mem::forget(source);
}

fn sync_url(ctx: Ctx) {
    // State → URL: a new history entry per change, so Back/Forward walk through views.
    Effect::new(move |previous: Option<String>| {
        let query = ctx.state.with(ViewState::to_query);
        let current = browser::search();
        let current = current.strip_prefix('?').unwrap_or(&current);
        if query != current {
            browser::set_query(&query, previous.is_some());
        }
        query
    });
    // URL → state on Back/Forward.
    let on_pop = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
        ctx.state.set(ViewState::from_query(&browser::search()));
    });
    if let Some(window) = browser::window() {
        let _ =
            window.add_event_listener_with_callback("popstate", on_pop.as_ref().unchecked_ref());
    }
    on_pop.forget();
}

#[component]
pub fn App() -> impl IntoView {
    let state = RwSignal::new(ViewState::from_query(&browser::search()));
    let data: RwSignal<Option<Arc<Dataset>>> = RwSignal::new(None);
    let pre_refill = Memo::new(move |_| state.with(|state| state.includes(Include::PreRefill)));
    let working = Memo::new(move |_| {
        let pre_refill = pre_refill.get();
        data.with(|data| match data {
            Some(data) => {
                let mut what_if = ViewState::default();
                if pre_refill {
                    what_if.include.insert(Include::PreRefill);
                }
                Arc::new(working_cells(&data.cells, &data.pre_refill, &what_if))
            }
            None => Arc::new(Vec::new()),
        })
    });
    let ctx = Ctx {
        state,
        data,
        working,
        newer: RwSignal::new(None),
        error: RwSignal::new(None),
    };
    provide_context(ctx);
    let pin = state.with_untracked(|state| state.at.is_none());
    load_into(ctx, pin);
    listen_for_snapshots(ctx);
    sync_url(ctx);

    view! {
        <div class="shell">
            <Header/>
            <Notices/>
            <FilterBar/>
            <Tabs/>
            <main id="app" class="view">
                {move || {
                    if let Some(error) = ctx.error.get() {
                        return view! { <p class="error" id="load-error">"Cannot load the data: " {error}</p> }.into_any();
                    }
                    if ctx.data.with(Option::is_none) {
                        return view! { <p class="loading">"Loading the index…"</p> }.into_any();
                    }
                    match ctx.state.with(|state| state.view) {
                        View::Matrix => view! { <crate::matrix::MatrixView/> }.into_any(),
                        View::Curves => view! { <crate::curves::CurvesView/> }.into_any(),
                        View::Inspector => view! { <crate::inspector::InspectorView/> }.into_any(),
                        View::Audit => view! { <crate::audit::AuditView/> }.into_any(),
                    }
                }}
            </main>
        </div>
    }
}

#[component]
fn Header() -> impl IntoView {
    let ctx = ctx();
    let summary = move || {
        ctx.data.with(|data| {
            data.as_ref().map(|data| {
                let runs = data.index["runs"].as_array().map_or(0, Vec::len);
                let cells = data.cells.len();
                let warnings = data.index["warnings"].as_array().map_or(0, Vec::len);
                let at = data.index["indexed_at_unix_ms"]
                    .as_f64()
                    .map(browser::local_time)
                    .unwrap_or_default();
                (data.snapshot.clone(), runs, cells, warnings, at)
            })
        })
    };
    let copied = RwSignal::new(false);
    view! {
        <header class="header">
            <h1>"cellscope"</h1>
            {move || summary().map(|(snapshot, runs, cells, warnings, at)| view! {
                <span class="snapshot" id="snapshot" data-snapshot=snapshot.clone()>
                    "snapshot " <code>{snapshot.clone()}</code>
                    " · " <span id="run-count">{runs}</span> " runs · "
                    <span id="cell-count">{cells}</span> " cells · indexed " {at} " · "
                    <a href="#" id="warnings-link" class:warn=move || { warnings > 0 }
                        on:click=move |event| { event.prevent_default(); ctx.update(|state| state.view = View::Audit); }>
                        {warnings} " warnings"
                    </a>
                </span>
            })}
            <span class="what-if" id="active-toggles">
                {move || {
                    let state = ctx.state.get();
                    let mut active = Vec::new();
                    if state.includes(Include::Excluded) { active.push("excluded cells included"); }
                    if !state.includes(Include::Partial) { active.push("partial cells left out"); }
                    if state.includes(Include::PreRefill) { active.push("pre-refill rows"); }
                    if active.is_empty() { String::new() } else { format!("what-if: {}", active.join(", ")) }
                }}
            </span>
            <button id="copy-link" title="Copy a link that reopens exactly this view"
                on:click=move |_| { browser::copy_to_clipboard(&browser::href()); copied.set(true); }>
                {move || if copied.get() { "Link copied" } else { "Copy link" }}
            </button>
        </header>
    }
}

#[component]
fn Notices() -> impl IntoView {
    let ctx = ctx();
    let pinned_elsewhere = move || {
        let at = ctx.state.with(|state| state.at.clone())?;
        let current = ctx
            .data
            .with(|data| data.as_ref().map(|data| data.snapshot.clone()))?;
        (at != current).then_some((at, current))
    };
    view! {
        {move || pinned_elsewhere().map(|(at, current)| view! {
            <div class="notice" id="snapshot-notice">
                "This link was made for snapshot " <code>{at}</code> "; the data has changed since (now "
                <code>{current.clone()}</code> "). The view shows the current data. "
                <button on:click=move |_| ctx.state.update(|state| state.at = Some(current.clone()))>"Show latest"</button>
            </div>
        })}
        {move || ctx.newer.get().map(|id| view! {
            <div class="notice" id="newer-notice">
                "New data was indexed (snapshot " <code>{id}</code> "). "
                <button on:click=move |_| load_into(ctx, true)>"Show latest"</button>
            </div>
        })}
    }
}

#[component]
fn Tabs() -> impl IntoView {
    let ctx = ctx();
    view! {
        <nav class="tabs">
            {View::ALL.into_iter().map(|view| {
                let label = match view { View::Matrix => "Matrix", View::Curves => "Curves", View::Inspector => "Inspector", View::Audit => "Audit" };
                view! {
                    <button class="tab" data-view=view.name() class:active=move || ctx.state.with(|state| state.view == view)
                        on:click=move |_| ctx.update(|state| state.view = view)>{label}</button>
                }
            }).collect_view()}
        </nav>
    }
}

/// Distinct values per filter dimension with their cell counts, over all cells.
fn dimension_values(cells: &[CellSummary]) -> BTreeMap<Dimension, BTreeMap<Value, u32>> {
    let mut values: BTreeMap<Dimension, BTreeMap<Value, u32>> = BTreeMap::new();
    for cell in cells {
        for dimension in FILTER_DIMENSIONS.into_iter().chain([Dimension::N]) {
            *values
                .entry(dimension)
                .or_default()
                .entry(Value::of(&cell.key, dimension))
                .or_default() += 1;
        }
    }
    values
}

#[component]
fn FilterBar() -> impl IntoView {
    let ctx = ctx();
    let values = Memo::new(move |_| {
        ctx.data.with(|data| {
            data.as_ref()
                .map(|data| dimension_values(&data.cells))
                .unwrap_or_default()
        })
    });
    let toggle = move |dimension: Dimension, value: String, checked: bool| {
        ctx.update(|state| {
            let entry = state.filters.entry(dimension).or_default();
            entry.retain(|existing| existing != &value);
            if checked {
                entry.push(value);
            }
            if entry.is_empty() {
                state.filters.remove(&dimension);
            }
        });
    };
    let ns = move || {
        values.with(|values| {
            values
                .get(&Dimension::N)
                .map(|ns| ns.keys().map(ToString::to_string).collect::<Vec<_>>())
                .unwrap_or_default()
        })
    };
    view! {
        <section class="filters" id="filters">
            {move || values.get().into_iter().filter(|(dimension, values)| *dimension != Dimension::N && values.len() > 1).map(|(dimension, options)| {
                let selected = move || ctx.state.with(|state| state.filters.get(&dimension).cloned().unwrap_or_default());
                let total = options.len();
                view! {
                    <details class="filter" data-dimension=dimension.name()>
                        <summary>
                            {dimension.name()} " "
                            <span class="count">{move || { let chosen = selected().len(); if chosen == 0 { "all".to_string() } else { format!("{chosen}/{total}") } }}</span>
                        </summary>
                        <div class="options">
                            {options.into_iter().map(|(value, count)| {
                                let text = value.to_string();
                                let checked_text = text.clone();
                                let toggle_text = text.clone();
                                view! {
                                    <label>
                                        <input type="checkbox" data-value=text.clone()
                                            prop:checked=move || selected().contains(&checked_text)
                                            on:change=move |event| toggle(dimension, toggle_text.clone(), event_target_checked(&event))/>
                                        {text} " " <span class="count">{count}</span>
                                    </label>
                                }
                            }).collect_view()}
                        </div>
                    </details>
                }
            }).collect_view()}
            <label class="range">"N "
                <select id="n-min" on:change=move |event| { let value = event_target_value(&event); ctx.update(|state| state.n_min = value.parse().ok()); }>
                    <option value="" selected=move || ctx.state.with(|state| state.n_min.is_none())>"min"</option>
                    {move || ns().into_iter().map(|n| { let (selected_n, label) = (n.clone(), n.clone()); view! { <option value=n selected=move || ctx.state.with(|state| state.n_min.map(|v| v.to_string()) == Some(selected_n.clone()))>{label}</option> } }).collect_view()}
                </select>
                "–"
                <select id="n-max" on:change=move |event| { let value = event_target_value(&event); ctx.update(|state| state.n_max = value.parse().ok()); }>
                    <option value="" selected=move || ctx.state.with(|state| state.n_max.is_none())>"max"</option>
                    {move || ns().into_iter().map(|n| { let (selected_n, label) = (n.clone(), n.clone()); view! { <option value=n selected=move || ctx.state.with(|state| state.n_max.map(|v| v.to_string()) == Some(selected_n.clone()))>{label}</option> } }).collect_view()}
                </select>
            </label>
            <div class="toggles">
                {Include::ALL.into_iter().map(|include| view! {
                    <label class="toggle">
                        <input type="checkbox" data-include=include.name()
                            prop:checked=move || ctx.state.with(|state| state.includes(include))
                            on:change=move |event| {
                                let on = event_target_checked(&event);
                                ctx.update(|state| { if on { state.include.insert(include); } else { state.include.remove(&include); } });
                            }/>
                        {include.label()}
                    </label>
                }).collect_view()}
            </div>
            <button id="clear-filters" on:click=move |_| ctx.update(|state| { state.filters.clear(); state.n_min = None; state.n_max = None; })>"Clear filters"</button>
        </section>
    }
}

/// The message shown instead of a view when the filters leave nothing.
pub fn empty_message(cells: &[CellSummary], state: &ViewState) -> Option<String> {
    if filtered(cells, state).is_empty() {
        empty_reason(cells, state)
    } else {
        None
    }
}

/// `<p class="empty">` with the reason, or nothing.
pub fn empty_notice() -> impl IntoView {
    let ctx = ctx();
    move || {
        let message = ctx
            .working
            .with(|cells| ctx.state.with(|state| empty_message(cells, state)));
        message.map(|message| view! { <p class="empty" id="empty-reason">{message}</p> })
    }
}

/// "N cells in view": the slice the filters select, which is what the CSV export writes.
pub fn slice_count() -> impl IntoView {
    let ctx = ctx();
    move || {
        let cells = ctx
            .working
            .with(|cells| ctx.state.with(|state| filtered(cells, state).len()));
        view! { <span class="count" id="slice-count" data-cells=cells.to_string()>{format!("{cells} cells in view")}</span> }
    }
}

/// Downloads the current slice (filters and what-if toggles applied) as CSV.
pub fn export_slice_csv() {
    let ctx = ctx();
    let csv = ctx.working.with_untracked(|cells| {
        ctx.state.with_untracked(|state| {
            cellscope_model::schema::cells_to_csv(
                &filtered(cells, state)
                    .into_iter()
                    .cloned()
                    .collect::<Vec<_>>(),
            )
        })
    });
    browser::download("cellscope-cells.csv", "text/csv", csv.as_bytes());
}
