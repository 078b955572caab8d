//! The boundary matrix: rows × columns from the dimensions, one grid per value of a third, each square
//! coloured by the chosen metric, with status glyphs and the reasons on hover.

use crate::controls::{
    aggregation_control, compare_these_button, criterion_controls, dimension_select, empty_notice,
    export_slice_csv, slice_count,
};
use crate::state::{ctx, href};
use crate::{palette, perf};
use cellscope_model::Dimension;
use cellscope_model::explore::{MatrixGrid, Value, matrix_of, uses_at_n};
use cellscope_model::view_state::{Metric, View};

use leptos::prelude::*;

/// The colour scale of the shown metric: value → position in [0, 1] (1 = best) and the legend's end labels.
/// Relative metrics have fixed ends; absolute ones (latencies, throughput, tokens) span the values in view, on a
/// log scale for times.
#[derive(Clone, Copy, Debug, PartialEq)]
struct ColourScale {
    metric: Metric,
    max_n: u32,
    /// Smallest and largest value in view (absolute metrics).
    low: f64,
    high: f64,
}

impl ColourScale {
    fn of(metric: Metric, max_n: u32, grids: &[MatrixGrid]) -> ColourScale {
        let values = grids
            .iter()
            .flat_map(|grid| grid.squares.iter().flatten().flatten())
            .filter_map(|square| square.value);
        let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), value| {
            (low.min(value), high.max(value))
        });
        ColourScale {
            metric,
            max_n,
            low,
            high,
        }
    }

    fn position(&self, value: f64) -> f64 {
        match self.metric {
            Metric::Efficiency | Metric::OkRate => value,
            // Lower multipliers are better; 1× is perfect, 100× and beyond is the bottom of the scale.
            Metric::P95Multiplier => 1.0 - (value.max(1.0).log10() / 2.0),
            Metric::Breakdown => {
                f64::from(value as u32).log2() / f64::from(self.max_n.max(2)).log2()
            }
            metric => {
                let read = |value: f64| {
                    if metric.log_scale() {
                        value.max(1e-9).log10()
                    } else {
                        value
                    }
                };
                let span = read(self.high) - read(self.low);
                let t = if span > 0.0 {
                    (read(value) - read(self.low)) / span
                } else {
                    1.0
                };
                if metric.lower_is_better() { 1.0 - t } else { t }
            }
        }
    }

    /// The legend's worst and best ends.
    fn legend(&self) -> (String, String) {
        match self.metric {
            Metric::Efficiency => ("0 (serial)".into(), "1 (linear scaling)".into()),
            Metric::OkRate => ("0".into(), "1 (every expected row ok)".into()),
            Metric::P95Multiplier => ("≥100×".into(), "1×".into()),
            Metric::Breakdown => (
                "breaks at N=1".into(),
                format!("N={} · never = brightest", self.max_n),
            ),
            _ if !self.low.is_finite() => (String::new(), String::new()),
            metric => {
                let (low, high) = (metric.format(self.low), metric.format(self.high));
                if metric.lower_is_better() {
                    (
                        format!("{high} (slowest in view)"),
                        format!("{low} (fastest)"),
                    )
                } else {
                    (
                        format!("{low} (lowest in view)"),
                        format!("{high} (highest)"),
                    )
                }
            }
        }
    }
}

/// The dimensions a matrix axis can take.
const AXES: [Dimension; 8] = [
    Dimension::Model,
    Dimension::Workload,
    Dimension::Backend,
    Dimension::Phase,
    Dimension::Run,
    Dimension::N,
    Dimension::Rep,
    Dimension::Suite,
];

#[component]
pub fn MatrixView() -> impl IntoView {
    let ctx = ctx();
    let grids = Memo::new(move |_| {
        perf::timed("grids", || {
            let comparisons = ctx.comparisons.get();
            ctx.with_filtered(|cells, filtered| {
                ctx.state
                    .with(|state| matrix_of(cells, filtered, comparisons, state))
            })
        })
    });
    let max_n = Memo::new(move |_| {
        ctx.working
            .with(|cells| cells.iter().map(|cell| cell.key.n).max().unwrap_or(1))
    });
    let ns = Memo::new(move |_| {
        ctx.working.with(|cells| {
            let mut ns: Vec<u32> = cells.iter().map(|cell| cell.key.n).collect();
            ns.sort_unstable();
            ns.dedup();
            ns
        })
    });
    // The browser tests' mark of the first paint (repaints are measured by `Ctx::update`).
    Effect::new(move |_| {
        grids.track();
        request_animation_frame(move || perf::mark("first-chart"));
    });
    let metric = move || ctx.state.with(|state| state.metric);
    let colour_scale =
        Memo::new(move |_| grids.with(|grids| ColourScale::of(metric(), max_n.get(), grids)));
    view! {
        <section class="controls">
            <label>"colour by "
                <select id="metric" on:change=move |event| { if let Some(metric) = Metric::parse(&event_target_value(&event)) { ctx.update(|state| state.metric = metric); } }>
                    {Metric::ALL.into_iter().map(|metric| view! {
                        <option value=metric.name() selected=move || ctx.state.with(|state| state.metric == metric)>{metric.label()}</option>
                    }).collect_view()}
                </select>
            </label>
            // Only what applies to the metric and layout is shown: one N for metrics read at one N (not when N is
            // an axis), the criterion for breakdown N, the aggregation for anything but the ok rate.
            <Show when=move || ctx.state.with(uses_at_n)>
                <label>"at N "
                    <select id="at-n" on:change=move |event| { if let Ok(n) = event_target_value(&event).parse() { ctx.update(|state| state.at_n = n); } }>
                        {move || ns.get().into_iter().map(|n| view! {
                            <option value=n.to_string() selected=move || ctx.state.with(|state| state.at_n == n)>{n}</option>
                        }).collect_view()}
                    </select>
                </label>
            </Show>
            <Show when=move || metric() == Metric::Breakdown>{criterion_controls()}</Show>
            <Show when=move || metric() != Metric::OkRate>{aggregation_control()}</Show>
            {dimension_select("rows", "rows", &AXES, |state| state.rows, |state, dimension| state.rows = dimension)}
            {dimension_select("columns", "cols", &AXES, |state| state.cols, |state, dimension| state.cols = dimension)}
            {dimension_select("grid per", "grid", &AXES, |state| state.grid, |state, dimension| state.grid = dimension)}
            {slice_count()}
            {compare_these_button()}
            <span class="exports"><button id="export-csv" on:click=move |_| export_slice_csv()>"CSV"</button></span>
        </section>
        {empty_notice()}
        <div class="legend" id="matrix-legend">
            {move || {
                let (low, high) = colour_scale.get().legend();
                view! {
                    <span>{low}</span>
                    <span class="ramp"></span>
                    <span>{high}</span>
                    <span class="glyph-key">"⊘ skipped · ✕ failed · ◐ partial · ∅ not run · ↻ refilled · ⊖ excluded · ⤳ fallback · † reported by the tool · ‡ derived (hover a square for details)"</span>
                }
            }}
        </div>
        <p class="pooling-note" id="matrix-pooling">{move || {
            let aggregation = ctx.state.with(|state| state.aggregation);
            grids.with(|grids| {
                let widest = grids.iter().flat_map(|grid| grid.squares.iter().flatten().flatten()).max_by_key(|square| square.pooling.cells);
                match widest {
                    Some(square) if square.pooling.cells > 1 => format!(
                        "Each square pools the cells that share its row, column and grid, up to {}; reps are aggregated within each series first. Hover a square for its own count.",
                        square.pooling.describe(aggregation)
                    ),
                    Some(_) => "Each square is one cell.".to_string(),
                    None => String::new(),
                }
            })
        }}</p>
        <div class="grids">
            // Each grid reads the view state when built (its links carry it): any change of it builds them again.
            {move || perf::timed("grids-view", || {
                ctx.state.track();
                grids.get().into_iter().map(|grid| view! { <Grid grid=grid scale=colour_scale.get()/> }).collect_view()
            })}
        </div>
    }
}

#[component]
fn Grid(grid: MatrixGrid, scale: ColourScale) -> impl IntoView {
    let ctx = ctx();
    let state = ctx.state.get_untracked();
    let metric = state.metric;
    let aggregation = state.aggregation;
    let (rows_dimension, cols_dimension, grid_dimension) = (state.rows, state.cols, state.grid);
    // Where a square leads: its one cell in the inspector, or the curves of what it pools.
    let target = move |row: &Value, col: &Value, only_cell: &Option<cellscope_model::CellKey>| {
        let mut next = state.clone();
        match only_cell {
            Some(key) => {
                next.cell = Some(key.clone());
                next.view = View::Inspector;
            }
            None => {
                next.select_only(rows_dimension, &row.to_string());
                next.select_only(cols_dimension, &col.to_string());
                next.color = grid_dimension;
                next.view = View::Curves;
            }
        }
        next
    };
    let squares = grid.squares.clone();
    let cols = grid.cols.clone();
    view! {
        <table class="grid" data-grid=grid.title.to_string()>
            <caption>{format!("{} = {}", grid_dimension.name(), grid.title)}</caption>
            <thead><tr><th></th>{cols.iter().map(|col| view! { <th scope="col">{col.to_string()}</th> }).collect_view()}</tr></thead>
            <tbody>
                {grid.rows.iter().enumerate().map(|(row_index, row)| view! {
                    <tr>
                        <th scope="row">{row.to_string()}</th>
                        {squares[row_index].iter().enumerate().map(|(col_index, square)| {
                            let (row, col) = (row.clone(), cols[col_index].clone());
                            match square {
                                None => view! { <td class="square absent" title="no cell"></td> }.into_any(),
                                Some(square) => {
                                    let (background, text) = match square.value {
                                        Some(value) => {
                                            let color = palette::viridis(scale.position(value));
                                            (palette::css(color), palette::text_on(color))
                                        }
                                        None if square.never_within.is_some() => (palette::css(palette::viridis(1.0)), "#111"),
                                        None => ("var(--absent-b)".to_string(), "var(--muted)"),
                                    };
                                    let glyphs = square.flags.glyphs();
                                    let mut hover = vec![format!(
                                        "{} = {}, {} = {}: {}\n{} · ok rows {}/{} expected",
                                        rows_dimension.name(), row, cols_dimension.name(), col, square.describe(metric),
                                        square.pooling.describe(aggregation), square.ok_rows, square.expected_rows
                                    )];
                                    hover.extend(glyphs.iter().map(|(glyph, text)| format!("{glyph} {text}")));
                                    hover.extend(square.origin_lines(metric));
                                    if square.flags.left_out > 0 {
                                        hover.push(format!("{} cells left out of this comparison (exclusion ledger / toggles)", square.flags.left_out));
                                    }
                                    let glyph_text: String = glyphs.iter().map(|(glyph, _)| *glyph).collect();
                                    let statuses: Vec<&str> = glyphs.iter().map(|(_, text)| text.split(' ').nth(1).unwrap_or("")).collect();
                                    let sign = square.sign();
                                    let (reported, derived) = (square.reported, square.derived);
                                    let next = target(&row, &col, &square.only_cell);
                                    let link = href(&next);
                                    view! {
                                        <td class="square" style=format!("background:{background};color:{text}") title=hover.join("\n")
                                            data-row=row.to_string() data-col=col.to_string() data-statuses=statuses.join(",")
                                            data-reported=reported.to_string() data-derived=derived.to_string()>
                                            <a class="square-link" href=link on:click=move |event| { event.prevent_default(); ctx.go(next.clone()); }>
                                                <span class="value">{square.label(metric)}</span>
                                                <span class="glyphs">{glyph_text}<span class="mark">{sign}</span></span>
                                            </a>
                                        </td>
                                    }.into_any()
                                }
                            }
                        }).collect_view()}
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}
