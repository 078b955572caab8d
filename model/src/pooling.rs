//! What a pooled value pools: how many cells, and over which dimensions they differ, written the way every
//! chart and square says it ("mean of 18 cells: 3 models × 2 phases × 3 reps"; docs/definitions.md#pooling).

use crate::key::{CellKey, Dimension, DimensionValue};
use serde::{Deserialize, Serialize};

/// How reps (and then the series a curve pools) are aggregated into one curve value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregation {
    /// The arithmetic mean.
    #[default]
    Mean,
    /// The median (numpy's linear quantile at one half).
    Median,
}

impl Aggregation {
    /// The name `agg=` takes.
    pub fn name(self) -> &'static str {
        match self {
            Aggregation::Mean => "mean",
            Aggregation::Median => "median",
        }
    }
    /// The aggregation a name names.
    pub fn parse(text: &str) -> Option<Aggregation> {
        match text {
            "mean" => Some(Aggregation::Mean),
            "median" => Some(Aggregation::Median),
            _ => None,
        }
    }
    /// The aggregate of some values (`None` for none).
    pub fn apply(self, values: &[f64]) -> Option<f64> {
        if values.is_empty() {
            return None;
        }
        match self {
            Aggregation::Mean => Some(values.iter().sum::<f64>() / values.len() as f64),
            Aggregation::Median => {
                let mut sorted = values.to_vec();
                crate::order::sort_floats(&mut sorted);
                crate::stats::quantile_linear(&sorted, 0.5)
            }
        }
    }
}

/// The cells behind one value: their count and, per dimension on which they differ, how many values.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pooling {
    /// How many cells.
    pub cells: u32,
    /// Dimensions with more than one value among the cells, in [`ORDER`], with the number of values.
    pub spans: Vec<(Dimension, u32)>,
}

/// The order a description names dimensions in: what was compared first, reps last.
const ORDER: [Dimension; 8] = [
    Dimension::Backend,
    Dimension::Model,
    Dimension::Workload,
    Dimension::Phase,
    Dimension::Suite,
    Dimension::Run,
    Dimension::Load,
    Dimension::Rep,
];

impl Pooling {
    /// The pooling of `keys` (the admitted cells with data behind a value).
    pub fn of<'a>(keys: impl IntoIterator<Item = &'a CellKey>) -> Pooling {
        let keys: Vec<&CellKey> = keys.into_iter().collect();
        let mut values: Vec<DimensionValue<'_>> = Vec::with_capacity(keys.len());
        let spans = ORDER
            .into_iter()
            .filter_map(|dimension| {
                // Most dimensions hold one value among a value's cells: one pass says so without sorting.
                let first = keys.first()?.value(dimension);
                if keys.iter().all(|key| key.value(dimension) == first) {
                    return None;
                }
                values.clear();
                values.extend(keys.iter().map(|key| key.value(dimension)));
                // Keys mostly come sorted, so equal values sit together: dropping repeats first leaves few
                // values to sort.
                values.dedup();
                values.sort_unstable();
                values.dedup();
                Some((dimension, values.len() as u32))
            })
            .collect();
        Pooling {
            cells: keys.len() as u32,
            spans,
        }
    }

    /// Whether the value pools more than one series (reps of one series are not "pooling" in the sense the
    /// band option cares about).
    pub fn pools_series(&self) -> bool {
        self.spans
            .iter()
            .any(|(dimension, _)| *dimension != Dimension::Rep)
    }

    /// `mean of 18 cells: 3 models × 2 phases × 3 reps`; `1 cell`; when not every combination has a cell,
    /// `mean of 16 cells over 3 models, 2 phases, 3 reps (not every combination has data)`.
    pub fn describe(&self, aggregation: Aggregation) -> String {
        match self.cells {
            0 => return "no cells with data".into(),
            1 => return "1 cell".into(),
            _ => {}
        }
        let parts = self.span_parts();
        let combinations: u64 = self
            .spans
            .iter()
            .map(|(_, count)| u64::from(*count))
            .product();
        let what = format!("{} of {} cells", aggregation.name(), self.cells);
        if parts.is_empty() {
            what
        } else if combinations == u64::from(self.cells) {
            format!("{what}: {}", parts.join(" × "))
        } else {
            format!(
                "{what} over {} (not every combination has data)",
                parts.join(", ")
            )
        }
    }
}

impl Pooling {
    /// Each dimension the cells span, as `2 phases`, `3 reps`.
    pub fn span_parts(&self) -> Vec<String> {
        self.spans
            .iter()
            .map(|(dimension, count)| format!("{count} {}", plural(*dimension, *count)))
            .collect()
    }
}

fn plural(dimension: Dimension, count: u32) -> String {
    let name = match dimension {
        Dimension::Load => "load",
        other => other.name(),
    };
    if count == 1 {
        name.to_string()
    } else {
        format!("{name}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(model: &str, phase: &str, rep: u32) -> CellKey {
        CellKey {
            run_id: "r".into(),
            suite: "s".into(),
            phase: phase.into(),
            backend: "pytorch_direct".into(),
            model: model.into(),
            workload: "w".into(),
            config: Default::default(),
            load: crate::Load::Concurrency(2),
            rep,
        }
    }

    #[test]
    fn says_what_a_pooled_value_pools() {
        let keys: Vec<CellKey> = ["a", "b", "c"]
            .into_iter()
            .flat_map(|model| {
                ["scaling", "saturation"]
                    .into_iter()
                    .flat_map(move |phase| (0..3).map(move |rep| key(model, phase, rep)))
            })
            .collect();
        let pooling = Pooling::of(&keys);
        assert_eq!(
            pooling.describe(Aggregation::Mean),
            "mean of 18 cells: 3 models × 2 phases × 3 reps"
        );
        assert!(pooling.pools_series());
        let ragged = Pooling::of(&keys[1..]);
        assert_eq!(
            ragged.describe(Aggregation::Median),
            "median of 17 cells over 3 models, 2 phases, 3 reps (not every combination has data)"
        );
        let reps = Pooling::of(&keys[..3]);
        assert_eq!(reps.describe(Aggregation::Mean), "mean of 3 cells: 3 reps");
        assert!(!reps.pools_series());
        assert_eq!(
            Pooling::of(&keys[..1]).describe(Aggregation::Mean),
            "1 cell"
        );
        assert_eq!(
            Pooling::of(&[]).describe(Aggregation::Mean),
            "no cells with data"
        );
    }
}
