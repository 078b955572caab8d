//! Cell keys and the dimensions a user can slice by.

pub use crate::load::{Load, LoadKind, RateRps};
use serde::{Deserialize, Serialize};
use std::fmt;

mod serde_form;

/// The identity of one benchmark cell: `(run_id, suite, phase, backend, model, workload, load, rep)`.
///
/// Within one run directory `run_id` is constant; across runs it keeps cells of different sweeps apart.
/// For a cell whose rows were refilled by a targeted re-run, `run_id` is the master run the cell belongs to,
/// not the refill run (the refill run id is kept on the summary as `source_run_id`).
///
/// Serialised with the load as `"n": N` for a concurrency (the field every consumer of TR164 cells reads),
/// `"rate_rps": R` (`"inf"` when unbounded) for a rate, and neither for an unstated load.
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
    /// The load: concurrency N (`n_agents` in metrics.csv), an offered rate, or unstated.
    pub load: Load,
    /// The repetition.
    pub rep: u32,
}

/// A curve: every cell of one `(run, suite, phase, backend, model, workload)` across loads and reps.
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

    /// The series the cell belongs to.
    pub fn series(&self) -> SeriesKey {
        SeriesKey {
            run_id: self.run_id.clone(),
            suite: self.suite.clone(),
            phase: self.phase.clone(),
            backend: self.backend.clone(),
            model: self.model.clone(),
            workload: self.workload.clone(),
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
            Dimension::Load => DimensionValue::Load(self.load),
            Dimension::Rep => DimensionValue::Number(self.rep),
        }
    }
}

/// The characters a key's text component percent-escapes: `/` separates the components (Hugging Face model ids
/// such as `meta-llama/Llama-3.1-8B` contain one), and `%` starts an escape.
const KEY_SPECIAL: [char; 2] = ['%', '/'];

/// Writes one text component of a key's text form (see [`KEY_SPECIAL`]).
fn write_component(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    write_escaped(f, text, &KEY_SPECIAL)
}

/// The inverse of [`write_component`]; `None` for a `%` that does not start `%25` or `%2F`.
fn read_component(text: &str) -> Option<String> {
    read_escaped(text, &KEY_SPECIAL)
}

/// Writes `text` with each of the ASCII characters `special` (which includes `%`) percent-escaped as `%XX`.
pub(crate) fn write_escaped(
    f: &mut fmt::Formatter<'_>,
    text: &str,
    special: &[char],
) -> fmt::Result {
    for part in text.split_inclusive(special) {
        match part.chars().last() {
            Some(last) if special.contains(&last) => {
                write!(f, "{}%{:02X}", &part[..part.len() - 1], u32::from(last))?;
            }
            _ => f.write_str(part)?,
        }
    }
    Ok(())
}

/// The inverse of [`write_escaped`]: `None` for a `%` that does not start the escape of one of `special` (hex
/// digits in either case).
pub(crate) fn read_escaped(text: &str, special: &[char]) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(position) = rest.find('%') {
        out.push_str(&rest[..position]);
        let hex = rest.get(position + 1..position + 3)?;
        if !hex.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            return None;
        }
        let escaped = char::from(u8::from_str_radix(hex, 16).ok()?);
        if !special.contains(&escaped) {
            return None;
        }
        out.push(escaped);
        rest = &rest[position + 3..];
    }
    out.push_str(rest);
    Some(out)
}

/// Writes text components separated by `/`, then the load and `rep=R`: the text form of cell keys and coordinates.
fn write_key(f: &mut fmt::Formatter<'_>, texts: &[&str], load: Load, rep: u32) -> fmt::Result {
    for text in texts {
        write_component(f, text)?;
        f.write_str("/")?;
    }
    write!(f, "{load}/rep={rep}")
}

/// The text form `run/suite/phase/backend/model/workload/<load>/rep=R` (the load as `n=16`, `rate=2.5`,
/// `rate=inf` or `load=unstated`) used in links (`cell=`), warnings and the
/// CLI. [`CellKey::from_str`] reads exactly this form back.
impl fmt::Display for CellKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_key(f, &self.series_components(), self.load, self.rep)
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
        let [run, suite, phase, backend, model, workload, load, rep] = parts.as_slice() else {
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
        write_key(f, &texts, self.load, self.rep)
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
        match self.load_kind {
            LoadKind::Concurrency => Ok(()),
            kind => write!(f, " ({})", kind.name()),
        }
    }
}

/// The dimensions of the cell key, with the readable names used in URLs, filters and exclusion selectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// The load: concurrency N, an offered rate, or unstated.
    Load,
    /// The repetition.
    Rep,
}

impl Dimension {
    /// Every dimension, in key order.
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
            Dimension::Load => "load",
            Dimension::Rep => "rep",
        }
    }

    /// Every dimension but the load, which views select with a range rather than a list of values.
    pub fn is_filterable(self) -> bool {
        self != Dimension::Load
    }

    /// The load and rep are numbers; the others are text.
    pub fn is_numeric(self) -> bool {
        matches!(self, Dimension::Load | Dimension::Rep)
    }

    /// Parses a dimension name. `run_id` and `n_agents` (the metrics.csv column names) and `n` (the load's name
    /// in older links and exclusion ledgers) are accepted as aliases.
    pub fn parse(name: &str) -> Option<Dimension> {
        Some(match name {
            "run" | "run_id" => Dimension::Run,
            "suite" => Dimension::Suite,
            "phase" => Dimension::Phase,
            "backend" => Dimension::Backend,
            "model" => Dimension::Model,
            "workload" => Dimension::Workload,
            "load" | "n" | "n_agents" => Dimension::Load,
            "rep" => Dimension::Rep,
            _ => return None,
        })
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
}

impl DimensionValue<'_> {
    /// Whether this value equals `text` as written in a URL or a ledger (`"16"` matches N=16 and 16 req/s,
    /// `n=16` only N=16, `rate=2.5` only 2.5 req/s).
    pub fn matches_text(&self, text: &str) -> bool {
        match self {
            DimensionValue::Text(value) => *value == text,
            DimensionValue::Load(load) => load.matches_text(text),
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
            load: crate::Load::Concurrency(16),
            rep: 0,
        }
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
}
