//! The boundary matrix as HTML: one table per grid, each square coloured by the metric on its colour scale, a
//! link to what it stands for, with its glyphs and the reasons in its title. One string, because the page sets
//! it at once: built node by node, the few thousand elements and attributes were that many calls from
//! WebAssembly into the page, most of a repaint.

use crate::palette;
use cellscope_model::explore::{CAPACITY_MARKS, LoadScale, MatrixCell, MatrixGrid, Value};
use cellscope_model::slo::Placed;
use cellscope_model::stat::Stat;
use cellscope_model::view_state::{Metric, View, ViewState};

/// The colour scale of the shown metric: value → position in [0, 1] (1 = best) and the legend's end labels.
/// Relative metrics have fixed ends; absolute ones (latencies, throughput, tokens) span the values in view, on a
/// log scale for times. Loads (breakdown N, SLO capacity) are placed on the model's [`LoadScale`], one range per
/// kind of load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColourScale {
    metric: Metric,
    /// Smallest and largest value in view (absolute metrics).
    low: f64,
    high: f64,
    /// The loads' scale (breakdown N, SLO capacity).
    loads: LoadScale,
}

impl ColourScale {
    pub fn of(metric: Metric, max_n: u32, grids: &[MatrixGrid]) -> ColourScale {
        let values = grids
            .iter()
            .flat_map(|grid| grid.squares.iter().flatten().flatten())
            .filter_map(|square| square.value);
        let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), value| {
            (low.min(value), high.max(value))
        });
        let loads = match metric {
            Metric::Breakdown => LoadScale::of_breakdowns(grids, max_n),
            Metric::SloCapacity => LoadScale::of_capacities(grids),
            _ => LoadScale::default(),
        };
        ColourScale {
            metric,
            low,
            high,
            loads,
        }
    }

    pub fn position(&self, value: f64) -> f64 {
        match self.metric {
            Metric::Stat(Stat::Efficiency) | Metric::OkRate => value,
            // Lower multipliers are better; 1× is perfect, 100× and beyond is the bottom of the scale.
            Metric::Stat(Stat::P95Multiplier) => 1.0 - (value.max(1.0).log10() / 2.0),
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

    /// A square's background and text colour: its value's colour; a breakdown or capacity on its kind of load's
    /// own scale, a lower bound hatched; "never" (breakdown) brightest and "never met" (capacity) darkest, each
    /// apart from a square without data.
    fn style(&self, square: &MatrixCell) -> (String, &'static str) {
        let solid = |position: f64| {
            let color = palette::viridis(position);
            (palette::css(color), palette::text_on(color))
        };
        if let Some((kind, placed)) = square.capacity_placed {
            let at = |load: f64| self.loads.position(kind, load).unwrap_or(1.0);
            return match placed {
                Placed::Measured(load) => solid(at(load)),
                Placed::AtLeast(load) => {
                    // The colour of the bound under stripes of the text's colour: a bound, not a measurement.
                    let color = palette::viridis(at(load));
                    let text = palette::text_on(color);
                    let stripe = if text == "#fff" {
                        "rgba(255,255,255,.45)"
                    } else {
                        "rgba(0,0,0,.3)"
                    };
                    (
                        format!(
                            "repeating-linear-gradient(135deg,{stripe} 0 2px,transparent 2px 7px),{}",
                            palette::css(color)
                        ),
                        text,
                    )
                }
                // Off the ramp: neither the lowest capacity measured nor a square without data.
                Placed::NeverMet => (NEVER_MET.to_string(), "#fff"),
                Placed::Unjudged => ("var(--absent-b)".to_string(), "var(--muted)"),
            };
        }
        match (square.breakdown_at, square.value) {
            (Some(load), _) => solid(
                self.loads
                    .position(load.kind(), load.value().unwrap_or(f64::INFINITY))
                    .unwrap_or(1.0),
            ),
            (None, Some(value)) => solid(self.position(value)),
            (None, None) if square.never_within.is_some() => solid(1.0),
            (None, None) => ("var(--absent-b)".to_string(), "var(--muted)"),
        }
    }

    /// The legend's worst and best ends (for breakdown N and SLO capacity, each kind of load's side by side, and
    /// after the best end what a capacity square's marks mean).
    pub fn legend(&self) -> (String, String) {
        match self.metric {
            Metric::Stat(Stat::Efficiency) => ("0 (serial)".into(), "1 (linear scaling)".into()),
            Metric::OkRate => ("0".into(), "1 (every expected row ok)".into()),
            Metric::Stat(Stat::P95Multiplier) => ("≥100×".into(), "1×".into()),
            Metric::Breakdown => self.loads.legend(self.metric),
            Metric::SloCapacity => {
                let (low, high) = self.loads.legend(self.metric);
                (low, format!("{high} · {CAPACITY_MARKS}"))
            }
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

/// The colour of a square where the SLO is never met: off the viridis ramp, so it reads neither as the lowest
/// capacity in view nor as a square without data.
const NEVER_MET: &str = "rgb(64,64,64)";

/// `text` with the characters that could start markup or end an attribute written as character references, so
/// that names from the data (a model called `<b>`) show as text. (Ten lines rather than a crate: the bundle has
/// a size budget.)
pub fn escape_html(text: &str) -> String {
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
pub fn grids_html(grids: &[MatrixGrid], scale: ColourScale, state: &ViewState) -> String {
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
            "<table class=\"grid\" data-grid=\"{title}\"><caption>{} = {}</caption><thead><tr><th></th>",
            grid_dimension.name(),
            escape_html(&grid.title.label(grid_dimension))
        );
        for col in &grid.cols {
            // A sideways ∞ reads as 8: it stands upright in the vertical heading.
            let label = escape_html(&col.label(cols_dimension));
            let _ = match label.strip_prefix('∞') {
                Some(rest) => write!(
                    html,
                    "<th scope=\"col\"><span class=\"upright\">∞</span>{rest}</th>"
                ),
                None => write!(html, "<th scope=\"col\">{label}</th>"),
            };
        }
        html.push_str("</tr></thead><tbody>");
        for (row, squares) in grid.rows.iter().zip(&grid.squares) {
            let row_text = row.to_string();
            let _ = write!(
                html,
                "<tr><th scope=\"row\">{}</th>",
                escape_html(&row.label(rows_dimension))
            );
            for (col, square) in grid.cols.iter().zip(squares) {
                let Some(square) = square else {
                    html.push_str("<td class=\"square absent\" title=\"no cell\"></td>");
                    continue;
                };
                let col_text = col.to_string();
                let (background, text) = scale.style(square);
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
                let link = target(row, col, &square.only_cell).href();
                // A square pooling deployments says so on its face, not only in its hover text.
                let badge = square.pooling.configuration_badge();
                let badge_html = badge.as_deref().map_or_else(String::new, |badge| {
                    format!("<span class=\"pools\">{}</span>", escape_html(badge))
                });
                // A screen reader names the link by what the square is and where it leads, not by its number.
                let name = format!(
                    "{} {}, {} {row_text}, {} {col_text}: {} {}, {}; {}",
                    grid_dimension.name(),
                    grid.title,
                    rows_dimension.name(),
                    cols_dimension.name(),
                    metric.label(),
                    square.describe(metric),
                    square.pooling.describe(aggregation),
                    if square.only_cell.is_some() {
                        "opens the cell in the Inspector"
                    } else {
                        "opens the curves of its cells"
                    }
                );
                let _ = write!(
                    html,
                    "<td class=\"square\" style=\"background:{background};color:{text}\" title=\"{}\" \
                     data-row=\"{}\" data-col=\"{}\" data-statuses=\"{}\" data-reported=\"{}\" data-derived=\"{}\" \
                     data-pools=\"{}\"><a class=\"square-link\" href=\"{}\" aria-label=\"{}\"><span class=\"value\">{}</span>\
                     <span class=\"glyphs\">{}<span class=\"mark\">{}</span></span>{badge_html}</a>",
                    escape_html(&hover.join("\n")),
                    escape_html(&row_text),
                    escape_html(&col_text),
                    escape_html(&statuses.join(",")),
                    square.reported,
                    square.derived,
                    escape_html(badge.as_deref().unwrap_or("")),
                    escape_html(&link),
                    escape_html(&name),
                    escape_html(&square.label(metric)),
                    escape_html(&glyph_text),
                    escape_html(&square.sign()),
                );
                if let Some(cell) = &square.history_cell {
                    // Drawn by the stylesheet, so the square's text stays its value and glyphs.
                    let _ = write!(
                        html,
                        "<a class=\"square-history\" href=\"{}\" aria-label=\"History of this configuration across runs\" \
                         title=\"History of this configuration across runs\"></a>",
                        escape_html(&state.history_of(cell).href())
                    );
                }
                html.push_str("</td>");
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
    use cellscope_model::{Load, LoadKind};

    #[test]
    fn data_text_is_escaped_in_text_and_attributes() {
        assert_eq!(
            escape_html(r#"<b>"qwen" & 'llama'</b>"#),
            "&lt;b&gt;&quot;qwen&quot; &amp; &#39;llama&#39;&lt;/b&gt;"
        );
        assert_eq!(escape_html("plain: N=8 · ok"), "plain: N=8 · ok");
    }

    /// A square judged under an SLO at `kind` of load with the outcome `placed`, labelled `label`.
    fn capacity_square(kind: LoadKind, placed: Placed, label: &str) -> Option<MatrixCell> {
        Some(MatrixCell {
            capacity: Some(label.into()),
            capacity_placed: Some((kind, placed)),
            ..MatrixCell::default()
        })
    }

    /// The `style` attribute of each square in `html`, in order.
    fn styles(html: &str) -> Vec<String> {
        html.split("<td class=\"square\" style=\"")
            .skip(1)
            .filter_map(|rest| Some(rest.split('"').next()?.to_string()))
            .collect()
    }

    #[test]
    fn capacities_are_coloured_on_their_own_kinds_scale_and_bounds_are_hatched() {
        use LoadKind::{Concurrency, Rate};
        let rate = |rps: f64| Value::Load(Load::rate(rps).unwrap());
        let grid = MatrixGrid {
            title: Value::Text("w".into()),
            rows: vec![Value::Text("m".into())],
            cols: vec![
                Value::Number(1),
                Value::Number(2),
                rate(1.0),
                rate(f64::INFINITY),
                Value::Number(4),
                Value::Number(8),
                rate(2.0),
            ],
            squares: vec![vec![
                capacity_square(Concurrency, Placed::Measured(4.0), "≈ N=4 (2–8)"),
                capacity_square(Concurrency, Placed::AtLeast(16.0), "≥ N=16 (not reached)"),
                capacity_square(Rate, Placed::Measured(2.0), "≈ 2 req/s (1–4)"),
                capacity_square(
                    Rate,
                    Placed::AtLeast(f64::INFINITY),
                    "≥ all at once (not reached)",
                ),
                capacity_square(Concurrency, Placed::NeverMet, "never met (fails at N=1)"),
                Some(MatrixCell::default()),
                capacity_square(Rate, Placed::AtLeast(8.0), "≥ 8 req/s (not reached)"),
            ]],
        };
        let grids = [grid];
        let state = ViewState {
            metric: Metric::SloCapacity,
            cols: cellscope_model::Dimension::Load,
            ..ViewState::default()
        };
        let scale = ColourScale::of(Metric::SloCapacity, 32, &grids);
        let html = grids_html(&grids, scale, &state);
        let styles = styles(&html);
        let css = |position: f64| palette::css(palette::viridis(position));
        // N: 4 to 16; req/s: 2 to 8, with ∞ at the top. N = 4 is the bottom of the N scale and 2 req/s the
        // bottom of the rate scale, each on its own.
        assert!(
            styles[0].starts_with(&format!("background:{}", css(0.0))),
            "{}",
            styles[0]
        );
        assert!(
            styles[2].starts_with(&format!("background:{}", css(0.0))),
            "{}",
            styles[2]
        );
        // A lower bound is hatched in its colour, never solid.
        for bound in [&styles[1], &styles[3], &styles[6]] {
            assert!(
                bound.starts_with("background:repeating-linear-gradient(135deg,")
                    && bound.contains(&format!("),{};", css(1.0))),
                "{bound}"
            );
        }
        assert!(!styles[0].contains("gradient") && !styles[2].contains("gradient"));
        // Never met is a colour of its own, off the ramp (not the lowest capacity's colour); no data is the grey
        // of an empty square.
        assert!(
            styles[4].starts_with(&format!("background:{NEVER_MET};")),
            "{}",
            styles[4]
        );
        assert_ne!(NEVER_MET, css(0.0));
        assert!(styles[5].contains("var(--absent-b)"), "{}", styles[5]);
        // The load columns carry their units, ∞ last as the data orders it.
        for heading in [
            "N=1",
            "N=2",
            "1 req/s",
            "<span class=\"upright\">∞</span> req/s",
        ] {
            assert!(
                html.contains(&format!("<th scope=\"col\">{heading}</th>")),
                "{heading}"
            );
        }
        let (low, high) = scale.legend();
        assert_eq!(low, "N=4 · 2 req/s (lowest in view)");
        assert!(
            high.starts_with("N=16 · 8 req/s (highest) · ≥ and hatched = a lower bound"),
            "{high}"
        );
    }
}
