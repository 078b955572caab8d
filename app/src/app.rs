//! The app shell: the header, notices, the filter bar, the tabs and the view they select. Shared state lives in
//! [`crate::state`], shared controls in [`crate::controls`].

use crate::browser;
use crate::state::{Ctx, ctx};
use crate::views::{Status, Views};
use cellscope_model::Dimension;
use cellscope_model::api::DimensionCount;
use cellscope_model::explore::Value;
use cellscope_model::filter::{LoadBound, filter_bar, more_params_label};
use cellscope_model::view_state::{Include, View};
use leptos::prelude::*;
use std::collections::BTreeMap;
use wasm_bindgen::JsCast;

#[allow(unreachable_pub)] // `#[component]` makes the props type `pub` whatever the function's visibility.
#[component]
pub(crate) fn App() -> impl IntoView {
    let ctx = Ctx::provide();
    // Which view is shown, alone: a change of anything else in the view state keeps the matrix and the curves
    // mounted (their parts follow the state reactively) instead of building them again.
    let shown = Memo::new(move |_| ctx.state.with(|state| state.view));
    // Whether any data is loaded, alone: the details (provenance, pre-refill cells, the complete index) arrive
    // after the cells and change the data again, and building the matrix or the curves anew then closed a
    // point's tooltip or cell list under the reader's mouse and replaced every row of the series table.
    let loaded = Memo::new(move |_| ctx.data.with(Option::is_some));
    // The shown view's code, loaded the first time it is shown (at the start, beside the data).
    let views = Views::new();
    Effect::new(move |_| views.load(shown.get()));
    let chunk = Memo::new(move |_| views.status(shown.get()));

    view! {
        <div class="shell">
            <Header/>
            <Notices/>
            <FilterBar/>
            <FilterAnnouncement/>
            <Tabs/>
            <main id="app" class="view">
                {move || {
                    if let Some(error) = ctx.error.get() {
                        return view! {
                            <div class="error" id="load-error">
                                <p>"Cannot load the data: " {error}</p>
                                <button id="retry-load" on:click=move |_| {
                                    ctx.error.set(None);
                                    ctx.load();
                                }>"Try again"</button>
                            </div>
                        }.into_any();
                    }
                    if !loaded.get() {
                        return view! { <p class="loading">"Loading the index…"</p> }.into_any();
                    }
                    let view = shown.get();
                    match chunk.get() {
                        Status::Ready => {}
                        Status::Loading => {
                            return view! { <p class="loading" id="view-loading">"Loading the view…"</p> }.into_any();
                        }
                        Status::Failed(error) => {
                            return view! {
                                <div class="error" id="view-error">
                                    <p>"Cannot load the " {view.label()} " view: " {error}
                                        ". The server may have a newer version of the app: reloading the page loads it."</p>
                                    <button id="retry-view" on:click=move |_| views.load(view)>"Try again"</button>
                                </div>
                            }.into_any();
                        }
                    }
                    if !matches!(view, View::Matrix | View::Curves) {
                        // The other views read parts of the state and the data once when built: they are built
                        // again on every change of either.
                        ctx.state.track();
                        ctx.data.track();
                    }
                    views.build(view).unwrap_or_else(|| ().into_any())
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
                let index = &data.index;
                let at = browser::local_time(index.indexed_at_unix_ms as f64);
                (
                    data.snapshot.clone(),
                    // The runs holding cells, as the run filter lists them; the others said for what they are.
                    cellscope_model::runs::RunTally::of(index),
                    data.cells.len(),
                    // The indexer's warnings and the contradicted REFILL_NOTE claims, as the Audit lists them,
                    // and whether any is a problem (information alone does not mark the count).
                    {
                        let warnings = cellscope_model::audit::warnings(index);
                        (
                            warnings.len(),
                            warnings.iter().any(|warning| warning.is_problem()),
                        )
                    },
                    at,
                )
            })
        })
    };
    let active_toggles = ctx.part(|state| state.what_if.active());
    // What the last "Copy link" did: the link it copied, or the link to copy by hand.
    let copied: RwSignal<Option<(browser::Copied, String)>> = RwSignal::new(None);
    let copy = move |_| {
        let link = browser::href();
        leptos::task::spawn_local(async move {
            let how = browser::copy_to_clipboard(&link).await;
            copied.set(Some((how, link)));
        });
    };
    view! {
        <header class="header">
            <h1>"cellscope"</h1>
            {move || summary().map(|(snapshot, runs, cells, (warnings, problems), at)| view! {
                <span class="snapshot" id="snapshot" data-snapshot=snapshot.clone()>
                    "snapshot " <code>{snapshot.clone()}</code>
                    " · " <span id="run-count">{runs.with_cells}</span> " runs"
                    {(!runs.others().is_empty()).then(|| view! { <span id="run-others">{format!(" (+ {})", runs.others())}</span> })}
                    " · "
                    <span id="cell-count">{cells}</span> " cells · indexed " {at} " · "
                    <a href="#" id="warnings-link" class:warn=move || { problems }
                        on:click=move |event| { event.prevent_default(); ctx.update(|state| state.view = View::Audit); }>
                        {warnings} " warnings"
                    </a>
                </span>
            })}
            <span class="what-if" id="active-toggles">
                {move || {
                    let active = active_toggles.get();
                    if active.is_empty() { String::new() } else { format!("what-if: {}", active.join(", ")) }
                }}
            </span>
            <button id="copy-link" title="Copy a link that reopens exactly this view" on:click=copy>"Copy link"</button>
            {(!crate::offline::is_offline()).then(|| view! {
                <button id="offline-copy" title="Download one HTML file that reopens this view with no server: the app, every cell, provenance and the request rows of the cells in view"
                    on:click=move |_| {
                        let query = ctx.state.with_untracked(|state| state.to_query());
                        let name = ctx.data.with_untracked(|data| {
                            data.as_ref().map_or("cellscope-offline.html".to_string(), |data| format!("cellscope-{}.html", data.snapshot))
                        });
                        browser::download_url(&name, &format!("/api/bundle?{query}"));
                    }>"Offline copy"</button>
            })}
            {move || copied.get().map(|(how, link)| match how {
                browser::Copied::Yes => view! {
                    <span class="copy-status" id="copy-status" data-link=link.clone() role="status">"Link copied"</span>
                }.into_any(),
                // The browser would not copy (no clipboard access here): the link, selected, to copy by hand.
                browser::Copied::No => view! {
                    <span class="copy-status" id="copy-status" data-link=link.clone() role="status">
                        "Copy this link (Ctrl+C): "
                        <input id="copy-field" readonly value=link.clone()
                            on:focus=move |event| { event_target::<web_sys::HtmlInputElement>(&event).select(); }/>
                        <button on:click=move |_| copied.set(None)>"Done"</button>
                    </span>
                }.into_any(),
            })}
        </header>
    }
}

#[component]
fn Notices() -> impl IntoView {
    let ctx = ctx();
    // Which snapshot the page shows against the latest one: `(shown, latest, gone)`.
    let pinned = move || {
        let (shown, gone) = ctx.data.with(|data| {
            data.as_ref()
                .map(|data| (data.snapshot.clone(), data.gone.clone()))
        })?;
        Some((shown, ctx.latest.get(), gone))
    };
    view! {
        {crate::offline::meta().map(|meta| view! {
            <div class="notice offline" id="offline-banner" role="status" data-snapshot=meta.snapshot.clone()>
                "Offline copy of snapshot " <code>{meta.snapshot.clone()}</code> ", made "
                {browser::local_time(meta.made_at_unix_ms as f64)} ". No server is involved: the data is as it was then. "
                {format!(
                    "It holds every cell and its provenance, and the request rows of {} of the {} cells in the view it was made for.",
                    meta.cells_with_rows, meta.cells_in_view
                )}
            </div>
        })}
        {move || pinned().and_then(|(shown, latest, gone)| match gone {
            Some(asked) => Some(view! {
                <div class="notice" id="snapshot-notice" data-kind="gone">
                    "This link was made for snapshot " <code>{asked}</code> ", which this server no longer keeps, so the "
                    "view shows the latest data (snapshot " <code>{shown}</code> "); its figures may differ from the link's. "
                    <button on:click=move |_| ctx.show_latest()>"Pin the link to the latest"</button>
                </div>
            }.into_any()),
            // "New data was indexed" already says it for a page that showed the latest.
            None if ctx.newer.get().is_some() => None,
            None => {
                let latest = latest.filter(|latest| *latest != shown)?;
                Some(view! {
                    <div class="notice" id="snapshot-notice" data-kind="kept">
                        "This link shows snapshot " <code>{shown}</code> ", the data it was made with; the data has changed since (latest "
                        <code>{latest}</code> "). "
                        <button on:click=move |_| ctx.show_latest()>"Show latest"</button>
                    </div>
                }.into_any())
            }
        })}
        {move || ctx.newer.get().map(|id| view! {
            <div class="notice" id="newer-notice">
                "New data was indexed (snapshot " <code>{id}</code> "). "
                <button on:click=move |_| ctx.show_latest()>"Show latest"</button>
            </div>
        })}
        {move || ctx.opening.get().map(|why| view! {
            <div class="notice" id="opening-notice">
                <span>{why}</span>
                " "
                <button on:click=move |_| ctx.opening.set(None)>"Dismiss"</button>
            </div>
        })}
        {move || {
            let ignored = ctx.ignored.get();
            (!ignored.is_empty()).then(|| view! {
                <div class="notice" id="ignored-notice">
                    "Parts of this link were not used: "
                    <ul>{ignored.into_iter().map(|ignored| view! { <li data-parameter=ignored.name.clone()>{ignored.to_string()}</li> }).collect_view()}</ul>
                    <button on:click=move |_| ctx.ignored.set(Vec::new())>"Dismiss"</button>
                </div>
            })
        }}
    }
}

#[component]
fn Tabs() -> impl IntoView {
    let ctx = ctx();
    let shown = ctx.part(|state| state.view);
    view! {
        <nav class="tabs">
            {View::ALL.into_iter().map(|view| {
                let label = view.label();
                view! {
                    <button class="tab" data-view=view.name() class:active=move || shown.get() == view
                        on:click=move |_| ctx.update(|state| state.view = view)>{label}</button>
                }
            }).collect_view()}
        </nav>
    }
}

/// What the filters leave, said to assistive technology when it changes (a polite live region, not shown).
#[component]
fn FilterAnnouncement() -> impl IntoView {
    let ctx = ctx();
    let filter = ctx.part(|state| state.filter.clone());
    let text = Memo::new(move |_| {
        let (matching, total) = ctx.with_filtered(|cells, filtered| (filtered.len(), cells.len()));
        let described = filter.with(|filter| filter.describe());
        format!("{matching} of {total} cells match ({described})")
    });
    view! {
        <p class="sr-only" id="filter-announcement" role="status" aria-live="polite">{move || text.get()}</p>
    }
}

#[component]
fn FilterBar() -> impl IntoView {
    let ctx = ctx();
    // The distinct values of each dimension with their cell counts, as the index lists them.
    let values = Memo::new(move |_| {
        ctx.data.with(|data| {
            data.as_ref()
                .map(|data| data.index.dimensions.clone())
                .unwrap_or_default()
        })
    });
    // Each option's count under the other dimensions' filters: how many cells ticking it would show.
    let filter = ctx.part(|state| state.filter.clone());
    let faceted = Memo::new(move |_| {
        filter.with(|filter| {
            ctx.working
                .with(|cells| cellscope_model::filter::faceted_counts(cells.iter(), filter))
        })
    });
    let toggle = move |dimension: Dimension, value: String, checked: bool| {
        ctx.update(|state| {
            let entry = state.filter.values.entry(dimension).or_default();
            entry.retain(|existing| existing != &value);
            if checked {
                entry.push(value);
            }
            if entry.is_empty() {
                state.filter.values.remove(&dimension);
            }
        });
    };
    let ns = move || {
        values.with(|values| {
            values
                .get(&Dimension::Load)
                .map(|ns| {
                    // A range bound is a number: N for a concurrency, req/s for a rate (`inf` keeps the unbounded
                    // rates alone); each option says which with its unit.
                    ns.iter()
                        .filter_map(|count| {
                            let bound = match &count.value {
                                Value::Number(n) => n.to_string(),
                                Value::Load(load) => load.value()?.to_string(),
                                Value::Text(_) => return None,
                            };
                            Some((bound, count.value.label(Dimension::Load)))
                        })
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
    };
    let (n_min, n_max) = (
        ctx.part(|state| state.filter.load_min),
        ctx.part(|state| state.filter.load_max),
    );
    // Esc closes the open dropdowns (or else the open "more" group) wherever the focus is, and gives the focus
    // back to the button of what it closed.
    let _ = window_event_listener(leptos::ev::keydown, |event| {
        if event.key() == "Escape" && close_open_filters() {
            event.prevent_default();
        }
    });
    view! {
        <section class="filters" id="filters">
            {move || {
                let listed: Vec<(Dimension, Vec<DimensionCount>)> = values
                    .get()
                    .into_iter()
                    .filter(|(dimension, values)| dimension.is_filterable() && values.len() > 1)
                    .collect();
                let dimensions: Vec<Dimension> = listed.iter().map(|(dimension, _)| *dimension).collect();
                let (shown, folded) = filter_bar(&dimensions);
                let pill = |dimension: &Dimension| {
                    listed
                        .iter()
                        .find(|(listed, _)| listed == dimension)
                        .map(|(dimension, options)| filter_pill(ctx, *dimension, options.clone(), faceted, toggle))
                };
                let filtering = {
                    let folded = folded.clone();
                    ctx.part(move |state| folded.iter().filter(|dimension| state.filter.values.contains_key(*dimension)).count())
                };
                let count = folded.len();
                view! {
                    {shown.iter().filter_map(pill).collect_view()}
                    {(!folded.is_empty()).then(|| view! {
                        <details class="more-filters" id="more-filters" data-folded=count.to_string()>
                            <summary>{move || more_params_label(count, filtering.get())}</summary>
                            <div class="more-options">{folded.iter().filter_map(pill).collect_view()}</div>
                        </details>
                    })}
                }
            }}
            <label class="range">"load "
                <select id="n-min" on:change=move |event| { let value = event_target_value(&event); ctx.update(|state| state.filter.load_min = value.parse().ok().and_then(LoadBound::new)); }>
                    <option value="" selected=move || n_min.get().is_none()>"min"</option>
                    {move || ns().into_iter().map(|(n, label)| { let selected_n = n.clone(); view! { <option value=n selected=move || n_min.get().map(|v| v.to_string()) == Some(selected_n.clone())>{label}</option> } }).collect_view()}
                </select>
                "–"
                <select id="n-max" on:change=move |event| { let value = event_target_value(&event); ctx.update(|state| state.filter.load_max = value.parse().ok().and_then(LoadBound::new)); }>
                    <option value="" selected=move || n_max.get().is_none()>"max"</option>
                    {move || ns().into_iter().map(|(n, label)| { let selected_n = n.clone(); view! { <option value=n selected=move || n_max.get().map(|v| v.to_string()) == Some(selected_n.clone())>{label}</option> } }).collect_view()}
                </select>
            </label>
            <div class="toggles">
                {Include::ALL.into_iter().map(|include| { let included = ctx.part(move |state| state.includes(include)); view! {
                    <label class="toggle">
                        <input type="checkbox" data-include=include.name()
                            prop:checked=move || included.get()
                            on:change=move |event| {
                                let on = event_target_checked(&event);
                                ctx.update(|state| state.what_if.set(include, on));
                            }/>
                        {include.label()}
                    </label>
                }}).collect_view()}
            </div>
            <button id="clear-filters" on:click=move |_| ctx.update(|state| state.filter = Default::default())>"Clear filters"</button>
        </section>
    }
}

/// One dimension's dropdown of the filter bar: its button says how many values are ticked, and each value's box
/// says how many cells ticking it would show (`faceted`).
fn filter_pill(
    ctx: Ctx,
    dimension: Dimension,
    options: Vec<DimensionCount>,
    faceted: Memo<BTreeMap<Dimension, BTreeMap<Value, u32>>>,
    toggle: impl Fn(Dimension, String, bool) + Copy + 'static,
) -> impl IntoView {
    // This dimension's ticked values alone: ticking a model leaves the workloads' boxes alone.
    let selected = ctx.part(move |state| {
        state
            .filter
            .values
            .get(&dimension)
            .cloned()
            .unwrap_or_default()
    });
    let total = options.len();
    view! {
        <details class="filter" data-dimension=dimension.name()>
            <summary>
                {dimension.name()} " "
                <span class="count">{move || { let chosen = selected.with(Vec::len); if chosen == 0 { "all".to_string() } else { format!("{chosen}/{total}") } }}</span>
            </summary>
            <div class="options">
                {options.into_iter().map(|option| {
                    let text = option.value.to_string();
                    let checked_text = text.clone();
                    let toggle_text = text.clone();
                    let value = option.value.clone();
                    let count = move || faceted.with(|counts| {
                        counts.get(&dimension).and_then(|counts| counts.get(&value)).copied().unwrap_or(0)
                    });
                    view! {
                        <label>
                            <input type="checkbox" data-value=text.clone()
                                prop:checked=move || selected.with(|selected| selected.contains(&checked_text))
                                on:change=move |event| toggle(dimension, toggle_text.clone(), event_target_checked(&event))/>
                            {text.clone()} " "
                            {(dimension == Dimension::Run).then(|| {
                                let label = ctx.working.with_untracked(|cells| cellscope_model::runs::run_label(&text, cells));
                                (!label.is_empty()).then(|| view! { <span class="run-label">{format!("({label}) ")}</span> })
                            })}
                            <span class="count">{count}</span>
                        </label>
                    }
                }).collect_view()}
            </div>
        </details>
    }
}

/// Closes every open filter dropdown, or when none is open the open "more" group, and focuses the button of the
/// last one closed. Whether anything was closed.
fn close_open_filters() -> bool {
    let Some(document) = web_sys::window().and_then(|window| window.document()) else {
        return false;
    };
    let open = |css: &str| document.query_selector(css).ok().flatten();
    let mut closed = None;
    while let Some(details) = open("#filters details.filter[open]") {
        let _ = details.remove_attribute("open");
        closed = Some(details);
    }
    if closed.is_none()
        && let Some(group) = open("#filters details.more-filters[open]")
    {
        let _ = group.remove_attribute("open");
        closed = Some(group);
    }
    let Some(closed) = closed else {
        return false;
    };
    if let Some(summary) = closed
        .query_selector("summary")
        .ok()
        .flatten()
        .and_then(|summary| summary.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = summary.focus();
    }
    true
}
