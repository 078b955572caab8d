//! The head-to-head comparison: two values `a`, `b` of one dimension (`by`) contrasted per value of another
//! (`per`), on pairs of configurations, with the paired statistics of [`crate::paired`] and a verdict that
//! claims a direction only when Holm's p is below α and the bootstrap interval excludes zero
//! (docs/definitions.md#head-to-head).
//!
//! A pair is one configuration: its two sides agree on every dimension except `by` and the repeated-measurement
//! dimensions ([`REPEATED`]: reps, runs, phases), whose cells are averaged within each side, so that one
//! configuration is never counted as several independent pairs. The ledger and the what-if toggles apply as in
//! every view: a `comparison` entry applies whenever its cells fall on the two sides ([`applied_comparisons`]).
//! Every pair that cannot be formed is kept with the reason. What else differs between the runs behind the two
//! sides (driver, torch, context ceiling, …) is [`confounders`].

pub mod confounders;
pub mod text;

use crate::explore::{applied_comparisons, inclusion_of};
use crate::key::{CellKey, Dimension, Value};
use crate::metric::Metric;
use crate::paired::{
    BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, Wilcoxon, bootstrap_mean_ci, holm, rank_biserial, wilcoxon,
};
use crate::query::{CompareChoice, Endpoint, Query, QueryError, WhatIf};
use crate::stat::Stat;
use crate::status::CellStatus;
use crate::summary::{CellSummary, Inclusion};
use crate::view_state::ViewState;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The metrics a comparison can be made on.
pub const COMPARABLE: [Metric; 24] = [
    Metric::Stat(Stat::Efficiency),
    Metric::Stat(Stat::P95Multiplier),
    Metric::Stat(Stat::AggregateTps),
    Metric::Stat(Stat::P50WallMs),
    Metric::Stat(Stat::P95WallMs),
    Metric::Stat(Stat::P99WallMs),
    Metric::Stat(Stat::P50TtftMs),
    Metric::Stat(Stat::P95TtftMs),
    Metric::Stat(Stat::MeanTtftMs),
    Metric::Stat(Stat::P99TtftMs),
    Metric::Stat(Stat::MeanTpotMs),
    Metric::Stat(Stat::P50TpotMs),
    Metric::Stat(Stat::P95TpotMs),
    Metric::Stat(Stat::P99TpotMs),
    Metric::Stat(Stat::MeanItlMs),
    Metric::Stat(Stat::P50ItlMs),
    Metric::Stat(Stat::P95ItlMs),
    Metric::Stat(Stat::P99ItlMs),
    Metric::Stat(Stat::TotalTps),
    Metric::Stat(Stat::P50InteractivityTps),
    Metric::Stat(Stat::RequestThroughputRps),
    Metric::Stat(Stat::GoodputRps),
    Metric::Stat(Stat::OutputTpsPerAccelerator),
    Metric::SloCapacity,
];

/// The dimensions that repeat a measurement of one configuration rather than change it (docs/definitions.md,
/// "Head-to-head"): a pair averages over them unless `by` or `per` names one.
pub const REPEATED: [Dimension; 3] = [Dimension::Rep, Dimension::Run, Dimension::Phase];

/// The [`REPEATED`] dimensions a comparison by `by`, grouped `per`, averages within a pair.
pub fn repeated_dimensions(by: Dimension, per: Option<Dimension>) -> Vec<Dimension> {
    REPEATED
        .into_iter()
        .filter(|dimension| *dimension != by && per != Some(*dimension))
        .collect()
}

pub use crate::query::{CONTRASTABLE, is_contrastable};

/// A comparison that cannot be made, naming the parameter and the valid choices.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    #[error("`{parameter}` must be one of {choices}, got `{value}`")]
    /// A value that is none of the parameter's choices.
    UnknownChoice {
        /// The parameter.
        parameter: &'static str,
        /// The value given.
        value: String,
        /// The choices, joined.
        choices: String,
    },
    #[error(
        "`{parameter}` = `{value}` is not a {dimension} in the data{hint}; the {dimension} values are {choices}"
    )]
    /// A side's value that no cell of the data has in the compared dimension.
    AbsentValue {
        /// `a` or `b`.
        parameter: &'static str,
        /// The compared dimension.
        dimension: &'static str,
        /// The value given.
        value: String,
        /// The dimension's values in the data, joined.
        choices: String,
        /// ` (did you mean `vllm`?)` when a value is close, else empty.
        hint: String,
    },
    #[error("`a` and `b` are both `{0}`: a comparison needs two different values")]
    /// Both sides are the same value.
    SameSides(String),
    #[error("`per` cannot be `{0}`, the dimension being compared")]
    /// The groups are the compared dimension.
    PerIsBy(&'static str),
    #[error("`{0}` is required: the two values to compare")]
    /// A side is not given.
    Missing(&'static str),
    /// A parameter the comparison does not take, or a value it cannot use.
    #[error(transparent)]
    Query(#[from] QueryError),
}

/// A comparison as a query asks for it: what to compare, which cells, which toggles.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareQuery {
    /// What to compare.
    pub spec: CompareSpec,
    /// Which cells.
    pub filter: crate::filter::DimensionFilter,
    /// The what-if toggles.
    pub what_if: WhatIf,
}

/// Reads a comparison from decoded name/value pairs, as `/api/compare` takes them ([`Endpoint::Compare`]):
/// `by`, `a`, `b`, `per` (or `none`), `metric`, `alpha`, `include`, `omit`, and the dimension filters.
pub fn parse_query(pairs: &[(String, String)]) -> Result<CompareQuery, CompareError> {
    CompareQuery::from_query(&Query::from_pairs(pairs, Endpoint::Compare)?)
}

impl CompareQuery {
    /// The comparison a typed query asks for: its choices (`a` and `b` required), its metric (one a comparison
    /// takes), its filters and toggles.
    pub fn from_query(query: &Query) -> Result<CompareQuery, CompareError> {
        let choice = &query.compare;
        // A query read from text has these checked already; one built from typed values (the CLI) is checked here.
        contrastable_dimension(choice.by.name())?;
        if let Some(per) = choice.per {
            group_dimension(per.name())?;
        }
        if !(choice.alpha > 0.0 && choice.alpha < 1.0) {
            return Err(CompareError::Query(QueryError::Bad(
                crate::query::IgnoredParameter {
                    name: "alpha".into(),
                    value: choice.alpha.to_string(),
                    reason: "expected a number between 0 and 1".into(),
                },
            )));
        }
        Ok(CompareQuery {
            spec: CompareSpec {
                by: choice.by,
                a: choice.a.clone().ok_or(CompareError::Missing("a"))?,
                b: choice.b.clone().ok_or(CompareError::Missing("b"))?,
                per: choice.per,
                metric: comparable(query.metric)?,
                alpha: choice.alpha,
                slo: query.slo.clone(),
            },
            filter: query.filter.clone(),
            what_if: query.what_if,
        })
    }

    /// Checks the query against the cells and compares: the one path of the CLI and the API.
    pub fn run(&self, cells: &[CellSummary]) -> Result<Comparison, CompareError> {
        self.spec.validate(cells)?;
        let slice = self.filter.apply(cells);
        Ok(compare(&slice, &self.spec, &self.what_if))
    }
}

/// What the Compare view of `state` compares over `cells`: its choices, with `a` and `b` defaulting to the two
/// values of `by` with the most cells (ties in name order), and efficiency when the view's metric is not one a
/// comparison takes.
pub fn spec_of_view(state: &ViewState, cells: &[CellSummary]) -> Result<CompareSpec, CompareError> {
    let choice = &state.compare;
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for cell in cells {
        *counts
            .entry(cell.key.value(choice.by).to_string())
            .or_default() += 1;
    }
    let mut common: Vec<(String, usize)> = counts.into_iter().collect();
    crate::order::sort_stable_by_key(&mut common, |(_, count)| std::cmp::Reverse(*count));
    let mut defaults = common.into_iter().map(|(value, _)| value);
    let a = match &choice.a {
        Some(a) => a.clone(),
        None => defaults
            .by_ref()
            .find(|value| Some(value) != choice.b.as_ref())
            .ok_or(CompareError::Missing("a"))?,
    };
    let b = match &choice.b {
        Some(b) => b.clone(),
        None => defaults
            .find(|value| *value != a)
            .ok_or(CompareError::Missing("b"))?,
    };
    let metric = if COMPARABLE.contains(&state.metric) {
        state.metric
    } else {
        Metric::Stat(Stat::Efficiency)
    };
    Ok(CompareSpec {
        by: choice.by,
        a,
        b,
        per: choice.per,
        metric,
        alpha: choice.alpha,
        slo: state.slo.clone(),
    })
}

/// The Compare view of `state` over the working cells: its spec checked against the cells, then the comparison
/// of the view's slice (filters and what-if toggles as in every view).
pub fn compare_view(state: &ViewState, cells: &[CellSummary]) -> Result<Comparison, CompareError> {
    let query = CompareQuery {
        spec: spec_of_view(state, cells)?,
        filter: state.filter.clone(),
        what_if: state.what_if,
    };
    query.run(cells)
}

/// The Compare view a Matrix or Curves view hands over ("compare these"): its filters and toggles, contrasting
/// the dimension that splits it into colours or grids (backend when that one cannot be contrasted), one group
/// per column or facet. A filter that keeps exactly two values of that dimension names the sides.
pub fn compare_these(state: &ViewState) -> ViewState {
    use crate::view_state::View;
    let contrastable = is_contrastable;
    let (split, group) = match state.view {
        View::Matrix => (Some(state.grid), Some(state.cols)),
        View::Curves => (Some(state.color), state.facet),
        _ => (None, None),
    };
    let by = split
        .filter(|by| contrastable(*by))
        .unwrap_or(state.compare.by);
    let per = group.filter(|per| contrastable(*per) && *per != by);
    let (a, b) = match state.filter.values.get(&by).map(Vec::as_slice) {
        Some([a, b]) => (Some(a.clone()), Some(b.clone())),
        _ => (None, None),
    };
    let metric = if COMPARABLE.contains(&state.metric) {
        state.metric
    } else {
        Metric::Stat(Stat::Efficiency)
    };
    ViewState {
        view: View::Compare,
        metric,
        compare: CompareChoice {
            by,
            a,
            b,
            per,
            alpha: state.compare.alpha,
        },
        ..state.clone()
    }
}

/// The app's link (without the origin) to the Compare view of one group of a comparison asked by `query`: the
/// query's choices and slice as a view reads them, narrowed to the group's value of `per`.
pub fn group_link(query: &Query, group: &Group) -> String {
    let mut view = query.clone();
    view.format = None;
    if let (Some(per), Some(value)) = (query.compare.per, &group.group) {
        view.filter.values.insert(per, vec![value.to_string()]);
    }
    format!("?view=compare&{}", view.to_query())
}

/// Reads a metric name for a comparison.
pub fn comparable_metric(name: &str) -> Result<Metric, CompareError> {
    let unknown = || CompareError::UnknownChoice {
        parameter: "metric",
        value: name.into(),
        choices: COMPARABLE.map(Metric::name).join(", "),
    };
    Metric::parse(name).ok_or_else(unknown).and_then(comparable)
}

/// The metric, if a comparison can be made on it.
fn comparable(metric: Metric) -> Result<Metric, CompareError> {
    if COMPARABLE.contains(&metric) {
        Ok(metric)
    } else {
        Err(CompareError::UnknownChoice {
            parameter: "metric",
            value: metric.name().into(),
            choices: COMPARABLE.map(Metric::name).join(", "),
        })
    }
}

/// Reads the `by` dimension of a comparison: a dimension of [`CONTRASTABLE`] or a deployment parameter.
pub fn contrastable_dimension(name: &str) -> Result<Dimension, CompareError> {
    Dimension::parse(name)
        .filter(|dimension| is_contrastable(*dimension))
        .ok_or_else(|| CompareError::UnknownChoice {
            parameter: "by",
            value: name.into(),
            choices: CONTRASTABLE.map(Dimension::name).join(", "),
        })
}

/// Reads the `per` dimension (`none` for one group).
pub fn group_dimension(name: &str) -> Result<Option<Dimension>, CompareError> {
    if name == "none" {
        return Ok(None);
    }
    Dimension::parse(name)
        .filter(|dimension| is_contrastable(*dimension))
        .map(Some)
        .ok_or_else(|| CompareError::UnknownChoice {
            parameter: "per",
            value: name.into(),
            choices: format!("{}, none", CONTRASTABLE.map(Dimension::name).join(", ")),
        })
}

/// What to compare.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareSpec {
    /// The dimension whose two values are compared.
    pub by: Dimension,
    /// The first side's value.
    pub a: String,
    /// The second side's value.
    pub b: String,
    /// One group per value of this dimension; `None`: one group.
    pub per: Option<Dimension>,
    /// The metric compared.
    pub metric: Metric,
    /// Significance level of the verdict (Holm-adjusted p below it).
    pub alpha: f64,
    /// The SLO an SLO-capacity comparison judges by (its text form); empty is the default SLO.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub slo: String,
}

impl CompareSpec {
    /// The dimensions a pair's two sides agree on: the configuration (the group's dimension included), with
    /// every deployment parameter `params` names (those every compared cell states) but the one compared.
    pub fn match_dimensions(&self, params: &[Dimension]) -> Vec<Dimension> {
        let repeated = self.repeated_dimensions();
        Dimension::with_params(params)
            .into_iter()
            .filter(|dimension| *dimension != self.by && !repeated.contains(dimension))
            .collect()
    }

    /// The SLO a capacity comparison judges by: the spec's, else the default.
    pub fn slo(&self) -> crate::slo::Slo {
        crate::slo::Slo::or_default(&self.slo)
    }

    /// The dimensions whose values are repeated measurements of one configuration, averaged within a pair:
    /// reps, runs and phases, unless the comparison contrasts or groups by one of them. Counting them as
    /// separate pairs would treat one configuration as several independent observations.
    pub fn repeated_dimensions(&self) -> Vec<Dimension> {
        repeated_dimensions(self.by, self.per)
    }

    /// Checks the spec against the cells it will compare: `a` and `b` differ and are values of `by` there,
    /// and `per` is not `by`.
    pub fn validate(&self, cells: &[CellSummary]) -> Result<(), CompareError> {
        if self.a == self.b {
            return Err(CompareError::SameSides(self.a.clone()));
        }
        if self.per == Some(self.by) {
            return Err(CompareError::PerIsBy(self.by.name()));
        }
        let values: Vec<String> = crate::order::sorted_distinct(
            cells.iter().map(|cell| cell.key.value(self.by).to_string()),
        );
        for (parameter, value) in [("a", &self.a), ("b", &self.b)] {
            if !values.contains(value) {
                return Err(CompareError::AbsentValue {
                    parameter,
                    dimension: self.by.name(),
                    value: value.clone(),
                    choices: values.join(", "),
                    hint: crate::suggest::hint(value, values.iter().map(String::as_str)),
                });
            }
        }
        Ok(())
    }

    /// Efficiency and the p95 multiplier are 1 by definition at the baseline load (N = 1, or the series' lowest
    /// load): such pairs say nothing. At an offered rate efficiency is achieved/offered, which is not.
    fn compares_cell(&self, cell: &CellSummary) -> bool {
        let baseline = cell.baseline_load.unwrap_or(crate::Load::Concurrency(1));
        let trivial = match self.metric {
            Metric::Stat(Stat::Efficiency) => cell.key.load.kind() != crate::LoadKind::Rate,
            Metric::Stat(Stat::P95Multiplier) => true,
            _ => false,
        };
        cell.key.load != baseline || !trivial
    }
}

/// Which side of the comparison a cell is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The side of `a`.
    A,
    /// The side of `b`.
    B,
}

/// One formed pair: the coordinates both cells share, each side's rep mean, and the cells behind them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    /// The dimensions and values both sides share.
    pub coordinates: Vec<(Dimension, Value)>,
    /// Side a's value (the mean of its cells).
    pub a: f64,
    /// Side b's value (the mean of its cells).
    pub b: f64,
    /// a − b.
    pub delta: f64,
    /// The cells behind side a.
    pub a_cells: Vec<CellKey>,
    /// The cells behind side b.
    pub b_cells: Vec<CellKey>,
}

/// Why a pair could not be formed, for the side that lacks a value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum DropReason {
    /// Left out by these ledger entries.
    Excluded {
        /// The side lacking a value.
        side: Side,
        /// The ledger entries.
        ledger: Vec<String>,
    },
    /// Partial cells left out by the toggle.
    PartialLeftOut {
        /// The side lacking a value.
        side: Side,
    },
    /// Skipped cells (sentinel only).
    Skipped {
        /// The side lacking a value.
        side: Side,
    },
    /// Cells planned but not run.
    NotRun {
        /// The side lacking a value.
        side: Side,
    },
    /// Every row failed.
    Failed {
        /// The side lacking a value.
        side: Side,
    },
    /// No cell with these coordinates on that side.
    Missing {
        /// The side lacking a value.
        side: Side,
    },
    /// Cells with data but no value of the metric (e.g. no N = 1 baseline for efficiency).
    NoValue {
        /// The side lacking a value.
        side: Side,
    },
    /// The SLO holds at every load measured: the capacity is only a lower bound.
    CapacityNotReached {
        /// The side lacking a value.
        side: Side,
    },
    /// The SLO holds at no load measured.
    CapacityNeverMet {
        /// The side lacking a value.
        side: Side,
    },
}

impl DropReason {
    /// The side that lacks a value.
    pub fn side(&self) -> Side {
        match self {
            DropReason::Excluded { side, .. }
            | DropReason::PartialLeftOut { side }
            | DropReason::Skipped { side }
            | DropReason::NotRun { side }
            | DropReason::Failed { side }
            | DropReason::Missing { side }
            | DropReason::NoValue { side }
            | DropReason::CapacityNotReached { side }
            | DropReason::CapacityNeverMet { side } => *side,
        }
    }

    /// The reason in words, naming the side's value: `excluded by the ledger (mistral-long-prefill-tokenizer)
    /// on the sglang side`.
    pub fn describe(&self, spec: &CompareSpec) -> String {
        let side = match self.side() {
            Side::A => &spec.a,
            Side::B => &spec.b,
        };
        let what = match self {
            DropReason::Excluded { ledger, .. } => {
                format!("excluded by the ledger ({})", ledger.join(", "))
            }
            DropReason::PartialLeftOut { .. } => "partial cells left out".into(),
            DropReason::Skipped { .. } => "skipped".into(),
            DropReason::NotRun { .. } => "not run".into(),
            DropReason::Failed { .. } => "every row failed".into(),
            DropReason::Missing { .. } => "no such cell".into(),
            DropReason::NoValue { .. } => format!("no {} value", spec.metric.label()),
            DropReason::CapacityNotReached { .. } => {
                "SLO capacity not reached within the measured loads".into()
            }
            DropReason::CapacityNeverMet { .. } => "SLO never met".into(),
        };
        format!("{what} on the {side} side")
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// A pair that could not be formed, and why.
pub struct DroppedPair {
    /// The dimensions and values the pair would share.
    pub coordinates: Vec<(Dimension, Value)>,
    /// The reason on the first side that lacks a value (a, else b).
    pub reason: DropReason,
    /// Both sides lack a value for the same reason (a ledger entry takes out both sides' cells).
    pub both_sides: bool,
}

impl DroppedPair {
    /// `excluded by the ledger (mistral-long-prefill-tokenizer) on both sides`.
    pub fn describe(&self, spec: &CompareSpec) -> String {
        let text = self.reason.describe(spec);
        if !self.both_sides {
            return text;
        }
        let side = match self.reason.side() {
            Side::A => &spec.a,
            Side::B => &spec.b,
        };
        text.replace(&format!("on the {side} side"), "on both sides")
    }
}

/// What a group's numbers support.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Side a is better: Holm's p below α and the interval excluding zero.
    AEdge,
    /// Side b is better, on the same terms.
    BEdge,
    /// Neither side is shown better.
    NoClearDifference,
    /// So few pairs that even the most lopsided outcome could not reach p < α.
    TooFewPairs,
    /// No pair was formed.
    NoPairs,
}

impl Verdict {
    /// The verdict's name in data and attributes: `a_edge`, `too_few_pairs`, ….
    pub fn name(self) -> &'static str {
        match self {
            Verdict::AEdge => "a_edge",
            Verdict::BEdge => "b_edge",
            Verdict::NoClearDifference => "no_clear_difference",
            Verdict::TooFewPairs => "too_few_pairs",
            Verdict::NoPairs => "no_pairs",
        }
    }

    /// `vllm edge (higher parallel efficiency)`, `sglang edge (lower p95 latency)`, `no clear difference`.
    pub fn describe(self, spec: &CompareSpec) -> String {
        let direction = if spec.metric.lower_is_better() {
            "lower"
        } else {
            "higher"
        };
        match self {
            Verdict::AEdge => format!("{} edge ({direction} {})", spec.a, spec.metric.label()),
            Verdict::BEdge => format!("{} edge ({direction} {})", spec.b, spec.metric.label()),
            Verdict::NoClearDifference => "no clear difference".into(),
            Verdict::TooFewPairs => "too few pairs to claim a difference".into(),
            Verdict::NoPairs => "no pairs".into(),
        }
    }
}

/// One group's pairs, statistics and verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// The group's value of `per`, `None` for one group.
    pub group: Option<Value>,
    /// How many pairs were formed.
    pub n_pairs: u32,
    /// The mean of the pairs' a − b.
    pub mean_delta: Option<f64>,
    /// The median of the pairs' a − b.
    pub median_delta: Option<f64>,
    /// Percentile bootstrap 95% interval of the mean delta.
    pub ci: Option<(f64, f64)>,
    /// The Wilcoxon signed-rank test of the deltas.
    pub wilcoxon: Option<Wilcoxon>,
    /// Holm-adjusted across the groups with a p-value.
    pub holm_p: Option<f64>,
    /// Matched-pairs rank-biserial correlation, positive when a's values are larger.
    pub effect_size: Option<f64>,
    /// For absolute metrics (times, throughputs, tokens): the geometric mean of the pairs' a / b, over the pairs
    /// where both are positive.
    pub ratio: Option<f64>,
    /// Pairs where a is better, worse, equal (better = higher, or lower for latencies and multipliers).
    pub wins: u32,
    /// Pairs where a is worse.
    pub losses: u32,
    /// Pairs where both are equal.
    pub ties: u32,
    /// What the numbers support.
    pub verdict: Verdict,
    /// The pairs formed.
    pub pairs: Vec<Pair>,
    /// The pairs that could not be formed, with why.
    pub dropped: Vec<DroppedPair>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// A comparison: its spec and one group per value of `per`.
pub struct Comparison {
    /// What was compared.
    pub spec: CompareSpec,
    /// One group per value of `per`, in value order.
    pub groups: Vec<Group>,
}

/// Compares `spec.a` with `spec.b` over `cells` (already filtered by the view), under the what-if toggles.
pub fn compare(cells: &[&CellSummary], spec: &CompareSpec, what_if: &WhatIf) -> Comparison {
    let side_of = |cell: &CellSummary| -> Option<Side> {
        let value = cell.key.value(spec.by);
        if value.matches_text(&spec.a) {
            Some(Side::A)
        } else if value.matches_text(&spec.b) {
            Some(Side::B)
        } else {
            None
        }
    };
    let sides: Vec<&CellSummary> = cells
        .iter()
        .copied()
        .filter(|cell| side_of(cell).is_some() && spec.compares_cell(cell))
        .collect();
    let inclusion = inclusion_of(what_if, applied_comparisons(&sides, side_of));
    // A parameter some compared cell does not state cannot tell its deployments apart (an engine's own setting
    // when engines are compared), so pairs agree on the parameters every compared cell states.
    let mut dimensions = spec.match_dimensions(&Dimension::shared_params(
        sides.iter().map(|cell| &cell.key),
    ));
    // A capacity is read over a configuration's loads: its sides pair across them.
    if spec.metric == Metric::SloCapacity {
        dimensions.retain(|dimension| *dimension != Dimension::Load);
    }
    // Group → coordinates → the cells of each side.
    type Coordinates = Vec<(Dimension, Value)>;
    let mut grouped: BTreeMap<Option<Value>, BTreeMap<Coordinates, [Vec<&CellSummary>; 2]>> =
        BTreeMap::new();
    for cell in &sides {
        let group = spec.per.map(|per| Value::of(&cell.key, per));
        let coordinates: Coordinates = dimensions
            .iter()
            .map(|dimension| (*dimension, Value::of(&cell.key, *dimension)))
            .collect();
        let index = usize::from(side_of(cell) == Some(Side::B));
        grouped
            .entry(group)
            .or_default()
            .entry(coordinates)
            .or_default()[index]
            .push(cell);
    }
    let mut groups: Vec<Group> = grouped
        .into_iter()
        .map(|(group, by_coordinates)| {
            let mut pairs = Vec::new();
            let mut dropped = Vec::new();
            for (coordinates, [a_cells, b_cells]) in by_coordinates {
                let a = side_value(&a_cells, spec, &inclusion, Side::A);
                let b = side_value(&b_cells, spec, &inclusion, Side::B);
                match (a, b) {
                    (Ok((a, a_cells)), Ok((b, b_cells))) => pairs.push(Pair {
                        coordinates,
                        a,
                        b,
                        delta: a - b,
                        a_cells,
                        b_cells,
                    }),
                    (a, b) => {
                        let both_sides = match (&a, &b) {
                            (Err(a), Err(b)) => {
                                std::mem::discriminant(a) == std::mem::discriminant(b)
                            }
                            _ => false,
                        };
                        if let Some(reason) = a.err().or(b.err()) {
                            dropped.push(DroppedPair {
                                coordinates,
                                reason,
                                both_sides,
                            });
                        }
                    }
                }
            }
            group_statistics(group, pairs, dropped, spec)
        })
        .collect();
    // Holm across the family of groups that have a p-value.
    let family: Vec<(usize, f64)> = groups
        .iter()
        .enumerate()
        .filter_map(|(index, group)| Some((index, group.wilcoxon?.p_value?)))
        .collect();
    let adjusted = holm(&family.iter().map(|(_, p)| *p).collect::<Vec<_>>());
    for ((index, _), holm_p) in family.into_iter().zip(adjusted) {
        groups[index].holm_p = Some(holm_p);
    }
    for group in &mut groups {
        group.verdict = verdict(group, spec);
    }
    Comparison {
        spec: spec.clone(),
        groups,
    }
}

/// One side's value at one set of coordinates: the mean over the reps of its admitted cells with a value, or
/// why there is none.
fn side_value(
    cells: &[&CellSummary],
    spec: &CompareSpec,
    inclusion: &Inclusion,
    side: Side,
) -> Result<(f64, Vec<CellKey>), DropReason> {
    if spec.metric == Metric::SloCapacity {
        return side_capacity(cells, spec, inclusion, side);
    }
    let metric = spec.metric;
    let admitted: Vec<(&CellSummary, f64)> = cells
        .iter()
        .filter(|cell| inclusion.admits(cell))
        .filter_map(|cell| Some((*cell, metric.of_cell(cell)?)))
        .collect();
    if !admitted.is_empty() {
        let mean = admitted.iter().map(|(_, value)| value).sum::<f64>() / admitted.len() as f64;
        return Ok((
            mean,
            admitted.iter().map(|(cell, _)| cell.key.clone()).collect(),
        ));
    }
    Err(why_no_value(cells, inclusion, side))
}

/// Why a side's cells give no value: none there, left out (by the ledger or the partial toggle), or none with
/// data, else no value of the metric.
fn why_no_value(cells: &[&CellSummary], inclusion: &Inclusion, side: Side) -> DropReason {
    let left_out: Vec<&&CellSummary> = cells
        .iter()
        .filter(|cell| !inclusion.admits(cell))
        .collect();
    if cells.is_empty() {
        DropReason::Missing { side }
    } else if let Some(cell) = left_out.iter().find(|cell| !cell.excluded.is_empty()) {
        DropReason::Excluded {
            side,
            ledger: cell.excluded.clone(),
        }
    } else if !left_out.is_empty() {
        DropReason::PartialLeftOut { side }
    } else if cells.iter().all(|cell| cell.status == CellStatus::Skipped) {
        DropReason::Skipped { side }
    } else if cells.iter().all(|cell| cell.status == CellStatus::NotRun) {
        DropReason::NotRun { side }
    } else if cells.iter().all(|cell| !cell.has_data()) {
        DropReason::Failed { side }
    } else {
        DropReason::NoValue { side }
    }
}

/// One side's SLO capacity over the loads of its admitted cells (their reps within each load), or why there is
/// none: a capacity not reached within the loads, or never met, is no number to pair.
fn side_capacity(
    cells: &[&CellSummary],
    spec: &CompareSpec,
    inclusion: &Inclusion,
    side: Side,
) -> Result<(f64, Vec<CellKey>), DropReason> {
    let admitted: Vec<&CellSummary> = cells
        .iter()
        .copied()
        .filter(|cell| inclusion.admits(cell) && cell.has_data())
        .collect();
    if admitted.is_empty() {
        return Err(why_no_value(cells, inclusion, side));
    }
    let keys = || admitted.iter().map(|cell| cell.key.clone()).collect();
    match spec.slo().capacity_of(&admitted).0 {
        crate::slo::Outcome::Capacity { load, .. } => Ok((load, keys())),
        crate::slo::Outcome::NotReached { .. } => Err(DropReason::CapacityNotReached { side }),
        crate::slo::Outcome::NeverMet { .. } => Err(DropReason::CapacityNeverMet { side }),
        crate::slo::Outcome::Unjudged { .. } => Err(DropReason::NoValue { side }),
    }
}

fn group_statistics(
    group: Option<Value>,
    pairs: Vec<Pair>,
    dropped: Vec<DroppedPair>,
    spec: &CompareSpec,
) -> Group {
    let deltas: Vec<f64> = pairs.iter().map(|pair| pair.delta).collect();
    let mean_delta = (!deltas.is_empty()).then(|| deltas.iter().sum::<f64>() / deltas.len() as f64);
    let median_delta = {
        let mut sorted = deltas.clone();
        crate::order::sort_floats(&mut sorted);
        crate::stats::quantile_linear(&sorted, 0.5)
    };
    let test = (!deltas.is_empty()).then(|| wilcoxon(&deltas));
    let better = |delta: f64| {
        if spec.metric.lower_is_better() {
            delta < 0.0
        } else {
            delta > 0.0
        }
    };
    Group {
        group,
        n_pairs: pairs.len() as u32,
        mean_delta,
        median_delta,
        ci: bootstrap_mean_ci(&deltas, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED),
        effect_size: test.as_ref().and_then(rank_biserial),
        ratio: spec
            .metric
            .is_absolute()
            .then(|| geometric_mean_ratio(&pairs))
            .flatten(),
        wilcoxon: test,
        holm_p: None,
        wins: deltas.iter().filter(|delta| better(**delta)).count() as u32,
        losses: deltas
            .iter()
            .filter(|delta| **delta != 0.0 && !better(**delta))
            .count() as u32,
        ties: deltas.iter().filter(|delta| **delta == 0.0).count() as u32,
        verdict: Verdict::NoPairs,
        pairs,
        dropped,
    }
}

/// The geometric mean of a / b over the pairs where both sides are positive.
fn geometric_mean_ratio(pairs: &[Pair]) -> Option<f64> {
    let logs: Vec<f64> = pairs
        .iter()
        .filter(|pair| pair.a > 0.0 && pair.b > 0.0)
        .map(|pair| (pair.a / pair.b).ln())
        .collect();
    (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

/// The smallest two-sided Wilcoxon p-value `n` non-zero paired differences can give: every difference of one
/// sign, probability 2 / 2^n (zeros are dropped before the test, as SciPy's default does).
pub fn smallest_attainable_p(nonzero_pairs: u32) -> f64 {
    (2.0 / 2f64.powi(nonzero_pairs.min(1_000) as i32)).min(1.0)
}

impl Group {
    /// The smallest p-value the group's pairs could give, whatever their values.
    pub fn smallest_attainable_p(&self) -> f64 {
        smallest_attainable_p(self.wins + self.losses)
    }

    /// The verdict in words; a group too small to reach α says the smallest p it could reach.
    pub fn describe_verdict(&self, spec: &CompareSpec) -> String {
        let text = self.verdict.describe(spec);
        if self.verdict == Verdict::TooFewPairs {
            format!(
                "{text} (smallest attainable p = {})",
                text::p_value(Some(self.smallest_attainable_p()))
            )
        } else {
            text
        }
    }
}

/// A direction only when Holm's p is below α and the interval excludes zero; "too few pairs" when no outcome of
/// this many pairs could reach α.
fn verdict(group: &Group, spec: &CompareSpec) -> Verdict {
    let (Some(mean), Some((low, high))) = (group.mean_delta, group.ci) else {
        return Verdict::NoPairs;
    };
    if group.wins + group.losses == 0 {
        return Verdict::NoClearDifference;
    }
    if group.smallest_attainable_p() >= spec.alpha {
        return Verdict::TooFewPairs;
    }
    let significant = group.holm_p.is_some_and(|p| p < spec.alpha);
    if !significant || (low <= 0.0 && high >= 0.0) {
        return Verdict::NoClearDifference;
    }
    let a_better = if spec.metric.lower_is_better() {
        mean < 0.0
    } else {
        mean > 0.0
    };
    if a_better {
        Verdict::AEdge
    } else {
        Verdict::BEdge
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::A => "a",
            Side::B => "b",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exclusions::ExclusionScope;
    use crate::stats::CellStats;
    use crate::summary::fill_scaling;

    fn cell(backend: &str, workload: &str, model: &str, n: u32, rep: u32, tps: f64) -> CellSummary {
        let mut cell = CellSummary::empty(
            CellKey {
                run_id: format!("run-{backend}"),
                suite: "s".into(),
                phase: "scaling".into(),
                backend: backend.into(),
                model: model.into(),
                workload: workload.into(),
                config: Default::default(),
                load: crate::Load::Concurrency(n),
                rep,
            },
            CellStatus::Clean,
        );
        cell.rows = 10;
        cell.ok_rows = 10;
        cell.expected_rows = Some(10);
        cell.stats = CellStats {
            ok_rows: 10,
            aggregate_tps: Some(tps),
            p95_wall_ms: Some(1000.0 / tps),
            ..CellStats::default()
        };
        cell
    }

    /// Two backends, two workloads, four models, N = 1, 2, 4, two reps; `a` scales better on "w1".
    fn sweep() -> Vec<CellSummary> {
        let mut cells = Vec::new();
        for (backend, edge) in [("a", 1.0), ("b", 0.0)] {
            for workload in ["w1", "w2"] {
                for (position, model) in ["m1", "m2", "m3", "m4"].into_iter().enumerate() {
                    for rep in 0..2 {
                        for n in [1, 2, 4] {
                            let efficiency = 0.9 - 0.1 * f64::from(n)
                                + if workload == "w1" { 0.05 * edge } else { 0.0 }
                                + 0.003 * position as f64
                                + 0.001 * f64::from(rep);
                            let tps = 100.0 * f64::from(n) * if n == 1 { 1.0 } else { efficiency };
                            cells.push(cell(backend, workload, model, n, rep, tps));
                        }
                    }
                }
            }
        }
        fill_scaling(&mut cells);
        cells
    }

    /// SLO capacity pairs each configuration's two sides over their loads. Under p99 TTFT ≤ 100 ms, with p99
    /// TTFT = 50 × N (a) and 60 × N (b) ms at N = 1, 2, 4: a holds to N = 2 (100 ms) and fails at 4 (200 ms),
    /// so its capacity is 2 (exactly at the bound); b holds at 1 (60 ms) and fails at 2 (120 ms): 1 + (100 −
    /// 60) / (120 − 60) = 5/3. A model whose b side meets the SLO nowhere is dropped, and says so.
    #[test]
    fn slo_capacity_pairs_configurations_across_their_loads() {
        let mut cells = Vec::new();
        for (backend, per_n_ms) in [("a", 50.0), ("b", 60.0)] {
            for model in ["m1", "m2", "m3"] {
                for n in [1, 2, 4] {
                    let mut cell = cell(backend, "w1", model, n, 0, 100.0);
                    let slow = backend == "b" && model == "m3";
                    cell.stats.p99_ttft_ms =
                        Some(if slow { 500.0 } else { per_n_ms * f64::from(n) });
                    cells.push(cell);
                }
            }
        }
        let spec = CompareSpec {
            metric: Metric::SloCapacity,
            per: None,
            slo: "p99_ttft_ms<=100".into(),
            ..spec()
        };
        let refs: Vec<&CellSummary> = cells.iter().collect();
        let comparison = compare(&refs, &spec, &WhatIf::DEFAULT);
        let group = &comparison.groups[0];
        assert_eq!(group.pairs.len(), 2);
        for pair in &group.pairs {
            assert!((pair.a - 2.0).abs() < 1e-12, "{pair:?}");
            assert!((pair.b - 5.0 / 3.0).abs() < 1e-12, "{pair:?}");
            assert_eq!(pair.a_cells.len(), 3, "one pair spans the loads");
            assert!(
                !pair
                    .coordinates
                    .iter()
                    .any(|(dimension, _)| *dimension == Dimension::Load)
            );
        }
        assert_eq!(group.dropped.len(), 1);
        assert_eq!(
            group.dropped[0].describe(&spec),
            "SLO never met on the b side"
        );
        assert_eq!(
            comparison.pair_pooling(),
            "each pair: capacity over load N=1, N=2, N=4 per side"
        );
        // Capacities over concurrencies differ by concurrency: 2 − 5/3 = +0.33 N, as the table writes it.
        let measure = comparison.measure();
        assert_eq!(
            measure,
            text::Measure::Capacity(Some(crate::slo::LoadAxis::Concurrency))
        );
        assert_eq!(text::delta(group.mean_delta, measure), "+0.33 N");
        assert_eq!(measure.value(5.0 / 3.0), "N=1.7");
        assert_eq!(measure.label(), "SLO capacity, N");
        let table = text::render_comparison(&comparison);
        assert!(table.contains("+0.33 N"), "{table}");
    }

    fn spec() -> CompareSpec {
        CompareSpec {
            by: Dimension::Backend,
            a: "a".into(),
            b: "b".into(),
            per: Some(Dimension::Workload),
            metric: Metric::Stat(Stat::Efficiency),
            alpha: 0.05,
            slo: String::new(),
        }
    }

    /// The sweep measured in two phases, the second phase's efficiency 0.02 lower.
    fn two_phase_sweep() -> Vec<CellSummary> {
        let mut cells = sweep();
        let ttft: Vec<CellSummary> = cells
            .iter()
            .map(|cell| {
                let mut copy = cell.clone();
                copy.key.phase = "ttft".into();
                copy.efficiency = copy.efficiency.map(|value| value - 0.02);
                copy
            })
            .collect();
        cells.extend(ttft);
        cells
    }

    #[test]
    fn phases_of_one_configuration_are_one_pair_averaged_over_phases_and_reps() {
        let cells = two_phase_sweep();
        let slice: Vec<&CellSummary> = cells.iter().collect();
        let comparison = compare(&slice, &spec(), &WhatIf::DEFAULT);
        let w1 = &comparison.groups[0];
        // 4 models × N ∈ {2, 4}, as with one phase: the ttft phase adds no pairs.
        assert_eq!(w1.n_pairs, 8);
        let mut configurations: Vec<String> = w1
            .pairs
            .iter()
            .map(|pair| text::coordinates(&pair.coordinates, None))
            .collect();
        configurations.dedup();
        assert_eq!(configurations.len(), 8, "{configurations:?}");
        let pair = &w1.pairs[0];
        assert_eq!(pair.a_cells.len(), 4, "2 phases × 2 reps behind a side");
        // Side a at (m1, N = 2) by hand: efficiency 0.9 − 0.2 + 0.05, reps +0 and +0.001, phases +0 and −0.02.
        let expected = (0.75 + 0.751 + 0.73 + 0.731) / 4.0;
        assert!((pair.a - expected).abs() < 1e-9, "{} vs {expected}", pair.a);
        assert_eq!(
            comparison.pair_pooling(),
            "each pair: mean of phase scaling, ttft × rep 0, 1 per side"
        );
        // Grouped by phase, the phases stay apart: one group each, pairs over reps only.
        let per_phase = CompareSpec {
            per: Some(Dimension::Phase),
            ..spec()
        };
        let by_phase = compare(&slice, &per_phase, &WhatIf::DEFAULT);
        assert_eq!(by_phase.groups.len(), 2);
        assert!(by_phase.groups.iter().all(|group| group.n_pairs == 16));
        assert_eq!(
            by_phase.pair_pooling(),
            "each pair: mean of rep 0, 1 per side"
        );
        // Filtered to one phase, the same pairs as the one-phase sweep.
        let one_phase: Vec<&CellSummary> = cells
            .iter()
            .filter(|cell| cell.key.phase == "scaling")
            .collect();
        let single = compare(&one_phase, &spec(), &WhatIf::DEFAULT);
        let original = sweep();
        let original: Vec<&CellSummary> = original.iter().collect();
        assert_eq!(single, compare(&original, &spec(), &WhatIf::DEFAULT));
    }

    #[test]
    fn a_group_too_small_to_reach_alpha_says_so_with_its_smallest_p() {
        assert_eq!(smallest_attainable_p(5), 0.0625);
        assert_eq!(smallest_attainable_p(6), 0.03125);
        let cells = sweep();
        // Two models × N ∈ {2, 4} on w1: 4 pairs, all in a's favour, yet 2 / 2^4 = 0.125 ≥ 0.05.
        let few: Vec<&CellSummary> = cells
            .iter()
            .filter(|cell| matches!(cell.key.model.as_str(), "m1" | "m2"))
            .filter(|cell| cell.key.workload == "w1")
            .collect();
        let comparison = compare(&few, &spec(), &WhatIf::DEFAULT);
        let group = &comparison.groups[0];
        assert_eq!((group.n_pairs, group.wins), (4, 4));
        assert_eq!(group.verdict, Verdict::TooFewPairs);
        assert_eq!(
            group.describe_verdict(&spec()),
            "too few pairs to claim a difference (smallest attainable p = 0.1250)"
        );
    }

    #[test]
    fn absolute_metrics_carry_the_geometric_mean_ratio_and_relative_ones_none() {
        let cells = sweep();
        let slice: Vec<&CellSummary> = cells.iter().collect();
        let tps = CompareSpec {
            metric: Metric::Stat(Stat::AggregateTps),
            per: None,
            ..spec()
        };
        let comparison = compare(&slice, &tps, &WhatIf::DEFAULT);
        let group = &comparison.groups[0];
        let logs: Vec<f64> = group
            .pairs
            .iter()
            .map(|pair| (pair.a / pair.b).ln())
            .collect();
        let expected = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
        assert!((group.ratio.unwrap() - expected).abs() < 1e-12);
        assert!(group.ratio.unwrap() > 1.0, "a's throughput is higher on w1");
        let efficiency = compare(&slice, &spec(), &WhatIf::DEFAULT);
        assert_eq!(efficiency.groups[0].ratio, None);
    }

    #[test]
    fn pairs_match_across_runs_on_everything_but_reps_and_n_1_says_nothing() {
        let cells = sweep();
        let slice: Vec<&CellSummary> = cells.iter().collect();
        let comparison = compare(&slice, &spec(), &WhatIf::DEFAULT);
        assert_eq!(comparison.groups.len(), 2);
        let w1 = &comparison.groups[0];
        // 4 models × N ∈ {2, 4}; the runs differ (one per backend) and still pair.
        assert_eq!(w1.n_pairs, 8);
        assert!(w1.dropped.is_empty());
        assert_eq!(w1.pairs[0].a_cells.len(), 2, "both reps behind each side");
        assert!((w1.mean_delta.unwrap() - 0.05).abs() < 1e-9);
        assert_eq!((w1.wins, w1.losses), (8, 0));
        // Eight positive deltas: exact p = 2 / 2^8; two groups, Holm doubles the smaller.
        assert_eq!(w1.wilcoxon.unwrap().p_value, Some(2.0 / 256.0));
        assert_eq!(w1.verdict, Verdict::AEdge);
        assert_eq!(
            w1.verdict.describe(&spec()),
            "a edge (higher parallel efficiency)"
        );
        let w2 = &comparison.groups[1];
        assert_eq!(w2.verdict, Verdict::NoClearDifference);
        assert!(w2.mean_delta.unwrap().abs() < 1e-12);
    }

    #[test]
    fn swapping_a_and_b_negates_deltas_and_intervals_and_keeps_p() {
        let cells = sweep();
        let slice: Vec<&CellSummary> = cells.iter().collect();
        let forward = compare(&slice, &spec(), &WhatIf::DEFAULT);
        let swapped_spec = CompareSpec {
            a: "b".into(),
            b: "a".into(),
            ..spec()
        };
        let backward = compare(&slice, &swapped_spec, &WhatIf::DEFAULT);
        for (f, b) in forward.groups.iter().zip(&backward.groups) {
            assert!((f.mean_delta.unwrap() + b.mean_delta.unwrap()).abs() < 1e-12);
            let (fl, fh) = f.ci.unwrap();
            let (bl, bh) = b.ci.unwrap();
            assert!((fl + bh).abs() < 1e-12 && (fh + bl).abs() < 1e-12);
            assert_eq!(f.wilcoxon.unwrap().p_value, b.wilcoxon.unwrap().p_value);
            assert_eq!(f.holm_p, b.holm_p);
        }
    }

    #[test]
    fn a_comparison_exclusion_drops_the_pairs_and_names_the_entry() {
        let mut cells = sweep();
        for cell in &mut cells {
            if cell.key.model == "m1" && cell.key.workload == "w1" {
                cell.excluded = vec!["tokenizer".into()];
                cell.exclusion_scope = Some(ExclusionScope::Comparison);
            }
        }
        let slice: Vec<&CellSummary> = cells.iter().collect();
        let comparison = compare(&slice, &spec(), &WhatIf::DEFAULT);
        let w1 = &comparison.groups[0];
        assert_eq!((w1.n_pairs, w1.dropped.len()), (6, 2));
        assert_eq!(
            w1.dropped[0].describe(&spec()),
            "excluded by the ledger (tokenizer) on both sides"
        );
        let included = compare(
            &slice,
            &spec(),
            &WhatIf {
                excluded: true,
                ..WhatIf::DEFAULT
            },
        );
        assert_eq!(included.groups[0].n_pairs, 8);
    }

    #[test]
    fn a_missing_or_skipped_side_is_a_named_drop() {
        let mut cells = sweep();
        cells.retain(|cell| {
            !(cell.key.backend == "b" && cell.key.model == "m2" && cell.key.n().unwrap() == 4)
        });
        for cell in &mut cells {
            if cell.key.backend == "b" && cell.key.model == "m3" && cell.key.n().unwrap() == 4 {
                *cell = CellSummary::empty(cell.key.clone(), CellStatus::Skipped);
            }
        }
        let slice: Vec<&CellSummary> = cells.iter().collect();
        let comparison = compare(&slice, &spec(), &WhatIf::DEFAULT);
        let reasons: Vec<String> = comparison.groups[0]
            .dropped
            .iter()
            .map(|dropped| dropped.describe(&spec()))
            .collect();
        assert_eq!(
            reasons,
            ["no such cell on the b side", "skipped on the b side"]
        );
    }

    #[test]
    fn bad_specs_name_the_parameter_and_the_choices() {
        let cells = sweep();
        let same = CompareSpec {
            b: "a".into(),
            ..spec()
        };
        assert_eq!(
            same.validate(&cells),
            Err(CompareError::SameSides("a".into()))
        );
        let absent = CompareSpec {
            b: "tgi".into(),
            ..spec()
        };
        assert_eq!(
            absent.validate(&cells).unwrap_err().to_string(),
            "`b` = `tgi` is not a backend in the data; the backend values are a, b"
        );
        assert!(
            comparable_metric("ok_rate")
                .unwrap_err()
                .to_string()
                .contains("efficiency, p95_multiplier")
        );
        assert!(contrastable_dimension("rep").is_err());
        assert_eq!(group_dimension("none"), Ok(None));
        assert!(spec().validate(&cells).is_ok());
        let wrong_case = CompareSpec {
            b: "B".into(),
            ..spec()
        };
        assert_eq!(
            wrong_case.validate(&cells).unwrap_err().to_string(),
            "`b` = `B` is not a backend in the data (did you mean `b`?); the backend values are a, b"
        );
    }

    #[test]
    fn a_query_reads_its_parameters_and_refuses_unknown_ones() {
        let pairs = |text: &str| -> Vec<(String, String)> {
            text.split('&')
                .filter_map(|pair| pair.split_once('='))
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect()
        };
        let query = parse_query(&pairs(
            "a=vllm&b=sglang&per=none&metric=p95_wall_ms&alpha=0.01&include=excluded&omit=partial&phase=scaling&n=2,4",
        ))
        .unwrap();
        assert_eq!(query.spec.per, None);
        assert_eq!(query.spec.metric, Metric::Stat(Stat::P95WallMs));
        assert_eq!(query.spec.alpha, 0.01);
        assert!(query.what_if.excluded && !query.what_if.partial);
        assert_eq!(query.filter.describe(), "phase = scaling; load = 2, 4");
        assert_eq!(
            parse_query(&pairs("a=vllm")),
            Err(CompareError::Missing("b"))
        );
        assert!(
            parse_query(&pairs("a=x&b=y&colour=red"))
                .unwrap_err()
                .to_string()
                .starts_with("unknown parameter `colour`; accepted: by, a, b")
        );
        assert!(parse_query(&pairs("a=x&b=y&alpha=2")).is_err());
        assert!(parse_query(&pairs("a=x&b=y&n=two")).is_err());
    }

    #[test]
    fn for_latencies_lower_is_better() {
        let cells = sweep();
        let slice: Vec<&CellSummary> = cells.iter().collect();
        let latency = CompareSpec {
            metric: Metric::Stat(Stat::P95WallMs),
            ..spec()
        };
        let comparison = compare(&slice, &latency, &WhatIf::DEFAULT);
        let w1 = &comparison.groups[0];
        // N = 1 pairs count for absolute metrics: 4 models × 3 N.
        assert_eq!(w1.n_pairs, 12);
        assert!(
            w1.mean_delta.unwrap() < 0.0,
            "a's higher throughput is a lower p95"
        );
        assert_eq!(w1.verdict.describe(&latency), "a edge (lower p95 latency)");
    }
}
