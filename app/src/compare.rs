//! Compare: a head-to-head of two values of one dimension (vLLM against SGLang by default), per workload, with
//! the paired statistics of `cellscope_model::compare` computed here in the browser from the working cells —
//! the same function the CLI and `/api/compare` call. Shows what else differs between the sides, a forest plot,
//! the table with every dropped pair and its reason, and the pairs themselves against the y = x line.

use crate::chart::draw_on_canvas;
use crate::controls::slice_count;
use crate::state::ctx;
use crate::{browser, perf};
use cellscope_draw::chart::{Hit, draw_frame, export_header_height};
use cellscope_draw::compare as plot;
use cellscope_model::CellKey;
use cellscope_model::Dimension;
use cellscope_model::compare::confounders::{Confounders, confounders};
use cellscope_model::compare::text::{coordinates, delta, delta_interval, p_value, ratio, signed};
use cellscope_model::compare::{
    COMPARABLE, CONTRASTABLE, Comparison, Side, compare_view, spec_of_view,
};
use cellscope_model::export::{describe_view, file_name};
use cellscope_model::view_state::{View, ViewState};
use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;
use std::sync::Arc;
use wasm_bindgen::JsCast;

/// The charts' width in CSS pixels before the page has been measured.
const DEFAULT_WIDTH: f64 = 1000.0;

/// The width the charts can take: their container's, within bounds.
fn available_width() -> f64 {
    crate::chart::available_width("compare-area", DEFAULT_WIDTH)
}

#[component]
pub fn CompareView() -> impl IntoView {
    let ctx = ctx();
    // The comparison of the view: recomputed when the cells or a choice that matters to it changes (not the
    // matrix layout or the audit's sort).
    let inputs = Memo::new(move |_| {
        ctx.state.with(|state| {
            (
                state.compare.clone(),
                state.metric,
                state.filter.clone(),
                state.what_if,
            )
        })
    });
    // A new computation is always a new value: comparing results field by field would cost more code and time
    // than it saves.
    let comparison: Memo<Result<Arc<Comparison>, String>> = Memo::new_with_compare(
        move |_| {
            inputs.track();
            let state = ctx.state.get_untracked();
            ctx.working.with(|cells| {
                perf::clear("compare-start");
                perf::mark("compare-start");
                let result = compare_view(&state, cells)
                    .map(Arc::new)
                    .map_err(|error| error.to_string());
                perf::measure("compare", "compare-start");
                result
            })
        },
        |_, _| true,
    );
    let forest_ref = NodeRef::<Canvas>::new();
    let paired_ref = NodeRef::<Canvas>::new();
    let forest_hits: RwSignal<Vec<Hit>> = RwSignal::new(Vec::new());
    let paired_hits: RwSignal<Vec<Hit>> = RwSignal::new(Vec::new());
    let tooltip: RwSignal<Option<(&'static str, f64, f64, String)>> = RwSignal::new(None);
    // A clicked pair: where it is and its cells, to open one in the inspector.
    let chosen: RwSignal<Option<(f64, f64, Vec<CellKey>)>> = RwSignal::new(None);
    let width = crate::chart::follow_width("compare-area", DEFAULT_WIDTH);
    Effect::new(move |_| {
        width.track();
        let Ok(comparison) = comparison.get() else {
            return;
        };
        let groups = comparison.groups.len();
        let drawn_width = crate::chart::width_to_draw(width, "compare-area", DEFAULT_WIDTH);
        if let Some(canvas) = forest_ref.get() {
            let canvas: web_sys::HtmlCanvasElement = canvas.unchecked_into();
            match draw_on_canvas(
                canvas.clone(),
                drawn_width,
                plot::forest_height(groups),
                |root, scale| plot::draw_forest(root, &comparison, scale),
            ) {
                Ok(hits) => {
                    // The rows as drawn, for automation and the browser tests: `group,x,y;…` (CSS pixels of
                    // each mean's marker; the hits follow the groups with a mean, in order).
                    let rows: Vec<String> = comparison
                        .groups
                        .iter()
                        .filter(|group| group.mean_delta.is_some())
                        .zip(&hits)
                        .map(|(group, hit)| format!("{},{:.1},{:.1}", group.label(), hit.x, hit.y))
                        .collect();
                    let _ = canvas.set_attribute("data-rows", &rows.join(";"));
                    let _ = canvas.set_attribute("data-drawn", "true");
                    forest_hits.set(hits);
                }
                Err(error) => ctx
                    .error
                    .set(Some(format!("drawing the forest plot: {error}"))),
            }
        }
        if let Some(canvas) = paired_ref.get() {
            let canvas: web_sys::HtmlCanvasElement = canvas.unchecked_into();
            match draw_on_canvas(
                canvas.clone(),
                drawn_width,
                plot::paired_height(groups, drawn_width),
                |root, scale| plot::draw_paired(root, &comparison, scale),
            ) {
                Ok(hits) => {
                    // Where the pairs are, for automation and the browser tests: `x,y,cells;…`.
                    let points: Vec<String> = hits
                        .iter()
                        .map(|hit| format!("{:.1},{:.1},{}", hit.x, hit.y, hit.keys.len()))
                        .collect();
                    let _ = canvas.set_attribute("data-points", &points.join(";"));
                    let _ = canvas.set_attribute("data-drawn", "true");
                    paired_hits.set(hits);
                }
                Err(error) => ctx.error.set(Some(format!("drawing the pairs: {error}"))),
            }
        }
        perf::mark_first_chart();
    });
    // The sides as compared: the link's, or the defaults the comparison chose (once per change, for both
    // pickers and the swap).
    let sides = Memo::new(move |_| {
        ctx.working.with(|cells| {
            ctx.state
                .with(|state| spec_of_view(state, cells).map(|spec| (spec.a, spec.b)))
                .unwrap_or_default()
        })
    });
    let side_select = move |id: &'static str, is_a: bool| {
        view! {
            <select id=id on:change=move |event| {
                let value = event_target_value(&event);
                ctx.update(|state| if is_a { state.compare.a = Some(value) } else { state.compare.b = Some(value) });
            }>
                {move || {
                    let by = ctx.state.with(|state| state.compare.by);
                    let current = sides.with(|(a, b)| if is_a { a.clone() } else { b.clone() });
                    // A link's side that is not in the data stays shown as chosen, marked, rather than the
                    // picker falling back to a value that is not in effect.
                    let chosen = ctx.state.with(|state| if is_a { state.compare.a.clone() } else { state.compare.b.clone() });
                    let values = ctx.values_of(by);
                    let absent = chosen.filter(|chosen| !values.contains(chosen)).map(|chosen| view! {
                        <option value=chosen.clone() selected=true>{format!("{chosen} (not in the data)")}</option>
                    });
                    let options = values.into_iter().map(|value| {
                        let selected = value == current;
                        view! { <option value=value.clone() selected=selected>{value.clone()}</option> }
                    }).collect_view();
                    view! { {absent} {options} }
                }}
            </select>
        }
    };
    let inspect_link = move |key: CellKey| {
        let next = ctx.state.with_untracked(|state| ViewState {
            cell: Some(key.clone()),
            view: View::Inspector,
            ..state.clone()
        });
        let link = next.href();
        view! { <a href=link on:click=move |event| { event.prevent_default(); ctx.go(next.clone()); }>{key.to_string()}</a> }
    };
    let on_move = move |event: web_sys::MouseEvent, which: &'static str| {
        let (canvas, hits) = if which == "forest" {
            (forest_ref.get_untracked(), forest_hits)
        } else {
            (paired_ref.get_untracked(), paired_hits)
        };
        let Some(canvas) = canvas else { return };
        let canvas: web_sys::HtmlCanvasElement = canvas.unchecked_into();
        let hit = hits.with_untracked(|hits| crate::chart::nearest_hit(&canvas, hits, &event));
        tooltip.set(hit.map(|hit| (which, hit.x, hit.y, hit.text)));
    };
    let on_paired_click = move |event: web_sys::MouseEvent| {
        let Some(canvas) = paired_ref.get_untracked() else {
            return;
        };
        let canvas: web_sys::HtmlCanvasElement = canvas.unchecked_into();
        let hit =
            paired_hits.with_untracked(|hits| crate::chart::nearest_hit(&canvas, hits, &event));
        chosen.set(hit.map(|hit| (hit.x, hit.y, hit.keys.to_vec())));
    };
    // Exports: the forest plot with the view in words and the legend above it, and the table as CSV.
    // The view as compared, with the sides it defaulted to and its metric: what an export describes and names.
    let exported_view = move || {
        let mut state = ctx.state.get_untracked();
        let spec = comparison.with_untracked(|result| result.as_ref().ok().map(|c| c.spec.clone()));
        let metric = spec.as_ref().map_or(state.metric, |spec| spec.metric);
        if let Some(spec) = spec {
            state.compare.a = Some(spec.a);
            state.compare.b = Some(spec.b);
        }
        (state, metric)
    };
    let export_lines = move || {
        let (state, metric) = exported_view();
        describe_view(&state, metric, &browser::href())
    };
    let export_name = move |extension: &str| {
        let (state, metric) = exported_view();
        file_name(&state, metric, extension)
    };
    let export_image = move |svg: bool| {
        let Ok(comparison) = comparison.get_untracked() else {
            return;
        };
        let mut lines = export_lines();
        lines.push(comparison.pair_pooling());
        let legend = plot::legend(&comparison);
        let width = width.get_untracked().max(available_width());
        let height = plot::forest_height(comparison.groups.len())
            + f64::from(export_header_height(lines.len(), 1.0));
        if svg {
            let mut text = String::new();
            {
                let root = SVGBackend::with_string(&mut text, (width as u32, height as u32))
                    .into_drawing_area();
                if let Ok(chart) = draw_frame(&root, &lines, &legend, 1.0) {
                    let _ = plot::draw_forest(&chart, &comparison, 1.0);
                }
            }
            browser::download(&export_name("svg"), "image/svg+xml", text.as_bytes());
            return;
        }
        let url = crate::chart::png_data_url(width, height, |root, scale| {
            let chart = draw_frame(root, &lines, &legend, scale)?;
            plot::draw_forest(&chart, &comparison, scale)
        });
        if let Some(url) = url {
            browser::download_url(&export_name("png"), &url);
        }
    };
    let export_csv = move |_| {
        let Ok(comparison) = comparison.get_untracked() else {
            return;
        };
        let lines = export_lines();
        let csv = cellscope_model::export::comparison_csv(&comparison, &lines);
        browser::download(&export_name("csv"), "text/csv", csv.as_bytes());
    };
    view! {
        <section class="controls" id="compare-controls">
            <label>"compare "
                <select id="compare-by" on:change=move |event| {
                    if let Some(by) = Dimension::parse(&event_target_value(&event)) {
                        ctx.update(|state| {
                            state.compare.by = by;
                            state.compare.a = None;
                            state.compare.b = None;
                            if state.compare.per == Some(by) {
                                state.compare.per = None;
                            }
                        });
                    }
                }>
                    {CONTRASTABLE.into_iter().map(|dimension| view! {
                        <option value=dimension.name() selected=move || ctx.state.with(|state| state.compare.by == dimension)>{dimension.name()}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>"a " {side_select("compare-a", true)}</label>
            <button id="compare-swap" title="Swap a and b (every Δ changes sign)" on:click=move |_| {
                let (a, b) = sides.get_untracked();
                ctx.update(|state| { state.compare.a = Some(b); state.compare.b = Some(a); });
            }>"⇄"</button>
            <label>"b " {side_select("compare-b", false)}</label>
            <label>"per "
                <select id="compare-per" on:change=move |event| {
                    let value = event_target_value(&event);
                    ctx.update(|state| state.compare.per = Dimension::parse(&value));
                }>
                    <option value="none" selected=move || ctx.state.with(|state| state.compare.per.is_none())>"none (one group)"</option>
                    {CONTRASTABLE.into_iter().map(|dimension| view! {
                        <option value=dimension.name() selected=move || ctx.state.with(|state| state.compare.per == Some(dimension))>{dimension.name()}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>"metric "
                <select id="compare-metric" on:change=move |event| {
                    if let Some(metric) = cellscope_model::metric::Metric::parse(&event_target_value(&event)) {
                        ctx.update(|state| state.metric = metric);
                    }
                }>
                    {COMPARABLE.into_iter().map(|metric| view! {
                        <option value=metric.name() selected=move || comparison.with(|result| result.as_ref().map(|c| c.spec.metric).ok()) == Some(metric)>{metric.label()}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>"α "
                <input id="compare-alpha" type="number" step="0.01" min="0.001" max="0.5"
                    prop:value=move || ctx.state.with(|state| state.compare.alpha.to_string())
                    on:change=move |event| {
                        if let Ok(alpha) = event_target_value(&event).parse::<f64>()
                            && alpha > 0.0 && alpha < 1.0
                        {
                            ctx.update(|state| state.compare.alpha = alpha);
                        }
                    }/>
            </label>
            {slice_count()}
            <span class="exports">
                <button id="export-compare-csv" title="The table, with the view in comment lines" on:click=export_csv
                    disabled=move || comparison.with(Result::is_err)>"table CSV"</button>
                <button id="export-png" title="The forest plot with the view and legend" on:click=move |_| export_image(false)
                    disabled=move || comparison.with(Result::is_err)>"PNG"</button>
                <button id="export-svg" title="The forest plot with the view and legend" on:click=move |_| export_image(true)
                    disabled=move || comparison.with(Result::is_err)>"SVG"</button>
            </span>
        </section>
        {move || match comparison.get() {
            Err(error) => view! { <p class="empty" id="compare-error">{error}</p> }.into_any(),
            Ok(comparison) => {
                let spec = comparison.spec.clone();
                let headline = spec.headline();
                let pooling = comparison.pair_pooling();
                view! {
                    <p class="compare-headline" id="compare-headline">{headline}</p>
                    <p class="compare-pairing" id="compare-pairing">{pooling}</p>
                    <ConfoundersPanel comparison=comparison.clone()/>
                    <CompareTable comparison=comparison.clone()/>
                }.into_any()
            }
        }}
        // A comparison that cannot be made shows its reason alone, without empty chart frames.
        <div id="compare-area" style:display=move || if comparison.with(Result::is_err) { "none" } else { "" }>
            <h3>"Mean Δ per group, with its 95% bootstrap interval"</h3>
            <div class="series-legend" id="compare-legend">
                {move || comparison.get().ok().map(|comparison| plot::legend(&comparison).into_iter().map(|(label, color, _)| view! {
                    <span class="swatch" style=format!("color:{}", cellscope_draw::palette::css(color))>"●"</span><span>{label}</span>
                }).collect_view())}
                <span class="hint">"hollow = no direction claimed"</span>
            </div>
            <div class="chart-wrap">
                <canvas id="forest-canvas" node_ref=forest_ref
                    on:mousemove=move |event| on_move(event, "forest")
                    on:mouseleave=move |_| tooltip.set(None)></canvas>
                {move || tooltip.get().filter(|(which, ..)| *which == "forest").map(|(_, x, y, text)| view! {
                    <div class="tooltip" id="forest-tooltip" style=format!("left:{}px;top:{}px", x + 12.0, y + 12.0)>{text}</div>
                })}
            </div>
            <h3>"Each pair: a against b (on the line: equal; below it: b lower)"</h3>
            <div class="chart-wrap">
                <canvas id="paired-canvas" node_ref=paired_ref on:click=on_paired_click
                    on:mousemove=move |event| on_move(event, "paired")
                    on:mouseleave=move |_| tooltip.set(None)></canvas>
                {move || tooltip.get().filter(|(which, ..)| *which == "paired").map(|(_, x, y, text)| view! {
                    <div class="tooltip" id="paired-tooltip" style=format!("left:{}px;top:{}px", x + 12.0, y + 12.0)>{text}</div>
                })}
                {move || chosen.get().map(|(x, y, keys)| view! {
                    <div class="points-popover" id="pair-cells" style=format!("left:{}px;top:{}px", x + 12.0, y + 12.0)>
                        {format!("This pair pools {} cells (each side's repeated measurements); open one:", keys.len())}
                        <ul>{keys.into_iter().map(|key| view! { <li>{inspect_link(key)}</li> }).collect_view()}</ul>
                        <button on:click=move |_| chosen.set(None)>"Close"</button>
                    </div>
                })}
            </div>
        </div>
    }
}

/// The table: one row per group with its statistics, verdict and every pair that could not be formed.
#[component]
fn CompareTable(comparison: Arc<Comparison>) -> impl IntoView {
    let spec = comparison.spec.clone();
    let absolute = spec.metric.is_absolute();
    view! {
        <table class="compare-table" id="compare-table">
            <thead><tr>
                <th>{spec.per.map_or("group", Dimension::name)}</th><th>"pairs"</th><th>"mean Δ"</th><th>"median Δ"</th>
                {absolute.then(|| view! { <th title="geometric mean of each pair's a / b">"a / b"</th> })}
                <th>"95% CI (bootstrap)"</th><th>"p (Wilcoxon)"</th><th>"Holm p"</th><th title="matched-pairs rank-biserial correlation">"r"</th>
                <th title="pairs where a is better / worse / equal">"W/L/T (a)"</th><th>"verdict"</th><th>"pairs dropped"</th>
            </tr></thead>
            <tbody>
                {comparison.groups.iter().map(|group| {
                    let verdict = group.verdict.name();
                    let color = cellscope_draw::palette::css(plot::verdict_color(&spec, group.verdict));
                    let dropped: Vec<String> = group.dropped.iter().map(|dropped| {
                        format!("{}: {}", coordinates(&dropped.coordinates, spec.per), dropped.describe(&spec))
                    }).collect();
                    let count = dropped.len();
                    view! {
                        <tr data-group=group.label() data-pairs=group.n_pairs.to_string() data-verdict=verdict
                            data-dropped=count.to_string()>
                            <td>{group.label()}</td>
                            <td class="num">{group.n_pairs}</td>
                            <td class="num">{delta(group.mean_delta, spec.metric)}</td>
                            <td class="num">{delta(group.median_delta, spec.metric)}</td>
                            {absolute.then(|| view! { <td class="num ratio">{ratio(group.ratio)}</td> })}
                            <td class="num">{delta_interval(group.ci, spec.metric)}</td>
                            <td class="num">{p_value(group.wilcoxon.and_then(|test| test.p_value))}</td>
                            <td class="num">{p_value(group.holm_p)}</td>
                            <td class="num">{signed(group.effect_size, 2)}</td>
                            <td class="num">{group.record()}</td>
                            <td class="verdict" style=format!("color:{color}")>{group.describe_verdict(&spec)}</td>
                            <td class="dropped">
                                {(count == 0).then_some("none")}
                                {(count > 0).then(|| view! {
                                    <details open=count <= 6>
                                        <summary>{format!("{count} dropped")}</summary>
                                        <ul>{dropped.into_iter().map(|line| view! { <li>{line}</li> }).collect_view()}</ul>
                                    </details>
                                })}
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// What else differs between the runs behind the two sides (driver, torch, context ceiling, …), each value with
/// the runs it comes from; fields equal on both sides are counted, and listed on demand.
#[component]
fn ConfoundersPanel(comparison: Arc<Comparison>) -> impl IntoView {
    let ctx = ctx();
    let found = ctx.working.with_untracked(|cells| {
        ctx.data.with_untracked(|data| {
            data.as_ref()
                .map(|data| confounders(&comparison, cells, &data.index.runs))
        })
    });
    let Some(found) = found else {
        return ().into_any();
    };
    let spec = &comparison.spec;
    let runs = |side: Side| {
        found
            .runs(side)
            .iter()
            .map(|run| run.describe())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let row = |field: &cellscope_model::compare::confounders::FieldContrast| {
        view! {
            <tr data-field=field.label.clone()>
                <th>{field.label.clone()}</th>
                <td>{field.describe_side(Side::A)}</td>
                <td>{field.describe_side(Side::B)}</td>
            </tr>
        }
    };
    let (a_runs, b_runs) = (runs(Side::A), runs(Side::B));
    view! {
        <section class="confounders" id="compare-confounders" data-differing=found.differing.len().to_string()
            data-equal=found.equal.len().to_string()>
            <h3>{Confounders::heading(spec)}</h3>
            {found.differing.is_empty().then(|| view! { <p>"Nothing the runs record differs between the sides."</p> })}
            <table>
                <thead><tr><th></th><th>{format!("{} (a)", spec.a)}</th><th>{format!("{} (b)", spec.b)}</th></tr></thead>
                <tbody>
                    {found.differing.iter().map(row).collect_view()}
                    <tr class="runs"><th>"runs"</th><td class="runs">{a_runs}</td><td class="runs">{b_runs}</td></tr>
                </tbody>
            </table>
            {(!found.equal.is_empty()).then(|| view! {
                <details id="confounders-equal">
                    <summary>{found.equal_summary()}</summary>
                    <table><tbody>{found.equal.iter().map(row).collect_view()}</tbody></table>
                </details>
            })}
        </section>
    }
    .into_any()
}
