//! Cell keys and the dimensions a user can slice by.

pub use crate::config::{Config, ParamName};
pub use crate::load::{Load, LoadKind, RateRps};
use serde::{Deserialize, Serialize};
use std::fmt;

mod serde_form;

/// The identity of one benchmark cell: `(run_id, suite, phase, backend, model, workload, config, load, rep)`.
///
/// Within one run directory `run_id` is constant; across runs it keeps cells of different sweeps apart.
/// For a cell whose rows were refilled by a targeted re-run, `run_id` is the master run the cell belongs to,
/// not the refill run (the refill run id is kept on the summary as `source_run_id`).
///
/// Serialised with the configuration as `"config": {…}` when it states anything, and the load as `"n": N` for a
/// concurrency (the field every consumer of TR164 cells reads), `"rate_rps": R` (`"inf"` when unbounded) for a
/// rate, and neither for an unstated load.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellKey {
    /// The run (a refilled cell's master run).
    pub run_id: String,
    /// The suite.
    pub suite: String,
    /// The phase (`scaling`, `ttft`, …).
    pub phase: String,
    /// The serving backend.
    pub backend: String,
    /// The model served.
    pub model: String,
    /// The workload sent.
    pub workload: String,
    /// The deployment's configuration (empty when nothing is stated): two deployments are two cells.
    pub config: Config,
    /// The load: concurrency N (`n_agents` in metrics.csv), an offered rate, or unstated.
    pub load: Load,
    /// The repetition.
    pub rep: u32,
}

/// A curve: every cell of one `(run, suite, phase, backend, model, workload, config)` across loads and reps.
///
/// Efficiency and p95 multipliers are normalised within a series against its lowest load (N=1 when present).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SeriesKey {
    /// The run.
    pub run_id: String,
    /// The suite.
    pub suite: String,
    /// The phase.
    pub phase: String,
    /// The serving backend.
    pub backend: String,
    /// The model served.
    pub model: String,
    /// The workload sent.
    pub workload: String,
    /// The deployment's configuration: each deployment is its own curve.
    #[serde(default, skip_serializing_if = "Config::is_empty")]
    pub config: Config,
    /// How its loads are stated: a series holds one kind, so concurrency and rate points never share a curve.
    #[serde(default = "concurrency", skip_serializing_if = "is_concurrency")]
    pub load_kind: LoadKind,
}

fn concurrency() -> LoadKind {
    LoadKind::Concurrency
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's `skip_serializing_if` passes a reference"
)]
fn is_concurrency(kind: &LoadKind) -> bool {
    *kind == LoadKind::Concurrency
}

/// A cell's place within one run: the cell key without `run_id`. In a spliced master the `run_id` column
/// differs between rows of one cell (refill rows carry the refill run's id), so files are read by coordinates.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellCoordinates {
    /// The suite.
    pub suite: String,
    /// The phase.
    pub phase: String,
    /// The serving backend.
    pub backend: String,
    /// The model served.
    pub model: String,
    /// The workload sent.
    pub workload: String,
    /// The deployment's configuration.
    pub config: Config,
    /// The load (`n_agents` in metrics.csv, manifests and plans).
    pub load: Load,
    /// The repetition.
    pub rep: u32,
}

impl CellKey {
    /// The cell at `coordinates` of run `run_id`.
    pub fn new(run_id: &str, coordinates: &CellCoordinates) -> CellKey {
        CellKey {
            run_id: run_id.to_string(),
            suite: coordinates.suite.clone(),
            phase: coordinates.phase.clone(),
            backend: coordinates.backend.clone(),
            model: coordinates.model.clone(),
            workload: coordinates.workload.clone(),
            config: coordinates.config.clone(),
            load: coordinates.load,
            rep: coordinates.rep,
        }
    }

    /// The key without its run.
    pub fn coordinates(&self) -> CellCoordinates {
        CellCoordinates {
            suite: self.suite.clone(),
            phase: self.phase.clone(),
            backend: self.backend.clone(),
            model: self.model.clone(),
            workload: self.workload.clone(),
            config: self.config.clone(),
            load: self.load,
            rep: self.rep,
        }
    }

    /// N of a concurrency cell.
    pub fn n(&self) -> Option<u32> {
        self.load.concurrency()
    }

    /// The text components in key order: run, suite, phase, backend, model, workload. Together they name the
    /// cell's series.
    pub fn series_components(&self) -> [&str; 6] {
        [
            &self.run_id,
            &self.suite,
            &self.phase,
            &self.backend,
            &self.model,
            &self.workload,
        ]
    }

    /// The series the cell belongs to, borrowed: its text components, then its configuration (ordered as
    /// [`SeriesKey`] orders them, so cells sorted by key arrive series by series).
    pub fn series_parts(&self) -> SeriesParts<'_> {
        (self.series_components(), &self.config)
    }

    /// The series the cell belongs to.
    pub fn series(&self) -> SeriesKey {
        SeriesKey {
            run_id: self.run_id.clone(),
            suite: self.suite.clone(),
            phase: self.phase.clone(),
            backend: self.backend.clone(),
            model: self.model.clone(),
            workload: self.workload.clone(),
            config: self.config.clone(),
            load_kind: self.load.kind(),
        }
    }

    /// The value of one dimension, as the text a filter or an exclusion selector compares against.
    pub fn value(&self, dimension: Dimension) -> DimensionValue<'_> {
        match dimension {
            Dimension::Run => DimensionValue::Text(&self.run_id),
            Dimension::Suite => DimensionValue::Text(&self.suite),
            Dimension::Phase => DimensionValue::Text(&self.phase),
            Dimension::Backend => DimensionValue::Text(&self.backend),
            Dimension::Model => DimensionValue::Text(&self.model),
            Dimension::Workload => DimensionValue::Text(&self.workload),
            Dimension::Param(name) => param_value(&self.config, name),
            Dimension::Load => DimensionValue::Load(self.load),
            Dimension::Rep => DimensionValue::Number(self.rep),
            Dimension::Configuration => {
                DimensionValue::Configuration(&self.backend, &self.model, &self.config)
            }
        }
    }
}

/// A series' identity borrowed from a cell key: run, suite, phase, backend, model, workload, and configuration.
pub type SeriesParts<'a> = ([&'a str; 6], &'a Config);

/// A cell's value of one configuration parameter: a whole number as a number (so `tp` orders 1, 2, 4, 8, 16), any
/// other value as text, and [`crate::config::UNSTATED`] when the configuration does not state it.
fn param_value(config: &Config, name: ParamName) -> DimensionValue<'_> {
    match config.get(name.as_str()) {
        // Digits only: `u32::from_str` would also read a leading `+`.
        Some(value) if !value.is_empty() && value.bytes().all(|byte| byte.is_ascii_digit()) => {
            value
                .parse()
                .map_or(DimensionValue::Text(value), DimensionValue::Number)
        }
        Some(value) => DimensionValue::Text(value),
        None => DimensionValue::Text(crate::config::UNSTATED),
    }
}

/// The characters a key's text component percent-escapes: `/` separates the components (Hugging Face model ids
/// such as `meta-llama/Llama-3.1-8B` contain one), and `%` starts an escape.
const KEY_SPECIAL: [char; 2] = ['%', '/'];

/// Writes one text component of a key's text form (see [`KEY_SPECIAL`]).
fn write_component(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    crate::escape::write_escaped(f, text, &KEY_SPECIAL)
}

/// The inverse of [`write_component`]; `None` for a `%` that does not start `%25` or `%2F`.
fn read_component(text: &str) -> Option<String> {
    crate::escape::read_escaped(text, &KEY_SPECIAL)
}

/// Writes text components separated by `/`, the configuration when it states anything (its text form escapes
/// `/`), then the load and `rep=R`: the text form of cell keys and coordinates.
fn write_key(
    f: &mut fmt::Formatter<'_>,
    texts: &[&str],
    config: &Config,
    load: Load,
    rep: u32,
) -> fmt::Result {
    for text in texts {
        write_component(f, text)?;
        f.write_str("/")?;
    }
    if !config.is_empty() {
        write!(f, "{config}/")?;
    }
    write!(f, "{load}/rep={rep}")
}

/// The text form `run/suite/phase/backend/model/workload[/config]/<load>/rep=R` (the configuration's text form
/// `precision=fp8,tp=4` only when it states anything; the load as `n=16`, `rate=2.5`, `rate=inf` or
/// `load=unstated`) used in links (`cell=`), warnings and the CLI. [`CellKey::from_str`] reads exactly this form
/// back.
impl fmt::Display for CellKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_key(
            f,
            &self.series_components(),
            &self.config,
            self.load,
            self.rep,
        )
    }
}

/// Why a text is not a cell key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a cell (expected run/suite/phase/backend/model/workload/n=N/rep=R)")]
pub struct CellKeyError {
    /// The text that was read.
    pub text: String,
}

impl std::str::FromStr for CellKey {
    type Err = CellKeyError;

    fn from_str(text: &str) -> Result<CellKey, CellKeyError> {
        let error = || CellKeyError {
            text: text.to_string(),
        };
        let parts: Vec<&str> = text.split('/').collect();
        // Nine parts hold a configuration between the workload and the load; it is never written empty.
        let (texts, config, load, rep) = match parts.as_slice() {
            [texts @ .., load, rep] if texts.len() == 6 => (texts, Config::new(), load, rep),
            [texts @ .., config, load, rep] if texts.len() == 6 => {
                let config: Config = config.parse().map_err(|_| error())?;
                if config.is_empty() {
                    return Err(error());
                }
                (texts, config, load, rep)
            }
            _ => return Err(error()),
        };
        let [run, suite, phase, backend, model, workload] = texts else {
            return Err(error());
        };
        let number = |part: &str, prefix: &str| -> Option<u32> {
            let digits = part.strip_prefix(prefix)?;
            // `u32::from_str` accepts a leading `+`; the text form never writes one.
            digits
                .bytes()
                .all(|byte| byte.is_ascii_digit())
                .then(|| digits.parse().ok())
                .flatten()
        };
        let component = |part: &str| read_component(part).ok_or_else(error);
        Ok(CellKey {
            run_id: component(run)?,
            suite: component(suite)?,
            phase: component(phase)?,
            backend: component(backend)?,
            model: component(model)?,
            workload: component(workload)?,
            config,
            load: load.parse().map_err(|_| error())?,
            rep: number(rep, "rep=").ok_or_else(error)?,
        })
    }
}

impl CellCoordinates {
    /// N of a concurrency cell.
    pub fn n(&self) -> Option<u32> {
        self.load.concurrency()
    }
}

/// The text form of the coordinates: the cell key's, without the run.
impl fmt::Display for CellCoordinates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let texts = [
            self.suite.as_str(),
            &self.phase,
            &self.backend,
            &self.model,
            &self.workload,
        ];
        write_key(f, &texts, &self.config, self.load, self.rep)
    }
}

impl fmt::Display for SeriesKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let texts = [
            self.run_id.as_str(),
            &self.suite,
            &self.phase,
            &self.backend,
            &self.model,
            &self.workload,
        ];
        for (position, text) in texts.into_iter().enumerate() {
            if position > 0 {
                f.write_str("/")?;
            }
            write_component(f, text)?;
        }
        if !self.config.is_empty() {
            write!(f, "/{}", self.config)?;
        }
        match self.load_kind {
            LoadKind::Concurrency => Ok(()),
            kind => write!(f, " ({})", kind.name()),
        }
    }
}

/// The dimensions of the cell key, with the readable names used in URLs, filters and exclusion selectors.
///
/// A configuration parameter is a dimension too ([`Dimension::Param`]), named by its canonical name (`tp`,
/// `max_num_seqs`): it carries a [`ParamName`], an interned `&'static str`, so that a dimension stays `Copy` and
/// every view, filter and comparison that takes a dimension takes a parameter unchanged. Parameters sit between the
/// workload and the load, as the configuration does in the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dimension {
    /// The run (sweep directory) a cell belongs to.
    Run,
    /// The suite of the sweep.
    Suite,
    /// The phase (`scaling`, `ttft`, …).
    Phase,
    /// The serving backend.
    Backend,
    /// The model served.
    Model,
    /// The workload sent.
    Workload,
    /// One parameter of the deployment's configuration; a cell whose configuration does not state it has the
    /// value [`crate::config::UNSTATED`].
    Param(ParamName),
    /// The load: concurrency N, an offered rate, or unstated.
    Load,
    /// The repetition.
    Rep,
    /// The served configuration as one value: the backend, the model and every deployment parameter together, so
    /// a view coloured or faceted by it never pools two configurations. Views group by it; filters, ledgers and
    /// comparisons take its parts instead, so it is in no list of the key's own dimensions.
    Configuration,
}

impl Dimension {
    /// Every dimension of the key but the configuration's parameters, in key order (the parameters of a data root
    /// are [`Dimension::params`]).
    pub const ALL: [Dimension; 8] = [
        Dimension::Run,
        Dimension::Suite,
        Dimension::Phase,
        Dimension::Backend,
        Dimension::Model,
        Dimension::Workload,
        Dimension::Load,
        Dimension::Rep,
    ];

    /// The name URLs, filters, exports and exclusion selectors use: the one spelling of each dimension.
    pub const fn name(self) -> &'static str {
        match self {
            Dimension::Run => "run",
            Dimension::Suite => "suite",
            Dimension::Phase => "phase",
            Dimension::Backend => "backend",
            Dimension::Model => "model",
            Dimension::Workload => "workload",
            Dimension::Param(name) => name.as_str(),
            Dimension::Load => "load",
            Dimension::Rep => "rep",
            Dimension::Configuration => "configuration",
        }
    }

    /// The cells table's column of a dimension: its name, but `run_id` for the run and `n` for the load (a
    /// concurrency; an offered rate has a column of its own), as TR164's metrics.csv names them.
    pub const fn column(self) -> &'static str {
        match self {
            Dimension::Run => "run_id",
            Dimension::Load => "n",
            other => other.name(),
        }
    }

    /// Every dimension but the load, which views select with a range rather than a list of values, and the
    /// configuration, which is filtered by its parts.
    pub fn is_filterable(self) -> bool {
        !matches!(self, Dimension::Load | Dimension::Configuration)
    }

    /// The load and rep are numbers; the others (configuration parameters too) are text.
    pub fn is_numeric(self) -> bool {
        matches!(self, Dimension::Load | Dimension::Rep)
    }

    /// Whether this is a configuration parameter.
    pub fn is_param(self) -> bool {
        matches!(self, Dimension::Param(_))
    }

    /// Parses a dimension name. `run_id` and `n_agents` (the metrics.csv column names) and `n` (the load's name
    /// in older links and exclusion ledgers) are accepted as aliases. Any other name is a configuration parameter
    /// when it is a well-known one (by any spelling) or one found in the data ([`ParamName::known`]).
    pub fn parse(name: &str) -> Option<Dimension> {
        Dimension::builtin(name).or_else(|| ParamName::known(name).map(Dimension::Param))
    }

    /// A dimension of the key's own, by name or alias (no configuration parameter).
    fn builtin(name: &str) -> Option<Dimension> {
        if name == "n_agents" {
            return Some(Dimension::Load);
        }
        Dimension::ALL
            .into_iter()
            .chain([Dimension::Configuration])
            .find(|dimension| dimension.name() == name || dimension.column() == name)
    }

    /// The parameter named `name` as a dimension, interned when new (for names found in the data, and the CLI's
    /// own arguments); `None` when a dimension of the key's own has that name or it cannot be a parameter.
    pub fn param(name: &str) -> Option<Dimension> {
        if Dimension::builtin(name).is_some() {
            return None;
        }
        ParamName::intern(name).map(Dimension::Param)
    }

    /// Every configuration parameter some of `keys` state, in name order.
    pub fn params<'a>(keys: impl IntoIterator<Item = &'a CellKey>) -> Vec<Dimension> {
        let mut names: Vec<&str> = Vec::new();
        for key in keys {
            for (name, _) in key.config.iter() {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        crate::order::sorted_distinct(names.into_iter().filter_map(Dimension::param))
    }

    /// The configuration parameters every one of `keys` states, in name order (none for no keys).
    pub fn shared_params<'a>(
        keys: impl IntoIterator<Item = &'a CellKey> + Clone,
    ) -> Vec<Dimension> {
        Dimension::params(keys.clone())
            .into_iter()
            .filter(|dimension| {
                keys.clone()
                    .into_iter()
                    .all(|key| key.config.get(dimension.name()).is_some())
            })
            .collect()
    }

    /// The configuration parameters whose value differs between some of `keys` (a parameter some state and others
    /// do not differs too): the ones a data root's dimension list shows.
    pub fn varying_params<'a>(
        keys: impl IntoIterator<Item = &'a CellKey> + Clone,
    ) -> Vec<Dimension> {
        Dimension::params(keys.clone())
            .into_iter()
            .filter(|dimension| {
                let mut values = keys.clone().into_iter().map(|key| key.value(*dimension));
                let first = values.next();
                values.any(|value| Some(value) != first)
            })
            .collect()
    }

    /// [`Dimension::ALL`] with `params` in their place, between the workload and the load.
    pub fn with_params(params: &[Dimension]) -> Vec<Dimension> {
        let mut dimensions = Dimension::ALL[..6].to_vec();
        dimensions.extend(
            params
                .iter()
                .copied()
                .filter(|dimension| dimension.is_param()),
        );
        dimensions.extend(Dimension::ALL[6..].iter().copied());
        dimensions
    }
}

/// A dimension is written as its name.
impl Serialize for Dimension {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// A dimension is read from its name; a configuration parameter's name is taken as one (bodies list the
/// parameters of their data).
impl<'de> Deserialize<'de> for Dimension {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Dimension, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(deserializer)?;
        Dimension::builtin(&name)
            .filter(|dimension| dimension.name() == name)
            .or_else(|| Dimension::param(&name))
            .ok_or_else(|| serde::de::Error::custom(format!("unknown dimension `{name}`")))
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One dimension value of a cell (ordered text before numbers before loads; one dimension holds only one kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DimensionValue<'a> {
    /// A text dimension's value.
    Text(&'a str),
    /// The rep.
    Number(u32),
    /// The load.
    Load(Load),
    /// The configuration: backend, model and deployment parameters.
    Configuration(&'a str, &'a str, &'a Config),
}

impl DimensionValue<'_> {
    /// Whether this value equals `text` as written in a URL or a ledger (`"16"` matches N=16 and 16 req/s,
    /// `n=16` only N=16, `rate=2.5` only 2.5 req/s).
    pub fn matches_text(&self, text: &str) -> bool {
        match self {
            DimensionValue::Text(value) => *value == text,
            DimensionValue::Load(load) => load.matches_text(text),
            DimensionValue::Configuration(..) => self.to_string() == text,
            DimensionValue::Number(value) => text
                .trim()
                .parse::<u32>()
                .is_ok_and(|parsed| parsed == *value),
        }
    }
}

impl fmt::Display for DimensionValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DimensionValue::Text(value) => f.write_str(value),
            DimensionValue::Number(value) => write!(f, "{value}"),
            DimensionValue::Load(load) => write_load_value(f, *load),
            DimensionValue::Configuration(backend, model, config) => {
                write!(f, "{backend} · {model}")?;
                if !config.is_empty() {
                    write!(f, " · {config}")?;
                }
                Ok(())
            }
        }
    }
}

/// A load as a dimension value: a concurrency as its bare N (as links and ledgers have always written it), any
/// other load in its text form.
fn write_load_value(f: &mut fmt::Formatter<'_>, load: Load) -> fmt::Result {
    match load {
        Load::Concurrency(n) => write!(f, "{n}"),
        other => write!(f, "{other}"),
    }
}

/// An owned dimension value with an order: numbers numerically, loads by [`Load`]'s order, text alphabetically.
/// Serialised as a JSON number or string. A concurrency load is held as its number, so within the load
/// dimension concurrencies order before rates as [`Load`] does.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// A concurrency N or a rep.
    Number(u32),
    /// A rate or unstated load, as its text form (`rate=2.5`); read before text so that it reads back as a load.
    Load(Load),
    /// A text dimension's value.
    Text(String),
}

impl Value {
    /// A cell's value of one dimension.
    pub fn of(key: &CellKey, dimension: Dimension) -> Value {
        Value::from(key.value(dimension))
    }

    /// The value as a heading writes it: a load with its unit ([`Load::label`]: `N=16`, `2.5 req/s`, `∞ req/s`),
    /// any other value as it is.
    pub fn label(&self, dimension: Dimension) -> String {
        match (dimension, self) {
            (Dimension::Load, Value::Number(n)) => Load::Concurrency(*n).label(),
            (Dimension::Load, Value::Load(load)) => load.label(),
            _ => self.to_string(),
        }
    }

    /// The value as a coordinate in words: `model=phi-4`, and a load in its own text form (`n=16`,
    /// `rate=2.5`), which already names its kind.
    pub fn coordinate(&self, dimension: Dimension) -> String {
        match (dimension, self) {
            (Dimension::Load, Value::Number(n)) => Load::Concurrency(*n).to_string(),
            (Dimension::Load, Value::Load(load)) => load.to_string(),
            _ => format!("{}={self}", dimension.name()),
        }
    }
}

/// The owned copy of a borrowed value. Within one dimension both order the same way (a dimension holds only
/// text or only numbers), so views group cells by the borrowed value and keep the owned one per group.
impl From<DimensionValue<'_>> for Value {
    fn from(value: DimensionValue<'_>) -> Value {
        match value {
            DimensionValue::Number(number) | DimensionValue::Load(Load::Concurrency(number)) => {
                Value::Number(number)
            }
            DimensionValue::Load(load) => Value::Load(load),
            DimensionValue::Text(text) => Value::Text(text.to_string()),
            configuration @ DimensionValue::Configuration(..) => {
                Value::Text(configuration.to_string())
            }
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Number(number) => write!(f, "{number}"),
            Value::Load(load) => write!(f, "{load}"),
            Value::Text(text) => f.write_str(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> CellKey {
        CellKey {
            run_id: "20260531_120428_552237".into(),
            suite: "local_core".into(),
            phase: "ttft".into(),
            backend: "pytorch_direct".into(),
            model: "llama3.2-3b".into(),
            workload: "balanced_2k".into(),
            config: Default::default(),
            load: crate::Load::Concurrency(16),
            rep: 0,
        }
    }

    #[test]
    fn a_load_heading_carries_its_unit() {
        let rate = |rps: f64| Value::Load(crate::Load::rate(rps).unwrap());
        assert_eq!(Value::Number(4).label(Dimension::Load), "N=4");
        assert_eq!(rate(4.0).label(Dimension::Load), "4 req/s");
        assert_eq!(rate(0.5).label(Dimension::Load), "0.5 req/s");
        assert_eq!(rate(f64::INFINITY).label(Dimension::Load), "∞ req/s");
        // The value itself, as links write it, is unchanged; other dimensions are as they are.
        assert_eq!(rate(f64::INFINITY).to_string(), "rate=inf");
        assert_eq!(Value::Number(2).label(Dimension::Rep), "2");
        assert_eq!(Value::Text("vllm".into()).label(Dimension::Backend), "vllm");
    }

    #[test]
    fn numeric_dimensions_match_their_decimal_text() {
        let key = key();
        assert!(key.value(Dimension::Load).matches_text("16"));
        assert!(!key.value(Dimension::Load).matches_text("1"));
        assert!(!key.value(Dimension::Load).matches_text("sixteen"));
        assert!(key.value(Dimension::Model).matches_text("llama3.2-3b"));
    }

    #[test]
    fn the_text_form_reads_back_exactly_even_with_slashes_and_percent_signs() {
        let plain = key();
        assert_eq!(
            plain.to_string(),
            "20260531_120428_552237/local_core/ttft/pytorch_direct/llama3.2-3b/balanced_2k/n=16/rep=0"
        );
        assert_eq!(plain.to_string().parse::<CellKey>(), Ok(plain));
        let hugging_face = CellKey {
            model: "meta-llama/Llama-3.1-8B".into(),
            workload: "100%/2".into(),
            ..key()
        };
        let text = hugging_face.to_string();
        assert!(
            text.contains("meta-llama%2FLlama-3.1-8B/100%25%2F2/"),
            "{text}"
        );
        assert_eq!(text.parse::<CellKey>(), Ok(hugging_face));
        for bad in [
            "",
            "a/b/c",
            "r/s/p/b/m/w/n=x/rep=0",
            "r/s/p/b/m/w/n=+1/rep=0",
            "r/s/p/b/m%zz/w/n=1/rep=0",
            "r/s/p/b/m/w/16/0",
        ] {
            assert!(bad.parse::<CellKey>().is_err(), "{bad}");
        }
    }

    #[test]
    fn dimension_names_round_trip_and_accept_csv_aliases() {
        for dimension in Dimension::ALL {
            assert_eq!(Dimension::parse(dimension.name()), Some(dimension));
        }
        assert_eq!(Dimension::parse("n_agents"), Some(Dimension::Load));
        assert_eq!(Dimension::parse("run_id"), Some(Dimension::Run));
        assert_eq!(Dimension::parse("tier"), None);
    }

    fn configured(pairs: &[(&str, &str)]) -> CellKey {
        let mut config = Config::new();
        for (name, value) in pairs {
            config.insert(name, value).unwrap();
        }
        CellKey { config, ..key() }
    }

    #[test]
    fn a_configuration_sits_between_the_workload_and_the_load_and_orders_there() {
        let tp4 = configured(&[("tensor_parallel_size", "4"), ("quantization", "FP8")]);
        assert_eq!(
            tp4.to_string(),
            "20260531_120428_552237/local_core/ttft/pytorch_direct/llama3.2-3b/balanced_2k/precision=fp8,tp=4/n=16/rep=0"
        );
        assert_eq!(tp4.to_string().parse::<CellKey>(), Ok(tp4.clone()));
        assert_eq!(
            tp4.coordinates().to_string(),
            "local_core/ttft/pytorch_direct/llama3.2-3b/balanced_2k/precision=fp8,tp=4/n=16/rep=0"
        );
        assert_eq!(
            tp4.series().to_string(),
            "20260531_120428_552237/local_core/ttft/pytorch_direct/llama3.2-3b/balanced_2k/precision=fp8,tp=4"
        );
        // An empty configuration is never written, so a nine-part text with an empty one is not a key.
        assert!(
            "r/s/p/b/m/w//n=1/rep=0".parse::<CellKey>().is_err(),
            "an empty configuration component"
        );
        assert!("r/s/p/b/m/w/tp/n=1/rep=0".parse::<CellKey>().is_err());
        // The configuration orders after the workload and before the load: at one workload every deployment's
        // loads come together.
        let tp8 = configured(&[("tp", "8")]);
        let plain_at_32 = CellKey {
            load: Load::Concurrency(32),
            ..key()
        };
        let mut keys = vec![tp8.clone(), plain_at_32.clone(), tp4.clone(), key()];
        crate::order::sort_stable_by(&mut keys, CellKey::cmp);
        assert_eq!(keys, [key(), plain_at_32, tp4.clone(), tp8.clone()]);
        assert_ne!(tp4.series(), tp8.series());
        let json = serde_json::to_string(&tp4).unwrap();
        assert!(
            json.contains(
                r#""workload":"balanced_2k","config":{"precision":"fp8","tp":"4"},"n":16"#
            ),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<CellKey>(&json).unwrap(), tp4);
        assert!(!serde_json::to_string(&key()).unwrap().contains("config"));
    }

    #[test]
    fn a_parameter_is_a_dimension_with_numbers_ordered_as_numbers() {
        let tp = Dimension::parse("tp").unwrap();
        assert_eq!(tp, Dimension::parse("tensor_parallel_size").unwrap());
        assert_eq!(tp.name(), "tp");
        assert!(tp.is_param() && tp.is_filterable() && !tp.is_numeric());
        assert!(Dimension::Workload < tp && tp < Dimension::Load);
        let (tp4, tp16) = (configured(&[("tp", "4")]), configured(&[("tp", "16")]));
        assert_eq!(tp4.value(tp), DimensionValue::Number(4));
        assert!(tp4.value(tp) < tp16.value(tp));
        assert!(tp4.value(tp).matches_text("4"));
        assert_eq!(
            key().value(tp),
            DimensionValue::Text(crate::config::UNSTATED)
        );
        let precision = Dimension::parse("precision").unwrap();
        assert_eq!(
            configured(&[("dtype", "bfloat16")]).value(precision),
            DimensionValue::Text("bf16")
        );
        // A name that is not a parameter of the table nor of any data is no dimension; once found, it is.
        assert_eq!(Dimension::parse("swap_space_gib_in_tests"), None);
        let found = Dimension::params([&configured(&[("swap_space_gib_in_tests", "4")])]);
        assert_eq!(found.len(), 1);
        assert_eq!(Dimension::parse("swap_space_gib_in_tests"), Some(found[0]));
        // The key's own names stay the key's; the load and bookkeeping are never parameters.
        assert_eq!(Dimension::param("model"), None);
        assert_eq!(Dimension::param("max_concurrency"), None);
        assert_eq!(Dimension::param("Bad Name!"), None);
        // Only parameters whose value differs between cells are listed for a root.
        let (a, b) = (
            configured(&[("tp", "4"), ("ep", "1")]),
            configured(&[("tp", "8"), ("ep", "1")]),
        );
        assert_eq!(Dimension::params([&a, &b]).len(), 2);
        assert_eq!(Dimension::varying_params([&a, &b]), [tp]);
        assert_eq!(
            Dimension::varying_params([&a, &key()]),
            [Dimension::parse("ep").unwrap(), tp]
        );
        let json = serde_json::to_string(&tp).unwrap();
        assert_eq!(json, r#""tp""#);
        assert_eq!(serde_json::from_str::<Dimension>(&json).unwrap(), tp);
        assert!(serde_json::from_str::<Dimension>(r#""run_id""#).is_err());
    }

    proptest::proptest! {
        #[test]
        fn a_key_with_any_configuration_reads_back_exactly(
            pairs in proptest::collection::vec(
                (
                    proptest::prop_oneof![
                        proptest::strategy::Just("tp".to_string()),
                        proptest::strategy::Just("model_path".to_string()),
                        "[a-z][a-z0-9_./%,=]{0,10}",
                    ],
                    "[ -~]{0,12}",
                ),
                0..5,
            ),
            workload in "[ -~]{0,12}",
        ) {
            let mut config = Config::new();
            for (name, value) in &pairs {
                let _ = config.insert(name, value);
            }
            let key = CellKey { config, workload, ..key() };
            let text = key.to_string();
            proptest::prop_assert_eq!(text.parse::<CellKey>(), Ok(key.clone()));
            proptest::prop_assert_eq!(text.split('/').count(), if key.config.is_empty() { 8 } else { 9 });
        }
    }
}
