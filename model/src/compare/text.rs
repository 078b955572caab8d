//! A comparison's numbers and sentences as text: one wording for the CLI table, the app's table and the
//! exports, so that every reader sees the same digits.

use super::confounders::Confounders;
use super::{CompareSpec, Comparison, Group, Side};
use crate::key::{Dimension, Value};
use crate::metric::Metric;
use crate::pooling::Pooling;
use crate::slo::LoadAxis;
use std::fmt::Write as _;

/// A signed number (`+0.0757`, `−` for none), as deltas and effect sizes are printed.
pub fn signed(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "—".into(), |value| format!("{value:+.decimals$}"))
}

/// A p-value: four decimals, or scientific notation below 0.001 so that small values keep their digits.
pub fn p_value(value: Option<f64>) -> String {
    match value {
        None => "—".into(),
        Some(p) if p < 0.001 => format!("{p:.2e}"),
        Some(p) => format!("{p:.4}"),
    }
}

/// What a comparison's values and differences are in: a metric's unit, or for SLO capacity the kind of load its
/// sides were judged over (`None` when the sides mix kinds, so that their differences have no one unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// A per-cell metric, in its own unit.
    Metric(Metric),
    /// SLO capacity, a load of this kind.
    Capacity(Option<LoadAxis>),
}

impl From<Metric> for Measure {
    fn from(metric: Metric) -> Measure {
        Measure::Metric(metric)
    }
}

impl Measure {
    /// One side's value: `845 ms`, `0.482`, `N=5.3`, `2.5 req/s`.
    pub fn value(self, value: f64) -> String {
        match self {
            Measure::Metric(metric) => metric.format(value),
            Measure::Capacity(Some(axis)) => axis.value_text(value),
            Measure::Capacity(None) => format!("{value:.2}"),
        }
    }

    /// What a Δ axis is labelled: the metric, and for a capacity the unit its differences are in
    /// (`SLO capacity, req/s`), which its ticks do not write.
    pub fn label(self) -> String {
        match self {
            Measure::Metric(metric) => metric.label().to_string(),
            Measure::Capacity(Some(axis)) => format!(
                "{}, {}",
                Metric::SloCapacity.label(),
                match axis {
                    LoadAxis::Concurrency => "N",
                    LoadAxis::RequestRate => "req/s",
                }
            ),
            Measure::Capacity(None) => Metric::SloCapacity.label().to_string(),
        }
    }
}

/// A difference as the tables write it: four signed decimals for the ratios (efficiency, the p95 multiplier),
/// the metric's own unit for absolute metrics (`+195 ms`, `-1.24 s`, `+1,234 tok/s`), the kind of load for an
/// SLO capacity (`+2.6 N`, `-1.7 req/s`).
pub fn delta(value: Option<f64>, measure: impl Into<Measure>) -> String {
    let Some(value) = value else {
        return "—".into();
    };
    match measure.into() {
        // Zero (or a rounding residue of it, as an axis tick can be) is written without a sign.
        Measure::Metric(metric) if metric.is_absolute() && value.abs() < 1e-9 => metric.format(0.0),
        Measure::Metric(metric) if metric.is_absolute() => {
            let sign = if value < 0.0 { "-" } else { "+" };
            format!("{sign}{}", metric.format(value.abs()))
        }
        Measure::Metric(_) => format!("{value:+.4}"),
        Measure::Capacity(Some(axis)) => axis.delta_text(value),
        Measure::Capacity(None) => format!("{value:+.2}"),
    }
}

/// The bootstrap interval of a difference, each end as [`delta`] writes it.
pub fn delta_interval(ci: Option<(f64, f64)>, measure: impl Into<Measure>) -> String {
    let measure = measure.into();
    ci.map_or_else(
        || "—".into(),
        |(low, high)| {
            format!(
                "[{}, {}]",
                delta(Some(low), measure),
                delta(Some(high), measure)
            )
        },
    )
}

/// The geometric mean of a / b with the difference it makes: `×1.124 (+12.4%)`, `—` for none.
pub fn ratio(value: Option<f64>) -> String {
    value.map_or_else(
        || "—".into(),
        |ratio| format!("×{ratio:.3} ({:+.1}%)", (ratio - 1.0) * 100.0),
    )
}

/// The bootstrap interval: `[+0.0546, +0.0961]`.
pub fn interval(ci: Option<(f64, f64)>) -> String {
    ci.map_or_else(
        || "—".into(),
        |(low, high)| format!("[{low:+.4}, {high:+.4}]"),
    )
}

/// A pair's coordinates as `model=mistral-7b n=16`, leaving out `skip` (the group's dimension, which the row
/// already names).
pub fn coordinates(coordinates: &[(Dimension, Value)], skip: Option<Dimension>) -> String {
    coordinates
        .iter()
        .filter(|(dimension, _)| Some(*dimension) != skip)
        .map(|(dimension, value)| value.coordinate(*dimension))
        .collect::<Vec<_>>()
        .join(" ")
}

impl Group {
    /// The group's name: its value of `per`, or `all` for a comparison without groups.
    pub fn label(&self) -> String {
        self.group
            .as_ref()
            .map_or_else(|| "all".to_string(), ToString::to_string)
    }

    /// Wins, losses and ties of a: `18/5/2`.
    pub fn record(&self) -> String {
        format!("{}/{}/{}", self.wins, self.losses, self.ties)
    }
}

impl Comparison {
    /// What its values and differences are in: the metric's unit, or for SLO capacity the kind of load every
    /// side of its pairs was judged over.
    pub fn measure(&self) -> Measure {
        if self.spec.metric != Metric::SloCapacity {
            return Measure::Metric(self.spec.metric);
        }
        let mut axes = self
            .groups
            .iter()
            .flat_map(|group| &group.pairs)
            .flat_map(|pair| [&pair.a_cells, &pair.b_cells])
            .map(|keys| LoadAxis::most_of(keys.iter().map(|key| key.load)));
        let first = axes.next();
        Measure::Capacity(first.filter(|first| axes.all(|axis| axis == *first)))
    }

    /// The groups that have no pair, which the pairs' chart draws no panel for, in words; `None` when every group
    /// has a pair.
    pub fn unpaired_note(&self) -> Option<String> {
        let unpaired: Vec<String> = self
            .groups
            .iter()
            .filter(|group| group.pairs.is_empty())
            .map(Group::label)
            .collect();
        match unpaired.len() {
            0 => None,
            count if count == self.groups.len() => Some(
                "No group has a pair to draw; the table says why each pair was dropped.".into(),
            ),
            1 => Some(format!(
                "No panel for {}, which has no pair; the table says why.",
                unpaired[0]
            )),
            count => Some(format!(
                "No panel for the {count} groups without a pair ({}); the table says why.",
                unpaired.join(", ")
            )),
        }
    }

    /// What each pair's side averages: `each pair: mean of phase scaling, ttft × rep 0, 1, 2 per side`, `each
    /// pair: one cell per side`, or, when the pairs differ, `each pair: mean of 1 to 6 cells per side (up to phase
    /// scaling, ttft × rep 0, 1, 2)`.
    pub fn pair_pooling(&self) -> String {
        let poolings: Vec<Pooling> = self
            .groups
            .iter()
            .flat_map(|group| &group.pairs)
            .flat_map(|pair| [Pooling::of(&pair.a_cells), Pooling::of(&pair.b_cells)])
            .collect();
        let Some(first) = poolings.first() else {
            return "no pairs".into();
        };
        // A capacity is read over a side's loads, not averaged over its cells.
        let how = if self.spec.metric == crate::metric::Metric::SloCapacity {
            "capacity over"
        } else {
            "mean of"
        };
        if poolings.iter().all(|pooling| pooling == first) && first.is_complete() {
            return if first.cells == 1 {
                "each pair: one cell per side".into()
            } else {
                format!(
                    "each pair: {how} {} per side",
                    first.span_parts().join(" × ")
                )
            };
        }
        let fewest = poolings
            .iter()
            .map(|pooling| pooling.cells)
            .min()
            .unwrap_or(0);
        let most = poolings
            .iter()
            .map(|pooling| pooling.cells)
            .max()
            .unwrap_or(0);
        let widest = Pooling::widest(&poolings);
        let cells = if fewest == most {
            format!("{most} cells")
        } else {
            format!("{fewest} to {most} cells")
        };
        format!(
            "each pair: {how} {cells} per side (up to {})",
            widest.span_parts().join(" × ")
        )
    }
}

impl CompareSpec {
    /// What is compared and when a side is said to win, in one sentence.
    pub fn headline(&self) -> String {
        format!(
            "{} = {} (a) vs {} (b) on {}{}; Δ = a − b; {} is better; an edge is claimed when Holm p < {} and \
             the 95% CI excludes 0",
            self.by.name(),
            self.a,
            self.b,
            self.metric.label(),
            self.per
                .map(|per| format!(", per {}", per.name()))
                .unwrap_or_default(),
            if self.metric.lower_is_better() {
                "lower"
            } else {
                "higher"
            },
            self.alpha
        )
    }
}

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
///   4 fields equal on both sides
/// ```
pub fn render_confounders(spec: &CompareSpec, confounders: &Confounders) -> String {
    let mut out = String::new();
    let heading = Confounders::heading(spec);
    if confounders.a_runs.is_empty() && confounders.b_runs.is_empty() {
        let _ = writeln!(
            out,
            "{heading}: no pair was formed, so no run stands behind either side"
        );
        return out;
    }
    if confounders.differing.is_empty() && confounders.equal.is_empty() {
        let _ = writeln!(
            out,
            "{heading}: no run behind the pairs states its environment (manifest.json `environment`, config.yaml)"
        );
        return out;
    }
    let _ = writeln!(out, "{heading}:");
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

/// The comparison and what else differs between its sides, as `cellscope compare` prints them: the
/// confounders, then the table.
pub fn render_report(comparison: &Comparison, confounders: &Confounders) -> String {
    format!(
        "{}\n{}",
        render_confounders(&comparison.spec, confounders),
        render_comparison(comparison)
    )
}

/// The comparison as a Markdown table a CI job can post (its summary, a pull-request comment): the question, one
/// row per group, what else differs between the sides and how many pairs were dropped; `link` gives a group's
/// link to its view, when there is one.
pub fn render_markdown(
    comparison: &Comparison,
    confounders: &Confounders,
    link: impl Fn(&Group) -> Option<String>,
) -> String {
    use crate::history::report::markdown_cell;
    let spec = &comparison.spec;
    let measure = comparison.measure();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### Compare {} = {} vs {}\n\n{}\n\n{}\n",
        markdown_cell(spec.by.name()),
        markdown_cell(&spec.a),
        markdown_cell(&spec.b),
        markdown_cell(&spec.headline()),
        markdown_cell(&comparison.pair_pooling())
    );
    let _ = writeln!(
        out,
        "| group | pairs | mean Δ | a / b | 95% CI | Holm p | W/L/T | verdict |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---|");
    for group in &comparison.groups {
        let label = markdown_cell(&group.label());
        let label = match link(group) {
            Some(url) => format!("[{}]({url})", label.replace('[', "\\[").replace(']', "\\]")),
            None => label,
        };
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {} | {} | {} | {} | {} |",
            group.n_pairs,
            markdown_cell(&delta(group.mean_delta, measure)),
            markdown_cell(&ratio(group.ratio)),
            markdown_cell(&delta_interval(group.ci, measure)),
            p_value(group.holm_p),
            group.record(),
            markdown_cell(&group.describe_verdict(spec))
        );
    }
    let differing: Vec<String> = confounders
        .differing
        .iter()
        .map(|contrast| {
            format!(
                "{} ({}: {}; {}: {})",
                contrast.label,
                spec.a,
                contrast.describe_side(Side::A),
                spec.b,
                contrast.describe_side(Side::B)
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "\n{}",
        markdown_cell(&if differing.is_empty() {
            format!("{}: nothing else differs.", Confounders::heading(spec))
        } else {
            format!("{}: {}.", Confounders::heading(spec), differing.join("; "))
        })
    );
    let dropped: usize = comparison
        .groups
        .iter()
        .map(|group| group.dropped.len())
        .sum();
    let _ = writeln!(
        out,
        "\n{dropped} pairs dropped (`cellscope compare` without `--format markdown` lists them)."
    );
    out
}

/// The comparison as a table: one row per group, then every pair that could not be formed and why.
pub fn render_comparison(comparison: &Comparison) -> String {
    let spec = &comparison.spec;
    let measure = comparison.measure();
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
            delta(group.mean_delta, measure),
            delta(group.median_delta, measure),
            ratio(group.ratio),
            delta_interval(group.ci, measure),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stat::Stat;

    #[test]
    fn numbers_keep_their_sign_and_small_p_values_their_digits() {
        assert_eq!(signed(Some(0.07571), 4), "+0.0757");
        assert_eq!(signed(Some(-0.0349), 4), "-0.0349");
        assert_eq!(signed(None, 4), "—");
        assert_eq!(p_value(Some(0.000048)), "4.80e-5");
        assert_eq!(p_value(Some(0.652841)), "0.6528");
        assert_eq!(interval(Some((-0.01, 0.014))), "[-0.0100, +0.0140]");
        assert_eq!(ratio(Some(1.1237)), "×1.124 (+12.4%)");
        assert_eq!(ratio(Some(0.8)), "×0.800 (-20.0%)");
        assert_eq!(ratio(None), "—");
        assert_eq!(
            delta(Some(195.3711), Metric::Stat(Stat::P95WallMs)),
            "+195 ms"
        );
        assert_eq!(
            delta(Some(-1240.0), Metric::Stat(Stat::P95WallMs)),
            "-1.24 s"
        );
        assert_eq!(
            delta(Some(0.07571), Metric::Stat(Stat::Efficiency)),
            "+0.0757"
        );
        assert_eq!(
            delta_interval(Some((100.5, 285.8)), Metric::Stat(Stat::P95WallMs)),
            "[+100 ms, +286 ms]"
        );
        assert_eq!(delta(None, Metric::Stat(Stat::AggregateTps)), "—");
        assert_eq!(
            delta(Some(-1e-13), Metric::Stat(Stat::P95WallMs)),
            "0.00 ms"
        );
        // An SLO capacity's difference is a difference of loads, in the kind of load its sides were judged over.
        let rate = Measure::Capacity(Some(LoadAxis::RequestRate));
        assert_eq!(delta(Some(-1.6973), rate), "-1.7 req/s");
        assert_eq!(
            delta_interval(Some((-2.2987, -0.4)), rate),
            "[-2.3 req/s, -0.4 req/s]"
        );
        assert_eq!(
            delta(Some(2.5893), Measure::Capacity(Some(LoadAxis::Concurrency))),
            "+2.6 N"
        );
        assert_eq!(delta(Some(0.0), rate), "0 req/s");
        assert_eq!(delta(Some(0.25), Measure::Capacity(None)), "+0.25");
        assert_eq!(rate.value(6.26), "6.3 req/s");
        assert_eq!(rate.label(), "SLO capacity, req/s");
    }

    #[test]
    fn groups_without_a_pair_are_named_once() {
        use crate::compare::{CompareSpec, Pair, Verdict};
        let group = |name: &str, pairs: usize| Group {
            group: Some(Value::Text(name.into())),
            n_pairs: pairs as u32,
            mean_delta: None,
            median_delta: None,
            ci: None,
            wilcoxon: None,
            holm_p: None,
            effect_size: None,
            ratio: None,
            wins: 0,
            losses: 0,
            ties: 0,
            verdict: Verdict::NoPairs,
            pairs: (0..pairs)
                .map(|_| Pair {
                    coordinates: Vec::new(),
                    a: 1.0,
                    b: 1.0,
                    delta: 0.0,
                    a_cells: Vec::new(),
                    b_cells: Vec::new(),
                })
                .collect(),
            dropped: Vec::new(),
        };
        let comparison = |groups| Comparison {
            spec: CompareSpec {
                by: Dimension::Backend,
                a: "a".into(),
                b: "b".into(),
                per: Some(Dimension::Workload),
                metric: Metric::SloCapacity,
                alpha: 0.05,
                slo: String::new(),
            },
            groups,
        };
        let mixed = comparison(vec![group("1k1k", 0), group("long", 2), group("chat", 0)]);
        assert_eq!(
            mixed.unpaired_note().as_deref(),
            Some("No panel for the 2 groups without a pair (1k1k, chat); the table says why.")
        );
        assert_eq!(
            comparison(vec![group("1k1k", 0), group("long", 2)])
                .unpaired_note()
                .as_deref(),
            Some("No panel for 1k1k, which has no pair; the table says why.")
        );
        assert_eq!(comparison(vec![group("long", 2)]).unpaired_note(), None);
        assert_eq!(
            comparison(vec![group("1k1k", 0)])
                .unpaired_note()
                .as_deref(),
            Some("No group has a pair to draw; the table says why each pair was dropped.")
        );
    }
}
