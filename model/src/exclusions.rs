//! The exclusion ledger (`exclusions.toml`): data that takes cells out of comparisons or out of every aggregate.
//!
//! The TOML text is parsed by the server; this module holds the entry types and the matching rule, so the
//! browser can show and re-apply the same ledger.

use crate::key::{CellKey, Dimension};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One `[[exclude]]` entry of a ledger file (the server reads each entry on its own, so one that does not fit this
/// schema leaves the others in force).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExclusionEntry {
    /// The entry's identifier, by which an excluded cell names the entries that matched it.
    pub id: String,
    /// Dimension name → accepted value(s). Omitted dimensions match everything.
    #[serde(default)]
    pub select: BTreeMap<String, Selector>,
    /// How far the selected cells are taken out: of comparisons, or of every aggregate.
    pub scope: ExclusionScope,
    /// Why the cells are excluded, in the ledger's words (empty when not given).
    #[serde(default)]
    pub reason: String,
    /// Where the decision is documented (a report and its section), when the entry says.
    #[serde(default)]
    pub source: Option<String>,
    /// When the exclusion was decided, as the ledger writes it (`2026-06-13`), when the entry says.
    #[serde(default)]
    pub decided: Option<String>,
}

/// One value or a list of accepted values: `model = "mistral-7b"` or `n = [16, 32]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Selector {
    /// A single accepted value.
    One(SelectorValue),
    /// Any of several accepted values.
    Many(Vec<SelectorValue>),
}

/// One accepted value as the TOML writes it; it is compared with a cell's value by its text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SelectorValue {
    /// A string value (`"mistral-7b"`).
    Text(String),
    /// A whole-number value (`16`).
    Number(i64),
}

impl SelectorValue {
    fn as_text(&self) -> String {
        match self {
            SelectorValue::Text(text) => text.clone(),
            SelectorValue::Number(number) => number.to_string(),
        }
    }
}

/// `comparison`: out of cross-backend comparisons (on every backend's side); `all`: out of every aggregate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExclusionScope {
    /// Out of cross-backend comparisons, on every side.
    Comparison,
    /// Out of every aggregate of every view.
    All,
}

impl ExclusionScope {
    /// The ledger's spelling: `comparison` or `all`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExclusionScope::Comparison => "comparison",
            ExclusionScope::All => "all",
        }
    }

    /// The scope spelled `comparison` or `all`; `None` for any other text.
    pub fn parse(text: &str) -> Option<ExclusionScope> {
        match text {
            "comparison" => Some(ExclusionScope::Comparison),
            "all" => Some(ExclusionScope::All),
            _ => None,
        }
    }

    /// What the scope does, in one sentence, for wherever the scope is shown.
    pub fn meaning(self) -> &'static str {
        match self {
            ExclusionScope::Comparison => {
                "scope comparison: the cells are left out on every side whenever a view sets values of a \
                 dimension against each other (curves or a matrix split by backend, a head-to-head), so the sides \
                 cover the same cells; views of a single backend keep them."
            }
            ExclusionScope::All => {
                "scope all: the cells are left out of every aggregate of every view."
            }
        }
    }
}

impl ExclusionEntry {
    /// Selector keys that name no dimension. An entry with one is reported and never matches, because a typo
    /// (`modle = …`) must not silently widen an exclusion to every cell.
    pub fn unknown_dimensions(&self) -> Vec<&str> {
        self.select
            .keys()
            .filter(|name| Dimension::parse(name).is_none())
            .map(String::as_str)
            .collect()
    }

    /// The selector in words: `model = mistral-7b and workload = long_prefill_8k`, a list as
    /// `n = 16 or 32`, and `every cell` when the entry selects on nothing.
    pub fn describe_select(&self) -> String {
        if self.select.is_empty() {
            return "every cell".to_string();
        }
        self.select
            .iter()
            .map(|(name, selector)| {
                let values = match selector {
                    Selector::One(value) => value.as_text(),
                    Selector::Many(values) => values
                        .iter()
                        .map(SelectorValue::as_text)
                        .collect::<Vec<_>>()
                        .join(" or "),
                };
                format!("{name} = {values}")
            })
            .collect::<Vec<_>>()
            .join(" and ")
    }

    /// Whether the entry selects `key`: every selected dimension accepts the key's value. Never when a selector
    /// key names no dimension.
    pub fn matches(&self, key: &CellKey) -> bool {
        if !self.unknown_dimensions().is_empty() {
            return false;
        }
        self.select.iter().all(|(name, selector)| {
            let Some(dimension) = Dimension::parse(name) else {
                return false;
            };
            let value = key.value(dimension);
            match selector {
                Selector::One(accepted) => value.matches_text(&accepted.as_text()),
                Selector::Many(accepted) => accepted
                    .iter()
                    .any(|one| value.matches_text(&one.as_text())),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(model: &str, workload: &str, n: u32) -> CellKey {
        CellKey {
            run_id: "20260612_212816_266127".into(),
            suite: "cloud_core".into(),
            phase: "scaling".into(),
            backend: "sglang".into(),
            model: model.into(),
            workload: workload.into(),
            config: Default::default(),
            load: crate::Load::Concurrency(n),
            rep: 0,
        }
    }

    fn entry(select: &[(&str, Selector)]) -> ExclusionEntry {
        ExclusionEntry {
            id: "x".into(),
            select: select
                .iter()
                .map(|(name, value)| (name.to_string(), value.clone()))
                .collect(),
            scope: ExclusionScope::Comparison,
            reason: String::new(),
            source: None,
            decided: None,
        }
    }

    #[test]
    fn omitted_dimensions_match_everything() {
        let mistral = entry(&[
            (
                "model",
                Selector::One(SelectorValue::Text("mistral-7b".into())),
            ),
            (
                "workload",
                Selector::One(SelectorValue::Text("long_prefill_8k".into())),
            ),
        ]);
        assert!(mistral.matches(&key("mistral-7b", "long_prefill_8k", 32)));
        assert!(!mistral.matches(&key("mistral-7b", "long_decode", 32)));
        assert!(!mistral.matches(&key("phi-4", "long_prefill_8k", 32)));
    }

    #[test]
    fn the_selector_is_written_in_words() {
        let mistral = entry(&[
            (
                "workload",
                Selector::One(SelectorValue::Text("long_prefill_8k".into())),
            ),
            (
                "model",
                Selector::One(SelectorValue::Text("mistral-7b".into())),
            ),
        ]);
        assert_eq!(
            mistral.describe_select(),
            "model = mistral-7b and workload = long_prefill_8k"
        );
        let high_n = entry(&[(
            "n",
            Selector::Many(vec![SelectorValue::Number(16), SelectorValue::Number(32)]),
        )]);
        assert_eq!(high_n.describe_select(), "n = 16 or 32");
        assert_eq!(entry(&[]).describe_select(), "every cell");
        assert!(
            ExclusionScope::Comparison
                .meaning()
                .contains("views of a single backend keep them")
        );
    }

    #[test]
    fn lists_and_numbers_select_several_values() {
        let high_n = entry(&[(
            "n",
            Selector::Many(vec![SelectorValue::Number(16), SelectorValue::Number(32)]),
        )]);
        assert!(high_n.matches(&key("phi-4", "long_decode", 16)));
        assert!(!high_n.matches(&key("phi-4", "long_decode", 8)));
    }

    #[test]
    fn an_unknown_dimension_never_matches() {
        let typo = entry(&[("modle", Selector::One(SelectorValue::Text("phi-4".into())))]);
        assert_eq!(typo.unknown_dimensions(), vec!["modle"]);
        assert!(!typo.matches(&key("phi-4", "long_decode", 16)));
    }
}
