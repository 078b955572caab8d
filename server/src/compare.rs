//! `cellscope compare`: the head-to-head of [`cellscope_model::compare`] as a readable table.

use cellscope_model::compare::{Comparison, Group};
use std::fmt::Write as _;

fn number(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "—".into(), |value| format!("{value:+.decimals$}"))
}

fn p_value(value: Option<f64>) -> String {
    match value {
        None => "—".into(),
        Some(p) if p < 0.001 => format!("{p:.2e}"),
        Some(p) => format!("{p:.4}"),
    }
}

/// The comparison as a table: one row per group, then every pair that could not be formed and why.
pub fn render_text(comparison: &Comparison) -> String {
    let spec = &comparison.spec;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "compare {} = {} (a) vs {} (b) on {}{}; Δ = a − b; {} when Holm p < {} and the 95% CI excludes 0",
        spec.by.name(),
        spec.a,
        spec.b,
        spec.metric.label(),
        spec.per
            .map(|per| format!(", per {}", per.name()))
            .unwrap_or_default(),
        if spec.metric.lower_is_better() {
            "lower is better; an edge is claimed"
        } else {
            "higher is better; an edge is claimed"
        },
        spec.alpha
    );
    let _ = writeln!(
        out,
        "  {:<18} {:>5} {:>9} {:>9} {:>21} {:>9} {:>9} {:>6} {:>8}  verdict",
        "group", "pairs", "mean Δ", "median Δ", "95% CI (bootstrap)", "p", "Holm p", "r", "W/L/T"
    );
    for group in &comparison.groups {
        let label = group
            .group
            .as_ref()
            .map_or_else(|| "all".to_string(), ToString::to_string);
        let _ = writeln!(
            out,
            "  {:<18} {:>5} {:>9} {:>9} {:>21} {:>9} {:>9} {:>6} {:>8}  {}",
            label,
            group.n_pairs,
            number(group.mean_delta, 4),
            number(group.median_delta, 4),
            group.ci.map_or_else(
                || "—".into(),
                |(low, high)| format!("[{low:+.4}, {high:+.4}]")
            ),
            p_value(group.wilcoxon.and_then(|test| test.p_value)),
            p_value(group.holm_p),
            number(group.effect_size, 2),
            format!("{}/{}/{}", group.wins, group.losses, group.ties),
            group.verdict.describe(spec)
        );
    }
    let dropped: Vec<String> = comparison
        .groups
        .iter()
        .flat_map(|group: &Group| {
            group.dropped.iter().map(|dropped| {
                let coordinates: Vec<String> = dropped
                    .coordinates
                    .iter()
                    .map(|(dimension, value)| format!("{}={value}", dimension.name()))
                    .collect();
                format!("{} — {}", coordinates.join(" "), dropped.describe(spec))
            })
        })
        .collect();
    if dropped.is_empty() {
        let _ = writeln!(out, "\nno pair was dropped");
    } else {
        let _ = writeln!(out, "\npairs dropped: {}", dropped.len());
        for line in dropped {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}
