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
use cellscope_model::view_state::{Metric, View, ViewState};

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
    let metric = ctx.part(|state| state.metric);
    let at_n = ctx.part(|state| state.at_n);
    let metric = move || metric.get();
    let colour_scale =
        Memo::new(move |_| grids.with(|grids| ColourScale::of(metric(), max_n.get(), grids)));
    view! {
        <section class="controls">
            <label>"colour by "
                <select id="metric" on:change=move |event| { if let Some(metric) = Metric::parse(&event_target_value(&event)) { ctx.update(|state| state.metric = metric); } }>
                    {Metric::ALL.into_iter().map(|option_metric| view! {
                        <option value=option_metric.name() selected=move || metric() == option_metric>{option_metric.label()}</option>
                    }).collect_view()}
                </select>
            </label>
            // Only what applies to the metric and layout is shown: one N for metrics read at one N (not when N is
            // an axis), the criterion for breakdown N, the aggregation for anything but the ok rate.
            <Show when=move || ctx.state.with(uses_at_n)>
                <label>"at N "
                    <select id="at-n" on:change=move |event| { if let Ok(n) = event_target_value(&event).parse() { ctx.update(|state| state.at_n = n); } }>
                        {move || ns.get().into_iter().map(|n| view! {
                            <option value=n.to_string() selected=move || at_n.get() == n>{n}</option>
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
        // The grids are one piece of HTML, set at once: built node by node, their few thousand elements and
        // attributes were that many calls from WebAssembly into the page, most of a repaint. One listener on the
        // container follows a square's link (its `href` is the whole target state, so middle-click, copy link
        // and the keyboard work as with any link).
        <div class="grids" on:click=follow_square_link inner_html=move || perf::timed("grids-view", || {
            ctx.state.with(|state| grids.with(|grids| grids_html(grids, colour_scale.get(), state)))
        })></div>
    }
}

/// A click in the grids that lands on a square's link goes to the view it names, within the app.
fn follow_square_link(event: web_sys::MouseEvent) {
    use wasm_bindgen::JsCast;
    // A modified click (new tab or window) is the browser's to follow.
    if event.ctrl_key() || event.meta_key() || event.shift_key() || event.button() != 0 {
        return;
    }
    let link = event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
        .and_then(|element| element.closest("a.square-link").ok().flatten());
    let Some(query) = link.and_then(|link| link.get_attribute("href")) else {
        return;
    };
    event.prevent_default();
    let (target, _) = ViewState::parse_query(&query);
    ctx().go(target);
}

/// `text` with the characters that could start markup or end an attribute written as character references, so
/// that names from the data (a model called `<b>`) show as text. (Ten lines rather than a crate: the bundle has
/// a size budget.)
fn escape_html(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// The grids as HTML: per grid a table with a caption, the column values, and per row its squares, each a link
/// to its one cell in the inspector or to the curves of what it pools, coloured by the metric, with its glyphs
/// and the reasons in its title. Every text from the data is escaped.
fn grids_html(grids: &[MatrixGrid], scale: ColourScale, state: &ViewState) -> String {
    use std::fmt::Write as _;
    let metric = state.metric;
    let aggregation = state.aggregation;
    let (rows_dimension, cols_dimension, grid_dimension) = (state.rows, state.cols, state.grid);
    // Where a square leads: its one cell in the inspector, or the curves of what it pools.
    let target = |row: &Value, col: &Value, only_cell: &Option<cellscope_model::CellKey>| {
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
    let mut html = String::new();
    for grid in grids {
        let title = escape_html(&grid.title.to_string());
        let _ = write!(
            html,
            "<table class=\"grid\" data-grid=\"{title}\"><caption>{} = {title}</caption><thead><tr><th></th>",
            grid_dimension.name()
        );
        for col in &grid.cols {
            let _ = write!(
                html,
                "<th scope=\"col\">{}</th>",
                escape_html(&col.to_string())
            );
        }
        html.push_str("</tr></thead><tbody>");
        for (row, squares) in grid.rows.iter().zip(&grid.squares) {
            let row_text = row.to_string();
            let _ = write!(
                html,
                "<tr><th scope=\"row\">{}</th>",
                escape_html(&row_text)
            );
            for (col, square) in grid.cols.iter().zip(squares) {
                let Some(square) = square else {
                    html.push_str("<td class=\"square absent\" title=\"no cell\"></td>");
                    continue;
                };
                let col_text = col.to_string();
                let (background, text) = match square.value {
                    Some(value) => {
                        let color = palette::viridis(scale.position(value));
                        (palette::css(color), palette::text_on(color))
                    }
                    None if square.never_within.is_some() => {
                        (palette::css(palette::viridis(1.0)), "#111")
                    }
                    None => ("var(--absent-b)".to_string(), "var(--muted)"),
                };
                let glyphs = square.flags.glyphs();
                let mut hover = vec![format!(
                    "{} = {row_text}, {} = {col_text}: {}\n{} · ok rows {}/{} expected",
                    rows_dimension.name(),
                    cols_dimension.name(),
                    square.describe(metric),
                    square.pooling.describe(aggregation),
                    square.ok_rows,
                    square.expected_rows
                )];
                hover.extend(glyphs.iter().map(|(glyph, text)| format!("{glyph} {text}")));
                hover.extend(square.origin_lines(metric));
                if square.flags.left_out > 0 {
                    hover.push(format!(
                        "{} cells left out of this comparison (exclusion ledger / toggles)",
                        square.flags.left_out
                    ));
                }
                let glyph_text: String = glyphs.iter().map(|(glyph, _)| *glyph).collect();
                let statuses: Vec<&str> = glyphs
                    .iter()
                    .map(|(_, text)| text.split(' ').nth(1).unwrap_or(""))
                    .collect();
                let link = href(&target(row, col, &square.only_cell));
                let _ = write!(
                    html,
                    "<td class=\"square\" style=\"background:{background};color:{text}\" title=\"{}\" \
                     data-row=\"{}\" data-col=\"{}\" data-statuses=\"{}\" data-reported=\"{}\" data-derived=\"{}\">\
                     <a class=\"square-link\" href=\"{}\"><span class=\"value\">{}</span>\
                     <span class=\"glyphs\">{}<span class=\"mark\">{}</span></span></a></td>",
                    escape_html(&hover.join("\n")),
                    escape_html(&row_text),
                    escape_html(&col_text),
                    escape_html(&statuses.join(",")),
                    square.reported,
                    square.derived,
                    escape_html(&link),
                    escape_html(&square.label(metric)),
                    escape_html(&glyph_text),
                    escape_html(&square.sign()),
                );
            }
            html.push_str("</tr>");
        }
        html.push_str("</tbody></table>");
    }
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_text_is_escaped_in_text_and_attributes() {
        assert_eq!(
            escape_html(r#"<b>"qwen" & 'llama'</b>"#),
            "&lt;b&gt;&quot;qwen&quot; &amp; &#39;llama&#39;&lt;/b&gt;"
        );
        assert_eq!(escape_html("plain: N=8 · ok"), "plain: N=8 · ok");
    }
}
