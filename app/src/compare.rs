//! Compare: a head-to-head of two values of one dimension (vLLM against SGLang by default), per workload, with
//! the paired statistics of `cellscope_model::compare` computed here in the browser from the working cells —
//! the same function the CLI and `/api/compare` call. Shows what else differs between the sides, a forest plot,
//! the table with every dropped pair and its reason, and the pairs themselves against the y = x line.

mod controls;

use crate::chart::draw_on_canvas;
use crate::perf;
use crate::state::{Ctx, ctx};
use cellscope_draw::chart::Hit;
use cellscope_draw::compare as plot;
use cellscope_model::CellKey;
use cellscope_model::Dimension;
use cellscope_model::compare::confounders::{Confounders, confounders};
use cellscope_model::compare::text::{coordinates, delta, delta_interval, p_value, ratio, signed};
use cellscope_model::compare::{Comparison, Side, compare_view};
use cellscope_model::view_state::{View, ViewState};
use leptos::html::Canvas;
use leptos::prelude::*;
use std::sync::Arc;
use wasm_bindgen::JsCast;

/// The charts' width in CSS pixels before the page has been measured.
const DEFAULT_WIDTH: f64 = 1000.0;

/// The width the charts can take: their container's, within bounds.
fn available_width() -> f64 {
    crate::chart::available_width("compare-area", DEFAULT_WIDTH)
}

/// The comparison of the view, or why it cannot be made.
type Computed = Result<Arc<Comparison>, String>;

/// What the parts of the view share: the comparison, the charts' canvases and width, and what the pointer shows
/// on them. Signals only, so a copy goes into every handler.
#[derive(Clone, Copy)]
struct Compare {
    ctx: Ctx,
    comparison: Memo<Computed>,
    width: RwSignal<f64>,
    forest_ref: NodeRef<Canvas>,
    paired_ref: NodeRef<Canvas>,
    forest_hits: RwSignal<Vec<Hit>>,
    paired_hits: RwSignal<Vec<Hit>>,
    tooltip: RwSignal<Option<(&'static str, f64, f64, String)>>,
    // A clicked pair: where it is and its cells, to open one in the inspector.
    chosen: RwSignal<Option<(f64, f64, Vec<CellKey>)>>,
}

/// The comparison of the view: recomputed when the cells or a choice that matters to it changes (not the matrix
/// layout or the audit's sort).
fn comparison_of_view(ctx: Ctx) -> Memo<Computed> {
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
    Memo::new_with_compare(
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
    )
}

impl Compare {
    fn new(ctx: Ctx) -> Compare {
        let comparison = comparison_of_view(ctx);
        Compare {
            ctx,
            comparison,
            forest_ref: NodeRef::new(),
            paired_ref: NodeRef::new(),
            forest_hits: RwSignal::new(Vec::new()),
            paired_hits: RwSignal::new(Vec::new()),
            tooltip: RwSignal::new(None),
            chosen: RwSignal::new(None),
            width: crate::chart::follow_width("compare-area", DEFAULT_WIDTH),
        }
    }

    /// Draws both charts whenever the comparison or the width changes.
    fn draw_on_change(self) {
        Effect::new(move |_| {
            self.width.track();
            let Ok(comparison) = self.comparison.get() else {
                return;
            };
            let drawn_width =
                crate::chart::width_to_draw(self.width, "compare-area", DEFAULT_WIDTH);
            if let Some(canvas) = self.forest_ref.get() {
                self.draw_forest(canvas.unchecked_into(), &comparison, drawn_width);
            }
            if let Some(canvas) = self.paired_ref.get() {
                self.draw_paired(canvas.unchecked_into(), &comparison, drawn_width);
            }
            perf::mark_first_chart();
        });
    }

    fn draw_forest(
        self,
        canvas: web_sys::HtmlCanvasElement,
        comparison: &Comparison,
        drawn_width: f64,
    ) {
        let height = plot::forest_height(comparison.groups.len());
        let drawn = draw_on_canvas(canvas.clone(), drawn_width, height, |root, scale| {
            plot::draw_forest(root, comparison, scale)
        });
        // The rows as drawn, for automation and the browser tests: `group,x,y;…` (CSS pixels of each mean's
        // marker; the hits follow the groups with a mean, in order).
        let rows = |hits: &[Hit]| -> String {
            let rows: Vec<String> = comparison
                .groups
                .iter()
                .filter(|group| group.mean_delta.is_some())
                .zip(hits)
                .map(|(group, hit)| format!("{},{:.1},{:.1}", group.label(), hit.x, hit.y))
                .collect();
            rows.join(";")
        };
        self.show_drawn(
            &canvas,
            drawn,
            ("data-rows", rows),
            self.forest_hits,
            "the forest plot",
        );
    }

    fn draw_paired(
        self,
        canvas: web_sys::HtmlCanvasElement,
        comparison: &Comparison,
        drawn_width: f64,
    ) {
        let panels = plot::paired_groups(comparison).len();
        let height = plot::paired_height(panels, drawn_width);
        // How many panels are drawn (groups without a pair have none), for automation and the browser tests.
        let _ = canvas.set_attribute("data-panels", &panels.to_string());
        let drawn = draw_on_canvas(canvas.clone(), drawn_width, height, |root, scale| {
            plot::draw_paired(root, comparison, scale)
        });
        // Where the pairs are, for automation and the browser tests: `x,y,cells;…`.
        let points = |hits: &[Hit]| -> String {
            let points: Vec<String> = hits
                .iter()
                .map(|hit| format!("{:.1},{:.1},{}", hit.x, hit.y, hit.keys.len()))
                .collect();
            points.join(";")
        };
        self.show_drawn(
            &canvas,
            drawn,
            ("data-points", points),
            self.paired_hits,
            "the pairs",
        );
    }

    /// Keeps a drawn chart's hits and marks the canvas drawn with `attribute` describing them, or shows why
    /// drawing `what` failed.
    fn show_drawn(
        self,
        canvas: &web_sys::HtmlCanvasElement,
        drawn: Result<Vec<Hit>, String>,
        (attribute, describe): (&str, impl FnOnce(&[Hit]) -> String),
        hits: RwSignal<Vec<Hit>>,
        what: &str,
    ) {
        match drawn {
            Ok(drawn) => {
                let _ = canvas.set_attribute(attribute, &describe(&drawn));
                let _ = canvas.set_attribute("data-drawn", "true");
                hits.set(drawn);
            }
            Err(error) => self.ctx.error.set(Some(format!("drawing {what}: {error}"))),
        }
    }

    fn on_move(self, event: web_sys::MouseEvent, which: &'static str) {
        let (canvas, hits) = if which == "forest" {
            (self.forest_ref.get_untracked(), self.forest_hits)
        } else {
            (self.paired_ref.get_untracked(), self.paired_hits)
        };
        let Some(canvas) = canvas else { return };
        let canvas: web_sys::HtmlCanvasElement = canvas.unchecked_into();
        let hit = hits.with_untracked(|hits| crate::chart::nearest_hit(&canvas, hits, &event));
        self.tooltip
            .set(hit.map(|hit| (which, hit.x, hit.y, hit.text)));
    }

    fn on_paired_click(self, event: web_sys::MouseEvent) {
        let Some(canvas) = self.paired_ref.get_untracked() else {
            return;
        };
        let canvas: web_sys::HtmlCanvasElement = canvas.unchecked_into();
        let hit = self
            .paired_hits
            .with_untracked(|hits| crate::chart::nearest_hit(&canvas, hits, &event));
        self.chosen
            .set(hit.map(|hit| (hit.x, hit.y, hit.keys.to_vec())));
    }
}

#[allow(unreachable_pub)] // `#[component]` makes the props type `pub` whatever the function's visibility.
#[component]
pub(crate) fn CompareView() -> impl IntoView {
    let compare = Compare::new(ctx());
    compare.draw_on_change();
    let comparison = compare.comparison;
    view! {
        {controls::controls(compare)}
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
        {charts(compare)}
    }
}

/// The forest plot and the pairs against the y = x line, with their tooltips and the cells of a clicked pair.
fn charts(compare: Compare) -> impl IntoView {
    let Compare {
        ctx,
        comparison,
        forest_ref,
        paired_ref,
        tooltip,
        chosen,
        ..
    } = compare;
    let inspect_link = move |key: CellKey| {
        let next = ctx.state.with_untracked(|state| ViewState {
            cell: Some(key.clone()),
            view: View::Inspector,
            ..state.clone()
        });
        let link = next.href();
        view! { <a href=link on:click=move |event| { event.prevent_default(); ctx.go(next.clone()); }>{key.to_string()}</a> }
    };
    view! {
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
                    on:mousemove=move |event| compare.on_move(event, "forest")
                    on:mouseleave=move |_| tooltip.set(None)></canvas>
                {move || tooltip.get().filter(|(which, ..)| *which == "forest").map(|(_, x, y, text)| view! {
                    <div class="tooltip" id="forest-tooltip" style=format!("left:{}px;top:{}px", x + 12.0, y + 12.0)>{text}</div>
                })}
            </div>
            <h3>"Each pair: a against b (on the line: equal; below it: b lower)"</h3>
            {move || comparison.with(|comparison| comparison.as_ref().ok().and_then(|comparison| comparison.unpaired_note())).map(|note| view! {
                <p class="hint" id="paired-note">{note}</p>
            })}
            // No pair anywhere: the note says so, and no empty frame is drawn.
            <div class="chart-wrap" style:display=move || {
                let none = comparison.with(|comparison| comparison.as_ref().is_ok_and(|comparison| plot::paired_groups(comparison).is_empty()));
                if none { "none" } else { "" }
            }>
                <canvas id="paired-canvas" node_ref=paired_ref on:click=move |event| compare.on_paired_click(event)
                    on:mousemove=move |event| compare.on_move(event, "paired")
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
    let measure = comparison.measure();
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
                            <td class="num">{delta(group.mean_delta, measure)}</td>
                            <td class="num">{delta(group.median_delta, measure)}</td>
                            {absolute.then(|| view! { <td class="num ratio">{ratio(group.ratio)}</td> })}
                            <td class="num">{delta_interval(group.ci, measure)}</td>
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
