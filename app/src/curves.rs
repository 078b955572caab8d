//! Curves: any per-cell metric (efficiency, p95 multiplier, latencies, TTFT, throughput, tokens) against log₂ N
//! or against another per-cell metric (throughput against latency), overlaid by one dimension, faceted by
//! another, with bands, the threshold, breakdown markers, explicit ends at skipped cells and, against a metric,
//! each series' Pareto frontier. The canvas follows the window's width. Exports the plotted series as CSV and
//! the chart as PNG or SVG, each carrying the view (filters, axes, frontier, criterion, pooling, snapshot, link)
//! and the legend.

mod canvas;
mod controls;
mod export;
mod table;

use crate::controls::empty_notice;
use crate::perf;
use crate::state::{Ctx, ctx};
use canvas::Chart;
use cellscope_draw::chart::{CurveSpec, ExportFrame, Hit, draw_curves, draw_export, series_styles};
use cellscope_model::Dimension;
use cellscope_model::LoadKind;
use cellscope_model::api::Provenance;
use cellscope_model::explore::{
    Facet, Series, UnequalSets, curves_of, empty_notes, frontier_withheld, load_kind_on_x,
    marks_note, off_the_load_axis, one_load_note, panel_notes, slo_line, unequal_sentences,
    unequal_sets, without_value_note,
};
use cellscope_model::metric::Threshold;
use cellscope_model::pooling::Drawn;
use cellscope_model::reasons::skip_reason as default_skip_reason;
use cellscope_model::stat::Stat;
use cellscope_model::status::CellStatus;
use cellscope_model::view_state::{Aggregation, FrontierMode, Metric, ViewState, XAxis};
use leptos::prelude::*;
use table::SeriesTable;

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

/// Each series label's colour and marker.
type Styles = std::collections::BTreeMap<String, ((u8, u8, u8), cellscope_draw::palette::Marker)>;

/// What a drawing of the curves needs besides the facets, read once per drawing.
struct Look {
    metric: Metric,
    x: XAxis,
    load_kind: Option<LoadKind>,
    threshold: Option<Threshold>,
    slo_line: Option<Threshold>,
    styles: Styles,
    /// The loaded data, for the provenance (shared, not copied: it grows with the runs).
    data: Option<std::sync::Arc<crate::api::Dataset>>,
    /// What each panel says inside the chart.
    notes: Vec<Vec<String>>,
}

/// Draws `facets` on any backend: the page's canvas and the exports are the same drawing; an export adds the
/// view's description and the legend above it.
fn draw_on(
    root: &crate::chart::Area<'_>,
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
        load_kind: look.load_kind,
        threshold: look.threshold.clone(),
        slo_line: look.slo_line.clone(),
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

/// The figures every part of the view reads: the metric plotted, the chart's width, the facets drawn, what the
/// chart says of them, and each series' look. Signals only, so a copy goes into every handler.
#[derive(Clone, Copy)]
struct Curves {
    ctx: Ctx,
    chart_metric: Memo<Metric>,
    width: RwSignal<f64>,
    facets: Memo<Vec<Facet>>,
    unequal: Memo<Vec<UnequalSets>>,
    empty: Memo<Vec<Vec<String>>>,
    color_dimension: Memo<Dimension>,
    colors: Memo<Styles>,
    x_axis: Memo<XAxis>,
}

impl Curves {
    fn new(ctx: Ctx) -> Curves {
        // Breakdown N and the ok rate are not per cell: the curves then show efficiency (with breakdown rings).
        let chart_metric = Memo::new(move |_| {
            ctx.state.with(|state| {
                if state.metric.per_cell() {
                    state.metric
                } else {
                    Metric::Stat(Stat::Efficiency)
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
            facets.with(|facets| series_styles(facets, &all_values))
        });
        Curves {
            ctx,
            chart_metric,
            width,
            facets,
            unequal,
            empty,
            color_dimension,
            colors,
            x_axis: ctx.part(|state| state.x),
        }
    }

    /// The kind of load on x, read untracked (`None` against a metric): it names the axes, even of a chart
    /// without a point, and picks the threshold.
    fn load_kind(self) -> Option<LoadKind> {
        let ctx = self.ctx;
        ctx.with_filtered_untracked(|_, filtered| {
            ctx.state
                .with_untracked(|state| load_kind_on_x(filtered, state))
        })
    }

    /// What a drawing needs besides the facets, read untracked: the drawing's effect says what draws again.
    fn look(self) -> Look {
        let Curves {
            ctx,
            chart_metric,
            facets,
            unequal,
            empty,
            colors,
            ..
        } = self;
        let metric = chart_metric.get_untracked();
        let load_kind = self.load_kind();
        Look {
            metric,
            x: ctx.state.with_untracked(|state| state.x),
            load_kind,
            threshold: ctx
                .state
                .with_untracked(|state| metric.threshold(&state.criterion, load_kind)),
            slo_line: ctx.state.with_untracked(|state| slo_line(state, metric)),
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
                                .map(|(empty, others)| {
                                    empty.iter().cloned().chain(others).collect()
                                })
                                .collect()
                        })
                    })
                })
            }),
        }
    }
}

#[allow(unreachable_pub)] // `#[component]` makes the props type `pub` whatever the function's visibility.
#[component]
pub(crate) fn CurvesView() -> impl IntoView {
    let curves = Curves::new(ctx());
    let chart = Chart::new(curves);
    chart.draw_on_change();
    chart.close_on_change();
    view! {
        {controls::controls(curves)}
        {empty_notice()}
        {legend(curves)}
        {notes(curves)}
        {chart.area()}
        <SeriesTable facets=curves.facets chart_metric=curves.chart_metric x=curves.x_axis/>
    }
}

/// The series' colours and markers, their deployment badges, and what the chart's marks mean.
fn legend(curves: Curves) -> impl IntoView {
    let colors = curves.colors;
    let facets = curves.facets;
    let legend_hint = curves.ctx.part(legend_hint);
    let badges = Memo::new(move |_| {
        facets.with(|facets| {
            cellscope_model::order::btree_map(
                facets
                    .iter()
                    .flat_map(|facet| &facet.series)
                    .filter_map(|series| Some((series.legend.clone(), series.badge.clone()?))),
            )
        })
    });
    view! {
        <div class="series-legend" id="curves-legend">
            {move || colors.get().into_iter().map(|(label, (color, marker))| {
                let badge = badges.with(|badges| badges.get(&label).cloned());
                view! {
                    <span class="swatch" data-series=label.clone() style=format!("color:{}", cellscope_draw::palette::css(color))>{marker.glyph()}</span><span>{label}</span>
                    {badge.map(|badge| view! { <span class="badge pools">{badge}</span> })}
                }
            }).collect_view()}
            <span class="hint">{move || legend_hint.get()}</span>
        </div>
    }
}

/// What the chart's points pool, what they leave out and what the chart warns of, in words above it.
fn notes(curves: Curves) -> impl IntoView {
    let Curves {
        chart_metric,
        facets,
        unequal,
        x_axis,
        ..
    } = curves;
    let aggregation = curves.ctx.part(|state| state.aggregation);
    view! {
        <p class="pooling-note" id="curves-pooling">{move || facets.with(|facets| pooling_note(facets, aggregation.get()))}</p>
        {move || {
            let ctx = curves.ctx;
            ctx.with_filtered(|_, filtered| ctx.state.with(|state| off_the_load_axis(filtered, state)))
                .map(|note| view! { <p class="pooling-note" id="curves-off-axis">{note}</p> })
        }}
        {move || {
            let x = x_axis.get();
            facets.with(|facets| without_value_note(facets, chart_metric.get(), x))
                .map(|note| view! { <p class="pooling-note" id="curves-missing">{note}</p> })
        }}
        {move || facets.with(|facets| marks_note(facets))
            .map(|note| view! { <p class="pooling-note" id="curves-marks">{note}</p> })}
        {move || {
            let ctx = curves.ctx;
            let metric = chart_metric.get();
            ctx.with_filtered(|_, filtered| one_load_note(filtered, metric))
                .map(|note| view! { <p class="pooling-note" id="curves-one-load">{note}</p> })
        }}
        {move || {
            let warnings = chart_warnings(facets, unequal, false);
            (!warnings.is_empty()).then(|| view! {
                <ul class="pooling-note chart-warnings" id="curves-warnings">
                    {warnings.into_iter().map(|warning| view! { <li>{warning}</li> }).collect_view()}
                </ul>
            })
        }}
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
            .chain(Drawn::Points.deployment_note(points(facets)))
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
        XAxis::Load => state.band.label().to_string(),
        XAxis::Metric(_) => state.band.label().replacen("band", "whiskers", 1),
    };
    let points = match state.x {
        XAxis::Metric(_) if state.frontier == FrontierMode::Series => {
            "bold line = Pareto frontier of each series; hollow point = dominated (another load of its series is better on both axes); ◐ = includes partial cells; thin line joins the points in load order"
        }
        XAxis::Metric(_) if state.frontier == FrontierMode::Panel => {
            "bold dark line = Pareto frontier across the panel's configurations; hollow point = off it (another configuration or load is better on both axes); ◐ = includes partial cells; thin line joins a series' points in load order"
        }
        XAxis::Metric(_) => {
            "hollow point with ◐ and its value = includes partial cells; points joined in load order"
        }
        XAxis::Load => "hollow ◐ = partial cells",
    };
    // All at once has its own slot only against the load.
    let unbounded = if state.x == XAxis::Load {
        "; ∞ = all at once, past //"
    } else {
        ""
    };
    format!(
        "{band}; {points}; crossed ✕ = failed cells; ring = breakdown N or saturation rate; ⊘ = skipped end{unbounded}"
    )
}

/// The chart in words, for screen readers: what is plotted against what, the series and panels, and the
/// frontier when it is drawn.
fn chart_summary(facets: &[Facet], metric: Metric, x: XAxis, kind: Option<LoadKind>) -> String {
    let series: usize = facets.iter().map(|facet| facet.series.len()).sum();
    let mut summary = format!(
        "{} against {}: {series} series in {} panel{}",
        metric.label_at(kind),
        x.label_at(kind),
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

/// What the chart's points pool, said once above it ([`Drawn::pooling_note`]).
fn pooling_note(facets: &[Facet], aggregation: Aggregation) -> String {
    Drawn::Points.pooling_note(points(facets), aggregation)
}

/// The poolings of every point drawn.
fn points(facets: &[Facet]) -> impl Iterator<Item = &cellscope_model::pooling::Pooling> {
    facets
        .iter()
        .flat_map(|facet| &facet.series)
        .flat_map(|series| &series.points)
        .map(|point| &point.pooling)
}
