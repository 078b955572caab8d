//! A comparison's numbers and sentences as text: one wording for the CLI table, the app's table and the
//! exports, so that every reader sees the same digits.

use super::{CompareSpec, Group};
use crate::key::{Dimension, Value};

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
        .map(|(dimension, value)| format!("{}={value}", dimension.name()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_their_sign_and_small_p_values_their_digits() {
        assert_eq!(signed(Some(0.07571), 4), "+0.0757");
        assert_eq!(signed(Some(-0.0349), 4), "-0.0349");
        assert_eq!(signed(None, 4), "—");
        assert_eq!(p_value(Some(0.000048)), "4.80e-5");
        assert_eq!(p_value(Some(0.652841)), "0.6528");
        assert_eq!(interval(Some((-0.01, 0.014))), "[-0.0100, +0.0140]");
    }
}
