//! The explorer's view state and its query-string form: every choice a user makes lives in the URL with
//! readable names, so a copied link reopens the same view (docs/api.md#app-links).
//!
//! The query codec is declarative: [`FIELDS`] lists every parameter once, with how it is printed (only when it
//! differs from [`ViewState::DEFAULT`]) and parsed. Parsing never fails: a parameter that cannot be used is
//! left at its default and reported in the list of ignored parameters, which the app shows as a notice.

use crate::filter::{DimensionFilter, is_whole_number};
use crate::key::{CellKey, Dimension};
use crate::scaling::Criterion;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum View {
    #[default]
    Matrix,
    Curves,
    Compare,
    Inspector,
    Audit,
}

impl View {
    pub const ALL: [View; 5] = [
        View::Matrix,
        View::Curves,
        View::Compare,
        View::Inspector,
        View::Audit,
    ];
    pub fn name(self) -> &'static str {
        match self {
            View::Matrix => "matrix",
            View::Curves => "curves",
            View::Compare => "compare",
            View::Inspector => "inspector",
            View::Audit => "audit",
        }
    }
    /// The tab's label.
    pub fn label(self) -> &'static str {
        match self {
            View::Matrix => "Matrix",
            View::Curves => "Curves",
            View::Compare => "Compare",
            View::Inspector => "Inspector",
            View::Audit => "Audit",
        }
    }
    pub fn parse(text: &str) -> Option<View> {
        View::ALL.into_iter().find(|view| view.name() == text)
    }
}

pub use crate::metric::Metric;

/// How reps (and then the series a curve pools) are aggregated into one curve value.
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
                crate::order::sort_floats(&mut sorted);
                crate::stats::quantile_linear(&sorted, 0.5)
            }
        }
    }
}

/// What the band around a curve value spans.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BandSpan {
    /// The smallest and largest value among all the cells behind the point (every pooled series and rep).
    #[default]
    Cells,
    /// Only the spread over reps: the point's value computed from each rep alone, smallest to largest. For a
    /// point of one series this is the same as `Cells`.
    Reps,
}

impl BandSpan {
    pub fn name(self) -> &'static str {
        match self {
            BandSpan::Cells => "cells",
            BandSpan::Reps => "reps",
        }
    }
    pub fn parse(text: &str) -> Option<BandSpan> {
        match text {
            "cells" => Some(BandSpan::Cells),
            "reps" => Some(BandSpan::Reps),
            _ => None,
        }
    }
    /// How a chart labels the band.
    pub fn label(self) -> &'static str {
        match self {
            BandSpan::Cells => "band = min–max over the cells behind each point",
            BandSpan::Reps => "band = min–max over reps (each rep's value, pooled like the point)",
        }
    }
}

/// What the curves put on the x axis: concurrency N (log₂, the default), or a per-cell metric, so a sweep reads
/// as throughput against latency the way vLLM, SGLang and AIPerf benchmarks are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum XAxis {
    #[default]
    N,
    /// A metric with a value per cell ([`Metric::per_cell`]).
    Metric(Metric),
}

impl XAxis {
    /// The choices of the x picker: N, then every metric the curves can plot.
    pub fn choices() -> impl Iterator<Item = XAxis> {
        std::iter::once(XAxis::N).chain(Metric::curves().map(XAxis::Metric))
    }

    /// How the `x` parameter writes it: `n`, or the metric's name as `metric` writes it.
    pub fn name(self) -> &'static str {
        match self {
            XAxis::N => "n",
            XAxis::Metric(metric) => metric.name(),
        }
    }

    /// The axis' label and the picker's wording.
    pub fn label(self) -> &'static str {
        match self {
            XAxis::N => "concurrency N (log₂)",
            XAxis::Metric(metric) => metric.label(),
        }
    }

    /// The metric on the axis, `None` for N.
    pub fn metric(self) -> Option<Metric> {
        match self {
            XAxis::N => None,
            XAxis::Metric(metric) => Some(metric),
        }
    }

    /// `n` or a per-cell metric's name; otherwise why not. Breakdown N and the ok rate have no value per point.
    pub fn parse(text: &str) -> Result<XAxis, String> {
        if text == "n" {
            return Ok(XAxis::N);
        }
        match Metric::parse(text) {
            Some(metric) if metric.per_cell() => Ok(XAxis::Metric(metric)),
            _ => Err(format!(
                "expected n or one of {}",
                Metric::curves()
                    .map(Metric::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// One what-if toggle, by name (for controls, labels and the `include` parameter).
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

/// The what-if toggles. Refilled cells are current data and always in; `pre_refill` swaps in the rows a refill
/// replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WhatIf {
    /// Cells the exclusion ledger takes out are put back.
    pub excluded: bool,
    /// Partial cells enter aggregates (the default).
    pub partial: bool,
    pub pre_refill: bool,
}

impl WhatIf {
    pub const DEFAULT: WhatIf = WhatIf {
        excluded: false,
        partial: true,
        pre_refill: false,
    };

    pub fn get(&self, include: Include) -> bool {
        match include {
            Include::Excluded => self.excluded,
            Include::Partial => self.partial,
            Include::PreRefill => self.pre_refill,
        }
    }

    pub fn set(&mut self, include: Include, on: bool) {
        match include {
            Include::Excluded => self.excluded = on,
            Include::Partial => self.partial = on,
            Include::PreRefill => self.pre_refill = on,
        }
    }

    /// The toggles that differ from the defaults, as the header says them.
    pub fn active(&self) -> Vec<&'static str> {
        let mut active = Vec::new();
        if self.excluded {
            active.push("excluded cells included");
        }
        if !self.partial {
            active.push("partial cells left out");
        }
        if self.pre_refill {
            active.push("pre-refill rows");
        }
        active
    }
}

impl Default for WhatIf {
    fn default() -> Self {
        WhatIf::DEFAULT
    }
}

/// A column of the audit table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditColumn {
    Key,
    Status,
    Flags,
    Reason,
    Rows,
}

impl AuditColumn {
    pub const ALL: [AuditColumn; 5] = [
        AuditColumn::Key,
        AuditColumn::Status,
        AuditColumn::Flags,
        AuditColumn::Reason,
        AuditColumn::Rows,
    ];
    pub fn name(self) -> &'static str {
        match self {
            AuditColumn::Key => "key",
            AuditColumn::Status => "status",
            AuditColumn::Flags => "flags",
            AuditColumn::Reason => "reason",
            AuditColumn::Rows => "rows",
        }
    }
    pub fn parse(text: &str) -> Option<AuditColumn> {
        AuditColumn::ALL
            .into_iter()
            .find(|column| column.name() == text)
    }
}

/// How the audit table is sorted: a column, ascending or descending (written `-column`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditSort {
    pub column: AuditColumn,
    pub descending: bool,
}

impl AuditSort {
    pub fn parse(text: &str) -> Option<AuditSort> {
        let (descending, name) = match text.strip_prefix('-') {
            Some(name) => (true, name),
            None => (false, text),
        };
        Some(AuditSort {
            column: AuditColumn::parse(name)?,
            descending,
        })
    }

    /// Sorting by the same column again flips the direction.
    pub fn toggled(current: Option<AuditSort>, column: AuditColumn) -> AuditSort {
        AuditSort {
            column,
            descending: current.is_some_and(|sort| sort.column == column && !sort.descending),
        }
    }
}

impl fmt::Display for AuditSort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.descending {
            f.write_str("-")?;
        }
        f.write_str(self.column.name())
    }
}

/// The Compare view's choices: contrast `a` with `b`, two values of `by`, one group per value of `per`, at
/// significance level `alpha` (the metric is the view's). `a` and `b` unset: the two values of `by` with the
/// most cells ([`crate::compare::spec_of_view`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareChoice {
    pub by: Dimension,
    pub a: Option<String>,
    pub b: Option<String>,
    pub per: Option<Dimension>,
    pub alpha: f64,
}

impl CompareChoice {
    pub const DEFAULT: CompareChoice = CompareChoice {
        by: Dimension::Backend,
        a: None,
        b: None,
        per: Some(Dimension::Workload),
        alpha: 0.05,
    };
}

/// The whole view (the filter takes every dimension but N by value, N by range: [`Dimension::is_filterable`]).
/// Defaults are what a first visit shows; only non-defaults are written to the URL.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewState {
    pub view: View,
    /// Selected values per dimension and the N range.
    pub filter: DimensionFilter,
    pub metric: Metric,
    /// The N the matrix shows efficiency / p95 multiplier at.
    pub at_n: u32,
    pub criterion: Criterion,
    pub rows: Dimension,
    pub cols: Dimension,
    /// One matrix grid per value of this dimension, side by side.
    pub grid: Dimension,
    pub color: Dimension,
    pub facet: Option<Dimension>,
    pub aggregation: Aggregation,
    /// What the curves' bands span.
    pub band: BandSpan,
    /// What the curves' x axis shows.
    pub x: XAxis,
    /// Whether the curves draw each series' Pareto frontier (with a metric on x).
    pub frontier: bool,
    /// The inspected cell.
    pub cell: Option<CellKey>,
    pub what_if: WhatIf,
    /// The snapshot the link was made for.
    pub at: Option<String>,
    /// Audit table: free-text filter and sort column.
    pub query: String,
    pub sort: Option<AuditSort>,
    /// The Compare view's choices.
    pub compare: CompareChoice,
}

impl ViewState {
    pub const DEFAULT: ViewState = ViewState {
        view: View::Matrix,
        filter: DimensionFilter::ALL,
        metric: Metric::Efficiency,
        at_n: 16,
        criterion: Criterion::V1,
        rows: Dimension::Model,
        cols: Dimension::Workload,
        grid: Dimension::Backend,
        color: Dimension::Backend,
        facet: Some(Dimension::Workload),
        aggregation: Aggregation::Mean,
        band: BandSpan::Cells,
        x: XAxis::N,
        frontier: false,
        cell: None,
        what_if: WhatIf::DEFAULT,
        at: None,
        query: String::new(),
        sort: None,
        compare: CompareChoice::DEFAULT,
    };
}

impl Default for ViewState {
    fn default() -> Self {
        ViewState::DEFAULT
    }
}

/// A query parameter the view state could not use, and why. The app lists these in a notice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoredParameter {
    pub name: String,
    pub value: String,
    pub reason: String,
}

impl fmt::Display for IgnoredParameter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}={}`: {}", self.name, self.value, self.reason)
    }
}

/// Percent-encodes a value for a query string (this app's links and its API requests), keeping the characters
/// that read well in a link. `keep_commas` is false for list items, whose commas would otherwise split them.
pub fn encode(text: &str, keep_commas: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'~'
            | b'/'
            | b'='
            | b'|' => out.push(byte as char),
            b',' if keep_commas => out.push(','),
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
            b'%' => {
                let byte = bytes
                    .get(index + 1..index + 3)
                    .and_then(|hex| std::str::from_utf8(hex).ok())
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok());
                match byte {
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

/// The items of a list value (`vllm,sglang`): split before decoding, so an encoded comma stays in its item;
/// items are trimmed and empty ones dropped.
fn list_items(raw: &str) -> Vec<String> {
    raw.split(',')
        .map(|item| decode(item).trim().to_string())
        .filter(|item| !item.is_empty())
        .collect()
}

fn list_value(items: &[String]) -> String {
    items
        .iter()
        .map(|item| encode(item, false))
        .collect::<Vec<_>>()
        .join(",")
}

/// The parameters of one query string while fields take them.
struct Params {
    /// `(name, raw value)` in query order; taken ones are removed.
    pairs: Vec<(String, String)>,
    ignored: Vec<IgnoredParameter>,
}

impl Params {
    /// Every raw value given for `name`, in order.
    fn take_all(&mut self, name: &str) -> Vec<String> {
        let mut taken = Vec::new();
        self.pairs.retain(|(pair_name, value)| {
            if pair_name == name {
                taken.push(value.clone());
                false
            } else {
                true
            }
        });
        taken
    }

    /// The decoded value of a parameter that takes one value: the last one given (earlier ones are reported).
    fn take(&mut self, name: &str) -> Option<String> {
        let mut values = self.take_all(name);
        let last = values.pop()?;
        for earlier in values {
            self.ignore(
                name,
                &decode(&earlier),
                "given more than once; the last value is used",
            );
        }
        Some(decode(&last))
    }

    fn ignore(&mut self, name: &str, value: &str, reason: impl Into<String>) {
        self.ignored.push(IgnoredParameter {
            name: name.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        });
    }
}

/// One or more query parameters: how they are written from the state and read into it.
struct Field {
    /// Writes `(name, encoded value)` pairs, only for values that differ from the default.
    print: fn(&ViewState, &mut Vec<(&'static str, String)>),
    /// Takes its parameters and sets the state, reporting values it cannot use.
    parse: fn(&mut ViewState, &mut Params),
}

/// A field with one parameter holding one value. `$print` writes the value (called only when it differs from
/// the default), `$parse` reads it back or says why it cannot.
macro_rules! scalar {
    ($name:literal, $field:ident, $print:expr, $parse:expr) => {
        Field {
            print: |state, out| {
                if state.$field != ViewState::DEFAULT.$field {
                    out.push(($name, encode(&($print)(&state.$field), true)));
                }
            },
            parse: |state, params| {
                if let Some(text) = params.take($name) {
                    match ($parse)(text.as_str()) {
                        Ok(value) => state.$field = value,
                        Err(reason) => params.ignore($name, &text, reason),
                    }
                }
            },
        }
    };
}

fn positive_number(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|value| value.is_finite() && *value > 0.0)
        .ok_or_else(|| "expected a positive number".to_string())
}

fn whole_number(text: &str) -> Result<u32, String> {
    let text = text.trim();
    if is_whole_number(text) && text != "0" && text.bytes().any(|byte| byte != b'0') {
        text.parse().map_err(|_| String::new())
    } else {
        Err("expected a whole number from 1".into())
    }
}

fn optional_whole_number(text: &str) -> Result<Option<u32>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    whole_number(text).map(Some)
}

fn dimension(text: &str) -> Result<Dimension, String> {
    Dimension::ALL
        .into_iter()
        .find(|dimension| dimension.name() == text)
        .ok_or_else(|| {
            "expected one of run, suite, phase, backend, model, workload, n, rep".to_string()
        })
}

fn print_threshold(value: f64) -> String {
    value.to_string()
}

/// Every parameter, in the order a link writes them.
const FIELDS: &[Field] = &[
    scalar!(
        "view",
        view,
        |view: &View| view.name().to_string(),
        |text| {
            View::parse(text).ok_or("expected one of matrix, curves, compare, inspector, audit")
        }
    ),
    // The Compare view's sides and groups. A compare link names every choice, defaults included, so that it
    // reads as the question it asks (`view=compare&by=backend&a=vllm&b=sglang&per=workload&metric=…`).
    Field {
        print: |state, out| {
            let choice = &state.compare;
            let default = &CompareChoice::DEFAULT;
            let shown = state.view == View::Compare;
            if shown || choice.by != default.by {
                out.push(("by", choice.by.name().to_string()));
            }
            for (name, side) in [("a", &choice.a), ("b", &choice.b)] {
                if let Some(value) = side {
                    out.push((name, encode(value, false)));
                }
            }
            if shown || choice.per != default.per {
                out.push((
                    "per",
                    choice.per.map_or("none", Dimension::name).to_string(),
                ));
            }
        },
        parse: |state, params| {
            let contrastable = "expected one of backend, model, run, suite, phase, workload";
            if let Some(text) = params.take("by") {
                match crate::compare::contrastable_dimension(&text) {
                    Ok(by) => state.compare.by = by,
                    Err(_) => params.ignore("by", &text, contrastable),
                }
            }
            for name in ["a", "b"] {
                if let Some(text) = params.take(name) {
                    let value = text.trim().to_string();
                    if value.is_empty() {
                        params.ignore(name, &text, "expected a value of the compared dimension");
                    } else if name == "a" {
                        state.compare.a = Some(value);
                    } else {
                        state.compare.b = Some(value);
                    }
                }
            }
            if let Some(text) = params.take("per") {
                match crate::compare::group_dimension(&text) {
                    Ok(per) => state.compare.per = per,
                    Err(_) => params.ignore("per", &text, format!("{contrastable} or none")),
                }
            }
        },
    },
    Field {
        print: |state, out| {
            if state.view == View::Compare || state.metric != ViewState::DEFAULT.metric {
                out.push(("metric", state.metric.name().to_string()));
            }
        },
        parse: |state, params| {
            if let Some(text) = params.take("metric") {
                match Metric::parse(&text) {
                    Some(metric) => state.metric = metric,
                    None => params.ignore(
                        "metric",
                        &text,
                        format!(
                            "expected one of {}",
                            Metric::ALL.map(Metric::name).join(", ")
                        ),
                    ),
                }
            }
        },
    },
    // The curves' x axis and frontier, beside the metric they plot against it (`metric=aggregate_tps&x=p95_ttft_ms`).
    scalar!("x", x, |x: &XAxis| x.name().to_string(), XAxis::parse),
    scalar!(
        "frontier",
        frontier,
        |_: &bool| "1".to_string(),
        |text: &str| match text.trim() {
            "1" => Ok(true),
            "0" => Ok(false),
            _ => Err("expected 1 (draw each series' Pareto frontier) or 0"),
        }
    ),
    Field {
        print: |state, out| {
            let alpha = state.compare.alpha;
            if state.view == View::Compare || alpha != CompareChoice::DEFAULT.alpha {
                out.push(("alpha", alpha.to_string()));
            }
        },
        parse: |state, params| {
            if let Some(text) = params.take("alpha") {
                match text.trim().parse::<f64>() {
                    Ok(alpha) if alpha > 0.0 && alpha < 1.0 => state.compare.alpha = alpha,
                    _ => params.ignore("alpha", &text, "expected a number between 0 and 1"),
                }
            }
        },
    },
    // One parameter per filtered dimension with comma-separated values; a dimension given twice adds up.
    Field {
        print: |state, out| {
            for (dimension, values) in &state.filter.values {
                out.push((dimension.name(), list_value(values)));
            }
        },
        parse: |state, params| {
            for dimension in Dimension::ALL
                .into_iter()
                .filter(|dimension| dimension.is_filterable())
            {
                let name = dimension.name();
                let mut accepted = Vec::new();
                for raw in params.take_all(name) {
                    for item in list_items(&raw) {
                        if dimension.is_numeric() && !is_whole_number(&item) {
                            params.ignore(name, &item, "expected whole numbers");
                        } else {
                            accepted.push(item);
                        }
                    }
                }
                // Checked above, so this cannot fail.
                let _ = state.filter.accept(dimension, accepted);
            }
            for raw in params.take_all("n") {
                params.ignore("n", &decode(&raw), "N is chosen with n_min and n_max");
            }
        },
    },
    Field {
        print: |state, out| {
            if let Some(n_min) = state.filter.n_min {
                out.push(("n_min", n_min.to_string()));
            }
            if let Some(n_max) = state.filter.n_max {
                out.push(("n_max", n_max.to_string()));
            }
        },
        parse: |state, params| {
            for name in ["n_min", "n_max"] {
                let Some(text) = params.take(name) else {
                    continue;
                };
                match optional_whole_number(&text) {
                    Ok(value) if name == "n_min" => state.filter.n_min = value,
                    Ok(value) => state.filter.n_max = value,
                    Err(reason) => params.ignore(name, &text, reason),
                }
            }
        },
    },
    scalar!("at_n", at_n, |n: &u32| n.to_string(), whole_number),
    // The criterion and its thresholds: `criterion=v3`, or `criterion=custom&eff_below=0.7&p95_above=none`.
    Field {
        print: |state, out| {
            let criterion = state.criterion;
            if criterion != ViewState::DEFAULT.criterion {
                out.push(("criterion", criterion.name().to_string()));
            }
            if let Criterion::Custom {
                efficiency_below,
                p95_multiplier_above,
            } = criterion
            {
                out.push(("eff_below", print_threshold(efficiency_below)));
                out.push((
                    "p95_above",
                    p95_multiplier_above.map_or_else(|| "none".to_string(), print_threshold),
                ));
            }
        },
        parse: |state, params| {
            let name = params.take("criterion");
            let efficiency = params.take("eff_below").and_then(|text| {
                positive_number(&text)
                    .map_err(|reason| params.ignore("eff_below", &text, reason))
                    .ok()
                    .map(|value| (text, value))
            });
            let p95 = params.take("p95_above").and_then(|text| {
                let value = if text.trim() == "none" {
                    Ok(None)
                } else {
                    positive_number(&text).map(Some)
                };
                value
                    .map_err(|reason| {
                        params.ignore("p95_above", &text, format!("{reason} or none"))
                    })
                    .ok()
                    .map(|value| (text, value))
            });
            let named = match name.as_deref() {
                None | Some("custom") => None,
                Some(text) => match Criterion::named(text) {
                    Some(named) => Some(named),
                    None => {
                        params.ignore("criterion", text, "expected one of v1, v3, custom");
                        None
                    }
                },
            };
            state.criterion = match named {
                // A named criterion fixes both thresholds; values that repeat them are fine, others are not used.
                Some(named) => {
                    if let Some((text, value)) = &efficiency
                        && *value != named.efficiency_below()
                    {
                        params.ignore("eff_below", text, format!("criterion={} fixes efficiency < {}; use criterion=custom to change it", named.name(), named.efficiency_below()));
                    }
                    if let Some((text, value)) = &p95
                        && *value != named.p95_multiplier_above()
                    {
                        params.ignore("p95_above", text, format!("criterion={} fixes the p95 threshold; use criterion=custom to change it", named.name()));
                    }
                    named
                }
                None => {
                    let efficiency_below =
                        efficiency.map_or(Criterion::V1.efficiency_below(), |(_, value)| value);
                    let p95_multiplier_above =
                        p95.map_or(Criterion::V1.p95_multiplier_above(), |(_, value)| value);
                    if name.as_deref() == Some("custom") {
                        Criterion::Custom {
                            efficiency_below,
                            p95_multiplier_above,
                        }
                    } else {
                        // Thresholds without a name are a custom criterion unless they equal the default one.
                        Criterion::from_thresholds(efficiency_below, p95_multiplier_above)
                    }
                }
            };
        },
    },
    scalar!(
        "rows",
        rows,
        |dimension: &Dimension| dimension.name().to_string(),
        dimension
    ),
    scalar!(
        "cols",
        cols,
        |dimension: &Dimension| dimension.name().to_string(),
        dimension
    ),
    scalar!(
        "grid",
        grid,
        |dimension: &Dimension| dimension.name().to_string(),
        dimension
    ),
    scalar!(
        "color",
        color,
        |dimension: &Dimension| dimension.name().to_string(),
        dimension
    ),
    scalar!(
        "facet",
        facet,
        |facet: &Option<Dimension>| facet.map_or("none", Dimension::name).to_string(),
        |text| if text == "none" {
            Ok(None)
        } else {
            dimension(text)
                .map(Some)
                .map_err(|reason| format!("{reason} or none"))
        }
    ),
    scalar!(
        "agg",
        aggregation,
        |aggregation: &Aggregation| aggregation.name().to_string(),
        |text| { Aggregation::parse(text).ok_or("expected mean or median") }
    ),
    scalar!(
        "band",
        band,
        |band: &BandSpan| band.name().to_string(),
        |text| { BandSpan::parse(text).ok_or("expected cells or reps") }
    ),
    scalar!(
        "cell",
        cell,
        |cell: &Option<CellKey>| cell.as_ref().map(ToString::to_string).unwrap_or_default(),
        |text: &str| {
            if text.is_empty() {
                Ok(None)
            } else {
                text.parse::<CellKey>()
                    .map(Some)
                    .map_err(|error| error.to_string())
            }
        }
    ),
    // `include` adds to the default set (partial cells are in by default, refilled cells always are); `omit`
    // takes the default `partial` out.
    Field {
        print: |state, out| {
            let what_if = state.what_if;
            let mut include = Vec::new();
            if what_if.excluded {
                include.push(Include::Excluded.name());
            }
            if what_if.pre_refill {
                include.push(Include::PreRefill.name());
            }
            if !include.is_empty() {
                out.push(("include", include.join(",")));
            }
            if !what_if.partial {
                out.push(("omit", Include::Partial.name().to_string()));
            }
        },
        parse: |state, params| {
            for raw in params.take_all("include") {
                for item in list_items(&raw) {
                    match Include::parse(&item) {
                        Some(include) => state.what_if.set(include, true),
                        // Refilled cells are current data, so they are always in.
                        None if item == "refilled" => {}
                        None => params.ignore(
                            "include",
                            &item,
                            "expected excluded, partial, pre_refill or refilled",
                        ),
                    }
                }
            }
            for raw in params.take_all("omit") {
                for item in list_items(&raw) {
                    if item == Include::Partial.name() {
                        state.what_if.partial = false;
                    } else {
                        params.ignore("omit", &item, "only partial cells can be omitted");
                    }
                }
            }
        },
    },
    scalar!(
        "q",
        query,
        |query: &String| query.clone(),
        |text: &str| Ok::<_, String>(text.to_string())
    ),
    scalar!(
        "sort",
        sort,
        |sort: &Option<AuditSort>| sort.map(|sort| sort.to_string()).unwrap_or_default(),
        |text: &str| {
            if text.is_empty() {
                Ok(None)
            } else {
                AuditSort::parse(text).map(Some).ok_or(
                    "expected key, status, flags, reason or rows, optionally with a leading -",
                )
            }
        }
    ),
    scalar!(
        "at",
        at,
        |at: &Option<String>| at.clone().unwrap_or_default(),
        |text: &str| { Ok::<_, String>((!text.is_empty()).then(|| text.to_string())) }
    ),
];

impl ViewState {
    /// The relative URL of the state, `?` and its query: what a link to it carries (so middle-click and "copy
    /// link address" work on every link of the app).
    pub fn href(&self) -> String {
        format!("?{}", self.to_query())
    }

    /// Writes the state as a query string (without `?`), non-default values only, in a fixed order.
    pub fn to_query(&self) -> String {
        let mut pairs = Vec::new();
        for field in FIELDS {
            (field.print)(self, &mut pairs);
        }
        pairs
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("&")
    }

    /// Reads a query string (with or without `?`). Never fails: what cannot be used is left at its default and
    /// listed, so an old or hand-edited link still opens and says what it ignored.
    pub fn parse_query(query: &str) -> (ViewState, Vec<IgnoredParameter>) {
        let query = query.strip_prefix('?').unwrap_or(query);
        let mut params = Params {
            pairs: query
                .split('&')
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                    (decode(name), value.to_string())
                })
                .collect(),
            ignored: Vec::new(),
        };
        let mut state = ViewState::default();
        for field in FIELDS {
            (field.parse)(&mut state, &mut params);
        }
        for (name, value) in std::mem::take(&mut params.pairs) {
            params.ignore(&name, &decode(&value), "unknown parameter");
        }
        (state, params.ignored)
    }

    /// The state of a query string, ignoring what it cannot use.
    pub fn from_query(query: &str) -> ViewState {
        ViewState::parse_query(query).0
    }

    /// Whether every field holds a value the query codec can write and read back: what [`Self::parse_query`]
    /// always produces.
    pub fn is_valid(&self) -> bool {
        let positive = |value: f64| value.is_finite() && value > 0.0;
        let filters_ok = self.filter.values.iter().all(|(dimension, values)| {
            dimension.is_filterable()
                && !values.is_empty()
                && values.iter().enumerate().all(|(position, value)| {
                    !value.is_empty()
                        && value.trim() == value
                        && !values[..position].contains(value)
                        && (!dimension.is_numeric() || is_whole_number(value))
                })
        });
        filters_ok
            && self.at_n >= 1
            && self.filter.n_min.is_none_or(|n| n >= 1)
            && self.filter.n_max.is_none_or(|n| n >= 1)
            && positive(self.criterion.efficiency_below())
            && self.criterion.p95_multiplier_above().is_none_or(positive)
            && self.at.as_ref().is_none_or(|at| !at.is_empty())
            && crate::compare::CONTRASTABLE.contains(&self.compare.by)
            && self
                .compare
                .per
                .is_none_or(|per| crate::compare::CONTRASTABLE.contains(&per))
            && [&self.compare.a, &self.compare.b]
                .into_iter()
                .flatten()
                .all(|side| !side.is_empty() && side.trim() == side)
            && self.compare.alpha > 0.0
            && self.compare.alpha < 1.0
            && self.x.metric().is_none_or(Metric::per_cell)
    }

    /// Narrows the view to one value of a dimension: N through the N range, the others through the filters.
    pub fn select_only(&mut self, dimension: Dimension, value: &str) {
        if dimension == Dimension::N {
            let n = value.parse().ok();
            self.filter.n_min = n;
            self.filter.n_max = n;
        } else {
            self.filter
                .values
                .insert(dimension, vec![value.to_string()]);
        }
    }

    pub fn includes(&self, include: Include) -> bool {
        self.what_if.get(include)
    }
}

impl ViewState {
    /// Takes out of the filter the values no cell of the data has (`known`: each dimension's values, as
    /// `/api/index` lists them) and returns them as ignored parameters, so a link with `model=nope` says so in
    /// the page's notice instead of opening an empty view.
    pub fn drop_unknown_values(
        &mut self,
        known: &std::collections::BTreeMap<Dimension, Vec<crate::key::Value>>,
    ) -> Vec<IgnoredParameter> {
        let unknown = self.filter.unknown_values(known);
        self.filter.without(&unknown);
        unknown
            .into_iter()
            .map(|value| IgnoredParameter {
                name: value.dimension.name().to_string(),
                reason: value.reason(),
                value: value.value,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(query: &str) -> (ViewState, Vec<String>) {
        let (state, ignored) = ViewState::parse_query(query);
        (
            state,
            ignored.iter().map(|ignored| ignored.name.clone()).collect(),
        )
    }

    #[test]
    fn the_default_state_is_the_empty_query() {
        assert_eq!(ViewState::default().to_query(), "");
        assert_eq!(
            ViewState::parse_query(""),
            (ViewState::default(), Vec::new())
        );
    }

    #[test]
    fn the_product_brief_example_keeps_partial_cells_and_reports_nothing() {
        let query = "view=curves&metric=efficiency&phase=scaling&backend=vllm,sglang&workload=long_prefill_8k&color=backend&include=refilled&at=abc123";
        let (state, ignored) = parse(query);
        assert!(ignored.is_empty(), "{ignored:?}");
        assert_eq!(state.view, View::Curves);
        assert_eq!(
            state.filter.values[&Dimension::Backend],
            vec!["vllm", "sglang"]
        );
        assert_eq!(state.at.as_deref(), Some("abc123"));
        // `refilled` adds nothing (refilled cells are always in) and takes nothing away: partial cells stay in.
        assert_eq!(state.what_if, WhatIf::DEFAULT);
        assert_eq!(ViewState::from_query(&state.to_query()), state);
    }

    #[test]
    fn include_adds_to_the_defaults_and_omit_takes_partial_out() {
        let (state, _) = parse("include=excluded");
        assert_eq!(
            state.what_if,
            WhatIf {
                excluded: true,
                partial: true,
                pre_refill: false
            }
        );
        let (state, _) = parse("include=pre_refill&omit=partial");
        assert_eq!(
            state.what_if,
            WhatIf {
                excluded: false,
                partial: false,
                pre_refill: true
            }
        );
        assert_eq!(state.to_query(), "include=pre_refill&omit=partial");
        let (state, ignored) = parse("include=excluded,bogus&omit=refilled");
        assert!(state.what_if.excluded);
        assert_eq!(ignored, ["include", "omit"]);
    }

    #[test]
    fn a_named_criterion_brings_its_thresholds() {
        let (state, ignored) = parse("criterion=v3");
        assert!(ignored.is_empty());
        assert_eq!(state.criterion, Criterion::V3);
        assert_eq!(state.criterion.p95_multiplier_above(), None);
        // What earlier versions wrote for v3 still reads as v3.
        assert_eq!(
            parse("criterion=v3&p95_above=none"),
            (state.clone(), Vec::new())
        );
        assert_eq!(state.to_query(), "criterion=v3");
        // A threshold that contradicts the name is not used, and said.
        let (state, ignored) = parse("criterion=v3&eff_below=0.7");
        assert_eq!(
            (state.criterion, ignored),
            (Criterion::V3, vec!["eff_below".to_string()])
        );
        // Thresholds alone are a custom criterion.
        let (state, _) = parse("eff_below=0.7");
        assert_eq!(
            state.criterion,
            Criterion::Custom {
                efficiency_below: 0.7,
                p95_multiplier_above: Some(2.0)
            }
        );
        assert_eq!(
            state.to_query(),
            "criterion=custom&eff_below=0.7&p95_above=2"
        );
        let (state, ignored) = parse("criterion=custom&p95_above=NaN&eff_below=-1");
        assert_eq!(ignored, ["eff_below", "p95_above"]);
        assert!(state.is_valid());
    }

    #[test]
    fn every_field_survives_a_round_trip() {
        let mut state = ViewState {
            view: View::Inspector,
            metric: Metric::Breakdown,
            at_n: 32,
            criterion: Criterion::Custom {
                efficiency_below: 0.7,
                p95_multiplier_above: None,
            },
            rows: Dimension::Phase,
            cols: Dimension::N,
            grid: Dimension::Run,
            color: Dimension::Model,
            facet: None,
            aggregation: Aggregation::Median,
            x: XAxis::Metric(Metric::P95TtftMs),
            frontier: true,
            what_if: WhatIf {
                excluded: true,
                partial: false,
                pre_refill: true,
            },
            query: "http_400 & more, 100%".into(),
            sort: AuditSort::parse("-status"),
            at: Some("0123456789abcdef".into()),
            ..ViewState::default()
        };
        state
            .filter
            .accept(
                Dimension::Model,
                ["mistral-7b".into(), "meta-llama/Llama 3,1".into()],
            )
            .unwrap();
        state.filter.n_min = Some(2);
        state.filter.n_max = Some(16);
        state.cell = "20260612_212816_266127/cloud_core/scaling/sglang/mistral-7b/long_prefill_8k/n=32/rep=0"
            .parse()
            .ok();
        let query = state.to_query();
        assert!(
            query.contains("model=mistral-7b,meta-llama/Llama+3%2C1"),
            "{query}"
        );
        assert!(
            query.contains("include=excluded,pre_refill&omit=partial"),
            "{query}"
        );
        assert_eq!(ViewState::parse_query(&query), (state, Vec::new()));
    }

    #[test]
    fn a_compare_link_names_every_choice_and_reads_back() {
        let link = "view=compare&by=backend&a=vllm&b=sglang&per=workload&metric=efficiency&alpha=0.05&phase=scaling";
        let (state, ignored) = parse(link);
        assert!(ignored.is_empty(), "{ignored:?}");
        assert_eq!(state.view, View::Compare);
        assert_eq!(state.compare.a.as_deref(), Some("vllm"));
        assert_eq!(state.compare.b.as_deref(), Some("sglang"));
        assert_eq!(state.compare.per, Some(Dimension::Workload));
        // The link reads as the question (sides, groups, metric, α), defaults included while the Compare view is
        // shown; the filters follow.
        assert_eq!(
            state.to_query(),
            "view=compare&by=backend&a=vllm&b=sglang&per=workload&metric=efficiency&alpha=0.05&phase=scaling"
        );
        // Elsewhere only what differs from the defaults is written, so the choices survive a change of tab.
        let curves = ViewState {
            view: View::Curves,
            ..state
        };
        assert_eq!(
            curves.to_query(),
            "view=curves&a=vllm&b=sglang&phase=scaling"
        );
        let (_, ignored) = parse("view=compare&by=n&per=rep&alpha=1.5&a=+");
        assert_eq!(ignored, ["by", "a", "per", "alpha"]);
    }

    #[test]
    fn the_x_axis_and_the_frontier_read_back_and_bad_values_are_reported() {
        let (state, ignored) = parse("view=curves&x=p95_ttft_ms&metric=aggregate_tps&frontier=1");
        assert!(ignored.is_empty(), "{ignored:?}");
        assert_eq!(
            (state.x, state.metric, state.frontier),
            (XAxis::Metric(Metric::P95TtftMs), Metric::AggregateTps, true)
        );
        // Written beside the metric they are plotted against.
        assert_eq!(
            state.to_query(),
            "view=curves&metric=aggregate_tps&x=p95_ttft_ms&frontier=1"
        );
        // The defaults (N on x, no frontier) are not written, and read back as the defaults when given.
        assert_eq!(
            ViewState::parse_query("x=n&frontier=0"),
            (ViewState::default(), Vec::new())
        );
        // An unknown x, a metric without a value per point, or a frontier that is neither 1 nor 0 is left at its
        // default and reported.
        let (state, ignored) = ViewState::parse_query("view=curves&x=throughput&frontier=yes");
        assert_eq!((state.x, state.frontier), (XAxis::N, false));
        assert_eq!(
            ignored
                .iter()
                .map(|ignored| ignored.name.as_str())
                .collect::<Vec<_>>(),
            ["x", "frontier"]
        );
        assert!(
            ignored[0]
                .reason
                .starts_with("expected n or one of efficiency, p95_multiplier, p50_wall_ms"),
            "{}",
            ignored[0].reason
        );
        assert!(!ignored[0].reason.contains("breakdown"));
        for not_per_point in ["breakdown", "ok_rate"] {
            let (state, ignored) = parse(&format!("x={not_per_point}"));
            assert_eq!((state.x, ignored), (XAxis::N, vec!["x".to_string()]));
        }
        // A frontier with N on x is kept (the x picker may change next) but is no valid x by itself.
        let (state, ignored) = parse("frontier=1");
        assert!(ignored.is_empty() && state.frontier && state.is_valid());
        let invalid = ViewState {
            x: XAxis::Metric(Metric::Breakdown),
            ..ViewState::default()
        };
        assert!(!invalid.is_valid());
        assert_eq!(XAxis::choices().count(), 1 + Metric::curves().count());
    }

    #[test]
    fn junk_is_ignored_and_listed() {
        let (state, ignored) =
            parse("?view=nope&at_n=x&colour=red&model=&facet=sideways&rep=one&n=16&at_n=0");
        assert_eq!(state, ViewState::default());
        assert_eq!(
            ignored,
            ["view", "rep", "n", "at_n", "at_n", "facet", "colour"]
        );
    }

    #[test]
    fn aggregation_mean_and_median() {
        assert_eq!(Aggregation::Mean.apply(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(Aggregation::Median.apply(&[1.0, 2.0, 6.0]), Some(2.0));
        assert_eq!(Aggregation::Median.apply(&[]), None);
    }

    #[test]
    fn a_link_value_no_cell_has_is_dropped_and_reported_not_applied() {
        use crate::key::Value;
        let (mut state, ignored) =
            ViewState::parse_query("view=curves&model=nope,mistral-7b&backend=VLLM");
        assert!(ignored.is_empty());
        let known: std::collections::BTreeMap<Dimension, Vec<Value>> = [
            (Dimension::Model, vec![Value::Text("mistral-7b".into())]),
            (Dimension::Backend, vec![Value::Text("vllm".into())]),
        ]
        .into_iter()
        .collect();
        let dropped = state.drop_unknown_values(&known);
        assert_eq!(
            dropped.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                "`backend=VLLM`: no cell has this backend (did you mean `vllm`?)",
                "`model=nope`: no cell has this model",
            ]
        );
        assert_eq!(state.filter.values[&Dimension::Model], ["mistral-7b"]);
        assert!(!state.filter.values.contains_key(&Dimension::Backend));
    }
}
