//! `cellscope compare`: the head-to-head of [`cellscope_model::compare`] as a readable table, under what else
//! differs between the runs behind its two sides ([`cellscope_model::compare::confounders`]).

use cellscope_model::api::CompareBody;
use cellscope_model::compare::confounders::Confounders;
use cellscope_model::compare::text::{coordinates, delta, delta_interval, p_value, ratio, signed};
use cellscope_model::compare::{CompareSpec, Comparison, Group, Side};
use std::fmt::Write as _;

/// The fields that differ between the sides, each with both sides' values and their runs, then the count of
/// the fields that do not:
///
/// ```text
/// What else differs between vllm and sglang:
///   runs                vllm: 20260612_204254_036590
///                       sglang: 20260612_212816_266127
///   driver              vllm: 580.159 (20260612_204254_036590)
///                       sglang: 575.57 (20260612_212816_266127)
///   …
///   backend extra args  vllm: --dtype float16 --gpu-memory-utilization 0.86 (20260612_204254_036590)
///                       sglang: --dtype float16 --mem-fraction-static 0.82 --cuda-graph-max-bs 32 (…)
///   4 fields equal on both sides
/// ```
pub fn render_confounders(spec: &CompareSpec, confounders: &Confounders) -> String {
    let mut out = String::new();
    if confounders.a_runs.is_empty() && confounders.b_runs.is_empty() {
        let _ = writeln!(
            out,
            "{}: no pair was formed, so no run stands behind either side",
            Confounders::heading(spec)
        );
        return out;
    }
    if confounders.differing.is_empty() && confounders.equal.is_empty() {
        let _ = writeln!(
            out,
            "{}: no run behind the pairs states its environment (manifest.json `environment`, config.yaml)",
            Confounders::heading(spec)
        );
        return out;
    }
    let _ = writeln!(out, "{}:", Confounders::heading(spec));
    let width = confounders
        .differing
        .iter()
        .map(|contrast| contrast.label.chars().count())
        .max()
        .unwrap_or(0)
        .max("runs".len());
    let mut block = |label: &str, a: String, b: String| {
        let _ = writeln!(out, "  {label:<width$}  {}: {a}", spec.a);
        let _ = writeln!(out, "  {:<width$}  {}: {b}", "", spec.b);
    };
    let runs = |side: Side| {
        confounders
            .runs(side)
            .iter()
            .map(|run| run.describe())
            .collect::<Vec<_>>()
            .join(", ")
    };
    block("runs", runs(Side::A), runs(Side::B));
    for contrast in &confounders.differing {
        block(
            &contrast.label,
            contrast.describe_side(Side::A),
            contrast.describe_side(Side::B),
        );
    }
    if confounders.differing.is_empty() {
        let _ = writeln!(out, "  nothing else differs");
    }
    let _ = writeln!(out, "  {}", confounders.equal_summary());
    out
}

/// The confounders, then the comparison table.
pub fn render_body(body: &CompareBody) -> String {
    format!(
        "{}\n{}",
        render_confounders(&body.comparison.spec, &body.confounders),
        render_text(&body.comparison)
    )
}

/// The comparison as a table: one row per group, then every pair that could not be formed and why.
pub fn render_text(comparison: &Comparison) -> String {
    let spec = &comparison.spec;
    let mut out = String::new();
    let _ = writeln!(out, "compare {}", spec.headline());
    let _ = writeln!(out, "{}", comparison.pair_pooling());
    let _ = writeln!(
        out,
        "  {:<18} {:>5} {:>9} {:>9} {:>16} {:>21} {:>9} {:>9} {:>6} {:>8}  verdict",
        "group",
        "pairs",
        "mean Δ",
        "median Δ",
        "a / b",
        "95% CI (bootstrap)",
        "p",
        "Holm p",
        "r",
        "W/L/T"
    );
    for group in &comparison.groups {
        let _ = writeln!(
            out,
            "  {:<18} {:>5} {:>9} {:>9} {:>16} {:>21} {:>9} {:>9} {:>6} {:>8}  {}",
            group.label(),
            group.n_pairs,
            delta(group.mean_delta, spec.metric),
            delta(group.median_delta, spec.metric),
            ratio(group.ratio),
            delta_interval(group.ci, spec.metric),
            p_value(group.wilcoxon.and_then(|test| test.p_value)),
            p_value(group.holm_p),
            signed(group.effect_size, 2),
            group.record(),
            group.describe_verdict(spec)
        );
    }
    let dropped: Vec<String> = comparison
        .groups
        .iter()
        .flat_map(|group: &Group| {
            group.dropped.iter().map(|dropped| {
                format!(
                    "{} — {}",
                    coordinates(&dropped.coordinates, None),
                    dropped.describe(spec)
                )
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
