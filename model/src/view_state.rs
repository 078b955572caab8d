//! The explorer's view state and its query-string form: every choice a user makes lives in the URL with
//! readable names, so a copied link reopens the same view (product.md, "URL of the app").

use crate::key::Dimension;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum View {
    #[default]
    Matrix,
    Curves,
    Inspector,
    Audit,
}

impl View {
    pub const ALL: [View; 4] = [View::Matrix, View::Curves, View::Inspector, View::Audit];
    pub fn name(self) -> &'static str {
        match self {
            View::Matrix => "matrix",
            View::Curves => "curves",
            View::Inspector => "inspector",
            View::Audit => "audit",
        }
    }
    pub fn parse(text: &str) -> Option<View> {
        View::ALL.into_iter().find(|view| view.name() == text)
    }
}

/// What the matrix colours cells by and the curves plot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    #[default]
    Efficiency,
    P95Multiplier,
    /// Breakdown N under the criterion (matrix only; curves show efficiency with the breakdown marked).
    Breakdown,
    /// Σ ok rows / Σ expected rows (matrix only).
    OkRate,
}

impl Metric {
    pub const ALL: [Metric; 4] = [
        Metric::Efficiency,
        Metric::P95Multiplier,
        Metric::Breakdown,
        Metric::OkRate,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Metric::Efficiency => "efficiency",
            Metric::P95Multiplier => "p95_multiplier",
            Metric::Breakdown => "breakdown",
            Metric::OkRate => "ok_rate",
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Metric::Efficiency => "parallel efficiency",
            Metric::P95Multiplier => "p95 latency multiplier",
            Metric::Breakdown => "breakdown N",
            Metric::OkRate => "ok rate",
        }
    }
    pub fn parse(text: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|metric| metric.name() == text)
    }
}

/// How reps (and pooled cells) are aggregated into one curve value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregation {
    #[default]
    Mean,
    Median,
}

impl Aggregation {
    pub fn name(self) -> &'static str {
        match self {
            Aggregation::Mean => "mean",
            Aggregation::Median => "median",
        }
    }
    pub fn parse(text: &str) -> Option<Aggregation> {
        match text {
            "mean" => Some(Aggregation::Mean),
            "median" => Some(Aggregation::Median),
            _ => None,
        }
    }
    pub fn apply(self, values: &[f64]) -> Option<f64> {
        if values.is_empty() {
            return None;
        }
        match self {
            Aggregation::Mean => Some(values.iter().sum::<f64>() / values.len() as f64),
            Aggregation::Median => {
                let mut sorted = values.to_vec();
                sorted.sort_by(f64::total_cmp);
                crate::stats::quantile_linear(&sorted, 0.5)
            }
        }
    }
}

/// What-if toggles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Include {
    /// Cells an exclusion ledger takes out.
    Excluded,
    /// Partial cells (in by default).
    Partial,
    /// Replace refilled cells by their pre-refill state from the backup.
    PreRefill,
}

impl Include {
    pub const ALL: [Include; 3] = [Include::Excluded, Include::Partial, Include::PreRefill];
    pub fn name(self) -> &'static str {
        match self {
            Include::Excluded => "excluded",
            Include::Partial => "partial",
            Include::PreRefill => "pre_refill",
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Include::Excluded => "include excluded cells",
            Include::Partial => "include partial cells",
            Include::PreRefill => "use pre-refill rows",
        }
    }
    pub fn parse(text: &str) -> Option<Include> {
        Include::ALL
            .into_iter()
            .find(|include| include.name() == text)
    }
}

/// The whole view. Defaults are what a first visit shows; only non-defaults are written to the URL.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewState {
    pub view: View,
    /// Selected values per dimension; an absent dimension means "all".
    pub filters: BTreeMap<Dimension, Vec<String>>,
    pub n_min: Option<u32>,
    pub n_max: Option<u32>,
    pub metric: Metric,
    /// The N the matrix shows efficiency / p95 multiplier at.
    pub at_n: u32,
    /// `v1`, `v3` or `custom`.
    pub criterion: String,
    pub efficiency_threshold: f64,
    pub p95_threshold: Option<f64>,
    pub rows: Dimension,
    pub cols: Dimension,
    /// One matrix grid per value of this dimension, side by side.
    pub grid: Dimension,
    pub color: Dimension,
    pub facet: Option<Dimension>,
    pub aggregation: Aggregation,
    /// The inspected cell (`CellKey` display form) or series (`SeriesKey` display form).
    pub cell: Option<String>,
    pub include: BTreeSet<Include>,
    /// The snapshot the link was made for.
    pub at: Option<String>,
    /// Audit table: free-text filter and sort column (`-` prefix = descending).
    pub query: String,
    pub sort: Option<String>,
}

impl Default for ViewState {
    fn default() -> Self {
        ViewState {
            view: View::Matrix,
            filters: BTreeMap::new(),
            n_min: None,
            n_max: None,
            metric: Metric::Efficiency,
            at_n: 16,
            criterion: "v1".into(),
            efficiency_threshold: 0.65,
            p95_threshold: Some(2.0),
            rows: Dimension::Model,
            cols: Dimension::Workload,
            grid: Dimension::Backend,
            color: Dimension::Backend,
            facet: Some(Dimension::Workload),
            aggregation: Aggregation::Mean,
            cell: None,
            include: BTreeSet::from([Include::Partial]),
            at: None,
            query: String::new(),
            sort: None,
        }
    }
}

/// Dimensions the filter bar offers (N has its own range control).
pub const FILTER_DIMENSIONS: [Dimension; 7] = [
    Dimension::Run,
    Dimension::Suite,
    Dimension::Phase,
    Dimension::Backend,
    Dimension::Model,
    Dimension::Workload,
    Dimension::Rep,
];

fn encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'~'
            | b','
            | b'/'
            | b'='
            | b'|' => out.push(byte as char),
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'+' => out.push(b' '),
            b'%' if index + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[index + 1..index + 3])
                    .ok()
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok());
                match hex {
                    Some(byte) => {
                        out.push(byte);
                        index += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(str::to_string)
        .collect()
}

impl ViewState {
    /// Writes the state as a query string (without `?`), non-default values only, in a fixed order.
    pub fn to_query(&self) -> String {
        let defaults = ViewState::default();
        let mut pairs: Vec<(String, String)> = Vec::new();
        let mut push = |name: &str, value: String| pairs.push((name.to_string(), value));
        if self.view != defaults.view {
            push("view", self.view.name().into());
        }
        if self.metric != defaults.metric {
            push("metric", self.metric.name().into());
        }
        for (dimension, values) in &self.filters {
            push(dimension.name(), values.join(","));
        }
        if let Some(n_min) = self.n_min {
            push("n_min", n_min.to_string());
        }
        if let Some(n_max) = self.n_max {
            push("n_max", n_max.to_string());
        }
        if self.at_n != defaults.at_n {
            push("at_n", self.at_n.to_string());
        }
        if self.criterion != defaults.criterion {
            push("criterion", self.criterion.clone());
        }
        if self.efficiency_threshold != defaults.efficiency_threshold {
            push("eff_below", self.efficiency_threshold.to_string());
        }
        if self.p95_threshold != defaults.p95_threshold {
            push(
                "p95_above",
                self.p95_threshold
                    .map_or_else(|| "none".to_string(), |value| value.to_string()),
            );
        }
        if self.rows != defaults.rows {
            push("rows", self.rows.name().into());
        }
        if self.cols != defaults.cols {
            push("cols", self.cols.name().into());
        }
        if self.grid != defaults.grid {
            push("grid", self.grid.name().into());
        }
        if self.color != defaults.color {
            push("color", self.color.name().into());
        }
        if self.facet != defaults.facet {
            push("facet", self.facet.map_or("none", Dimension::name).into());
        }
        if self.aggregation != defaults.aggregation {
            push("agg", self.aggregation.name().into());
        }
        if let Some(cell) = &self.cell {
            push("cell", cell.clone());
        }
        if self.include != defaults.include {
            push(
                "include",
                self.include
                    .iter()
                    .map(|include| include.name())
                    .collect::<Vec<_>>()
                    .join(","),
            );
        }
        if !self.query.is_empty() {
            push("q", self.query.clone());
        }
        if let Some(sort) = &self.sort {
            push("sort", sort.clone());
        }
        if let Some(at) = &self.at {
            push("at", at.clone());
        }
        pairs
            .iter()
            .map(|(name, value)| format!("{name}={}", encode(value)))
            .collect::<Vec<_>>()
            .join("&")
    }

    /// Reads a query string (with or without `?`). Unknown names and unreadable values are ignored, so an old
    /// or hand-edited link still opens.
    pub fn from_query(query: &str) -> ViewState {
        let mut state = ViewState::default();
        let query = query.strip_prefix('?').unwrap_or(query);
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = decode(value);
            let dimension = |text: &str| Dimension::parse(text);
            match name {
                "view" => state.view = View::parse(&value).unwrap_or(state.view),
                "metric" => state.metric = Metric::parse(&value).unwrap_or(state.metric),
                "n_min" => state.n_min = value.parse().ok(),
                "n_max" => state.n_max = value.parse().ok(),
                "at_n" => state.at_n = value.parse().unwrap_or(state.at_n),
                "criterion" if ["v1", "v3", "custom"].contains(&value.as_str()) => {
                    state.criterion = value
                }
                "eff_below" => {
                    state.efficiency_threshold = value.parse().unwrap_or(state.efficiency_threshold)
                }
                "p95_above" => {
                    state.p95_threshold = if value == "none" {
                        None
                    } else {
                        value.parse().ok().or(state.p95_threshold)
                    }
                }
                "rows" => state.rows = dimension(&value).unwrap_or(state.rows),
                "cols" => state.cols = dimension(&value).unwrap_or(state.cols),
                "grid" => state.grid = dimension(&value).unwrap_or(state.grid),
                "color" => state.color = dimension(&value).unwrap_or(state.color),
                "facet" => {
                    state.facet = if value == "none" {
                        None
                    } else {
                        dimension(&value).or(state.facet)
                    }
                }
                "agg" => {
                    state.aggregation = Aggregation::parse(&value).unwrap_or(state.aggregation)
                }
                "cell" if !value.is_empty() => state.cell = Some(value),
                "include" => {
                    state.include = list(&value)
                        .iter()
                        .filter_map(|name| Include::parse(name))
                        .collect()
                }
                "q" => state.query = value,
                "sort" if !value.is_empty() => state.sort = Some(value),
                "at" if !value.is_empty() => state.at = Some(value),
                other => {
                    if let Some(dimension) =
                        Dimension::parse(other).filter(|dimension| *dimension != Dimension::N)
                    {
                        let values = list(&value);
                        if !values.is_empty() {
                            state.filters.insert(dimension, values);
                        }
                    }
                }
            }
        }
        state
    }

    /// The criterion in force, from its name and the (editable) thresholds.
    pub fn criterion(&self) -> crate::scaling::Criterion {
        crate::scaling::Criterion {
            efficiency_below: self.efficiency_threshold,
            p95_multiplier_above: self.p95_threshold,
        }
    }

    /// Selects a named criterion and its thresholds.
    pub fn set_criterion(&mut self, name: &str) {
        if let Some(criterion) = crate::scaling::Criterion::named(name) {
            self.efficiency_threshold = criterion.efficiency_below;
            self.p95_threshold = criterion.p95_multiplier_above;
        }
        self.criterion = name.to_string();
    }

    pub fn includes(&self, include: Include) -> bool {
        self.include.contains(&include)
    }

    /// Whether a cell passes the dimension filters and the N range.
    pub fn admits_key(&self, key: &crate::key::CellKey) -> bool {
        self.n_min.is_none_or(|n_min| key.n >= n_min)
            && self.n_max.is_none_or(|n_max| key.n <= n_max)
            && self.filters.iter().all(|(dimension, values)| {
                let value = key.value(*dimension);
                values.iter().any(|candidate| value.matches_text(candidate))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_state_is_the_empty_query() {
        assert_eq!(ViewState::default().to_query(), "");
        assert_eq!(ViewState::from_query(""), ViewState::default());
    }

    #[test]
    fn the_product_brief_example_round_trips() {
        let query = "view=curves&metric=efficiency&phase=scaling&backend=vllm,sglang&workload=long_prefill_8k&color=backend&include=refilled&at=abc123";
        let state = ViewState::from_query(query);
        assert_eq!(state.view, View::Curves);
        assert_eq!(state.filters[&Dimension::Backend], vec!["vllm", "sglang"]);
        assert_eq!(state.filters[&Dimension::Phase], vec!["scaling"]);
        assert_eq!(state.at.as_deref(), Some("abc123"));
        // `refilled` is not a toggle (refilled cells are always in); the unknown value is dropped.
        assert!(state.include.is_empty());
        let again = ViewState::from_query(&state.to_query());
        assert_eq!(again, state);
    }

    #[test]
    fn every_field_survives_a_round_trip() {
        let mut state = ViewState {
            view: View::Inspector,
            metric: Metric::Breakdown,
            ..ViewState::default()
        };
        state
            .filters
            .insert(Dimension::Model, vec!["mistral-7b".into(), "phi-4".into()]);
        state.n_min = Some(2);
        state.n_max = Some(16);
        state.at_n = 32;
        state.set_criterion("v3");
        state.efficiency_threshold = 0.7;
        state.criterion = "custom".into();
        state.rows = Dimension::Phase;
        state.cols = Dimension::N;
        state.grid = Dimension::Run;
        state.color = Dimension::Model;
        state.facet = None;
        state.aggregation = Aggregation::Median;
        state.cell = Some("20260612_212816_266127/cloud_core/scaling/sglang/mistral-7b/long_prefill_8k/n=32/rep=0".into());
        state.include = BTreeSet::from([Include::Excluded, Include::PreRefill]);
        state.query = "http_400 & more".into();
        state.sort = Some("-status".into());
        state.at = Some("0123456789abcdef".into());
        let query = state.to_query();
        assert!(query.contains("model=mistral-7b,phi-4"), "{query}");
        assert!(query.contains("include=excluded,pre_refill"), "{query}");
        assert_eq!(ViewState::from_query(&query), state);
    }

    #[test]
    fn junk_is_ignored() {
        let state = ViewState::from_query("?view=nope&at_n=x&colour=red&model=&facet=sideways");
        assert_eq!(state, ViewState::default());
    }

    #[test]
    fn aggregation_mean_and_median() {
        assert_eq!(Aggregation::Mean.apply(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(Aggregation::Median.apply(&[1.0, 2.0, 6.0]), Some(2.0));
        assert_eq!(Aggregation::Median.apply(&[]), None);
    }
}
