//! The History view: one configuration × workload × load across runs, computed in the browser by the model's
//! `histories` over the loaded cells and runs, as a chart and a table with its change points and regression flag;
//! without a cell, the regressions list of every History in the filter.

use crate::browser;
use crate::state::{Ctx, ctx};
use cellscope_draw::history::history_svg;
use cellscope_model::export::{describe_view, file_name, history_csv};
use cellscope_model::history::report::{method_line, regression_text};
use cellscope_model::history::{
    DEFAULT_METRIC, HistoryBody, HistoryChoice, HistorySeries, histories, recent_worse,
};
use cellscope_model::metric::Metric;
use cellscope_model::view_state::{View, ViewState};
use leptos::prelude::*;
use std::sync::Arc;

/// The metric a History follows: the view's when it has a value per cell, else the default.
fn followed(metric: Metric) -> Metric {
    if metric.per_cell() {
        metric
    } else {
        DEFAULT_METRIC
    }
}

/// The link to the state `state` with `change` made.
fn link_to(state: &ViewState, change: impl FnOnce(&mut ViewState)) -> String {
    let mut next = state.clone();
    change(&mut next);
    next.href()
}

/// Every History of the working cells for the followed metric and the view's choices (tracked).
fn all_histories(ctx: Ctx) -> Memo<Arc<HistoryBody>> {
    let metric = ctx.part(|state| followed(state.metric));
    let choice = ctx.part(|state| state.history.clone());
    Memo::new(move |_| {
        let metric = metric.get();
        let choice = choice.get();
        let series = ctx.working.with(|cells| {
            ctx.data.with(|data| {
                let runs = data.as_ref().map_or(&[][..], |data| &data.index.runs[..]);
                histories(cells, runs, metric, &choice)
            })
        });
        Arc::new(HistoryBody {
            metric,
            choice,
            series,
        })
    })
}

#[allow(unreachable_pub)] // `#[component]` makes the props type `pub` whatever the function's visibility.
#[component]
pub(crate) fn HistoryView() -> impl IntoView {
    let ctx = ctx();
    let body = all_histories(ctx);
    let cell = ctx.part(|state| state.cell.clone());
    let chosen = Memo::new(move |_| {
        let cell = cell.get()?;
        body.with(|body| {
            body.series
                .iter()
                .find(|series| series.key.holds(&cell))
                .cloned()
        })
    });
    view! {
        <HistoryControls body=body chosen=chosen/>
        {move || match (cell.get(), chosen.get()) {
            (None, _) => view! { <RegressionsList body=body/> }.into_any(),
            (Some(key), None) => view! {
                <p class="empty" id="no-such-history">{format!("No History holds the cell {key} in this data.")}</p>
            }.into_any(),
            (Some(_), Some(series)) => view! { <OneHistory series=series/> }.into_any(),
        }}
    }
}

/// A text input of one History choice (`k`, `tolerance`, …): a change the choice cannot use is said beside it and
/// leaves the state as it was.
fn choice_input(
    ctx: Ctx,
    name: &'static str,
    label: &'static str,
    current: fn(&HistoryChoice) -> String,
    problem: RwSignal<Option<String>>,
) -> impl IntoView {
    let value = ctx.part(move |state| current(&state.history));
    view! {
        <label>{label} " "
            <input type="text" size="8" data-choice=name prop:value=move || value.get()
                on:change=move |event| {
                    let text = event_target_value(&event);
                    let mut choice = ctx.state.with_untracked(|state| state.history.clone());
                    match choice.set(name, &text) {
                        Ok(_) => {
                            problem.set(None);
                            ctx.update(|state| state.history = choice);
                        }
                        Err(reason) => problem.set(Some(format!("{name}: {reason}"))),
                    }
                }/>
        </label>
    }
}

/// The pickers: which History, the metric, and the method's and rule's parameters.
#[component]
fn HistoryControls(
    body: Memo<Arc<HistoryBody>>,
    chosen: Memo<Option<HistorySeries>>,
) -> impl IntoView {
    let ctx = ctx();
    let metric = ctx.part(|state| followed(state.metric));
    let problem: RwSignal<Option<String>> = RwSignal::new(None);
    view! {
        <section class="controls history-controls" id="history-controls">
            <label>"History "
                <select id="history-key" on:change=move |event| {
                    let picked = event_target_value(&event);
                    let cell = body.with_untracked(|body| {
                        picked.parse::<usize>().ok()
                            .and_then(|index| body.series.get(index))
                            .and_then(|series| series.points.last())
                            .map(|point| point.cell.clone())
                    });
                    ctx.update(|state| state.cell = cell);
                }>
                    <option value="" selected=move || chosen.with(Option::is_none)>"regressions list (every History)"</option>
                    {move || {
                        let shown = chosen.with(|chosen| chosen.as_ref().map(|series| series.key.clone()));
                        body.with(|body| body.series.iter().enumerate().map(|(index, series)| {
                            let selected = shown.as_ref() == Some(&series.key);
                            view! { <option value=index.to_string() selected=selected>{series.label.clone()}</option> }
                        }).collect_view())
                    }}
                </select>
            </label>
            <label>"metric "
                <select id="history-metric" on:change=move |event| {
                    if let Some(metric) = Metric::parse(&event_target_value(&event)) {
                        ctx.update(|state| state.metric = metric);
                    }
                }>
                    {Metric::curves().map(|choice| view! {
                        <option value=choice.name() selected=move || metric.get() == choice>{choice.label()}</option>
                    }).collect_view()}
                </select>
            </label>
            {choice_input(ctx, "k", "last k runs", |choice| choice.k.to_string(), problem)}
            {choice_input(ctx, "tolerance", "tolerance", |choice| choice.band.to_string(), problem)}
            {choice_input(ctx, "window", "window", |choice| choice.window.to_string(), problem)}
            {choice_input(ctx, "pvalue", "p ≤", |choice| choice.max_pvalue.to_string(), problem)}
            {choice_input(ctx, "since", "since", |choice| choice.since.clone().unwrap_or_default(), problem)}
            {move || problem.get().map(|problem| view! { <p class="warn" id="history-choice-problem" role="alert">{problem}</p> })}
            <p class="method" id="history-method">{move || body.with(|body| method_line(body))}</p>
        </section>
    }
}

/// The width the chart is drawn at: the page's, less margins, within bounds.
fn chart_width() -> f64 {
    crate::chart::available_width("history-chart", 900.0).clamp(480.0, 1400.0)
}

const CHART_HEIGHT: f64 = 380.0;

/// The chart of `series`, each point a link to its run's cell in the Inspector.
fn chart_of(series: &HistorySeries, state: &ViewState, width: f64) -> Option<String> {
    history_svg(
        series,
        width,
        CHART_HEIGHT,
        &format!("{} of {} across runs", series.metric.label(), series.label),
        |cell| {
            link_to(state, |next| {
                next.view = View::Inspector;
                next.cell = Some(cell.clone());
            })
        },
    )
}

/// A click on a point of the chart opens its cell within the app.
fn follow_point(event: web_sys::MouseEvent) {
    use wasm_bindgen::JsCast;
    if event.ctrl_key() || event.meta_key() || event.shift_key() || event.button() != 0 {
        return;
    }
    let link = event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
        .and_then(|element| element.closest("a.history-point").ok().flatten());
    let Some(query) = link.and_then(|link| link.get_attribute("href")) else {
        return;
    };
    event.prevent_default();
    let (target, _) = ViewState::parse_query(&query);
    ctx().go(target);
}

/// One History: its flag, chart, table and exports.
#[component]
fn OneHistory(series: HistorySeries) -> impl IntoView {
    let ctx = ctx();
    let width = chart_width();
    let svg = ctx
        .state
        .with_untracked(|state| chart_of(&series, state, width));
    let banner = regression_text(&series);
    let regressed = series.regressed.to_string();
    let label = series.label.clone();
    let no_values = format!(
        "No run of this History has a value of {}.",
        series.metric.label()
    );
    let exported = series.clone();
    let export_csv = move |_| {
        let (csv, name) = ctx.state.with_untracked(|state| {
            let lines = describe_view(state, exported.metric, None, &browser::href());
            (
                history_csv(&exported, &lines),
                file_name(state, exported.metric, "csv"),
            )
        });
        browser::download(&name, "text/csv", csv.as_bytes());
    };
    let drawn = series.clone();
    let export_svg = move |_| {
        let (svg, name) = ctx.state.with_untracked(|state| {
            (
                chart_of(&drawn, state, width),
                file_name(state, drawn.metric, "svg"),
            )
        });
        if let Some(svg) = svg {
            browser::download(&name, "image/svg+xml", svg.as_bytes());
        }
    };
    view! {
        <section class="history" id="history" data-regressed=regressed>
            <h2 id="history-label">{label}</h2>
            {banner.map(|text| view! {
                <p class="banner regressed" id="history-regressed" role="status">"Regressed: " {text}</p>
            })}
            <div class="exports">
                <button id="history-export-csv" on:click=export_csv>"Table as CSV"</button>
                <button id="history-export-svg" on:click=export_svg>"Chart as SVG"</button>
            </div>
            {match svg {
                Some(svg) => view! { <div class="history-chart" id="history-chart" on:click=follow_point inner_html=svg></div> }.into_any(),
                None => view! { <p class="empty" id="history-no-values">{no_values}</p> }.into_any(),
            }}
            <HistoryTable series=series/>
        </section>
    }
}

/// The table beside the chart: a row per run.
#[component]
fn HistoryTable(series: HistorySeries) -> impl IntoView {
    let ctx = ctx();
    let metric = series.metric;
    let value = move |value: Option<f64>| {
        value.map_or_else(|| "—".to_string(), |value| metric.format(value))
    };
    let rows = series.points.iter().enumerate().map(|(index, point)| {
        let change = series.change_points.iter().find(|change| change.index == index);
        let inspect = ctx.state.with_untracked(|state| link_to(state, |next| {
            next.view = View::Inspector;
            next.cell = Some(point.cell.clone());
        }));
        let target = ctx.state.with_untracked(|state| {
            let mut next = state.clone();
            next.view = View::Inspector;
            next.cell = Some(point.cell.clone());
            next
        });
        let note = point.time_source.and_then(|source| source.note());
        let changed: Vec<String> = point.changed.iter().map(|change| change.describe()).collect();
        view! {
            <tr data-run=point.run.clone() class:change-row=change.is_some()>
                <td><a href=inspect on:click=move |event| { event.prevent_default(); ctx.go(target.clone()); }>{point.run.clone()}</a></td>
                <td title=note>{point.time.clone().unwrap_or_else(|| "—".to_string())}{note.map(|_| " *")}</td>
                <td>{value(point.value)}</td>
                <td>{format!("{}–{} ({} reps)", value(point.low), value(point.high), point.reps)}</td>
                <td class="changed">{changed.join("; ")}</td>
                <td class="change-point">{change.map(|change| change.sentence.clone())}</td>
            </tr>
        }
    }).collect_view();
    view! {
        <table class="history-table" id="history-table">
            <caption>{format!("{} of {}, runs in time order (* start not recorded by the run: hover for how it is known)", metric.label(), series.label)}</caption>
            <thead><tr>
                <th scope="col">"run"</th><th scope="col">"started (UTC)"</th><th scope="col">"value"</th>
                <th scope="col">"reps low–high"</th><th scope="col">"changed"</th><th scope="col">"change point"</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// Every regressed History or one with a recent worse change, largest first or by name.
#[component]
fn RegressionsList(body: Memo<Arc<HistoryBody>>) -> impl IntoView {
    let ctx = ctx();
    let by_name = RwSignal::new(false);
    let filter = ctx.part(|state| state.filter.clone());
    let listed = Memo::new(move |_| {
        let filter = filter.get();
        body.with(|body| {
            let kept = HistoryBody {
                series: body
                    .series
                    .iter()
                    .filter(|series| series.points.iter().any(|point| filter.admits(&point.cell)))
                    .cloned()
                    .collect(),
                ..(**body).clone()
            };
            let mut rows: Vec<(HistorySeries, String)> = kept
                .regressions()
                .into_iter()
                .map(|series| {
                    let why = regression_text(series)
                        .or_else(|| {
                            recent_worse(series, kept.choice.k)
                                .map(|change| change.sentence.clone())
                        })
                        .unwrap_or_default();
                    (series.clone(), why)
                })
                .collect();
            if by_name.get() {
                cellscope_model::order::sort_stable_by(&mut rows, |a, b| a.0.key.cmp(&b.0.key));
            }
            (rows, kept.series.len())
        })
    });
    view! {
        <section class="regressions" id="regressions">
            <h2>"Regressions"</h2>
            <label>"sort by "
                <select id="regressions-sort" on:change=move |event| by_name.set(event_target_value(&event) == "name")>
                    <option value="size" selected=true>"size of the change"</option>
                    <option value="name">"configuration"</option>
                </select>
            </label>
            {move || listed.with(|(rows, total)| {
                if rows.is_empty() {
                    return view! {
                        <p class="hint" id="no-regressions">{format!("No regression among the {total} Histories in view: none is flagged, and none has a change toward worse in its last runs.")}</p>
                    }.into_any();
                }
                let items = rows.iter().map(|(series, why)| {
                    let Some(latest) = series.points.last() else { return ().into_any() };
                    let target = ctx.state.with_untracked(|state| {
                        let mut next = state.clone();
                        next.view = View::History;
                        next.cell = Some(latest.cell.clone());
                        next
                    });
                    let href = target.href();
                    view! {
                        <li data-history=series.label.clone() data-regressed=series.regressed.to_string()>
                            <a class="history-link" href=href on:click=move |event| { event.prevent_default(); ctx.go(target.clone()); }>{series.label.clone()}</a>
                            ": " {why.clone()}
                        </li>
                    }.into_any()
                }).collect_view();
                view! {
                    <p class="hint" id="regressions-count">{format!("{} of {total} Histories regressed or changed toward worse recently.", rows.len())}</p>
                    <ol id="regressions-list">{items}</ol>
                }.into_any()
            })}
        </section>
    }
}
