//! The dimension filter: which cells a slice keeps. The app's filter bar, the `/api/cells` query and the
//! audit table all select cells with this one rule.

use crate::key::{CellKey, Dimension, Value};
use crate::summary::CellSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Accepted values per dimension (an absent dimension accepts every value) and an inclusive N range.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DimensionFilter {
    pub values: BTreeMap<Dimension, Vec<String>>,
    pub n_min: Option<u32>,
    pub n_max: Option<u32>,
}

/// A filter value that cannot select anything because it has the wrong form.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{dimension}` takes whole numbers, got `{value}`")]
pub struct FilterError {
    pub dimension: Dimension,
    pub value: String,
}

impl DimensionFilter {
    /// An empty filter, usable in constants.
    pub const ALL: DimensionFilter = DimensionFilter {
        values: BTreeMap::new(),
        n_min: None,
        n_max: None,
    };

    pub fn is_empty(&self) -> bool {
        self.values.is_empty() && self.n_min.is_none() && self.n_max.is_none()
    }

    /// The filter as a reader says it: `backend = vllm, sglang; workload = long_prefill_8k; N 2–16`, or
    /// `all cells`.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .values
            .iter()
            .map(|(dimension, values)| format!("{} = {}", dimension.name(), values.join(", ")))
            .collect();
        match (self.n_min, self.n_max) {
            (Some(low), Some(high)) => parts.push(format!("N {low}–{high}")),
            (Some(low), None) => parts.push(format!("N ≥ {low}")),
            (None, Some(high)) => parts.push(format!("N ≤ {high}")),
            (None, None) => {}
        }
        if parts.is_empty() {
            "all cells".into()
        } else {
            parts.join("; ")
        }
    }

    /// Whether a cell key passes every dimension and the N range.
    pub fn admits(&self, key: &CellKey) -> bool {
        self.n_min.is_none_or(|n_min| key.n >= n_min)
            && self.n_max.is_none_or(|n_max| key.n <= n_max)
            && self.values.iter().all(|(dimension, accepted)| {
                let value = key.value(*dimension);
                accepted
                    .iter()
                    .any(|candidate| value.matches_text(candidate))
            })
    }

    /// The cells passing the filter, in their order.
    pub fn apply<'a>(&self, cells: &'a [CellSummary]) -> Vec<&'a CellSummary> {
        cells.iter().filter(|cell| self.admits(&cell.key)).collect()
    }

    /// Adds accepted values of one dimension, checking that numeric dimensions get whole numbers. Values
    /// already accepted are not repeated.
    pub fn accept(
        &mut self,
        dimension: Dimension,
        values: impl IntoIterator<Item = String>,
    ) -> Result<(), FilterError> {
        let mut checked = Vec::new();
        for value in values {
            if dimension.is_numeric() && !is_whole_number(&value) {
                return Err(FilterError { dimension, value });
            }
            checked.push(value);
        }
        let accepted = self.values.entry(dimension).or_default();
        for value in checked {
            if !accepted.contains(&value) {
                accepted.push(value);
            }
        }
        if accepted.is_empty() {
            self.values.remove(&dimension);
        }
        Ok(())
    }
}

/// Digits only, fitting a `u32` (`u32::from_str` also takes a leading `+`, which a filter should not).
pub fn is_whole_number(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|byte| byte.is_ascii_digit())
        && text.parse::<u32>().is_ok()
}

/// Distinct values of every dimension with their cell counts, numbers ascending then text alphabetically: the
/// filter bar's choices and the `dimensions` of `/api/index`.
pub fn dimension_counts<'a>(
    cells: impl IntoIterator<Item = &'a CellSummary>,
) -> BTreeMap<Dimension, Vec<(Value, u32)>> {
    let mut counts: BTreeMap<Dimension, BTreeMap<Value, u32>> = BTreeMap::new();
    for cell in cells {
        for dimension in Dimension::ALL {
            *counts
                .entry(dimension)
                .or_default()
                .entry(Value::of(&cell.key, dimension))
                .or_default() += 1;
        }
    }
    crate::order::btree_map(
        counts
            .into_iter()
            .map(|(dimension, values)| (dimension, values.into_iter().collect())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::CellStatus;

    fn cell(backend: &str, n: u32) -> CellSummary {
        CellSummary::empty(
            CellKey {
                run_id: "r".into(),
                suite: "s".into(),
                phase: "scaling".into(),
                backend: backend.into(),
                model: "m".into(),
                workload: "w".into(),
                n,
                rep: 0,
            },
            CellStatus::Clean,
        )
    }

    #[test]
    fn values_of_one_dimension_are_alternatives_and_dimensions_combine() {
        let cells = [cell("vllm", 1), cell("sglang", 16), cell("tgi", 32)];
        let mut filter = DimensionFilter::default();
        filter
            .accept(
                Dimension::Backend,
                ["vllm".into(), "sglang".into(), "vllm".into()],
            )
            .unwrap();
        assert_eq!(filter.values[&Dimension::Backend], ["vllm", "sglang"]);
        assert_eq!(filter.apply(&cells).len(), 2);
        filter.n_min = Some(2);
        assert_eq!(filter.apply(&cells).len(), 1);
        filter.accept(Dimension::N, ["16".into()]).unwrap();
        assert_eq!(filter.apply(&cells).len(), 1);
        assert_eq!(
            filter.accept(Dimension::Rep, ["+1".into()]),
            Err(FilterError {
                dimension: Dimension::Rep,
                value: "+1".into()
            })
        );
    }

    #[test]
    fn counts_list_numbers_numerically() {
        let cells = [cell("vllm", 16), cell("vllm", 2), cell("sglang", 2)];
        let counts = dimension_counts(&cells);
        assert_eq!(
            counts[&Dimension::N],
            vec![(Value::Number(2), 2), (Value::Number(16), 1)]
        );
        assert_eq!(
            counts[&Dimension::Backend],
            vec![
                (Value::Text("sglang".into()), 1),
                (Value::Text("vllm".into()), 2)
            ]
        );
    }
}
