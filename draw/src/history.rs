//! A History as one SVG: each run's value with its reps' low–high whisker, the means between change points as
//! steps, each change point a labelled vertical marker, and runs whose environment changed marked on the axis.

use crate::matrix::escape_html;
use cellscope_model::history::{HistorySeries, changepoint::Shift};
use cellscope_model::key::CellKey;
use std::fmt::Write as _;

/// Room around the plot: left for the value ticks, bottom for the run ticks and environment marks.
const LEFT: f64 = 78.0;
const RIGHT: f64 = 40.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 78.0;

/// Where the plot area is and how values map onto it.
struct Frame {
    width: f64,
    height: f64,
    runs: usize,
    low: f64,
    high: f64,
}

impl Frame {
    fn x(&self, index: usize) -> f64 {
        let span = (self.width - LEFT - RIGHT).max(1.0);
        if self.runs <= 1 {
            return LEFT + span / 2.0;
        }
        LEFT + span * index as f64 / (self.runs - 1) as f64
    }

    fn y(&self, value: f64) -> f64 {
        let span = (self.height - TOP - BOTTOM).max(1.0);
        let range = (self.high - self.low).max(f64::MIN_POSITIVE);
        TOP + span * (1.0 - (value - self.low) / range)
    }
}

/// The lowest and highest value drawn (values and whiskers), padded by a twentieth so no mark sits on an edge.
fn value_range(series: &HistorySeries) -> Option<(f64, f64)> {
    let drawn = series
        .points
        .iter()
        .flat_map(|point| [point.value, point.low, point.high])
        .flatten()
        .filter(|value| value.is_finite());
    let (low, high) = drawn.fold(None, |range: Option<(f64, f64)>, value| {
        Some(range.map_or((value, value), |(low, high)| {
            (low.min(value), high.max(value))
        }))
    })?;
    let pad = if high > low {
        (high - low) / 20.0
    } else {
        low.abs().max(1.0) / 20.0
    };
    Some((low - pad, high + pad))
}

/// The short label of a change point on the chart; the full sentence is its hover text.
pub fn change_label(direction: Option<Shift>, relative_change: Option<f64>) -> String {
    let word = match direction {
        Some(Shift::Regression) => "worse",
        Some(Shift::Improvement) => "better",
        None => "change",
    };
    match relative_change {
        Some(change) => format!("{word} {:+.1}%", change * 100.0),
        None => word.to_string(),
    }
}

/// The run's tick: its start date when known, else its id.
fn run_tick(time: Option<&str>, run: &str) -> String {
    time.map_or_else(|| run.to_string(), |time| time.chars().take(10).collect())
}

/// The History as an SVG of `width` × `height`, each point a link made by `link` (to its cell in the inspector),
/// with `title` as its accessible name; `None` when no run has a value.
pub fn history_svg(
    series: &HistorySeries,
    width: f64,
    height: f64,
    title: &str,
    link: impl Fn(&CellKey) -> String,
) -> Option<String> {
    let (low, high) = value_range(series)?;
    let frame = Frame {
        width,
        height,
        runs: series.points.len(),
        low,
        high,
    };
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-labelledby="history-chart-title" font-family="sans-serif" font-size="11"><title id="history-chart-title">{}</title><rect width="{width}" height="{height}" fill="white"/>"#,
        escape_html(title)
    );
    axes(&mut svg, series, &frame);
    steps(&mut svg, series, &frame);
    changes(&mut svg, series, &frame);
    points(&mut svg, series, &frame, &link);
    svg.push_str("</svg>");
    Some(svg)
}

/// The value axis with five ticks in the metric's unit, and the run axis with a tick per run (thinned to fit).
fn axes(svg: &mut String, series: &HistorySeries, frame: &Frame) {
    let bottom = frame.height - BOTTOM;
    let right = frame.width - RIGHT;
    let _ = write!(
        svg,
        r##"<g class="axes" stroke="#444"><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}"/><line x1="{LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}"/></g>"##
    );
    for step in 0..=4 {
        let value = frame.low + (frame.high - frame.low) * f64::from(step) / 4.0;
        let y = frame.y(value);
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT - 6.0,
            y + 4.0,
            escape_html(&series.metric.format(value))
        );
    }
    let _ = write!(
        svg,
        r#"<text x="14" y="{:.1}" transform="rotate(-90 14 {:.1})" text-anchor="middle">{}</text>"#,
        (TOP + bottom) / 2.0,
        (TOP + bottom) / 2.0,
        escape_html(series.metric.label())
    );
    let every = (series.points.len() / 8).max(1);
    for (index, point) in series.points.iter().enumerate() {
        let x = frame.x(index);
        if index % every == 0 || index + 1 == series.points.len() {
            let _ = write!(
                svg,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                bottom + 14.0,
                escape_html(&run_tick(point.time.as_deref(), &point.run))
            );
        }
        if !point.changed.is_empty() {
            let what: Vec<String> = point
                .changed
                .iter()
                .map(|change| change.describe())
                .collect();
            let what = escape_html(&what.join("; "));
            let _ = write!(
                svg,
                r##"<g class="environment-change" data-run="{}"><title>{what}</title><path d="M{x:.1} {:.1} l-5 9 h10 z" fill="#e69f00"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#8a5a00">{what}</text></g>"##,
                escape_html(&point.run),
                bottom + 20.0,
                bottom + 42.0,
            );
        }
    }
    let axis = if series.points.iter().all(|point| point.time.is_some()) {
        "run start (UTC), in time order"
    } else {
        "runs in order (some start times unknown)"
    };
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{axis}</text>"#,
        (LEFT + right) / 2.0,
        frame.height - 6.0
    );
}

/// The mean of each piece between change points, as a horizontal segment over that piece's runs.
fn steps(svg: &mut String, series: &HistorySeries, frame: &Frame) {
    let mut start = 0;
    let mut pieces: Vec<(usize, usize, f64)> = Vec::new();
    for change in &series.change_points {
        pieces.push((start, change.index.saturating_sub(1), change.mean_before));
        start = change.index;
    }
    if let Some(last) = series.change_points.last() {
        pieces.push((
            start,
            series.points.len().saturating_sub(1),
            last.mean_after,
        ));
    }
    for (from, to, mean) in pieces {
        let y = frame.y(mean);
        let _ = write!(
            svg,
            r##"<line class="step" x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#0072b2" stroke-width="2" opacity="0.6"/>"##,
            frame.x(from),
            frame.x(to)
        );
    }
}

/// Each change point as a dashed vertical line at its first run, labelled short, the sentence as its hover.
fn changes(svg: &mut String, series: &HistorySeries, frame: &Frame) {
    for change in &series.change_points {
        let x = frame.x(change.index);
        let colour = match change.direction {
            Some(Shift::Regression) => "#d55e00",
            _ => "#009e73",
        };
        let _ = write!(
            svg,
            r#"<g class="change-point" data-run="{}"><title>{}</title><line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="{colour}" stroke-dasharray="5 3" stroke-width="1.5"/><text x="{:.1}" y="{:.1}" fill="{colour}">{}</text></g>"#,
            escape_html(&change.run),
            escape_html(&change.sentence),
            frame.height - BOTTOM,
            x + 4.0,
            TOP - 8.0,
            escape_html(&change_label(change.direction, change.relative_change))
        );
    }
}

/// Each run's whisker (its reps' lowest to highest) and its point, a link to its cell.
fn points(
    svg: &mut String,
    series: &HistorySeries,
    frame: &Frame,
    link: &impl Fn(&CellKey) -> String,
) {
    for (index, point) in series.points.iter().enumerate() {
        let x = frame.x(index);
        if let (Some(low), Some(high)) = (point.low, point.high) {
            let _ = write!(
                svg,
                r##"<line class="reps" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#777"/>"##,
                frame.y(low),
                frame.y(high)
            );
        }
        let Some(value) = point.value else { continue };
        let hover = format!(
            "run {} · {} · {} ({} reps)",
            point.run,
            point.time.as_deref().unwrap_or("start unknown"),
            series.metric.format(value),
            point.reps
        );
        let _ = write!(
            svg,
            r##"<a class="history-point" href="{}" data-run="{}" aria-label="{}"><title>{}</title><circle cx="{x:.1}" cy="{:.1}" r="4" fill="#000"/></a>"##,
            escape_html(&link(&point.cell)),
            escape_html(&point.run),
            escape_html(&hover),
            escape_html(&hover),
            frame.y(value)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellscope_model::facts::EnvironmentField;
    use cellscope_model::history::{
        EnvironmentChange, HistoryChangePoint, HistoryKey, HistoryPoint,
    };
    use cellscope_model::metric::Metric;
    use cellscope_model::stat::Stat;

    fn cell(run: &str) -> CellKey {
        format!("{run}/nightly/scaling/vllm/llama3.1-8b/short_decode/n=1/rep=0")
            .parse()
            .unwrap()
    }

    fn point(run: &str, value: f64, changed: Vec<EnvironmentChange>) -> HistoryPoint {
        HistoryPoint {
            run: run.to_string(),
            time: None,
            time_source: None,
            value: Some(value),
            low: Some(value - 10.0),
            high: Some(value + 10.0),
            reps: 2,
            cell: cell(run),
            excluded: false,
            changed,
        }
    }

    /// Three runs at 100, 100 and 125 ms, the third a change point worse by 25% and the second after a driver
    /// change: the figures are written by hand, not by the model's method.
    fn series() -> HistorySeries {
        let driver = EnvironmentChange {
            field: EnvironmentField::Driver,
            before: Some("570.133.20".into()),
            after: Some("575.57.08".into()),
        };
        HistorySeries {
            key: HistoryKey::of(&cell("r1")),
            label: "vllm · llama3.1-8b · short_decode · N=1".into(),
            metric: Metric::Stat(Stat::P50TtftMs),
            points: vec![
                point("r1", 100.0, Vec::new()),
                point("r2", 100.0, vec![driver]),
                point("r3", 125.0, Vec::new()),
            ],
            change_points: vec![HistoryChangePoint {
                run: "r3".into(),
                time: None,
                index: 2,
                p_value: 1e-9,
                mean_before: 100.0,
                mean_after: 125.0,
                relative_change: Some(0.25),
                direction: Some(Shift::Regression),
                sentence: "worse by 25.0% since run r3".into(),
            }],
            regressed: true,
            regression: None,
        }
    }

    #[test]
    fn a_history_draws_its_change_point_environment_change_and_a_link_per_run() {
        let svg = history_svg(&series(), 600.0, 300.0, "p50 TTFT <of> a History", |key| {
            format!("?view=inspector&run={}", key.run_id)
        })
        .unwrap();
        assert_eq!(svg.matches("class=\"change-point\"").count(), 1);
        assert!(svg.contains("data-run=\"r3\"><title>worse by 25.0% since run r3</title>"));
        assert!(svg.contains(">worse +25.0%</text>"));
        assert_eq!(svg.matches("class=\"history-point\"").count(), 3);
        assert!(svg.contains("href=\"?view=inspector&amp;run=r2\""));
        assert_eq!(svg.matches("class=\"environment-change\"").count(), 1);
        assert!(svg.contains("<title>driver 570.133.20 → 575.57.08</title>"));
        // Two steps: 100 over r1–r2 and 125 at r3; the title is escaped.
        assert_eq!(svg.matches("class=\"step\"").count(), 2);
        assert!(svg.contains("p50 TTFT &lt;of&gt; a History"));
        assert!(svg.contains("runs in order (some start times unknown)"));
    }

    #[test]
    fn the_steps_sit_at_the_means_before_and_after() {
        // Values 90–135 padded by a twentieth of 45: the frame spans 87.75–137.25 over 300 − 34 − 78 = 188 px.
        let svg = history_svg(&series(), 600.0, 300.0, "t", |_| String::new()).unwrap();
        let y = |value: f64| 34.0 + 188.0 * (1.0 - (value - 87.75) / 49.5);
        for mean in [100.0, 125.0] {
            let at = format!("y1=\"{:.1}\"", y(mean));
            assert!(svg.contains(&at), "{at} in {svg}");
        }
    }
}
