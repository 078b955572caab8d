//! The curves' canvas: drawing it when what it shows changes, what it says of itself for screen readers and
//! automation, and what the pointer and the keyboard do on its points (tooltip, the cells a point pools).

use super::{Curves, DEFAULT_WIDTH, chart_summary, draw_on, frontier_counts};
use crate::{browser, perf};
use cellscope_draw::chart::{Hit, PointWords, curve_point_text, curves_height};
use cellscope_model::CellKey;
use cellscope_model::explore::{Facet, point_keys};
use cellscope_model::metric::Threshold;
use cellscope_model::view_state::{View, ViewState};
use leptos::html::{Canvas, Div};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// The canvas and what is shown on it besides the drawing: the points drawn, the tooltip, and the cells of a
/// clicked point that pools several.
#[derive(Clone, Copy)]
pub(super) struct Chart {
    curves: Curves,
    canvas_ref: NodeRef<Canvas>,
    hits: RwSignal<Vec<Hit>>,
    tooltip: RwSignal<Option<(f64, f64, String)>>,
    // A clicked point that pools several cells: where it is and its cells, to pick one.
    chosen: RwSignal<Option<(f64, f64, Vec<CellKey>)>>,
    tooltip_ref: NodeRef<Div>,
    // The keyboard's way to the points: one button per point over the canvas (see `point_buttons`); the point
    // last opened from it, to give it the focus back when its list of cells closes.
    opened_from: StoredValue<Option<usize>>,
}

impl Chart {
    pub(super) fn new(curves: Curves) -> Chart {
        Chart {
            curves,
            canvas_ref: NodeRef::new(),
            hits: RwSignal::new(Vec::new()),
            tooltip: RwSignal::new(None),
            chosen: RwSignal::new(None),
            tooltip_ref: NodeRef::new(),
            opened_from: StoredValue::new(None),
        }
    }

    /// Draws `facets` on the canvas at its container's width; its points, or `None` when there is no canvas
    /// yet or the drawing failed (said as the page's error).
    fn draw(self, facets: &[Facet]) -> Option<Vec<Hit>> {
        let curves = self.curves;
        let canvas = self.canvas_ref.get()?;
        let drawn_width = crate::chart::width_to_draw(curves.width, "curves-area", DEFAULT_WIDTH);
        let height = curves_height(facets.len(), drawn_width);
        let element: web_sys::HtmlCanvasElement = canvas.unchecked_into();
        let drawn = crate::chart::draw_on_canvas(element, drawn_width, height, |root, scale| {
            draw_on(root, facets, &curves.look(), scale, None)
        });
        match drawn {
            Ok(hits) => Some(hits),
            Err(error) => {
                curves
                    .ctx
                    .error
                    .set(Some(format!("drawing the curves: {error}")));
                None
            }
        }
    }

    /// Draws the chart again whenever what it shows changes.
    pub(super) fn draw_on_change(self) {
        let Chart {
            curves,
            canvas_ref,
            hits,
            ..
        } = self;
        let Curves {
            ctx,
            width,
            facets,
            unequal,
            empty,
            ..
        } = curves;
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
                let drawn = self.draw(facets);
                perf::measure("draw", "draw-start");
                drawn
            });
            canvas_ref.track();
            if let Some(drawn) = drawn {
                if let Some(canvas) = canvas_ref.get_untracked() {
                    self.describe(&canvas, &drawn);
                }
                hits.set(drawn);
                perf::mark_first_chart();
            }
        });
    }

    /// Writes on the canvas what is drawn, for screen readers, keyboard-less automation and the browser tests.
    fn describe(self, canvas: &web_sys::HtmlCanvasElement, drawn: &[Hit]) {
        let Curves {
            ctx,
            chart_metric,
            facets,
            ..
        } = self.curves;
        // Where the points are: `x,y,cells;…`.
        let points: Vec<String> = drawn
            .iter()
            .map(|hit| format!("{:.1},{:.1},{}", hit.x, hit.y, hit.cells))
            .collect();
        let _ = canvas.set_attribute("data-points", &points.join(";"));
        // The axes, and the frontier's points.
        let x = ctx.state.with_untracked(|state| state.x);
        let kind = self.curves.load_kind();
        let metric = chart_metric.get_untracked();
        let summary = facets.with_untracked(|facets| chart_summary(facets, metric, x, kind));
        let (on, dominated) = facets.with_untracked(|facets| frontier_counts(facets));
        let _ = canvas.set_attribute("aria-label", &summary);
        let _ = canvas.set_attribute("data-x-axis", x.name());
        let _ = canvas.set_attribute("data-x-label", x.label_at(kind));
        let _ = canvas.set_attribute("data-y-label", metric.label_at(kind));
        let look = self.curves.look();
        let line = |line: Option<Threshold>| line.map_or(String::new(), |line| line.label);
        let _ = canvas.set_attribute("data-threshold", &line(look.threshold));
        let _ = canvas.set_attribute("data-slo-line", &line(look.slo_line));
        let _ = canvas.set_attribute("data-frontier-points", &on.to_string());
        let _ = canvas.set_attribute("data-dominated-points", &dominated.to_string());
        // The notes drawn inside the panels, one a line.
        let notes = look.notes.concat().join("\n");
        let _ = canvas.set_attribute("data-notes", &notes);
        let _ = canvas.set_attribute("data-drawn", "true");
    }

    /// Closes the point's cell list and the tooltip when the view state changes (they describe the old view),
    /// and keeps the tooltip inside the chart, flipped to the left of or above its point near the right or
    /// bottom edge: placed once its text is laid out (the next frame), from its size.
    pub(super) fn close_on_change(self) {
        let Chart {
            curves,
            canvas_ref,
            tooltip,
            chosen,
            tooltip_ref,
            ..
        } = self;
        let ctx = curves.ctx;
        Effect::new(move |previous: Option<()>| {
            ctx.state.track();
            if previous.is_some() {
                chosen.set(None);
                tooltip.set(None);
            }
        });
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
    }

    fn nearest_hit(self, event: &web_sys::MouseEvent) -> Option<Hit> {
        let canvas = self.canvas_ref.get_untracked()?;
        self.hits
            .with_untracked(|hits| crate::chart::nearest_hit(&canvas, hits, event))
    }

    fn inspect(self, key: CellKey) {
        let ctx = self.curves.ctx;
        ctx.go(ctx.state.with_untracked(|state| ViewState {
            cell: Some(key),
            view: View::Inspector,
            ..state.clone()
        }));
    }

    /// Opens what a point stands for, as a click or Enter on it does: its one cell in the inspector, or the list
    /// of its cells to pick one from.
    fn open_hit(self, hit: Hit) {
        let Curves { ctx, facets, .. } = self.curves;
        // A curve point's cells come from the model, by the same rule that counted them.
        let keys = match hit.point {
            Some([facet, series, point]) => facets
                .with_untracked(|facets| {
                    let facet = facets.get(facet)?;
                    let series = facet.series.get(series)?;
                    let point = series.points.get(point)?;
                    Some((facet.title.clone(), series.label.clone(), point.load))
                })
                .map(|(title, label, load)| {
                    let comparisons = ctx.comparisons.get_untracked();
                    ctx.with_filtered_untracked(|_, filtered| {
                        ctx.state.with_untracked(|state| {
                            point_keys(filtered, comparisons, state, title.as_ref(), &label, load)
                        })
                    })
                })
                .unwrap_or_default(),
            None => hit.keys.to_vec(),
        };
        match keys.as_slice() {
            [] => self.chosen.set(None),
            [only] => self.inspect(only.clone()),
            _ => self.chosen.set(Some((hit.x, hit.y, keys))),
        }
    }

    fn on_click(self, event: web_sys::MouseEvent) {
        match self.nearest_hit(&event) {
            Some(hit) => self.open_hit(hit),
            None => self.chosen.set(None),
        }
    }

    /// A point's tooltip: a curve point's text is written now, from the facets drawn (see `Hit::text`).
    fn hit_text(self, hit: &Hit) -> String {
        let Curves {
            ctx,
            chart_metric,
            facets,
            ..
        } = self.curves;
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
    }

    fn on_move(self, event: web_sys::MouseEvent) {
        self.tooltip.set(
            self.nearest_hit(&event)
                .map(|hit| (hit.x, hit.y, self.hit_text(&hit))),
        );
    }

    fn hit_at(self, index: usize) -> Option<Hit> {
        self.hits.with_untracked(|hits| hits.get(index).cloned())
    }

    fn focus_point(self, index: usize) {
        let Some(hit) = self.hit_at(index) else {
            return;
        };
        self.tooltip.set(Some((hit.x, hit.y, self.hit_text(&hit))));
    }

    fn press_point(self, index: usize) {
        let Some(hit) = self.hit_at(index) else {
            return;
        };
        self.opened_from.set_value(Some(index));
        self.open_hit(hit);
        // A list of cells opened: the focus goes to its first cell.
        request_animation_frame(|| browser::focus("#point-cells a"));
    }

    fn close_cells(self) {
        self.chosen.set(None);
        if let Some(index) = self.opened_from.get_value() {
            request_animation_frame(move || {
                browser::focus(&format!(
                    "#curves-points .point-focus[data-index='{index}']"
                ))
            });
        }
    }

    /// One button per point drawn, over the canvas, named by its tooltip.
    fn point_buttons(self) -> impl IntoView {
        move || {
            self.hits.with(|hits| {
                hits.iter()
                    .enumerate()
                    .map(|(index, hit)| {
                        // The tooltip in one line: what a screen reader says on reaching the point.
                        let label = self
                            .hit_text(hit)
                            .lines()
                            .map(str::trim)
                            .filter(|line| !line.is_empty())
                            .collect::<Vec<_>>()
                            .join("; ");
                        view! {
                            <button type="button" class="point-focus" data-index=index aria-label=label
                                style=format!("left:{}px;top:{}px", hit.x, hit.y)
                                on:focus=move |_| self.focus_point(index)
                                on:blur=move |_| self.tooltip.set(None)
                                on:click=move |_| self.press_point(index)></button>
                        }
                    })
                    .collect_view()
            })
        }
    }

    /// The list of a pooled point's cells, to open one in the inspector.
    fn cells_popover(self, (x, y, keys): (f64, f64, Vec<CellKey>)) -> impl IntoView {
        let ctx = self.curves.ctx;
        view! {
            <div class="points-popover" id="point-cells" style=format!("left:{}px;top:{}px", x + 12.0, y + 12.0)
                on:keydown=move |event: web_sys::KeyboardEvent| if event.key() == "Escape" { self.close_cells(); }>
                {format!("This point pools {} cells; open one:", keys.len())}
                {
                    // Cells differing by run and rep only are one History: the point links to it.
                    let history = keys.first().filter(|first| {
                        let one = cellscope_model::history::HistoryKey::of(first);
                        keys.iter().all(|key| one.holds(key))
                    }).and_then(|_| keys.iter().max()).map(|latest| ctx.state.with_untracked(|state| state.history_of(latest)));
                    history.map(|target| view! {
                        <p><a id="point-history" href=target.href()
                            on:click=move |event| { event.prevent_default(); ctx.go(target.clone()); }>"History of this configuration"</a></p>
                    })
                }
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
                <button on:click=move |_| self.close_cells()>"Close"</button>
            </div>
        }
    }

    /// The canvas with the points' buttons over it, the cells of a clicked point and the tooltip.
    pub(super) fn area(self) -> impl IntoView {
        let Chart {
            canvas_ref,
            tooltip,
            chosen,
            tooltip_ref,
            ..
        } = self;
        view! {
            <div id="curves-area">
            <div class="chart-wrap">
                <canvas id="curves-canvas" node_ref=canvas_ref on:mousemove=move |event| self.on_move(event)
                    on:click=move |event| self.on_click(event)
                    on:mouseleave=move |_| tooltip.set(None)></canvas>
                <div class="point-keys" id="curves-points" role="group"
                    aria-label="the chart's points: Tab moves to the next, Enter opens its cells">
                    {self.point_buttons()}
                </div>
                {move || chosen.get().map(|chosen| self.cells_popover(chosen))}
                {move || tooltip.get().map(|(x, y, text)| view! {
                    <div class="tooltip" id="curves-tooltip" role="tooltip" node_ref=tooltip_ref style=format!("left:{}px;top:{}px", x + 12.0, y + 12.0)>{text}</div>
                })}
            </div>
            </div>
        }
    }
}
