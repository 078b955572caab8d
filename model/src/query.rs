//! The typed query: every parameter the app's links, the `/api/*` endpoints and the CLI take, read and written by
//! one declarative codec (docs/api.md#parameters).
//!
//! Each parameter is declared once as a field (its names, how it is written, how it is read and why a value is
//! refused), and the app's [`crate::view_state::ViewState`] and the [`Query`] of the API and the CLI are both
//! read through those fields, so `include=refilled` or `by=n` means the same, and is refused for the same reason,
//! on every surface. A link is read leniently (a value that cannot be used is left at its default and listed); an
//! endpoint reads strictly ([`Query::parse`]): the first such value, or a parameter the endpoint does not take,
//! refuses the request.

mod codec;
mod fields;
mod flags;
mod toggles;

pub(crate) use codec::{Field, Params, parse, print};
pub use codec::{IgnoredParameter, encode};
pub(crate) use fields::{
    Target, alpha, at, cell, dimension, dimensions, history, load_range, metric, params, sides,
    slo, target_accessors, toggles, whole_number,
};
pub use flags::{Flag, PARAM_FLAG};
pub use toggles::{Include, WhatIf};

use crate::filter::DimensionFilter;
use crate::key::{CellKey, Dimension};
use crate::metric::Metric;
use crate::status::CellStatus;
use serde::{Deserialize, Serialize};

/// The dimensions `by` can contrast (N and rep are what pairs are made of).
pub const CONTRASTABLE: [Dimension; 6] = [
    Dimension::Backend,
    Dimension::Model,
    Dimension::Run,
    Dimension::Suite,
    Dimension::Phase,
    Dimension::Workload,
];

/// Whether a query string (with or without `?`) has a parameter called one of `names`, its name decoded as every
/// surface decodes names: a link that states a choice, as against one that leaves it to the data.
pub fn names_any(query: &str, names: &[&str]) -> bool {
    Params::of_query(query)
        .pairs
        .iter()
        .any(|(name, _)| names.contains(&name.as_str()))
}

/// Whether a comparison can contrast or group by `dimension`: one of [`CONTRASTABLE`] or a deployment parameter.
pub fn is_contrastable(dimension: Dimension) -> bool {
    CONTRASTABLE.contains(&dimension) || dimension.is_param()
}

/// A comparison's choices: contrast `a` with `b`, two values of `by`, one group per value of `per`, at
/// significance level `alpha` (the metric is the query's or the view's). `a` and `b` unset in a view: the two
/// values of `by` with the most cells ([`crate::compare::spec_of_view`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareChoice {
    /// The dimension whose two values are compared.
    pub by: Dimension,
    /// The first side's value.
    pub a: Option<String>,
    /// The second side's value.
    pub b: Option<String>,
    /// One group per value of this dimension; `None`: one group.
    pub per: Option<Dimension>,
    /// Significance level of the verdict (Holm-adjusted p below it).
    pub alpha: f64,
}

impl CompareChoice {
    /// Backend against backend, one group per workload, α = 0.05.
    pub const DEFAULT: CompareChoice = CompareChoice {
        by: Dimension::Backend,
        a: None,
        b: None,
        per: Some(Dimension::Workload),
        alpha: 0.05,
    };
}

/// How a body is encoded (`format=`, the CLI's `--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Comma-separated values with a header line; undefined numbers are empty.
    Csv,
    /// An array of objects with explicit `null`s.
    Json,
    /// An Arrow IPC stream.
    Arrow,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 3] = [Format::Csv, Format::Json, Format::Arrow];

    /// The name `format=` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Arrow => "arrow",
        }
    }

    /// The format a name names.
    pub fn parse(text: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|format| format.name() == text)
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Format::parse(text)
            .ok_or_else(|| format!("unknown format `{text}`; expected csv, json or arrow"))
    }
}

/// The query of the pre-refill cells on `/api/cells` (`include=pre_refill`), as the app asks for them and an offline
/// copy stores them: [`Query::to_query`] of the default query with the `pre_refill` toggle on, written out so that
/// the browser links no query writer for it.
pub const PRE_REFILL_CELLS: &str = "include=pre_refill";

/// A request as the API and the CLI take it: which cells, which statuses, the what-if toggles, the comparison's
/// choices and metric, one cell, the snapshot and the encoding. Its text form is what [`Query::to_query`] writes
/// and [`Query::parse`] reads back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Query {
    /// The dimension filters (exact N values included) and the N range.
    pub filter: DimensionFilter,
    /// The statuses kept, in the order given; empty keeps every status.
    pub status: Vec<CellStatus>,
    /// The what-if toggles.
    pub what_if: WhatIf,
    /// The comparison's choices.
    pub compare: CompareChoice,
    /// The metric compared.
    pub metric: Metric,
    /// One cell, by its key.
    pub cell: Option<CellKey>,
    /// The snapshot asked for (a pinned link).
    pub at: Option<String>,
    /// The encoding asked for; each endpoint has its default.
    pub format: Option<Format>,
    /// The SLO a comparison of SLO capacity judges by (its text form); empty is the default SLO.
    pub slo: String,
    /// A History's method and regression rule.
    pub history: crate::history::HistoryChoice,
}

impl Query {
    /// Every cell, every status, the default toggles and choices, the current snapshot.
    pub const DEFAULT: Query = Query {
        filter: DimensionFilter::ALL,
        status: Vec::new(),
        what_if: WhatIf::DEFAULT,
        compare: CompareChoice::DEFAULT,
        metric: Metric::DEFAULT,
        cell: None,
        at: None,
        format: None,
        slo: String::new(),
        history: crate::history::HistoryChoice::DEFAULT,
    };
}

impl Default for Query {
    fn default() -> Self {
        Query::DEFAULT
    }
}

impl Target for Query {
    const EXACT_N: bool = true;
    target_accessors!();
    fn compare_shown(&self) -> bool {
        false
    }
}

/// An endpoint of the API: which parameters it takes and in which formats it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `/api/index`
    Index,
    /// `/api/provenance`
    Provenance,
    /// `/api/cells`
    Cells,
    /// `/api/requests`
    Requests,
    /// `/api/compare`
    Compare,
    /// `/api/history`
    History,
    /// `/api/events`
    Events,
    /// `/api/bundle`, whose query is a view's link, read as the app reads it.
    Bundle,
}

/// Parameter names taken under another parameter's name: `lineage` is `include` as `/api/cells` spelled it, `n`
/// the load as older links and calls name it.
const ALIASES: [(&str, &str); 2] = [("lineage", "include"), ("n", "load")];

/// The names of the dimension filters, in key order.
const DIMENSIONS: [&str; 8] = [
    Dimension::Run.name(),
    Dimension::Suite.name(),
    Dimension::Phase.name(),
    Dimension::Backend.name(),
    Dimension::Model.name(),
    Dimension::Workload.name(),
    Dimension::Load.name(),
    Dimension::Rep.name(),
];

/// `[a…, b…]` for two constant lists.
const fn joined<const A: usize, const B: usize, const N: usize>(
    a: [&'static str; A],
    b: [&'static str; B],
) -> [&'static str; N] {
    let mut out = [""; N];
    let mut position = 0;
    while position < A + B {
        out[position] = if position < A {
            a[position]
        } else {
            b[position - A]
        };
        position += 1;
    }
    out
}

const CELLS_PARAMETERS: [&str; 13] =
    joined(DIMENSIONS, ["status", "include", "omit", "at", "format"]);
const REQUESTS_PARAMETERS: [&str; 10] = joined(joined::<1, 8, 9>(["cell"], DIMENSIONS), ["format"]);
const COMPARE_PARAMETERS: [&str; 19] = joined(
    joined::<7, 8, 15>(
        ["by", "a", "b", "per", "metric", "slo", "alpha"],
        DIMENSIONS,
    ),
    ["include", "omit", "at", "format"],
);
const HISTORY_PARAMETERS: [&str; 18] = joined(
    joined::<6, 8, 14>(
        ["metric", "window", "pvalue", "k", "tolerance", "since"],
        DIMENSIONS,
    ),
    ["include", "omit", "at", "format"],
);

impl Endpoint {
    /// Every endpoint that reads a query.
    pub const ALL: [Endpoint; 8] = [
        Endpoint::Index,
        Endpoint::Provenance,
        Endpoint::Cells,
        Endpoint::Requests,
        Endpoint::Compare,
        Endpoint::History,
        Endpoint::Events,
        Endpoint::Bundle,
    ];

    /// The route's path.
    pub fn route(self) -> &'static str {
        match self {
            Endpoint::Index => "/api/index",
            Endpoint::Provenance => "/api/provenance",
            Endpoint::Cells => "/api/cells",
            Endpoint::Requests => "/api/requests",
            Endpoint::Compare => "/api/compare",
            Endpoint::History => "/api/history",
            Endpoint::Events => "/api/events",
            Endpoint::Bundle => "/api/bundle",
        }
    }

    /// The endpoint of a route's path.
    pub fn of_route(path: &str) -> Option<Endpoint> {
        Endpoint::ALL
            .into_iter()
            .find(|endpoint| endpoint.route() == path)
    }

    /// The parameters it takes (aliases aside), in the order the typed query writes them.
    pub fn parameters(self) -> &'static [&'static str] {
        match self {
            Endpoint::Index | Endpoint::Provenance => &["at", "format"],
            Endpoint::Cells => &CELLS_PARAMETERS,
            Endpoint::Requests => &REQUESTS_PARAMETERS,
            Endpoint::Compare => &COMPARE_PARAMETERS,
            Endpoint::History => &HISTORY_PARAMETERS,
            Endpoint::Events | Endpoint::Bundle => &[],
        }
    }

    /// The formats it answers in.
    pub fn formats(self) -> &'static [Format] {
        match self {
            Endpoint::Cells | Endpoint::Requests => &Format::ALL,
            _ => &[Format::Json],
        }
    }

    /// Whether it takes `name`, directly or as an alias; an endpoint filtering cells also takes a deployment
    /// parameter as a dimension filter.
    fn takes(self, name: &str) -> bool {
        let name = ALIASES
            .iter()
            .find(|(alias, _)| *alias == name)
            .map_or(name, |(_, canonical)| canonical);
        self.parameters().contains(&name)
            || (self.parameters().contains(&Dimension::Workload.name())
                && Dimension::parse(name).is_some_and(Dimension::is_param))
    }
}

/// Why an endpoint refuses a query.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// A parameter the endpoint does not take.
    #[error("unknown parameter `{name}`; accepted: {accepted}")]
    Unknown {
        /// The parameter as given.
        name: String,
        /// The parameters the endpoint takes.
        accepted: String,
    },
    /// A value the parameter cannot take, with the reason a link would be given.
    #[error("{0}")]
    Bad(IgnoredParameter),
    /// The parameters that name a cell are incomplete.
    #[error(
        "missing {0}; a cell is named by cell=run/suite/phase/backend/model/workload/n=N/rep=R, or by run, phase, model, workload, load and rep (and suite, backend when ambiguous)"
    )]
    Missing(String),
}

/// Why a request for one cell's rows names no single cell.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CellLookupError {
    /// No cell has these parts.
    #[error("no cell with this run, phase, model, workload, n and rep")]
    Unknown,
    /// Several cells do; each as the parameters that would name it alone.
    #[error("several cells match; add one of: {}", .0.join("; "))]
    Ambiguous(Vec<String>),
}

impl CellLookupError {
    /// The error code of the API's error body.
    pub fn code(&self) -> &'static str {
        match self {
            CellLookupError::Unknown => "unknown_cell",
            CellLookupError::Ambiguous(_) => "ambiguous_cell",
        }
    }
}

impl QueryError {
    /// The error code of the API's error body.
    pub fn code(&self) -> &'static str {
        match self {
            QueryError::Unknown { .. } => "unknown_parameter",
            QueryError::Bad(_) => "bad_parameter",
            QueryError::Missing(_) => "missing_parameter",
        }
    }

    fn bad(name: &str, value: &str, reason: impl Into<String>) -> QueryError {
        QueryError::Bad(IgnoredParameter {
            name: name.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        })
    }
}

impl Query {
    /// Reads a query string (with or without `?`) as `endpoint` takes it: a parameter it does not take, or a
    /// value that cannot be used, refuses the query. The bundle's query is a view's link and is not read here.
    pub fn parse(query: &str, endpoint: Endpoint) -> Result<Query, QueryError> {
        Query::read(Params::of_query(query), endpoint)
    }

    /// [`Query::parse`] of decoded name/value pairs (commas still separate list items).
    pub fn from_pairs(pairs: &[(String, String)], endpoint: Endpoint) -> Result<Query, QueryError> {
        Query::read(Params::of_pairs(pairs), endpoint)
    }

    fn read(mut params: Params, endpoint: Endpoint) -> Result<Query, QueryError> {
        if let Some((name, _)) = params.pairs.iter().find(|(name, _)| !endpoint.takes(name)) {
            return Err(QueryError::Unknown {
                name: name.clone(),
                accepted: endpoint.parameters().join(", "),
            });
        }
        let mut query = Query::DEFAULT;
        if endpoint == Endpoint::History {
            query.metric = crate::history::DEFAULT_METRIC;
        }
        parse(&fields::query_fields(), &mut query, &mut params);
        if let Some(ignored) = params.finish().into_iter().next() {
            return Err(QueryError::Bad(ignored));
        }
        if let Some(format) = query.format
            && !endpoint.formats().contains(&format)
        {
            let reason = format!("{} is JSON only (format=json)", endpoint.route());
            return Err(QueryError::bad("format", format.name(), reason));
        }
        Ok(query)
    }

    /// Writes the query as a query string (without `?`): non-default values only, in a fixed order, so that
    /// [`Query::parse`] reads it back as it is.
    pub fn to_query(&self) -> String {
        print(&fields::query_fields(), self)
    }

    /// Whether a cells table is asked for as it was before refills (`include=pre_refill`). The table lists every
    /// cell with its status and exclusions whatever the toggles, which decide only what enters aggregates; of the
    /// toggles only `pre_refill` changes it, and the others are refused rather than answered as if applied.
    pub fn cells_pre_refill(&self) -> Result<bool, QueryError> {
        let what_if = self.what_if;
        let refused = match (what_if.excluded, what_if.partial) {
            (true, _) => Some(("include", "excluded")),
            (_, false) => Some(("omit", "partial")),
            _ => None,
        };
        match refused {
            Some((name, value)) => Err(QueryError::bad(
                name,
                value,
                "/api/cells lists every cell with its status and exclusions; of the toggles only pre_refill changes it",
            )),
            None => Ok(what_if.pre_refill),
        }
    }

    /// Which cells a cells-table query keeps (its statuses and dimension filters), once every filter value is
    /// one of `known` (the data's values of each dimension): the values no cell has otherwise.
    pub fn cells_selector(
        &self,
        known: &std::collections::BTreeMap<Dimension, Vec<crate::key::Value>>,
    ) -> Result<impl Fn(&crate::CellSummary) -> bool + Send + use<>, crate::filter::UnknownValues>
    {
        let unknown = self.filter.unknown_values(known);
        if !unknown.is_empty() {
            return Err(crate::filter::UnknownValues(unknown));
        }
        let query = self.clone();
        Ok(move |cell: &crate::CellSummary| {
            query.keeps_status(cell.status) && query.filter.admits(&cell.key)
        })
    }

    /// Whether a cell of this status is kept.
    pub fn keeps_status(&self, status: CellStatus) -> bool {
        self.status.is_empty() || self.status.contains(&status)
    }

    /// The cell `/api/requests` names: `cell=` or the dimensions of its key (run, phase, model, workload, load
    /// and rep, with suite and backend when those do not tell it apart), never both.
    pub fn cell_request(&self) -> Result<CellRequest, QueryError> {
        let values = &self.filter.values;
        if let Some(cell) = &self.cell {
            if let Some(dimension) = values.keys().next() {
                return Err(QueryError::bad(
                    dimension.name(),
                    &values[dimension].join(","),
                    "cell= names the whole cell; give either cell or the dimensions",
                ));
            }
            return Ok(CellRequest::exactly(cell));
        }
        let missing: Vec<&str> = CellRequest::REQUIRED
            .into_iter()
            .filter(|dimension| !values.contains_key(dimension))
            .map(Dimension::name)
            .collect();
        if !missing.is_empty() {
            return Err(QueryError::Missing(missing.join(", ")));
        }
        let one = |dimension: Dimension| -> Result<Option<&str>, QueryError> {
            match values.get(&dimension).map(Vec::as_slice) {
                None => Ok(None),
                Some([value]) => Ok(Some(value.as_str())),
                Some(many) => Err(QueryError::bad(
                    dimension.name(),
                    &many.join(","),
                    "takes one value",
                )),
            }
        };
        let text = |dimension| one(dimension).map(|value| value.unwrap_or_default().to_string());
        let load = |dimension: Dimension| -> Result<String, QueryError> {
            let value = one(dimension)?.unwrap_or_default();
            crate::filter::is_valid_value(dimension, value)
                .then(|| value.to_string())
                .ok_or_else(|| {
                    QueryError::bad(
                        dimension.name(),
                        value,
                        "expected a load (16, n=16, rate=2.5)",
                    )
                })
        };
        let number = |dimension: Dimension| -> Result<u32, QueryError> {
            let value = one(dimension)?.unwrap_or_default();
            value
                .parse()
                .map_err(|_| QueryError::bad(dimension.name(), value, "expected a whole number"))
        };
        Ok(CellRequest {
            run: text(Dimension::Run)?,
            suite: one(Dimension::Suite)?.map(str::to_string),
            phase: text(Dimension::Phase)?,
            backend: one(Dimension::Backend)?.map(str::to_string),
            model: text(Dimension::Model)?,
            workload: text(Dimension::Workload)?,
            load: load(Dimension::Load)?,
            rep: number(Dimension::Rep)?,
            config: None,
            params: values
                .keys()
                .filter(|dimension| dimension.is_param())
                .map(|dimension| Ok((*dimension, text(*dimension)?)))
                .collect::<Result<_, QueryError>>()?,
        })
    }
}

/// The cell a request for rows names: every part of its key but suite and backend, which are needed only when
/// two cells share the rest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellRequest {
    /// The run.
    pub run: String,
    /// The suite, when given.
    pub suite: Option<String>,
    /// The phase.
    pub phase: String,
    /// The backend, when given.
    pub backend: Option<String>,
    /// The model.
    pub model: String,
    /// The workload.
    pub workload: String,
    /// The load as given (`16` names N=16 or 16 req/s; `n=16`, `rate=2.5` one of them).
    pub load: String,
    /// The repetition.
    pub rep: u32,
    /// The whole configuration, for the request of exactly one cell.
    pub config: Option<crate::config::Config>,
    /// Configuration parameters and the value each must have, when given (two deployments otherwise alike).
    pub params: Vec<(Dimension, String)>,
}

impl CellRequest {
    /// The dimensions a request must name.
    pub const REQUIRED: [Dimension; 6] = [
        Dimension::Run,
        Dimension::Phase,
        Dimension::Model,
        Dimension::Workload,
        Dimension::Load,
        Dimension::Rep,
    ];

    /// The request for exactly this cell.
    pub fn exactly(key: &CellKey) -> CellRequest {
        CellRequest {
            run: key.run_id.clone(),
            suite: Some(key.suite.clone()),
            phase: key.phase.clone(),
            backend: Some(key.backend.clone()),
            model: key.model.clone(),
            workload: key.workload.clone(),
            load: crate::key::DimensionValue::Load(key.load).to_string(),
            rep: key.rep,
            // An empty configuration names no parameter, as the dimensions of a cell without one do.
            config: (!key.config.is_empty()).then(|| key.config.clone()),
            params: Vec::new(),
        }
    }

    /// Whether a cell is one the request names.
    pub fn matches(&self, key: &CellKey) -> bool {
        key.run_id == self.run
            && key.phase == self.phase
            && key.model == self.model
            && key.workload == self.workload
            && key.load.matches_text(&self.load)
            && key.rep == self.rep
            && self
                .config
                .as_ref()
                .is_none_or(|config| key.config == *config)
            && self
                .params
                .iter()
                .all(|(dimension, value)| key.value(*dimension).matches_text(value))
            && self.suite.as_ref().is_none_or(|suite| key.suite == *suite)
            && self
                .backend
                .as_ref()
                .is_none_or(|backend| key.backend == *backend)
    }

    /// The one key of `rows` (an index's cells by key) the request names: none, or several that only suite,
    /// backend or a deployment parameter would tell apart, is an error saying so.
    pub fn find_in<'a, V>(
        &self,
        rows: &'a std::collections::BTreeMap<CellKey, V>,
    ) -> Result<&'a CellKey, CellLookupError> {
        // Keys sort by run first: only the run's own cells are looked at, not every cell of the index.
        let found: Vec<&CellKey> = rows
            .range(&self.first_of_run()..)
            .map(|(key, _)| key)
            .take_while(|key| key.run_id == self.run)
            .filter(|key| self.matches(key))
            .collect();
        match found.as_slice() {
            [] => Err(CellLookupError::Unknown),
            [key] => Ok(key),
            many => Err(CellLookupError::Ambiguous(
                many.iter()
                    .map(|key| {
                        let params: String = key
                            .config
                            .iter()
                            .map(|(name, value)| format!(" {name}={value}"))
                            .collect();
                        format!("suite={} backend={}{params}", key.suite, key.backend)
                    })
                    .collect(),
            )),
        }
    }

    /// The first key of the request's run in key order: the cells it can name follow it.
    pub fn first_of_run(&self) -> CellKey {
        CellKey {
            run_id: self.run.clone(),
            suite: String::new(),
            phase: String::new(),
            backend: String::new(),
            model: String::new(),
            workload: String::new(),
            config: crate::config::Config::new(),
            load: crate::Load::Concurrency(0),
            rep: 0,
        }
    }
}
