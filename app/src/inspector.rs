//! The inspector: one cell (all its reps), its request latency distributions from `/api/requests`, and its
//! provenance story: skip reason and manifest history, refill lineage, matching exclusion entries.

use crate::chart::Surface;
use crate::state::{Ctx, ctx};
use crate::{api, browser};
use cellscope_draw::chart::{Sample, draw_cdf, draw_histogram};
use cellscope_model::api::Provenance;
use cellscope_model::distribution::no_rows_message;
use cellscope_model::explore::{PICKER_ORDER, Value, missing_cell, pick, picker_choices};
use cellscope_model::metric::Metric;
use cellscope_model::order::{sort_floats, sorted_distinct};
use cellscope_model::origin::{CellOrigin, Mark, compare_figures};
use cellscope_model::reasons::ScalingAbsent;
use cellscope_model::requests::{Lineage, RequestRow, RowClass, requests_query};
use cellscope_model::stat::Stat;
use cellscope_model::summary::{load_line, serving_stats_of};
use cellscope_model::view_state::{View, ViewState};
use cellscope_model::{CellKey, CellSummary, quantile_linear};
use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;
use wasm_bindgen::JsCast;

fn number(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "—".to_string(), |value| format!("{value:.decimals$}"))
}

/// One figure of the reps table with its sign (`†` reported by the tool, `‡` derived) and what the sign means
/// on hover.
fn figure(cell: &CellSummary, stat: Stat, decimals: usize) -> impl IntoView + use<> {
    let mark = Mark::of(&cell.origin, stat.name());
    let title = (mark != Mark::Recomputed).then(|| mark.meaning());
    view! { <td title=title data-mark=mark.sign()>{number(cell.stat(stat), decimals)}{mark.sign()}</td> }
}

/// A serving figure of the reps table with two decimals, its unit (`8.25 ms`, `3.90 req/s`) and its sign, `—`
/// when the rep has none.
fn serving_figure(cell: &CellSummary, stat: Stat) -> impl IntoView + use<> {
    let mark = Mark::of(&cell.origin, stat.name());
    let title = (mark != Mark::Recomputed).then(|| mark.meaning());
    let value = cell
        .stat(stat)
        .map_or_else(|| "—".to_string(), |value| stat.unit().fixed(value));
    view! { <td title=title data-stat=stat.name() data-mark=mark.sign()>{value}{mark.sign()}</td> }
}

/// A scaling figure of the reps table: its value, or `—` with why it is absent on hover.
fn scaling_figure(
    cell: &CellSummary,
    metric: Metric,
    series: &[&CellSummary],
    decimals: usize,
) -> impl IntoView + use<> {
    let absent = ScalingAbsent::of(metric, cell, series);
    let value = metric.of_cell(cell);
    let mark = Mark::of(&cell.origin, metric.name());
    let title = match &absent {
        Some(absent) => Some(format!("{} {}", metric.label(), absent.sentence())),
        None => (mark != Mark::Recomputed).then(|| mark.meaning().to_string()),
    };
    view! { <td title=title data-mark=mark.sign() data-absent=absent.as_ref().map(ScalingAbsent::short)>{number(value, decimals)}{mark.sign()}</td> }
}

#[allow(unreachable_pub)] // `#[component]` makes the props type `pub` whatever the function's visibility.
#[component]
pub(crate) fn InspectorView() -> impl IntoView {
    let ctx = ctx();
    let selected = Memo::new(move |_| ctx.state.with(|state| state.cell.clone()));
    view! {
        <CellPicker/>
        {move || {
            // A hand-edited link may name a cell the data does not have: said in words, with no request to fail.
            // Untracked: the view is built again whenever the data changes.
            let (class, id, text) = match selected.get() {
                None => ("hint", "inspector-empty", "Choose a cell above, or click a point of the Curves, a square of the Matrix or a row of the Audit.".to_string()),
                Some(key) => match ctx.working.with_untracked(|cells| missing_cell(cells, &key)) {
                    Some(missing) => ("empty", "no-such-cell", missing),
                    None => return view! { <CellInspector key=key/> }.into_any(),
                },
            };
            view! { <p class=class id=id>{text}</p> }.into_any()
        }}
    }
}

/// One select per dimension, in key order; each offers only values that lead to a cell that exists.
#[component]
fn CellPicker() -> impl IntoView {
    let ctx = ctx();
    // The cell being picked from: the inspected one, else the first cell of the data.
    let current = Memo::new(move |_| {
        ctx.state.with(|state| state.cell.clone()).or_else(|| {
            ctx.working
                .with(|cells| cells.first().map(|cell| cell.key.clone()))
        })
    });
    view! {
        <section class="picker controls" id="cell-picker">
            {PICKER_ORDER.into_iter().map(|dimension| {
                let choices = move || {
                    current.get().map(|key| ctx.working.with(|cells| picker_choices(cells, &key, dimension))).unwrap_or_default()
                };
                let selected = move || current.get().map(|key| Value::of(&key, dimension).to_string()).unwrap_or_default();
                view! {
                    <label>{dimension.name()} " "
                        <select data-dimension=dimension.name() on:change=move |event| {
                            let value = event_target_value(&event);
                            let Some(key) = current.get_untracked() else { return };
                            let picked = ctx.working.with_untracked(|cells| pick(cells, &key, dimension, &value));
                            if let Some(picked) = picked {
                                ctx.update(|state| { state.cell = Some(picked); state.view = View::Inspector; });
                            }
                        }>
                            {move || choices().into_iter().map(|value| {
                                let text = value.to_string();
                                let is_selected = text == selected();
                                view! { <option value=text selected=is_selected>{value.label(dimension)}</option> }
                            }).collect_view()}
                        </select>
                    </label>
                }
            }).collect_view()}
        </section>
    }
}

/// The working cells of `key`'s series: its reps at its load (`at_load`), or every cell of it.
fn series_cells(ctx: Ctx, key: CellKey, at_load: bool) -> Memo<Vec<CellSummary>> {
    Memo::new(move |_| {
        ctx.working.with(|cells| {
            cells
                .iter()
                .filter(|cell| {
                    cell.key.series() == key.series() && (!at_load || cell.key.load == key.load)
                })
                .cloned()
                .collect::<Vec<CellSummary>>()
        })
    })
}

#[component]
fn CellInspector(key: CellKey) -> impl IntoView {
    let ctx = ctx();
    let reps = series_cells(ctx, key.clone(), true);
    // Every cell of the series at every N: efficiency and the p95 multiplier are measured against its N = 1.
    let series = series_cells(ctx, key.clone(), false);
    let rows: RwSignal<Option<Result<Vec<RequestRow>, String>>> = RwSignal::new(None);
    let query = requests_query(&key);
    let fetch_rows = move || {
        let query = query.clone();
        rows.set(None);
        leptos::task::spawn_local(async move {
            rows.set(Some(api::requests(&query).await));
        });
    };
    fetch_rows();
    let provenance = ctx
        .data
        .with_untracked(|data| data.as_ref().and_then(|data| data.provenance.clone()))
        .unwrap_or_default();
    let origin = provenance.origin_of(&key).cloned();
    let origin_tool = origin.as_ref().map(|origin| origin.format.clone());
    let this = ctx
        .working
        .with_untracked(|cells| cells.iter().find(|cell| cell.key == key).cloned());
    let title = key.to_string();
    let heading = title.clone();
    let key_for_absent = key.clone();
    let started = ctx.data.with_untracked(|data| {
        data.as_ref().and_then(|data| {
            data.index
                .runs
                .iter()
                .find(|run| run.run_id == key.run_id)
                .and_then(|run| run.started.clone())
        })
    });
    view! {
        <section class="inspector" id="inspector" data-cell=title>
            <h2>{heading}</h2>
            {
                let target = ctx.state.with_untracked(|state| state.history_of(&key));
                view! {
                    <p class="hint"><a id="history-of-cell" href=target.href()
                        on:click=move |event| { event.prevent_default(); ctx.go(target.clone()); }>"History of this configuration"</a>
                        " across runs"</p>
                }
            }
            {started.map(|started| view! {
                <p class="hint" id="run-started" title=started.explanation()>
                    "Run " <code>{key.run_id.clone()}</code> " started " {started.label()} " · " {started.source_text()}
                </p>
            })}
            {move || {
                // A kept snapshot has its cells table, not its request rows: those are read from the files now.
                let shown = ctx.data.with(|data| data.as_ref().map(|data| data.snapshot.clone()));
                let latest = ctx.latest.get();
                (latest.is_some() && shown != latest).then(|| view! {
                    <p class="notice" id="rows-now">"The request rows below are read from the files as they are now (snapshot "
                        <code>{latest.clone().unwrap_or_default()}</code> "), not as they were in the snapshot this link shows."</p>
                })
            }}
            <p class="hint" id="rep-shown" data-rep=key.rep.to_string()>
                {format!("Rep {} is shown (request rows, histogram, CDF, lineage); pick another rep in the table.", key.rep)}
            </p>
            {this.as_ref().map(|cell| view! { <p class="hint" id="cell-load">{load_line(cell)}</p> })}
            {reps_table(ctx, key.rep, reps, series)}
            {move || {
                // Why efficiency (and the p95 multiplier) is absent for the shown rep, in words.
                let series = series.get();
                let series: Vec<&CellSummary> = series.iter().collect();
                let shown = series.iter().find(|cell| cell.key == key_for_absent).copied();
                shown.map(|cell| {
                    [Metric::Stat(Stat::Efficiency), Metric::Stat(Stat::P95Multiplier)]
                        .into_iter()
                        .filter_map(|metric| ScalingAbsent::of(metric, cell, &series).map(|absent| format!("{}: {}.", capitalised(metric.label()), absent.sentence())))
                        .collect::<Vec<String>>()
                }).filter(|lines| !lines.is_empty()).map(|lines| view! {
                    <p class="hint" id="scaling-absent">{lines.join(" ")}</p>
                })
            }}
            {(this.as_ref().is_some_and(|cell| !cell.origin.reported.is_empty() || !cell.origin.derived.is_empty())).then(|| view! {
                <p class="hint" id="marks-key">{format!("{} {} · {} {}", Mark::Reported.sign(), Mark::Reported.meaning(), Mark::Derived.sign(), Mark::Derived.meaning())}</p>
            })}
            {origin.zip(this.clone()).map(|(origin, cell)| view! { <OriginStory origin=origin cell=cell/> })}
            <Distributions rows=rows retry=Callback::new(move |()| fetch_rows()) tool=origin_tool/>
            {provenance_story(&provenance, &key, this.as_ref(), rows)}
        </section>
    }
}

/// Every rep of the cell at its N with its figures; the shown one (`shown_rep`) says so, another is one click
/// away.
fn reps_table(
    ctx: Ctx,
    shown_rep: u32,
    reps: Memo<Vec<CellSummary>>,
    series: Memo<Vec<CellSummary>>,
) -> impl IntoView {
    // The serving figures (TTFT, TPOT, ITL, throughputs, interactivity) that some rep has, after the others.
    let serving = move || reps.with(|reps| serving_stats_of(reps.iter()));
    view! {
        <div class="table-scroll">
        <table class="reps" id="reps-table">
            <thead><tr>
                <th>"rep"</th><th>"status"</th><th>"flags"</th><th>"rows / expected"</th><th>"ok"</th><th>"failed"</th>
                <th>"mean wall ms"</th><th>"p50"</th><th>"p95"</th><th>"p99"</th><th>"p50 TTFT"</th><th>"p95 TTFT"</th>
                <th>"agg tps"</th><th>"efficiency"</th><th>"p95×"</th>
                <th>"mean prompt tok"</th><th>"mean completion tok"</th>
                {move || serving().into_iter().map(|stat| view! { <th data-stat=stat.name()>{stat.label()}</th> }).collect_view()}
                <th>"expected from"</th>
            </tr></thead>
            <tbody>
                {move || {
                    let (series, serving) = (series.get(), serving());
                    reps.get().into_iter().map(|cell| rep_row(ctx, cell, &series, &serving, shown_rep)).collect_view()
                }}
            </tbody>
        </table>
        </div>
    }
}

/// One rep's row of the reps table; `series` is every cell of its series, which its scaling figures rest on.
fn rep_row(
    ctx: Ctx,
    cell: CellSummary,
    series: &[CellSummary],
    serving: &[Stat],
    shown_rep: u32,
) -> impl IntoView + use<> {
    let series: Vec<&CellSummary> = series.iter().collect();
    let mut flags = Vec::new();
    if cell.refilled {
        flags.push(format!(
            "refilled from {}",
            cell.source_run_id.clone().unwrap_or_default()
        ));
    }
    if cell.fallback {
        flags.push("fallback".to_string());
    }
    if !cell.excluded.is_empty() {
        flags.push(format!("excluded: {}", cell.excluded.join(", ")));
    }
    if cell.baseline_fallback {
        flags.push("baseline = mean of N=1 reps".to_string());
    }
    let current = cell.key.rep == shown_rep;
    // Another rep is one click away; the shown one says so.
    let next = ctx.state.with_untracked(|state| ViewState {
        cell: Some(cell.key.clone()),
        ..state.clone()
    });
    let link = next.href();
    let rep_label = if current {
        format!("{} (shown)", cell.key.rep)
    } else {
        cell.key.rep.to_string()
    };
    view! {
        <tr class:current=current data-rep=cell.key.rep.to_string() data-status=cell.status.as_str()>
            <td><a href=link on:click=move |event| { event.prevent_default(); ctx.go(next.clone()); }>{rep_label}</a></td>
            <td>{cell.status.as_str()}</td><td>{flags.join("; ")}</td>
            <td>{format!("{}/{}", cell.rows, cell.expected_rows.map_or("?".to_string(), |e| e.to_string()))}</td>
            <td>{cell.ok_rows}</td><td>{cell.failed_rows}</td>
            {figure(&cell, Stat::MeanWallMs, 1)}{figure(&cell, Stat::P50WallMs, 1)}
            {figure(&cell, Stat::P95WallMs, 1)}{figure(&cell, Stat::P99WallMs, 1)}
            {figure(&cell, Stat::P50TtftMs, 1)}{figure(&cell, Stat::P95TtftMs, 1)}
            {figure(&cell, Stat::AggregateTps, 2)}
            {scaling_figure(&cell, Metric::Stat(Stat::Efficiency), &series, 3)}{scaling_figure(&cell, Metric::Stat(Stat::P95Multiplier), &series, 3)}
            {figure(&cell, Stat::MeanPromptTokens, 1)}
            {figure(&cell, Stat::MeanCompletionTokens, 1)}
            {serving.iter().map(|stat| serving_figure(&cell, *stat)).collect_view()}
            <td>{cell.expected_source.as_str()}</td>
        </tr>
    }
}

/// Where the cell's rows come from: its skip reason, its refill lineage (`this` is the cell), the ledger entries
/// that match it and its manifest history.
fn provenance_story(
    provenance: &Provenance,
    key: &CellKey,
    this: Option<&CellSummary>,
    rows: RwSignal<Option<Result<Vec<RequestRow>, String>>>,
) -> impl IntoView + use<> {
    let history = provenance
        .history(key)
        .map(|history| history.history.clone())
        .unwrap_or_default();
    let skip = provenance.skipped(key).cloned();
    let refill = provenance.refill_of(&key.run_id).cloned();
    let exclusions: Vec<_> = provenance.exclusions_of(key).cloned().collect();
    view! {
        <section class="story" id="provenance-story">
            <h3>"Provenance"</h3>
            {skip.map(|skip| view! {
                <p class="skip" id="skip-reason">"Skipped: " {skip.reason}</p>
            })}
            {this.filter(|cell| cell.refilled).map(|cell| {
                let note = refill.as_ref().and_then(|refill| refill.note_html.clone()).unwrap_or_default();
                view! {
                    <div class="lineage" id="refill-lineage">
                        <p>"Refilled: the rows now in this cell come from run " <code>{cell.source_run_id.clone().unwrap_or_default()}</code>
                           "; the rows they replaced are kept in the backup and listed below as " <em>"replaced"</em> "."</p>
                        <LineageCounts rows=rows/>
                        <details><summary>"REFILL_NOTE.md"</summary><div class="note" inner_html=note></div></details>
                    </div>
                }
            })}
            {(!exclusions.is_empty()).then(|| view! {
                <ul class="exclusions" id="cell-exclusions">
                    {exclusions.iter().map(|matches| {
                        let entry = &matches.entry.entry;
                        view! { <li><code>{entry.id.clone()}</code> " (" {entry.scope.as_str()} "): "
                            {entry.reason.clone()} " — " {entry.source.clone().unwrap_or_default()}</li> }
                    }).collect_view()}
                </ul>
            })}
            {(!history.is_empty()).then(|| view! {
                <ol class="history" id="manifest-history">
                    {history.iter().map(|event| view! {
                        <li><code>{event.at.clone().unwrap_or_default()}</code> " " <strong>{event.event.clone()}</strong>
                            {event.generation.as_ref().map(|generation| format!(" [{generation}]"))} " " {event.detail.clone().unwrap_or_default()}</li>
                    }).collect_view()}
                </ol>
            })}
        </section>
    }
}

/// `Parallel efficiency` from `parallel efficiency`: metric names are ASCII, and ASCII case mapping spares the
/// bundle the Unicode case tables.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| {
            std::iter::once(first.to_ascii_uppercase())
                .chain(chars)
                .collect()
        })
        .unwrap_or_default()
}

/// Where a cell of another tool's file came from: the file and record, the key parts that were inferred and by
/// which rule, the tool's own figures next to cellscope's with their difference, every number the tool reported
/// under its own name, and how figures were obtained.
#[component]
fn OriginStory(origin: CellOrigin, cell: CellSummary) -> impl IntoView {
    let comparisons = compare_figures(&cell, &origin);
    let location = match origin.line {
        Some(line) => format!(" (record {}, line {line})", origin.record),
        None => format!(" (record {})", origin.record),
    };
    view! {
        <section class="origin" id="cell-origin" data-format=origin.format.clone()>
            <h3>"Origin"</h3>
            <p id="origin-file">"Read from " <code>{origin.file.clone()}</code> {location} ", written by " <strong>{origin.format.clone()}</strong> "."</p>
            {(!origin.inferred.is_empty()).then(|| view! {
                <p>"Key values inferred rather than read:"</p>
                <ul id="inferred-parts">
                    {origin.inferred.iter().map(|part| view! {
                        <li data-dimension=part.dimension.clone()>{part.dimension.clone()} " = " <code>{part.value.clone()}</code> " — " {part.rule.clone()}</li>
                    }).collect_view()}
                </ul>
            })}
            {(!comparisons.is_empty()).then(|| view! {
                <table class="reported" id="reported-vs-recomputed">
                    <caption>"The tool's own figures next to cellscope's, recomputed from the request rows"</caption>
                    <thead><tr><th>"figure"</th><th>"recomputed by cellscope"</th><th>"reported by the tool"</th><th>"difference"</th></tr></thead>
                    <tbody>
                        {comparisons.iter().map(|row| view! {
                            <tr data-column=row.column.clone()>
                                <td><code>{row.column.clone()}</code></td><td>{row.recomputed_text()}</td>
                                <td>{row.value_text(row.reported)}</td><td>{row.difference_text()}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            })}
            {(!origin.reported_figures.is_empty()).then(|| view! {
                <details class="reported-figures" id="reported-figures">
                    <summary>{format!("Every figure the tool reported ({}), under its own names and units", origin.reported_figures.len())}</summary>
                    <table>
                        <tbody>
                            {origin.reported_figures.iter().map(|(name, figure)| view! {
                                <tr data-figure=name.clone()><td><code>{name.clone()}</code></td><td>{figure.to_string()}</td></tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </details>
            })}
            {(!origin.notes.is_empty()).then(|| view! {
                <ul class="notes" id="origin-notes">{origin.notes.iter().map(|note| view! { <li>{note.clone()}</li> }).collect_view()}</ul>
            })}
        </section>
    }
}

#[component]
fn LineageCounts(rows: RwSignal<Option<Result<Vec<RequestRow>, String>>>) -> impl IntoView {
    move || {
        rows.with(|rows| match rows {
            Some(Ok(rows)) => {
                let current = rows.iter().filter(|row| row.lineage == Lineage::Current).count();
                let replaced: Vec<&RequestRow> = rows.iter().filter(|row| row.lineage == Lineage::Replaced).collect();
                let statuses = sorted_distinct(replaced.iter().map(|row| row.status.clone()));
                view! {
                    <p id="lineage-counts" data-current=current.to_string() data-replaced=replaced.len().to_string()>
                        {format!("{current} current rows · {} replaced rows (were {})", replaced.len(), statuses.join(", "))}
                    </p>
                    // The replaced rows themselves, as the sentence above promises.
                    {(!replaced.is_empty()).then(|| view! {
                        <div class="table-scroll replaced-rows">
                            <table id="replaced-rows">
                                <caption>"Replaced rows (kept in the backup)"</caption>
                                <thead><tr><th>"line"</th><th>"run"</th><th>"status"</th><th>"wall ms"</th><th>"TTFT ms"</th><th>"error"</th></tr></thead>
                                <tbody>
                                    {replaced.iter().map(|row| view! {
                                        <tr data-status=row.status.clone()>
                                            <td>{row.line}</td><td>{row.source_run_id.clone()}</td><td>{row.status.clone()}</td>
                                            <td>{number(row.wall_ms, 1)}</td><td>{number(row.ttft_ms, 1)}</td>
                                            <td>{row.error.clone().unwrap_or_default()}</td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        </div>
                    })}
                }
                .into_any()
            }
            _ => view! { <p>"…"</p> }.into_any(),
        })
    }
}

#[component]
fn Distributions(
    rows: RwSignal<Option<Result<Vec<RequestRow>, String>>>,
    retry: Callback<()>,
    /// The tool that wrote the cell, when it is another tool's.
    tool: Option<String>,
) -> impl IntoView {
    // Only rows with a latency are drawn: while they load, when they cannot be had (an offline copy holds the
    // rows of its view's cells only) and for a cell of reported figures alone the words say why, with no frame.
    let drawable = move || {
        rows.with(|rows| match rows {
            Some(Ok(rows)) => rows.iter().any(|row| {
                row.class != RowClass::Skip && (row.wall_ms.is_some() || row.ttft_ms.is_some())
            }),
            _ => false,
        })
    };
    let histogram_ref = NodeRef::<Canvas>::new();
    let cdf_ref = NodeRef::<Canvas>::new();
    Effect::new(move |_| {
        rows.with(|rows| {
            let Some(Ok(rows)) = rows else { return };
            let pick = |lineage: Lineage, ttft: bool| -> Vec<f64> {
                rows.iter()
                    .filter(|row| row.lineage == lineage && row.class != RowClass::Skip)
                    .filter_map(|row| if ttft { row.ttft_ms } else { row.wall_ms })
                    .collect()
            };
            let (wall, ttft, replaced) = (
                pick(Lineage::Current, false),
                pick(Lineage::Current, true),
                pick(Lineage::Replaced, false),
            );
            let scale = browser::device_pixel_ratio();
            let size = (540.0, 260.0);
            let prepare = |canvas: &web_sys::HtmlCanvasElement| {
                canvas.set_width((size.0 * scale) as u32);
                canvas.set_height((size.1 * scale) as u32);
                let style = web_sys::HtmlElement::style(canvas);
                let _ = style.set_property("width", &format!("{}px", size.0));
                let _ = style.set_property("height", &format!("{}px", size.1));
            };
            let groups: Vec<Sample<'_>> = vec![
                ("wall (current)", &wall, (0, 114, 178)),
                ("TTFT", &ttft, (230, 159, 0)),
            ];
            // The replaced rows are drawn beside the current ones, on axes of their own.
            let replaced_sample: Option<Sample<'_>> =
                (!replaced.is_empty()).then_some(("wall (replaced)", &replaced, (213, 94, 0)));
            if let Some(canvas) = histogram_ref.get() {
                let canvas: web_sys::HtmlCanvasElement = canvas.unchecked_into();
                prepare(&canvas);
                if let Some(backend) = Surface::canvas(canvas) {
                    let _ = draw_histogram(
                        &backend.into_drawing_area(),
                        "request latency histogram",
                        &groups,
                        replaced_sample,
                        scale,
                    );
                }
            }
            if let Some(canvas) = cdf_ref.get() {
                let canvas: web_sys::HtmlCanvasElement = canvas.unchecked_into();
                prepare(&canvas);
                if let Some(backend) = Surface::canvas(canvas) {
                    // p50, p95 and p99 of the current wall times, as the cell's statistics define them.
                    let mut sorted = wall.clone();
                    sort_floats(&mut sorted);
                    let marks: Vec<(&str, f64)> = [("p50", 0.50), ("p95", 0.95), ("p99", 0.99)]
                        .into_iter()
                        .filter_map(|(label, q)| {
                            quantile_linear(&sorted, q).map(|value| (label, value))
                        })
                        .collect();
                    let _ = draw_cdf(
                        &backend.into_drawing_area(),
                        "request latency CDF",
                        &groups,
                        &marks,
                        scale,
                    );
                }
            }
        });
    });
    view! {
        <div class="distributions">
            {move || rows.with(|rows| match rows {
                None => Some(view! { <p class="loading" id="rows-loading">"Loading the request rows of this cell…"</p> }.into_any()),
                // An offline copy either holds a cell's rows or never will: no retry, no address.
                Some(Err(error)) if crate::offline::is_offline() => Some(view! {
                    <p class="empty" id="rows-not-in-copy">{error.clone()}</p>
                }.into_any()),
                Some(Err(error)) => Some(view! {
                    <div class="error" id="rows-error">
                        <p>"Cannot load the request rows: " {error.clone()}</p>
                        <button on:click=move |_| retry.run(())>"Try again"</button>
                    </div>
                }.into_any()),
                Some(Ok(_)) if !drawable() => Some(view! {
                    <p class="hint" id="no-rows">{no_rows_message(tool.as_deref())}</p>
                }.into_any()),
                Some(Ok(_)) => None,
            })}
            <canvas id="histogram-canvas" node_ref=histogram_ref style:display=move || if drawable() { "" } else { "none" }></canvas>
            <canvas id="cdf-canvas" node_ref=cdf_ref style:display=move || if drawable() { "" } else { "none" }></canvas>
        </div>
    }
}
