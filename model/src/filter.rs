//! The dimension filter: which cells a slice keeps. The app's filter bar, the `/api/cells` query and the
//! audit table all select cells with this one rule.

use crate::key::{CellKey, Dimension, Value};
use crate::load::{RateRps, rate_json};
use crate::summary::CellSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One end of a load range: a number above zero, compared with a cell's [`crate::Load::value`]; `inf` as a lower
/// end keeps only unbounded rates (every request sent at once). Written as a number or `"inf"` in JSON, as a
/// rate is.
#[derive(Clone, Copy, Debug)]
pub struct LoadBound(f64);

impl LoadBound {
    /// The bound `value`; `None` unless it is above zero (`+inf` included).
    pub fn new(value: f64) -> Option<LoadBound> {
        (value > 0.0).then_some(LoadBound(value))
    }

    /// The bound as a number.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl PartialEq for LoadBound {
    fn eq(&self, other: &LoadBound) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for LoadBound {}

impl std::hash::Hash for LoadBound {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

impl From<LoadBound> for f64 {
    fn from(bound: LoadBound) -> f64 {
        bound.0
    }
}

impl From<u32> for LoadBound {
    fn from(n: u32) -> LoadBound {
        LoadBound(f64::from(n.max(1)))
    }
}

impl Serialize for LoadBound {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match RateRps::new(self.0) {
            Some(rate) => rate_json::serialize(&rate, serializer),
            None => serializer.serialize_f64(self.0),
        }
    }
}

impl<'de> Deserialize<'de> for LoadBound {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<LoadBound, D::Error> {
        rate_json::deserialize(deserializer).map(|rate| LoadBound(rate.get()))
    }
}

impl TryFrom<f64> for LoadBound {
    type Error = String;

    fn try_from(value: f64) -> Result<LoadBound, String> {
        LoadBound::new(value).ok_or_else(|| "expected a number above zero".to_string())
    }
}

/// Shortest round-trip text: `2`, `0.5`, `inf`.
impl std::fmt::Display for LoadBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Whether a cell's load lies in the range: an unstated load lies outside any range, an unbounded rate above
/// every upper bound.
pub fn load_in_range(key: &CellKey, min: Option<LoadBound>, max: Option<LoadBound>) -> bool {
    if min.is_none() && max.is_none() {
        return true;
    }
    key.load.value().is_some_and(|value| {
        min.is_none_or(|min| value >= min.get()) && max.is_none_or(|max| value <= max.get())
    })
}

/// Accepted values per dimension (an absent dimension accepts every value) and an inclusive load range.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DimensionFilter {
    /// Dimension → the values it accepts; a dimension absent here accepts every value.
    pub values: BTreeMap<Dimension, Vec<String>>,
    /// The smallest load admitted (N, or an offered rate in req/s), inclusive; `None` for no lower bound.
    #[serde(alias = "n_min")]
    pub load_min: Option<LoadBound>,
    /// The largest load admitted, inclusive; `None` for no upper bound.
    #[serde(alias = "n_max")]
    pub load_max: Option<LoadBound>,
}

/// A filter value that cannot select anything because it has the wrong form.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{dimension}` takes whole numbers (the load also rates and n=N, rate=R), got `{value}`")]
pub struct FilterError {
    /// The numeric dimension the value was given for.
    pub dimension: Dimension,
    /// The value as given, which is not a whole number.
    pub value: String,
}

impl DimensionFilter {
    /// An empty filter, usable in constants.
    pub const ALL: DimensionFilter = DimensionFilter {
        values: BTreeMap::new(),
        load_min: None,
        load_max: None,
    };

    /// Whether the filter admits every cell: no accepted values and no load bound.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty() && self.load_min.is_none() && self.load_max.is_none()
    }

    /// The filter as a reader says it: `backend = vllm, sglang; workload = long_prefill_8k; load 2–16`, or
    /// `all cells`.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .values
            .iter()
            .map(|(dimension, values)| format!("{} = {}", dimension.name(), values.join(", ")))
            .collect();
        match (self.load_min, self.load_max) {
            (Some(low), Some(high)) => parts.push(format!("load {low}–{high}")),
            (Some(low), None) => parts.push(format!("load ≥ {low}")),
            (None, Some(high)) => parts.push(format!("load ≤ {high}")),
            (None, None) => {}
        }
        if parts.is_empty() {
            "all cells".into()
        } else {
            parts.join("; ")
        }
    }

    /// Whether a cell key passes every dimension and the load range.
    pub fn admits(&self, key: &CellKey) -> bool {
        load_in_range(key, self.load_min, self.load_max)
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
            if !is_valid_value(dimension, &value) {
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

/// A filter value that no cell of the data has: reported with the values the dimension does have, and the one
/// meant when it is close (a wrong case, a typo), instead of selecting nothing without a word.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{dimension} has no value `{value}` in this data{}; its values: {}", suggestion_text(.suggestion.as_deref()), .valid.join(", "))]
pub struct UnknownValue {
    /// The dimension the value was given for.
    pub dimension: Dimension,
    /// The value as given, which no cell of the data has.
    pub value: String,
    /// The value it is close to, ignoring case.
    pub suggestion: Option<String>,
    /// Every value of the dimension, in the data's order.
    pub valid: Vec<String>,
}

/// Every filter value no cell has, said in one message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct UnknownValues(pub Vec<UnknownValue>);

fn suggestion_text(suggestion: Option<&str>) -> String {
    suggestion.map_or_else(String::new, |value| format!(" (did you mean `{value}`?)"))
}

impl UnknownValue {
    /// Why the value was not used, for the app's notice of link parameters it ignored.
    pub fn reason(&self) -> String {
        format!(
            "no cell has this {}{}",
            self.dimension.name(),
            suggestion_text(self.suggestion.as_deref())
        )
    }
}

impl DimensionFilter {
    /// The accepted values that no value of the data matches; `known` gives each dimension's values (as
    /// `/api/index` lists them). A dimension `known` does not list is not checked.
    pub fn unknown_values(&self, known: &BTreeMap<Dimension, Vec<Value>>) -> Vec<UnknownValue> {
        let mut unknown = Vec::new();
        for (dimension, accepted) in &self.values {
            let Some(values) = known.get(dimension) else {
                continue;
            };
            let texts: Vec<String> = values.iter().map(ToString::to_string).collect();
            for value in accepted {
                let found = values.iter().any(|known| match known {
                    Value::Text(text) => text == value,
                    Value::Number(number) if *dimension == Dimension::Load => {
                        crate::Load::Concurrency(*number).matches_text(value)
                    }
                    Value::Number(number) => value.trim().parse::<u32>() == Ok(*number),
                    Value::Load(load) => load.matches_text(value),
                });
                if !found {
                    unknown.push(UnknownValue {
                        dimension: *dimension,
                        value: value.clone(),
                        // A number one digit off another is a different number, not a typo of it.
                        suggestion: (!dimension.is_numeric())
                            .then(|| {
                                crate::suggest::did_you_mean(
                                    value,
                                    texts.iter().map(String::as_str),
                                )
                            })
                            .flatten()
                            .map(str::to_string),
                        valid: texts.clone(),
                    });
                }
            }
        }
        unknown
    }

    /// The filter without the values in `unknown` (a dimension left with none accepts every value again).
    pub fn without(&mut self, unknown: &[UnknownValue]) {
        for value in unknown {
            if let Some(accepted) = self.values.get_mut(&value.dimension) {
                accepted.retain(|accepted| accepted != &value.value);
                if accepted.is_empty() {
                    self.values.remove(&value.dimension);
                }
            }
        }
    }
}

/// The dimensions a data root lists: the key's own, with the deployment parameters whose value differs between
/// some of `cells` in their place (a parameter every cell has alike says nothing a filter could use).
pub fn listed_dimensions(cells: &[&CellSummary]) -> Vec<Dimension> {
    Dimension::with_params(&Dimension::varying_params(
        cells.iter().map(|cell| &cell.key),
    ))
}

/// How many deployment parameters the filter bar shows as controls of their own before it folds the rest behind
/// one "more" control: a file of a disaggregated deployment can state sixteen (`prefill_tp`, `decode_tp`, …).
pub const PARAMS_SHOWN: usize = 4;

/// The filter bar's controls, in two parts: the dimensions shown, in the order given, and the deployment
/// parameters folded behind one control. Past [`PARAMS_SHOWN`] + 1 parameters, the first [`PARAMS_SHOWN`] are
/// shown, well-known ones first (in [`crate::config::PARAMS`] order: tp before an engine's own setting), and the
/// others folded in the order given; a bar of fewer shows every parameter.
pub fn filter_bar(dimensions: &[Dimension]) -> (Vec<Dimension>, Vec<Dimension>) {
    let params: Vec<Dimension> = dimensions
        .iter()
        .copied()
        .filter(|dimension| dimension.is_param())
        .collect();
    if params.len() <= PARAMS_SHOWN + 1 {
        return (dimensions.to_vec(), Vec::new());
    }
    let rank = |dimension: &Dimension| {
        crate::config::PARAMS
            .iter()
            .position(|param| param.name == dimension.name())
            .unwrap_or(crate::config::PARAMS.len())
    };
    let mut ranked = params.clone();
    // Stable: parameters of one rank keep the order given.
    crate::order::sort_stable_by_key(&mut ranked, rank);
    let shown: Vec<Dimension> = ranked.into_iter().take(PARAMS_SHOWN).collect();
    let (kept, folded): (Vec<Dimension>, Vec<Dimension>) = dimensions
        .iter()
        .copied()
        .partition(|dimension| !dimension.is_param() || shown.contains(dimension));
    (kept, folded)
}

/// What the "more" control of the filter bar says: how many parameters it holds, and how many of them filter
/// the cells now, so that a filter set there is never out of sight: `12 more parameters`,
/// `12 more parameters (2 filtering)`.
pub fn more_params_label(folded: usize, filtering: usize) -> String {
    let noun = if folded == 1 {
        "parameter"
    } else {
        "parameters"
    };
    if filtering == 0 {
        format!("{folded} more {noun}")
    } else {
        format!("{folded} more {noun} ({filtering} filtering)")
    }
}

/// Faceted counts: for each dimension, how many of `cells` each of its values has among the cells that pass
/// every other part of the filter (the load range counts as the load's part). A value ticked or not, its count says how
/// many cells ticking it would show alongside the other dimensions' choices. The dimensions are
/// [`listed_dimensions`].
pub fn faceted_counts<'a>(
    cells: impl IntoIterator<Item = &'a CellSummary>,
    filter: &DimensionFilter,
) -> BTreeMap<Dimension, BTreeMap<Value, u32>> {
    let cells: Vec<&CellSummary> = cells.into_iter().collect();
    let dimensions = listed_dimensions(&cells);
    let mut counts: BTreeMap<Dimension, BTreeMap<Value, u32>> = BTreeMap::new();
    for cell in cells {
        let key = &cell.key;
        let n_ok = load_in_range(key, filter.load_min, filter.load_max);
        // The one dimension the cell fails, if it fails exactly one (the load's range and values together are one).
        let mut failed: Option<Dimension> = (!n_ok).then_some(Dimension::Load);
        let mut failures = usize::from(!n_ok);
        for (dimension, accepted) in &filter.values {
            let value = key.value(*dimension);
            if !accepted
                .iter()
                .any(|candidate| value.matches_text(candidate))
                && failed != Some(*dimension)
            {
                failures += 1;
                failed = Some(*dimension);
            }
            if failures > 1 {
                break;
            }
        }
        match failures {
            0 => {
                for &dimension in &dimensions {
                    *counts
                        .entry(dimension)
                        .or_default()
                        .entry(Value::of(key, dimension))
                        .or_default() += 1;
                }
            }
            1 => {
                if let Some(dimension) = failed {
                    *counts
                        .entry(dimension)
                        .or_default()
                        .entry(Value::of(key, dimension))
                        .or_default() += 1;
                }
            }
            _ => {}
        }
    }
    counts
}

/// Whether `text` can name a value of a numeric dimension: a whole number for the rep; for the load also a
/// rate (`2.5`, `inf`) or a load's text form (`n=16`, `rate=2.5`, `load=unstated`). Text dimensions take any text.
pub fn is_valid_value(dimension: Dimension, text: &str) -> bool {
    match dimension {
        Dimension::Load => {
            is_whole_number(text)
                || text.parse::<crate::Load>().is_ok()
                || text.parse::<crate::RateRps>().is_ok()
        }
        Dimension::Rep => is_whole_number(text),
        _ => true,
    }
}

/// Digits only, fitting a `u32` (`u32::from_str` also takes a leading `+`, which a filter should not).
pub fn is_whole_number(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|byte| byte.is_ascii_digit())
        && text.parse::<u32>().is_ok()
}

/// Distinct values of every dimension ([`listed_dimensions`]) with their cell counts, numbers ascending then text
/// alphabetically: the filter bar's choices and the `dimensions` of `/api/index`.
pub fn dimension_counts<'a>(
    cells: impl IntoIterator<Item = &'a CellSummary>,
) -> BTreeMap<Dimension, Vec<(Value, u32)>> {
    let cells: Vec<&CellSummary> = cells.into_iter().collect();
    let dimensions = listed_dimensions(&cells);
    let mut counts: BTreeMap<Dimension, BTreeMap<Value, u32>> = BTreeMap::new();
    for cell in cells {
        for &dimension in &dimensions {
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

/// The deployment parameters `filter` names that are neither well known nor stated by any of `cells`: what the
/// API refuses as unknown parameters, and the command line once it has read the data (a misspelt name would
/// otherwise select no cell without a word).
pub fn unstated_params(filter: &DimensionFilter, cells: &[CellSummary]) -> Vec<&'static str> {
    filter
        .values
        .keys()
        .filter_map(|dimension| match dimension {
            Dimension::Param(name) => Some(name.as_str()),
            _ => None,
        })
        .filter(|name| crate::config::param(name).is_none())
        .filter(|name| !cells.iter().any(|cell| cell.key.config.get(name).is_some()))
        .collect()
}

/// The values of each dimension of [`dimension_counts`], without their counts: what a filter is checked against.
pub fn dimension_values(
    counts: &BTreeMap<Dimension, Vec<(Value, u32)>>,
) -> BTreeMap<Dimension, Vec<Value>> {
    counts
        .iter()
        .map(|(dimension, counts)| {
            (
                *dimension,
                counts.iter().map(|(value, _)| value.clone()).collect(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::CellStatus;

    #[test]
    fn many_parameters_fold_behind_one_control_with_the_well_known_ones_shown() {
        let names = [
            "decode_dp",
            "decode_ep",
            "decode_tp",
            "prefill_dp",
            "prefill_ep",
            "prefill_tp",
            "tp",
            "precision",
        ];
        let params: Vec<Dimension> = names
            .iter()
            .map(|name| Dimension::param(name).unwrap())
            .collect();
        let mut dimensions = vec![Dimension::Backend, Dimension::Model];
        dimensions.extend(&params);
        dimensions.push(Dimension::Rep);
        let (shown, folded) = filter_bar(&dimensions);
        // tp and precision are well-known; then the first two others as given.
        let shown_names: Vec<&str> = shown.iter().map(|dimension| dimension.name()).collect();
        assert_eq!(
            shown_names,
            [
                "backend",
                "model",
                "decode_dp",
                "decode_ep",
                "tp",
                "precision",
                "rep"
            ]
        );
        let folded_names: Vec<&str> = folded.iter().map(|dimension| dimension.name()).collect();
        assert_eq!(
            folded_names,
            ["decode_tp", "prefill_dp", "prefill_ep", "prefill_tp"]
        );
        assert_eq!(more_params_label(folded.len(), 0), "4 more parameters");
        assert_eq!(more_params_label(1, 1), "1 more parameter (1 filtering)");
        // Five parameters are all shown: folding one away would hide it for nothing.
        let few: Vec<Dimension> = dimensions[..2]
            .iter()
            .chain(&params[..5])
            .copied()
            .collect();
        assert_eq!(filter_bar(&few), (few.clone(), Vec::new()));
    }

    fn cell(backend: &str, n: u32) -> CellSummary {
        CellSummary::empty(
            CellKey {
                run_id: "r".into(),
                suite: "s".into(),
                phase: "scaling".into(),
                backend: backend.into(),
                model: "m".into(),
                workload: "w".into(),
                config: Default::default(),
                load: crate::Load::Concurrency(n),
                rep: 0,
            },
            CellStatus::Clean,
        )
    }

    #[test]
    fn a_range_from_inf_keeps_the_unbounded_rates_and_writes_inf() {
        let mut cells = [cell("vllm", 1), cell("vllm", 2), cell("vllm", 3)];
        cells[1].key.load = crate::Load::rate(64.0).unwrap();
        cells[2].key.load = crate::Load::rate(f64::INFINITY).unwrap();
        let filter = DimensionFilter {
            load_min: LoadBound::new(f64::INFINITY),
            ..DimensionFilter::default()
        };
        let kept: Vec<String> = filter
            .apply(&cells)
            .iter()
            .map(|cell| cell.key.load.to_string())
            .collect();
        assert_eq!(kept, ["rate=inf"]);
        // Said and written as `inf`, never as a large finite number, and read back from JSON.
        assert_eq!(filter.describe(), "load ≥ inf");
        let json = serde_json::to_string(&filter).unwrap();
        assert!(json.contains(r#""load_min":"inf""#), "{json}");
        assert_eq!(
            serde_json::from_str::<DimensionFilter>(&json).unwrap(),
            filter
        );
        assert_eq!(LoadBound::new(f64::NAN), None);
        assert_eq!(LoadBound::new(0.0), None);
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
        filter.load_min = Some(2.into());
        assert_eq!(filter.apply(&cells).len(), 1);
        filter.accept(Dimension::Load, ["16".into()]).unwrap();
        assert_eq!(filter.apply(&cells).len(), 1);
        assert_eq!(
            filter.accept(Dimension::Rep, ["+1".into()]),
            Err(FilterError {
                dimension: Dimension::Rep,
                value: "+1".into()
            })
        );
    }

    fn keyed(backend: &str, model: &str, n: u32) -> CellSummary {
        let mut cell = cell(backend, n);
        cell.key.model = model.into();
        cell
    }

    #[test]
    fn faceted_counts_count_each_value_under_the_other_dimensions_filters() {
        let cells = [
            keyed("vllm", "a", 1),
            keyed("vllm", "b", 1),
            keyed("vllm", "b", 2),
            keyed("sglang", "a", 1),
            keyed("sglang", "b", 4),
        ];
        let mut filter = DimensionFilter::default();
        filter.accept(Dimension::Backend, ["vllm".into()]).unwrap();
        filter.accept(Dimension::Model, ["b".into()]).unwrap();
        filter.load_max = Some(2.into());
        let counts = faceted_counts(&cells, &filter);
        let text = |value: &str| Value::Text(value.into());
        // Backends among model b, N ≤ 2: vllm 2 (b/1, b/2), sglang 0 (its b cell is at N = 4).
        assert_eq!(counts[&Dimension::Backend].get(&text("vllm")), Some(&2));
        assert_eq!(counts[&Dimension::Backend].get(&text("sglang")), None);
        // Models among vllm, N ≤ 2: a 1, b 2.
        assert_eq!(counts[&Dimension::Model].get(&text("a")), Some(&1));
        assert_eq!(counts[&Dimension::Model].get(&text("b")), Some(&2));
        // N among vllm and b, whatever the range: 1 and 2.
        assert_eq!(
            counts[&Dimension::Load].keys().cloned().collect::<Vec<_>>(),
            [Value::Number(1), Value::Number(2)]
        );
        // Without a filter, faceted counts are the plain counts.
        let plain = faceted_counts(&cells, &DimensionFilter::default());
        assert_eq!(plain[&Dimension::Backend][&text("vllm")], 3);
        assert_eq!(plain[&Dimension::Model][&text("b")], 3);
    }

    #[test]
    fn a_value_no_cell_has_is_named_with_the_valid_values_and_the_one_meant() {
        let known: BTreeMap<Dimension, Vec<Value>> = [
            (
                Dimension::Model,
                vec![
                    Value::Text("llama3.2-3b".into()),
                    Value::Text("mistral-7b".into()),
                ],
            ),
            (Dimension::Load, vec![Value::Number(1), Value::Number(16)]),
        ]
        .into_iter()
        .collect();
        let mut filter = DimensionFilter::default();
        filter
            .accept(
                Dimension::Model,
                ["Mistral-7B".into(), "nope".into(), "llama3.2-3b".into()],
            )
            .unwrap();
        filter
            .accept(Dimension::Load, ["16".into(), "3".into()])
            .unwrap();
        let unknown = filter.unknown_values(&known);
        assert_eq!(
            unknown
                .iter()
                .map(|value| (value.value.as_str(), value.suggestion.as_deref()))
                .collect::<Vec<_>>(),
            [
                ("Mistral-7B", Some("mistral-7b")),
                ("nope", None),
                ("3", None)
            ]
        );
        assert_eq!(
            unknown[0].to_string(),
            "model has no value `Mistral-7B` in this data (did you mean `mistral-7b`?); its values: llama3.2-3b, mistral-7b"
        );
        assert_eq!(unknown[1].reason(), "no cell has this model");
        filter.without(&unknown);
        assert_eq!(filter.values[&Dimension::Model], ["llama3.2-3b"]);
        assert_eq!(filter.values[&Dimension::Load], ["16"]);
        filter.without(&filter.clone().unknown_values(&known));
        let mut only_unknown = DimensionFilter::default();
        only_unknown
            .accept(Dimension::Model, ["nope".into()])
            .unwrap();
        let unknown = only_unknown.unknown_values(&known);
        only_unknown.without(&unknown);
        assert!(only_unknown.is_empty());
    }

    #[test]
    fn counts_list_numbers_numerically() {
        let cells = [cell("vllm", 16), cell("vllm", 2), cell("sglang", 2)];
        let counts = dimension_counts(&cells);
        assert_eq!(
            counts[&Dimension::Load],
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
