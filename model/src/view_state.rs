//! The explorer's view state and its query-string form: every choice a user makes lives in the URL with
//! readable names, so a copied link reopens the same view (docs/api.md#app-links).
//!
//! The query codec is declarative: [`FIELDS`] lists every parameter once, with how it is printed (only when it
//! differs from [`ViewState::DEFAULT`]) and parsed. Parsing never fails: a parameter that cannot be used is
//! left at its default and reported in the list of ignored parameters, which the app shows as a notice.

pub use crate::curve::BandSpan;
use crate::filter::{DimensionFilter, LoadBound, is_valid_value};
use crate::key::{CellKey, Dimension};
use crate::load::{Load, LoadKind};
pub use crate::pooling::Aggregation;
use crate::query::{self, Field, Params, Target, target_accessors};
pub use crate::query::{CompareChoice, IgnoredParameter, Include, WhatIf, encode};
use crate::scaling::Criterion;
use crate::stat::Stat;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
/// The tab a view state shows.
pub enum View {
    #[default]
    /// Cells as squares: rows × columns, one grid per value of a third dimension.
    Matrix,
    /// A metric against N (or another metric), one panel per facet.
    Curves,
    /// The head-to-head of two values of one dimension.
    Compare,
    /// One cell: its reps, request rows and provenance.
    Inspector,
    /// Every cell's status and reason, and the runs' audit.
    Audit,
    /// One configuration × workload × load across runs, its change points and regression flag.
    History,
}

impl View {
    /// Every tab, in the order they are shown.
    pub const ALL: [View; 6] = [
        View::Matrix,
        View::Curves,
        View::Compare,
        View::Inspector,
        View::Audit,
        View::History,
    ];
    /// The name `view=` takes.
    pub fn name(self) -> &'static str {
        match self {
            View::Matrix => "matrix",
            View::Curves => "curves",
            View::Compare => "compare",
            View::Inspector => "inspector",
            View::Audit => "audit",
            View::History => "history",
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
            View::History => "History",
        }
    }
    /// The view a name names.
    pub fn parse(text: &str) -> Option<View> {
        View::ALL.into_iter().find(|view| view.name() == text)
    }
}

pub use crate::metric::Metric;

/// Which Pareto frontier the curves draw against a metric on x: none, each series' own (its best loads), or the
/// panel's across every series (the configurations that reach the best trade-off at each level).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrontierMode {
    /// No frontier: points joined in load order.
    #[default]
    Off,
    /// Each series' own frontier.
    Series,
    /// One frontier per panel across all its series' single-configuration points.
    Panel,
}

impl FrontierMode {
    /// Every mode, in the picker's order.
    pub const ALL: [FrontierMode; 3] =
        [FrontierMode::Off, FrontierMode::Series, FrontierMode::Panel];

    /// How `frontier=` writes it: `0`, `1` (each series') or `all`.
    pub fn name(self) -> &'static str {
        match self {
            FrontierMode::Off => "0",
            FrontierMode::Series => "1",
            FrontierMode::Panel => "all",
        }
    }

    /// The picker's wording.
    pub fn label(self) -> &'static str {
        match self {
            FrontierMode::Off => "no frontier",
            FrontierMode::Series => "frontier of each series",
            FrontierMode::Panel => "frontier across configurations",
        }
    }

    /// The mode `frontier=` names.
    pub fn parse(text: &str) -> Result<FrontierMode, &'static str> {
        FrontierMode::ALL
            .into_iter()
            .find(|mode| mode.name() == text.trim())
            .ok_or("expected 1 (each series' Pareto frontier), all (across the panel's configurations) or 0")
    }

    /// Whether a frontier is asked for.
    pub fn is_on(self) -> bool {
        self != FrontierMode::Off
    }
}

/// What the curves put on the x axis: concurrency N (log₂, the default), or a per-cell metric, so a sweep reads
/// as throughput against latency the way vLLM, SGLang and AIPerf benchmarks are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum XAxis {
    #[default]
    /// The load: concurrency N on a log₂ axis, or the offered rate.
    Load,
    /// A metric with a value per cell ([`Metric::per_cell`]).
    Metric(Metric),
}

impl XAxis {
    /// The choices of the x picker: the load, then every metric the curves can plot.
    pub fn choices() -> impl Iterator<Item = XAxis> {
        std::iter::once(XAxis::Load).chain(Metric::curves().map(XAxis::Metric))
    }

    /// How the `x` parameter writes it: `load`, or the metric's name as `metric` writes it.
    pub fn name(self) -> &'static str {
        match self {
            XAxis::Load => "load",
            XAxis::Metric(metric) => metric.name(),
        }
    }

    /// The axis' label and the picker's wording.
    pub fn label(self) -> &'static str {
        match self {
            XAxis::Load => "concurrency N (log₂)",
            XAxis::Metric(metric) => metric.label(),
        }
    }

    /// The axis' label when it carries loads of `kind` (`concurrency N (log₂)`, `offered rate (req/s, log₂)`);
    /// a metric's label otherwise.
    pub fn label_at(self, kind: Option<LoadKind>) -> &'static str {
        match (self, kind) {
            (XAxis::Load, Some(LoadKind::Rate)) => "offered rate (req/s, log₂)",
            (axis, _) => axis.label(),
        }
    }

    /// The metric on the axis, `None` for the load.
    pub fn metric(self) -> Option<Metric> {
        match self {
            XAxis::Load => None,
            XAxis::Metric(metric) => Some(metric),
        }
    }

    /// `load` (or `n`, its name in older links) or a per-cell metric's name; otherwise why not. Breakdown N and
    /// the ok rate have no value per point.
    pub fn parse(text: &str) -> Result<XAxis, String> {
        if text == "load" || text == "n" {
            return Ok(XAxis::Load);
        }
        match Metric::parse(text) {
            Some(metric) if metric.per_cell() => Ok(XAxis::Metric(metric)),
            _ => Err(format!(
                "expected load or one of {}",
                Metric::curves()
                    .map(Metric::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// A column of the audit table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditColumn {
    /// The cell's key.
    Key,
    /// Its status.
    Status,
    /// Its flags (refilled, fallback, excluded).
    Flags,
    /// Why it is not clean.
    Reason,
    /// Its rows against the expected rows.
    Rows,
}

impl AuditColumn {
    /// Every column, in the order they are shown.
    pub const ALL: [AuditColumn; 5] = [
        AuditColumn::Key,
        AuditColumn::Status,
        AuditColumn::Flags,
        AuditColumn::Reason,
        AuditColumn::Rows,
    ];
    /// The name `sort=` takes.
    pub fn name(self) -> &'static str {
        match self {
            AuditColumn::Key => "key",
            AuditColumn::Status => "status",
            AuditColumn::Flags => "flags",
            AuditColumn::Reason => "reason",
            AuditColumn::Rows => "rows",
        }
    }
    /// The column a name names.
    pub fn parse(text: &str) -> Option<AuditColumn> {
        AuditColumn::ALL
            .into_iter()
            .find(|column| column.name() == text)
    }
}

/// How the audit table is sorted: a column, ascending or descending (written `-column`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditSort {
    /// The column sorted by.
    pub column: AuditColumn,
    /// Whether the largest value comes first.
    pub descending: bool,
}

impl AuditSort {
    /// `column` or `-column` (descending).
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

/// The whole view (the filter takes every dimension but N by value, N by range: [`Dimension::is_filterable`]).
/// Defaults are what a first visit shows; only non-defaults are written to the URL.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewState {
    /// The tab shown.
    pub view: View,
    /// Selected values per dimension and the N range.
    pub filter: DimensionFilter,
    /// What the matrix colours by, the curves plot and Compare compares.
    pub metric: Metric,
    /// The load the matrix shows efficiency / p95 multiplier at.
    pub at_load: Load,
    /// The breakdown criterion.
    pub criterion: Criterion,
    /// The matrix's rows.
    pub rows: Dimension,
    /// The matrix's columns.
    pub cols: Dimension,
    /// One matrix grid per value of this dimension, side by side.
    pub grid: Dimension,
    /// What the curves' series are coloured by.
    pub color: Dimension,
    /// One curves panel per value of this dimension; `None`: one panel.
    pub facet: Option<Dimension>,
    /// How reps, then the series of a curve, are pooled.
    pub aggregation: Aggregation,
    /// What the curves' bands span.
    pub band: BandSpan,
    /// What the curves' x axis shows.
    pub x: XAxis,
    /// Which Pareto frontier the curves draw (with a metric on x).
    pub frontier: FrontierMode,
    /// The SLO the matrix's capacity is judged by, as the link writes it (bounds or a preset's name); empty for
    /// the default ([`crate::slo::DEFAULT_TEXT`]).
    pub slo: String,
    /// The kind of load the curves put on x (concurrency or offered rate); `None`: the kind most cells have.
    pub load_kind: Option<LoadKind>,
    /// The inspected cell.
    pub cell: Option<CellKey>,
    /// The what-if toggles.
    pub what_if: WhatIf,
    /// The snapshot the link was made for.
    pub at: Option<String>,
    /// Audit table: free-text filter and sort column.
    pub query: String,
    /// The audit table's sort.
    pub sort: Option<AuditSort>,
    /// The Compare view's choices.
    pub compare: CompareChoice,
    /// A History's method and regression rule (`window`, `pvalue`, `k`, `tolerance`, `since`).
    pub history: crate::history::HistoryChoice,
}

impl ViewState {
    /// What a first visit shows; only what differs from it is written to the URL.
    pub const DEFAULT: ViewState = ViewState {
        view: View::Matrix,
        filter: DimensionFilter::ALL,
        metric: Metric::Stat(Stat::Efficiency),
        at_load: Load::Concurrency(16),
        criterion: Criterion::V1,
        rows: Dimension::Model,
        cols: Dimension::Workload,
        grid: Dimension::Backend,
        color: Dimension::Backend,
        facet: Some(Dimension::Workload),
        aggregation: Aggregation::Mean,
        band: BandSpan::Cells,
        x: XAxis::Load,
        frontier: FrontierMode::Off,
        slo: String::new(),
        load_kind: None,
        cell: None,
        what_if: WhatIf::DEFAULT,
        at: None,
        query: String::new(),
        sort: None,
        compare: CompareChoice::DEFAULT,
        history: crate::history::HistoryChoice::DEFAULT,
    };
}

impl ViewState {
    /// The SLO the view judges capacity by: the link's, else the default.
    pub fn slo(&self) -> crate::slo::Slo {
        crate::slo::Slo::or_default(&self.slo)
    }
}

impl Default for ViewState {
    fn default() -> Self {
        ViewState::DEFAULT
    }
}

/// A field with one parameter holding one value. `$print` writes the value (called only when it differs from
/// the default), `$parse` reads it back or says why it cannot.
macro_rules! scalar {
    ($name:literal, $field:ident, $print:expr, $parse:expr) => {
        Field {
            print: |state: &ViewState, out| {
                if state.$field != ViewState::DEFAULT.$field {
                    out.push(($name, encode(&($print)(&state.$field), true)));
                }
            },
            parse: |state: &mut ViewState, params| {
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

/// The matrix's load: a bare whole number is a concurrency (as `at_n` always wrote it), another bare number a
/// rate, and `n=16`, `rate=2.5`, `rate=inf` say which.
fn parse_at_load(text: &str) -> Result<Load, String> {
    let text = text.trim();
    let digits = !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit());
    let load = if digits {
        // A bare whole number is always an N, so one too large for N is not read as a rate instead.
        query::whole_number(text).ok().map(Load::Concurrency)
    } else if let Ok(load) = text.parse::<Load>() {
        Some(load)
    } else {
        text.parse::<crate::RateRps>().ok().map(Load::Rate)
    };
    load.filter(|load| *load != Load::Unstated && load.concurrency() != Some(0))
        .ok_or_else(|| "expected a load: N from 1, n=N, rate=R or rate=inf".to_string())
}

/// A concurrency as its bare N, any other load in its text form.
fn print_at_load(load: &Load) -> String {
    match load {
        Load::Concurrency(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// `at_load` (`at_n` in older links): the load the matrix shows its read-at-one-load metrics at.
const AT_LOAD: Field<ViewState> = Field {
    print: |state, out| {
        if state.at_load != ViewState::DEFAULT.at_load {
            out.push(("at_load", encode(&print_at_load(&state.at_load), true)));
        }
    },
    parse: |state, params| {
        let old = params.take("at_n").map(|text| ("at_n", text));
        if let Some((name, text)) = params.take("at_load").map(|text| ("at_load", text)).or(old) {
            // `at_n` only ever held an N.
            let parsed = match name {
                "at_n" => query::whole_number(&text)
                    .map(Load::Concurrency)
                    .map_err(|_| "expected a whole number N from 1".to_string()),
                _ => parse_at_load(&text),
            };
            match parsed {
                Ok(load) => state.at_load = load,
                Err(reason) => params.ignore(name, &text, reason),
            }
        }
    },
};

fn positive_number(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|value| value.is_finite() && *value > 0.0)
        .ok_or_else(|| "expected a positive number".to_string())
}

fn print_threshold(value: f64) -> String {
    value.to_string()
}

/// A dimension picker's parameter (`rows`, `cols`, `grid`, `color`).
macro_rules! dimension {
    ($name:literal, $field:ident) => {
        scalar!(
            $name,
            $field,
            |dimension: &Dimension| dimension.name().to_string(),
            query::dimension
        )
    };
}

/// The criterion and its thresholds: `criterion=v3`, or `criterion=custom&eff_below=0.7&p95_above=none`.
const CRITERION: Field<ViewState> = Field {
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
                .map_err(|reason| params.ignore("p95_above", &text, format!("{reason} or none")))
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
                    params.ignore(
                        "eff_below",
                        text,
                        format!(
                            "criterion={} fixes efficiency < {}; use criterion=custom to change it",
                            named.name(),
                            named.efficiency_below()
                        ),
                    );
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
};

impl Target for ViewState {
    const EXACT_N: bool = false;
    target_accessors!();
    fn compare_shown(&self) -> bool {
        self.view == View::Compare
    }
}

/// Every parameter, in the order a link writes them; the ones every surface shares are [`crate::query`]'s.
const FIELDS: &[Field<ViewState>] = &[
    scalar!(
        "view",
        view,
        |view: &View| view.name().to_string(),
        |text| {
            View::parse(text).ok_or("expected one of matrix, curves, compare, inspector, audit")
        }
    ),
    query::sides(),
    query::metric(),
    // The curves' x axis and frontier, beside the metric they plot against it (`metric=aggregate_tps&x=p95_ttft_ms`).
    scalar!("x", x, |x: &XAxis| x.name().to_string(), XAxis::parse),
    scalar!(
        "frontier",
        frontier,
        |mode: &FrontierMode| mode.name().to_string(),
        FrontierMode::parse
    ),
    query::slo(),
    scalar!(
        "load_kind",
        load_kind,
        |kind: &Option<LoadKind>| kind.map_or("", LoadKind::name).to_string(),
        |text: &str| match LoadKind::parse(text.trim()) {
            Some(LoadKind::Unstated) | None => Err("expected concurrency or rate"),
            kind => Ok(kind),
        }
    ),
    query::alpha(),
    query::dimensions(),
    query::load_range(),
    AT_LOAD,
    CRITERION,
    dimension!("rows", rows),
    dimension!("cols", cols),
    dimension!("grid", grid),
    dimension!("color", color),
    scalar!(
        "facet",
        facet,
        |facet: &Option<Dimension>| facet.map_or("none", Dimension::name).to_string(),
        |text| if text == "none" {
            Ok(None)
        } else {
            query::dimension(text)
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
    query::cell(),
    query::toggles(),
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
    query::history(),
    query::at(),
    query::params(),
];

impl ViewState {
    /// The History of `cell`'s configuration × workload × load, on the view's metric when it has a value per
    /// cell, else on the History's default metric; every other choice kept.
    pub fn history_of(&self, cell: &CellKey) -> ViewState {
        let mut next = self.clone();
        next.view = View::History;
        next.cell = Some(cell.clone());
        if !next.metric.per_cell() {
            next.metric = crate::history::DEFAULT_METRIC;
        }
        next
    }

    /// The relative URL of the state, `?` and its query: what a link to it carries (so middle-click and "copy
    /// link address" work on every link of the app).
    pub fn href(&self) -> String {
        format!("?{}", self.to_query())
    }

    /// Writes the state as a query string (without `?`), non-default values only, in a fixed order.
    pub fn to_query(&self) -> String {
        query::print(FIELDS, self)
    }

    /// Reads a query string (with or without `?`). Never fails: what cannot be used is left at its default and
    /// listed, so an old or hand-edited link still opens and says what it ignored.
    pub fn parse_query(query: &str) -> (ViewState, Vec<IgnoredParameter>) {
        let mut params = Params::of_query(query);
        let mut state = ViewState::default();
        query::parse(FIELDS, &mut state, &mut params);
        (state, params.finish())
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
                        && is_valid_value(*dimension, value)
                })
        });
        filters_ok
            && self.at_load != Load::Unstated
            && self.at_load.concurrency() != Some(0)
            && positive(self.criterion.efficiency_below())
            && self.criterion.p95_multiplier_above().is_none_or(positive)
            && self.at.as_ref().is_none_or(|at| !at.is_empty())
            && crate::query::is_contrastable(self.compare.by)
            && self.compare.per.is_none_or(crate::query::is_contrastable)
            && [&self.compare.a, &self.compare.b]
                .into_iter()
                .flatten()
                .all(|side| !side.is_empty() && side.trim() == side)
            && self.compare.alpha > 0.0
            && self.compare.alpha < 1.0
            && self.x.metric().is_none_or(Metric::per_cell)
    }

    /// Turns the view into the throughput–interactivity trade-off (InferenceX's and `vllm bench sweep
    /// plot_pareto`'s view): curves of output throughput per accelerator (plain output throughput when no cell
    /// knows its accelerator count) against p50 interactivity, coloured by configuration so that each series is
    /// one measured configuration and each point one of its loads, faceted by `facet`, each series with its
    /// Pareto frontier.
    pub fn show_pareto(&mut self, per_accelerator_known: bool, facet: Option<Dimension>) {
        self.view = View::Curves;
        self.metric = if per_accelerator_known {
            Metric::Stat(Stat::OutputTpsPerAccelerator)
        } else {
            Metric::Stat(Stat::AggregateTps)
        };
        self.x = XAxis::Metric(Metric::Stat(Stat::P50InteractivityTps));
        self.frontier = FrontierMode::Series;
        self.color = Dimension::Configuration;
        self.facet = facet;
    }

    /// Narrows the view to one value of a dimension: the load through the load range (an unbounded rate as the
    /// range from `inf` up), the others through the filters.
    pub fn select_only(&mut self, dimension: Dimension, value: &str) {
        if dimension == Dimension::Load {
            let value = parse_at_load(value).ok().and_then(Load::value);
            let (low, high) = match value {
                Some(value) if value.is_infinite() => (LoadBound::new(value), None),
                Some(value) => (LoadBound::new(value), LoadBound::new(value)),
                None => (None, None),
            };
            self.filter.load_min = low;
            self.filter.load_max = high;
        } else {
            self.filter
                .values
                .insert(dimension, vec![value.to_string()]);
        }
    }

    /// Whether a what-if toggle is on.
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
    fn the_pareto_view_is_a_link_of_its_own() {
        let mut state = ViewState::default();
        state.show_pareto(true, Some(Dimension::Workload));
        let query = state.to_query();
        for part in [
            "view=curves",
            "metric=output_tps_per_accelerator",
            "x=p50_interactivity_tps",
            "frontier=1",
            "color=configuration",
        ] {
            assert!(query.contains(part), "{query} lacks {part}");
        }
        assert_eq!(ViewState::parse_query(&query), (state.clone(), Vec::new()));
        state.show_pareto(false, None);
        assert_eq!(state.metric, Metric::Stat(Stat::AggregateTps));
        assert_eq!((state.color, state.facet), (Dimension::Configuration, None));
        assert!(state.to_query().contains("facet=none"));
    }

    #[test]
    fn narrowing_to_all_at_once_links_load_min_inf() {
        let mut state = ViewState::default();
        state.select_only(Dimension::Load, "rate=inf");
        let query = state.to_query();
        assert!(query.contains("load_min=inf"), "{query}");
        assert!(!query.contains("load_max"), "{query}");
        assert_eq!(ViewState::parse_query(&query), (state, Vec::new()));
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
            at_load: crate::Load::Concurrency(32),
            criterion: Criterion::Custom {
                efficiency_below: 0.7,
                p95_multiplier_above: None,
            },
            rows: Dimension::Phase,
            cols: Dimension::Load,
            grid: Dimension::Run,
            color: Dimension::Model,
            facet: None,
            aggregation: Aggregation::Median,
            x: XAxis::Metric(Metric::Stat(Stat::P95TtftMs)),
            frontier: FrontierMode::Panel,
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
        state.filter.load_min = Some(2.into());
        state.filter.load_max = Some(16.into());
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
            (
                XAxis::Metric(Metric::Stat(Stat::P95TtftMs)),
                Metric::Stat(Stat::AggregateTps),
                FrontierMode::Series
            )
        );
        // Written beside the metric they are plotted against.
        assert_eq!(
            state.to_query(),
            "view=curves&metric=aggregate_tps&x=p95_ttft_ms&frontier=1"
        );
        let (state, ignored) = parse("view=curves&x=p95_ttft_ms&frontier=all");
        assert!(ignored.is_empty(), "{ignored:?}");
        assert_eq!(state.frontier, FrontierMode::Panel);
        assert_eq!(state.to_query(), "view=curves&x=p95_ttft_ms&frontier=all");
        // The defaults (N on x, no frontier) are not written, and read back as the defaults when given.
        assert_eq!(
            ViewState::parse_query("x=n&frontier=0"),
            (ViewState::default(), Vec::new())
        );
        // An unknown x, a metric without a value per point, or a frontier that is none of 1, all and 0 is left at
        // its default and reported.
        let (state, ignored) = ViewState::parse_query("view=curves&x=throughput&frontier=yes");
        assert_eq!((state.x, state.frontier), (XAxis::Load, FrontierMode::Off));
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
                .starts_with("expected load or one of efficiency, p95_multiplier, p50_wall_ms"),
            "{}",
            ignored[0].reason
        );
        assert!(!ignored[0].reason.contains("breakdown"));
        for not_per_point in ["breakdown", "ok_rate"] {
            let (state, ignored) = parse(&format!("x={not_per_point}"));
            assert_eq!((state.x, ignored), (XAxis::Load, vec!["x".to_string()]));
        }
        // A frontier with N on x is kept (the x picker may change next) but is no valid x by itself.
        let (state, ignored) = parse("frontier=1");
        assert!(ignored.is_empty() && state.frontier.is_on() && state.is_valid());
        let invalid = ViewState {
            x: XAxis::Metric(Metric::Breakdown),
            ..ViewState::default()
        };
        assert!(!invalid.is_valid());
        assert_eq!(XAxis::choices().count(), 1 + Metric::curves().count());
    }

    #[test]
    fn a_bare_number_too_large_for_n_is_no_rate() {
        for link in [
            "at_n=99999999999999999999",
            "at_load=99999999999999999999",
            "at_n=2.5",
        ] {
            let (state, ignored) = parse(link);
            assert_eq!(state.at_load, ViewState::default().at_load, "{link}");
            assert_eq!(ignored.len(), 1, "{link}");
        }
        assert_eq!(parse("at_load=2.5").0.at_load, Load::rate(2.5).unwrap());
        assert_eq!(
            parse("at_load=rate=inf").0.at_load,
            Load::rate(f64::INFINITY).unwrap()
        );
        assert_eq!(parse("at_n=16").0.at_load, Load::Concurrency(16));
    }

    #[test]
    fn older_links_name_the_load_n() {
        let (state, ignored) = parse("cols=n&rows=n_agents");
        assert!(ignored.is_empty(), "{ignored:?}");
        assert_eq!((state.cols, state.rows), (Dimension::Load, Dimension::Load));
        assert!(
            state.to_query().contains("cols=load"),
            "{}",
            state.to_query()
        );
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
