//! The boundary matrix as HTML: one table per grid, each square coloured by the metric on its colour scale, a
//! link to what it stands for, with its glyphs and the reasons in its title. One string, because the page sets
//! it at once: built node by node, the few thousand elements and attributes were that many calls from
//! WebAssembly into the page, most of a repaint.

use crate::palette;
use cellscope_model::explore::{CAPACITY_MARKS, LoadScale, MatrixCell, MatrixGrid, Value};
use cellscope_model::slo::Placed;
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
            Metric::Efficiency | Metric::OkRate => value,
            // Lower multipliers are better; 1× is perfect, 100× and beyond is the bottom of the scale.
            Metric::P95Multiplier => 1.0 - (value.max(1.0).log10() / 2.0),
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
                    let color = palette::viridis(at(load));
                    let light = palette::css(palette::lighter(color));
                    (
                        format!(
                            "repeating-linear-gradient(135deg,{} 0 6px,{light} 6px 10px)",
                            palette::css(color)
                        ),
                        palette::text_on(palette::lighter(color)),
                    )
                }
                Placed::NeverMet => solid(0.0),
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

    /// The legend: one ramp's worst and best ends per scale (one per kind of load for breakdown N and SLO
    /// capacity), and what the squares' marks mean when they need saying.
    pub fn legend(&self) -> (Vec<(String, String)>, Option<&'static str>) {
        let ends = match self.metric {
            Metric::Efficiency => vec![("0 (serial)".into(), "1 (linear scaling)".into())],
            Metric::OkRate => vec![("0".into(), "1 (every expected row ok)".into())],
            Metric::P95Multiplier => vec![("≥100×".into(), "1×".into())],
            Metric::Breakdown | Metric::SloCapacity => self.loads.legend(self.metric),
            _ if !self.low.is_finite() => Vec::new(),
            metric => {
                let (low, high) = (metric.format(self.low), metric.format(self.high));
                vec![if metric.lower_is_better() {
                    (
                        format!("{high} (slowest in view)"),
                        format!("{low} (fastest)"),
                    )
                } else {
                    (
                        format!("{low} (lowest in view)"),
                        format!("{high} (highest)"),
                    )
                }]
            }
        };
        let marks = (self.metric == Metric::SloCapacity).then_some(CAPACITY_MARKS);
        (ends, marks)
    }
}

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
            let _ = write!(
                html,
                "<th scope=\"col\">{}</th>",
                escape_html(&col.label(cols_dimension))
            );
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
                     data-row=\"{}\" data-col=\"{}\" data-statuses=\"{}\" data-reported=\"{}\" data-derived=\"{}\">\
                     <a class=\"square-link\" href=\"{}\" aria-label=\"{}\"><span class=\"value\">{}</span>\
                     <span class=\"glyphs\">{}<span class=\"mark\">{}</span></span></a></td>",
                    escape_html(&hover.join("\n")),
                    escape_html(&row_text),
                    escape_html(&col_text),
                    escape_html(&statuses.join(",")),
                    square.reported,
                    square.derived,
                    escape_html(&link),
                    escape_html(&name),
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
