//! Curves: any per-cell metric (efficiency, p95 multiplier, latencies, TTFT, throughput, tokens) against log₂ N
//! or against another per-cell metric (throughput against latency), overlaid by one dimension, faceted by
//! another, with bands, the threshold, breakdown markers, explicit ends at skipped cells and, against a metric,
//! each series' Pareto frontier. The canvas follows the window's width. Exports the plotted series as CSV and
//! the chart as PNG or SVG, each carrying the view (filters, axes, frontier, criterion, pooling, snapshot, link)
//! and the legend.

use crate::controls::{
    aggregation_control, compare_these_button, criterion_controls, empty_notice, export_slice_csv,
    slice_count,
};
use crate::state::ctx;
use crate::{browser, perf};
use cellscope_draw::chart::{
    CurveSpec, ExportFrame, Hit, PointWords, curve_point_text, curves_height, draw_curves,
    draw_export, export_header_height, series_styles,
};
use cellscope_model::CellKey;
use cellscope_model::Dimension;
use cellscope_model::api::Provenance;
use cellscope_model::explore::{
    Facet, Series, UnequalSets, curves_of, empty_notes, frontier_withheld, marks_note, panel_notes,
    point_keys, unequal_sentences, unequal_sets, without_value_note,
};
use cellscope_model::export::{describe_view, file_name, series_csv};
use cellscope_model::reasons::skip_reason as default_skip_reason;
use cellscope_model::status::CellStatus;
use cellscope_model::view_state::{Aggregation, BandSpan, Metric, View, ViewState, XAxis};
use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;
use wasm_bindgen::JsCast;

/// The skip reason of a series' end marker, from the provenance (manifest history) of its skipped cells.
fn skip_reason(provenance: Option<&Provenance>, series: &Series) -> String {
    series
        .skipped_cells
        .iter()
        .find_map(|key| provenance?.skipped(key))
        .map(|skipped| skipped.reason.clone())
        .unwrap_or_else(|| default_skip_reason(CellStatus::Skipped, &[]))
}

/// Keeps the reason short enough to print on the chart; the tooltip and the inspector carry the whole text.
fn short(text: &str) -> String {
    let text: String = text.chars().take(48).collect();
    if text.len() < 48 {
        text
    } else {
        format!("{text}…")
    }
}

/// The chart's width in CSS pixels before the page has been measured.
const DEFAULT_WIDTH: f64 = 1100.0;

/// What a drawing of the curves needs besides the facets, read once per drawing.
struct Look {
    metric: Metric,
    x: XAxis,
    threshold: Option<f64>,
    styles: std::collections::BTreeMap<String, ((u8, u8, u8), cellscope_draw::palette::Marker)>,
    /// The loaded data, for the provenance (shared, not copied: it grows with the runs).
    data: Option<std::sync::Arc<crate::api::Dataset>>,
    /// What each panel says inside the chart.
    notes: Vec<Vec<String>>,
}

/// Draws `facets` on any backend: the page's canvas and the exports are the same drawing; an export adds the
/// view's description and the legend above it.
fn draw_on<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    facets: &[Facet],
    look: &Look,
    scale: f64,
    frame: Option<&ExportFrame<'_>>,
) -> Result<Vec<Hit>, String> {
    let provenance = look.data.as_ref().and_then(|data| data.provenance.as_ref());
    let reason = |series: &Series| short(&skip_reason(provenance, series));
    let spec = CurveSpec {
        facets,
        metric: look.metric,
        x: look.x,
        threshold: look.threshold,
        styles: &look.styles,
        skip_reason: &reason,
        scale,
        notes: &look.notes,
    };
    match frame {
        Some(frame) => draw_export(root, &spec, frame),
        None => draw_curves(root, &spec),
    }
}

#[component]
pub fn CurvesView() -> impl IntoView {
    let ctx = ctx();
    let canvas_ref = NodeRef::<Canvas>::new();
    let hits: RwSignal<Vec<Hit>> = RwSignal::new(Vec::new());
    let tooltip: RwSignal<Option<(f64, f64, String)>> = RwSignal::new(None);
    // A clicked point that pools several cells: where it is and its cells, to pick one.
    let chosen: RwSignal<Option<(f64, f64, Vec<CellKey>)>> = RwSignal::new(None);
    // Breakdown N and the ok rate are not per cell: the curves then show efficiency (with breakdown rings).
    let chart_metric = Memo::new(move |_| {
        ctx.state.with(|state| {
            if state.metric.per_cell() {
                state.metric
            } else {
                Metric::Efficiency
            }
        })
    });
    // The chart follows its container's width (see `chart::follow_width`): a change of it draws again.
    let width = crate::chart::follow_width("curves-area", DEFAULT_WIDTH);
    let facets = Memo::new(move |_| {
        let metric = chart_metric.get();
        perf::timed("facets", || {
            let comparisons = ctx.comparisons.get();
            ctx.with_filtered(|_, filtered| {
                ctx.state
                    .with(|state| curves_of(filtered, comparisons, state, metric))
            })
        })
    });
    // Series of one panel that pool different sets of models, workloads or phases: said in the chart and above it.
    let unequal = Memo::new(move |_| {
        let comparisons = ctx.comparisons.get();
        ctx.with_filtered(|_, filtered| {
            ctx.state
                .with(|state| unequal_sets(filtered, comparisons, state))
        })
    });
    // Panels and series without a point, and why: said inside the chart.
    let empty = Memo::new(move |_| {
        let metric = chart_metric.get();
        let comparisons = ctx.comparisons.get();
        facets.with(|facets| {
            ctx.with_filtered(|_, filtered| {
                ctx.state
                    .with(|state| empty_notes(filtered, comparisons, state, metric, facets))
            })
        })
    });
    // Each value's look comes from its place among all values of the colour dimension in the data.
    let color_dimension = ctx.part(|state| state.color);
    let colors = Memo::new(move |_| {
        let dimension = color_dimension.get();
        let all_values = ctx.values_of(dimension);
        facets.with(|facets| {
            series_styles(
                facets
                    .iter()
                    .flat_map(|facet| facet.series.iter().map(|series| series.label.to_string())),
                &all_values,
            )
        })
    });
    let look = move || Look {
        metric: chart_metric.get_untracked(),
        x: ctx.state.with_untracked(|state| state.x),
        threshold: ctx
            .state
            .with_untracked(|state| match chart_metric.get_untracked() {
                Metric::P95Multiplier => state.criterion.p95_multiplier_above(),
                Metric::Efficiency => Some(state.criterion.efficiency_below()),
                // Absolute metrics have no criterion threshold.
                _ => None,
            }),
        styles: colors.get_untracked(),
        data: ctx.data.get_untracked(),
        notes: facets.with_untracked(|facets| {
            unequal.with_untracked(|unequal| {
                ctx.state.with_untracked(|state| {
                    let others = panel_notes(facets, unequal, state);
                    empty.with_untracked(|empty| {
                        empty
                            .iter()
                            .zip(others)
                            .map(|(empty, others)| empty.iter().cloned().chain(others).collect())
                            .collect()
                    })
                })
            })
        }),
    };
    let draw = move |facets: &[Facet]| -> Option<Vec<Hit>> {
        let canvas = canvas_ref.get()?;
        let drawn_width = crate::chart::width_to_draw(width, "curves-area", DEFAULT_WIDTH);
        let height = curves_height(facets.len(), drawn_width);
        let element: web_sys::HtmlCanvasElement = canvas.unchecked_into();
        let drawn = crate::chart::draw_on_canvas(element, drawn_width, height, |root, scale| {
            draw_on(root, facets, &look(), scale, None)
        });
        match drawn {
            Ok(hits) => Some(hits),
            Err(error) => {
                ctx.error.set(Some(format!("drawing the curves: {error}")));
                None
            }
        }
    };
    Effect::new(move |_| {
        // Redraw when the provenance arrives (it names the skip reasons at the series' ends) and when the
        // criterion moves the threshold line.
        ctx.data
            .with(|data| data.as_ref().map(|data| data.provenance.is_some()));
        ctx.state.with(|state| state.criterion);
        // The drawing reads the rest of the view state (axis, aggregation, band) untracked: any change of it
        // draws again, as building the view anew did.
        ctx.state.track();
        width.track();
        unequal.track();
        empty.track();
        let drawn = facets.with(|facets| {
            perf::clear("draw-start");
            perf::mark("draw-start");
            let drawn = draw(facets);
            perf::measure("draw", "draw-start");
            drawn
        });
        canvas_ref.track();
        if let Some(drawn) = drawn {
            if let Some(canvas) = canvas_ref.get_untracked() {
                // Where the points are, for keyboard-less automation and the browser tests: `x,y,cells;…`.
                let points: Vec<String> = drawn
                    .iter()
                    .map(|hit| format!("{:.1},{:.1},{}", hit.x, hit.y, hit.cells))
                    .collect();
                let _ = canvas.set_attribute("data-points", &points.join(";"));
                // What is drawn, for screen readers and the browser tests: the axes, and the frontier's points.
                let x = ctx.state.with_untracked(|state| state.x);
                let summary = facets.with_untracked(|facets| {
                    chart_summary(facets, chart_metric.get_untracked(), x)
                });
                let (on, dominated) = facets.with_untracked(|facets| frontier_counts(facets));
                let _ = canvas.set_attribute("aria-label", &summary);
                let _ = canvas.set_attribute("data-x-axis", x.name());
                let _ = canvas.set_attribute("data-x-label", x.label());
                let _ = canvas.set_attribute("data-y-label", chart_metric.get_untracked().label());
                let _ = canvas.set_attribute("data-frontier-points", &on.to_string());
                let _ = canvas.set_attribute("data-dominated-points", &dominated.to_string());
                // The notes drawn inside the panels, one a line.
                let notes = look().notes.concat().join("\n");
                let _ = canvas.set_attribute("data-notes", &notes);
                let _ = canvas.set_attribute("data-drawn", "true");
            }
            hits.set(drawn);
            perf::mark_first_chart();
        }
    });
    // A change of the view state closes the point's cell list and the tooltip, which describe the old view.
    Effect::new(move |previous: Option<()>| {
        ctx.state.track();
        if previous.is_some() {
            chosen.set(None);
            tooltip.set(None);
        }
    });
    // The tooltip is kept inside the chart, flipped to the left of or above its point near the right or bottom
    // edge: placed once its text is laid out (the next frame), from its size.
    let tooltip_ref = NodeRef::<leptos::html::Div>::new();
    Effect::new(move |_| {
        let Some((x, y, _)) = tooltip.get() else {
            return;
        };
        request_animation_frame(move || {
            if let (Some(element), Some(canvas)) =
                (tooltip_ref.get_untracked(), canvas_ref.get_untracked())
            {
                crate::chart::place_tooltip(&element, &canvas, (x, y));
            }
        });
    });
    let nearest_hit = move |event: &web_sys::MouseEvent| -> Option<Hit> {
        let canvas = canvas_ref.get_untracked()?;
        hits.with_untracked(|hits| crate::chart::nearest_hit(&canvas, hits, event))
    };
    let inspect = move |key: CellKey| {
        ctx.go(ctx.state.with_untracked(|state| ViewState {
            cell: Some(key),
            view: View::Inspector,
            ..state.clone()
        }));
    };
    // Opens what a point stands for, as a click or Enter on it does: its one cell in the inspector, or the list
    // of its cells to pick one from.
    let open_hit = move |hit: Hit| {
        // A curve point's cells come from the model, by the same rule that counted them.
        let keys = match hit.point {
            Some([facet, series, point]) => facets
                .with_untracked(|facets| {
                    let facet = facets.get(facet)?;
                    let series = facet.series.get(series)?;
                    let point = series.points.get(point)?;
                    Some((facet.title.clone(), series.label.clone(), point.n))
                })
                .map(|(title, label, n)| {
                    let comparisons = ctx.comparisons.get_untracked();
                    ctx.with_filtered_untracked(|_, filtered| {
                        ctx.state.with_untracked(|state| {
                            point_keys(filtered, comparisons, state, title.as_ref(), &label, n)
                        })
                    })
                })
                .unwrap_or_default(),
            None => hit.keys.to_vec(),
        };
        match keys.as_slice() {
            [] => chosen.set(None),
            [only] => inspect(only.clone()),
            _ => chosen.set(Some((hit.x, hit.y, keys))),
        }
    };
    let on_click = move |event: web_sys::MouseEvent| match nearest_hit(&event) {
        Some(hit) => open_hit(hit),
        None => chosen.set(None),
    };
    // A point's tooltip: a curve point's text is written now, from the facets drawn (see `Hit::text`).
    let hit_text = move |hit: &Hit| -> String {
        let words = ctx.state.with_untracked(|state| PointWords {
            metric: chart_metric.get_untracked(),
            x: state.x,
            aggregation: state.aggregation,
            band: state.band,
        });
        match hit.point {
            Some(at) => facets
                .with_untracked(|facets| curve_point_text(facets, at, words))
                .unwrap_or_default(),
            None => hit.text.clone(),
        }
    };
    let on_move = move |event: web_sys::MouseEvent| {
        tooltip.set(nearest_hit(&event).map(|hit| (hit.x, hit.y, hit_text(&hit))));
    };
    // The keyboard's way to the points: one button per point over the canvas (see `point_buttons`); the point
    // last opened from it, to give it the focus back when its list of cells closes.
    let opened_from = StoredValue::new(None::<usize>);
    let hit_at = move |index: usize| hits.with_untracked(|hits| hits.get(index).cloned());
    let focus_point = move |index: usize| {
        let Some(hit) = hit_at(index) else { return };
        tooltip.set(Some((hit.x, hit.y, hit_text(&hit))));
    };
    let press_point = move |index: usize| {
        let Some(hit) = hit_at(index) else { return };
        opened_from.set_value(Some(index));
        open_hit(hit);
        // A list of cells opened: the focus goes to its first cell.
        request_animation_frame(|| browser::focus("#point-cells a"));
    };
    let close_cells = move || {
        chosen.set(None);
        if let Some(index) = opened_from.get_value() {
            request_animation_frame(move || {
                browser::focus(&format!(
                    "#curves-points .point-focus[data-index='{index}']"
                ))
            });
        }
    };
    let point_buttons = move || {
        hits.with(|hits| {
            hits.iter()
                .enumerate()
                .map(|(index, hit)| {
                    // The tooltip in one line: what a screen reader says on reaching the point.
                    let label = hit_text(hit)
                        .lines()
                        .map(str::trim)
                        .filter(|line| !line.is_empty())
                        .collect::<Vec<_>>()
                        .join("; ");
                    view! {
                        <button type="button" class="point-focus" data-index=index aria-label=label
                            style=format!("left:{}px;top:{}px", hit.x, hit.y)
                            on:focus=move |_| focus_point(index)
                            on:blur=move |_| tooltip.set(None)
                            on:click=move |_| press_point(index)></button>
                    }
                })
                .collect_view()
        })
    };
    // What an export carries: the view in words, with the link that reopens it pinned to its snapshot.
    let export_lines = move || {
        let metric = chart_metric.get_untracked();
        ctx.state
            .with_untracked(|state| describe_view(state, metric, &browser::href()))
    };
    let export_name = move |extension: &str| {
        let metric = chart_metric.get_untracked();
        ctx.state
            .with_untracked(|state| file_name(state, metric, extension))
    };
    let export_series = move |_| {
        let metric = chart_metric.get_untracked();
        let csv = facets.with_untracked(|facets| {
            ctx.state
                .with_untracked(|state| series_csv(facets, state, metric, &export_lines()))
        });
        browser::download(&export_name("csv"), "text/csv", csv.as_bytes());
    };
    let export_cells = move |_| export_slice_csv();
    // The image exports are drawn afresh at the page's size with the description and legend above the chart.
    let export_size = move |facets: &[Facet], lines: usize| {
        let width = width.get_untracked();
        let header = f64::from(export_header_height(lines, 1.0));
        (width, curves_height(facets.len(), width) + header)
    };
    // The images carry the note on reported and derived figures as a line of their header (the CSV as a
    // comment, written by `series_csv`).
    let image_lines = move || {
        let mut lines = export_lines();
        lines.extend(facets.with_untracked(|facets| marks_note(facets)));
        lines.extend(chart_warnings(facets, unequal, true));
        lines
    };
    let export_png = move |_| {
        let lines = image_lines();
        let frame = ExportFrame { lines: &lines };
        let url = facets.with_untracked(|facets| {
            let (width, height) = export_size(facets, lines.len());
            crate::chart::png_data_url(width, height, |root, scale| {
                draw_on(root, facets, &look(), scale, Some(&frame))
            })
        });
        if let Some(url) = url {
            browser::download_url(&export_name("png"), &url);
        }
    };
    let export_svg = move |_| {
        let lines = image_lines();
        let frame = ExportFrame { lines: &lines };
        let mut svg = String::new();
        facets.with_untracked(|facets| {
            let (width, height) = export_size(facets, lines.len());
            let root = SVGBackend::with_string(&mut svg, (width as u32, height as u32))
                .into_drawing_area();
            let _ = draw_on(&root, facets, &look(), 1.0, Some(&frame));
        });
        browser::download(&export_name("svg"), "image/svg+xml", svg.as_bytes());
    };
    let facet = ctx.part(|state| state.facet);
    let dimension_choice = move |id: &'static str, label: &'static str, optional: bool| {
        let choices = [
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
                    {choices.into_iter().map(|dimension| view! {
                        <option value=dimension.name() selected=move || if id == "color" { color_dimension.get() == dimension } else { facet.get() == Some(dimension) }>{dimension.name()}</option>
                    }).collect_view()}
                </select>
            </label>
        }
    };
    let x_axis = ctx.part(|state| state.x);
    let frontier = ctx.part(|state| state.frontier);
    let band = ctx.part(|state| state.band);
    let aggregation = ctx.part(|state| state.aggregation);
    let legend_hint = ctx.part(legend_hint);
    view! {
        <section class="controls">
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
            <label>"against "
                <select id="curve-x" on:change=move |event| {
                    if let Ok(x) = XAxis::parse(&event_target_value(&event)) {
                        ctx.update(|state| state.x = x);
                    }
                }>
                    {XAxis::choices().map(|x| view! {
                        <option value=x.name() selected=move || x_axis.get() == x>{match x {
                            XAxis::N => "N (log₂)",
                            XAxis::Metric(metric) => metric.label(),
                        }}</option>
                    }).collect_view()}
                </select>
            </label>
            // The frontier needs a metric on x: against N every point is a different load, not a trade-off.
            <label title=move || if x_axis.get() == XAxis::N { "Choose a metric for x to draw each series' Pareto frontier" } else { "Each series' points that no other point of it beats on both axes" }>
                <input type="checkbox" id="curve-frontier"
                    prop:checked=move || frontier.get()
                    prop:disabled=move || x_axis.get() == XAxis::N
                    on:change=move |event| {
                        let on = event_target_checked(&event);
                        ctx.update(|state| state.frontier = on);
                    }/>
                " Pareto frontier"
            </label>
            {dimension_choice("color", "colour by", false)}
            {dimension_choice("facet", "small multiples by", true)}
            // The criterion sets the threshold line of efficiency and p95× and the breakdown rings of every metric.
            {criterion_controls()}
            {aggregation_control()}
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
            {slice_count()}
            {compare_these_button()}
            <span class="exports">
                <button id="export-series-csv" title="The plotted series, with the view in comment lines" on:click=export_series>"series CSV"</button>
                <button id="export-csv" title="Every cell of the slice" on:click=export_cells>"cells CSV"</button>
                <button id="export-png" on:click=export_png>"PNG"</button>
                <button id="export-svg" on:click=export_svg>"SVG"</button>
            </span>
        </section>
        {empty_notice()}
        <div class="series-legend" id="curves-legend">
            {move || colors.get().into_iter().map(|(label, (color, marker))| view! {
                <span class="swatch" data-series=label.clone() style=format!("color:{}", cellscope_draw::palette::css(color))>{marker.glyph()}</span><span>{label}</span>
            }).collect_view()}
            <span class="hint">{move || legend_hint.get()}</span>
        </div>
        <p class="pooling-note" id="curves-pooling">{move || facets.with(|facets| pooling_note(facets, aggregation.get()))}</p>
        {move || {
            let x = x_axis.get();
            facets.with(|facets| without_value_note(facets, chart_metric.get(), x))
                .map(|note| view! { <p class="pooling-note" id="curves-missing">{note}</p> })
        }}
        {move || facets.with(|facets| marks_note(facets))
            .map(|note| view! { <p class="pooling-note" id="curves-marks">{note}</p> })}
        {move || {
            let warnings = chart_warnings(facets, unequal, false);
            (!warnings.is_empty()).then(|| view! {
                <ul class="pooling-note chart-warnings" id="curves-warnings">
                    {warnings.into_iter().map(|warning| view! { <li>{warning}</li> }).collect_view()}
                </ul>
            })
        }}
        <div id="curves-area">
        <div class="chart-wrap">
            <canvas id="curves-canvas" node_ref=canvas_ref on:mousemove=on_move on:click=on_click
                on:mouseleave=move |_| tooltip.set(None)></canvas>
            <div class="point-keys" id="curves-points" role="group"
                aria-label="the chart's points: Tab moves to the next, Enter opens its cells">
                {point_buttons}
            </div>
            {move || chosen.get().map(|(x, y, keys)| view! {
                <div class="points-popover" id="point-cells" style=format!("left:{}px;top:{}px", x + 12.0, y + 12.0)
                    on:keydown=move |event: web_sys::KeyboardEvent| if event.key() == "Escape" { close_cells(); }>
                    {format!("This point pools {} cells; open one:", keys.len())}
                    <ul>
                        {keys.into_iter().map(|key| {
                            let next = ctx.state.with_untracked(|state| ViewState {
                                cell: Some(key.clone()),
                                view: View::Inspector,
                                ..state.clone()
                            });
                            let link = next.href();
                            view! { <li><a href=link on:click=move |event| { event.prevent_default(); ctx.go(next.clone()); }>{key.to_string()}</a></li> }
                        }).collect_view()}
                    </ul>
                    <button on:click=move |_| close_cells()>"Close"</button>
                </div>
            })}
            {move || tooltip.get().map(|(x, y, text)| view! {
                <div class="tooltip" id="curves-tooltip" role="tooltip" node_ref=tooltip_ref style=format!("left:{}px;top:{}px", x + 12.0, y + 12.0)>{text}</div>
            })}
        </div>
        </div>
        <SeriesTable facets=facets chart_metric=chart_metric x=x_axis/>
    }
}

/// What the chart warns of, in whole sentences (the chart itself carries their short forms): series pooling
/// different sets, and why the frontier asked for is not drawn. `untracked` for an export, read outside a
/// reactive context.
fn chart_warnings(
    facets: Memo<Vec<Facet>>,
    unequal: Memo<Vec<UnequalSets>>,
    untracked: bool,
) -> Vec<String> {
    let ctx = ctx();
    let read = |facets: &Vec<Facet>, unequal: &Vec<UnequalSets>, state: &ViewState| {
        unequal_sentences(unequal)
            .into_iter()
            .chain(frontier_withheld(facets, state))
            .collect()
    };
    if untracked {
        facets.with_untracked(|facets| {
            unequal.with_untracked(|unequal| {
                ctx.state
                    .with_untracked(|state| read(facets, unequal, state))
            })
        })
    } else {
        facets.with(|facets| {
            unequal.with(|unequal| ctx.state.with(|state| read(facets, unequal, state)))
        })
    }
}

/// What the marks of the chart mean, beside the legend.
fn legend_hint(state: &ViewState) -> String {
    let band = match state.x {
        XAxis::N => state.band.label().to_string(),
        XAxis::Metric(_) => state.band.label().replacen("band", "whiskers", 1),
    };
    let points = match state.x {
        XAxis::Metric(_) if state.frontier => {
            "bold line = Pareto frontier of each series; hollow point = dominated (another N of its series is better on both axes); ◐ = includes partial cells; thin line joins the points in N order"
        }
        XAxis::Metric(_) => {
            "hollow point with ◐ and its value = includes partial cells; points joined in N order"
        }
        XAxis::N => "hollow point with ◐ and its value = includes partial cells",
    };
    format!("{band}; {points}; ring = breakdown N; ✕ = series ends at a skipped cell")
}

/// The chart in words, for screen readers: what is plotted against what, the series and panels, and the
/// frontier when it is drawn.
fn chart_summary(facets: &[Facet], metric: Metric, x: XAxis) -> String {
    let series: usize = facets.iter().map(|facet| facet.series.len()).sum();
    let mut summary = format!(
        "{} against {}: {series} series in {} panel{}",
        metric.label(),
        x.label(),
        facets.len(),
        if facets.len() == 1 { "" } else { "s" }
    );
    if facets
        .iter()
        .flat_map(|facet| &facet.series)
        .any(|series| series.frontier.is_some())
    {
        let (on, dominated) = frontier_counts(facets);
        summary.push_str(&format!(
            "; Pareto frontier drawn: {on} points on it, {dominated} dominated"
        ));
    }
    summary
}

/// Points on their series' frontier and points dominated, over every series that carries a frontier.
fn frontier_counts(facets: &[Facet]) -> (usize, usize) {
    facets
        .iter()
        .flat_map(|facet| &facet.series)
        .filter_map(|series| series.frontier.as_ref().map(|frontier| (series, frontier)))
        .fold((0, 0), |(on, dominated), (series, frontier)| {
            (
                on + frontier.members.len(),
                dominated + series.points.len() - frontier.members.len(),
            )
        })
}

/// What the chart's points pool, said once above it: the largest pooling among its points ("each point: up to
/// mean of 18 cells: 3 models × 2 phases × 3 reps"), and that reps are averaged within each series first.
fn pooling_note(facets: &[Facet], aggregation: Aggregation) -> String {
    let widest = facets
        .iter()
        .flat_map(|facet| &facet.series)
        .flat_map(|series| &series.points)
        .max_by_key(|point| point.pooling.cells);
    match widest {
        None => String::new(),
        Some(point) if point.pooling.cells <= 1 => "Each point is one cell.".into(),
        Some(point) => format!(
            "Each point pools the cells it stands for, up to {}; reps are aggregated within each series first, then the series. Hover a point for its own count.",
            point.pooling.describe(aggregation)
        ),
    }
}

/// The numbers behind the chart, as a table (readable without the canvas, and checked by the browser tests).
#[component]
fn SeriesTable(
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
    view! {
        <table class="series-table" id="series-table">
            <thead><tr><th>"facet"</th><th>"series"</th><th>{move || {
                    let metric = chart_metric.get();
                    let in_ms = |metric: Metric| if metric.unit() == cellscope_model::metric::Unit::Milliseconds { " in ms" } else { "" };
                    match x.get() {
                        XAxis::N => format!("points (N: {}{})", metric.label(), in_ms(metric)),
                        XAxis::Metric(x) => format!("points (N: {}{} → {}{})", x.label(), in_ms(x), metric.label(), in_ms(metric)),
                    }
                }}</th><th>"breakdown N"</th><th>"ends"</th><th>"left out"</th>
                {move || frontier().then(|| view! { <th>"frontier (N)"</th> })}</tr></thead>
            <tbody>
                {move || perf::timed("series-table-view", || facets.get().into_iter().flat_map(|facet| {
                    let title = facet.title.as_ref().map(ToString::to_string).unwrap_or_default();
                    let x = x.get();
                    facet.series.into_iter().map(move |series| {
                        let points: Vec<String> = series.points.iter().map(|point| point.table_text(x)).collect();
                        let partial = series.points.iter().filter(|point| point.partial > 0).map(|point| point.n.to_string()).collect::<Vec<_>>().join(",");
                        let ends = series.skipped_at.map(|n| format!("skipped at N={n}")).unwrap_or_default();
                        let left_out = if series.without_value > 0 {
                            format!("{} ({} without a value)", series.left_out, series.without_value)
                        } else {
                            series.left_out.to_string()
                        };
                        let frontier = series.frontier.is_some().then(|| series.frontier_ns().iter().map(ToString::to_string).collect::<Vec<_>>().join(","));
                        let frontier_cell = frontier.clone();
                        view! {
                            <tr data-facet=title.clone() data-series=series.label.to_string() data-skipped-at=series.skipped_at.map(|n| n.to_string()).unwrap_or_default()
                                data-frontier=frontier data-partial=partial>
                                <td>{title.clone()}</td>
                                <td>{series.label.to_string()}</td>
                                <td class="points">{points.join(" · ")}</td>
                                <td>{series.breakdown_label()}</td>
                                <td class="ends">{ends}</td>
                                <td>{left_out}</td>
                                {frontier_cell.map(|ns| view! { <td class="frontier">{ns}</td> })}
                            </tr>
                        }
                    })
                }).collect_view())}
            </tbody>
        </table>
    }
}
