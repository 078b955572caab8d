//! Histories as `cellscope history` prints them: a line per History for a terminal, or a Markdown table a CI job
//! can post as its summary or a pull-request comment, each row linking to its History when a base URL is given.

use super::{HistoryBody, HistoryQuery, HistorySeries, Regression, recent_worse};
use std::fmt::Write as _;

/// What the parameters were, in one line: `p50 TTFT (ms); change points by E-divisive means, window 50, p ≤ 0.001;
/// regressed: a change toward worse in the last 5 runs, or the latest run outside 3sd of the 5 before`.
pub fn method_line(body: &HistoryBody) -> String {
    let choice = &body.choice;
    let since = choice
        .since
        .as_ref()
        .map(|since| format!("; runs since {since}"))
        .unwrap_or_default();
    format!(
        "{}; change points by E-divisive means, window {}, p ≤ {}; regressed: a change toward worse in the last {} \
         runs, or the latest run worse than {} of the {} before{since}",
        body.metric.label(),
        choice.window,
        choice.max_pvalue,
        choice.k,
        choice.band,
        choice.k
    )
}

/// Why a History is flagged, in words; `None` when it is not.
pub fn regression_text(series: &HistorySeries) -> Option<String> {
    let metric = series.metric;
    Some(match series.regression.as_ref()? {
        Regression::ChangePoint { run, .. } => {
            let change = series
                .change_points
                .iter()
                .rfind(|change| &change.run == run)?;
            change.sentence.clone()
        }
        Regression::OutsideBand {
            run,
            value,
            low,
            high,
            runs,
            ..
        } => format!(
            "run {run}: {} is outside {}–{} of the {runs} runs before",
            metric.format(*value),
            metric.format(*low),
            metric.format(*high)
        ),
    })
}

/// The latest run's value in the metric's unit, `—` without one.
fn latest(series: &HistorySeries) -> String {
    series
        .points
        .last()
        .and_then(|point| point.value)
        .map_or_else(|| "—".to_string(), |value| series.metric.format(value))
}

/// The change points in words, `;`-separated, or `none`.
fn changes(series: &HistorySeries) -> String {
    if series.change_points.is_empty() {
        return "none".to_string();
    }
    series
        .change_points
        .iter()
        .map(|change| change.sentence.clone())
        .collect::<Vec<_>>()
        .join("; ")
}

/// One line per History, regressed ones first and marked, then the others in key order.
pub fn render_text(body: &HistoryBody) -> String {
    let mut out = String::new();
    let regressed = body.series.iter().filter(|series| series.regressed).count();
    let _ = writeln!(out, "history of {}", method_line(body));
    let _ = writeln!(
        out,
        "{} of {} Histories regressed\n",
        regressed,
        body.series.len()
    );
    for series in ordered(body) {
        let mark = if series.regressed { "REGRESSED" } else { "" };
        let _ = writeln!(
            out,
            "{mark:<9}  {}: {} runs, latest {}; change points: {}",
            series.label,
            series.points.len(),
            latest(series),
            changes(series)
        );
        if let Some(why) = regression_text(series) {
            let _ = writeln!(out, "{:<9}  regressed: {why}", "");
        }
        for point in series
            .points
            .iter()
            .filter(|point| !point.changed.is_empty())
        {
            let changed: Vec<String> = point
                .changed
                .iter()
                .map(|change| change.describe())
                .collect();
            let _ = writeln!(
                out,
                "{:<9}  at run {}: {}",
                "",
                point.run,
                changed.join(", ")
            );
        }
    }
    out.push_str(&single_runs(body));
    out
}

/// The regressions list first (largest change first), then the other Histories of two runs or more in key order;
/// a History of one run has nothing to show over time and is only counted ([`single_runs`]).
fn ordered(body: &HistoryBody) -> Vec<&HistorySeries> {
    let mut listed = body.regressions();
    listed.extend(body.series.iter().filter(|series| {
        series.points.len() > 1
            && !series.regressed
            && recent_worse(series, body.choice.k).is_none()
    }));
    listed
}

/// `720 Histories have one run only and are not listed.`, or nothing when there are none.
fn single_runs(body: &HistoryBody) -> String {
    match body
        .series
        .iter()
        .filter(|series| series.points.len() == 1)
        .count()
    {
        0 => String::new(),
        1 => "1 History has one run only and is not listed.\n".to_string(),
        count => format!("{count} Histories have one run only and are not listed.\n"),
    }
}

/// Text safe inside a Markdown table cell: `|` escaped, line breaks as spaces.
pub fn markdown_cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A Markdown table of every History, regressed ones first; with `base_url`, each configuration links to its
/// History in the app.
pub fn render_markdown(body: &HistoryBody, query: &HistoryQuery, base_url: Option<&str>) -> String {
    let mut out = String::new();
    let regressed = body.series.iter().filter(|series| series.regressed).count();
    let _ = writeln!(
        out,
        "### History: {regressed} of {} regressed\n\n{}\n",
        body.series.len(),
        markdown_cell(&method_line(body))
    );
    let _ = writeln!(
        out,
        "| | configuration | runs | latest | change points | regression |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---|---|");
    for series in ordered(body) {
        let name = markdown_cell(&series.label);
        let configuration = match (base_url, series.points.last()) {
            (Some(base), Some(point)) => format!(
                "[{}]({}/{})",
                name.replace('[', "\\[").replace(']', "\\]"),
                base.trim_end_matches('/'),
                query.link(&series.key, &point.cell)
            ),
            _ => name,
        };
        let _ = writeln!(
            out,
            "| {} | {configuration} | {} | {} | {} | {} |",
            if series.regressed {
                "❌ regressed"
            } else if recent_worse(series, body.choice.k).is_some() {
                "⚠️ worse"
            } else {
                "✅"
            },
            series.points.len(),
            markdown_cell(&latest(series)),
            markdown_cell(&changes(series)),
            markdown_cell(&regression_text(series).unwrap_or_default())
        );
    }
    let single = single_runs(body);
    if !single.is_empty() {
        let _ = write!(out, "\n{single}");
    }
    out
}
